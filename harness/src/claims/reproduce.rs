//! Reproduction of claims: replicated paired measurements, an interval over the replicates, and
//! a verdict.
//!
//! The unit of replication is the process pair (Kalibera & Jones' execution level): a claim's
//! sides run in P rounds of fresh processes, m ABBA blocks inside each ([`super::measure`]). Per
//! round, the mean log ratio contender/baseline of the claim's metric; the estimate is the mean
//! over rounds, its interval a Student t with P - 1 degrees of freedom, mapped back with `exp`.
//! Deterministic simulations replicate over seeds instead: one iteration per seed, no warmup,
//! no ABBA, looks at `seeds` and `max_seeds`. Claims that share a configuration are measured
//! together and derive their verdicts from the same rounds.
//!
//! Verdicts, for a ratio claim "contender/baseline >= m" (`higher`; `lower` mirrors it):
//! REPRODUCED when the whole interval is >= m, NOT REPRODUCED when it is entirely below m,
//! INCONCLUSIVE when it straddles m. A count claim ("none against some") is REPRODUCED when the
//! contender counts zero in every replicate and the baseline at least `k` in every one. NOT
//! TESTABLE HERE when the machine lacks what the claim requires, or a positive control fails.
//!
//! Repeated looks: a group measures a pilot of `min_pairs` rounds, then more in steps of
//! `look_every` up to `max_pairs` while a claim is inconclusive and the budget lasts. Each look
//! spends an equal share of α = 0.001 (Bonferroni over the planned looks), and a claim keeps the
//! verdict of the first look that decides it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::claims::claim::{Claim, ClaimKind, Direction};
use crate::claims::measure::{RoundPlan, RoundRecord, round_rng, run_round, run_seeds};
use crate::claims::validate::validate_claim;
use crate::run::fork::Catalog;
use crate::run::result::{IterationResult, TrialSpec};
use crate::run::runner::{Launcher, interrupted, param_product, trial_spec};
use crate::run::settings::{Mode, available_cores, resolve_threads};
use crate::stats::hierarchy::{VarianceComponents, components};
use crate::stats::poisson::{RateInterval, rate_interval};
use crate::stats::ratio::{RatioInterval, log_interval};
use crate::stats::{CONFIDENCE, t_quantile};

pub use crate::claims::measure::BlockRecord;

/// How long and how often claims are measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedSettings {
    /// Warmup iterations per process, after setup, before its first block.
    pub warmup_iterations: u32,
    /// Rounds of fresh processes in the pilot (the first look).
    pub min_pairs: u32,
    /// Rounds after which an inconclusive claim stays inconclusive (the last look).
    pub max_pairs: u32,
    /// Rounds between looks after the pilot.
    pub look_every: u32,
    /// ABBA blocks per round (even: as many A-B as B-A orders).
    pub blocks: u32,
    /// Length of every iteration.
    pub iteration_time: Duration,
    /// Wall-time budget per claim for rounds beyond the pilot.
    pub budget: Duration,
    /// Run each side in a fork (needed for environment overrides such as `RUST_BACKTRACE`).
    pub forked: bool,
    /// Seeds (replicates) of a deterministic claim at its first look.
    pub seeds: u32,
    /// Seeds at the last look, for a deterministic claim still undecided at `seeds`.
    pub max_seeds: u32,
    /// The seed of every random choice of the run (launch orders, block orders, padding).
    pub seed: u64,
}

impl PairedSettings {
    /// The default: every claim's verdict in a few minutes on 2 cores.
    pub fn quick() -> Self {
        PairedSettings {
            warmup_iterations: 1,
            min_pairs: 5,
            max_pairs: 8,
            look_every: 3,
            blocks: 2,
            iteration_time: Duration::from_millis(200),
            budget: Duration::from_secs(6),
            forked: true,
            seeds: 3,
            max_seeds: 8,
            seed: 0,
        }
    }

