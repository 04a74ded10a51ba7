//! Models: Solr's transient cores, `TransientSolrCoreCacheDefault` and the eviction handler of
//! `TransientSolrCores` (Solr 9.x): a size-bounded, access-ordered cache of loaded cores whose
//! descriptor says `transient=true`, beside the permanent `cores` map.
//!
//! Upstream, the cache is a Caffeine cache (`maximumSize(transientCacheSize)`,
//! `executor(Runnable::run)`, so evictions run on whichever thread's cache access triggers
//! maintenance) plus the unbounded `transientDescriptors`; its removal listener `onEvict` runs under
//! `modifyLock` and either puts the core back (a load, unload or reload is pending on it, or
//! `getOpenCount() > 1`: someone still uses it) or hands it to `queueCoreToClose` for the
//! `CloserThread`. Re-inserting means the bound is not strict: "it can grow some if we un-evict".
//!
//! Deviations, each for a stated reason:
//! - Access order is recorded as a stamp per entry (one relaxed load of the cache's tick, and a
//!   store only when the stamp changes), and the tick advances on every insertion: an insertion
//!   at tick `t` stamps `2t`, a read at tick `t` stamps `2t + 1`, so a read ranks after the
//!   insertion before it. Eviction takes the entry with the oldest stamp (ties: the earliest
//!   inserted). So "recently used" is resolved per insertion, not per access,
//!   as Caffeine's lossy read buffers also resolve it approximately; a reader never writes a shared
//!   line the cache owns, only its entry's stamp, once per insertion epoch. Caffeine's admission
//!   (W-TinyLFU) is not modelled: the victim is the least recently used, as in Solr 8's
//!   `LinkedHashMap(accessOrder = true)`.
//! - Descriptors of transient cores stay in `residentDescriptors` (`Maps::resident_descriptors`);
//!   only the loaded cores live here. The counts Solr derives are the same.
//! - The core queued to close is closed by the thread that ran the eviction, after it released
//!   the registry lock, rather than by a separate `CloserThread`; in both the close runs outside
//!   the lock, and the name stays blocked for new operations until it is done. That close leaves
//!   the running thread's logging context alone (`Core::close_on_closer_thread`): in Solr it is
//!   the closer thread's own, never the request's whose load or hit caused the eviction.
//!
//! Where an eviction pass runs, and what becomes of a still-referenced core
//! ([`EvictionPolicy`]), is the strategy's: Solr re-inserts into the cache under its monitor;
//! PR #1155 ran maintenance on its own thread (a reader under the read lock cannot take the write
//! lock the handler needs) and kept evicted-but-referenced cores in an overflow map.

use super::name_map::NameMap;
use super::solr_core::Core;
use critsec_sync::primitive::{Arc, AtomicU64, Ordering};

/// What the eviction handler does with a core it must not close yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EvictionPolicy {
    /// Solr 9.x `onEvict`: put it back into the cache as the most recently used entry.
    ReInsert,
    /// PR #1155: move it to the overflow map; every later pass closes it once it is unreferenced.
    Overflow,
}

/// One cached core and when it was last used.
pub(crate) struct TransientEntry {
    core: Arc<Core>,
    /// The cache's tick at this entry's last access or insertion.
    last_access: AtomicU64,
}

/// The transient cores of one registry: the bounded cache and the overflow map.
///
/// Cloned whole into the snapshot strategy's published maps; the clones share the tick and the
/// entries (so a snapshot reader's access is seen by the writer's next eviction).
#[derive(Clone)]
pub(crate) struct TransientCores {
    /// Solr's `transientCacheSize`; 0 means no transient cache (Solr then uses plain `SolrCores`
    /// and a `transient=true` core is loaded as a permanent one).
    capacity: usize,
    /// Advanced by every insertion; the stamp a read writes.
    tick: Arc<AtomicU64>,
    /// The cache, in insertion order; the victim is chosen by stamp.
    cached: NameMap<Arc<TransientEntry>>,
    /// PR #1155's overflow: evicted while still referenced; still registered and loaded, reached
    /// by the load path (which re-admits it), not by the lock-held lookup.
    overflow: NameMap<Arc<Core>>,
}

impl Default for TransientCores {
    /// No transient cache.
    fn default() -> Self {
        TransientCores::new(0)
    }
}

impl TransientCores {
    /// An empty cache holding at most `capacity` cores (over it only while un-evicted cores are
    /// still referenced).
    pub(crate) fn new(capacity: usize) -> Self {
        TransientCores {
            capacity,
            tick: Arc::new(AtomicU64::new(0)),
            cached: NameMap::default(),
            overflow: NameMap::default(),
        }
    }

    /// Whether a core of a transient descriptor goes here (a cache exists).
    pub(crate) fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// `TransientSolrCoreCache.getCore`: the cached core `name`, recording the access. A core in
    /// the overflow is not served here: its request takes the load path, which finds it loaded
    /// and re-admits it ([`TransientCores::readmit`]) under the write lock; a request by id
    /// for it takes the same path (without ever loading), so every lookup sees the same cores.
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Core>> {
        let entry = self.cached.get(name)?;
        let now = 2 * self.tick.load(Ordering::Relaxed) + 1;
        if entry.last_access.load(Ordering::Relaxed) != now {
            entry.last_access.store(now, Ordering::Relaxed);
        }
        Some(&entry.core)
    }

