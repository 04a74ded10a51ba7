//! `registry/request_mix`: the production call mix from the SOLR-16497 thread, with a writer.
//!
//! debe's 20-minute flight recording of an otto.de node (PR #1155 thread): per request,
//! `CoreContainer.getCore(name)` 57%, `getRequestHandler(path)` 36% (no registry lock),
//! `SolrCores.getCoreDescriptor(name)` 12%, `getCore(name, id)` 9%. The shares add up to 114%
//! (some requests make several calls); each op here is one call, drawn with weight 57:36:12:9.
//! Every open runs `mdc_puts` logging-context puts (`mdc`: Solr's log4j2 copy-on-write context
//! by default, or the cheap one), inside the critical section where the strategy has one, and
//! every handle is closed at the end of its op (4 removes with log4j2, outside any lock).
//!
//! With `writer_interval_ms > 0` a `writer` group of one thread, every that many milliseconds,
//! alternately reloads a random core (new instance, the old one closes after its last handle)
//! and swaps a fixed pair (`core0`<->`core1`, `core2`<->`core3`, ...). Readers therefore accept a
//! core created under the requested name or under its pair partner's.

use crate::registry_setup::{self, RegistrySetup, SolrMode};
use critsec_harness::{
    CheckFailed, GroupSpec, Iterations, ParamSpec, Params, Probe, Scenario, ScenarioError, Trial,
    Worker, WorkerSource,
};
use critsec_registry::{CONTAINER_HANDLERS, Core, CoreId, CoreRegistry};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The call weights, in the recording's order: getCore, getRequestHandler, getCoreDescriptor,
/// getCore(name, id).
const WEIGHTS: [u32; 4] = [57, 36, 12, 9];

/// The index into [`WEIGHTS`] of the call that a draw `r` in `0..sum(WEIGHTS)` selects.
fn pick_call(r: u32) -> usize {
    let mut upper = 0;
    for (call, weight) in WEIGHTS.iter().enumerate() {
        upper += weight;
        if r < upper {
            return call;
        }
    }
    WEIGHTS.len() - 1
}

/// The production-mix scenario.
pub struct RequestMix;

impl Scenario for RequestMix {
    fn name(&self) -> &'static str {
        "registry/request_mix"
    }

    fn description(&self) -> &'static str {
        "One registry call per op with the production weights getCore 57, getRequestHandler 36, \
         getCoreDescriptor 12, getCore(name, id) 9; each open does `mdc_puts` logging-context puts \
         (inside the lock for mutex and rwlock) and the handle is closed at the end of the op. An \
         optional writer thread reloads or swaps a core every `writer_interval_ms`."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            registry_setup::strategy_param(),
            ParamSpec::free("cores", &["10"], "number of loaded cores"),
            registry_setup::mdc_puts_param("5"),
            registry_setup::mode_param(SolrMode::Cloud),
            registry_setup::mdc_param("log4j2"),
            ParamSpec::free(
                "writer_interval_ms",
                &["0", "10"],
                "writer period; 0 = no writer",
            ),
        ]
    }

    fn default_threads(&self) -> Vec<String> {
        ["1", "max", "4x", "64"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn groups(&self, params: &Params, threads: usize) -> Vec<GroupSpec> {
        let mut groups = vec![GroupSpec::new("op", threads)];
        if params
            .parse::<u64>("writer_interval_ms")
            .is_ok_and(|ms| ms > 0)
        {
            groups.push(GroupSpec::new("writer", 1));
        }
        groups
    }

    fn setup(
        &self,
        params: &Params,
        _groups: &[GroupSpec],
    ) -> Result<Box<dyn Trial>, ScenarioError> {
        let setup = RegistrySetup::from_params(params)?;
        let writer_ms: u64 = params.parse("writer_interval_ms")?;
        let (registry, names) = registry_setup::build(setup)?;
        Ok(Box::new(MixTrial {
            registry,
            names,
            writer: (writer_ms > 0).then(|| Duration::from_millis(writer_ms)),
            retired: Mutex::new(Vec::new()),
            probe: registry_setup::lock_probe(),
            verified_ops: AtomicU64::new(0),
            stale_ids: AtomicU64::new(0),
        }))
    }
}

struct MixTrial {
    registry: Box<dyn CoreRegistry>,
    names: Vec<String>,
    writer: Option<Duration>,
    /// Cores the writer replaced by reloads; `verify` checks each closed exactly once.
    retired: Mutex<Vec<Arc<Core>>>,
    probe: critsec_harness::LockWaitProbe,
    verified_ops: AtomicU64,
    /// `getCore(name, id)` calls that missed because a writer had replaced or moved the core.
    stale_ids: AtomicU64,
}

impl MixTrial {
    /// The index of the core that `swap` pairs with core `i` (itself for an odd last core).
    fn partner(&self, i: usize) -> usize {
        if i ^ 1 < self.names.len() { i ^ 1 } else { i }
    }

    /// Whether a core created as `created` may legitimately answer for `names[i]`.
    fn answers_for(&self, i: usize, created: &str) -> bool {
        created == self.names[i]
            || (self.writer.is_some() && created == self.names[self.partner(i)])
    }
}

impl Trial for MixTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        let retired = self
            .retired
            .lock()
            .map_err(|_| "a writer panicked".to_string())?;
        let summary = registry_setup::verify(&*self.registry, self.names.len(), &retired)?;
        Ok(format!(
            "{summary}, {} ops verified, {} id lookups outdated by the writer",
            self.verified_ops.load(Ordering::Relaxed),
            self.stale_ids.load(Ordering::Relaxed)
        ))
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }

    fn probe(&self) -> Option<&dyn Probe> {
        Some(&self.probe)
    }
}

