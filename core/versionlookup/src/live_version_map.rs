//! The live version map: versions of documents written since the last refresh, and tombstones.
//!
//! Follows Elasticsearch `LiveVersionMap` (safe-access mode, which provided ids always enforce):
//! index operations go to `current`; a refresh's cut moves `current` to `old` (so entries stay
//! visible while the refresh commits and opens the new reader, and index operations go on into
//! a fresh `current`) and, once the new reader is published, drops `old`.
//! Tombstones live in their own map, untouched by refreshes, until they are older than the GC
//! interval (`index.gc_deletes`, here counted in refreshes rather than seconds).
//!
//! | where an id's latest op is | visible through |
//! |---|---|
//! | written since the last `before_refresh` | `current` |
//! | written before it, refresh not yet published | `old` (and the refresh's batch) |
//! | refreshed | the reader only |
//! | deleted, younger than the GC interval | `tombstones` |

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use super::cache_map::FxBuildHasher;
use super::leaf_lookup::DocVersion;
use critsec_sync::{Mutex, MutexGuard};

const SHARDS: usize = 64;
const LOCK_STRIPES: usize = 1024;

type IdMap<V> = HashMap<Box<[u8]>, V, FxBuildHasher>;

#[derive(Default)]
struct Maps {
    current: IdMap<DocVersion>,
    old: IdMap<DocVersion>,
}

#[derive(Debug, Clone, Copy)]
struct Tombstone {
    version: DocVersion,
    /// The refresh count when the delete happened: the logical clock of GC.
    stamp: u64,
}

/// What the version map knows about an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapEntry {
    /// Indexed since the last refresh, with this version.
    Indexed(DocVersion),
    /// Deleted with this version; the tombstone has not been collected yet.
    Deleted(DocVersion),
}

/// Sharded current/old maps, tombstones and the per-id lock (Elasticsearch `KeyedLock`).
pub struct LiveVersionMap {
    maps: Box<[Mutex<Maps>]>,
    tombstones: Box<[Mutex<IdMap<Tombstone>>]>,
    // Deviation: Elasticsearch's KeyedLock allocates a lock per id in a CHM; we stripe a fixed
    // array of locks by id hash. Two ids may share a stripe, which only serialises them.
    locks: Box<[Mutex<()>]>,
}

fn hash(uid: &[u8]) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    h.write(uid);
    h.finish()
}

impl LiveVersionMap {
    /// An empty map.
    pub fn new() -> Self {
        LiveVersionMap {
            maps: (0..SHARDS)
                .map(|_| Mutex::new("versionlookup.version_map", Maps::default()))
                .collect(),
            tombstones: (0..SHARDS)
                .map(|_| Mutex::new("versionlookup.tombstones", IdMap::default()))
                .collect(),
            locks: (0..LOCK_STRIPES)
                .map(|_| Mutex::new("versionlookup.uid_lock", ()))
                .collect(),
        }
    }

    fn shard(uid: &[u8]) -> usize {
        (hash(uid) >> 32) as usize % SHARDS
    }

    /// Takes the per-id lock held for a whole index or delete operation.
    pub fn acquire_lock(&self, uid: &[u8]) -> MutexGuard<'_, ()> {
        self.locks[hash(uid) as usize % LOCK_STRIPES].lock()
    }

    /// Checks current, then old, then tombstones (`getUnderLock`). Call with the id's lock held.
    pub fn get_under_lock(&self, uid: &[u8]) -> Option<MapEntry> {
        let s = Self::shard(uid);
        {
            let maps = self.maps[s].lock();
            if let Some(v) = maps.current.get(uid).or_else(|| maps.old.get(uid)) {
                return Some(MapEntry::Indexed(*v));
            }
        }
        self.tombstones[s]
            .lock()
            .get(uid)
            .map(|t| MapEntry::Deleted(t.version))
    }

    /// Records an index operation and clears any tombstone (`putIndexUnderLock`).
    pub fn put_index_under_lock(&self, uid: &[u8], version: DocVersion) {
        let s = Self::shard(uid);
        self.maps[s].lock().current.insert(uid.into(), version);
        self.tombstones[s].lock().remove(uid);
    }

    /// Records a delete as a tombstone stamped with the refresh count `stamp`, and forgets the
    /// id in current and old (`putDeleteUnderLock`).
    pub fn put_delete_under_lock(&self, uid: &[u8], version: DocVersion, stamp: u64) {
        let s = Self::shard(uid);
        self.tombstones[s]
            .lock()
            .insert(uid.into(), Tombstone { version, stamp });
        let mut maps = self.maps[s].lock();
        maps.current.remove(uid);
        maps.old.remove(uid);
    }

    /// `beforeRefresh`: current becomes old, a fresh current takes new writes. The engine calls
    /// it in a refresh's cut, while no index operation is in flight, so the swap is atomic with
    /// respect to writes.
    pub fn before_refresh(&self) {
        for shard in self.maps.iter() {
            let mut m = shard.lock();
            m.old = std::mem::take(&mut m.current);
        }
    }

    /// `afterRefresh`: the new reader is published and holds everything old held.
    pub fn after_refresh(&self) {
        for shard in self.maps.iter() {
            // Freed outside the shard's lock, which index operations take.
            let old = std::mem::take(&mut shard.lock().old);
            drop(old);
        }
    }

    /// Drops tombstones at least `gc_interval` refreshes old (`pruneTombstones`).
    pub fn prune_tombstones(&self, now: u64, gc_interval: u64) {
        for shard in self.tombstones.iter() {
            shard
                .lock()
                .retain(|_, t| now.saturating_sub(t.stamp) < gc_interval);
        }
    }

    /// Entries in (current, old, tombstones), for tests and reports.
    pub fn sizes(&self) -> (usize, usize, usize) {
        let (mut c, mut o) = (0, 0);
        for shard in self.maps.iter() {
            let m = shard.lock();
            c += m.current.len();
            o += m.old.len();
        }
        let t = self.tombstones.iter().map(|s| s.lock().len()).sum();
        (c, o, t)
    }
}

impl Default for LiveVersionMap {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn v(version: u64) -> DocVersion {
        DocVersion {
            version,
            seq_no: version,
        }
    }

    #[test]
    fn refresh_moves_current_to_old_then_drops_it() {
        let m = LiveVersionMap::new();
        m.put_index_under_lock(b"a", v(1));
        m.before_refresh();
        assert_eq!(
            m.get_under_lock(b"a"),
            Some(MapEntry::Indexed(v(1))),
            "old stays visible"
        );
        m.put_index_under_lock(b"b", v(2));
        assert_eq!(m.sizes(), (1, 1, 0));
        m.after_refresh();
        assert_eq!(m.get_under_lock(b"a"), None);
        assert_eq!(m.get_under_lock(b"b"), Some(MapEntry::Indexed(v(2))));
    }

    #[test]
    fn tombstones_survive_refreshes_until_gc() {
        let m = LiveVersionMap::new();
        m.put_index_under_lock(b"a", v(1));
        m.put_delete_under_lock(b"a", v(2), 5);
        for now in 5..7 {
            m.before_refresh();
            m.after_refresh();
            m.prune_tombstones(now, 2);
            assert_eq!(m.get_under_lock(b"a"), Some(MapEntry::Deleted(v(2))));
        }
        m.prune_tombstones(7, 2);
        assert_eq!(m.get_under_lock(b"a"), None);
        m.put_delete_under_lock(b"b", v(1), 0);
        m.put_index_under_lock(b"b", v(2));
        assert_eq!(m.sizes(), (1, 0, 0), "an index clears the tombstone");
    }
}
