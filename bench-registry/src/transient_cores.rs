//! `registry/transient_cores`: requests to more transient cores than the transient cache holds.
//!
//! Solr's transient cores (`transient=true` in `core.properties`, `transientCacheSize` in
//! `solr.xml`; `TransientSolrCores` over `TransientSolrCoreCacheDefault` in 9.x): only `cache`
//! of the `cores` registered cores stay loaded. Each op asks for a uniformly random one of them
//! and closes it, so a request often misses the cache and loads its core, the load evicts
//! another (closed, or kept if still in use: re-inserted by Solr, moved to the overflow by
//! PR #1155), and a request for a kept core re-admits it: loads, evictions and re-inserts are
//! on the hot path, with the registry's write side (the load path) taken by many requests.
//! Where eviction runs is the strategy's: inline under the monitor (`mutex`) or the writer lock
//! (`snapshot`), on a maintenance thread for the read-write strategies.
//!
//! `verify` (after the registry's pending maintenance): every loaded core is at the registry's
//! own reference and never closed, at most `cache` are loaded, and every other core ever created
//! closed exactly once (created = closed + loaded, no over-close); the workers check that every
//! request got an open core of the name it asked for.

use crate::get_core_micro::{GOLDEN_GAMMA, bounded, mix64};
use crate::registry_setup::{self, RegistrySetup, SolrMode};
use critsec_harness::{
    CheckFailed, GroupSpec, Iterations, ParamSpec, Params, Probe, Scenario, ScenarioError, Trial,
    Worker, WorkerSource,
};
use critsec_registry::CoreRegistry;
use std::sync::atomic::{AtomicU64, Ordering};

/// The transient-cores scenario.
pub struct TransientCores;

impl Scenario for TransientCores {
    fn name(&self) -> &'static str {
        "registry/transient_cores"
    }

    fn description(&self) -> &'static str {
        "get_core + close of a uniformly random one of `cores` transient cores with a transient \
         cache of `cache`: misses load, loads evict, evicted cores still in use are kept and \
         re-admitted. Verifies every request's core and that no core leaks or closes twice."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            registry_setup::strategy_param(),
            ParamSpec::free("cores", &["20"], "number of registered transient cores"),
            ParamSpec::free(
                "cache",
                &["8"],
                "transient cache size (Solr's transientCacheSize), at least 1",
            ),
            registry_setup::mode_param(SolrMode::Cloud),
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
        let cache: usize = params.parse_in("cache", 1..)?;
        let registry = build(setup, cache)?;
        Ok(Box::new(TransientTrial {
            names: (0..setup.cores).map(name).collect(),
            registry,
            cache,
            probe: registry_setup::lock_probe(),
            verified_ops: AtomicU64::new(0),
        }))
    }
}

fn name(i: usize) -> String {
    format!("transient{i}")
}

/// A registry of `setup.kind` with a transient cache of `cache` and `setup.cores` registered,
/// unloaded transient cores, deployed as `setup.mode` says.
fn build(setup: RegistrySetup, cache: usize) -> Result<Box<dyn CoreRegistry>, ScenarioError> {
    let mut config = registry_setup::config(setup)?;
    config.transient_cache_size = cache;
    let registry = setup.kind.build(config);
    for i in 0..setup.cores {
        registry
            .add_core_descriptor(
                registry_setup::descriptor(setup.mode, i, &name(i)).into_transient(),
            )
            .map_err(|e| ScenarioError::Setup(e.to_string()))?;
    }
    Ok(registry)
}

struct TransientTrial {
    registry: Box<dyn CoreRegistry>,
    names: Vec<String>,
    cache: usize,
    probe: critsec_harness::LockWaitProbe,
    /// Ops whose core was checked, summed from the workers' checks.
    verified_ops: AtomicU64,
}

