//! Paired reproduction of a claim: two warm trials, alternating iterations, a ratio with its
//! 99.9% interval, and a verdict.
//!
//! Baseline (A) and contender (B) each run in their own trial, set up and verified once, and kept
//! alive; iterations alternate A B, B A, A B, ... (ABBA order, so a linear drift of the machine
//! cancels within each pair of pairs). Each pair gives a ratio B/A of the claim's metric; we
//! average the log-ratios and take a Student-t interval at 99.9%, then map it back with `exp`:
//! a geometric-mean ratio whose interval is symmetric in log space, as ratios should be.
//!
//! Verdicts, for a claim "contender/baseline >= m" (direction `higher`; `lower` mirrors it):
//! REPRODUCED when the whole interval is >= m, NOT REPRODUCED when it is entirely below m,
//! INCONCLUSIVE when it straddles m. Pairs continue from `min_pairs` up to `max_pairs` while the
//! verdict is inconclusive and the time budget lasts; METHODOLOGY.md discusses what this
//! optional stopping costs at a 99.9% level.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::claims::claim::{Claim, Direction};
use crate::run::fork::{Catalog, TrialHandle};
use crate::run::result::IterationResult;
use crate::run::runner::{Launcher, param_product, trial_spec};
use crate::run::settings::{Mode, resolve_threads};
use crate::stats::ratio::{RatioInterval, ratio_interval};
use crate::stats::{CONFIDENCE, t_quantile};

/// How long and how often a claim is measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedSettings {
    /// Warmup iterations per side, before the first pair.
    pub warmup_iterations: u32,
    /// Pairs measured before a verdict may be given.
    pub min_pairs: u32,
    /// Pairs after which an inconclusive claim stays inconclusive.
    pub max_pairs: u32,
    /// Length of every iteration.
    pub iteration_time: Duration,
    /// Wall-time budget per claim for extra pairs beyond `min_pairs`.
    pub budget: Duration,
    /// Run each side in a fork (needed for environment overrides such as `RUST_BACKTRACE`).
    pub forked: bool,
}

impl PairedSettings {
    /// The default: the whole claim set finishes in a few minutes on 2 cores.
    pub fn quick() -> Self {
        PairedSettings {
            warmup_iterations: 1,
            min_pairs: 5,
            max_pairs: 12,
            iteration_time: Duration::from_millis(250),
            budget: Duration::from_secs(8),
            forked: true,
        }
    }

    /// JMH-like durations: 5 warmups and 20–40 pairs of 2 s per claim.
    pub fn full() -> Self {
        PairedSettings {
            warmup_iterations: 5,
            min_pairs: 20,
            max_pairs: 40,
            iteration_time: Duration::from_secs(2),
            budget: Duration::from_secs(120),
            forked: true,
        }
    }
}

/// The outcome of the interval against the claimed effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Verdict {
    /// The interval lies entirely beyond the claimed effect.
    Reproduced,
    /// The interval lies entirely on the other side of the claimed effect.
    NotReproduced,
    /// The interval straddles the claimed effect.
    Inconclusive {
        /// Roughly how many pairs in all would settle it at the current spread, if any would.
        pairs_needed: Option<u64>,
    },
}

impl Verdict {
    /// The word printed in tables.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Reproduced => "REPRODUCED",
            Verdict::NotReproduced => "NOT REPRODUCED",
            Verdict::Inconclusive { .. } => "INCONCLUSIVE",
        }
    }
}

/// The verdict of an interval against "ratio >= m" (`Higher`) or "ratio <= m" (`Lower`).
pub fn verdict(direction: Direction, min_effect: f64, r: &RatioInterval) -> Verdict {
    let (beyond, against) = match direction {
        Direction::Higher => (r.low >= min_effect, r.high < min_effect),
        Direction::Lower => (r.high <= min_effect, r.low > min_effect),
    };
    if beyond {
        Verdict::Reproduced
    } else if against {
        Verdict::NotReproduced
    } else {
        // Pairs needed for the half-width to shrink below the distance to the bound, at the
        // current spread (a rough guide: the t quantile also shrinks as n grows).
        let distance = (r.ratio.ln() - min_effect.ln()).abs();
        let pairs_needed = (distance > 1e-12 && r.log_sd.is_finite() && r.n >= 2).then(|| {
            let t = t_quantile(CONFIDENCE, (r.n - 1).max(1) as f64);
            ((t * r.log_sd / distance).powi(2))
                .ceil()
                .max(r.n as f64 + 1.0) as u64
        });
        Verdict::Inconclusive { pairs_needed }
    }
}

