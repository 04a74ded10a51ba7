//! Replicates of a claim whose sides are programs ([`crate::claims::command`]): each replicate
//! invokes both once, in a random order, and compares the means of the iterations each
//! reported; sides that run one command and differ only in the JMH entry they read (a
//! `@Param` value) share one invocation per replicate. A failed invocation fails the claim.

use std::time::Instant;

use rand::Rng;

use super::measure::round_rng;
use crate::claims::claim::{Claim, Role};
use crate::claims::command::{EntrySelection, Invocation, Reader, direction_conflict, invoke};
use crate::run::runner::interrupted;

use super::looks::{GroupRun, PairObserver, ReplicateSource};
use super::observed::{Costs, Observed, Paired, admissible, needs, unknown_metric};
use super::outcome::{BlockValue, ProgramRecord, ReplicateKind};

/// Times a transient failure of one invocation is run again before it fails the claim.
pub(crate) const RETRIES: usize = 2;

/// One replicate: both sides' invocations.
struct InvocationPair {
    /// Whether the baseline ran first.
    baseline_first: bool,
    /// What the baseline and the contender reported.
    sides: [Invocation; 2],
    /// Wall seconds of both invocations.
    seconds: f64,
    /// The failures that were run again, and the processes an invocation left running, in
    /// words.
    notes: Vec<String>,
}

/// A replicate's blocks: with JMH's `-f N` (N processes per invocation) on both sides, fork k
/// of the baseline against fork k of the contender, so that the verdict's variance components
/// split what differs between forks of one invocation from what differs between invocations;
/// otherwise one block of the invocations' means.
fn fork_blocks(p: &InvocationPair) -> Vec<BlockValue> {
    let [baseline, contender] = [p.sides[0].fork_means(), p.sides[1].fork_means()];
    if baseline.len() > 1 && baseline.len() == contender.len() {
        baseline
            .into_iter()
            .zip(contender)
            .map(|(baseline, contender)| BlockValue {
                baseline,
                contender,
                baseline_first: p.baseline_first,
                coherence_ns: None,
            })
            .collect()
    } else {
        vec![BlockValue {
            baseline: p.sides[0].mean(),
            contender: p.sides[1].mean(),
            baseline_first: p.baseline_first,
            coherence_ns: None,
        }]
    }
}

/// What one side's `runs` ran and reported: each distinct runtime once, in order, and every
/// iteration of every run, fork by fork.
pub(super) fn program_record<'a>(runs: impl Iterator<Item = &'a Invocation>) -> ProgramRecord {
    let mut record = ProgramRecord::default();
    for run in runs {
        if !run.runtime.is_empty() && !record.runtimes.contains(&run.runtime) {
            record.runtimes.push(run.runtime.clone());
        }
        record.iterations.push(run.values.clone());
        record.forks.push(run.forks.clone());
    }
    record
}

/// A claim's invocations so far.
pub(crate) struct Invocations<'a> {
    claim: &'a Claim,
    run: GroupRun,
    /// The benchmark and unit the first invocation reported, and its side's name, which every
    /// other must match.
    reported: Option<(String, String, &'static str)>,
    /// Both sides run one command whose JMH result holds both their entries (they differ only
    /// in `@Param` values): one invocation per replicate serves both, as JMH runs each value
    /// in forks of its own anyway. The sides then run in JMH's order, not a balanced one.
    shared: bool,
    pairs: Vec<InvocationPair>,
    /// Why a claim on a scenario runs as programs, when it does.
    note: Option<String>,
}

impl<'a> Invocations<'a> {
    /// No invocations yet of `claim`'s two programs.
    /// No invocations yet of `claim`'s two programs; `note` says why they are programs, when
    /// the claim named a scenario.
    pub fn new(claim: &'a Claim, run: GroupRun, note: Option<String>) -> Self {
        let shared = match (&claim.baseline.command, &claim.contender.command) {
            (Some(b), Some(c)) => {
                b == c
                    && b.reader == Reader::Jmh
                    && claim.resolved(Role::Baseline).params.0
                        != claim.resolved(Role::Contender).params.0
            }
            _ => false,
        };
        Invocations {
            note,
            shared,
            claim,
            run,
            reported: None,
            pairs: Vec::new(),
        }
    }

