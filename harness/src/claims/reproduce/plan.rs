//! What a `reproduce` run will measure, before anything runs: the settings and the look
//! schedule, each claim's arms (the configurations its sides run), and the groups of claims
//! that share arms and so are measured together.
//!
//! A group's index seeds the randomness of its rounds ([`crate::claims::measure::round_rng`]),
//! so the grouping is part of what a run's seed replays: claims are taken in run order, and
//! groups keep their index when another is merged into them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::claims::claim::{Claim, ResolvedSide, Role};
use crate::claims::validate::validate_claim;
use crate::run::fork::Catalog;
use crate::run::result::TrialSpec;
use crate::run::runner::{param_product, trial_spec};
use crate::run::settings::{Mode, available_cores, resolve_threads};
use crate::stats::CONFIDENCE;
use crate::stats::spending::{look_alphas, look_alphas_after};

use super::outcome::{ClaimOutcome, ReplicateKind, Verdict};

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

/// When a group's verdicts are looked at, and at what confidence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LookSchedule {
    /// Replicates at each look, increasing.
    pub looks: Vec<u32>,
    /// The confidence of each look's interval, one per look: 1 − the α the look spends.
    pub confidence: Vec<f64>,
    /// Wall time after which no look beyond the first is taken (`None`: no limit).
    pub budget: Option<Duration>,
    /// How the looks after the pilot may be planned again from its measured cost (`None`:
    /// they stay as planned).
    pub growth: Option<Growth>,
    /// The log half-width below which a decided ratio claim needs no further look (`None`: a
    /// group stops once every claim is decided).
    pub precision: Option<f64>,
}

/// How far a schedule's last look may move out after the pilot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Growth {
    /// The most replicates at the last look.
    pub most: u32,
    /// Replicates between looks after the pilot.
    pub step: u32,
    /// The family-wise α the looks spend.
    pub alpha: f64,
}

/// The last look's replicates for a pilot of `pilot` replicates that took `seconds` each, a
/// `budget` of wall seconds for the rest, a planned last look at `planned` and at most `most`:
/// the pilot plus as many as the budget affords, never before `planned` (the floor every group
/// gets, however dear its replicates: a JVM per invocation) nor beyond `most`. The choice
/// depends only on costs, never on the values measured, so it cannot steer a verdict.
pub(crate) fn last_look(pilot: u32, seconds: f64, budget: f64, planned: u32, most: u32) -> u32 {
    affordable(pilot, seconds, budget).clamp(planned, most.max(planned))
}

/// The pilot's `pilot` replicates plus as many more as `budget` wall seconds afford at
/// `seconds` each (unbounded when a replicate cost nothing measurable).
fn affordable(pilot: u32, seconds: f64, budget: f64) -> u32 {
    let more = if seconds > 0.0 && seconds.is_finite() {
        (budget / seconds).floor().min(f64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    };
    pilot.saturating_add(more)
}

impl LookSchedule {
    /// Looks at `looks` replicates that spend a family-wise `alpha` by the Lan-DeMets
    /// O'Brien-Fleming-type function over the information fraction (replicates at a look over
    /// replicates at the last): little at the first looks, nearly all at the last
    /// ([`look_alphas`]). A budget that ends the looks early leaves the rest unspent.
    pub fn spending(looks: Vec<u32>, alpha: f64, budget: Option<Duration>) -> LookSchedule {
        let confidence = look_alphas(&looks, alpha)
            .into_iter()
            .map(|a| 1.0 - a)
            .collect();
        LookSchedule {
            looks,
            confidence,
            budget,
            growth: None,
            precision: None,
        }
    }

    /// Plans the looks after the pilot (the first look, taken) again from the `seconds` each of
    /// its replicates took: the last at [`last_look`], looks every `step` before it, and the α
    /// the pilot did not spend shared over them by the same O'Brien-Fleming shape
    /// ([`look_alphas_after`]). The pilot's α was fixed before, so the looks spend α in all
    /// whatever is chosen. Without growth, a budget or a look after the pilot the schedule
    /// stays as it is. Why the last look is where it is, in words.
    pub fn after_pilot(&mut self, seconds: f64) -> String {
        let (Some(growth), Some(budget), Some(&pilot), Some(&planned)) = (
            self.growth,
            self.budget,
            self.looks.first(),
            self.looks.last(),
        ) else {
            return "planned before the pilot".into();
        };
        if self.looks.len() < 2 {
            return "a single look, planned before the pilot".into();
        }
        let budget = budget.as_secs_f64();
        let last = last_look(pilot, seconds, budget, planned, growth.most);
        let why = if affordable(pilot, seconds, budget) < planned {
            format!("the budget ({budget:.0} s) affords less; every group gets {planned}")
        } else if last == planned {
            format!("the budget ({budget:.0} s) affords no more")
        } else if last == growth.most.max(planned) {
            format!("the budget ({budget:.0} s) affords more; at most {last}")
        } else {
            format!("as many as the budget ({budget:.0} s) affords")
        };
        if last != planned {
            let mut later: Vec<u32> = (1..)
                .map(|k| pilot + k * growth.step)
                .take_while(|&n| n < last)
                .collect();
            later.push(last);
            let alphas = look_alphas_after(1.0 - self.confidence[0], pilot, &later, growth.alpha);
            self.looks.truncate(1);
            self.confidence.truncate(1);
            self.looks.extend(later);
            self.confidence.extend(alphas.into_iter().map(|a| 1.0 - a));
        }
        format!("last look at {last}: {why}")
    }

    /// The confidence of the interval at look `index` (counted from 0).
    pub fn confidence_at(&self, index: usize) -> f64 {
        self.confidence[index]
    }
}

/// The claims to run: each selected claim after its positive control, that control after its
/// own, and so on (controls taken from `all`, or from `selected`), each once.
pub(crate) fn run_order(selected: &[Claim], all: &[Claim]) -> Vec<Claim> {
    /// Pushes `claim` after its chain of controls; `visiting` stops at a cycle.
    fn push<'a>(
        claim: &'a Claim,
        selected: &'a [Claim],
        all: &'a [Claim],
        visiting: &mut Vec<&'a str>,
        order: &mut Vec<Claim>,
    ) {
        if order.iter().any(|o| o.id == claim.id) || visiting.contains(&claim.id.as_str()) {
            return;
        }
        visiting.push(&claim.id);
        if let Some(control) = &claim.control
            && let Some(k) = all.iter().chain(selected).find(|o| &o.id == control)
        {
            push(k, selected, all, visiting, order);
        }
        visiting.pop();
        order.push(claim.clone());
    }
    let mut order: Vec<Claim> = Vec::new();
    for c in selected {
        push(c, selected, all, &mut Vec::new(), &mut order);
    }
    order
}

