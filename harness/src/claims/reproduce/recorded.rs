//! Replicates measured before: a claim judged from two JMH result files already on disk (a
//! reviewer's runs of main and of the PR), with the processes as the unit. Each file's entry
//! (picked by the claim's `benchmark` and the sides' `params`) lists its forks' iterations; fork
//! k of the baseline against fork k of the contender is replicate k. Nothing is run, so nothing
//! was interleaved: drift between the two runs is not cancelled, as it is when `reproduce`
//! alternates the sides, and the verdict says so in its flags.

use crate::claims::claim::{Claim, Role};
use crate::claims::command::{EntrySelection, Invocation, direction_conflict, parse_jmh};

use super::invocations::program_record;
use super::looks::{PairObserver, ReplicateSource, take_looks};
use super::observed::{Costs, Observed, Paired, admissible, needs};
use super::outcome::{ClaimOutcome, ProgramRecord, ReplicateKind};
use super::schedule::LookSchedule;
use crate::stats::CONFIDENCE;

/// The fork pairs of two result files.
struct Recorded {
    /// Both sides' runs, baseline first.
    sides: [Invocation; 2],
}

impl Recorded {
    /// Fork pairs: as many as the side with fewer forks has.
    fn len(&self) -> usize {
        self.sides[0].forks.len().min(self.sides[1].forks.len())
    }
}

impl ReplicateSource for Recorded {
    fn kind(&self) -> ReplicateKind {
        ReplicateKind::ProcessPair
    }

    fn measure(&mut self, n: u32, _: &[usize], _: &mut dyn PairObserver) -> Result<(), String> {
        if (n as usize) > self.len() {
            return Err(format!(
                "the result files hold {} fork pair(s); an interval needs at least {n}: run JMH with -f {n} or more",
                self.len()
            ));
        }
        Ok(())
    }

    fn observe(&self, _: usize, _: &str, _: Option<&str>) -> Result<Observed, String> {
        let [baseline, contender] = [self.sides[0].fork_means(), self.sides[1].fork_means()];
        let replicates = baseline
            .into_iter()
            .zip(contender)
            .map(|(baseline, contender)| Paired::unordered(None, baseline, contender))
            .collect();
        Ok(Observed {
            replicates,
            unit: self.sides[0].unit.clone(),
            costs: Costs {
                pair: 0.0,
                block: 0.0,
            },
            exposure: None,
        })
    }

    fn flags(&self, _: usize) -> Vec<String> {
        let mut flags = vec![
            "judged from result files: the sides ran one after the other, not interleaved, so drift between the two runs is not cancelled".to_string(),
        ];
        let [b, c] = [self.sides[0].forks.len(), self.sides[1].forks.len()];
        if b != c {
            flags.push(format!(
                "the baseline has {b} forks and the contender {c}: only the first {} of each are paired",
                b.min(c)
            ));
        }
        flags
    }

    fn programs(&self, _: usize) -> Option<[ProgramRecord; 2]> {
        let side = |s: usize| program_record(std::iter::once(&self.sides[s]));
        Some([side(0), side(1)])
    }
}

/// Judges `claim` (a ratio claim; its sides' commands are not run) from the JMH result texts
/// `baseline` and `contender`, named `origins` in errors: one look over all their fork pairs at
/// 99.9%.
pub fn judge_recorded(
    claim: &Claim,
    [baseline, contender]: [&str; 2],
    origins: [&str; 2],
) -> ClaimOutcome {
    let mut outcomes = vec![ClaimOutcome::new(claim)];
    let read = |role: Role, text: &str, origin: &str| -> Result<Invocation, String> {
        let params = claim.resolved(role).params.0;
        let run = parse_jmh(text, &EntrySelection::of(claim, &params), &claim.metric)
            .map_err(|e| format!("{origin}: {e}"))?;
        if let Some(conflict) = direction_conflict(claim, &run) {
            return Err(format!("{origin}: {conflict}"));
        }
        if let Some(v) = run.values.iter().find(|v| !admissible(claim.kind, **v)) {
            return Err(format!(
                "{origin}: the {} reported {} = {v}; {}",
                role.name(),
                claim.metric,
                needs(claim.kind)
            ));
        }
        Ok(run)
    };
    let sides = read(Role::Baseline, baseline, origins[0])
        .and_then(|b| Ok([b, read(Role::Contender, contender, origins[1])?]));
    let mut recorded = match sides {
        Ok(sides) => Recorded { sides },
        Err(e) => {
            outcomes[0].verdict = Err(e);
            return outcomes.remove(0);
        }
    };
    if recorded.sides[0].unit != recorded.sides[1].unit {
        outcomes[0].verdict = Err(format!(
            "the files report different units: the baseline {} and the contender {}",
            recorded.sides[0].unit, recorded.sides[1].unit
        ));
        return outcomes.remove(0);
    }
    let pairs = u32::try_from(recorded.len()).unwrap_or(u32::MAX).max(2);
    let schedule = LookSchedule::spending(vec![pairs], 1.0 - CONFIDENCE, None);
    take_looks(
        &mut recorded,
        &mut outcomes,
        &[0],
        &schedule,
        &mut crate::run::runner::Silent,
    );
    outcomes.remove(0)
}
