//! Replicates that are seeds of deterministic simulations: each arm runs once per seed
//! ([`super::measure::run_seeds`]), and only the arms of claims still undecided run on
//! to the next look. An arm whose scenario starts at its `seed` parameter runs only the seeds it
//! has not run yet (the earlier ones would reproduce exactly), each a trial of its own; one
//! without reruns from the first, in one trial. Two trials run at a time, the costliest arms'
//! first, so the two workers stay busy to the end of a look (a simulation's result does not
//! depend on what else runs; one with worker threads of its own gets its share of the cores,
//! [`Scenario::fit_cores`](crate::Scenario::fit_cores)). A failed arm fails only the claims
//! measured with it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use super::measure::{SeededRun, run_seeds};
use crate::run::result::TrialSpec;
use crate::run::runner::{Launcher, interrupted};
use crate::run::settings::available_cores;

use super::arms::label;
use super::looks::{GroupRun, PairObserver, ReplicateSource, Verified};
use super::observed::{Costs, Observed, Paired, metric_of};
use super::outcome::ReplicateKind;

type Seeded = Result<SeededRun, String>;

/// A seeded group's arms so far.
pub(crate) struct Seeds<'a> {
    launcher: &'a Launcher,
    run: GroupRun,
    /// The group's arms.
    specs: Vec<TrialSpec>,
    /// Each member's baseline and contender, as indices into `specs`.
    claim_arms: Vec<(usize, usize)>,
    /// Each arm's run, once it ran (an error, if it failed).
    results: Vec<Option<Seeded>>,
    /// The seeds of the current look.
    seeds: u32,
    /// Per arm, the wall seconds a seed took at the last look (to run the costliest first).
    seconds_per_seed: Vec<Option<f64>>,
}

