//! Models: the per-reader cache plus a per-segment bloom filter over `_id` that skips segments
//! which cannot hold the id (ours).
//! Upstream: PR #19856's per-reader cache; Elasticsearch later added an `_id` bloom filter for
//! time-series indices (ES87BloomFilterPostingsFormat).
//! Hot-path cost: one map get, one hash of the id, six bit probes per segment; one thread-local
//! get and one seek per segment only when some filter says "maybe".

use std::sync::Arc;

use tantivy::index::{SegmentId, SegmentReader};
use tantivy::schema::Field;

use super::bloom_filter::{BloomFilter, IdHash};
use super::cache_map::CacheMap;
use super::error::VersionLookupError;
use super::kind::CacheKind;
use super::leaf_lookup::{DocVersion, ReaderGeneration};
use super::lookup_cache::{LookupCache, LookupStats};
use super::per_reader_cache::{ReaderStates, walk_leaves};
use critsec_sync::kind::StrategyKind;

/// One generation's filters, newest first, and its per-thread states.
struct PrunedEntry {
    filters: Vec<Arc<BloomFilter>>,
    states: ReaderStates,
}

/// The per-reader cache with segment pruning.
#[derive(Default)]
pub struct PrunedCache {
    readers: CacheMap<u64, PrunedEntry>,
    /// Filters outlive generations: a segment's `_id` terms never change, and a filter over all
    /// of them (deleted ones included) is still a superset of its live ids.
    filters: CacheMap<SegmentId, BloomFilter>,
}

impl PrunedCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn filter_for(
        &self,
        id: SegmentId,
        segment: &SegmentReader,
        id_field: Field,
    ) -> Result<Arc<BloomFilter>, VersionLookupError> {
        if let Some(f) = self.filters.get(&id) {
            return Ok(f);
        }
        let ids = segment.inverted_index(id_field)?;
        let mut filter = BloomFilter::with_capacity(ids.terms().num_terms());
        let mut terms = ids.terms().stream()?;
        while terms.advance() {
            filter.insert(IdHash::of(terms.key()));
        }
        Ok(self.filters.get_or_insert(id, Arc::new(filter)))
    }

    fn entry_for(&self, reader: &ReaderGeneration) -> Result<Arc<PrunedEntry>, VersionLookupError> {
        let filters = reader
            .segment_ids()
            .iter()
            .enumerate()
            .map(|(i, id)| self.filter_for(*id, reader.segment(i), reader.id_field()))
            .collect::<Result<Vec<_>, _>>()?;
        let entry = Arc::new(PrunedEntry {
            filters,
            states: ReaderStates::new(),
        });
        Ok(self.readers.get_or_insert(reader.generation(), entry))
    }

    fn walk(
        entry: &PrunedEntry,
        reader: &ReaderGeneration,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        let h = IdHash::of(uid);
        // Filter first, so that a certain miss touches neither the thread-local nor a seek.
        if !entry.filters.iter().any(|f| f.may_contain(h)) {
            stats.segments_skipped += entry.filters.len() as u64;
            return Ok(None);
        }
        walk_leaves(&entry.states, reader, uid, stats, |i| {
            entry.filters[i].may_contain(h)
        })
    }
}

impl LookupCache for PrunedCache {
    fn id(&self) -> &'static str {
        CacheKind::Pruned.id()
    }

    fn lookup(
        &self,
        reader: &ReaderGeneration,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        stats.lookups += 1;
        stats.map_gets += 1;
        match self
            .readers
            .with(&reader.generation(), |e| Self::walk(e, reader, uid, stats))
        {
            Some(found) => found,
            None => {
                let entry = self.entry_for(reader)?;
                Self::walk(&entry, reader, uid, stats)
            }
        }
    }

    fn on_refresh(&self, reader: &ReaderGeneration) -> Result<(), VersionLookupError> {
        // Build the new segments' filters at refresh, not on the first lookup.
        self.entry_for(reader)?;
        let current = reader.generation();
        self.readers.retain(|g| *g == current);
        let live = reader.segment_ids();
        self.filters.retain(|id| live.contains(id));
        Ok(())
    }

    fn cached_entries(&self) -> usize {
        self.readers.len()
    }
}
