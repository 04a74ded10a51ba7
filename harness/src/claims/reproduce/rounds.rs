//! Replicates that are rounds of fresh processes, one per arm of a group, with ABBA blocks
//! inside ([`super::measure::run_round`]): the replicates of wall-time scenarios.

use super::measure::{RoundPlan, RoundRecord, round_rng, run_round};
use crate::run::result::TrialSpec;
use crate::run::runner::{Launcher, interrupted};

use super::arms::label;
use super::looks::{GroupRun, PairObserver, ReplicateSource, Verified};
use super::observed::{Costs, Observed, Paired, metric_of};
use super::outcome::{BlockValue, ReplicateKind};

/// A group's rounds so far.
pub(crate) struct Rounds<'a> {
    launcher: &'a Launcher,
    /// The group's arms.
    specs: Vec<TrialSpec>,
    /// Each member's baseline and contender, as indices into `specs`.
    claim_arms: Vec<(usize, usize)>,
    plan: RoundPlan,
    run: GroupRun,
    rounds: Vec<RoundRecord>,
    /// Per round, each arm's check values before and after.
    checks: Vec<Vec<(String, String)>>,
}

impl<'a> Rounds<'a> {
    /// No rounds yet of `specs`, measured for claims on `claim_arms`.
    pub fn new(
        launcher: &'a Launcher,
        specs: Vec<TrialSpec>,
        claim_arms: Vec<(usize, usize)>,
        run: GroupRun,
    ) -> Self {
        let settings = &run.settings;
        let single_threaded = specs.iter().all(|s| s.threads == 1);
        Rounds {
            launcher,
            specs,
            claim_arms,
            plan: RoundPlan {
                warmup: settings.warmup_iterations,
                blocks: (settings.blocks.max(2) as usize).div_ceil(2) * 2,
                iteration_time: settings.iteration_time,
                forked: settings.forked,
                pin: settings.pin_single_threaded && single_threaded,
                probe_coherence: settings.forked && !single_threaded,
            },
            run,
            rounds: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// The sum over every block of `metric` of `arm`.
    fn total(&self, arm: usize, metric: &str) -> Result<f64, String> {
        let mut total = 0.0;
        for r in &self.rounds {
            for b in &r.blocks {
                total += metric_of(metric, &b.results[arm])?.0;
            }
        }
        Ok(total)
    }
}

impl ReplicateSource for Rounds<'_> {
    fn kind(&self) -> ReplicateKind {
        ReplicateKind::ProcessPair
    }

    fn replanned(&mut self, last: u32) {
        self.run.planned = last;
    }

    /// Every round runs all the group's arms, decided claims' too.
    fn measure(
        &mut self,
        n: u32,
        _undecided: &[usize],
        observer: &mut dyn PairObserver,
    ) -> Result<(), String> {
        while (self.rounds.len() as u32) < n {
            if interrupted() {
                return Err("interrupted".into());
            }
            let mut rng = round_rng(
                self.run.settings.seed,
                self.run.rng_index,
                self.rounds.len(),
            );
            let (record, check) = run_round(self.launcher, &self.specs, self.plan, &mut rng)
                .map_err(|e| format!("{}: {}", label(&self.specs[e.arm]), e.message))?;
            self.rounds.push(record);
            self.checks.push(check);
            observer.replicate_done(&self.run.ids, self.rounds.len() as u32, self.run.planned);
        }
        Ok(())
    }

    fn observe(
        &self,
        member: usize,
        metric: &str,
        exposure: Option<&str>,
    ) -> Result<Observed, String> {
        let (a, b) = self.claim_arms[member];
        // The CPUs' distance matters to threads that share cache lines: a claim with a
        // single-threaded side on each end is judged over all its blocks.
        let probed = self.specs[a].threads > 1 || self.specs[b].threads > 1;
        let mut unit = String::new();
        let mut replicates = Vec::with_capacity(self.rounds.len());
        for r in &self.rounds {
            let mut blocks = Vec::with_capacity(r.blocks.len());
            for block in &r.blocks {
                let (baseline, u) = metric_of(metric, &block.results[a])?;
                let (contender, _) = metric_of(metric, &block.results[b])?;
                unit = u;
                let position = |arm: usize| block.order.iter().position(|&x| x == arm);
                blocks.push(BlockValue {
                    baseline,
                    contender,
                    baseline_first: position(a) < position(b),
                    coherence_ns: block.coherence_ns.filter(|_| probed),
                });
            }
            let launched = |arm: usize| r.launch_order.iter().position(|&x| x == arm);
            replicates.push(Paired {
                seed: r.seed,
                baseline_launched_first: launched(a) < launched(b),
                env_pad: (
                    r.env_pad.get(a).copied().unwrap_or(0),
                    r.env_pad.get(b).copied().unwrap_or(0),
                ),
                cpu: r.cpu,
                blocks,
            });
        }
        let costs: Vec<(f64, f64, usize)> = self
            .rounds
            .iter()
            .map(|r| (r.setup_seconds, r.block_seconds, r.blocks.len()))
            .collect();
        Ok(Observed {
            replicates,
            unit,
            costs: Costs::mean_of(&costs, self.specs.len()),
            exposure: exposure.map(|e| [self.total(a, e), self.total(b, e)]),
        })
    }

    fn verified(&self, member: usize) -> Option<[Verified; 2]> {
        let (a, b) = self.claim_arms[member];
        let of = |arm: usize| Verified {
            before: self.checks.iter().map(|c| c[arm].0.clone()).collect(),
            after: self.checks.iter().map(|c| c[arm].1.clone()).collect(),
        };
        Some([of(a), of(b)])
    }
}
