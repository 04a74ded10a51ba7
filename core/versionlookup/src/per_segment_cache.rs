//! Models: the per-segment lookup cache, a map from segment to a thread-local lookup state.
//! Upstream: Elasticsearch `VersionsAndSeqNoResolver` after PR #14070 (keyed by the segment core
//! key, evicted by a core-closed listener), the state PR #19856 replaced.
//! Hot-path cost: per segment visited, one map get and one thread-local get; no lock, no allocation.

use std::cell::RefCell;
use std::sync::Arc;

use tantivy::index::{SegmentId, SegmentReader};
use tantivy::schema::Field;
use thread_local::ThreadLocal;

use super::cache_map::CacheMap;
use super::error::VersionLookupError;
use super::kind::CacheKind;
use super::leaf_lookup::{DocVersion, LeafLookup, ReaderGeneration};
use super::lookup_cache::{LookupCache, LookupStats};
use critsec_sync::kind::StrategyKind;

type ThreadStates = ThreadLocal<RefCell<LeafLookup>>;

/// Lookup states cached per segment and thread; they outlive refreshes, since a segment's
/// `_id` terms never change (only its deletes do, and those are read from the current reader).
#[derive(Default)]
pub struct PerSegmentCache {
    segments: CacheMap<SegmentId, ThreadStates>,
}

impl PerSegmentCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn lookup_in(
        states: &ThreadStates,
        segment: &SegmentReader,
        id_field: Field,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        stats.thread_local_gets += 1;
        let state = states.get_or_try(|| LeafLookup::open(segment, id_field).map(RefCell::new))?;
        state.borrow_mut().lookup(segment, uid, stats)
    }
}

impl LookupCache for PerSegmentCache {
    fn id(&self) -> &'static str {
        CacheKind::PerSegment.id()
    }

    fn lookup(
        &self,
        reader: &ReaderGeneration,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        stats.lookups += 1;
        let id_field = reader.id_field();
        for (i, segment_id) in reader.segment_ids().iter().enumerate() {
            let segment = reader.segment(i);
            stats.map_gets += 1;
            let found = match self.segments.with(segment_id, |states| {
                Self::lookup_in(states, segment, id_field, uid, stats)
            }) {
                Some(found) => found?,
                None => {
                    // First visit of this segment: publish an empty thread-local (Java
                    // `putIfAbsent`); whoever loses the race uses the winner's.
                    let states = self.segments.get_or_insert(*segment_id, Arc::default());
                    Self::lookup_in(&states, segment, id_field, uid, stats)?
                }
            };
            if let Some(v) = found {
                stats.hits += 1;
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    fn on_refresh(&self, reader: &ReaderGeneration) -> Result<(), VersionLookupError> {
        // The core-closed listener: segments merged away are dropped with all threads' states.
        let live = reader.segment_ids();
        self.segments.retain(|id| live.contains(id));
        Ok(())
    }

    fn cached_entries(&self) -> usize {
        self.segments.len()
    }
}
