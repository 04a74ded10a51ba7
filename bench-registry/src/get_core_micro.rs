//! `registry/get_core_micro`: the SOLR-16497 reviewer's JMH benchmark, get + open of a random core.
//!
//! stillalex's `SolrCoresBenchTest` (PR #1155 thread, 2022-12-16): 10 real cores, `Threads.MAX`,
//! each op `getCoreFromAnyList("core" + random.nextInt(10), incRefCount = true)` and nothing else.
//!
//! His shape is the default, each detail a parameter so its effect can be measured:
//! - `close = no`: he never closed (teardown drained the counts), so after a thread's first op the
//!   logging-context depth never returns to 0 and `setCore` does no puts, only the depth bump (and,
//!   past 127, a new boxed `Integer` per op). `close = yes` closes each handle: one decrement and
//!   `MDCLoggingContext.clear()` outside any lock, the same in every strategy, plus the puts of
//!   the next open.
//! - `rng = shared`: his `SplittableRandom` was `Scope.Benchmark` state, shared by all threads and
//!   unsynchronised: a racy read-add-write of one seed word (relaxed loads and stores, no RMW),
//!   a contended line of its own. `per-thread` gives each thread its own generator.
//! - `mode = standalone`: no ZooKeeper and no cloud descriptor, so an outermost open puts only the
//!   core name. `cloud` puts Solr's five keys.
//! - `mdc = log4j2` (Solr's copy-on-write `ThreadContext`) or `cheap`; `mdc_puts` overrides the
//!   mode's put count (`solr` = the mode's own), for the crossover sweep.
//!
//! `verify` checks what the shape allows: with closes every count is back at 1; without, every
//! core's count is 1 plus the opens the workers made of it, summed.

use crate::registry_setup::{self, RegistrySetup, SolrMode};
use critsec_harness::{
    CheckFailed, Choice, GroupSpec, Iterations, ParamSpec, Params, Probe, Scenario, ScenarioError,
    Trial, Worker, WorkerSource,
};
use critsec_registry::{CoreRegistry, Mdc};
use std::sync::atomic::{AtomicU64, Ordering};

/// `java.util.SplittableRandom`'s golden gamma.
pub(crate) const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// `SplittableRandom.mix64`.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `nextInt(bound)` from a 64-bit draw (multiply-shift, uniform enough for picking a core).
pub(crate) fn bounded(draw: u64, bound: usize) -> usize {
    (((draw >> 32) * bound as u64) >> 32) as usize
}

/// A `SplittableRandom` seed word: `nextSeed()` is `seed += GOLDEN_GAMMA`, a plain field read and
/// write. Shared by all threads it is a racy read-add-write of one word, as in the reviewer's
/// benchmark: relaxed load and store, no read-modify-write, lost updates allowed.
struct SeedWord(AtomicU64);

impl SeedWord {
    #[inline]
    fn next_int(&self, bound: usize) -> usize {
        let s = self.0.load(Ordering::Relaxed).wrapping_add(GOLDEN_GAMMA);
        self.0.store(s, Ordering::Relaxed);
        bounded(mix64(s), bound)
    }
}

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
            registry_setup::strategy_param(),
            ParamSpec::free("cores", &["10"], "number of loaded cores"),
            ParamSpec::choices(
                "close",
                &[false],
                "close each handle (yes) or never, as the reviewer (no)",
            ),
            ParamSpec::choices(
                "rng",
                &[Rng::Shared],
                "one racy SplittableRandom for all threads (shared, the reviewer's) or one each",
            ),
            registry_setup::mode_param(SolrMode::Standalone),
            registry_setup::mdc_param("log4j2"),
            registry_setup::mdc_puts_param("solr"),
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
        let setup = RegistrySetup::from_params(params)?;
        let close = params.choice("close")?;
        let shared_rng = params.choice::<Rng>("rng")? == Rng::Shared;
        let (registry, names) = registry_setup::build(setup)?;
        Ok(Box::new(MicroTrial {
            registry,
            names,
            close,
            shared_seed: shared_rng.then(|| SeedWord(AtomicU64::new(0x5017_16497))),
            probe: registry_setup::lock_probe(),
            verified_ops: AtomicU64::new(0),
        }))
    }
}

/// Where the threads draw core names from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rng {
    /// One racy `SplittableRandom` for all threads, as the reviewer's benchmark.
    Shared,
    /// One generator per thread.
    PerThread,
}

impl Choice for Rng {
    const ALL: &'static [Self] = &[Rng::Shared, Rng::PerThread];
    fn id(self) -> &'static str {
        match self {
            Rng::Shared => "shared",
            Rng::PerThread => "per-thread",
        }
    }
}

struct MicroTrial {
    registry: Box<dyn CoreRegistry>,
    names: Vec<String>,
    /// Whether each op closes its handle.
    close: bool,
    /// The reviewer's shared generator, if `rng = shared`.
    shared_seed: Option<SeedWord>,
    probe: critsec_harness::LockWaitProbe,
    /// Ops whose core was checked, summed from the workers' checks.
    verified_ops: AtomicU64,
}