    /// JMH-like durations: 5 warmups, 10–30 rounds of 4 blocks of 2 s, 10–30 seeds.
    pub fn full() -> Self {
        PairedSettings {
            warmup_iterations: 5,
            min_pairs: 10,
            max_pairs: 30,
            look_every: 5,
            blocks: 4,
            iteration_time: Duration::from_secs(2),
            budget: Duration::from_secs(120),
            forked: true,
            seeds: 10,
            max_seeds: 30,
            seed: 0,
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

    /// The seed counts at which a deterministic claim's verdict is looked at: `seeds`, then
    /// `max_seeds` (a simulation's seeds are cheap next to process rounds, so one more look).
    pub fn seed_looks(&self) -> Vec<u32> {
        let first = self.seeds.max(2);
        let mut looks = vec![first, self.max_seeds.max(first)];
        looks.dedup();
        looks
    }

    /// The confidence of each look: 99.9% over the whole sequence, split equally.
    pub fn look_confidence(&self) -> f64 {
        1.0 - (1.0 - CONFIDENCE) / self.looks().len() as f64
    }
}

/// The outcome of the measurements against the claimed effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Verdict {
    /// The interval lies entirely beyond the claimed effect (count: none against some).
    Reproduced,
    /// The interval lies entirely on the other side of the claimed effect.
    NotReproduced,
    /// The interval straddles the claimed effect.
    Inconclusive {
        /// Roughly how many replicates in all would settle it at the current spread, if any.
        pairs_needed: Option<u64>,
    },
    /// This machine cannot test the claim: it lacks what the claim requires, or the claim's
    /// positive control does not show its effect here.
    NotTestable {
        /// What is missing.
        reason: String,
    },
}

impl Verdict {
    /// The word printed in tables.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Reproduced => "REPRODUCED",
            Verdict::NotReproduced => "NOT REPRODUCED",
            Verdict::Inconclusive { .. } => "INCONCLUSIVE",
            Verdict::NotTestable { .. } => "NOT TESTABLE HERE",
        }
    }

    fn decided(&self) -> bool {
        matches!(self, Verdict::Reproduced | Verdict::NotReproduced)
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
        // Replicates needed for the half-width to shrink below the distance to the bound, at
        // the current spread (a rough guide: the t quantile also shrinks as n grows).
        let distance = (r.ratio.ln() - min_effect.ln()).abs();
        let pairs_needed = (distance > 1e-12 && r.log_sd.is_finite() && r.n >= 2).then(|| {
            let t = t_quantile(r.confidence, (r.n - 1).max(1) as f64);
            ((t * r.log_sd / distance).powi(2))
                .ceil()
                .max(r.n as f64 + 1.0) as u64
        });
        Verdict::Inconclusive { pairs_needed }
    }
}

/// One side's measurements.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideRecord {
    /// Scenario, parameters and threads, for display.
    pub label: String,
    /// Check values before measuring, one per process (or the one trial of a seeded side).
    pub verified_before: Vec<String>,
    /// Check values after measuring, likewise.
    pub verified_after: Vec<String>,
    /// The claim's metric per measured iteration, in replicate and block order.
    #[serde(with = "crate::format::nullable::vec_f64_or_null")]
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

/// One replicate of a claim: a round of fresh processes, or a seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replicate {
    /// The seed offset of a deterministic replicate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Whether the baseline's process was launched before the contender's.
    pub baseline_launched_first: bool,
    /// Environment padding of the baseline's and the contender's processes, in bytes.
    pub env_pad: (usize, usize),
    /// Per block: both sides' values and which ran first.
    pub blocks: Vec<BlockValue>,
    /// The replicate's mean log ratio contender/baseline (NaN, `null` in JSON, when a value is
    /// not positive).
    #[serde(with = "crate::format::nullable::f64_or_null")]
    pub mean_log_ratio: f64,
}

/// One block of one replicate, as the claim's metric saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BlockValue {
    /// The baseline's value.
    #[serde(with = "crate::format::nullable::f64_or_null")]
    pub baseline: f64,
    /// The contender's value.
    #[serde(with = "crate::format::nullable::f64_or_null")]
    pub contender: f64,
    /// Whether the baseline ran first in the block.
    pub baseline_first: bool,
}

/// What a count claim counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountSummary {
    /// Baseline count per replicate.
    pub baseline: Vec<u64>,
    /// Contender count per replicate.
    pub contender: Vec<u64>,
    /// The baseline's rate per 1,000 operations with its exact 99.9% interval.
    pub baseline_rate: Option<RateInterval>,
    /// The contender's rate likewise.
    pub contender_rate: Option<RateInterval>,
}

/// Everything `reproduce` learned about one claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimOutcome {
    /// The claim.
    pub claim: Claim,
    /// `process-pair` or `seed`: what a replicate is.
    pub replicate_kind: String,
    /// The baseline side.
    pub baseline: SideRecord,
    /// The contender side.
    pub contender: SideRecord,
    /// Every replicate, so that a reader can recompute the interval.
    pub replicates: Vec<Replicate>,
    /// The ratio and its interval (ratio claims; also reported for count claims when defined).
    pub interval: Option<RatioInterval>,
    /// Within- and between-replicate variance of the block log ratios (process pairs only).
    pub components: Option<VarianceComponents>,
    /// The blocks per pair Kalibera's formula recommends from the measured costs.
    pub optimal_blocks: Option<u64>,
    /// What a count claim counted.
    pub counts: Option<CountSummary>,
    /// The looks taken (rounds at each).
    pub looks: Vec<u32>,
    /// The verdict, or why there is none (a failed check is never a verdict).
    pub verdict: Result<Verdict, String>,
    /// Wall time of the measurements this claim was derived from (shared with `group`).
    pub seconds: f64,
    /// The claims derived from the same measurements (this one included).
    pub group: Vec<String>,
}

