//! Solr's `MDCLoggingContext` over log4j2's `CopyOnWriteSortedArrayThreadContextMap`.
//!
//! What one open and one close do in Solr (facts in `shared/research/jvm-anchors.md`):
//! - `setCore`: `CALL_DEPTH.get()` and `CALL_DEPTH.set(depth + 1)` (a `ThreadLocal<Integer>`:
//!   `Integer.valueOf` boxes, from the `-128..=127` cache or a new object beyond it); only at
//!   depth 0 the puts: `node_name` (with a ZooKeeper controller), `core`, and with a cloud
//!   descriptor `collection`, `shard`, `replica`. Each value is Solr's prefixed string
//!   (`"x:" + name`...), built by concatenation, so a new string per put.
//! - `clear`: at depth <= 1, `CALL_DEPTH.set(0)` and 4 removes (collection, core, replica, shard),
//!   whether or not the keys are present; deeper, `CALL_DEPTH.set(depth - 1)`.
//! - log4j2's map (its choice under Solr's settings): every `put` copies the thread's frozen
//!   `SortedArrayStringMap` into a new one, inserts by binary search, freezes it and sets it as
//!   the thread's map; every `remove` does the same copy, even when the key is absent. So each put
//!   and each remove is one new map (here one object holding the sorted entries, whose values are
//!   shared by reference, as Java copies references) and the old map is garbage.
//!
//! Per request in SolrCloud that is 9 new maps and 5 new strings, 14 objects, each allocated as
//! the JVM allocates them: a pointer bump in the thread's young generation, garbage never touched
//! (`nursery`, which says where it departs from HotSpot); `tests/mdc_allocations.rs` counts them.

use critsec_sync::primitive::thread_local;
mod nursery;

use nursery::{Entry, Map, Nursery};
use std::cell::RefCell;
use std::cmp::Ordering;

/// The keys `clear()` removes, in Solr's order.
const CLEARED: [&str; 4] = ["collection", "core", "replica", "shard"];

/// Solr's value prefixes by key (`MDCLoggingContext`'s `"n:"`, `"x:"`, `"c:"`, `"s:"`, `"r:"`);
/// padding keys carry none.
fn prefix(key: &str) -> &'static str {
    match key {
        "node_name" => "n:",
        "core" => "x:",
        "collection" => "c:",
        "shard" => "s:",
        "replica" => "r:",
        _ => "",
    }
}

/// An `Integer` as `Integer.valueOf` returns it: the shared cached instance, or a new object.
enum BoxedInteger {
    Cached(i32),
    Allocated(#[allow(dead_code)] Box<i32>),
}

impl BoxedInteger {
    fn value_of(v: i32) -> BoxedInteger {
        if (-128..=127).contains(&v) {
            BoxedInteger::Cached(v)
        } else {
            BoxedInteger::Allocated(Box::new(v))
        }
    }