impl WorkerSource for MixTrial {
    fn worker(&self, group: &str, index: usize) -> Box<dyn Worker + '_> {
        let rng = SmallRng::seed_from_u64(0x1155 ^ ((index as u64) << 8) ^ group.len() as u64);
        if group == "writer" {
            return Box::new(WriterWorker {
                trial: self,
                rng,
                turn: 0,
                errors: Vec::new(),
            });
        }
        let ids = self
            .names
            .iter()
            .map(|n| {
                self.registry
                    .get_loaded_core_without_increment(n)
                    .map_or(CoreId(0), |c| c.id())
            })
            .collect();
        Box::new(RequestWorker {
            trial: self,
            rng,
            ids,
            ops: 0,
            stale: 0,
            mismatches: Vec::new(),
        })
    }
}

struct RequestWorker<'a> {
    trial: &'a MixTrial,
    rng: SmallRng,
    /// The id last seen for each core, as a client would keep it for `getCore(name, id)`.
    ids: Vec<CoreId>,
    ops: u64,
    stale: u64,
    /// The first few wrong answers, for the error message.
    mismatches: Vec<String>,
}

impl RequestWorker<'_> {
    fn mismatch(&mut self, what: String) -> u64 {
        if self.mismatches.len() < 5 {
            self.mismatches.push(what);
        }
        0
    }
}

impl Worker for RequestWorker<'_> {
    fn op(&mut self) -> u64 {
        let t = self.trial;
        let i = self.rng.random_range(0..t.names.len());
        let name = &t.names[i];
        let call = pick_call(self.rng.random_range(0..WEIGHTS.iter().sum::<u32>()));
        self.ops += 1;
        match call {
            0 => match t.registry.get_core(name) {
                Ok(Some(h)) if t.answers_for(i, h.name()) => {
                    self.ids[i] = h.id();
                    h.id().0
                }
                other => self.mismatch(format!("get_core({name}) = {other:?}")),
            },
            1 => {
                let path = CONTAINER_HANDLERS[i % CONTAINER_HANDLERS.len()].path;
                match t.registry.get_request_handler(path) {
                    Some(h) if h.path == path => h.class.len() as u64,
                    other => self.mismatch(format!("get_request_handler({path}) = {other:?}")),
                }
            }
            2 => match t.registry.get_core_descriptor(name) {
                Some(d) if d.name == *name => d.instance_dir.len() as u64,
                other => self.mismatch(format!("get_core_descriptor({name}) = {other:?}")),
            },
            _ => match t.registry.get_core_with_id(name, self.ids[i]) {
                Ok(Some(h)) if h.id() == self.ids[i] && t.answers_for(i, h.name()) => h.id().0,
                Ok(None) if t.writer.is_some() => {
                    self.stale += 1;
                    0
                }
                other => self.mismatch(format!(
                    "get_core_with_id({name}, {}) = {other:?}",
                    self.ids[i]
                )),
            },
        }
    }

    fn check(&mut self) -> Result<(), CheckFailed> {
        crate::check_thread_balanced()?;
        if !self.mismatches.is_empty() {
            return Err(format!("wrong answers: {}", self.mismatches.join("; ")).into());
        }
        self.trial
            .verified_ops
            .fetch_add(std::mem::take(&mut self.ops), Ordering::Relaxed);
        self.trial
            .stale_ids
            .fetch_add(std::mem::take(&mut self.stale), Ordering::Relaxed);
        Ok(())
    }
}

