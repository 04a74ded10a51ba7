//! The lookup caches by kind: each strategy's id and how to build it.

use critsec_sync::kind::StrategyKind;

use crate::lookup_cache::LookupCache;
use crate::per_reader_cache::PerReaderCache;
use crate::per_segment_cache::PerSegmentCache;
use crate::pruned_cache::PrunedCache;

/// A strategy choice, parsed from its CLI id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheKind {
    /// [`PerSegmentCache`].
    PerSegment,
    /// [`PerReaderCache`].
    PerReader,
    /// [`PrunedCache`].
    Pruned,
}

impl StrategyKind for CacheKind {
    const ALL: &'static [Self] = &[
        CacheKind::PerSegment,
        CacheKind::PerReader,
        CacheKind::Pruned,
    ];

    fn id(self) -> &'static str {
        match self {
            CacheKind::PerSegment => "per-segment",
            CacheKind::PerReader => "per-reader",
            CacheKind::Pruned => "pruned",
        }
    }
}

impl CacheKind {
    /// A fresh, empty cache of this kind.
    pub fn build(self) -> Box<dyn LookupCache> {
        match self {
            CacheKind::PerSegment => Box::new(PerSegmentCache::new()),
            CacheKind::PerReader => Box::new(PerReaderCache::new()),
            CacheKind::Pruned => Box::new(PrunedCache::new()),
        }
    }
}

critsec_sync::strategy_kind_text!(CacheKind);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategy_ids_parse_and_bad_ones_list_the_valid_set() {
        for &k in CacheKind::ALL {
            assert_eq!(k.id().parse::<CacheKind>().unwrap(), k);
            assert_eq!(k.build().id(), k.id());
            assert_eq!(k.to_string(), k.id());
        }
        let e = "lru".parse::<CacheKind>().unwrap_err().to_string();
        assert!(e.contains("lru") && e.contains("per-reader"), "{e}");
    }
}