    fn int_value(&self) -> i32 {
        match self {
            BoxedInteger::Cached(v) => *v,
            BoxedInteger::Allocated(b) => **b,
        }
    }
}

/// `String.compareTo` on Latin-1 strings: byte by byte up to the shorter length, then by length.
/// HotSpot compiles it inline (an intrinsic); `str`'s `Ord` would call libc's `memcmp` for every
/// probe, a call and its set-up for keys of a few bytes.
#[inline]
fn compare_to(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Where `key` is in `map`: `Ok(index)` if present, else `Err(insertion point)`
/// (`Arrays.binarySearch` over the keys, comparing as `String.compareTo`).
fn search(map: &[Entry], key: &str) -> Result<usize, usize> {
    map.binary_search_by(|e| compare_to(e.key, key))
}

/// Where a copy of `map` changes for `key`: the entries before `.0` are kept, then `.1` (0 or
/// 1, whether `key` is present) are left out.
fn splice_point(map: &[Entry], key: &str) -> (usize, usize) {
    match search(map, key) {
        Ok(i) => (i, 1),
        Err(i) => (i, 0),
    }
}

/// The thread's logging-context state: its young generation and, in it, the frozen
/// `SortedArrayStringMap` that is the map's `localMap` (a copy is one object holding the entries
/// sorted by key; in the JVM three, the map and its `keys` and `values` arrays, placed one after
/// the other by three pointer bumps).
struct Local {
    nursery: Nursery,
    map: Option<Map>,
}

/// The entries of `map` (none for no map).
///
/// # Safety
/// As for [`Map::entries`](nursery::Map::entries): no scavenge since `map` was made or returned.
unsafe fn entries_of<'a>(map: Option<Map>) -> &'a [Entry] {
    // SAFETY: the caller's promise.
    map.map_or(&[], |m| unsafe { m.entries() })
}

impl Local {
    /// The current map's entries.
    fn entries(&self) -> &[Entry] {
        // SAFETY: `map` is the live root; every scavenge returns it moved and it is stored back.
        unsafe { entries_of(self.map) }
    }

    /// `ThreadContext.put` of `prefix + value` (Solr's `"x:" + name`, a new string per put):
    /// `createStringMap(map)` + `putValue` + `freeze`, a new map with the key set.
    fn put(&mut self, key: &'static str, prefix: &str, value: &str) {
        let len = self.entries().len() + 1;
        let room = [
            Nursery::str_words(prefix.len() + value.len()),
            Nursery::map_words(len),
        ];
        self.map = self.nursery.make_room(&room, self.map);
        let value = self.nursery.new_str([prefix, value]);
        // SAFETY: room was made above, so no scavenge runs before the new map replaces the root.
        let old = unsafe { entries_of(self.map) };
        let (at, skip) = splice_point(old, key);
        let new = Entry { key, value };
        self.map = Some(
            self.nursery
                .new_map(&[&old[..at], &[new], &old[at + skip..]]),
        );
    }

    /// `ThreadContext.remove`: `createStringMap(map)` + `remove` + `freeze`, a copy even when the
    /// key is absent.
    fn remove(&mut self, key: &str) {
        if self.map.is_none() {
            return;
        }
        let room = [Nursery::map_words(self.entries().len())];
        self.map = self.nursery.make_room(&room, self.map);
        // SAFETY: as in `put`.
        let old = unsafe { entries_of(self.map) };
        let (at, skip) = splice_point(old, key);
        self.map = Some(self.nursery.new_map(&[&old[..at], &old[at + skip..]]));
    }
}

thread_local! {
    /// `MDCLoggingContext.CALL_DEPTH` (`ThreadLocal.withInitial(() -> 0)`).
    // loom's `thread_local!` takes no `const { }` initialiser.
    #[allow(clippy::missing_const_for_thread_local)]
    static CALL_DEPTH: RefCell<BoxedInteger> = RefCell::new(BoxedInteger::Cached(0));
    /// The map's `localMap` and the young generation it lives in.
    #[allow(clippy::missing_const_for_thread_local)]
    static LOCAL: RefCell<Local> = RefCell::new(Local { nursery: Nursery::new(), map: None });
}

#[cfg(test)]
thread_local! {
    /// (puts, removes) made on this thread; compiled into tests only, so no measured path pays.
    #[allow(clippy::missing_const_for_thread_local)]
    static COUNTS: std::cell::Cell<(u32, u32)> = std::cell::Cell::new((0, 0));
}

/// `ThreadContext.put` of Solr's prefixed value.
fn put(key: &'static str, value: &str) {
    #[cfg(test)]
    COUNTS.with(|c| c.set((c.get().0 + 1, c.get().1)));
    LOCAL.with(|l| l.borrow_mut().put(key, prefix(key), value));
}

/// `ThreadContext.remove`: copies the map even when the key is absent.
fn remove(key: &'static str) {
    #[cfg(test)]
    COUNTS.with(|c| c.set((c.get().0, c.get().1 + 1)));
    LOCAL.with(|l| l.borrow_mut().remove(key));
}

/// `MDCLoggingContext.setCore`.
pub(super) fn set_core(entries: &[(&'static str, Box<str>)]) {
    let depth = CALL_DEPTH.with(|d| {
        let mut d = d.borrow_mut();
        let depth = d.int_value();
        *d = BoxedInteger::value_of(depth + 1);
        depth
    });
    if depth > 0 {
        return;
    }
    for (key, value) in entries {
        put(key, value);
    }
}

/// `MDCLoggingContext.clear`.
pub(super) fn clear() {
    let used = CALL_DEPTH.with(|d| d.borrow().int_value());
    if used <= 1 {
        CALL_DEPTH.with(|d| *d.borrow_mut() = BoxedInteger::value_of(0));
        for key in CLEARED {
            remove(key);
        }
    } else {
        CALL_DEPTH.with(|d| *d.borrow_mut() = BoxedInteger::value_of(used - 1));
    }
}

/// Forgets the thread's depth and map.
pub(super) fn reset_thread() {
    CALL_DEPTH.with(|d| *d.borrow_mut() = BoxedInteger::value_of(0));
    LOCAL.with(|l| l.borrow_mut().map = None);
}

/// The current call depth.
pub(super) fn depth() -> u32 {
    CALL_DEPTH.with(|d| d.borrow().int_value().max(0) as u32)
}

/// The value under `key`, with its prefix.
pub(super) fn get(key: &str) -> Option<String> {
    LOCAL.with(|l| {
        let l = l.borrow();
        let entries = l.entries();
        let i = search(entries, key).ok()?;
        // SAFETY: an entry of the live map.
        Some(unsafe { entries[i].value.as_str() }.to_string())
    })
}

/// Objects (maps and strings) the model has allocated on this thread so far.
pub(super) fn objects_allocated() -> u64 {
    LOCAL.with(|l| l.borrow().nursery.objects())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{CoreDescriptor, RegistryConfig, RegistryKind};

    fn counts() -> (u32, u32) {
        COUNTS.with(|c| c.get())
    }

    /// One request (get_core + close) through a registry of every strategy, counting puts and
    /// removes; all strategies must agree.
    fn one_request(config: RegistryConfig, descriptor: CoreDescriptor) -> (u32, u32) {
        use critsec_sync::kind::StrategyKind;
        let name = descriptor.name.clone();
        let per_kind: Vec<(u32, u32)> = RegistryKind::ALL
            .iter()
            .map(|kind| {
                let r = kind.build(config.clone());
                r.create(descriptor.clone()).unwrap();
                let before = counts();
                drop(r.get_core(&name).unwrap().unwrap());
                let after = counts();
                assert_eq!(depth(), 0);
                (after.0 - before.0, after.1 - before.1)
            })
            .collect();
        assert!(per_kind.windows(2).all(|w| w[0] == w[1]), "{per_kind:?}");
        per_kind[0]
    }

    #[test]
    fn a_cloud_request_puts_five_and_removes_four() {
        let puts = RegistryConfig::solr_mdc_puts(true, true);
        let mut config = RegistryConfig::new(Some("node1:8983_solr".into()), puts).unwrap();
        config.mdc = super::super::MdcKind::Log4j2;
        let d = CoreDescriptor::cloud("c1", "coll", "shard1", "core_node1");
        assert_eq!(one_request(config, d), (5, 4));
    }

    #[test]
    fn a_standalone_request_puts_one_and_removes_four() {
        let puts = RegistryConfig::solr_mdc_puts(false, false);
        let mut config = RegistryConfig::new(None, puts).unwrap();
        config.mdc = super::super::MdcKind::Log4j2;
        assert_eq!(one_request(config, CoreDescriptor::new("c1")), (1, 4));
    }

    #[test]
    fn nested_opens_put_once_and_the_last_clear_removes_with_prefixes() {
        let entries: Vec<(&'static str, Box<str>)> =
            vec![("node_name", "n1".into()), ("core", "a".into())];
        set_core(&entries);
        set_core(&[("core", "b".into())]);
        assert_eq!(get("core").as_deref(), Some("x:a"), "the outer core stays");
        clear();
        assert_eq!(get("core").as_deref(), Some("x:a"));
        clear();
        assert_eq!(get("core"), None);
        assert_eq!(
            get("node_name").as_deref(),
            Some("n:n1"),
            "clear keeps the node"
        );
        assert_eq!(depth(), 0);
    }

    /// The model's map against a `BTreeMap` over random puts and removes, long enough for many
    /// scavenges: after every step the entries are exactly the reference's, sorted by key. The
    /// node name is put once and never again, as in Solr, so its string must survive every
    /// scavenge.
    mod against_a_reference {
        use super::super::*;
        use proptest::prelude::*;
        use std::collections::BTreeMap;

        const KEYS: [&str; 5] = ["core", "collection", "replica", "shard", "x"];

        proptest! {
            #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

            #[test]
            fn puts_and_removes_match_a_sorted_map(
                ops in proptest::collection::vec((0..KEYS.len(), any::<bool>(), "[a-z]{0,40}"), 2000..4000)
            ) {
                let mut local = Local { nursery: Nursery::new(), map: None };
                let mut reference: BTreeMap<&str, String> = BTreeMap::new();
                local.put("node_name", "n:", "node1:8983_solr");
                reference.insert("node_name", "n:node1:8983_solr".to_string());
                for (k, is_put, value) in ops {
                    let key = KEYS[k];
                    if is_put {
                        local.put(key, "p:", &value);
                        reference.insert(key, format!("p:{value}"));
                    } else {
                        local.remove(key);
                        reference.remove(key);
                    }
                    // SAFETY: entries of the live map, read before the next operation.
                    let got: Vec<(&str, String)> = local
                        .entries()
                        .iter()
                        .map(|e| (e.key, unsafe { e.value.as_str() }.to_string()))
                        .collect();
                    let want: Vec<(&str, String)> =
                        reference.iter().map(|(k, v)| (*k, v.clone())).collect();
                    prop_assert_eq!(got, want);
                }
            }
        }
    }

    /// A put that fails (a panic caught by a worker pool that reuses its thread)
    /// must leave the thread's map valid. `make_room` used to switch half-spaces before its
    /// fallible check, so the map still pointed into the old space, the next scavenge copied
    /// into that space over the map's own strings, and `node_name` read back bytes that were
    /// not UTF-8 through an unchecked `&str`. Runs the sequence on the thread's real context:
    /// whether or not the long put panics, every later read must be the value put.
    #[test]
    fn a_caught_panic_in_a_put_leaves_the_map_valid() {
        std::thread::spawn(|| {
            let node = "n:node1:8983_solr";
            put("node_name", "node1:8983_solr");
            let long = "a".repeat(70_000);
            let _ = std::panic::catch_unwind(|| put("core", &long));
            // Enough short puts for several scavenges after the failed one (the bug showed
            // after about 800; Miri runs fewer).
            const PUTS: usize = if cfg!(miri) {
                2048
            } else {
                4 * nursery::SPACE_WORDS
            };
            for i in 0..PUTS {
                put("core", &format!("core{i}"));
                let got = get("node_name").expect("node_name stays");
                assert!(
                    got.as_bytes() == node.as_bytes(),
                    "put {i}: node_name reads back {:x?}",
                    got.as_bytes()
                );
            }
            assert_eq!(get("core"), Some(format!("x:core{}", PUTS - 1)));
        })
        .join()
        .expect("the thread's context stayed valid");
    }

    /// Every entry of `local` with its value, read back.
    fn read_back(local: &Local) -> Vec<(&'static str, String)> {
        // SAFETY: entries of the live map, read before the next operation.
        let read = |e: &Entry| (e.key, unsafe { e.value.as_str() }.to_string());
        local.entries().iter().map(read).collect()
    }

    /// A value longer than a half-space (a 70 KB core name) is allocated in the old
    /// generation, as HotSpot allocates a humongous object, instead of panicking in `make_room`.
    #[test]
    fn a_value_longer_than_a_half_space_goes_to_the_old_generation() {
        let mut local = Local {
            nursery: Nursery::new(),
            map: None,
        };
        local.put("node_name", "n:", "node1:8983_solr");
        let long = "a".repeat(70_000);
        for round in 0..200 {
            local.put("core", "x:", &long);
            local.put("shard", "s:", &format!("shard{round}"));
            assert_eq!(
                read_back(&local),
                [
                    ("core", format!("x:{long}")),
                    ("node_name", "n:node1:8983_solr".to_string()),
                    ("shard", format!("s:shard{round}")),
                ]
            );
            local.remove("core");
            local.remove("shard");
        }
        assert_eq!(
            local.nursery.old_objects(),
            200,
            "each long value, and only those"
        );
    }

    /// 21 values of 4 KB make a live map larger than a half-space; a scavenge
    /// promotes the survivors that do not fit to the old generation, as HotSpot does when the
    /// survivor space overflows, instead of panicking.
    #[test]
    fn a_live_map_larger_than_a_half_space_is_promoted() {
        let mut local = Local {
            nursery: Nursery::new(),
            map: None,
        };
        let value = |key: &str, round: usize| format!("{key}{round}:{}", "v".repeat(4_000));
        for round in 0..20 {
            for key in crate::MDC_KEYS {
                local.put(key, "", &value(key, round));
            }
            let mut want: Vec<(&'static str, String)> = crate::MDC_KEYS
                .iter()
                .map(|k| (*k, value(k, round)))
                .collect();
            want.sort();
            assert_eq!(read_back(&local), want, "round {round}");
            for key in CLEARED {
                local.remove(key);
            }
        }
        assert!(local.nursery.promoted() > 0, "the survivors overflowed");
        assert_eq!(
            local.nursery.old_objects(),
            0,
            "no value is large by itself"
        );
    }

    /// A value longer than a half-space, through a registry of every strategy: requests to a core with a 70 KB name
    /// (Solr's five puts) and with a 4 KB name and 21 puts. The put used to panic inside
    /// `open()`, after the reference was counted, so the core never closed.
    #[test]
    fn long_core_names_through_every_registry() {
        use critsec_sync::kind::StrategyKind;
        for (len, puts) in [(70_000, 5), (4_000, 21)] {
            let name = "c".repeat(len);
            for kind in RegistryKind::ALL {
                let mut config = RegistryConfig::new(Some("node1:8983_solr".into()), puts).unwrap();
                config.mdc = super::super::MdcKind::Log4j2;
                let r = kind.build(config);
                r.create(CoreDescriptor::new(name.as_str())).unwrap();
                for _ in 0..50 {
                    let h = r.get_core(&name).unwrap().expect("loaded");
                    assert_eq!(get("core"), Some(format!("x:{name}")), "{kind}, {len}");
                    drop(h);
                    assert_eq!((depth(), get("core")), (0, None), "{kind}, {len}");
                }
                r.shutdown();
                let created = r.container().cores_created();
                let tally = r.container().close_tally();
                assert_eq!(
                    (created, tally.closed(), tally.over_closed()),
                    (1, 1, 0),
                    "{kind}, {len} bytes x {puts} puts: created, closed, over-closed"
                );
            }
        }
    }

    #[test]
    fn depth_beyond_the_integer_cache_still_counts() {
        let before = depth();
        for _ in 0..200 {
            set_core(&[]);
        }
        assert_eq!(depth(), before + 200);
        for _ in 0..200 {
            clear();
        }
        assert_eq!(depth(), 0);
    }
}