struct WriterWorker<'a> {
    trial: &'a MixTrial,
    rng: SmallRng,
    turn: u64,
    errors: Vec<String>,
}

impl Worker for WriterWorker<'_> {
    fn op(&mut self) -> u64 {
        let t = self.trial;
        std::thread::sleep(t.writer.unwrap_or_default());
        self.turn += 1;
        let i = self.rng.random_range(0..t.names.len());
        let result = if self.turn % 2 == 1 {
            let old = t.registry.get_loaded_core_without_increment(&t.names[i]);
            let r = t.registry.reload(&t.names[i]).map(|id| id.0);
            if let (Ok(_), Some(old), Ok(mut retired)) = (&r, old, t.retired.lock()) {
                retired.push(old);
            }
            r
        } else if t.partner(i) != i {
            t.registry
                .swap(&t.names[i], &t.names[t.partner(i)])
                .map(|()| 1)
        } else {
            Ok(0)
        };
        result.unwrap_or_else(|e| {
            if self.errors.len() < 5 {
                self.errors.push(e.to_string());
            }
            0
        })
    }

    fn check(&mut self) -> Result<(), CheckFailed> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(format!("writer failed: {}", self.errors.join("; ")).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_registry::RegistryKind;
    use critsec_sync::kind::ids;

    fn run(strategy: &str, writer_ms: &str) -> String {
        let params = Params::from_pairs([
            ("strategy", strategy),
            ("cores", "10"),
            ("mdc_puts", "5"),
            ("mode", "cloud"),
            ("mdc", "log4j2"),
            ("writer_interval_ms", writer_ms),
        ]);
        let groups = RequestMix.groups(&params, 2);
        let trial = RequestMix.setup(&params, &groups).unwrap();
        trial.verify().unwrap();
        std::thread::scope(|s| {
            for g in &groups {
                for i in 0..g.threads {
                    let (trial, name) = (&trial, g.name.as_str());
                    s.spawn(move || {
                        let mut w = trial.expect_workers().worker(name, i);
                        let n = if name == "writer" { 6 } else { 3000 };
                        for _ in 0..n {
                            std::hint::black_box(w.op());
                        }
                        w.check().unwrap();
                    });
                }
            }
        });
        trial.verify().unwrap()
    }

    #[test]
    fn every_strategy_runs_and_verifies_with_and_without_a_writer() {
        for strategy in ids::<RegistryKind>() {
            let quiet = run(strategy, "0");
            assert!(
                quiet.contains("6000 ops verified, 0 id lookups outdated"),
                "{quiet}"
            );
            let busy = run(strategy, "1");
            assert!(
                busy.contains("3 retired cores closed exactly once"),
                "{busy}"
            );
        }
    }

    #[test]
    fn calls_are_drawn_with_the_recorded_weights() {
        let counts = (0..114).fold([0u32; 4], |mut c, r| {
            c[pick_call(r)] += 1;
            c
        });
        assert_eq!(counts, WEIGHTS);
    }

    #[test]
    fn the_writer_group_appears_only_with_an_interval() {
        let p = |ms: &str| Params::from_pairs([("writer_interval_ms", ms)]);
        assert_eq!(RequestMix.groups(&p("0"), 4), [GroupSpec::new("op", 4)]);
        assert_eq!(
            RequestMix.groups(&p("10"), 4),
            [GroupSpec::new("op", 4), GroupSpec::new("writer", 1)]
        );
    }
}
