//! Models: the per-reader lookup cache, a map from reader generation to a thread-local array
//! of every segment's lookup state.
//! Upstream: Elasticsearch `VersionsAndSeqNoResolver.getLookupState` since PR #19856 (keyed by the
//! top-level reader cache key, evicted by a reader-closed listener).
//! Hot-path cost: one map get and one thread-local get per lookup; no lock; states rebuilt per
//! thread after every refresh.

use std::cell::RefCell;
use std::sync::Arc;

use thread_local::ThreadLocal;

use super::cache_map::CacheMap;
use super::error::VersionLookupError;
use super::kind::CacheKind;
use super::leaf_lookup::{DocVersion, LeafLookup, ReaderGeneration};
use super::lookup_cache::{LookupCache, LookupStats};
use critsec_sync::kind::StrategyKind;

pub(crate) type ReaderStates = ThreadLocal<RefCell<Vec<LeafLookup>>>;

/// Lookup states cached per reader generation and thread.
#[derive(Default)]
pub struct PerReaderCache {
    readers: CacheMap<u64, ReaderStates>,
}

impl PerReaderCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Walks `reader`'s segments newest first with this thread's states for it.
pub(crate) fn walk_leaves(
    states: &ReaderStates,
    reader: &ReaderGeneration,
    uid: &[u8],
    stats: &mut LookupStats,
    may_contain: impl Fn(usize) -> bool,
) -> Result<Option<DocVersion>, VersionLookupError> {
    stats.thread_local_gets += 1;
    let leaves = states.get_or_try(|| reader.open_leaves().map(RefCell::new))?;
    let mut leaves = leaves.borrow_mut();
    for (i, leaf) in leaves.iter_mut().enumerate() {
        if !may_contain(i) {
            stats.segments_skipped += 1;
            continue;
        }
        if let Some(v) = leaf.lookup(reader.segment(i), uid, stats)? {
            stats.hits += 1;
            return Ok(Some(v));
        }
    }
    Ok(None)
}

impl LookupCache for PerReaderCache {
    fn id(&self) -> &'static str {
        CacheKind::PerReader.id()
    }

    fn lookup(
        &self,
        reader: &ReaderGeneration,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        stats.lookups += 1;
        stats.map_gets += 1;
        let generation = reader.generation();
        match self.readers.with(&generation, |s| {
            walk_leaves(s, reader, uid, stats, |_| true)
        }) {
            Some(found) => found,
            None => {
                let states = self.readers.get_or_insert(generation, Arc::default());
                walk_leaves(&states, reader, uid, stats, |_| true)
            }
        }
    }

    fn on_refresh(&self, reader: &ReaderGeneration) -> Result<(), VersionLookupError> {
        // The reader-closed listener: once a newer generation is published, older ones only
        // serve lookups already in flight, which rebuild their states if they need them.
        let current = reader.generation();
        self.readers.retain(|g| *g == current);
        Ok(())
    }

    fn cached_entries(&self) -> usize {
        self.readers.len()
    }
}