/// One side's measurements in a paired run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideRecord {
    /// Scenario, parameters and threads, for display.
    pub label: String,
    /// Check value before measuring.
    pub verified_before: String,
    /// Check value after measuring.
    pub verified_after: String,
    /// The claim's metric per measured iteration, in pair order.
    pub values: Vec<f64>,
    /// Unit of the metric.
    pub unit: String,
}

impl SideRecord {
    /// Mean of the metric.
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len().max(1) as f64
    }
}

/// Everything `reproduce` learned about one claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimOutcome {
    /// The claim.
    pub claim: Claim,
    /// The baseline side.
    pub baseline: SideRecord,
    /// The contender side.
    pub contender: SideRecord,
    /// Contender/baseline per pair.
    pub ratios: Vec<f64>,
    /// The ratio and its interval; absent when the claim failed.
    pub interval: Option<RatioInterval>,
    /// The verdict, or why there is none (a failed check is never a verdict).
    pub verdict: Result<Verdict, String>,
    /// Wall time spent on the claim.
    pub seconds: f64,
}

/// Why a claim cannot be run: it names something its scenario does not have.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InvalidClaim {
    /// The scenario does not exist.
    #[error("claim `{claim}` names unknown scenario `{scenario}`")]
    UnknownScenario {
        /// The claim.
        claim: String,
        /// The scenario it names.
        scenario: String,
    },
    /// A side's thread spec is malformed.
    #[error("claim `{claim}`: {message}")]
    Threads {
        /// The claim.
        claim: String,
        /// What is wrong with the spec.
        message: String,
    },
    /// A side sets a parameter the scenario does not have.
    #[error("claim `{claim}`: scenario {scenario} has no parameter `{param}`")]
    UnknownParam {
        /// The claim.
        claim: String,
        /// The scenario.
        scenario: String,
        /// The parameter.
        param: String,
    },
    /// A side sets a parameter to a value it does not accept.
    #[error("claim `{claim}`: `{value}` is not a valid `{param}` ({valid})")]
    BadValue {
        /// The claim.
        claim: String,
        /// The parameter.
        param: String,
        /// The value given.
        value: String,
        /// The accepted values, comma-separated.
        valid: String,
    },
    /// The metric is empty.
    #[error("claim `{claim}`: empty metric")]
    EmptyMetric {
        /// The claim.
        claim: String,
    },
    /// A side leaves a parameter unset (only in a bench crate's own claims file).
    #[error("claim `{claim}` leaves `{param}` of {scenario} unset")]
    Unset {
        /// The claim.
        claim: String,
        /// The scenario.
        scenario: String,
        /// The parameter.
        param: String,
    },
}

/// Checks that a claim's sides name known scenarios, known parameters and valid values.
pub fn validate_claim(catalog: &Catalog, claim: &Claim) -> Result<(), InvalidClaim> {
    let id = || claim.id.clone();
    for contender in [false, true] {
        let (scenario, params, threads, _) = claim.side(contender);
        let s = catalog
            .find(&scenario)
            .ok_or_else(|| InvalidClaim::UnknownScenario {
                claim: id(),
                scenario: scenario.clone(),
            })?;
        resolve_threads(&threads).map_err(|e| InvalidClaim::Threads {
            claim: id(),
            message: e.to_string(),
        })?;
        let known: Vec<_> = s.params();
        for (k, v) in &params.0 {
            let p =
                known
                    .iter()
                    .find(|p| p.name == k)
                    .ok_or_else(|| InvalidClaim::UnknownParam {
                        claim: id(),
                        scenario: scenario.clone(),
                        param: k.clone(),
                    })?;
            if !p.accepted.is_empty() && !p.accepted.contains(v) {
                return Err(InvalidClaim::BadValue {
                    claim: id(),
                    param: k.clone(),
                    value: v.clone(),
                    valid: p.accepted.join(", "),
                });
            }
        }
        if claim.metric != "primary" && claim.metric.is_empty() {
            return Err(InvalidClaim::EmptyMetric { claim: id() });
        }
    }
    Ok(())
}

