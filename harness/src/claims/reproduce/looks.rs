//! Repeated looks, written once for every kind of replicate: measure a group up to the next
//! look, derive each undecided claim's verdict from its replicates so far, and stop when every
//! claim is decided (and, where the schedule has a precision goal, every decided ratio claim's
//! interval is as narrow as the goal), the budget is spent (only between looks: the first look
//! is always taken), or the run is interrupted.
//!
//! What a replicate is, how it is run, and what counts as its failure belong to the
//! [`ReplicateSource`]: rounds of fresh processes ([`super::rounds`]), seeds of a simulation
//! ([`super::seeds`]), invocations of two programs ([`super::invocations`]).

use std::time::Instant;

use crate::run::runner::interrupted;

use super::derive::derive;
use super::observed::Observed;
use super::outcome::{ClaimOutcome, Design, ProgramRecord, ReplicateKind, Verdict, settled};
use super::schedule::LookSchedule;
use super::settings::PairedSettings;
use crate::claims::claim::ClaimKind;
use crate::stats::t_quantile;
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// What a replicate source knows of its group, the same for every kind: the run's settings,
/// the index its random choices are drawn from, its claims' ids and the replicates planned (for
/// progress).
#[derive(Debug, Clone)]
pub(crate) struct GroupRun {
    /// The run's settings.
    pub settings: PairedSettings,
    /// The group's index, which its random choices are drawn from.
    pub rng_index: usize,
    /// The members' ids, for progress.
    pub ids: Vec<String>,
    /// Replicates at the last look, for progress (moved when the looks are planned again).
    pub planned: u32,
}

/// Progress callbacks.
pub trait PairObserver {
    /// A replicate of the group of `claims` completed: `done` of at most `planned`.
    fn replicate_done(&mut self, _claims: &[String], _done: u32, _planned: u32) {}
}

impl PairObserver for crate::run::runner::Silent {}

/// One side's check values, one per process (or trial) that ran it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Verified {
    /// Before measuring.
    pub before: Vec<String>,
    /// After measuring.
    pub after: Vec<String>,
}

/// Replicates of a group of claims (its *members*, numbered from 0 in the group's order): what
/// the look loop asks of each kind.
pub(crate) trait ReplicateSource {
    /// What one replicate is.
    fn kind(&self) -> ReplicateKind;

    /// Measures until every claim of `undecided` has `n` replicates (a source may measure the
    /// others too). An error fails every claim of the group, decided or not, and ends its
    /// measurements; an interrupt is such an error.
    fn measure(
        &mut self,
        n: u32,
        undecided: &[usize],
        observer: &mut dyn PairObserver,
    ) -> Result<(), String>;

    /// The last look moved to `last` replicates after the pilot (for progress).
    fn replanned(&mut self, _last: u32) {}

    /// Why `member` has no replicates at this look although the group's measurements went on
    /// (e.g. one of its arms failed, which fails only the claims measured with it).
    fn missing(&self, _member: usize) -> Option<String> {
        None
    }

    /// `member`'s replicates so far as `metric` saw them, with the sums of a count claim's
    /// `exposure` metric; or why `metric` cannot be read from them.
    fn observe(
        &self,
        member: usize,
        metric: &str,
        exposure: Option<&str>,
    ) -> Result<Observed, String>;

    /// What the reader of `member`'s verdict must know about its replicates (e.g. identical
    /// values where independent runs cannot give them).
    fn flags(&self, _member: usize) -> Vec<String> {
        Vec::new()
    }

    /// What `member`'s baseline and contender programs ran and reported, if its sides are
    /// programs.
    fn programs(&self, _member: usize) -> Option<[ProgramRecord; 2]> {
        None
    }

    /// The check values of `member`'s baseline and contender, if its sides have checks.
    fn verified(&self, _member: usize) -> Option<[Verified; 2]> {
        None
    }
}

