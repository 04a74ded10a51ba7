//! Verdicts per CPU distance: a multi-threaded claim judged at each level of the coherence
//! probe ([`crate::run::coherence`]) as well as over all its blocks, when the probes after its
//! blocks show the host moving the two CPUs between distances under the run.
//!
//! On such a machine a contended benchmark is several experiments, and its ratio may differ
//! between them (METHODOLOGY.md, *Verdicts per CPU distance*): registry-snapshot-micro's blocks
//! read 1.78 at 28 ns, 1.01 at 66 ns and 0.80 at 320 ns in one run. The claim's verdict stays
//! the one over all its blocks, which speaks of the mix of distances the run had; the levels add
//! what the mix hides:
//!
//! - each level's interval is over the replicates with blocks there (each replicate's sides
//!   averaged over those blocks), at the look's confidence (with k > 2 levels at α·2/k each);
//! - when one level reads REPRODUCED and another NOT REPRODUCED, the claim is NOT TESTABLE HERE:
//!   this machine gives both answers, and which one a run's mix gives depends on how long the
//!   host kept each level. That withholds a verdict and so never adds a wrong one: the α of the
//!   verdicts is the all-block interval's. The statement that the levels disagree is itself
//!   wrong only if a level's interval misses its truth on one side: at most α/2 per level;
//! - a level holding under [`RARE_SHARE`] of the blocks is too rare to judge, and one seen in a
//!   single replicate has no interval; neither can show a disagreement.
//!
//! Judging each level alone, and requiring every level to agree, was tried first: it held α
//! where the levels differ, but each level's interval is over a share of the replicates, and a
//! level of a few blocks left the claim undecided. Three main jobs on this VM left 11 to 13 of
//! 39 claims undecided that way, against 8 to 10 over all blocks (METHODOLOGY.md).
//!
//! A probe above [`TAKEN_NS`] found a CPU taken by other work, which says nothing of the
//! distance: its block counts at the level of the probe before it (or, first in the run, the
//! first level seen), and the coherence line says how many did so.

use crate::claims::claim::Bound;
use crate::run::coherence::{TAKEN_NS, coherence_levels};
use crate::stats::ratio::log_interval;

use super::observed::{Paired, blocks_log_ratio};
use super::outcome::{Coherence, CoherenceLevel, Verdict, verdict};

/// A level holding fewer than this share of a claim's probed blocks is too rare to judge; the
/// coherence line names it. Which levels are judged depends on the probes alone, never on the
/// ratios.
pub const RARE_SHARE: f64 = 0.10;

/// The probes of `replicates` (blocks without one are left out) read as levels, with the
/// claim's ratio at each; `None` without probes. With several levels, each level seen in two
/// replicates or more is judged against the claim's `bound`, at `confidence` (two levels) or
/// its share of `1 − confidence` (more).
pub(crate) fn coherence(
    replicates: &[Paired],
    bound: &Bound,
    confidence: f64,
) -> Option<Coherence> {
    let probes: Vec<f64> = replicates
        .iter()
        .flat_map(|r| &r.blocks)
        .filter_map(|b| b.coherence_ns)
        .collect();
    if probes.is_empty() {
        return None;
    }
    let Some(read) = coherence_levels(&probes) else {
        return Some(Coherence {
            levels: Vec::new(),
            taken: probes.len(),
        });
    };
    // Each probed block's level, a taken probe's from the probe before it.
    let mut before = probes
        .iter()
        .find(|&&ns| ns <= TAKEN_NS)
        .map_or(0, |&ns| read.of(ns));
    let at: Vec<Vec<Option<usize>>> = replicates
        .iter()
        .map(|r| {
            r.blocks
                .iter()
                .map(|b| {
                    let ns = b.coherence_ns?;
                    if ns <= TAKEN_NS {
                        before = read.of(ns);
                    }
                    Some(before)
                })
                .collect()
        })
        .collect();
    // Per level: the log ratio of every replicate with blocks there, over those blocks.
    let per_level: Vec<(Vec<f64>, usize)> = (0..read.levels.len())
        .map(|index| {
            let (mut logs, mut blocks) = (Vec::new(), 0);
            for (r, levels) in replicates.iter().zip(&at) {
                let here: Vec<_> = r
                    .blocks
                    .iter()
                    .zip(levels)
                    .filter(|(_, l)| **l == Some(index))
                    .map(|(b, _)| b)
                    .collect();
                if !here.is_empty() {
                    blocks += here.len();
                    logs.push(blocks_log_ratio(here.iter().copied()));
                }
            }
            (logs, blocks)
        })
        .collect();
    let by_level = per_level.len() > 1;
    let probed: usize = per_level.iter().map(|(_, blocks)| blocks).sum();
    let rare = |blocks: usize| by_level && (blocks as f64) < RARE_SHARE * probed as f64;
    let judged = per_level.iter().filter(|(_, b)| !rare(*b)).count();
    // A wrong disagreement needs one level's interval to miss on one side, at most α/2 at each
    // of k judged levels: beyond two, each level's α is 2α/k, so that the k keep to α.
    let level_confidence = 1.0 - (1.0 - confidence) * (2.0 / judged.max(1) as f64).min(1.0);
    let levels = read
        .levels
        .iter()
        .zip(per_level)
        .map(|(l, (logs, blocks))| {
            let interval = log_interval(&logs, level_confidence);
            let rare = rare(blocks);
            CoherenceLevel {
                round_trip_ns: l.median_ns,
                blocks,
                verdict: (by_level && !rare && interval.n >= 2).then(|| verdict(bound, &interval)),
                rare,
                interval,
            }
        })
        .collect();
    Some(Coherence {
        levels,
        taken: read.taken,
    })
}

