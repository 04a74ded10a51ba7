//! Calibration on this machine: A/A claims (`aa = true`, both sides one configuration) run
//! many times, to see what the machine's noise does to a ratio's interval and whether the
//! intervals cover the truth (1) as often as they claim.
//!
//! One row per A/A claim and design: the design is a slice length (the iteration each side runs
//! in turn inside a round) and the slices per side per round, at equal measured time per round,
//! so the rows say how the variance of a round's log ratio depends on the interleaving's grain.
//! Kalibera & Jones' components split that variance into the slices' (within a round) and the
//! processes' (between rounds): fine interleaving can only shrink the first, more rounds the
//! second. Each design runs with the single-threaded claims' processes pinned to one CPU per
//! round and, where that pinned anything, again without, so the rows also say what affinity
//! does. This is the noise study of METHODOLOGY.md; `critsec calibrate` prints it.

use std::time::Duration;

use serde::Serialize;

use crate::claims::claim::Claim;
use crate::claims::reproduce::{ClaimOutcome, PairObserver, PairedSettings, reproduce_claims};
use crate::run::runner::{Launcher, interrupted};
use crate::stats::median;

/// How the A/A claims are run.
#[derive(Debug, Clone)]
pub struct CalibrationPlan {
    /// The slice lengths to compare.
    pub slices: Vec<Duration>,
    /// Measured time per side per round, the same for every slice length.
    pub per_side: Duration,
    /// Rounds (process pairs) per run, no further looks.
    pub rounds: u32,
    /// Runs per design, each with its own seed (`seed`, `seed + 1`, ...).
    pub runs: u32,
    /// Whether to pin, in the order tried: `[true, false]` compares; a claim whose runs pinned
    /// nothing (a multi-threaded arm) is not run again unpinned.
    pub pin: Vec<bool>,
    /// The settings everything else comes from (warmup, forks, seeds of simulations).
    pub base: PairedSettings,
}

impl CalibrationPlan {
    /// Whether the plan can run: every slice at least 1 ms and no longer than the time per
    /// side (each side runs at least one slice), at least one run of two rounds.
    pub fn check(&self) -> Result<(), String> {
        if let Some(bad) = self
            .slices
            .iter()
            .find(|s| **s < Duration::from_millis(1) || **s > self.per_side)
        {
            return Err(format!(
                "a slice length must be at least 1 ms and at most the time per side ({} ms); \
                 {} ms is not",
                self.per_side.as_millis(),
                bad.as_secs_f64() * 1e3
            ));
        }
        if self.slices.is_empty() {
            return Err("give at least one slice length".into());
        }
        if self.runs == 0 || self.rounds < 2 {
            return Err("--runs must be at least 1 and --rounds at least 2".into());
        }
        Ok(())
    }

    /// Slices per side per round for `slice`: `per_side / slice`, even and at least 2 (the
    /// blocks alternate their order, so an even count balances it).
    pub fn slices_per_round(&self, slice: Duration) -> u32 {
        let n = (self.per_side.as_secs_f64() / slice.as_secs_f64()).round() as u32;
        n.max(2).div_ceil(2) * 2
    }

    /// The settings of run `run` with slice length `slice`, pinned or not.
    pub fn settings(&self, slice: Duration, pin: bool, run: u32) -> PairedSettings {
        PairedSettings {
            pin_single_threaded: pin,
            iteration_time: slice,
            blocks: self.slices_per_round(slice),
            min_pairs: self.rounds,
            max_pairs: self.rounds,
            seed: self.base.seed.wrapping_add(u64::from(run)),
            ..self.base.clone()
        }
    }
}

/// One A/A claim under one design, over the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationRow {
    /// The claim.
    pub claim: String,
    /// Slice length, ms.
    pub slice_ms: f64,
    /// Slices per side per round.
    pub slices: u32,
    /// Whether any round's processes were pinned to one CPU.
    pub pinned: bool,
    /// Runs with an interval.
    pub runs: usize,
    /// Of those, how many intervals covered 1.
    pub covered: usize,
    /// Median half-width of the interval in log space (x/÷ exp of it).
    pub median_half_width: f64,
    /// Median over runs of the standard deviation of the rounds' mean log ratios.
    pub round_sd: f64,
    /// Median over runs of the SD of one slice pair's log ratio within a round (T1).
    pub within_sd: f64,
    /// Median over runs of the SD between processes beyond what the slices explain (T2).
    pub between_sd: f64,
    /// Median wall seconds of a run.
    pub seconds: f64,
    /// Runs that failed, with the reason of the first.
    pub errors: Vec<String>,
}

