//! `registry/get_core_micro`: the SOLR-16497 reviewer's JMH benchmark, get + open of a random core.
//!
//! stillalex's `SolrCoresBenchTest` (PR #1155 thread, 2022-12-16): 10 real cores, `Threads.MAX`,
//! each op `getCoreFromAnyList("core" + random.nextInt(10), incRefCount = true)` and nothing else.
//!
//! Deviations, each keeping the work inside the critical section the same:
//! - Our op also closes the handle. stillalex never closed (teardown drained the counts); closing
//!   keeps counts bounded so `verify` can check them after every run. The close is one decrement
//!   outside any lock, the same in every strategy.
//! - No logging-context puts (`mdc_puts = 0`): his cores had no cloud descriptor and no ZooKeeper,
//!   so `setCore` put only the core name, and only on a thread's first op, since without closes
//!   the call depth never returned to 0. Each op keeps the depth bump of `MDCLoggingContext`.
//! - One random generator per thread instead of his shared `SplittableRandom`, which would add a
//!   contended cache line that is not part of the registry.

use crate::fixture;
use critsec_core::kind::ids;
use critsec_core::registry::{CoreRegistry, RegistryKind};
use critsec_harness::{
    GroupSpec, ParamSpec, Params, Probe, Scenario, ScenarioError, Trial, Worker,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};

/// The micro-benchmark scenario.
pub struct GetCoreMicro;

impl Scenario for GetCoreMicro {
    fn name(&self) -> &'static str {
        "registry/get_core_micro"
    }

    fn description(&self) -> &'static str {
        "get_core of a uniformly random core out of `cores`, verify it is the one asked for, close \
         it. Inside the critical section (mutex, rwlock) or the snapshot read (snapshot): a hash \
         lookup, the refcount increment and the logging-context depth bump; no MDC puts."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::choice(
                "strategy",
                &ids::<RegistryKind>(),
                &ids::<RegistryKind>(),
                "registry strategy",
            ),
            ParamSpec::free("cores", &["10"], "number of loaded cores"),
        ]
    }

    fn default_threads(&self) -> Vec<String> {
        vec!["max".to_string()]
    }

    fn setup(
        &self,
        params: &Params,
        _groups: &[GroupSpec],
    ) -> Result<Box<dyn Trial>, ScenarioError> {
        let kind: RegistryKind = params.parse("strategy")?;
        let cores: usize = params.parse_in("cores", 1..)?;
        let (registry, names) = fixture::build(kind, cores, 0)?;
        Ok(Box::new(MicroTrial {
            registry,
            names,
            probe: fixture::lock_probe(),
            verified_ops: AtomicU64::new(0),
        }))
    }
}

struct MicroTrial {
    registry: Box<dyn CoreRegistry>,
    names: Vec<String>,
    probe: critsec_harness::LockWaitProbe,
    /// Ops whose core was checked, summed from the workers' checks.
    verified_ops: AtomicU64,
}

impl Trial for MicroTrial {
    fn verify(&self) -> Result<String, String> {
        let summary = fixture::verify(&*self.registry, self.names.len(), &[])?;
        Ok(format!(
            "{summary}, {} ops verified",
            self.verified_ops.load(Ordering::Relaxed)
        ))
    }

    fn worker(&self, _group: &str, index: usize) -> Box<dyn Worker + '_> {
        Box::new(MicroWorker {
            trial: self,
            rng: SmallRng::seed_from_u64(0x5017_16497 ^ index as u64),
            ops: 0,
            mismatches: 0,
        })
    }

    fn probe(&self) -> Option<&dyn Probe> {
        Some(&self.probe)
    }
}

struct MicroWorker<'a> {
    trial: &'a MicroTrial,
    rng: SmallRng,
    ops: u64,
    mismatches: u64,
}

impl Worker for MicroWorker<'_> {
    fn op(&mut self) -> u64 {
        let name = &self.trial.names[self.rng.random_range(0..self.trial.names.len())];
        self.ops += 1;
        match self.trial.registry.get_core(name) {
            Ok(Some(handle)) if handle.name() == name => handle.id().0,
            _ => {
                self.mismatches += 1;
                0
            }
        }
    }

    fn check(&mut self) -> Result<(), String> {
        crate::check_thread_balanced()?;
        if self.mismatches > 0 {
            return Err(format!(
                "{} of {} get_core calls returned the wrong core",
                self.mismatches, self.ops
            ));
        }
        self.trial
            .verified_ops
            .fetch_add(std::mem::take(&mut self.ops), Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_runs_and_verifies() {
        for strategy in ids::<RegistryKind>() {
            let params = Params::from_pairs([("strategy", strategy), ("cores", "10")]);
            let groups = GetCoreMicro.groups(&params, 2);
            let trial = GetCoreMicro.setup(&params, &groups).unwrap();
            trial.verify().unwrap();
            let mut seen = std::collections::HashSet::new();
            std::thread::scope(|s| {
                let workers: Vec<_> = (0..2)
                    .map(|i| {
                        let trial = &trial;
                        s.spawn(move || {
                            let mut w = trial.worker("op", i);
                            let ids: Vec<u64> = (0..500).map(|_| w.op()).collect();
                            w.check().unwrap();
                            ids
                        })
                    })
                    .collect();
                for w in workers {
                    seen.extend(w.join().unwrap());
                }
            });
            assert_eq!(seen.len(), 10, "{strategy}: ops should reach every core");
            let summary = trial.verify().unwrap();
            assert!(summary.contains("1000 ops verified"), "{summary}");
        }
    }

    #[test]
    fn bad_parameters_are_reported() {
        let params = Params::from_pairs([("strategy", "spinlock"), ("cores", "10")]);
        let e = GetCoreMicro.setup(&params, &[]).err().unwrap().to_string();
        assert!(e.contains("spinlock") && e.contains("snapshot"), "{e}");
        let params = Params::from_pairs([("strategy", "mutex"), ("cores", "0")]);
        let e = GetCoreMicro.setup(&params, &[]).err().unwrap().to_string();
        assert!(e.contains("`cores`") && e.contains("1.."), "{e}");
    }
}
