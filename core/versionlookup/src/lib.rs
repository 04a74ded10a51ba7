//! Elasticsearch's primary-key (`_id`) version lookup at index time, on a real tantivy index.
//!
//! Every index operation with a provided id must learn the id's current version. The
//! [`Engine`] (Elasticsearch `InternalEngine`) asks the [`LiveVersionMap`] first, then a
//! [`LookupCache`] (`VersionsAndSeqNoResolver`) that walks the last refreshed reader's segments
//! newest first: a term seek of the [`Uid`]-encoded id per segment, skipping deleted docs,
//! reading `_version` on a hit. PR #19856 is about what the cache costs per segment visited.
//!
//! Strategies, listed by [`CacheKind`] (their ids, and [`CacheKind::build`] to construct one):
//! - [`PerSegmentCache`]: map get + thread-local get per segment visited (before #19856).
//! - [`PerReaderCache`]: one map get + one thread-local get per lookup (#19856).
//! - [`PrunedCache`]: per-reader plus a per-segment bloom filter that skips segments (ours).

#![deny(missing_docs)]

mod bloom_filter;
mod cache_map;
mod engine;
mod error;
mod id_generator;
mod indexing_buffer;
mod kind;
mod leaf_lookup;
mod live_version_map;
mod lookup_cache;
mod per_reader_cache;
mod per_segment_cache;
mod pruned_cache;
mod strategies;
mod uid;

#[cfg(all(test, not(loom)))]
mod tests;

pub use bloom_filter::{BloomFilter, IdHash};
pub use cache_map::{CacheMap, FxBuildHasher, FxHasher};
pub use engine::{DeleteResult, Engine, EngineConfig, IndexResult, LookupTimer};
pub use error::VersionLookupError;
pub use id_generator::{AutoIds, RallyAction, RallyIds, random_uuid_id};
pub use kind::CacheKind;
pub use leaf_lookup::{DocVersion, LeafLookup, ReaderGeneration};
pub use live_version_map::{LiveVersionMap, MapEntry};
pub use lookup_cache::{LookupCache, LookupStats};
pub use per_reader_cache::PerReaderCache;
pub use per_segment_cache::PerSegmentCache;
pub use pruned_cache::PrunedCache;
pub use uid::Uid;