    /// Replicates run.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Runs the program of `roles` (one side, or both when they share it) once as the
    /// `index`-th replicate, and reads each role's result, checking it reports what the first
    /// did and only values the claim can take: each iteration's, before they become one mean. A
    /// transient failure (the program failed, or gave no usable result) is run again, up to
    /// [`RETRIES`] times, each recorded in `notes`; then the error says which replicate and
    /// side failed, and how often.
    fn invoke(
        &mut self,
        roles: &[Role],
        index: usize,
        notes: &mut Vec<String>,
    ) -> Result<Vec<Invocation>, String> {
        let which = match roles {
            [one] => one.name(),
            _ => "shared invocation",
        };
        let command = self.claim.side(roles[0]).command.as_ref();
        let command = command.expect("a claim on programs");
        let params: Vec<_> = roles
            .iter()
            .map(|&r| self.claim.resolved(r).params.0)
            .collect();
        let selects: Vec<EntrySelection> = params
            .iter()
            .map(|p| EntrySelection::of(self.claim, p))
            .collect();
        let mut attempt = 0;
        let invocations = loop {
            match invoke(command, which, index, &selects, &self.claim.metric) {
                Ok(invoked) => {
                    if let Some(left) = invoked.left_behind {
                        notes.push(format!("replicate {}'s {which} {left}", index + 1));
                    }
                    break invoked.results;
                }
                Err(failure) if failure.transient && attempt < RETRIES && !interrupted() => {
                    attempt += 1;
                    notes.push(format!(
                        "replicate {}'s {which} failed and was run again: {failure}",
                        index + 1
                    ));
                }
                Err(failure) => {
                    let tries = if attempt > 0 {
                        format!(" ({} attempts)", attempt + 1)
                    } else {
                        String::new()
                    };
                    return Err(format!(
                        "replicate {}, the {which}{tries}: {failure}",
                        index + 1
                    ));
                }
            }
        };
        roles
            .iter()
            .zip(invocations)
            .map(|(role, inv)| self.checked(role.name(), command.label(), index, inv))
            .collect()
    }

    /// Where one invocation served both sides, in words: their order was JMH's.
    fn shared_order(&self) -> Option<String> {
        (self.shared && !self.pairs.is_empty()).then(|| {
            let first = self.pairs.iter().filter(|p| p.baseline_first).count();
            format!(
                "one invocation per replicate served both sides (one command; they read different @Param entries of its result), so they ran in JMH's order, not a balanced one: the baseline's forks first in {first} of {} replicates",
                self.pairs.len()
            )
        })
    }

    /// `inv`, the `which` side's result of the `index`-th replicate, if it reports only values the
    /// claim can take, and the benchmark and unit the first result reported.
    fn checked(
        &mut self,
        which: &'static str,
        label: String,
        index: usize,
        inv: Invocation,
    ) -> Result<Invocation, String> {
        if let Some(conflict) = direction_conflict(self.claim, &inv) {
            return Err(format!("{which} command `{label}`: {conflict}"));
        }
        if let Some((i, v)) = inv
            .values
            .iter()
            .enumerate()
            .find(|&(_, &v)| !admissible(self.claim.kind, v))
        {
            return Err(format!(
                "{which} command `{label}` reported {} = {v} as iteration {} of replicate {index}; {}",
                self.claim.metric,
                i + 1,
                needs(self.claim.kind)
            ));
        }
        let this = (inv.benchmark.clone(), inv.unit.clone(), which);
        match &self.reported {
            Some(first) if (&first.0, &first.1) != (&this.0, &this.1) => Err(format!(
                "the sides report different benchmarks or units: the {} {} in {} against the {} {} in {}; a claim compares one benchmark",
                first.2, first.0, first.1, this.2, this.0, this.1
            )),
            Some(_) => Ok(inv),
            None => {
                self.reported = Some(this);
                Ok(inv)
            }
        }
    }
}