impl Trial for TransientTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        let r = &*self.registry;
        r.clean_up_transient();
        let loaded = r.loaded_names();
        if loaded.len() > self.cache {
            return Err(format!(
                "{} transient cores loaded with no request running, the cache holds {}",
                loaded.len(),
                self.cache
            )
            .into());
        }
        registry_setup::check_at_rest(r, &loaded)?;
        let created = r.container().cores_created();
        let tally = r.container().close_tally();
        let (closed, over) = (tally.closed(), tally.over_closed());
        if over != 0 {
            return Err(format!("{over} closes found a core already closed").into());
        }
        if created != closed + loaded.len() as u64 {
            return Err(format!(
                "{created} cores created, {closed} closed and {} loaded: {} leaked",
                loaded.len(),
                created as i64 - closed as i64 - loaded.len() as i64
            )
            .into());
        }
        let ops = self.verified_ops.load(Ordering::Relaxed);
        Ok(format!(
            "{created} loads, {closed} evicted cores closed exactly once, {} loaded at refcount 1, \
             {ops} ops verified",
            loaded.len()
        ))
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }

    fn probe(&self) -> Option<&dyn Probe> {
        Some(&self.probe)
    }
}

impl WorkerSource for TransientTrial {
    fn worker(&self, _group: &str, index: usize) -> Box<dyn Worker + '_> {
        Box::new(TransientWorker {
            trial: self,
            seed: mix64(0x7_4a45_1e47 ^ index as u64),
            ops: 0,
            mismatches: 0,
        })
    }
}

struct TransientWorker<'a> {
    trial: &'a TransientTrial,
    /// This thread's `SplittableRandom` seed.
    seed: u64,
    ops: u64,
    mismatches: u64,
}

impl Worker for TransientWorker<'_> {
    fn op(&mut self) -> u64 {
        let t = self.trial;
        self.seed = self.seed.wrapping_add(GOLDEN_GAMMA);
        let name = &t.names[bounded(mix64(self.seed), t.names.len())];
        self.ops += 1;
        match t.registry.get_core(name) {
            Ok(Some(h)) if h.name() == name && h.closes_run() == 0 && !h.is_closed() => h.id().0,
            _ => {
                self.mismatches += 1;
                0
            }
        }
    }

    fn check(&mut self) -> Result<(), CheckFailed> {
        crate::check_thread_balanced()?;
        if self.mismatches > 0 {
            return Err(format!(
                "{} of {} get_core calls returned no core, another core or a closed one",
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

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_registry::RegistryKind;
    use critsec_sync::kind::ids;

    fn params(strategy: &str) -> Params {
        Params::from_pairs(vec![
            ("strategy", strategy),
            ("cores", "12"),
            ("cache", "4"),
            ("mode", "cloud"),
            ("mdc", "log4j2"),
            ("mdc_puts", "solr"),
        ])
    }

    #[test]
    fn every_strategy_loads_evicts_and_verifies() {
        for strategy in ids::<RegistryKind>() {
            let params = params(strategy);
            let groups = TransientCores.groups(&params, 2);
            let trial = TransientCores.setup(&params, &groups).unwrap();
            trial.verify().unwrap();
            std::thread::scope(|s| {
                for i in 0..2 {
                    let trial = &trial;
                    s.spawn(move || {
                        let mut w = trial.expect_workers().worker("op", i);
                        for _ in 0..2000 {
                            assert_ne!(w.op(), 0, "{strategy}: a request failed");
                        }
                        w.check().unwrap();
                    });
                }
            });
            let summary = trial.verify().unwrap();
            assert!(summary.contains("4000 ops verified"), "{summary}");
            let loads: u64 = summary.split(' ').next().unwrap().parse().unwrap();
            assert!(loads > 12, "{strategy}: no evictions: {summary}");
        }
    }

    #[test]
    fn a_cache_of_zero_is_refused() {
        let mut pairs = vec![("strategy", "mutex"), ("cores", "12"), ("cache", "0")];
        pairs.extend([("mode", "cloud"), ("mdc", "log4j2"), ("mdc_puts", "solr")]);
        let e = TransientCores
            .setup(&Params::from_pairs(pairs), &[])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cache"), "{e}");
    }
}