/// The environment variable that tells the two sides of an A/A claim apart (`a`, `b`); the
/// scenario never reads it.
pub const AA_SIDE: &str = "CRITSEC_AA_SIDE";

/// The trial spec of one side of a claim: its parameters over the scenario's first defaults.
fn side_spec(catalog: &Catalog, claim: &Claim, role: Role) -> Result<TrialSpec, String> {
    let ResolvedSide {
        scenario: scenario_name,
        params,
        threads,
        env,
    } = claim.resolved(role);
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
    let mut env: Vec<(String, String)> = env.into_iter().collect();
    if claim.aa {
        // Two processes of one configuration: the marker keeps them two arms (arms that are
        // equal are measured once), with values of the same length on both sides.
        let side = match role {
            Role::Baseline => "a",
            Role::Contender => "b",
        };
        env.push((AA_SIDE.to_string(), side.to_string()));
    }
    Ok(trial_spec(
        scenario,
        params,
        threads,
        Mode::Throughput,
        &env,
    ))
}

/// A side's label: scenario, parameters and threads.
pub(crate) fn label(spec: &TrialSpec) -> String {
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

/// The groups of claims connected through shared arms, from each claim's arms (`None`: the
/// claim measures nothing). Claims join groups in order; a claim that connects several groups
/// merges the later ones into the first it shares an arm with, after its members, and leaves
/// them empty: a group's index never changes, and empty groups keep theirs.
pub(crate) fn group_by_shared_arms(arms: &[Option<(usize, usize)>]) -> Vec<Vec<usize>> {
    let mut group_of: Vec<Option<usize>> = vec![None; arms.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, claim_arms) in arms.iter().enumerate() {
        let Some((a, b)) = *claim_arms else {
            continue;
        };
        let joined: Vec<usize> = (0..i)
            .filter(|&j| arms[j].is_some_and(|(x, y)| [x, y].contains(&a) || [x, y].contains(&b)))
            .filter_map(|j| group_of[j])
            .collect();
        let g = match joined.first() {
            Some(&g) => g,
            None => {
                groups.push(Vec::new());
                groups.len() - 1
            }
        };
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
    groups
}

/// How a group's replicates are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupKind {
    /// Rounds of fresh processes, one per arm (wall-time scenarios).
    Rounds,
    /// One trial per arm, one iteration per seed (deterministic simulations).
    Seeds,
    /// One claim whose sides are programs, each invoked once per replicate.
    Invocations,
}

impl GroupKind {
    /// What one replicate is, as the outcome names it.
    pub fn replicate_kind(self) -> ReplicateKind {
        match self {
            GroupKind::Seeds => ReplicateKind::Seed,
            GroupKind::Rounds | GroupKind::Invocations => ReplicateKind::ProcessPair,
        }
    }
}

/// Claims measured together.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    /// How its replicates are measured.
    pub kind: GroupKind,
    /// The claims, as indices into the run's outcomes.
    pub members: Vec<usize>,
    /// The group's arms (indices into [`Plan::arms`]), in the order its rounds see them; none
    /// for claims on programs.
    pub arms: Vec<usize>,
    /// Each member's baseline and contender arm, as indices into `arms`.
    pub claim_arms: Vec<(usize, usize)>,
    /// The index the group's random choices are drawn from.
    pub rng_index: usize,
}