impl<'a> Seeds<'a> {
    /// No seeds run yet of `specs`, measured for claims on `claim_arms`.
    pub fn new(
        launcher: &'a Launcher,
        specs: Vec<TrialSpec>,
        claim_arms: Vec<(usize, usize)>,
        run: GroupRun,
    ) -> Self {
        Seeds {
            launcher,
            run,
            results: specs.iter().map(|_| None).collect(),
            seconds_per_seed: specs.iter().map(|_| None).collect(),
            specs,
            claim_arms,
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

    /// Runs the arms of the `undecided` claims to `n` seeds on two workers that take trials
    /// (a seed each, where they can) from one queue, so neither waits for the other's slow arm; this thread collects their results
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
        let units = units(&self.specs, &self.seconds_per_seed, n, &to_run, &earlier);
        // Two units side by side on one core each, or a last one alone with every core.
        let workers = available_cores().min(units.len()).clamp(1, 2);
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
        let (tx, rx) = mpsc::channel::<(usize, Seeded, f64)>();
        let (launcher, forked, specs) = (self.launcher, self.run.settings.forked, &fitted);
        // Per arm, its units' runs by their first seed, until the last arrives.
        let mut parts: Vec<Vec<(u32, Seeded)>> = self.specs.iter().map(|_| Vec::new()).collect();
        let mut left: Vec<usize> = self.specs.iter().map(|_| 0).collect();
        for u in &units {
            left[u.arm] += 1;
        }
        let (results, seconds) = (&mut self.results, &mut self.seconds_per_seed);
        let ids = &self.run.ids;
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let tx = tx.clone();
                let (next, units) = (&next, &units);
                scope.spawn(move || {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= units.len() || interrupted() {
                            break;
                        }
                        let u = &units[k];
                        let spec = &specs[u.arm];
                        let started = Instant::now();
                        let r = match continued(spec, u.from as usize) {
                            Some(rest) if u.from > 0 => run_seeds(launcher, &rest, u.count, forked),
                            _ => run_seeds(launcher, spec, u.count, forked),
                        };
                        let per_seed = started.elapsed().as_secs_f64() / f64::from(u.count.max(1));
                        if tx.send((k, r, per_seed)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut count = 0u32;
            for (k, r, per_seed) in rx {
                let u = &units[k];
                seconds[u.arm] = Some(per_seed);
                parts[u.arm].push((u.from, r));
                left[u.arm] -= 1;
                if left[u.arm] == 0 {
                    results[u.arm] = Some(assemble(
                        earlier[u.arm].as_ref(),
                        std::mem::take(&mut parts[u.arm]),
                    ));
                    count += 1;
                    observer.replicate_done(ids, count, to_run.len() as u32);
                }
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

/// Seeds of one arm that one trial runs: `count` of them from its `from`-th.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit {
    arm: usize,
    from: u32,
    count: u32,
}

/// The trials that take `to_run` (indices into `specs`) to `n` seeds: an arm whose scenario starts at its `seed`
/// parameter runs each seed it has not run yet as a trial of its own, so that the two
/// workers share an arm's seeds and stay busy to the end of the look; an arm without one
/// reruns all its seeds in one trial. The costliest arms' trials first (seconds per seed at
/// the last look; unknown counts as costliest), so the cheap ones fill the end.
fn units(
    specs: &[TrialSpec],
    seconds_per_seed: &[Option<f64>],
    n: u32,
    to_run: &[usize],
    earlier: &[Option<SeededRun>],
) -> Vec<Unit> {
    let mut arms = to_run.to_vec();
    let cost = |a: usize| seconds_per_seed[a].unwrap_or(f64::INFINITY);
    arms.sort_by(|&a, &b| cost(b).total_cmp(&cost(a)));
    let mut units = Vec::new();
    for a in arms {
        if continued(&specs[a], 0).is_none() {
            units.push(Unit {
                arm: a,
                from: 0,
                count: n,
            });
            continue;
        }
        let done = earlier[a].as_ref().map_or(0, |d| d.iterations.len() as u32);
        units.extend((done.min(n)..n).map(|from| Unit {
            arm: a,
            from,
            count: 1,
        }));
    }
    units
}

/// An arm's run from the last look's (if it continues it) and this look's trials, in seed
/// order; a failed trial fails the arm.
fn assemble(earlier: Option<&SeededRun>, mut parts: Vec<(u32, Seeded)>) -> Seeded {
    parts.sort_by_key(|(from, _)| *from);
    let mut run: Option<SeededRun> = None;
    for (from, r) in parts {
        let r = r?;
        run = Some(match (run, from) {
            (Some(so_far), _) => so_far.followed_by(r),
            // An arm that continues the last look's seeds starts from them.
            (None, from) if from > 0 => earlier
                .ok_or_else(|| format!("seeds before {from} were not run"))?
                .followed_by(r),
            (None, _) => r,
        });
    }
    match (run, earlier) {
        (Some(run), _) => Ok(run),
        // Nothing left to run: the last look's seeds are this look's.
        (None, Some(e)) => Ok(e.clone()),
        (None, None) => Err("no seeds were run".into()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::result::IterationResult;
    use crate::run::scenario::Params;
    use crate::run::settings::Mode;

    fn spec(seed: Option<&str>) -> TrialSpec {
        TrialSpec {
            scenario: "sim".into(),
            params: Params::from_pairs(seed.map(|s| ("seed", s))),
            threads: 1,
            groups: Vec::new(),
            mode: Mode::Throughput,
            env: Vec::new(),
            build: None,
        }
    }

    fn run(scores: &[f64], checks: (&str, &str)) -> SeededRun {
        SeededRun {
            iterations: scores
                .iter()
                .map(|&score| IterationResult {
                    score,
                    unit: "req/s".into(),
                    window_ns: 0,
                    ops: 0,
                    thread_ops: Vec::new(),
                    secondary: Vec::new(),
                    histogram: None,
                })
                .collect(),
            checks: (checks.0.into(), checks.1.into()),
        }
    }

    /// A seeded arm's missing seeds are one trial each, the costliest arm's first (an arm not
    /// yet timed counts as costliest); an arm without a seed parameter reruns all its seeds in
    /// one trial.
    #[test]
    fn each_missing_seed_is_a_trial_and_the_costliest_arms_go_first() {
        let specs = [spec(Some("42")), spec(Some("7")), spec(None)];
        let earlier = [Some(run(&[1.0, 2.0, 3.0], ("a", "b"))), None, None];
        let u = units(
            &specs,
            &[Some(0.5), Some(2.0), None],
            5,
            &[0, 1, 2],
            &earlier,
        );
        let order: Vec<(usize, u32, u32)> = u.iter().map(|u| (u.arm, u.from, u.count)).collect();
        assert_eq!(
            order,
            [
                (2, 0, 5),
                (1, 0, 1),
                (1, 1, 1),
                (1, 2, 1),
                (1, 3, 1),
                (1, 4, 1),
                (0, 3, 1),
                (0, 4, 1)
            ]
        );
    }

    /// An arm's trials come back in any order and join in seed order, after the last look's;
    /// a failed trial fails the arm.
    #[test]
    fn trials_join_in_seed_order_after_the_last_look() {
        let earlier = run(&[1.0, 2.0], ("b0", "a0"));
        let parts = vec![
            (3, Ok(run(&[4.0], ("b3", "a3")))),
            (2, Ok(run(&[3.0], ("b2", "a2")))),
        ];
        let joined = assemble(Some(&earlier), parts).unwrap();
        let scores: Vec<f64> = joined.iterations.iter().map(|i| i.score).collect();
        assert_eq!(scores, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(joined.checks, ("b0".into(), "a3".into()));
        let fresh = vec![
            (1, Ok(run(&[2.0], ("x", "y")))),
            (0, Ok(run(&[1.0], ("w", "z")))),
        ];
        let joined = assemble(None, fresh).unwrap();
        assert_eq!(joined.iterations.len(), 2);
        assert_eq!(joined.checks, ("w".into(), "y".into()));
        let failed = vec![
            (0, Ok(run(&[1.0], ("w", "z")))),
            (1, Err("boom".to_string())),
        ];
        assert_eq!(assemble(None, failed).unwrap_err(), "boom");
    }
}
