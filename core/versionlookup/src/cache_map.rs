//! A read-mostly concurrent map, our stand-in for Java's `ConcurrentHashMap` in the caches.
//!
//! Reads load an `arc_swap` snapshot and probe a hash map: no lock and no shared-counter write
//! (arc-swap's debt slots are per thread), which is what a CHM get costs in Java. Writes copy
//! the map and swap it in; they happen once per new segment or reader, never per lookup.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use arc_swap::ArcSwap;

/// A multiplicative hasher (FxHash): segment ids and generations are already well mixed, and
/// Java's CHM hashes cache keys by identity, so a cheap hash keeps the comparison honest.
#[derive(Debug, Default, Clone, Copy)]
pub struct FxBuildHasher;

/// The hasher built by [`FxBuildHasher`].
#[derive(Debug, Default)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(SEED);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl BuildHasher for FxBuildHasher {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

/// A copy-on-write map from `K` to shared values.
pub struct CacheMap<K, V> {
    inner: ArcSwap<HashMap<K, Arc<V>, FxBuildHasher>>,
}

impl<K: Hash + Eq + Clone, V> CacheMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        CacheMap {
            inner: ArcSwap::from_pointee(HashMap::with_hasher(FxBuildHasher)),
        }
    }

    /// Runs `f` on the value for `key`, or returns `None`; one map get.
    #[inline]
    pub fn with<R>(&self, key: &K, f: impl FnOnce(&V) -> R) -> Option<R> {
        let snapshot = self.inner.load();
        snapshot.get(key).map(|v| f(v))
    }

    /// A shared handle on the value for `key`; one map get.
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        self.inner.load().get(key).cloned()
    }

    /// The value for `key`, inserting `value` if absent (Java `putIfAbsent`); the winner's value
    /// is returned either way.
    pub fn get_or_insert(&self, key: K, value: Arc<V>) -> Arc<V> {
        let mut winner = None;
        self.inner.rcu(|m| {
            if let Some(v) = m.get(&key) {
                winner = Some(Arc::clone(v));
                return Arc::clone(m);
            }
            let mut m2 = HashMap::clone(m);
            m2.insert(key.clone(), Arc::clone(&value));
            winner = Some(Arc::clone(&value));
            Arc::new(m2)
        });
        winner.unwrap_or(value)
    }

    /// Keeps only the entries for which `keep` holds.
    pub fn retain(&self, keep: impl Fn(&K) -> bool) {
        self.inner.rcu(|m| {
            let m2: HashMap<K, Arc<V>, FxBuildHasher> = m
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, v)| (k.clone(), Arc::clone(v)))
                .collect();
            Arc::new(m2)
        });
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.inner.load().len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<K: Hash + Eq + Clone, V> Default for CacheMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_insert_wins_and_retain_evicts() {
        let m: CacheMap<u64, &str> = CacheMap::new();
        assert_eq!(*m.get_or_insert(1, Arc::new("a")), "a");
        assert_eq!(*m.get_or_insert(1, Arc::new("b")), "a");
        m.get_or_insert(2, Arc::new("c"));
        assert_eq!(m.with(&1, |v| *v), Some("a"));
        m.retain(|k| *k == 2);
        assert_eq!(m.len(), 1);
        assert_eq!(m.with(&1, |v| *v), None);
    }
}
