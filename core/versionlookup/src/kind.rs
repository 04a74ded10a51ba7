//! The lookup caches by kind: each strategy's id (a leaf: the caches name themselves by it;
//! `strategies.rs` builds them).

use critsec_sync::kind::StrategyKind;

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

critsec_sync::strategy_kind_text!(CacheKind);
