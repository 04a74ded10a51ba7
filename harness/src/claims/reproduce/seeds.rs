//! Replicates that are seeds of deterministic simulations: each arm runs once per seed in one
//! trial ([`crate::claims::measure::run_seeds`]), two arms at a time (a simulation's result does
//! not depend on what else runs; one with worker threads of its own gets its share of the
//! cores, [`Scenario::fit_cores`](crate::Scenario::fit_cores)), and only the arms of claims still undecided run on to the
//! next look. An arm whose scenario starts at its `seed` parameter runs only the seeds it has
//! not run yet (the earlier ones would reproduce exactly); one without reruns from the first.
//! A failed arm fails only the claims measured with it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::claims::measure::{SeededRun, run_seeds};
use crate::run::result::TrialSpec;
use crate::run::runner::{Launcher, interrupted};
use crate::run::settings::available_cores;

use super::PairObserver;
use super::derive::{Costs, Observed, Paired, metric_of};
use super::looks::{ReplicateSource, Verified};
use super::outcome::ReplicateKind;
use super::plan::label;

type Seeded = Result<SeededRun, String>;

/// A seeded group's arms so far.
pub(crate) struct Seeds<'a> {
    launcher: &'a Launcher,
    forked: bool,
    /// The group's arms.
    specs: Vec<TrialSpec>,
    /// Each member's baseline and contender, as indices into `specs`.
    claim_arms: Vec<(usize, usize)>,
    /// The members' ids, for progress.
    ids: Vec<String>,
    /// Each arm's run, once it ran (an error, if it failed).
    results: Vec<Option<Seeded>>,
    /// The seeds of the current look.
    seeds: u32,
}

impl<'a> Seeds<'a> {
    /// No seeds run yet of `specs`, measured for claims on `claim_arms`.
    pub fn new(
        launcher: &'a Launcher,
        forked: bool,
        specs: Vec<TrialSpec>,
        claim_arms: Vec<(usize, usize)>,
        ids: Vec<String>,
    ) -> Self {
        Seeds {
            launcher,
            forked,
            results: specs.iter().map(|_| None).collect(),
            specs,
            claim_arms,
            ids,
            seeds: 0,
        }
    }

    /// The runs of `member`'s arms, when both have every seed of this look.
    fn runs(&self, member: usize) -> Result<(&SeededRun, &SeededRun), String> {
        let (a, b) = self.claim_arms[member];
        let complete = |r: &SeededRun| r.iterations.len() >= self.seeds as usize;
        match (&self.results[a], &self.results[b]) {
            (Some(Ok(ra)), Some(Ok(rb))) if complete(ra) && complete(rb) => Ok((ra, rb)),
            (Some(Err(e)), _) => Err(format!("{}: {e}", label(&self.specs[a]))),
            (_, Some(Err(e))) => Err(format!("{}: {e}", label(&self.specs[b]))),
            // Not run to this look's seeds: the run was interrupted before it got to the arm.
            _ => Err("interrupted".into()),
        }
    }
}

