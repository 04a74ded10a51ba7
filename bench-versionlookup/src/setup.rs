//! Prepared indices shared by the scenarios and the criterion/divan benches.

use critsec_versionlookup::{
    CacheKind, Engine, EngineConfig, LookupCache, RallyIds, Uid, VersionLookupError,
};

/// Which ids a lookup benchmark asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Ids in the newest segment: found after one seek.
    HitRecent,
    /// Ids in the oldest segment: every segment is visited.
    HitOld,
    /// Ids never indexed: every segment is visited and nothing is found.
    Miss,
}

impl Pattern {
    /// Accepted parameter values.
    pub const IDS: [&'static str; 3] = ["hit-recent", "hit-old", "miss"];

    /// Parses a parameter value.
    pub fn parse(s: &str) -> Option<Pattern> {
        match s {
            "hit-recent" => Some(Pattern::HitRecent),
            "hit-old" => Some(Pattern::HitOld),
            "miss" => Some(Pattern::Miss),
            _ => None,
        }
    }
}

/// An engine with `segments` segments of `per_segment` Rally-style ids, and probe lists.
pub struct LookupIndex {
    /// The engine, refreshed, with an empty version map.
    pub engine: Engine,
    /// The id generator whose first `segments * per_segment` ids are indexed.
    pub ids: RallyIds,
    /// Documents per segment.
    pub per_segment: u64,
    /// Number of segments.
    pub segments: u64,
}

/// The version given to the id at `position` when loading: varied, so that sums check something.
pub fn loaded_version(position: u64) -> u64 {
    1 + position % 7
}

impl LookupIndex {
    /// Builds the index in RAM.
    pub fn build(
        kind: CacheKind,
        segments: u64,
        per_segment: u64,
    ) -> Result<Self, VersionLookupError> {
        Self::build_with(kind.build(), segments, per_segment)
    }

    /// [`Self::build`] over any cache (the tests' deliberately broken ones, `mutants.rs`).
    pub fn build_with(
        cache: Box<dyn LookupCache>,
        segments: u64,
        per_segment: u64,
    ) -> Result<Self, VersionLookupError> {
        let engine = Engine::open(EngineConfig::default(), cache)?;
        let ids = RallyIds::new(0, 0.0, 0.0, 19_856);
        let total = segments * per_segment;
        let strings: Vec<String> = (0..total).map(|p| ids.id_at(p)).collect();
        engine.bulk_load(
            strings
                .iter()
                .enumerate()
                .map(|(p, s)| (s.as_str(), loaded_version(p as u64))),
            per_segment as usize,
        )?;
        Ok(LookupIndex {
            engine,
            ids,
            per_segment,
            segments,
        })
    }

    /// `n` encoded ids of `pattern` with their expected versions (0 = absent).
    pub fn probes(&self, pattern: Pattern, n: u64) -> Vec<(Vec<u8>, u64)> {
        let total = self.segments * self.per_segment;
        (0..n)
            .map(|i| {
                let position = match pattern {
                    Pattern::HitRecent => total - self.per_segment + i % self.per_segment,
                    Pattern::HitOld => i % self.per_segment,
                    Pattern::Miss => total + i,
                };
                let uid = Uid::encode_id(&self.ids.id_at(position)).unwrap_or_default();
                let expected = if position < total {
                    loaded_version(position)
                } else {
                    0
                };
                (uid, expected)
            })
            .collect()
    }
}
