//! `versionlookup/lookup`: version lookups only, against a prepared index.

use std::sync::Arc;

use critsec_harness::{
    CheckFailed, GroupSpec, Iterations, ParamSpec, Params, Probe, Scenario, ScenarioError, Trial,
    Worker, WorkerSource,
};
use critsec_sync::kind::ids;
use critsec_versionlookup::{CacheKind, LookupCache, LookupStats};

use crate::counters::{CountersProbe, Slots};
use crate::setup::{LookupIndex, Pattern};

const PROBES: u64 = 4096;

/// Lookups of one id pattern through one cache strategy.
pub struct LookupScenario;

struct LookupTrial {
    index: LookupIndex,
    probes: Vec<(Vec<u8>, u64)>,
    slots: Arc<Slots>,
    probe: CountersProbe,
}

struct LookupWorker<'a> {
    trial: &'a LookupTrial,
    slot: usize,
    next: usize,
    stats: LookupStats,
    mismatches: u64,
    errors: u64,
}

impl Scenario for LookupScenario {
    fn name(&self) -> &'static str {
        "versionlookup/lookup"
    }

    fn description(&self) -> &'static str {
        "Resolves Rally-style _id values to versions in a refreshed tantivy index with a chosen segment count, through the lookup cache alone (the live version map is empty). Per lookup: the strategy's map and thread-local gets, then a term seek per segment visited newest first, and a _version read on a hit. No lock is taken."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::choice(
                "strategy",
                &ids::<CacheKind>(),
                &ids::<CacheKind>(),
                "lookup cache strategy",
            ),
            ParamSpec::free("segments", &["1", "10", "30"], "segments in the index"),
            ParamSpec::choice(
                "pattern",
                &Pattern::IDS,
                &Pattern::IDS,
                "which ids are looked up",
            ),
            ParamSpec::free("docs_per_segment", &["10000"], "documents per segment"),
        ]
    }

    fn default_threads(&self) -> Vec<String> {
        vec!["1".to_string(), "max".to_string()]
    }

    fn setup(
        &self,
        params: &Params,
        groups: &[GroupSpec],
    ) -> Result<Box<dyn Trial>, ScenarioError> {
        let kind: CacheKind = params.parse("strategy")?;
        self.setup_with(kind.build(), params, groups)
    }
}

impl LookupScenario {
    /// [`Scenario::setup`] over any cache (the tests' deliberately broken ones, `mutants.rs`).
    pub(crate) fn setup_with(
        &self,
        cache: Box<dyn LookupCache>,
        params: &Params,
        groups: &[GroupSpec],
    ) -> Result<Box<dyn Trial>, ScenarioError> {
        let segments: u64 = params.parse_in("segments", 1..)?;
        let per_segment: u64 = params.parse_in("docs_per_segment", 1..)?;
        let pattern_raw = params.get("pattern")?;
        let pattern = Pattern::parse(pattern_raw).ok_or_else(|| {
            ScenarioError::bad(
                "pattern",
                pattern_raw,
                format!("valid: {}", Pattern::IDS.join(", ")),
            )
        })?;
        let index = LookupIndex::build_with(cache, segments, per_segment)
            .map_err(|e| ScenarioError::Setup(e.to_string()))?;
        let probes = index.probes(pattern, PROBES);
        let threads = groups.iter().map(|g| g.threads).sum::<usize>();
        let slots = Arc::new(Slots::new(threads));
        let probe = CountersProbe::new(
            Arc::clone(&slots),
            threads,
            "lookup",
            false,
            Box::new(Vec::new),
        );
        Ok(Box::new(LookupTrial {
            index,
            probes,
            slots,
            probe,
        }))
    }
}