impl ClaimOutcome {
    fn new(claim: &Claim) -> Self {
        ClaimOutcome {
            claim: claim.clone(),
            replicate_kind: String::new(),
            baseline: SideRecord::default(),
            contender: SideRecord::default(),
            replicates: Vec::new(),
            interval: None,
            components: None,
            optimal_blocks: None,
            counts: None,
            looks: Vec::new(),
            verdict: Err("not run".into()),
            seconds: 0.0,
            group: vec![claim.id.clone()],
        }
    }
}

/// Picks the claim's metric out of one iteration (`primary`, `ops`, or a secondary metric).
pub fn metric_of(metric: &str, it: &IterationResult) -> Result<(f64, String), String> {
    if metric == "primary" {
        return Ok((it.score, it.unit.clone()));
    }
    if let Some(m) = it.secondary.iter().find(|m| m.name == metric) {
        return Ok((m.value, m.unit.clone()));
    }
    if metric == "ops" {
        return Ok((it.ops as f64, "ops".into()));
    }
    let names: Vec<_> = it.secondary.iter().map(|m| m.name.as_str()).collect();
    Err(format!(
        "the scenario reports no metric `{metric}`; it reports: primary, ops, {}",
        names.join(", ")
    ))
}

/// Progress callbacks.
pub trait PairObserver {
    /// A replicate of the group of `claims` completed: `done` of at most `planned`.
    fn replicate_done(&mut self, _claims: &[String], _done: u32, _planned: u32) {}
}

impl PairObserver for crate::run::runner::Silent {}

/// The trial spec of one side of a claim: its parameters over the scenario's first defaults.
fn side_spec(catalog: &Catalog, claim: &Claim, contender: bool) -> Result<TrialSpec, String> {
    let (scenario_name, params, threads, env) = claim.side(contender);
    let scenario = catalog
        .find(&scenario_name)
        .ok_or_else(|| format!("unknown scenario `{scenario_name}`"))?;
    let mut overrides: BTreeMap<String, Vec<String>> = params
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
    Ok(trial_spec(
        scenario,
        params,
        threads,
        Mode::Throughput,
        &env,
    ))
}

fn label(spec: &TrialSpec) -> String {
    format!("{} [{}] t={}", spec.scenario, spec.params, spec.threads)
}

/// What the claim requires that this machine lacks, if anything.
fn unmet_requirement(claim: &Claim, specs: [&TrialSpec; 2]) -> Option<String> {
    let cores = available_cores();
    if let Some(need) = claim.requires.cores
        && cores < need
    {
        return Some(format!(
            "needs at least {need} cores; this machine has {cores}"
        ));
    }
    if claim.requires.threads_within_cores {
        let threads = specs.iter().map(|s| s.threads).max().unwrap_or(1);
        if threads > cores {
            return Some(format!(
                "needs every side's threads ({threads}) within the cores ({cores}), so that blocked time can show"
            ));
        }
    }
    None
}

/// A claim ready to measure: its outcome so far and its arms.
struct Planned {
    outcome: ClaimOutcome,
    arms: Option<(usize, usize)>,
    /// A claim whose sides are programs, measured on its own.
    command: bool,
}

