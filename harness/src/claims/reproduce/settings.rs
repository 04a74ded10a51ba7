//! How long and how often claims are measured: the settings a verdict file records with its
//! outcomes (so they serialise, and fields added later read a default from older files), and the
//! look schedule they give each kind of group.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::stats::CONFIDENCE;

use super::groups::GroupKind;
use super::schedule::{Growth, LookSchedule};

/// The quick main job's precision goal: a log half-width of 0.05 (x/÷ 1.051), the few percent
/// a JMH user expects of a single-threaded ratio.
pub const QUICK_PRECISION: f64 = 0.05;
/// Full mode's: 0.02 (x/÷ 1.020).
pub const FULL_PRECISION: f64 = 0.02;

/// How long and how often claims are measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedSettings {
    /// Warmup iterations per process, after setup, before its first block.
    pub warmup_iterations: u32,
    /// Rounds of fresh processes in the pilot (the first look).
    pub min_pairs: u32,
    /// Rounds at the last planned look, where the budget affords no more.
    pub max_pairs: u32,
    /// Rounds the last look may move out to when the pilot's measured cost of a round affords
    /// them within the budget ([`LookSchedule::after_pilot`]). Verdict files written before it
    /// existed read 0: the last look stays at `max_pairs`.
    #[serde(default)]
    pub most_pairs: u32,
    /// Rounds between looks after the pilot.
    pub look_every: u32,
    /// ABBA blocks per round (even: as many A-B as B-A orders).
    pub blocks: u32,
    /// Length of every iteration.
    pub iteration_time: Duration,
    /// Wall-time budget per claim for rounds beyond the pilot: what the looks after it may
    /// take, and what the last look is planned from.
    pub budget: Duration,
    /// The same for a claim whose sides are programs: a JVM start and its warmup make a
    /// replicate cost seconds, so [`Self::budget`] would stop every such claim at `max_pairs`
    /// (a reviewer's A/A of one JMH jar stayed undecided at 8). Verdict files written before it
    /// existed read zero: their last look stays at `max_pairs`.
    #[serde(default)]
    pub program_budget: Duration,
    /// Run each side in a fork (needed for environment overrides such as `RUST_BACKTRACE`).
    pub forked: bool,
    /// Seeds (replicates) of a deterministic claim at its first look.
    pub seeds: u32,
    /// Seeds at the last look, for a deterministic claim still undecided at `seeds`.
    pub max_seeds: u32,
    /// The seed of every random choice of the run (launch orders, block orders, padding).
    pub seed: u64,
    /// Pin the processes of a group whose arms are all single-threaded to one CPU per round,
    /// drawn from the allowed ones (METHODOLOGY.md, *CPU affinity*); a group with a
    /// multi-threaded arm is never pinned, so both sides of a claim always run alike. Verdict
    /// files written before it existed read `false`.
    #[serde(default)]
    pub pin_single_threaded: bool,
    /// The log half-width a decided ratio claim's interval should reach: a group of process
    /// pairs or programs whose claims are all decided takes its next look, within the budget,
    /// while one of them is wider (a verdict of 7.7 [5.7, 10.3] decides, but tells a reviewer
    /// little). Seeds keep to their decisions: their cost is the simulation's. Verdict files
    /// written before it existed read `None`: a group stopped once every claim was decided.
    #[serde(default)]
    pub precision: Option<f64>,
}

impl PairedSettings {
    /// The default: every claim's verdict in a few minutes on 2 cores. Per round and side,
    /// 200 ms of warmup and 400 ms measured in 8 slices of 50 ms alternating with the other
    /// side's (METHODOLOGY.md, *The noise of this machine*).
    pub fn quick() -> Self {
        PairedSettings {
            warmup_iterations: 4,
            min_pairs: 5,
            max_pairs: 8,
            most_pairs: 16,
            look_every: 3,
            blocks: 8,
            iteration_time: Duration::from_millis(50),
            budget: Duration::from_secs(6),
            program_budget: Duration::from_secs(180),
            forked: true,
            seeds: 3,
            max_seeds: 8,
            seed: 0,
            pin_single_threaded: true,
            precision: Some(QUICK_PRECISION),
        }
    }