impl Trial for LookupTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        let (mut found, mut sum) = (0u64, 0u64);
        let mut stats = LookupStats::default();
        for (uid, expected) in &self.probes {
            let got = self
                .index
                .engine
                .lookup_in_reader(uid, &mut stats)
                .map_err(|e| e.to_string())?;
            let v = got.map_or(0, |d| d.version);
            if v != *expected {
                return Err(format!("id {uid:02x?}: version {v}, expected {expected}").into());
            }
            found += u64::from(v != 0);
            sum += v;
        }
        let want: u64 = self.probes.iter().map(|p| p.1).sum();
        if sum != want {
            return Err(format!("version sum {sum}, expected {want}").into());
        }
        Ok(format!(
            "{found} of {} ids found, version sum {sum}, {} segments",
            self.probes.len(),
            self.index.engine.segment_count()
        ))
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }

    fn probe(&self) -> Option<&dyn Probe> {
        Some(&self.probe)
    }
}

impl WorkerSource for LookupTrial {
    fn worker(&self, _group: &str, index: usize) -> Box<dyn Worker + '_> {
        Box::new(LookupWorker {
            trial: self,
            slot: index,
            next: index * 997,
            stats: self.slots.load_stats(index),
            mismatches: 0,
            errors: 0,
        })
    }
}

impl Worker for LookupWorker<'_> {
    fn op(&mut self) -> u64 {
        let (uid, expected) = &self.trial.probes[self.next % self.trial.probes.len()];
        self.next = self.next.wrapping_add(1);
        let v = match self
            .trial
            .index
            .engine
            .lookup_in_reader(uid, &mut self.stats)
        {
            Ok(found) => found.map_or(0, |d| d.version),
            Err(_) => {
                self.errors += 1;
                u64::MAX
            }
        };
        self.mismatches += u64::from(v != *expected);
        self.trial.slots.store_stats(self.slot, &self.stats);
        v
    }

    fn check(&mut self) -> Result<(), CheckFailed> {
        if self.mismatches + self.errors > 0 {
            return Err(format!(
                "{} wrong versions, {} lookup errors",
                self.mismatches, self.errors
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_and_pattern_verifies_and_counts() {
        for strategy in ids::<CacheKind>() {
            for pattern in Pattern::IDS {
                let params = Params::from_pairs([
                    ("strategy", strategy),
                    ("segments", "4"),
                    ("pattern", pattern),
                    ("docs_per_segment", "300"),
                ]);
                let trial = LookupScenario
                    .setup(&params, &[GroupSpec::new("op", 2)])
                    .unwrap();
                trial.verify().unwrap();
                let probe = trial.probe().unwrap();
                probe.reset();
                let mut workers: Vec<_> = (0..2)
                    .map(|i| trial.expect_workers().worker("op", i))
                    .collect();
                for w in &mut workers {
                    for _ in 0..50 {
                        w.op();
                    }
                    w.check().unwrap();
                }
                let m = probe.read(critsec_harness::Window { nanos: 1, ops: 100 });
                let get = |n: &str| m.iter().find(|x| x.name == n).unwrap().value;
                let per_segment_expected = match (strategy, pattern) {
                    ("per-segment", "hit-recent") => 1.0,
                    ("per-segment", _) => 4.0,
                    _ => 1.0,
                };
                assert_eq!(
                    get("map_gets_per_lookup"),
                    per_segment_expected,
                    "{strategy} {pattern}"
                );
                drop(workers);
                trial.verify().unwrap();
            }
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        let params = Params::from_pairs([
            ("strategy", "per-segment"),
            ("segments", "4"),
            ("pattern", "sometimes"),
            ("docs_per_segment", "10"),
        ]);
        let e = LookupScenario
            .setup(&params, &[GroupSpec::new("op", 1)])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("sometimes") && e.contains("hit-old"), "{e}");
        let params = Params::from_pairs([
            ("strategy", "per-segment"),
            ("segments", "0"),
            ("pattern", "miss"),
            ("docs_per_segment", "10"),
        ]);
        let e = LookupScenario
            .setup(&params, &[GroupSpec::new("op", 1)])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("`segments`") && e.contains("1.."), "{e}");
    }
}