/// Reproduces `selected` claims (with the positive controls they name, taken from `all`):
/// measures every distinct configuration once, derives each claim from it, and gives each a
/// verdict. Outcomes come in run order: each control before the claims that need it.
pub fn reproduce_claims(
    launcher: &Launcher,
    selected: &[Claim],
    all: &[Claim],
    settings: &PairedSettings,
    observer: &mut dyn PairObserver,
) -> Vec<ClaimOutcome> {
    // Controls first, then the selected claims; each once.
    let mut order: Vec<Claim> = Vec::new();
    for c in selected {
        if let Some(control) = &c.control
            && let Some(k) = all.iter().chain(selected).find(|o| &o.id == control)
            && !order.iter().any(|o| o.id == k.id)
        {
            order.push(k.clone());
        }
        if !order.iter().any(|o| o.id == c.id) {
            order.push(c.clone());
        }
    }
    let catalog = launcher.catalog();
    let mut arms: Vec<TrialSpec> = Vec::new();
    let mut arm_of = |spec: TrialSpec| -> usize {
        match arms.iter().position(|a| *a == spec) {
            Some(i) => i,
            None => {
                arms.push(spec);
                arms.len() - 1
            }
        }
    };
    let mut planned: Vec<Planned> = Vec::new();
    for claim in &order {
        let mut outcome = ClaimOutcome::new(claim);
        if let (Some(a), Some(b)) = (&claim.baseline.command, &claim.contender.command) {
            outcome.baseline.label = a.label();
            outcome.contender.label = b.label();
            let runnable = match claim.requires.cores {
                Some(need) if available_cores() < need => {
                    outcome.verdict = Ok(Verdict::NotTestable {
                        reason: format!(
                            "needs at least {need} cores; this machine has {}",
                            available_cores()
                        ),
                    });
                    false
                }
                _ => true,
            };
            planned.push(Planned {
                outcome,
                arms: None,
                command: runnable,
            });
            continue;
        }
        let specs = validate_claim(catalog, claim)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                Ok((
                    side_spec(catalog, claim, false)?,
                    side_spec(catalog, claim, true)?,
                ))
            });
        let arms_of_claim = match specs {
            Err(e) => {
                outcome.verdict = Err(e);
                None
            }
            Ok((a, b)) => {
                outcome.baseline.label = label(&a);
                outcome.contender.label = label(&b);
                if let Some(reason) = unmet_requirement(claim, [&a, &b]) {
                    outcome.verdict = Ok(Verdict::NotTestable { reason });
                    None
                } else {
                    Some((arm_of(a), arm_of(b)))
                }
            }
        };
        planned.push(Planned {
            outcome,
            arms: arms_of_claim,
            command: false,
        });
    }
    // Groups: claims connected through shared arms.
    let mut group_of: Vec<Option<usize>> = vec![None; planned.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..planned.len() {
        let Some((a, b)) = planned[i].arms else {
            continue;
        };
        let joined: Vec<usize> = (0..i)
            .filter(|&j| {
                planned[j]
                    .arms
                    .is_some_and(|(x, y)| [x, y].contains(&a) || [x, y].contains(&b))
            })
            .filter_map(|j| group_of[j])
            .collect();
        let g = match joined.first() {
            Some(&g) => g,
            None => {
                groups.push(Vec::new());
                groups.len() - 1
            }
        };
        // Merge any other group this claim connects.
        for &other in joined.iter().skip(1) {
            if other != g {
                let moved = std::mem::take(&mut groups[other]);
                for &j in &moved {
                    group_of[j] = Some(g);
                }
                groups[g].extend(moved);
            }
        }
        groups[g].push(i);
        group_of[i] = Some(g);
    }
    let deterministic = |arm: usize| {
        catalog
            .find(&arms[arm].scenario)
            .is_some_and(|s| s.deterministic(&arms[arm].params))
    };
    for (gi, members) in groups.iter().enumerate() {
        if members.is_empty() {
            continue;
        }
        if interrupted() {
            for &i in members {
                planned[i].outcome.verdict = Err("interrupted".into());
            }
            continue;
        }
        let mut group_arms: Vec<usize> = Vec::new();
        for &i in members {
            let (a, b) = planned[i].arms.expect("grouped claims have arms");
            for x in [a, b] {
                if !group_arms.contains(&x) {
                    group_arms.push(x);
                }
            }
        }
        let ids: Vec<String> = members
            .iter()
            .map(|&i| planned[i].outcome.claim.id.clone())
            .collect();
        let start = Instant::now();
        if group_arms.iter().all(|&a| deterministic(a)) {
            measure_seeded(
                launcher,
                &arms,
                &group_arms,
                members,
                &mut planned,
                settings,
                &ids,
                observer,
            );
        } else {
            measure_rounds(
                launcher,
                &arms,
                &group_arms,
                members,
                &mut planned,
                settings,
                gi,
                &ids,
                observer,
            );
        }
        let seconds = start.elapsed().as_secs_f64();
        for &i in members {
            planned[i].outcome.seconds = seconds;
            planned[i].outcome.group = ids.clone();
        }
    }
    for (ci, p) in planned.iter_mut().enumerate() {
        if p.command {
            let start = Instant::now();
            measure_commands(&mut p.outcome, settings, groups.len() + ci, observer);
            p.outcome.seconds = start.elapsed().as_secs_f64();
        }
    }
    // Positive controls: a claim whose control does not reproduce here cannot be tested here.
    let verdicts: Vec<(String, Result<Verdict, String>)> = planned
        .iter()
        .map(|p| (p.outcome.claim.id.clone(), p.outcome.verdict.clone()))
        .collect();
    for p in &mut planned {
        let Some(control) = p.outcome.claim.control.clone() else {
            continue;
        };
        if p.outcome.verdict.is_err() {
            continue;
        }
        let control_verdict = verdicts
            .iter()
            .find(|(id, _)| *id == control)
            .map(|(_, v)| v);
        let reason = match control_verdict {
            Some(Ok(Verdict::Reproduced)) => None,
            Some(Ok(v)) => Some(format!(
                "its positive control `{control}` is {} here, so this machine does not show the effect whose absence the claim asserts",
                v.label()
            )),
            Some(Err(e)) => Some(format!("its positive control `{control}` failed: {e}")),
            None => Some(format!("its positive control `{control}` was not run")),
        };
        if let Some(reason) = reason {
            p.outcome.verdict = Ok(Verdict::NotTestable { reason });
        }
    }
    planned.into_iter().map(|p| p.outcome).collect()
}

/// Per replicate, per block, both sides' values.
type BlockValues = Vec<Vec<BlockValue>>;