    /// Moves `name` from the overflow back into the cache as its most recently used entry;
    /// whether it was there.
    pub(crate) fn readmit(&mut self, name: &str) -> bool {
        let Some(core) = self.overflow.shift_remove(name) else {
            return false;
        };
        let stamp = self.next_insertion_stamp();
        self.cached.insert(
            name.into(),
            Arc::new(TransientEntry {
                core,
                last_access: AtomicU64::new(stamp),
            }),
        );
        true
    }

    /// The loaded transient core `name` without recording an access (observers).
    pub(crate) fn peek(&self, name: &str) -> Option<&Arc<Core>> {
        self.cached
            .get(name)
            .map(|e| &e.core)
            .or_else(|| self.overflow.get(name))
    }

    /// `TransientSolrCoreCache.addCore`: caches `core` as the most recently used entry and returns
    /// the core it replaced under `name` (from the cache or the overflow), whose registry
    /// reference passes to the caller.
    pub(crate) fn put(&mut self, name: &str, core: Arc<Core>) -> Option<Arc<Core>> {
        let stamp = self.next_insertion_stamp();
        let entry = Arc::new(TransientEntry {
            core,
            last_access: AtomicU64::new(stamp),
        });
        let from_overflow = self.overflow.shift_remove(name);
        let replaced = self.cached.shift_remove(name).map(|e| Arc::clone(&e.core));
        self.cached.insert(name.into(), entry);
        replaced.or(from_overflow)
    }

    /// Advances the tick; the stamp of an insertion at the new tick.
    fn next_insertion_stamp(&self) -> u64 {
        2 * (self.tick.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// `removeCore`: unregisters `name` from the cache or the overflow, handing over the
    /// registry's reference.
    pub(crate) fn remove(&mut self, name: &str) -> Option<Arc<Core>> {
        match self.cached.shift_remove(name) {
            Some(entry) => Some(Arc::clone(&entry.core)),
            None => self.overflow.shift_remove(name),
        }
    }

    /// Whether an eviction pass has anything to do: the cache is over its bound, or the overflow
    /// holds cores that may have become unreferenced.
    #[inline]
    pub(crate) fn needs_maintenance(&self) -> bool {
        self.capacity > 0 && (self.cached.len() > self.capacity || !self.overflow.is_empty())
    }

    /// One maintenance pass, with `still_used(name, core)` as `onEvict`'s test (pending
    /// operations, or an open count above 1). Unreferenced overflow cores are released first;
    /// then, while the cache is over its bound, the least recently used entry is evicted, each
    /// entry visited at most once (so a cache whose entries are all in use ends the pass over its
    /// bound, as Solr's does). Returns the `(name, core)`s to close, in eviction order.
    pub(crate) fn evict(
        &mut self,
        policy: EvictionPolicy,
        mut still_used: impl FnMut(&str, &Core) -> bool,
    ) -> Vec<(Box<str>, Arc<Core>)> {
        let mut to_close = Vec::new();
        let overflow = std::mem::take(&mut self.overflow);
        for (name, core) in overflow {
            if still_used(&name, &core) {
                self.overflow.insert(name, core);
            } else {
                to_close.push((name, core));
            }
        }
        let mut visits = self.cached.len();
        while self.cached.len() > self.capacity && visits > 0 {
            visits -= 1;
            let victim = self
                .cached
                .values()
                .enumerate()
                .min_by_key(|(_, e)| e.last_access.load(Ordering::Relaxed))
                .map(|(i, _)| i)
                .expect("the cache is over a bound of at least 1, so not empty");
            let (name, entry) = self.cached.shift_remove_index(victim).expect("in range");
            let core = Arc::clone(&entry.core);
            if !still_used(&name, &core) {
                to_close.push((name, core));
                continue;
            }
            match policy {
                EvictionPolicy::ReInsert => {
                    let stamp = self.next_insertion_stamp();
                    entry.last_access.store(stamp, Ordering::Relaxed);
                    self.cached.insert(name, entry);
                }
                EvictionPolicy::Overflow => {
                    self.overflow.insert(name, core);
                }
            }
        }
        to_close
    }

    /// Every loaded transient core, cache first, then overflow (for listings and shutdown).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Arc<Core>)> {
        self.cached
            .iter()
            .map(|(n, e)| (&**n, &e.core))
            .chain(self.overflow.iter().map(|(n, c)| (&**n, c)))
    }

    /// How many transient cores are loaded (`getNumLoadedTransientCores`).
    pub(crate) fn len(&self) -> usize {
        self.cached.len() + self.overflow.len()
    }

    /// Empties the cache and the overflow, handing over every registry reference (shutdown).
    pub(crate) fn drain(&mut self) -> Vec<Arc<Core>> {
        let cached = std::mem::take(&mut self.cached);
        let overflow = std::mem::take(&mut self.overflow);
        cached
            .into_values()
            .map(|e| Arc::clone(&e.core))
            .chain(overflow.into_values())
            .collect()
    }
}
