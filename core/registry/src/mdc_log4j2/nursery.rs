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
//! Objects that do not belong in a half-space go to the old generation, as in HotSpot, where
//! they are never moved by a scavenge: an object of [`LARGE_WORDS`] words or more is allocated
//! there directly (G1's humongous objects, half a region or more; here a region is a
//! half-space), and a scavenge promotes there the survivors that do not fit into the other
//! half-space (a survivor-space overflow). Each old object is its own allocation from the
//! process allocator (the JVM's slow path). The old generation is collected, with the same
//! precise live set, once [`OLD_WORDS`] words went into it since its last collection: the
//! objects the live map does not refer to are freed. Solr limits neither the length of a core
//! name nor the number of keys, so a 70 KB core name, or 21 puts of a 4 KB one, are requests
//! like any other, with no panic and no leaked reference.
//!
//! Deviation: HotSpot sizes TLABs adaptively and its young generation is far larger than one
//! buffer; here each half-space is [`SPACE_WORDS`] words (64 KiB), about fifty SolrCloud requests
//! between scavenges, each copying one map of a few entries. Objects carry no header (the handle
//! holds the length), so they are smaller than the JVM's; an empty object takes no words and no
//! place.
//!
//! Handles ([`Str`], [`Map`]) are raw: one is valid until the next [`Nursery::make_room`], which
//! returns the moved live map. The module's users make room once per operation, before building
//! anything, so no handle they hold ever crosses a collection.

use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// Words (8 bytes) in each half-space.
pub(super) const SPACE_WORDS: usize = 8 * 1024;

/// Objects of this many words or more are large: allocated in the old generation directly.
const LARGE_WORDS: usize = SPACE_WORDS / 2;

/// Words allocated or promoted into the old generation that make the next
/// [`Nursery::make_room`] collect it.
const OLD_WORDS: usize = 4 * SPACE_WORDS;

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
        // are still where they were put.
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
        // SAFETY: `len` entries were written at `ptr` by `new_map` or a scavenge, still there by
        // the caller's promise.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

/// An object in the old generation: its own allocation of `words` words, never moved.
struct OldObject {
    ptr: NonNull<u64>,
    words: usize,
}

impl OldObject {
    /// A new, uninitialised object of `words` (more than 0) words.
    fn new(words: usize) -> OldObject {
        let block: Box<[MaybeUninit<u64>]> = Box::new_uninit_slice(words);
        let ptr = NonNull::new(Box::into_raw(block).cast::<u64>()).expect("a box is not null");
        OldObject { ptr, words }
    }

    /// Frees the object.
    ///
    /// # Safety
    /// Nothing reads the object afterwards; called once per object.
    unsafe fn free(&self) {
        let words = std::ptr::slice_from_raw_parts_mut(
            self.ptr.as_ptr().cast::<MaybeUninit<u64>>(),
            self.words,
        );
        // SAFETY: made by `Box::into_raw` of a slice of this length in `new`; the caller frees it
        // once and never reads it again.
        drop(unsafe { Box::from_raw(words) });
    }
}

/// A thread's two half-spaces and the bump pointer into the current one, and its old generation.
pub(super) struct Nursery {
    /// Two allocations of [`SPACE_WORDS`] words each, owned (freed on drop); raw, so that objects
    /// in one space can be read while the other is written.
    spaces: [NonNull<u64>; 2],
    current: usize,
    /// Words used in the current space.
    top: usize,
    /// The old generation's objects, owned (freed by a collection that finds them dead, or on
    /// drop).
    old: Vec<OldObject>,
    /// Words allocated or promoted into the old generation since it was last collected.
    old_growth: usize,
    /// Objects the program allocated on this nursery (maps and strings, young or old; not a
    /// scavenge's copies or promotions).
    objects: u64,
    /// Of `objects`, those allocated in the old generation directly.
    old_objects: u64,
    /// Survivors a scavenge promoted to the old generation.
    promoted: u64,
}

/// Words an object of `bytes` bytes takes.
const fn words_for(bytes: usize) -> usize {
    bytes.div_ceil(8)
}