/// The per-iteration values of `metric` for arms `(a, b)` of every block of `rounds`, and
/// their unit.
fn block_values(
    rounds: &[RoundRecord],
    arms: (usize, usize),
    metric: &str,
) -> Result<(BlockValues, String), String> {
    let mut unit = String::new();
    let mut out = Vec::with_capacity(rounds.len());
    for r in rounds {
        let mut blocks = Vec::with_capacity(r.blocks.len());
        for b in &r.blocks {
            let (va, u) = metric_of(metric, &b.results[arms.0])?;
            let (vb, _) = metric_of(metric, &b.results[arms.1])?;
            unit = u;
            let a_first = b.order.iter().position(|&x| x == arms.0)
                < b.order.iter().position(|&x| x == arms.1);
            blocks.push(BlockValue {
                baseline: va,
                contender: vb,
                baseline_first: a_first,
            });
        }
        out.push(blocks);
    }
    Ok((out, unit))
}

/// Derives one claim's replicates, interval and verdict from the rounds so far, at `confidence`.
fn derive(
    outcome: &mut ClaimOutcome,
    arms: (usize, usize),
    rounds: &[RoundRecord],
    confidence: f64,
) -> Result<Verdict, String> {
    let claim = outcome.claim.clone();
    let (values, unit) = block_values(rounds, arms, &claim.metric)?;
    outcome.baseline.values = values.iter().flatten().map(|v| v.baseline).collect();
    outcome.contender.values = values.iter().flatten().map(|v| v.contender).collect();
    outcome.baseline.unit = unit.clone();
    outcome.contender.unit = unit;
    let ratio_defined = values.iter().flatten().all(|v| {
        v.baseline.is_finite() && v.contender.is_finite() && v.baseline > 0.0 && v.contender > 0.0
    });
    let logs: Vec<Vec<f64>> = values
        .iter()
        .map(|blocks| {
            blocks
                .iter()
                .map(|v| (v.contender / v.baseline).ln())
                .collect()
        })
        .collect();
    outcome.replicates = rounds
        .iter()
        .zip(&values)
        .zip(&logs)
        .map(|((r, blocks), l)| Replicate {
            seed: r.seed,
            baseline_launched_first: r.launch_order.iter().position(|&x| x == arms.0)
                < r.launch_order.iter().position(|&x| x == arms.1),
            env_pad: (
                r.env_pad.get(arms.0).copied().unwrap_or(0),
                r.env_pad.get(arms.1).copied().unwrap_or(0),
            ),
            blocks: blocks.clone(),
            mean_log_ratio: if ratio_defined {
                l.iter().sum::<f64>() / l.len() as f64
            } else {
                f64::NAN
            },
        })
        .collect();
    if ratio_defined {
        let means: Vec<f64> = outcome
            .replicates
            .iter()
            .map(|r| r.mean_log_ratio)
            .collect();
        outcome.interval = Some(log_interval(&means, confidence));
        outcome.components = components(&logs);
        let n = rounds.len().max(1) as f64;
        let pair_cost = rounds.iter().map(|r| r.setup_seconds).sum::<f64>() / n;
        let arms_per_block = rounds
            .first()
            .and_then(|r| r.blocks.first())
            .map(|b| b.results.len())
            .unwrap_or(2)
            .max(1) as f64;
        let block_cost = rounds
            .iter()
            .map(|r| r.block_seconds / r.blocks.len().max(1) as f64)
            .sum::<f64>()
            / n
            * 2.0
            / arms_per_block;
        outcome.optimal_blocks = outcome
            .components
            .and_then(|c| c.optimal_blocks(pair_cost, block_cost));
    }
    match claim.kind {
        ClaimKind::Ratio => {
            if !ratio_defined {
                return Err(format!(
                    "metric `{}` is not positive in every iteration; a ratio needs positive values (a count claim tests none against some)",
                    claim.metric
                ));
            }
            let (Some(direction), Some(min_effect)) = (claim.direction, claim.min_effect) else {
                return Err("a ratio claim without direction or min_effect".into());
            };
            Ok(verdict(
                direction,
                min_effect,
                outcome.interval.as_ref().expect("computed above"),
            ))
        }
        ClaimKind::Count => {
            let counts = |side: usize| -> Vec<u64> {
                values
                    .iter()
                    .map(|blocks| {
                        blocks
                            .iter()
                            .map(|v| if side == 0 { v.baseline } else { v.contender })
                            .sum::<f64>()
                            .round()
                            .max(0.0) as u64
                    })
                    .collect()
            };
            let (base, cont) = (counts(0), counts(1));
            let rate = |arm: usize, events: &[u64]| -> Result<Option<RateInterval>, String> {
                let Some(exposure) = &claim.exposure else {
                    return Ok(None);
                };
                let mut total = 0.0;
                for r in rounds {
                    for b in &r.blocks {
                        total += metric_of(exposure, &b.results[arm])?.0;
                    }
                }
                Ok(Some(rate_interval(
                    events.iter().sum(),
                    total,
                    1_000.0,
                    CONFIDENCE,
                )))
            };
            let k = claim.k.unwrap_or(1);
            let reproduced = cont.iter().all(|&c| c == 0) && base.iter().all(|&b| b >= k);
            outcome.counts = Some(CountSummary {
                baseline_rate: rate(arms.0, &base)?,
                contender_rate: rate(arms.1, &cont)?,
                baseline: base,
                contender: cont,
            });
            Ok(if reproduced {
                Verdict::Reproduced
            } else {
                Verdict::NotReproduced
            })
        }
    }
}

