//! Reproduction of claims: replicated paired measurements, an interval over the replicates, and
//! a verdict.
//!
//! The unit of replication is the process pair (Kalibera & Jones' execution level): a claim's
//! sides run in P rounds of fresh processes, m ABBA blocks inside each ([`super::measure`]). Per
//! round, the mean log ratio contender/baseline of the claim's metric; the estimate is the mean
//! over rounds, its interval a Student t with P - 1 degrees of freedom, mapped back with `exp`.
//! Deterministic simulations replicate over seeds instead: one iteration per seed, no warmup,
//! no ABBA, looks at `seeds`, halfway and `max_seeds`. A claim whose sides are programs
//! replicates over invocations of both. Claims that share a configuration are measured together
//! and derive their verdicts from the same rounds.
//!
//! Verdicts, for a ratio claim "contender/baseline >= m" (`higher`; `lower` mirrors it):
//! REPRODUCED when the whole interval is >= m, NOT REPRODUCED when it is entirely below m,
//! INCONCLUSIVE when it straddles m. A count claim ("none against some") is REPRODUCED when the
//! contender counts zero in every replicate and the baseline at least `k` in every one. NOT
//! TESTABLE HERE when the machine lacks what the claim requires, or a positive control fails.
//!
//! Repeated looks: a group measures a pilot of `min_pairs` rounds, then more in steps of
//! `look_every` up to `max_pairs` while a claim is inconclusive and the budget lasts. The looks
//! spend α = 0.001 by plan, by the Lan-DeMets O'Brien-Fleming-type function
//! ([`crate::stats::spending`]): little at the first looks, nearly all at the last; each look's
//! interval is at its own confidence, and a claim keeps the verdict of the first look that
//! decides it. `sequential_tests` checks the error rate and power on synthetic data.
//!
//! The parts, in the order a run meets them: `plan` (settings, look schedule, grouping claims
//! that share arms), then per group the one look loop (`looks`) over its kind of replicate
//! (`rounds`, `seeds`, `invocations`; `recorded`: result files already on disk), each look
//! deriving every undecided claim's interval and verdict (`derive`); the results are
//! `outcome`s. Start reading at [`reproduce_claims`].

mod arms;
mod derive;
mod distance;
mod groups;
mod invocations;
mod looks;
mod measure;
mod observed;
mod outcome;
mod recorded;
mod rounds;
mod schedule;
mod seeds;
#[cfg(test)]
mod sequential_tests;
mod settings;
mod verdict_file;

use std::time::Instant;

use crate::claims::claim::Claim;
use crate::run::runner::{Launcher, interrupted};

pub use looks::PairObserver;
pub use measure::BlockRecord;
pub use observed::{blocks_log_ratio, metric_of};
pub use outcome::{
    BlockValue, ClaimOutcome, Coherence, CoherenceLevel, CountSummary, Design, FarProcess,
    ProgramRecord, Replicate, ReplicateKind, SideRecord, Verdict, verdict,
};
pub use recorded::judge_recorded;
pub use settings::{FULL_PRECISION, PairedSettings, QUICK_PRECISION};
pub use verdict_file::{VerdictFile, VerdictReadError};

use groups::{GroupKind, Plan, run_order};
use invocations::Invocations;
use looks::{GroupRun, take_looks};
use rounds::Rounds;
use seeds::Seeds;