    /// The publication run's: quick's slices, with a budget that settles what quick's cannot
    /// (a claim near its bound, a memory-bound spread) and the seeds of full mode: 40 s per
    /// claim after the pilot, up to 48 rounds, 10-30 seeds. JMH-like iterations of 2 s
    /// ([`Self::full`]) would take hours for the whole set on 2 cores, for no interval a round
    /// of 50 ms slices does not give (METHODOLOGY.md, *The noise of this machine*).
    pub fn publication() -> Self {
        PairedSettings {
            most_pairs: 48,
            budget: Duration::from_secs(40),
            seeds: 10,
            max_seeds: 30,
            ..PairedSettings::quick()
        }
    }

    /// JMH-like durations: 5 warmups, 10–30 rounds of 4 blocks of 2 s, 10–30 seeds.
    pub fn full() -> Self {
        PairedSettings {
            warmup_iterations: 5,
            min_pairs: 10,
            max_pairs: 30,
            most_pairs: 50,
            look_every: 5,
            blocks: 4,
            iteration_time: Duration::from_secs(2),
            budget: Duration::from_secs(120),
            program_budget: Duration::from_secs(1800),
            forked: true,
            seeds: 10,
            max_seeds: 30,
            seed: 0,
            pin_single_threaded: true,
            precision: Some(FULL_PRECISION),
        }
    }