impl Trial for MicroTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        let ops = self.verified_ops.load(Ordering::Relaxed);
        if self.close {
            let summary = registry_setup::verify(&*self.registry, self.names.len(), &[])?;
            return Ok(format!("{summary}, {ops} ops verified"));
        }
        // Never closed: each op left one reference, so the counts above 1 add up to the ops.
        let mut held = 0i64;
        for name in &self.names {
            let core = self
                .registry
                .get_loaded_core_without_increment(name)
                .ok_or_else(|| format!("{name} vanished"))?;
            if core.closes_run() != 0 || core.over_closes() != 0 {
                return Err(format!("{name} was closed though no op closes").into());
            }
            held += core.ref_count() - 1;
        }
        if held != ops as i64 {
            return Err(format!(
                "{held} references held beyond the registry's, but {ops} ops opened one each"
            )
            .into());
        }
        Ok(format!(
            "{} cores hold the {ops} unclosed references of {ops} ops verified",
            self.names.len()
        ))
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }

    fn probe(&self) -> Option<&dyn Probe> {
        Some(&self.probe)
    }
}

impl WorkerSource for MicroTrial {
    fn worker(&self, _group: &str, index: usize) -> Box<dyn Worker + '_> {
        Box::new(MicroWorker {
            trial: self,
            seed: SeedWord(AtomicU64::new(mix64(0x5017_16497 ^ index as u64))),
            ops: 0,
            mismatches: 0,
        })
    }
}

struct MicroWorker<'a> {
    trial: &'a MicroTrial,
    /// This thread's own generator (used when `rng = per-thread`).
    seed: SeedWord,
    ops: u64,
    mismatches: u64,
}

impl Worker for MicroWorker<'_> {
    fn op(&mut self) -> u64 {
        let t = self.trial;
        let seed = t.shared_seed.as_ref().unwrap_or(&self.seed);
        let name = &t.names[seed.next_int(t.names.len())];
        self.ops += 1;
        match t.registry.get_core(name) {
            Ok(Some(handle)) if handle.name() == name => {
                let id = handle.id().0;
                if !t.close {
                    // The reviewer's op: the reference stays taken (`verify` counts it).
                    std::mem::forget(handle);
                }
                id
            }
            _ => {
                self.mismatches += 1;
                0
            }
        }
    }

    fn check(&mut self) -> Result<(), CheckFailed> {
        if self.trial.close {
            crate::check_thread_balanced()?;
        }
        if self.mismatches > 0 {
            return Err(format!(
                "{} of {} get_core calls returned the wrong core",
                self.mismatches, self.ops
            )
            .into());
        }
        self.trial
            .verified_ops
            .fetch_add(std::mem::take(&mut self.ops), Ordering::Relaxed);
        Ok(())
    }
}

impl Drop for MicroWorker<'_> {
    fn drop(&mut self) {
        if !self.trial.close {
            // The reviewer's threads ended with a deep context; ours may run another trial.
            Mdc::reset_thread();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_registry::RegistryKind;
    use critsec_sync::kind::ids;

    fn params<'a>(strategy: &'a str, shape: [(&'a str, &'a str); 5]) -> Params {
        let mut pairs = vec![("strategy", strategy), ("cores", "10")];
        pairs.extend(shape);
        Params::from_pairs(pairs)
    }

    const REVIEWER: [(&str, &str); 5] = [
        ("close", "no"),
        ("rng", "shared"),
        ("mode", "standalone"),
        ("mdc", "log4j2"),
        ("mdc_puts", "solr"),
    ];
    const REQUEST: [(&str, &str); 5] = [
        ("close", "yes"),
        ("rng", "per-thread"),
        ("mode", "cloud"),
        ("mdc", "log4j2"),
        ("mdc_puts", "solr"),
    ];

    #[test]
    fn every_strategy_runs_and_verifies_in_both_shapes() {
        for (strategy, shape) in ids::<RegistryKind>()
            .into_iter()
            .flat_map(|s| [(s, REVIEWER), (s, REQUEST)])
        {
            let params = params(strategy, shape);
            let groups = GetCoreMicro.groups(&params, 2);
            let trial = GetCoreMicro.setup(&params, &groups).unwrap();
            trial.verify().unwrap();
            let mut seen = std::collections::HashSet::new();
            std::thread::scope(|s| {
                let workers: Vec<_> = (0..2)
                    .map(|i| {
                        let trial = &trial;
                        s.spawn(move || {
                            let mut w = trial.expect_workers().worker("op", i);
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
            drop(trial);
        }
    }

    #[test]
    fn bad_parameters_are_reported() {
        let e = GetCoreMicro
            .setup(&params("spinlock", REVIEWER), &[])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("spinlock") && e.contains("snapshot"), "{e}");
        let mut bad = REVIEWER;
        bad[0] = ("close", "maybe");
        let e = GetCoreMicro
            .setup(&params("mutex", bad), &[])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("maybe") && e.contains("yes, no"), "{e}");
    }

    #[test]
    fn a_shared_seed_loses_no_draw_on_one_thread_and_draws_every_core() {
        let seed = SeedWord(AtomicU64::new(1));
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[seed.next_int(10)] += 1;
        }
        assert_eq!(
            seed.0.load(Ordering::Relaxed),
            1u64.wrapping_add(GOLDEN_GAMMA.wrapping_mul(10_000))
        );
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
    }
}