impl ReplicateSource for Invocations<'_> {
    fn kind(&self) -> ReplicateKind {
        ReplicateKind::ProcessPair
    }

    fn replanned(&mut self, last: u32) {
        self.run.planned = last;
    }

    fn measure(
        &mut self,
        n: u32,
        _undecided: &[usize],
        observer: &mut dyn PairObserver,
    ) -> Result<(), String> {
        while (self.pairs.len() as u32) < n {
            if interrupted() {
                return Err("interrupted".into());
            }
            let index = self.pairs.len();
            // Balanced in pairs of replicates: the first of each pair draws which side goes
            // first, the second runs the other order, so half the invocations run each side
            // first whatever the seed, in a random sequence.
            let mut rng = round_rng(self.run.settings.seed, self.run.rng_index, index / 2);
            let baseline_first = rng.random_bool(0.5) == (index % 2 == 0);
            let started = Instant::now();
            let mut notes = Vec::new();
            let mut one = |s: &mut Self, role: Role| {
                s.invoke(&[role], index, &mut notes)
                    .map(|mut v| v.remove(0))
            };
            let (baseline_first, baseline, contender) = if self.shared {
                // One invocation: the sides ran in the order of their entries in its result.
                let [b, c]: [Invocation; 2] = self
                    .invoke(&Role::BOTH, index, &mut notes)?
                    .try_into()
                    .expect("one result per side");
                (b.position < c.position, b, c)
            } else if baseline_first {
                let b = one(self, Role::Baseline)?;
                (true, b, one(self, Role::Contender)?)
            } else {
                let c = one(self, Role::Contender)?;
                (false, one(self, Role::Baseline)?, c)
            };
            self.pairs.push(InvocationPair {
                baseline_first,
                sides: [baseline, contender],
                seconds: started.elapsed().as_secs_f64(),
                notes,
            });
            observer.replicate_done(&self.run.ids, self.pairs.len() as u32, self.run.planned);
        }
        Ok(())
    }

    /// Replicates of one side that reported exactly the values of an earlier one, to the last
    /// bit (a cached result file, or a program that does not run the benchmark, whose
    /// "replicates" are one measurement counted many times), and the failures run again.
    fn flags(&self, _: usize) -> Vec<String> {
        let notes = self.pairs.iter().flat_map(|p| p.notes.iter().cloned());
        let bits = |i: &Invocation| i.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        Role::BOTH
            .into_iter()
            .filter_map(|role| {
                let side = |p: &InvocationPair| bits(&p.sides[role as usize]);
                let repeats: Vec<String> = (1..self.pairs.len())
                    .filter(|&later| {
                        let values = side(&self.pairs[later]);
                        self.pairs[..later].iter().any(|p| side(p) == values)
                    })
                    .map(|later| (later + 1).to_string())
                    .collect();
                (!repeats.is_empty()).then(|| {
                    format!(
                        "the {}'s replicates {} repeat an earlier replicate's values to the last bit: is its result cached, or its benchmark not run?",
                        role.name(),
                        repeats.join(", ")
                    )
                })
            })
            .chain(self.note.clone())
            .chain(self.shared_order())
            .chain(notes)
            .collect()
    }

    fn programs(&self, _: usize) -> Option<[ProgramRecord; 2]> {
        let side = |s: usize| program_record(self.pairs.iter().map(|p| &p.sides[s]));
        Some([side(0), side(1)])
    }

    /// A program's values are already of the claim's metric: it was asked for it when invoked.
    fn observe(&self, _: usize, metric: &str, exposure: Option<&str>) -> Result<Observed, String> {
        debug_assert_eq!(metric, self.claim.metric);
        let replicates = self
            .pairs
            .iter()
            .map(|p| Paired {
                seed: None,
                baseline_launched_first: p.baseline_first,
                env_pad: (0, 0),
                cpu: None,
                blocks: fork_blocks(p),
            })
            .collect();
        // An invocation reports its mean (`primary`) and how many iterations it ran (`ops`).
        let total = |side: usize, metric: &str| -> Result<f64, String> {
            let mut total = 0.0;
            for p in &self.pairs {
                total += match metric {
                    "primary" => p.sides[side].mean(),
                    "ops" => p.sides[side].values.len() as f64,
                    _ => return Err(unknown_metric(metric, &[])),
                };
            }
            Ok(total)
        };
        let costs: Vec<(f64, f64, usize)> =
            self.pairs.iter().map(|p| (0.0, p.seconds, 1)).collect();
        Ok(Observed {
            replicates,
            unit: self
                .pairs
                .last()
                .map(|p| p.sides[0].unit.clone())
                .unwrap_or_default(),
            costs: Costs::mean_of(&costs, 2),
            exposure: exposure.map(|e| [total(0, e), total(1, e)]),
        })
    }
}