/// Takes the looks of `schedule` over `source`, whose members are `outcomes[members[m]]`, each
/// look at its own confidence, and leaves each member's verdict of its deciding (or last) look
/// in its outcome, with the design the looks followed ([`Design`]). After the pilot the looks
/// are planned again from its measured cost ([`LookSchedule::after_pilot`]); the group stops
/// early when every undecided claim is [`futile`] and no decided one is [`imprecise`]. Whether
/// the measurements ended without failing the group.
pub(crate) fn take_looks(
    source: &mut dyn ReplicateSource,
    outcomes: &mut [ClaimOutcome],
    members: &[usize],
    schedule: &LookSchedule,
    observer: &mut dyn PairObserver,
) -> bool {
    let mut schedule = schedule.clone();
    // The budget is for the looks beyond the pilot: it starts when the pilot is measured, so
    // a pilot that takes longer than the budget (a JVM per invocation) still gets a second look.
    let mut budget_end = None;
    let mut undecided: Vec<usize> = (0..members.len()).collect();
    // Decided claims that go on for precision, and the looks taken for them alone.
    let mut narrowing: Vec<usize> = Vec::new();
    let mut for_precision: Vec<u32> = Vec::new();
    let mut imprecise_ids = String::new();
    let started = Instant::now();
    let (mut why, mut replicate_seconds) = (String::new(), 0.0);
    let mut ended = String::new();
    let mut index = 0;
    while index < schedule.looks.len() {
        let look = schedule.looks[index];
        let over_budget = budget_end.is_some_and(|end| Instant::now() >= end);
        let done = undecided.is_empty() && narrowing.is_empty();
        if index > 0 && (done || over_budget || interrupted()) {
            if over_budget && !undecided.is_empty() {
                ended = format!("the budget ran out before the look at {look}");
            }
            break;
        }
        if undecided.is_empty() && !narrowing.is_empty() {
            if for_precision.is_empty() {
                let ids: Vec<&str> = narrowing
                    .iter()
                    .map(|&m| outcomes[members[m]].claim.id.as_str())
                    .collect();
                imprecise_ids = ids.join(", ");
            }
            for_precision.push(look);
        }
        let wanted: Vec<usize> = undecided.iter().chain(&narrowing).copied().collect();
        if let Err(e) = source.measure(look, &wanted, observer) {
            // Interrupted in a look for precision alone: every claim keeps the verdict and the
            // interval it had, as it would between looks.
            if undecided.is_empty() && interrupted() {
                for_precision.pop();
                break;
            }
            // What was measured before the failure is kept in the record (never a verdict).
            for (m, &i) in members.iter().enumerate() {
                let outcome = &mut outcomes[i];
                let metric = outcome.claim.metric.clone();
                if let Ok(observed) = source.observe(m, &metric, None)
                    && !observed.replicates.is_empty()
                {
                    outcome.replicate_kind = source.kind();
                    let _ = derive(outcome, &observed, &metric, schedule.confidence_at(index));
                    record_replicates(&*source, m, outcome);
                }
                outcome.verdict = Err(e.clone());
            }
            return false;
        }
        if index == 0 {
            budget_end = schedule
                .budget
                .and_then(|budget| Instant::now().checked_add(budget));
            replicate_seconds = started.elapsed().as_secs_f64() / f64::from(look.max(1));
            why = schedule.after_pilot(replicate_seconds);
            source.replanned(*schedule.looks.last().expect("at least one look"));
        }
        let confidence = schedule.confidence_at(index);
        for m in 0..members.len() {
            let outcome = &mut outcomes[members[m]];
            let pending = undecided.contains(&m);
            if !pending && !looks_on(outcome) {
                continue;
            }
            if let Some(e) = source.missing(m) {
                if pending {
                    outcome.replicate_kind = source.kind();
                    outcome.looks.push(look);
                    outcome.verdict = Err(e);
                }
                continue;
            }
            let metric = outcome.claim.metric.clone();
            let exposure = match outcome.claim.kind {
                ClaimKind::Count => outcome.claim.exposure.clone(),
                ClaimKind::Ratio => None,
            };
            let observed = source.observe(m, &metric, exposure.as_deref());
            // A decided claim looks again only at replicates its last look did not see.
            let grown = |o: &Observed| o.replicates.len() > outcome.replicates.len();
            if !pending && !observed.as_ref().is_ok_and(grown) {
                continue;
            }
            outcome.replicate_kind = source.kind();
            outcome.looks.push(look);
            outcome.verdict =
                observed.and_then(|observed| derive(outcome, &observed, &metric, confidence));
            record_replicates(&*source, m, outcome);
            if let Some([baseline, contender]) = source.verified(m) {
                outcome.baseline.verified_before = baseline.before;
                outcome.baseline.verified_after = baseline.after;
                outcome.contender.verified_before = contender.before;
                outcome.contender.verified_after = contender.after;
            }
        }
        undecided = (0..members.len())
            .filter(|&m| !settled(&outcomes[members[m]].verdict))
            .collect();
        narrowing = match schedule.precision {
            Some(goal) => (0..members.len())
                .filter(|&m| imprecise(&outcomes[members[m]], goal))
                .collect(),
            None => Vec::new(),
        };
        let last = schedule.looks.len() - 1;
        // Not at the pilot: its spread, over a few replicates, is too rough to give up on.
        if index > 0
            && index < last
            && !undecided.is_empty()
            && narrowing.is_empty()
            && undecided.iter().all(|&m| {
                futile(
                    &outcomes[members[m]],
                    schedule.looks[last],
                    schedule.confidence_at(last),
                )
            })
        {
            ended = format!(
                "stopped at {look}: at the last look ({}) the interval would still straddle the claimed effect",
                schedule.looks[last]
            );
            break;
        }
        index += 1;
    }
    let for_precision = match (for_precision.as_slice(), schedule.precision) {
        ([], _) | (_, None) => String::new(),
        (looks, Some(goal)) => {
            let looks: Vec<String> = looks.iter().map(u32::to_string).collect();
            format!(
                "the looks at {} were taken for precision alone: every claim was decided, and \
                 before the look at {} {imprecise_ids} had an interval wider than x/÷ {:.3}",
                looks.join(", "),
                looks[0],
                goal.exp()
            )
        }
    };
    for &i in members {
        outcomes[i].design = Some(Design {
            looks: schedule.looks.clone(),
            confidence: schedule.confidence.clone(),
            replicate_seconds,
            why: why.clone(),
            // Why the looks ended early concerns only the claims they left undecided.
            ended: if settled(&outcomes[i].verdict) {
                String::new()
            } else {
                ended.clone()
            },
            for_precision: for_precision.clone(),
        });
    }
    true
}