/// Checks a bench crate's claims against its scenarios: each claim is valid (see
/// [`validate_claim`]) and sets every parameter of its scenario, so that each side runs exactly
/// one configuration that a reader can see in `claims.toml`. Bench crates call this in a test.
pub fn check_claim_file(
    scenarios: Vec<Box<dyn crate::Scenario>>,
    claims: &[Claim],
) -> Result<(), InvalidClaim> {
    let catalog = Catalog::new(scenarios);
    for claim in claims {
        validate_claim(&catalog, claim)?;
        for contender in [false, true] {
            let (scenario, params, _, _) = claim.side(contender);
            let s = catalog.find(&scenario).expect("validated above");
            for p in s.params() {
                if !params.0.contains_key(p.name) {
                    return Err(InvalidClaim::Unset {
                        claim: claim.id.clone(),
                        scenario: scenario.clone(),
                        param: p.name.to_string(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Picks the claim's metric out of one iteration.
pub fn metric_of(metric: &str, it: &IterationResult) -> Result<(f64, String), String> {
    if metric == "primary" {
        return Ok((it.score, it.unit.clone()));
    }
    it.secondary
        .iter()
        .find(|m| m.name == metric)
        .map(|m| (m.value, m.unit.clone()))
        .ok_or_else(|| {
            let names: Vec<_> = it.secondary.iter().map(|m| m.name.as_str()).collect();
            format!(
                "the scenario reports no metric `{metric}`; it reports: primary, {}",
                names.join(", ")
            )
        })
}

/// Progress callbacks for a paired run.
pub trait PairObserver {
    /// A pair completed; `ratios` so far.
    fn pair_done(&mut self, _claim: &Claim, _ratios: &[f64]) {}
}

impl PairObserver for crate::run::runner::Silent {}

fn start_side(
    launcher: &Launcher,
    claim: &Claim,
    contender: bool,
    forked: bool,
) -> Result<(TrialHandle, SideRecord), String> {
    let (scenario_name, params, threads, env) = claim.side(contender);
    let scenario = launcher
        .catalog()
        .find(&scenario_name)
        .ok_or_else(|| format!("unknown scenario `{scenario_name}`"))?;
    // Parameters the claim leaves out take the scenario's first default value.
    let mut overrides: std::collections::BTreeMap<String, Vec<String>> = params
        .0
        .iter()
        .map(|(k, v)| (k.clone(), vec![v.clone()]))
        .collect();
    for p in scenario.params() {
        overrides
            .entry(p.name.to_string())
            .or_insert_with(|| p.defaults.iter().take(1).cloned().collect());
    }
    let params = param_product(scenario, &overrides)
        .map_err(|e| e.to_string())?
        .into_iter()
        .next()
        .ok_or("the claim selects no parameter combination")?;
    let threads = resolve_threads(&threads).map_err(|e| e.to_string())?;
    let env: Vec<(String, String)> = env.into_iter().collect();
    let spec = trial_spec(scenario, params, threads, Mode::Throughput, &env);
    let label = format!("{} [{}] t={}", spec.scenario, spec.params, spec.threads);
    let (handle, verified_before) = launcher
        .start(&spec, forked)
        .map_err(|e| format!("{label}: {e}"))?;
    Ok((
        handle,
        SideRecord {
            label,
            verified_before,
            ..Default::default()
        },
    ))
}

fn measure(
    handle: &mut TrialHandle,
    side: &mut SideRecord,
    metric: &str,
    warmup: bool,
    time: Duration,
) -> Result<f64, String> {
    let it = handle
        .iteration(warmup, time)
        .map_err(|e| format!("{}: {e}", side.label))?;
    let (v, unit) = metric_of(metric, &it).map_err(|e| format!("{}: {e}", side.label))?;
    if !warmup {
        if !(v.is_finite() && v > 0.0) {
            return Err(format!(
                "{}: metric `{metric}` is {v}; a ratio needs positive values",
                side.label
            ));
        }
        side.values.push(v);
        side.unit = unit;
    }
    Ok(v)
}

/// Runs one claim as a paired comparison and gives its verdict.
pub fn reproduce_claim(
    launcher: &Launcher,
    claim: &Claim,
    settings: &PairedSettings,
    observer: &mut dyn PairObserver,
) -> ClaimOutcome {
    let start = Instant::now();
    let mut outcome = ClaimOutcome {
        claim: claim.clone(),
        baseline: SideRecord::default(),
        contender: SideRecord::default(),
        ratios: Vec::new(),
        interval: None,
        verdict: Err("not run".into()),
        seconds: 0.0,
    };
    let result = (|| -> Result<Verdict, String> {
        validate_claim(launcher.catalog(), claim).map_err(|e| e.to_string())?;
        let (mut a, side_a) = start_side(launcher, claim, false, settings.forked)?;
        outcome.baseline = side_a;
        let (mut b, side_b) = start_side(launcher, claim, true, settings.forked)?;
        outcome.contender = side_b;
        for _ in 0..settings.warmup_iterations {
            measure(
                &mut a,
                &mut outcome.baseline,
                &claim.metric,
                true,
                settings.iteration_time,
            )?;
            measure(
                &mut b,
                &mut outcome.contender,
                &claim.metric,
                true,
                settings.iteration_time,
            )?;
        }
        let extra_deadline = Instant::now() + settings.budget;
        let mut pair = 0u32;
        let mut current = Verdict::Inconclusive { pairs_needed: None };
        while pair < settings.max_pairs {
            // ABBA: even pairs measure the baseline first, odd pairs the contender first.
            let (va, vb) = if pair % 2 == 0 {
                let va = measure(
                    &mut a,
                    &mut outcome.baseline,
                    &claim.metric,
                    false,
                    settings.iteration_time,
                )?;
                (
                    va,
                    measure(
                        &mut b,
                        &mut outcome.contender,
                        &claim.metric,
                        false,
                        settings.iteration_time,
                    )?,
                )
            } else {
                let vb = measure(
                    &mut b,
                    &mut outcome.contender,
                    &claim.metric,
                    false,
                    settings.iteration_time,
                )?;
                (
                    measure(
                        &mut a,
                        &mut outcome.baseline,
                        &claim.metric,
                        false,
                        settings.iteration_time,
                    )?,
                    vb,
                )
            };
            outcome.ratios.push(vb / va);
            pair += 1;
            observer.pair_done(claim, &outcome.ratios);
            if pair >= settings.min_pairs.max(2) {
                let r = ratio_interval(&outcome.ratios);
                current = verdict(claim.direction, claim.min_effect, &r);
                outcome.interval = Some(r);
                if !matches!(current, Verdict::Inconclusive { .. })
                    || Instant::now() >= extra_deadline
                {
                    break;
                }
            }
        }
        outcome.baseline.verified_after = a.finish().map_err(|e| format!("baseline: {e}"))?;
        outcome.contender.verified_after = b.finish().map_err(|e| format!("contender: {e}"))?;
        Ok(current)
    })();
    if result.is_err() {
        outcome.interval = None;
    }
    outcome.verdict = result;
    outcome.seconds = start.elapsed().as_secs_f64();
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(ratios: &[f64]) -> RatioInterval {
        ratio_interval(ratios)
    }

    #[test]
    fn ratio_interval_matches_a_hand_computed_example() {
        // log-ratios ln(2), ln(2), ln(4), ln(1): mean = ln(16)/4 = ln 2 → ratio 2.
        // sd of logs: values ln2*(1,1,2,0): mean ln2, deviations ln2*(0,0,1,-1), var = 2 ln²2 / 3,
        // sd = ln2*sqrt(2/3) = 0.565945; t(0.9995, 3) = 12.924; half = 12.924*0.565945/2 = 3.65714.
        let r = interval(&[2.0, 2.0, 4.0, 1.0]);
        assert!((r.ratio - 2.0).abs() < 1e-12);
        assert!((r.log_sd - 0.565_945).abs() < 1e-5, "{}", r.log_sd);
        assert!(
            (r.low - (2f64.ln() - 3.657_14).exp()).abs() < 1e-3,
            "{}",
            r.low
        );
        assert!(
            (r.high - (2f64.ln() + 3.657_14).exp()).abs() < 1.0,
            "{}",
            r.high
        );
    }

    #[test]
    fn verdicts_on_synthetic_ratios() {
        let clearly_beyond = interval(&[2.0, 2.1, 1.95, 2.05, 2.02, 1.98]);
        assert_eq!(
            verdict(Direction::Higher, 1.5, &clearly_beyond),
            Verdict::Reproduced
        );
        let clearly_against = interval(&[0.8, 0.82, 0.79, 0.81, 0.8, 0.805]);
        assert_eq!(
            verdict(Direction::Higher, 1.05, &clearly_against),
            Verdict::NotReproduced
        );
        let straddling = interval(&[0.9, 1.2, 1.0, 1.3, 0.95, 1.1]);
        match verdict(Direction::Higher, 1.05, &straddling) {
            Verdict::Inconclusive {
                pairs_needed: Some(n),
            } => assert!(n > 6, "{n}"),
            other => panic!("expected inconclusive with a pair estimate, got {other:?}"),
        }
        // Lower mirrors higher.
        assert_eq!(
            verdict(Direction::Lower, 0.9, &clearly_against),
            Verdict::Reproduced
        );
        assert_eq!(
            verdict(Direction::Lower, 0.9, &clearly_beyond),
            Verdict::NotReproduced
        );
    }

    #[test]
    fn a_ratio_sitting_on_the_bound_cannot_be_settled() {
        let on_bound = interval(&[0.9, 1.1, 1.0, 1.0, 0.95, 1.05]);
        let r = RatioInterval {
            ratio: 1.05,
            ..on_bound
        };
        assert_eq!(
            verdict(Direction::Higher, 1.05, &r),
            Verdict::Inconclusive { pairs_needed: None }
        );
    }
}