/// Measures a wall-time group in rounds of fresh processes, with looks.
#[allow(clippy::too_many_arguments)]
fn measure_rounds(
    launcher: &Launcher,
    arms: &[TrialSpec],
    group_arms: &[usize],
    members: &[usize],
    planned: &mut [Planned],
    settings: &PairedSettings,
    group_index: usize,
    ids: &[String],
    observer: &mut dyn PairObserver,
) {
    let specs: Vec<TrialSpec> = group_arms.iter().map(|&a| arms[a].clone()).collect();
    let local = |arm: usize| group_arms.iter().position(|&x| x == arm).expect("in group");
    let plan = RoundPlan {
        warmup: settings.warmup_iterations,
        blocks: (settings.blocks.max(2) as usize).div_ceil(2) * 2,
        iteration_time: settings.iteration_time,
        forked: settings.forked,
    };
    let looks = settings.looks();
    let confidence = settings.look_confidence();
    let budget_end = Instant::now() + settings.budget * members.len() as u32;
    let mut rounds: Vec<RoundRecord> = Vec::new();
    let mut checks: Vec<Vec<(String, String)>> = Vec::new();
    let mut decided: Vec<bool> = vec![false; members.len()];
    let max = *looks.last().expect("at least one look");
    for (look_index, &look) in looks.iter().enumerate() {
        if look_index > 0
            && (decided.iter().all(|d| *d) || Instant::now() >= budget_end || interrupted())
        {
            break;
        }
        while (rounds.len() as u32) < look {
            if interrupted() {
                for &i in members {
                    planned[i].outcome.verdict = Err("interrupted".into());
                }
                return;
            }
            let mut rng = round_rng(settings.seed, group_index, rounds.len());
            match run_round(launcher, &specs, plan, &mut rng) {
                Ok((record, check)) => {
                    rounds.push(record);
                    checks.push(check);
                    observer.replicate_done(ids, rounds.len() as u32, max);
                }
                Err(e) => {
                    let failed = &specs[e.arm];
                    for &i in members {
                        planned[i].outcome.verdict =
                            Err(format!("{}: {}", label(failed), e.message));
                    }
                    return;
                }
            }
        }
        for (m, &i) in members.iter().enumerate() {
            if decided[m] {
                continue;
            }
            let (a, b) = planned[i].arms.expect("grouped claims have arms");
            let outcome = &mut planned[i].outcome;
            outcome.replicate_kind = "process-pair".into();
            outcome.looks.push(look);
            let v = derive(outcome, (local(a), local(b)), &rounds, confidence);
            decided[m] = v.as_ref().map(Verdict::decided).unwrap_or(true);
            outcome.verdict = v;
            outcome.baseline.verified_before =
                checks.iter().map(|c| c[local(a)].0.clone()).collect();
            outcome.baseline.verified_after =
                checks.iter().map(|c| c[local(a)].1.clone()).collect();
            outcome.contender.verified_before =
                checks.iter().map(|c| c[local(b)].0.clone()).collect();
            outcome.contender.verified_after =
                checks.iter().map(|c| c[local(b)].1.clone()).collect();
        }
    }
}