/// A run's plan: every claim's outcome so far (a claim that cannot run already has its
/// verdict), the distinct arms, and the groups to measure in order.
pub(crate) struct Plan {
    /// One per claim, in run order.
    pub outcomes: Vec<ClaimOutcome>,
    /// Every distinct configuration a scenario side runs.
    pub arms: Vec<TrialSpec>,
    /// The groups: claims on scenarios first, then each claim whose sides are programs.
    pub groups: Vec<Group>,
}

impl Plan {
    /// Plans `claims` (in run order) against `catalog`.
    pub fn new(catalog: &Catalog, claims: &[Claim]) -> Plan {
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
        let mut outcomes: Vec<ClaimOutcome> = Vec::with_capacity(claims.len());
        let mut claim_arms: Vec<Option<(usize, usize)>> = Vec::with_capacity(claims.len());
        let mut commands: Vec<usize> = Vec::new();
        for claim in claims {
            let mut outcome = ClaimOutcome::new(claim);
            let mut arms_of_claim = None;
            if let (Some(a), Some(b)) = (&claim.baseline.command, &claim.contender.command) {
                outcome.baseline.label = a.label();
                outcome.contender.label = b.label();
                match claim.requires.cores {
                    Some(need) if available_cores() < need => {
                        outcome.verdict = Ok(Verdict::NotTestable {
                            reason: format!(
                                "needs at least {need} cores; this machine has {}",
                                available_cores()
                            ),
                        });
                    }
                    _ => {
                        // Known before it runs: a failure on the first invocation is still a
                        // failure of a process pair.
                        outcome.replicate_kind = GroupKind::Invocations.replicate_kind();
                        commands.push(outcomes.len());
                    }
                }
            } else {
                let specs = validate_claim(catalog, claim)
                    .map_err(|e| e.to_string())
                    .and_then(|()| {
                        Ok((
                            side_spec(catalog, claim, Role::Baseline)?,
                            side_spec(catalog, claim, Role::Contender)?,
                        ))
                    });
                match specs {
                    Err(e) => outcome.verdict = Err(e),
                    Ok((a, b)) => {
                        outcome.baseline.label = label(&a);
                        outcome.contender.label = label(&b);
                        if let Some(reason) = unmet_requirement(claim, [&a, &b]) {
                            outcome.verdict = Ok(Verdict::NotTestable { reason });
                        } else {
                            arms_of_claim = Some((arm_of(a), arm_of(b)));
                        }
                    }
                }
            }
            outcomes.push(outcome);
            claim_arms.push(arms_of_claim);
        }
        let shared = group_by_shared_arms(&claim_arms);
        let mut groups: Vec<Group> = Vec::new();
        for (rng_index, members) in shared.iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let mut group_arms: Vec<usize> = Vec::new();
            for &i in members {
                let (a, b) = claim_arms[i].expect("grouped claims have arms");
                for x in [a, b] {
                    if !group_arms.contains(&x) {
                        group_arms.push(x);
                    }
                }
            }
            let local = |arm: usize| group_arms.iter().position(|&x| x == arm).expect("in group");
            let seeded = group_arms.iter().all(|&a| {
                catalog
                    .find(&arms[a].scenario)
                    .is_some_and(|s| s.deterministic(&arms[a].params))
            });
            groups.push(Group {
                kind: if seeded {
                    GroupKind::Seeds
                } else {
                    GroupKind::Rounds
                },
                claim_arms: members
                    .iter()
                    .map(|&i| {
                        let (a, b) = claim_arms[i].expect("grouped claims have arms");
                        (local(a), local(b))
                    })
                    .collect(),
                members: members.clone(),
                arms: group_arms,
                rng_index,
            });
        }
        // Each claim on programs after every group, its randomness indexed past theirs.
        for i in commands {
            groups.push(Group {
                kind: GroupKind::Invocations,
                members: vec![i],
                arms: Vec::new(),
                claim_arms: Vec::new(),
                rng_index: shared.len() + i,
            });
        }
        Plan {
            outcomes,
            arms,
            groups,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_claim_joining_two_groups_merges_the_later_into_the_earlier_which_keeps_its_index() {
        // 0: arms 0-1; 1: arms 2-3; 2: arms 4-5; 3: arms 1-2 joins the groups of 0 and 1.
        let arms = [Some((0, 1)), Some((2, 3)), None, Some((4, 5)), Some((1, 2))];
        assert_eq!(
            group_by_shared_arms(&arms),
            vec![vec![0, 1, 4], vec![], vec![3]]
        );
    }
}