/// Whether an object of `words` words is allocated in the old generation directly.
const fn is_large(words: usize) -> bool {
    words >= LARGE_WORDS
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
            old: Vec::new(),
            old_growth: 0,
            objects: 0,
            old_objects: 0,
            promoted: 0,
        }
    }

    /// Objects the program allocated so far on this nursery.
    pub(super) fn objects(&self) -> u64 {
        self.objects
    }

    /// Objects the program allocated in the old generation directly (large ones).
    #[cfg(test)]
    pub(super) fn old_objects(&self) -> u64 {
        self.old_objects
    }

    /// Survivors promoted to the old generation so far.
    #[cfg(test)]
    pub(super) fn promoted(&self) -> u64 {
        self.promoted
    }

    /// Words a string of `len` bytes takes.
    pub(super) const fn str_words(len: usize) -> usize {
        words_for(len)
    }

    /// Words a map of `len` entries takes.
    pub(super) const fn map_words(len: usize) -> usize {
        words_for(len * size_of::<Entry>())
    }

    /// Runs the collections due before an operation allocates `objects` (their sizes in words):
    /// a scavenge if the young ones do not fit in the current half-space, a collection of the old
    /// generation if [`OLD_WORDS`] went into it since the last one. `live` (and its strings) is
    /// returned, moved if it was young; every other handle dies. Afterwards the operation's
    /// young objects fit in the current half-space (the scavenge promotes survivors rather than
    /// leave them too little room).
    ///
    /// Unwinding: the only step that can fail (reserving the old generation's list) runs before
    /// anything changes, and the scavenge writes only the other half-space (which holds no live
    /// object) and new old objects until it commits by switching spaces at the end. So a panic
    /// out of here, caught by a thread pool that reuses the thread, leaves `live` valid where
    /// the caller still points.
    pub(super) fn make_room(&mut self, objects: &[usize], live: Option<Map>) -> Option<Map> {
        let young: usize = objects.iter().filter(|w| !is_large(**w)).sum();
        let live = if self.top + young > SPACE_WORDS {
            self.scavenge(live, SPACE_WORDS.saturating_sub(young))
        } else {
            live
        };
        if self.old_growth >= OLD_WORDS {
            self.collect_old(live);
        }
        live
    }

    /// Whether `ptr` is in the current half-space (a young object; an empty object is nowhere).
    fn is_young<T>(&self, ptr: NonNull<T>) -> bool {
        let start = self.spaces[self.current].as_ptr().addr();
        (start..start + SPACE_WORDS * 8).contains(&ptr.as_ptr().addr())
    }

    /// Copies `live`'s young objects (the map and its strings) into the other half-space, the
    /// first `budget` words of it, promoting those that do not fit there; then the other space
    /// is the current one, with its survivors at the bottom. Returns the moved map.
    fn scavenge(&mut self, live: Option<Map>, budget: usize) -> Option<Map> {
        let to = self.current ^ 1;
        let mut to_top = 0;
        let moved = live.map(|map| self.move_live(map, to, &mut to_top, budget));
        // The commit: only now does the other space become the current one.
        self.current = to;
        self.top = to_top;
        moved
    }

    /// The scavenge of the live map: `map` copied if young (an old map stays where it is), and
    /// each of its young strings copied, the map's entries pointing at the copies.
    fn move_live(&mut self, map: Map, to: usize, to_top: &mut usize, budget: usize) -> Map {
        let young_map = self.is_young(map.ptr);
        {
            // SAFETY: `map` was valid up to this scavenge (the caller's promise). The slice
            // lives only in this block: an old map is written in place below.
            let entries = unsafe { map.entries() };
            let young_strings = entries.iter().filter(|e| self.is_young(e.value.ptr));
            let strings: usize = young_strings
                .clone()
                .map(|e| Nursery::str_words(e.value.len))
                .sum();
            let map_words = if young_map {
                Nursery::map_words(map.len)
            } else {
                0
            };
            if map_words + strings > budget {
                // The one fallible step, before any change: room to list every promotion.
                self.old
                    .reserve(usize::from(young_map) + young_strings.count());
            }
        }
        let copy = if young_map {
            // SAFETY: as above; the young map is only read, its copy is written.
            self.survive(to, to_top, budget, unsafe { map.entries() })
        } else {
            map.ptr
        };
        for i in 0..map.len {
            // SAFETY: `i < len`. Entries are read and written one at a time through the raw
            // pointers, with no reference to the map alive (an old map is updated in place).
            let value = unsafe { (*map.ptr.as_ptr().add(i)).value };
            if !self.is_young(value.ptr) {
                continue;
            }
            // SAFETY: a young string of the live map, in the current space, which nothing
            // writes during the scavenge.
            let bytes = unsafe { value.as_str() }.as_bytes();
            let ptr = self.survive(to, to_top, budget, bytes);
            // SAFETY: `i < len`, so the slot is one of the map's entries: in the copy just
            // made, or in the old map itself.
            unsafe {
                (*copy.as_ptr().add(i)).value = Str {
                    ptr,
                    len: value.len,
                }
            };
        }
        Map {
            ptr: copy,
            len: map.len,
        }
    }

    /// A scavenge's copy of the young object `values`: at `*to_top` in space `to` (the other
    /// space, never the current one, where the values are) if it fits in `budget` words, else
    /// promoted to the old generation. Neither is a program allocation.
    fn survive<T: Copy>(
        &mut self,
        to: usize,
        to_top: &mut usize,
        budget: usize,
        values: &[T],
    ) -> NonNull<T> {
        const { assert!(align_of::<T>() <= 8) };
        debug_assert_ne!(to, self.current, "a scavenge copies into the other space");
        let words = words_for(size_of_val(values));
        let at = if *to_top + words <= budget.min(SPACE_WORDS) {
            // SAFETY: `to_top + words <= SPACE_WORDS`, so the copy is inside space `to`.
            let at = unsafe { self.spaces[to].add(*to_top) };
            *to_top += words;
            at
        } else {
            self.promoted += 1;
            self.alloc_old(words)
        };
        let at = at.cast::<T>();
        // SAFETY: `at` has room for `words` words, 8-byte aligned (enough for `T`), in the other
        // space (which holds no live object) or a new old object, so it overlaps nothing read.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), at.as_ptr(), values.len()) };
        at
    }

    /// A new old-generation object of `words` (more than 0) words.
    fn alloc_old(&mut self, words: usize) -> NonNull<u64> {
        let object = OldObject::new(words);
        let ptr = object.ptr;
        self.old.push(object);
        self.old_growth += words;
        ptr
    }

    /// Collects the old generation: frees every old object `live` does not refer to (it is the
    /// only root: every other handle died with this `make_room`).
    fn collect_old(&mut self, live: Option<Map>) {
        // SAFETY: `live` is the live map, valid (just returned by the scavenge, or untouched).
        let entries = live.map_or(&[][..], |map| unsafe { map.entries() });
        let map = live.map(|map| map.ptr.as_ptr().addr());
        self.old.retain(|object| {
            let at = object.ptr.as_ptr().addr();
            let reached =
                map == Some(at) || entries.iter().any(|e| e.value.ptr.as_ptr().addr() == at);
            if !reached {
                // SAFETY: no live handle refers to it, and it leaves the list.
                unsafe { object.free() };
            }
            reached
        });
        self.old_growth = 0;
    }

    /// `words` words for a new object: a pointer bump in the current space, or an old object if
    /// it is large or, exceptionally, the caller made too little room (HotSpot's allocation
    /// outside the young generation); no place for an empty object.
    fn allocate(&mut self, words: usize) -> NonNull<u64> {
        if words == 0 {
            return NonNull::dangling();
        }
        if is_large(words) || self.top + words > SPACE_WORDS {
            self.old_objects += 1;
            return self.alloc_old(words);
        }
        // SAFETY: `top + words <= SPACE_WORDS`, so the result is inside the current space.
        let at = unsafe { self.spaces[self.current].add(self.top) };
        self.top += words;
        at
    }

    /// A new object of `parts` one after the other: one allocation, the parts copied in.
    fn new_object<T: Copy>(&mut self, parts: &[&[T]]) -> (NonNull<T>, usize) {
        const { assert!(align_of::<T>() <= 8) };
        let len = parts.iter().map(|p| p.len()).sum();
        let ptr = self.allocate(words_for(len * size_of::<T>())).cast::<T>();
        self.objects += 1;
        let mut at = 0;
        for part in parts {
            // SAFETY: `allocate` reserved room for `len` values (8-byte aligned, enough for `T`),
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
        for object in &self.old {
            // SAFETY: the nursery and every handle into it are gone.
            unsafe { object.free() };
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
        let need = [Nursery::str_words(30), Nursery::map_words(2)];
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
            live = n.make_room(&need, live);
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

    /// Large strings go to the old generation and stay put; once enough went in, a collection
    /// frees those the live map no longer refers to, so the old generation does not grow with
    /// the garbage, and the live one survives every collection.
    #[test]
    fn the_old_generation_keeps_the_live_objects_and_frees_the_rest() {
        let mut n = Nursery::new();
        let long = "l".repeat(LARGE_WORDS * 8);
        let kept = Entry {
            key: "kept",
            value: n.new_str(["k:", &long]),
        };
        let kept_at = kept.value.ptr;
        let mut live = Some(n.new_map(&[&[kept]]));
        let rounds = if cfg!(miri) { 40 } else { 400 };
        for i in 0..rounds {
            let need = [Nursery::str_words(long.len() + 8), Nursery::map_words(2)];
            live = n.make_room(&need, live);
            // SAFETY: `live` was just returned by `make_room`.
            let kept = unsafe { live.unwrap().entries() }[0];
            assert_eq!(kept.value.ptr, kept_at, "an old object never moves");
            let other = Entry {
                key: "other",
                value: n.new_str([&format!("{i:08}"), &long]),
            };
            live = Some(n.new_map(&[&[kept], &[other]]));
            assert!(
                n.old.len() <= 2 + OLD_WORDS / LARGE_WORDS,
                "garbage piles up"
            );
        }
        assert_eq!(n.old_objects(), 1 + rounds as u64);
        // SAFETY: made by the last round, no collection since.
        let entries = unsafe { live.unwrap().entries() };
        assert_eq!(unsafe { entries[0].value.as_str() }, format!("k:{long}"));
        let last = format!("{:08}{long}", rounds - 1);
        assert_eq!(unsafe { entries[1].value.as_str() }, last);
    }

    /// A map in the old generation (here one too large for a half-space) stays put across
    /// scavenges while its young strings move: its entries are updated in place.
    #[test]
    fn an_old_map_keeps_its_place_and_its_young_strings_move() {
        let mut n = Nursery::new();
        let len = LARGE_WORDS * 8 / size_of::<Entry>() + 10;
        let values: Vec<String> = (0..len).map(|i| format!("v{i:05}")).collect();
        let entries: Vec<Entry> = values
            .iter()
            .map(|v| Entry {
                key: "k",
                value: n.new_str([v]),
            })
            .collect();
        let mut live = Some(n.new_map(&[&entries]));
        let map_at = live.unwrap().ptr;
        let garbage = "g".repeat(1024);
        let rounds = if cfg!(miri) { 150 } else { 300 };
        let mut scavenges = 0;
        for _ in 0..rounds {
            let before = n.top;
            live = n.make_room(&[Nursery::str_words(garbage.len())], live);
            scavenges += usize::from(n.top < before);
            n.new_str([&garbage]);
        }
        assert!(scavenges >= 2, "the strings were moved, twice at least");
        assert_eq!(n.promoted(), 0, "the strings fit beside the garbage");
        let map = live.unwrap();
        assert_eq!(map.ptr, map_at, "the old map never moves");
        // SAFETY: returned by the last `make_room`, and only a string was made since.
        let read: Vec<&str> = unsafe { map.entries() }
            .iter()
            .map(|e| unsafe { e.value.as_str() })
            .collect();
        assert_eq!(read, values);
    }
}