/// Measures a claim whose sides are programs: each replicate runs both once, in a random
/// order, and compares the means of the iterations each reported; looks as for rounds.
fn measure_commands(
    outcome: &mut ClaimOutcome,
    settings: &PairedSettings,
    group_index: usize,
    observer: &mut dyn PairObserver,
) {
    let claim = outcome.claim.clone();
    let (Some(a), Some(b)) = (&claim.baseline.command, &claim.contender.command) else {
        return;
    };
    outcome.replicate_kind = "process-pair".into();
    let looks = settings.looks();
    let confidence = settings.look_confidence();
    let budget_end = Instant::now() + settings.budget;
    let max = *looks.last().expect("at least one look");
    let ids = vec![claim.id.clone()];
    let benchmark = claim.benchmark.as_deref();
    let mut reported: Option<(String, String)> = None;
    let mut rounds: Vec<RoundRecord> = Vec::new();
    for (look_index, &look) in looks.iter().enumerate() {
        if look_index > 0 && (Instant::now() >= budget_end || interrupted()) {
            break;
        }
        while (rounds.len() as u32) < look {
            if interrupted() {
                outcome.verdict = Err("interrupted".into());
                return;
            }
            let mut rng = round_rng(settings.seed, group_index, rounds.len());
            let baseline_first = rand::Rng::random_bool(&mut rng, 0.5);
            let order: [(usize, &crate::claims::command::CommandSide, &str); 2] = if baseline_first
            {
                [(0, a, "baseline"), (1, b, "contender")]
            } else {
                [(1, b, "contender"), (0, a, "baseline")]
            };
            let started = Instant::now();
            let mut results: Vec<Option<IterationResult>> = vec![None, None];
            for (slot, side, which) in order {
                let inv = match crate::claims::command::invoke(
                    side,
                    which,
                    rounds.len(),
                    benchmark,
                    &claim.metric,
                ) {
                    Ok(inv) => inv,
                    Err(e) => {
                        outcome.verdict = Err(e);
                        return;
                    }
                };
                let this = (inv.benchmark.clone(), inv.unit.clone());
                match &reported {
                    Some(first) if *first != this => {
                        outcome.verdict = Err(format!(
                            "the sides report different benchmarks or units: {} in {} against {} in {}; a claim compares one benchmark",
                            first.0, first.1, this.0, this.1
                        ));
                        return;
                    }
                    Some(_) => {}
                    None => reported = Some(this),
                }
                results[slot] = Some(IterationResult {
                    score: inv.mean(),
                    unit: inv.unit.clone(),
                    window_ns: 0,
                    ops: inv.values.len() as u64,
                    thread_ops: Vec::new(),
                    secondary: Vec::new(),
                    histogram: None,
                });
            }
            rounds.push(RoundRecord {
                seed: None,
                launch_order: if baseline_first {
                    vec![0, 1]
                } else {
                    vec![1, 0]
                },
                env_pad: vec![0, 0],
                blocks: vec![BlockRecord {
                    order: if baseline_first {
                        vec![0, 1]
                    } else {
                        vec![1, 0]
                    },
                    results: results
                        .into_iter()
                        .map(|r| r.expect("both sides ran"))
                        .collect(),
                }],
                setup_seconds: 0.0,
                block_seconds: started.elapsed().as_secs_f64(),
            });
            observer.replicate_done(&ids, rounds.len() as u32, max);
        }
        outcome.looks.push(look);
        // A command's metric was taken as its score above.
        let mut primary = claim.clone();
        primary.metric = "primary".into();
        outcome.claim = primary;
        let v = derive(outcome, (0, 1), &rounds, confidence);
        outcome.claim = claim.clone();
        let decided = v.as_ref().map(Verdict::decided).unwrap_or(true);
        outcome.verdict = v;
        if decided {
            break;
        }
    }
    outcome.baseline.verified_before = vec![format!("{} invocations", rounds.len())];
    outcome.contender.verified_before = vec![format!("{} invocations", rounds.len())];
}