    /// A run seed drawn from the clock, for runs that are not replays (printed and recorded, so
    /// that any run can be replayed with it).
    pub fn clock_seed() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    }

    /// The same settings with another run seed.
    pub fn with_seed(self, seed: u64) -> Self {
        PairedSettings { seed, ..self }
    }

    /// The round counts at which verdicts are looked at: the pilot, then every `look_every`,
    /// and `max_pairs`.
    pub fn looks(&self) -> Vec<u32> {
        let min = self.min_pairs.max(2);
        let max = self.max_pairs.max(min);
        let mut looks: Vec<u32> = (min..max)
            .step_by(self.look_every.max(1) as usize)
            .collect();
        looks.push(max);
        looks.dedup();
        looks
    }

    /// The seed counts at which a deterministic claim's verdict is looked at: `seeds`, halfway,
    /// then `max_seeds`. The first look spends almost nothing (a t over 2 degrees of freedom at
    /// 99.99999%): it decides counts and seeds that agree exactly. The halfway look decides a
    /// tight ratio (5 seeds at 99.997%) without running the last seeds, which cost seconds each.
    pub fn seed_looks(&self) -> Vec<u32> {
        let first = self.seeds.max(2);
        let last = self.max_seeds.max(first);
        let mut looks = vec![first, (first + last) / 2, last];
        looks.dedup();
        looks
    }

    /// The looks of a group of `claims` measured as `kind`: process pairs at [`Self::looks`]
    /// within the budget of every claim, the last look moved out after the pilot to what the
    /// budget affords, up to `most_pairs`, and taken for [`Self::precision`] too; seeds at
    /// [`Self::seed_looks`] with no budget, for decisions only. Either way the looks spend
    /// α = 0.001 by the O'Brien-Fleming-type function ([`LookSchedule::spending`]).
    pub(crate) fn schedule(&self, kind: GroupKind, claims: usize) -> LookSchedule {
        let alpha = 1.0 - CONFIDENCE;
        match kind {
            GroupKind::Seeds => LookSchedule::spending(self.seed_looks(), alpha, None),
            GroupKind::Rounds | GroupKind::Invocations => {
                let budget = if kind == GroupKind::Invocations {
                    self.program_budget
                } else {
                    self.budget
                };
                let mut schedule = LookSchedule::spending(
                    self.looks(),
                    alpha,
                    u32::try_from(claims)
                        .ok()
                        .and_then(|n| budget.checked_mul(n)),
                );
                schedule.growth = Some(Growth {
                    most: self.most_pairs,
                    step: self.look_every.max(1),
                    alpha,
                });
                schedule.precision = self.precision;
                schedule
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::reproduce::schedule::last_look;

    #[test]
    fn looks_spend_alpha_by_the_obrien_fleming_function() {
        let q = PairedSettings::quick();
        assert_eq!(q.looks(), vec![5, 8]);
        assert_eq!(q.seed_looks(), vec![3, 5, 8]);
        let f = PairedSettings::full();
        assert_eq!(f.looks(), vec![10, 15, 20, 25, 30]);
        assert_eq!(f.seed_looks(), vec![10, 20, 30]);
        // The α each look spends (1 − its confidence), against values from mpmath.
        let close = |confidence: Vec<f64>, alphas: &[f64]| {
            confidence.len() == alphas.len()
                && confidence
                    .iter()
                    .zip(alphas)
                    .all(|(c, a)| ((1.0 - c) - a).abs() <= 1e-5 * a)
        };
        let rounds = |s: &PairedSettings| s.schedule(GroupKind::Rounds, 1).confidence;
        let seeds = |s: &PairedSettings| s.schedule(GroupKind::Seeds, 1).confidence;
        assert!(close(rounds(&q), &[3.151_634e-5, 9.684_837e-4]));
        assert!(close(
            rounds(&f),
            &[
                1.202_584e-8,
                3.251_331e-6,
                5.250_027e-5,
                2.568_807e-4,
                6.873_556e-4,
            ]
        ));
        assert!(close(
            seeds(&q),
            &[7.726_238e-8, 3.143_908e-5, 9.684_837e-4]
        ));
        assert!(close(
            seeds(&f),
            &[1.202_584e-8, 5.575_160e-5, 9.442_364e-4]
        ));
        // A program's invocations are looked at as rounds are.
        assert_eq!(rounds(&q), q.schedule(GroupKind::Invocations, 1).confidence);
        // However many looks, they spend α = 0.001 in all.
        for s in [&q, &f] {
            for c in [rounds(s), seeds(s)] {
                let spent: f64 = c.iter().map(|c| 1.0 - c).sum();
                assert!((spent - 0.001).abs() < 1e-12, "{c:?}");
            }
        }
    }

    #[test]
    fn the_last_look_is_what_the_budget_affords_between_the_planned_and_the_most() {
        // A pilot of 5 at 1.5 s a replicate, 12 s of budget: 8 more, a last look at 13.
        assert_eq!(last_look(5, 1.5, 12.0, 8, 16), 13);
        // Dear replicates (a JVM per invocation): the planned last look all the same.
        assert_eq!(last_look(5, 20.0, 12.0, 8, 16), 8);
        assert_eq!(last_look(5, 1.5, 3.0, 8, 16), 8);
        // Cheap ones: at most 16; free ones (a zero or unmeasurable cost) likewise.
        assert_eq!(last_look(5, 0.5, 12.0, 8, 16), 16);
        assert_eq!(last_look(5, 0.0, 12.0, 8, 16), 16);
        assert_eq!(last_look(5, f64::NAN, 12.0, 8, 16), 16);
        // A verdict file from before (most 0): the planned last look.
        assert_eq!(last_look(5, 1.0, 100.0, 8, 0), 8);
    }

    #[test]
    fn looks_planned_after_the_pilot_keep_its_alpha_and_spend_the_rest() {
        let q = PairedSettings::quick();
        let mut s = q.schedule(GroupKind::Rounds, 2);
        let pilot = s.confidence[0];
        let why = s.after_pilot(1.5);
        assert_eq!(s.looks, vec![5, 8, 11, 13], "{why}");
        assert_eq!(s.confidence[0], pilot);
        let spent: f64 = s.confidence.iter().map(|c| 1.0 - c).sum();
        assert!((spent - 0.001).abs() < 1e-12, "{:?}", s.confidence);
        assert!(why.contains("last look at 13"), "{why}");
        // Seeds keep their looks; so does a schedule whose budget affords no more.
        let mut seeds = q.schedule(GroupKind::Seeds, 2);
        let before = seeds.clone();
        seeds.after_pilot(0.0);
        assert_eq!(seeds, before);
        // A program's replicates (a JVM each) have a budget of their own: at 5.6 s a replicate
        // (a real JMH run here) quick mode's 180 s afford the most; the same cost under the
        // budget of our own scenarios would have stopped at the planned 8.
        let mut jvm = q.schedule(GroupKind::Invocations, 1);
        let why = jvm.after_pilot(5.6);
        assert!(why.contains("last look at 16"), "{why}");
        let mut ours = q.schedule(GroupKind::Rounds, 1);
        assert!(ours.after_pilot(5.6).contains("every group gets 8"));
        let mut dear = q.schedule(GroupKind::Invocations, 1);
        let before = dear.clone();
        assert!(dear.after_pilot(100.0).contains("every group gets 8"));
        assert_eq!(dear, before);
    }

    #[test]
    fn a_budget_too_long_to_multiply_is_no_limit_not_a_panic() {
        let s = PairedSettings {
            budget: Duration::MAX,
            ..PairedSettings::quick()
        };
        assert_eq!(s.schedule(GroupKind::Rounds, 3).budget, None);
        assert_eq!(s.schedule(GroupKind::Seeds, 3).budget, None);
    }
}