/// Reproduces `selected` claims (with the positive controls they name, taken from `all`):
/// measures every distinct configuration once, derives each claim from it, and gives each a
/// verdict. Outcomes come in run order: each control (and its own, and so on) before the claims
/// that need it.
pub fn reproduce_claims(
    launcher: &Launcher,
    selected: &[Claim],
    all: &[Claim],
    settings: &PairedSettings,
    observer: &mut dyn PairObserver,
) -> Vec<ClaimOutcome> {
    let claims = run_order(selected, all);
    let Plan {
        mut outcomes,
        arms,
        groups,
    } = Plan::new(launcher, &claims, settings);
    for group in &groups {
        let members = &group.members;
        if interrupted() {
            for &i in members {
                outcomes[i].verdict = Err("interrupted".into());
            }
            continue;
        }
        let ids: Vec<String> = members
            .iter()
            .map(|&i| outcomes[i].claim.id.clone())
            .collect();
        let schedule = settings.schedule(group.kind, members.len());
        let planned = *schedule.looks.last().expect("at least one look");
        let specs = || group.arms.iter().map(|&a| arms[a].clone()).collect();
        let run = GroupRun {
            settings: settings.clone(),
            rng_index: group.rng_index,
            ids: ids.clone(),
            planned,
        };
        let start = Instant::now();
        match group.kind {
            GroupKind::Rounds => {
                let mut rounds = Rounds::new(launcher, specs(), group.claim_arms.clone(), run);
                take_looks(&mut rounds, &mut outcomes, members, &schedule, observer);
            }
            GroupKind::Seeds => {
                let mut seeds = Seeds::new(launcher, specs(), group.claim_arms.clone(), run);
                take_looks(&mut seeds, &mut outcomes, members, &schedule, observer);
            }
            GroupKind::Invocations => {
                let (claim, note) = group
                    .programs
                    .as_ref()
                    .expect("a group of programs has them");
                let mut invocations = Invocations::new(claim, run, note.clone());
                if take_looks(
                    &mut invocations,
                    &mut outcomes,
                    members,
                    &schedule,
                    observer,
                ) {
                    // A program has no check values; what was run is the record.
                    let ran = vec![format!("{} invocations", invocations.len())];
                    let outcome = &mut outcomes[members[0]];
                    outcome.baseline.verified_before = ran.clone();
                    outcome.contender.verified_before = ran;
                }
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        for &i in members {
            outcomes[i].seconds = seconds;
            outcomes[i].group = ids.clone();
        }
    }
    apply_positive_controls(&mut outcomes);
    outcomes
}

/// A claim whose positive control does not reproduce here cannot be tested here: the control's
/// final verdict decides, after its own control has been applied to it, and so on down the chain.
fn apply_positive_controls(outcomes: &mut [ClaimOutcome]) {
    let mut resolved = vec![false; outcomes.len()];
    for i in 0..outcomes.len() {
        resolve_control(outcomes, i, &mut resolved, &mut Vec::new());
    }
}

/// Applies `outcomes[i]`'s control to it, once the control's own verdict is final; `chain`
/// holds the claims whose controls are being resolved, to stop at a cycle.
fn resolve_control(
    outcomes: &mut [ClaimOutcome],
    i: usize,
    resolved: &mut [bool],
    chain: &mut Vec<usize>,
) {
    if resolved[i] {
        return;
    }
    let Some(control) = outcomes[i].claim.control.clone() else {
        resolved[i] = true;
        return;
    };
    let j = outcomes.iter().position(|o| o.claim.id == control);
    chain.push(i);
    let reason = match j {
        None => Some(format!("its positive control `{control}` was not run")),
        Some(j) if chain.contains(&j) => {
            let ids: Vec<&str> = chain[chain.iter().position(|&c| c == j).unwrap_or(0)..]
                .iter()
                .chain([&j])
                .map(|&c| outcomes[c].claim.id.as_str())
                .collect();
            Some(format!(
                "its positive controls form a cycle: {}",
                ids.join(" -> ")
            ))
        }
        Some(j) => {
            resolve_control(outcomes, j, resolved, chain);
            match &outcomes[j].verdict {
                Ok(Verdict::Reproduced) => None,
                Ok(Verdict::NotTestable { reason }) => Some(format!(
                    "its positive control `{control}` is NOT TESTABLE HERE: {reason}"
                )),
                Ok(v) => Some(format!(
                    "its positive control `{control}` is {} here, so this machine does not show the effect whose absence the claim asserts",
                    v.label()
                )),
                Err(e) => Some(format!("its positive control `{control}` failed: {e}")),
            }
        }
    };
    chain.pop();
    resolved[i] = true;
    if let Some(reason) = reason
        && outcomes[i].verdict.is_ok()
    {
        outcomes[i].verdict = Ok(Verdict::NotTestable { reason });
    }
}
