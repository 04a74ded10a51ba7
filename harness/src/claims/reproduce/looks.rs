//! Repeated looks, written once for every kind of replicate: measure a group up to the next
//! look, derive each undecided claim's verdict from its replicates so far, and stop when every
//! claim is decided, the budget is spent (only between looks: the first look is always taken),
//! or the run is interrupted.
//!
//! What a replicate is, how it is run, and what counts as its failure belong to the
//! [`ReplicateSource`]: rounds of fresh processes ([`super::rounds`]), seeds of a simulation
//! ([`super::seeds`]), invocations of two programs ([`super::invocations`]).

use std::time::Instant;

use crate::run::runner::interrupted;

use super::PairObserver;
use super::derive::{Observed, derive};
use super::outcome::{ClaimOutcome, ReplicateKind, settled};
use super::plan::LookSchedule;
use crate::claims::claim::ClaimKind;

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

    /// The check values of `member`'s baseline and contender, if its sides have checks.
    fn verified(&self, _member: usize) -> Option<[Verified; 2]> {
        None
    }
}

/// Takes the looks of `schedule` over `source`, whose members are `outcomes[members[m]]`, each
/// look at its own confidence, and leaves each member's verdict of its deciding (or last) look
/// in its outcome. Whether the measurements ended without failing the group.
pub(crate) fn take_looks(
    source: &mut dyn ReplicateSource,
    outcomes: &mut [ClaimOutcome],
    members: &[usize],
    schedule: &LookSchedule,
    observer: &mut dyn PairObserver,
) -> bool {
    // The budget is for the looks beyond the pilot: it starts when the pilot is measured, so
    // a pilot that takes longer than the budget (a JVM per invocation) still gets a second look.
    let mut budget_end = None;
    let mut undecided: Vec<usize> = (0..members.len()).collect();
    for (index, &look) in schedule.looks.iter().enumerate() {
        let over_budget = budget_end.is_some_and(|end| Instant::now() >= end);
        if index > 0 && (undecided.is_empty() || over_budget || interrupted()) {
            break;
        }
        if let Err(e) = source.measure(look, &undecided, observer) {
            for &i in members {
                outcomes[i].verdict = Err(e.clone());
            }
            return false;
        }
        if index == 0 {
            budget_end = schedule
                .budget
                .and_then(|budget| Instant::now().checked_add(budget));
        }
        let confidence = schedule.confidence_at(index);
        for &m in &undecided {
            let outcome = &mut outcomes[members[m]];
            outcome.replicate_kind = source.kind();
            outcome.looks.push(look);
            if let Some(e) = source.missing(m) {
                outcome.verdict = Err(e);
                continue;
            }
            let metric = outcome.claim.metric.clone();
            let exposure = match outcome.claim.kind {
                ClaimKind::Count => outcome.claim.exposure.clone(),
                ClaimKind::Ratio => None,
            };
            outcome.verdict = source
                .observe(m, &metric, exposure.as_deref())
                .and_then(|observed| derive(outcome, &observed, &metric, confidence));
            if let Some([baseline, contender]) = source.verified(m) {
                outcome.baseline.verified_before = baseline.before;
                outcome.baseline.verified_after = baseline.after;
                outcome.contender.verified_before = contender.before;
                outcome.contender.verified_after = contender.after;
            }
        }
        undecided.retain(|&m| !settled(&outcomes[members[m]].verdict));
    }
    true
}
