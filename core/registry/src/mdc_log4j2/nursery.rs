//! The thread's young generation, as HotSpot runs it for the logging context's short-lived
//! objects: each new object is a pointer bump in the thread's allocation buffer (its TLAB), dead
//! objects are never touched, and when the buffer is full a scavenge copies the live objects into
//! the other half-space and starts over.
//!
//! Why a model and not the process allocator: with `malloc`, every dead map and string would pay a
//! `free` and its values' reference counts, work the JVM never does for garbage (a young
//! collection costs in proportion to what survives). The logging context knows its live set
//! exactly, the thread's current map and the strings it refers to, so the scavenge is precise.
//!
//! Deviation: HotSpot sizes TLABs adaptively and its young generation is far larger than one
//! buffer; here each half-space is [`SPACE_WORDS`] words (64 KiB), about fifty SolrCloud requests
//! between scavenges, each copying one map of a few entries. Objects carry no header (the handle
//! holds the length), so they are smaller than the JVM's.
//!
//! Handles ([`Str`], [`Map`]) are raw: one is valid until the next [`Nursery::make_room`], which
//! returns the moved live map. The module's users make room once per operation, before building
//! anything, so no handle they hold ever crosses a scavenge.

use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// Words (8 bytes) in each half-space.
pub(super) const SPACE_WORDS: usize = 8 * 1024;

/// A string object in the nursery: its UTF-8 bytes.
#[derive(Clone, Copy)]
pub(super) struct Str {
    ptr: NonNull<u8>,
    len: usize,
}

impl Str {
    /// The string.
    ///
    /// # Safety
    /// No scavenge since this handle was made, or since it was returned as part of a live map.
    pub(super) unsafe fn as_str<'a>(self) -> &'a str {
        // SAFETY: the bytes were copied from `&str`s (valid UTF-8) and, by the caller's promise,
        // are still in the current space.
        unsafe {
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.ptr.as_ptr(), self.len))
        }
    }
}

/// One entry of a map: an interned key (a constant, as Solr's keys are) and a string object.
#[derive(Clone, Copy)]
pub(super) struct Entry {
    pub(super) key: &'static str,
    pub(super) value: Str,
}

/// A map object in the nursery: its entries, contiguous.
#[derive(Clone, Copy)]
pub(super) struct Map {
    ptr: NonNull<Entry>,
    len: usize,
}