impl Coherence {
    /// Whether the probes read several levels, so that each was judged on its own.
    pub fn by_level(&self) -> bool {
        self.levels.len() > 1
    }

    /// Why the claim cannot be judged on this machine, if two judged levels decide it
    /// opposite ways: REPRODUCED at one, NOT REPRODUCED at another.
    pub(crate) fn disagreement(&self) -> Option<String> {
        let at = |wanted: Verdict| {
            self.levels
                .iter()
                .find(|l| l.verdict.as_ref() == Some(&wanted))
        };
        let (yes, no) = (at(Verdict::Reproduced)?, at(Verdict::NotReproduced)?);
        Some(format!(
            "the host moves this machine's two CPUs between distances, and the claim reads REPRODUCED at one ({}) and NOT REPRODUCED at another ({}); see the coherence line",
            level_text(yes),
            level_text(no)
        ))
    }
}

/// A level's round trip and ratio, in words: `316 ns, ratio 0.902 [0.850, 0.957]`.
fn level_text(level: &CoherenceLevel) -> String {
    let iv = &level.interval;
    format!(
        "{:.0} ns, ratio {:.3} [{:.3}, {:.3}]",
        level.round_trip_ns, iv.ratio, iv.low, iv.high
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ">= 1.05" with the default band.
    const AT_105: Bound = Bound {
        direction: crate::Direction::Higher,
        min_effect: 1.05,
        tolerance: crate::claims::claim::DEFAULT_TOLERANCE,
    };
    use crate::claims::reproduce::outcome::BlockValue;

    const NEAR: f64 = 66.0;
    const FAR: f64 = 316.0;

    /// A replicate whose blocks ran at the given (round trip, contender/baseline) pairs, with
    /// a per-replicate offset on both sides (which cancels in the ratio).
    fn replicate(offset: f64, blocks: &[(f64, f64)]) -> Paired {
        Paired {
            blocks: blocks
                .iter()
                .map(|&(ns, ratio)| BlockValue {
                    baseline: 100.0 * offset,
                    contender: 100.0 * offset * ratio,
                    baseline_first: true,
                    coherence_ns: Some(ns),
                })
                .collect(),
            ..Paired::unordered(None, 1.0, 1.0)
        }
    }

    /// `n` replicates, each with four near blocks at `near` and, in the first `far_in`, four
    /// far blocks at `far`; the ratios wobble a little from replicate to replicate.
    fn run(n: usize, near: f64, far: f64, far_in: usize) -> Vec<Paired> {
        (0..n)
            .map(|i| {
                let wobble = 1.0 + 0.01 * ((i % 3) as f64 - 1.0);
                let mut blocks = vec![(NEAR, near * wobble); 4];
                if i < far_in {
                    blocks.extend([(FAR, far * wobble); 4]);
                }
                replicate(1.0 + i as f64 * 0.3, &blocks)
            })
            .collect()
    }

    fn judge(replicates: &[Paired]) -> Coherence {
        coherence(replicates, &AT_105, 0.999).unwrap()
    }

    #[test]
    fn levels_that_agree_are_each_judged_and_raise_nothing() {
        let c = judge(&run(6, 1.3, 1.2, 6));
        assert!(c.by_level());
        for l in &c.levels {
            assert_eq!(l.interval.confidence, 0.999, "{l:?}");
            assert_eq!((l.blocks, l.interval.n), (24, 6));
            assert_eq!(l.verdict, Some(Verdict::Reproduced));
        }
        assert!((c.levels[1].interval.ratio - 1.2).abs() < 0.01, "{c:?}");
        assert_eq!(c.disagreement(), None);
    }

    #[test]
    fn levels_that_decide_opposite_ways_make_the_claim_untestable_here() {
        let c = judge(&run(6, 1.2, 0.9, 6));
        assert_eq!(c.levels[0].verdict, Some(Verdict::Reproduced));
        assert_eq!(c.levels[1].verdict, Some(Verdict::NotReproduced));
        let reason = c.disagreement().unwrap();
        assert!(
            reason.contains("REPRODUCED at one (66 ns, ratio 1.200"),
            "{reason}"
        );
        assert!(
            reason.contains("NOT REPRODUCED at another (316 ns, ratio 0.900"),
            "{reason}"
        );
    }

    #[test]
    fn a_level_seen_in_one_replicate_is_not_judged() {
        let c = judge(&run(8, 1.3, 0.5, 1));
        assert_eq!(c.levels[0].verdict, Some(Verdict::Reproduced));
        assert_eq!(
            (c.levels[1].verdict.as_ref(), c.levels[1].interval.n),
            (None, 1)
        );
        assert_eq!(c.disagreement(), None);
        // In 3, it is judged, and disagrees.
        let c = judge(&run(8, 1.3, 0.5, 3));
        assert_eq!(c.levels[1].verdict, Some(Verdict::NotReproduced));
        assert!(c.disagreement().is_some());
    }

    #[test]
    fn a_level_under_a_tenth_of_the_blocks_is_too_rare_to_judge() {
        // Far in 1 block of each of 3 replicates of 8 (3 of 35 blocks).
        let mut replicates = run(8, 1.3, 0.5, 0);
        for r in replicates.iter_mut().take(3) {
            r.blocks.push(replicate(1.0, &[(FAR, 0.5)]).blocks[0]);
        }
        let c = judge(&replicates);
        assert!(c.by_level());
        assert!(c.levels[1].rare && c.levels[1].verdict.is_none(), "{c:?}");
        assert_eq!(c.levels[1].blocks, 3);
        assert_eq!(c.disagreement(), None);
    }

    #[test]
    fn an_undecided_level_shows_no_disagreement() {
        // Far straddles the bound: 1.05 with a spread.
        let mut replicates = run(6, 1.3, 1.0, 0);
        for (i, r) in replicates.iter_mut().enumerate() {
            let ratio = [0.9, 1.2, 1.0, 1.15, 0.95, 1.1][i];
            r.blocks.extend(replicate(1.0, &[(FAR, ratio); 4]).blocks);
        }
        let c = judge(&replicates);
        assert_eq!(c.levels[0].verdict, Some(Verdict::Reproduced));
        assert!(matches!(
            c.levels[1].verdict,
            Some(Verdict::Inconclusive { .. })
        ));
        assert_eq!(c.disagreement(), None);
    }

    #[test]
    fn a_taken_cpu_counts_at_the_level_before_it_and_a_single_level_is_not_split() {
        // Near, near, taken (a 0.5 block), far, far, taken (a 2.0 block): the first taken block
        // counts near, the second far.
        let one = [
            (NEAR, 1.3),
            (NEAR, 1.3),
            (6_000.0, 0.5),
            (FAR, 1.3),
            (FAR, 1.3),
            (6_000.0, 2.0),
        ];
        let taken: Vec<Paired> = (0..6).map(|_| replicate(1.0, &one)).collect();
        let c = judge(&taken);
        assert!(c.by_level());
        assert_eq!(c.taken, 12);
        assert_eq!((c.levels[0].blocks, c.levels[1].blocks), (18, 18));
        let near = (1.3f64 * 2.0 + 0.5) / 3.0;
        assert!((c.levels[0].interval.ratio - near).abs() < 1e-9, "{c:?}");
        let c = judge(&run(6, 1.3, 1.3, 0));
        assert_eq!((c.levels.len(), c.by_level(), c.taken), (1, false, 0));
        assert_eq!(c.levels[0].verdict, None);
        // No probes, no levels; every probe taken, no level either.
        let unprobed = vec![Paired::unordered(None, 1.0, 2.0); 6];
        assert_eq!(coherence(&unprobed, &AT_105, 0.999), None);
        let busy = vec![replicate(1.0, &[(6_000.0, 1.3)]); 3];
        let c = judge(&busy);
        assert_eq!((c.levels.len(), c.by_level(), c.taken), (0, false, 3));
    }
}
