//! One cache of each kind: the one place that names every lookup cache's type, so that the kind
//! enum stays a leaf the caches can name themselves by.

use crate::kind::CacheKind;
use crate::lookup_cache::LookupCache;
use crate::per_reader_cache::PerReaderCache;
use crate::per_segment_cache::PerSegmentCache;
use crate::pruned_cache::PrunedCache;

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

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_sync::kind::StrategyKind;

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