impl Map {
    /// The entries.
    ///
    /// # Safety
    /// As for [`Str::as_str`]; the entries' strings are valid under the same condition.
    pub(super) unsafe fn entries<'a>(self) -> &'a [Entry] {
        // SAFETY: `len` entries were written at `ptr` by `new_map`, still in the current space by
        // the caller's promise.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

/// A thread's two half-spaces and the bump pointer into the current one.
pub(super) struct Nursery {
    /// Two allocations of [`SPACE_WORDS`] words each, owned (freed on drop); raw, so that objects
    /// in one space can be read while the other is written.
    spaces: [NonNull<u64>; 2],
    current: usize,
    /// Words used in the current space.
    top: usize,
    /// Objects the program allocated on this nursery (maps and strings; not a scavenge's copies).
    objects: u64,
}

/// Words an object of `bytes` bytes takes.
const fn words_for(bytes: usize) -> usize {
    bytes.div_ceil(8)
}

impl Nursery {
    pub(super) fn new() -> Nursery {
        let space = || {
            let words: Box<[MaybeUninit<u64>]> = vec![MaybeUninit::uninit(); SPACE_WORDS].into();
            NonNull::new(Box::into_raw(words).cast::<u64>()).expect("a box is not null")
        };
        Nursery {
            spaces: [space(), space()],
            current: 0,
            top: 0,
            objects: 0,
        }
    }

    /// Objects the program allocated so far on this nursery.
    pub(super) fn objects(&self) -> u64 {
        self.objects
    }

    /// Words a string of `len` bytes takes.
    pub(super) const fn str_words(len: usize) -> usize {
        words_for(len)
    }

    /// Words a map of `len` entries takes.
    pub(super) const fn map_words(len: usize) -> usize {
        words_for(len * size_of::<Entry>())
    }

    /// Ensures `words` more words fit without a scavenge, scavenging first if they do not:
    /// `live` (and its strings) is copied to the other half-space and returned moved; every other
    /// handle dies. Panics if `words` do not fit even then (no object of the model is that big).
    ///
    /// Unwinding: the check that can fail runs before anything changes, and the scavenge writes
    /// only the other half-space (which holds no live object) until it commits by switching
    /// spaces at the end. So a panic out of here, caught by a thread pool that reuses the
    /// thread, leaves `live` valid in the current space, where the caller still points.
    pub(super) fn make_room(&mut self, words: usize, live: Option<Map>) -> Option<Map> {
        if self.top + words <= SPACE_WORDS {
            return live;
        }
        // SAFETY: `live` was valid up to this scavenge (the caller's promise), and nothing writes
        // the current space while these entries are read (the copies go to the other one).
        let entries = live.map_or(&[][..], |map| unsafe { map.entries() });
        let survivors = Nursery::map_words(entries.len())
            + entries
                .iter()
                .map(|e| Nursery::str_words(e.value.len))
                .sum::<usize>();
        assert!(
            survivors + words <= SPACE_WORDS,
            "a nursery object of {words} words does not fit in a half-space"
        );
        let to = self.current ^ 1;
        let mut to_top = 0;
        let moved = live.map(|map| {
            let copy = self.copy_to(to, &mut to_top, entries);
            for (i, entry) in entries.iter().enumerate() {
                // SAFETY: a string of the live map, still in the current space, unwritten.
                let bytes = unsafe { entry.value.as_str() }.as_bytes();
                let value = Str {
                    ptr: self.copy_to(to, &mut to_top, bytes),
                    len: bytes.len(),
                };
                // SAFETY: `i < len`, so the slot is one of the entries just copied to `copy`.
                unsafe { (*copy.as_ptr().add(i)).value = value };
            }
            Map {
                ptr: copy,
                len: map.len,
            }
        });
        // The commit: only now does the other space become the current one.
        self.current = to;
        self.top = to_top;
        moved
    }

    /// A scavenge's copy of `values` at `*to_top` in space `to`, which must not be the current
    /// one (the values come from there); advances `to_top`. A copy is not a program allocation.
    fn copy_to<T: Copy>(&self, to: usize, to_top: &mut usize, values: &[T]) -> NonNull<T> {
        const { assert!(align_of::<T>() <= 8) };
        debug_assert_ne!(to, self.current, "a scavenge copies into the other space");
        let words = words_for(size_of_val(values));
        assert!(*to_top + words <= SPACE_WORDS, "survivors were sized first");
        // SAFETY: `to_top + words <= SPACE_WORDS`, so the copy is inside space `to`, 8-byte
        // aligned (enough for `T`); it holds no live object, so nothing the caller reads
        // overlaps it.
        let at = unsafe { self.spaces[to].add(*to_top) }.cast::<T>();
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), at.as_ptr(), values.len()) };
        *to_top += words;
        at
    }

    /// `words` words at the bump pointer. The caller made room.
    fn bump(&mut self, words: usize) -> NonNull<u64> {
        assert!(self.top + words <= SPACE_WORDS, "no room was made");
        // SAFETY: `top + words <= SPACE_WORDS`, so the result is inside the current space.
        let at = unsafe { self.spaces[self.current].add(self.top) };
        self.top += words;
        self.objects += 1;
        at
    }

    /// A new object of `parts` one after the other: one bump, the parts copied in.
    fn new_object<T: Copy>(&mut self, parts: &[&[T]]) -> (NonNull<T>, usize) {
        const { assert!(align_of::<T>() <= 8) };
        let len = parts.iter().map(|p| p.len()).sum();
        let ptr = self.bump(words_for(len * size_of::<T>())).cast::<T>();
        let mut at = 0;
        for part in parts {
            // SAFETY: `bump` reserved room for `len` values (8-byte aligned, enough for `T`),
            // `at + part.len() <= len`, and a fresh object overlaps no slice the caller holds.
            unsafe {
                std::ptr::copy_nonoverlapping(part.as_ptr(), ptr.as_ptr().add(at), part.len())
            };
            at += part.len();
        }
        (ptr, len)
    }

    /// A new string of `parts` one after the other (Java's concatenation: the length first, one
    /// object, the bytes copied in). The caller made room for `str_words` of the total length.
    pub(super) fn new_str<const N: usize>(&mut self, parts: [&str; N]) -> Str {
        let (ptr, len) = self.new_object(&parts.map(str::as_bytes));
        Str { ptr, len }
    }

    /// A new map of `parts` one after the other (values copied by reference, as Java copies the
    /// arrays). The caller made room for `map_words` of the total length.
    pub(super) fn new_map(&mut self, parts: &[&[Entry]]) -> Map {
        let (ptr, len) = self.new_object(parts);
        Map { ptr, len }
    }
}

impl Drop for Nursery {
    fn drop(&mut self) {
        for space in self.spaces {
            let words = std::ptr::slice_from_raw_parts_mut(
                space.as_ptr().cast::<MaybeUninit<u64>>(),
                SPACE_WORDS,
            );
            // SAFETY: made by `Box::into_raw` of a slice of this length in `new`, freed only here.
            drop(unsafe { Box::from_raw(words) });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Each round replaces entry `a` and carries entry `b` over by reference, as a put does; `b`'s
    /// string is made once, so it survives only if every scavenge copies it (the half-space it
    /// was in is overwritten two scavenges later).
    #[test]
    fn a_scavenge_keeps_the_live_map_and_its_strings() {
        let mut n = Nursery::new();
        let need = Nursery::str_words(30) + Nursery::map_words(2);
        let b = Entry {
            key: "b",
            value: n.new_str(["carried ", "over"]),
        };
        let mut live = Some(n.new_map(&[&[b]]));
        let mut scavenges = 0;
        let rounds = 10 * SPACE_WORDS;
        for i in 0..rounds {
            let value = format!("value{i}");
            let before = n.top;
            live = n.make_room(need, live);
            scavenges += usize::from(n.top < before);
            // SAFETY: `live` was just returned by `make_room`.
            let carried = *unsafe { live.unwrap().entries() }.last().unwrap();
            let a = Entry {
                key: "a",
                value: n.new_str(["x:", &value]),
            };
            live = Some(n.new_map(&[&[a], &[carried]]));
        }
        assert!(scavenges > 10, "the loop outgrew a half-space many times");
        // SAFETY: `live` was made by the last round, with no scavenge since.
        let entries = unsafe { live.unwrap().entries() };
        let read = |e: &Entry| (e.key, unsafe { e.value.as_str() }.to_string());
        assert_eq!(entries.len(), 2);
        assert_eq!(read(&entries[0]), ("a", format!("x:value{}", rounds - 1)));
        assert_eq!(read(&entries[1]), ("b", "carried over".to_string()));
        assert_eq!(n.objects(), 2 + 2 * rounds as u64, "copies are not counted");
    }
}
