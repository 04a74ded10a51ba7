//! The lookup-cache trait: how an `_id` is resolved to its version in one reader generation.

use super::error::VersionLookupError;
use super::leaf_lookup::{DocVersion, ReaderGeneration};

/// What one or more lookups cost, counted rather than timed, so tests can assert the
/// N versus N*S story of PR #19856 exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LookupStats {
    /// Lookups performed.
    pub lookups: u64,
    /// Concurrent-map gets (Java `ConcurrentHashMap#get`).
    pub map_gets: u64,
    /// Thread-local gets (Java `ThreadLocal#get`).
    pub thread_local_gets: u64,
    /// Term-dictionary seeks (Lucene `TermsEnum#seekExact`).
    pub term_seeks: u64,
    /// Segments a filter ruled out without a seek.
    pub segments_skipped: u64,
    /// Lookups that found a live document.
    pub hits: u64,
}

impl LookupStats {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &LookupStats) {
        self.lookups += other.lookups;
        self.map_gets += other.map_gets;
        self.thread_local_gets += other.thread_local_gets;
        self.term_seeks += other.term_seeks;
        self.segments_skipped += other.segments_skipped;
        self.hits += other.hits;
    }
}

/// Resolves an encoded `_id` to the version of its live document in one reader generation.
///
/// Strategies, side by side (CLI ids in brackets):
/// - [`PerSegmentCache`](crate::PerSegmentCache) (`per-segment`): a map keyed by segment, each
///   entry a thread-local
///   state; a map get and a thread-local get per segment visited (Elasticsearch before #19856).
/// - [`PerReaderCache`](crate::PerReaderCache) (`per-reader`): a map keyed by reader generation
///   whose thread-local holds
///   every segment's state; one of each per lookup (PR #19856).
/// - [`PrunedCache`](crate::PrunedCache) (`pruned`, ours): per-reader plus a bloom filter per
///   segment that skips
///   segments which cannot hold the id.
///
/// Contract:
/// - `lookup` visits segments newest first (see [`ReaderGeneration`]) and returns the first live
///   document found; on a miss every segment not ruled out by a filter is sought. It never sees
///   documents that are not in `reader` (the live version map covers those).
/// - `lookup` may be called from many threads at once, with the current or an older generation.
///   Callers may not assume that states are shared between threads or survive a refresh.
/// - `on_refresh` is called once per new generation, after it is opened and before lookups use
///   it; caches drop entries that only older generations can use. A lookup racing with it on an
///   older generation still answers correctly (it may rebuild a state that the next refresh drops).
pub trait LookupCache: Send + Sync {
    /// The strategy's id, its [`CacheKind`](crate::CacheKind)'s (the file stem in kebab-case).
    fn id(&self) -> &'static str;

    /// The version of the live document with encoded id `uid` in `reader`, adding the cost to
    /// `stats`.
    fn lookup(
        &self,
        reader: &ReaderGeneration,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError>;

    /// Prepares for `reader` and drops entries no live generation needs.
    fn on_refresh(&self, reader: &ReaderGeneration) -> Result<(), VersionLookupError>;

    /// Number of map entries held (segments or generations), to test eviction.
    fn cached_entries(&self) -> usize;
}