/// Whether a decided claim may take a later look: a ratio claim decided either way, which
/// looks again when its group measured on for others and left it replicates its last look did
/// not see. Its interval then narrows ([`derive`] combines it with the earlier looks'), for no
/// extra measurement, and its verdict stays: the combined interval lies inside the one that
/// decided it, unless the two do not overlap (a chance within α), where their hull may leave it
/// undecided.
fn looks_on(outcome: &ClaimOutcome) -> bool {
    outcome.claim.kind == ClaimKind::Ratio && outcome.verdict.as_ref().is_ok_and(Verdict::decided)
}

/// Whether a decided `outcome` would take a later look for precision: a claim that looks on
/// ([`looks_on`]) whose interval's log half-width is wider than `goal`. The looks' α is spent
/// by plan whatever stops them, and its combined interval never widens, so going on can only
/// narrow it; a claim the goal does not concern (a count, an exact ratio) never asks.
fn imprecise(outcome: &ClaimOutcome, goal: f64) -> bool {
    looks_on(outcome)
        && outcome
            .interval
            .is_some_and(|r| (r.high / r.low).ln() / 2.0 > goal)
}

/// Keeps in `outcome` what `source` says of `member`'s replicates beyond their values: its
/// flags and, for programs, what they ran.
fn record_replicates(source: &dyn ReplicateSource, member: usize, outcome: &mut ClaimOutcome) {
    outcome.flags = source.flags(member);
    if let Some([baseline, contender]) = source.programs(member) {
        outcome.baseline.program = Some(baseline);
        outcome.contender.program = Some(contender);
    }
}

/// Whether more replicates up to a last look at `last` (at `confidence`) would leave `outcome`
/// undecided even if its estimate moved two standard errors the way that helps most and its
/// spread were as small as the replicates so far make plausible (the 90% lower confidence bound
/// of the sd, from the χ² distribution): the predicted half-width there is wider than the
/// distance to the bound (no side decided) and wider than the room the tolerance's band leaves
/// (not AT THE BOUND either). Stopping then takes no look, so it can only lower the chance of a
/// wrong verdict.
pub(crate) fn futile(outcome: &ClaimOutcome, last: u32, confidence: f64) -> bool {
    let (Ok(Verdict::Inconclusive { .. }), Some(r), Some(bound)) =
        (&outcome.verdict, &outcome.interval, outcome.claim.bound())
    else {
        return false;
    };
    if r.n < 2 || !r.log_sd.is_finite() || last as usize <= r.n {
        return false;
    }
    let df = (r.n - 1) as f64;
    let Ok(chi2) = ChiSquared::new(df) else {
        return false;
    };
    let small_sd = r.log_sd * (df / chi2.inverse_cdf(0.90)).sqrt();
    let distance = (r.ratio.ln() - bound.min_effect.ln()).abs();
    let step = 2.0 * r.log_sd / (r.n as f64).sqrt();
    let half_width =
        t_quantile(confidence, f64::from(last - 1)) * small_sd / f64::from(last).sqrt();
    let band = bound.tolerance.max(1.0).ln();
    distance + step < half_width && (distance - step).max(0.0) + half_width > band
}
