//! Which claims are measured together: the run order (a claim's chain of positive controls
//! first), each claim's arms, and the groups of claims that share arms (measured once).
//!
//! A group's index seeds the randomness of its rounds ([`super::measure::round_rng`]), so the
//! grouping is part of what a run's seed replays: claims are taken in run order, and groups keep
//! their index when another is merged into them.

use crate::claims::claim::{Claim, Role};
use crate::claims::validate::validate_claim;
use crate::run::result::TrialSpec;
use crate::run::runner::Launcher;
use crate::run::settings::available_cores;

use super::arms::{Runnable, label, runnable, unmet_requirement};
use super::outcome::{ClaimOutcome, ReplicateKind, Verdict};
use super::settings::PairedSettings;

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

/// A program side's label: its command line, and the revision it was built from.
fn side_label(claim: &Claim, role: Role) -> String {
    let side = claim.side(role);
    let command = side.command.as_ref().map(|c| c.label()).unwrap_or_default();
    match &side.revision {
        Some(r) => format!("{command} (revision {r})"),
        None => command,
    }
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
    /// A group of programs: its claim with each side's program resolved, and why a claim on a
    /// scenario runs as programs, if it does.
    pub programs: Option<(Claim, Option<String>)>,
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
    /// Plans `claims` (in run order) against `launcher`'s catalog and builds, with `settings`.
    pub fn new(launcher: &Launcher, claims: &[Claim], settings: &PairedSettings) -> Plan {
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
        let mut outcomes: Vec<ClaimOutcome> = Vec::with_capacity(claims.len());
        let mut claim_arms: Vec<Option<(usize, usize)>> = Vec::with_capacity(claims.len());
        let mut programs: Vec<(usize, Claim, Option<String>)> = Vec::new();
        for claim in claims {
            let mut outcome = ClaimOutcome::new(claim);
            for role in Role::BOTH {
                let artifact = claim
                    .side(role)
                    .command
                    .as_ref()
                    .map_or(Some(crate::run::result::Artifact::Critsec), |c| {
                        c.artifact()
                    });
                outcome.side_mut(role).build = claim
                    .side(role)
                    .revision
                    .as_ref()
                    .zip(artifact)
                    .and_then(|(r, a)| launcher.build_of(r, &a).cloned());
            }
            let mut arms_of_claim = None;
            let checked = if claim.is_command() {
                Ok(())
            } else {
                validate_claim(catalog, claim).map_err(|e| e.to_string())
            };
            match checked.and_then(|()| runnable(launcher, claim, settings)) {
                Err(e) => outcome.verdict = Err(e),
                Ok(Runnable::Programs(resolved, note)) => {
                    outcome.baseline.label = side_label(&resolved, Role::Baseline);
                    outcome.contender.label = side_label(&resolved, Role::Contender);
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
                            // Known before it runs: a failure on the first invocation is still
                            // a failure of a process pair.
                            outcome.replicate_kind = GroupKind::Invocations.replicate_kind();
                            programs.push((outcomes.len(), *resolved, note));
                        }
                    }
                }
                Ok(Runnable::Arms(specs)) => {
                    let [a, b] = *specs;
                    outcome.baseline.label = label(&a);
                    outcome.contender.label = label(&b);
                    if let Some(reason) = unmet_requirement(claim, [&a, &b]) {
                        outcome.verdict = Ok(Verdict::NotTestable { reason });
                    } else {
                        arms_of_claim = Some((arm_of(a), arm_of(b)));
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
                programs: None,
            });
        }
        // Each claim on programs after every group, its randomness indexed past theirs.
        for (i, resolved, note) in programs {
            groups.push(Group {
                kind: GroupKind::Invocations,
                members: vec![i],
                arms: Vec::new(),
                claim_arms: Vec::new(),
                rng_index: shared.len() + i,
                programs: Some((resolved, note)),
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
    fn a_claim_joining_two_groups_merges_the_later_into_the_earlier_which_keeps_its_index() {
        // 0: arms 0-1; 1: arms 2-3; 2: arms 4-5; 3: arms 1-2 joins the groups of 0 and 1.
        let arms = [Some((0, 1)), Some((2, 3)), None, Some((4, 5)), Some((1, 2))];
        assert_eq!(
            group_by_shared_arms(&arms),
            vec![vec![0, 1, 4], vec![], vec![3]]
        );
    }
}
