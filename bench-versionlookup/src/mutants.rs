//! Mutation test of the lookup scenario's checks: a cache that answers some ids with
//! a stale version (the one before the latest write) must fail `Trial::verify` and the workers'
//! `Worker::check`, for every strategy it wraps. A check that passes it checks nothing.

use critsec_harness::{GroupSpec, Params, Scenario};
use critsec_sync::kind::ids;
use critsec_versionlookup::{
    CacheKind, DocVersion, LookupCache, LookupStats, ReaderGeneration, VersionLookupError,
};

use crate::lookup::LookupScenario;

/// A real cache that answers every id whose encoded bytes end in a multiple of 4 with the
/// version before the one it found (absent for a first version), as a cache entry kept past a
/// refresh would.
struct StaleCache(Box<dyn LookupCache>);

impl LookupCache for StaleCache {
    fn id(&self) -> &'static str {
        self.0.id()
    }

    fn lookup(
        &self,
        reader: &ReaderGeneration,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        let found = self.0.lookup(reader, uid, stats)?;
        if uid.last().is_some_and(|b| b % 4 == 0) {
            return Ok(found.and_then(|d| {
                (d.version > 1).then_some(DocVersion {
                    version: d.version - 1,
                    ..d
                })
            }));
        }
        Ok(found)
    }

    fn on_refresh(&self, reader: &ReaderGeneration) -> Result<(), VersionLookupError> {
        self.0.on_refresh(reader)
    }

    fn cached_entries(&self) -> usize {
        self.0.cached_entries()
    }
}

#[test]
fn a_cache_returning_stale_versions_fails_verify_and_the_workers_check() {
    for strategy in ids::<CacheKind>() {
        let kind: CacheKind = strategy.parse().unwrap();
        let params = Params::from_pairs([
            ("strategy", strategy),
            ("segments", "4"),
            ("pattern", "hit-old"),
            ("docs_per_segment", "300"),
        ]);
        let groups = [GroupSpec::new("op", 1)];
        // The same trial over the real cache passes, so the failure below is the mutation's.
        let real = LookupScenario.setup(&params, &groups).unwrap();
        real.verify().unwrap();
        let trial = LookupScenario
            .setup_with(Box::new(StaleCache(kind.build())), &params, &groups)
            .unwrap();
        let e = trial.verify().unwrap_err();
        assert!(e.0.contains("expected"), "{strategy}: {e}");
        let mut w = trial.expect_workers().worker("op", 0);
        for _ in 0..200 {
            w.op();
        }
        let e = w.check().unwrap_err();
        assert!(e.0.contains("wrong versions"), "{strategy}: {e}");
    }
}