impl CalibrationRow {
    /// A row from the outcomes of one claim under one design.
    pub fn of(claim: &str, slice: Duration, slices: u32, outcomes: &[ClaimOutcome]) -> Self {
        let intervals: Vec<_> = outcomes.iter().filter_map(|o| o.interval).collect();
        let med = |xs: Vec<f64>| {
            let xs: Vec<f64> = xs.into_iter().filter(|x| x.is_finite()).collect();
            if xs.is_empty() { f64::NAN } else { median(&xs) }
        };
        let components: Vec<_> = outcomes.iter().filter_map(|o| o.components).collect();
        CalibrationRow {
            claim: claim.to_string(),
            slice_ms: slice.as_secs_f64() * 1e3,
            slices,
            pinned: outcomes
                .iter()
                .any(|o| o.replicates.iter().any(|r| r.cpu.is_some())),
            runs: intervals.len(),
            covered: intervals
                .iter()
                .filter(|i| i.low <= 1.0 && 1.0 <= i.high)
                .count(),
            median_half_width: med(intervals
                .iter()
                .map(|i| (i.high.ln() - i.low.ln()) / 2.0)
                .collect()),
            round_sd: med(intervals.iter().map(|i| i.log_sd).collect()),
            within_sd: med(components.iter().map(|c| c.within.sqrt()).collect()),
            between_sd: med(components.iter().map(|c| c.between.sqrt()).collect()),
            seconds: med(outcomes.iter().map(|o| o.seconds).collect()),
            errors: outcomes
                .iter()
                .filter_map(|o| o.verdict.as_ref().err().cloned())
                .collect(),
        }
    }
}

/// Runs every claim of `claims` (A/A claims) under every design of `plan`, `plan.runs` times
/// each; rows in claim order, then slice order. Stops early, with what it has, on an interrupt.
pub fn calibrate(
    launcher: &Launcher,
    claims: &[Claim],
    plan: &CalibrationPlan,
    observer: &mut dyn PairObserver,
) -> Vec<CalibrationRow> {
    let mut rows = Vec::new();
    for claim in claims {
        for &slice in &plan.slices {
            let mut pinned_any = None;
            for &pin in &plan.pin {
                // Unpinned after pinned that pinned nothing would run the same design again.
                if !pin && pinned_any == Some(false) {
                    continue;
                }
                let mut outcomes = Vec::new();
                for run in 0..plan.runs {
                    if interrupted() {
                        break;
                    }
                    let settings = plan.settings(slice, pin, run);
                    let one = std::slice::from_ref(claim);
                    outcomes.extend(reproduce_claims(launcher, one, one, &settings, observer));
                }
                let row =
                    CalibrationRow::of(&claim.id, slice, plan.slices_per_round(slice), &outcomes);
                if pin {
                    pinned_any = Some(row.pinned);
                }
                rows.push(row);
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_whose_slices_cannot_run_is_refused() {
        let plan = |slices: &[u64], per_side: u64| CalibrationPlan {
            slices: slices.iter().map(|&ms| Duration::from_millis(ms)).collect(),
            per_side: Duration::from_millis(per_side),
            rounds: 5,
            runs: 3,
            pin: vec![true],
            base: PairedSettings::quick(),
        };
        assert!(plan(&[20, 50, 200], 400).check().is_ok());
        let e = plan(&[20, 0], 400).check().unwrap_err();
        assert!(
            e.contains("at least 1 ms") && e.contains("0 ms is not"),
            "{e}"
        );
        let e = plan(&[500], 400).check().unwrap_err();
        assert!(e.contains("500 ms is not"), "{e}");
        assert!(plan(&[], 400).check().is_err());
        assert!(plan(&[20], 0).check().is_err());
    }

    fn plan() -> CalibrationPlan {
        CalibrationPlan {
            slices: vec![Duration::from_millis(20), Duration::from_millis(200)],
            per_side: Duration::from_millis(400),
            rounds: 5,
            runs: 3,
            pin: vec![true, false],
            base: PairedSettings::quick(),
        }
    }

    #[test]
    fn every_design_measures_the_same_time_per_side_in_an_even_number_of_slices() {
        let p = plan();
        assert_eq!(p.slices_per_round(Duration::from_millis(20)), 20);
        assert_eq!(p.slices_per_round(Duration::from_millis(200)), 2);
        assert_eq!(p.slices_per_round(Duration::from_millis(150)), 4);
        assert_eq!(p.slices_per_round(Duration::from_secs(1)), 2);
        let s = p.settings(Duration::from_millis(20), false, 2);
        assert_eq!((s.blocks, s.min_pairs, s.max_pairs), (20, 5, 5));
        assert!(!s.pin_single_threaded);
        assert_eq!(s.seed, PairedSettings::quick().seed + 2);
    }
}