impl ReplicateSource for Seeds<'_> {
    fn kind(&self) -> ReplicateKind {
        ReplicateKind::Seed
    }

    /// Runs the arms of the `undecided` claims to `n` seeds on two workers that take arms from
    /// one queue, so neither waits for the other's slow arm; this thread collects their results
    /// and reports progress. Never fails the group: an arm's failure is its claims'.
    fn measure(
        &mut self,
        n: u32,
        undecided: &[usize],
        observer: &mut dyn PairObserver,
    ) -> Result<(), String> {
        self.seeds = n;
        let mut to_run: Vec<usize> = Vec::new();
        for &m in undecided {
            let (a, b) = self.claim_arms[m];
            for x in [a, b] {
                if !to_run.contains(&x) {
                    to_run.push(x);
                }
            }
        }
        // What the last look measured of each arm, for the runs that continue it.
        let earlier: Vec<Option<SeededRun>> = self
            .results
            .iter()
            .map(|r| r.as_ref().and_then(|r| r.as_ref().ok()).cloned())
            .collect();
        // Two arms side by side on one core each, or a last arm alone with every core.
        let workers = available_cores().min(to_run.len()).clamp(1, 2);
        let cores = (available_cores() / workers).max(1);
        let catalog = self.launcher.catalog();
        let fitted: Vec<TrialSpec> = self
            .specs
            .iter()
            .map(|spec| {
                let mut spec = spec.clone();
                if let Some(s) = catalog.find(&spec.scenario) {
                    s.fit_cores(&mut spec.params, cores);
                }
                spec
            })
            .collect();
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<(usize, Seeded)>();
        let (launcher, forked, specs) = (self.launcher, self.forked, &fitted);
        let results = &mut self.results;
        let ids = &self.ids;
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let tx = tx.clone();
                let (next, to_run, earlier) = (&next, &to_run, &earlier);
                scope.spawn(move || {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= to_run.len() || interrupted() {
                            break;
                        }
                        let spec = &specs[to_run[k]];
                        let done = earlier[to_run[k]].as_ref().and_then(|d| {
                            continued(spec, d.iterations.len()).map(|rest| (d, rest))
                        });
                        let r = match done {
                            Some((d, rest)) => {
                                let more = n.saturating_sub(d.iterations.len() as u32);
                                run_seeds(launcher, &rest, more, forked).map(|r| d.followed_by(r))
                            }
                            None => run_seeds(launcher, spec, n, forked),
                        };
                        if tx.send((to_run[k], r)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut count = 0u32;
            for (arm, r) in rx {
                results[arm] = Some(r);
                count += 1;
                observer.replicate_done(ids, count, to_run.len() as u32);
            }
        });
        Ok(())
    }

    fn missing(&self, member: usize) -> Option<String> {
        self.runs(member).err()
    }

    /// One replicate per seed: one block, both arms' iteration of that seed.
    fn observe(
        &self,
        member: usize,
        metric: &str,
        exposure: Option<&str>,
    ) -> Result<Observed, String> {
        let (ra, rb) = self.runs(member)?;
        let seeds = self.seeds as usize;
        let mut unit = String::new();
        let mut replicates = Vec::with_capacity(seeds);
        for s in 0..seeds {
            let (baseline, u) = metric_of(metric, &ra.iterations[s])?;
            let (contender, _) = metric_of(metric, &rb.iterations[s])?;
            unit = u;
            replicates.push(Paired::unordered(Some(s as u64), baseline, contender));
        }
        let total = |run: &SeededRun, metric: &str| -> Result<f64, String> {
            let mut total = 0.0;
            for it in &run.iterations[..seeds] {
                total += metric_of(metric, it)?.0;
            }
            Ok(total)
        };
        Ok(Observed {
            replicates,
            unit,
            // Virtual time: a seed costs nothing worth balancing blocks against.
            costs: Costs {
                pair: 0.0,
                block: 0.0,
            },
            exposure: exposure.map(|e| [total(ra, e), total(rb, e)]),
        })
    }

    fn verified(&self, member: usize) -> Option<[Verified; 2]> {
        let (ra, rb) = self.runs(member).ok()?;
        let of = |r: &SeededRun| Verified {
            before: vec![r.checks.0.clone()],
            after: vec![r.checks.1.clone()],
        };
        Some([of(ra), of(rb)])
    }
}

/// `spec` from its `done`-th seed on, if its scenario starts at its `seed` parameter.
fn continued(spec: &TrialSpec, done: usize) -> Option<TrialSpec> {
    let first: u64 = spec.params.get("seed").ok()?.parse().ok()?;
    let mut rest = spec.clone();
    rest.params
        .0
        .insert("seed".into(), first.checked_add(done as u64)?.to_string());
    Some(rest)
}