/// Measures a deterministic group: each arm once per seed, two arms at a time (a simulation's
/// result does not depend on what else runs). Looks as for rounds ([`PairedSettings::seed_looks`],
/// α split equally): after each, only the arms of claims still undecided run on to the next
/// look's number of seeds. An arm whose scenario starts at its `seed` parameter runs only the
/// seeds it has not run yet (the earlier ones would reproduce exactly); one without reruns from
/// the first.
#[allow(clippy::too_many_arguments)]
fn measure_seeded(
    launcher: &Launcher,
    arms: &[TrialSpec],
    group_arms: &[usize],
    members: &[usize],
    planned: &mut [Planned],
    settings: &PairedSettings,
    ids: &[String],
    observer: &mut dyn PairObserver,
) {
    type Seeded = Result<crate::claims::measure::SeededRun, String>;
    let mut results: Vec<Option<Seeded>> = (0..group_arms.len()).map(|_| None).collect();
    let local = |arm: usize| group_arms.iter().position(|&x| x == arm).expect("in group");
    let looks = settings.seed_looks();
    let confidence = 1.0 - (1.0 - CONFIDENCE) / looks.len() as f64;
    let mut undecided: Vec<usize> = members.to_vec();
    for &seeds in &looks {
        let mut to_run: Vec<usize> = Vec::new();
        for &i in &undecided {
            let (a, b) = planned[i].arms.expect("grouped claims have arms");
            for x in [local(a), local(b)] {
                if !to_run.contains(&x) {
                    to_run.push(x);
                }
            }
        }
        // What the last look measured of each arm, for the runs that continue it.
        let earlier: Vec<Option<crate::claims::measure::SeededRun>> = results
            .iter()
            .map(|r| r.as_ref().and_then(|r| r.as_ref().ok()).cloned())
            .collect();
        // Two workers take arms from one queue, so neither waits for the other's slow arm;
        // this thread collects their results and reports progress.
        let workers = available_cores().clamp(1, 2);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Seeded)>();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let tx = tx.clone();
                let (next, to_run, earlier) = (&next, &to_run, &earlier);
                scope.spawn(move || {
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if k >= to_run.len() || interrupted() {
                            break;
                        }
                        let spec = &arms[group_arms[to_run[k]]];
                        let done = earlier[to_run[k]].as_ref().and_then(|d| {
                            continued(spec, d.iterations.len()).map(|rest| (d, rest))
                        });
                        let r = match done {
                            Some((d, rest)) => {
                                let more = seeds.saturating_sub(d.iterations.len() as u32);
                                run_seeds(launcher, &rest, more, settings.forked)
                                    .map(|r| d.followed_by(r))
                            }
                            None => run_seeds(launcher, spec, seeds, settings.forked),
                        };
                        if tx.send((to_run[k], r)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut count = 0u32;
            for (g, r) in rx {
                results[g] = Some(r);
                count += 1;
                observer.replicate_done(ids, count, to_run.len() as u32);
            }
        });
        for &i in &undecided {
            let (a, b) = planned[i].arms.expect("grouped claims have arms");
            let outcome = &mut planned[i].outcome;
            outcome.replicate_kind = "seed".into();
            outcome.looks.push(seeds);
            let (ra, rb) = match (&results[local(a)], &results[local(b)]) {
                (Some(Ok(ra)), Some(Ok(rb))) => (ra, rb),
                (Some(Err(e)), _) => {
                    outcome.verdict = Err(format!("{}: {e}", label(&arms[a])));
                    continue;
                }
                (_, Some(Err(e))) => {
                    outcome.verdict = Err(format!("{}: {e}", label(&arms[b])));
                    continue;
                }
                _ => {
                    outcome.verdict = Err("interrupted".into());
                    continue;
                }
            };
            // One replicate per seed: a "round" of one block with both arms' iteration of that
            // seed.
            let rounds: Vec<RoundRecord> = (0..seeds as usize)
                .map(|s| RoundRecord {
                    seed: Some(s as u64),
                    launch_order: vec![0, 1],
                    env_pad: vec![0, 0],
                    blocks: vec![BlockRecord {
                        order: vec![0, 1],
                        results: vec![ra.iterations[s].clone(), rb.iterations[s].clone()],
                    }],
                    setup_seconds: 0.0,
                    block_seconds: 0.0,
                })
                .collect();
            outcome.verdict = derive(outcome, (0, 1), &rounds, confidence);
            outcome.baseline.verified_before = vec![ra.checks.0.clone()];
            outcome.baseline.verified_after = vec![ra.checks.1.clone()];
            outcome.contender.verified_before = vec![rb.checks.0.clone()];
            outcome.contender.verified_after = vec![rb.checks.1.clone()];
        }
        undecided.retain(|&i| {
            let v = &planned[i].outcome.verdict;
            !v.as_ref().map(Verdict::decided).unwrap_or(true)
        });
        if undecided.is_empty() || interrupted() {
            break;
        }
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
    use crate::stats::ratio::ratio_interval;

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

    #[test]
    fn looks_split_alpha_over_the_planned_looks() {
        let q = PairedSettings::quick();
        assert_eq!(q.looks(), vec![5, 8]);
        assert!((q.look_confidence() - 0.9995).abs() < 1e-12);
        let f = PairedSettings::full();
        assert_eq!(f.looks(), vec![10, 15, 20, 25, 30]);
        assert!((f.look_confidence() - 0.9998).abs() < 1e-12);
    }

    /// A small deterministic generator for the coverage study (no wall time, no OS randomness).
    struct Lcg(u64);
    impl Lcg {
        fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        /// A standard normal draw (Box–Muller).
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    }

    #[test]
    fn pair_means_cover_the_truth_and_pooled_blocks_do_not() {
        // True log ratio 0.2; each process pair has its own offset (between-pair sd 0.1), each
        // block its own noise (within-pair sd 0.02): ρ ≈ 0.96, the registry claims' regime.
        let truth = 0.2;
        let (pairs, blocks, runs) = (6, 8, 2_000);
        let mut rng = Lcg(42);
        let (mut pair_misses, mut pooled_misses) = (0, 0);
        for _ in 0..runs {
            let data: Vec<Vec<f64>> = (0..pairs)
                .map(|_| {
                    let offset = 0.1 * rng.normal();
                    (0..blocks)
                        .map(|_| truth + offset + 0.02 * rng.normal())
                        .collect()
                })
                .collect();
            let means: Vec<f64> = data
                .iter()
                .map(|b| b.iter().sum::<f64>() / b.len() as f64)
                .collect();
            let r = log_interval(&means, CONFIDENCE);
            if !(r.low.ln() <= truth && truth <= r.high.ln()) {
                pair_misses += 1;
            }
            // The old method: every block of ONE pair as if independent.
            let one_pair = log_interval(&data[0], CONFIDENCE);
            if !(one_pair.low.ln() <= truth && truth <= one_pair.high.ln()) {
                pooled_misses += 1;
            }
        }
        // Nominal 99.9%: about 2 misses in 2,000; allow sampling noise up to 1%.
        assert!(
            pair_misses <= 20,
            "pair-mean interval missed {pair_misses} of {runs}"
        );
        // The single-pair interval misses most of the time: it ignores the between-pair offset.
        assert!(
            pooled_misses > runs / 2,
            "the single-pair interval missed only {pooled_misses} of {runs}"
        );
    }
}
