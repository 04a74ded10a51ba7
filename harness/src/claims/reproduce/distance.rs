//! Verdicts per CPU distance: a multi-threaded claim judged separately at each level of the
//! coherence probe ([`crate::run::coherence`]), when the probes after its blocks show the host
//! moving the two CPUs between distances under the run.
//!
//! On such a machine a contended benchmark is several experiments, and its ratio may differ
//! between them (METHODOLOGY.md, *Cache-line distance between the CPUs*): registry-snapshot-micro
//! read 1.9 at 28 ns, 1.0 at 66 ns and 0.74 at 320 ns in one run. Pooled, a run's ratio depends
//! on how long the host kept each level, and a verdict from it moves from run to run with those
//! shares. Judged per level:
//!
//! - each level's interval is over the replicates with blocks there. A wrong verdict needs
//!   some level's interval to miss its truth on the side that verdict needs (below it for a
//!   wrong NOT REPRODUCED, above it for a wrong REPRODUCED), which has at most half the level's
//!   α: so with two levels each is at the look's own confidence, and with k > 2 at α·2/k, and
//!   a wrong verdict keeps to α (an intersection-union test: Berger, 1982);
//! - the verdict: every level REPRODUCED, or every one NOT REPRODUCED, is that; one of each is
//!   NOT TESTABLE HERE (this machine gives both answers); anything else is INCONCLUSIVE, and so
//!   is a level seen in one replicate only, which has no interval. A claim that holds at one
//!   level and is unknown at another is not REPRODUCED: `sequential_tests` shows that judging
//!   only the better-seen level would decide wrongly far more often than α, as pooling does;
//! - a level holding under [`RARE_SHARE`] of the blocks is too rare to judge, and the verdict
//!   speaks of the others (the coherence line names it): the host's rare moves would otherwise
//!   leave every claim undecided.
//!
//! A run whose probes show one level is judged over all its blocks, as before: its verdict
//! speaks of that level, which the coherence line names. A probe above [`TAKEN_NS`] found a
//! CPU taken by other work, which says nothing of the distance: its block counts at the level
//! of the probe before it (or, first in the run, the first level seen), and the coherence line
//! says how many did so.

use serde::{Deserialize, Serialize};

use crate::claims::claim::Direction;
use crate::run::coherence::{TAKEN_NS, levels};
use crate::stats::ratio::{RatioInterval, log_interval};

use super::derive::{Paired, blocks_log_ratio};
use super::outcome::{Verdict, verdict};

/// What the coherence probes after a claim's blocks read, and the claim's ratio at each level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coherence {
    /// The levels, fastest first (none when every probe found a CPU taken).
    pub levels: Vec<CoherenceLevel>,
    /// Whether there were several levels, so that the verdict was judged per level.
    pub by_level: bool,
    /// Blocks whose probe found a CPU taken by other work (above [`TAKEN_NS`]), counted at the
    /// level of the probe before them.
    #[serde(default)]
    pub taken: usize,
}

/// One level of the probes, and the claim's ratio over its blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoherenceLevel {
    /// The median round trip of its probes, in ns.
    pub round_trip_ns: f64,
    /// Blocks whose probe read this level (or, taken, the probe before them).
    pub blocks: usize,
    /// Each replicate's sides averaged over its blocks at this level, and the interval of their
    /// log ratios over the replicates that had such blocks, at the look's confidence.
    pub interval: RatioInterval,
    /// The level's verdict, when it was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Whether the level held too few of the blocks to judge ([`RARE_SHARE`]).
    #[serde(default)]
    pub rare: bool,
}

/// A level holding fewer than this share of a claim's probed blocks is too rare to judge: the
/// verdict speaks of the others, and the coherence line names it. Which levels are judged
/// depends on the probes alone, never on the ratios, so the choice spends no α.
pub const RARE_SHARE: f64 = 0.10;

/// The probes of `replicates` (blocks without one are left out) read as levels, with the
/// claim's ratio at each; `None` without probes. With several levels, each level seen in two
/// replicates or more is judged against `direction` and `min_effect`, at `confidence` (two
/// levels) or its share of `1 − confidence` (more).
pub(crate) fn coherence(
    replicates: &[Paired],
    direction: Direction,
    min_effect: f64,
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
    let Some(read) = levels(&probes) else {
        return Some(Coherence {
            levels: Vec::new(),
            by_level: false,
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
    // A wrong verdict needs one level's interval to miss on one side, at most α/2 at each of
    // k judged levels: beyond two, each level's α is 2α/k, so that the k keep to α.
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
                verdict: (by_level && !rare && interval.n >= 2)
                    .then(|| verdict(direction, min_effect, &interval)),
                rare,
                interval,
            }
        })
        .collect();
    Some(Coherence {
        levels,
        by_level,
        taken: read.taken,
    })
}

impl Coherence {
    /// The claim's verdict from its levels, with the interval it rests on (none: the one over
    /// all blocks); `None` when the levels are not the CPUs' distance, so that the verdict is
    /// judged over all blocks.
    pub(crate) fn verdict(&self, min_effect: f64) -> Option<(Verdict, Option<RatioInterval>)> {
        if !self.by_level {
            return None;
        }
        let Some(judged) = self
            .levels
            .iter()
            .filter(|l| !l.rare)
            .map(|l| l.verdict.as_ref().map(|v| (l, v)))
            .collect::<Option<Vec<_>>>()
        else {
            // A level seen in one replicate: more replicates may judge it.
            return Some((Verdict::Inconclusive { pairs_needed: None }, None));
        };
        let &(first, first_verdict) = judged.first().expect("a level holds 10% of the blocks");
        if judged
            .iter()
            .all(|(_, v)| v.decided() && *v == first_verdict)
        {
            // The level nearest the bound is the one the verdict rests on.
            let margin = |iv: &RatioInterval| {
                let bound = min_effect.ln();
                (iv.low.ln() - bound)
                    .abs()
                    .min((iv.high.ln() - bound).abs())
            };
            let binding = judged
                .iter()
                .map(|(l, _)| l)
                .min_by(|a, b| margin(&a.interval).total_cmp(&margin(&b.interval)))
                .expect("one at least");
            return Some((first_verdict.clone(), Some(binding.interval)));
        }
        let (reproduced, not) = (
            judged.iter().find(|(_, v)| **v == Verdict::Reproduced),
            judged.iter().find(|(_, v)| **v == Verdict::NotReproduced),
        );
        if let (Some((yes, _)), Some((no, _))) = (reproduced, not) {
            let reason = format!(
                "the host moves this machine's two CPUs between distances, and the claim reads REPRODUCED at one ({}) and NOT REPRODUCED at another ({}); see the coherence line",
                level_text(yes),
                level_text(no)
            );
            return Some((Verdict::NotTestable { reason }, None));
        }
        // Undecided: the undecided level with the most replicates.
        let (open, open_verdict) = judged
            .iter()
            .filter(|(_, v)| !v.decided())
            .max_by_key(|(l, _)| l.interval.n)
            .copied()
            .unwrap_or((first, first_verdict));
        Some((open_verdict.clone(), Some(open.interval)))
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

    fn judge(replicates: &[Paired]) -> (Coherence, Option<(Verdict, Option<RatioInterval>)>) {
        let c = coherence(replicates, Direction::Higher, 1.05, 0.999).unwrap();
        let v = c.verdict(1.05);
        (c, v)
    }

    #[test]
    fn levels_that_agree_decide_and_the_level_nearest_the_bound_is_shown() {
        let (c, v) = judge(&run(6, 1.3, 1.2, 6));
        assert!(c.by_level);
        let (verdict, interval) = v.unwrap();
        assert_eq!(verdict, Verdict::Reproduced);
        for l in &c.levels {
            assert_eq!(l.interval.confidence, 0.999, "{l:?}");
            assert_eq!((l.blocks, l.interval.n), (24, 6));
        }
        assert!((interval.unwrap().ratio - 1.2).abs() < 0.01, "{interval:?}");
    }

    #[test]
    fn levels_that_decide_opposite_ways_make_the_claim_untestable_here() {
        let (c, v) = judge(&run(6, 1.2, 0.9, 6));
        assert_eq!(c.levels[0].verdict, Some(Verdict::Reproduced));
        assert_eq!(c.levels[1].verdict, Some(Verdict::NotReproduced));
        match v.unwrap() {
            (Verdict::NotTestable { reason }, None) => {
                assert!(
                    reason.contains("REPRODUCED at one (66 ns, ratio 1.200"),
                    "{reason}"
                );
                assert!(
                    reason.contains("NOT REPRODUCED at another (316 ns, ratio 0.900"),
                    "{reason}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_level_seen_in_one_replicate_leaves_the_claim_open() {
        // Far in 1 of 8 replicates: no interval there, so no verdict, though near decides.
        let (c, v) = judge(&run(8, 1.3, 0.5, 1));
        assert_eq!(c.levels[0].verdict, Some(Verdict::Reproduced));
        assert_eq!(
            (c.levels[1].verdict.as_ref(), c.levels[1].interval.n),
            (None, 1)
        );
        assert_eq!(
            v.unwrap(),
            (Verdict::Inconclusive { pairs_needed: None }, None)
        );
        // In 3, it is judged, and disagrees.
        let (c, v) = judge(&run(8, 1.3, 0.5, 3));
        assert_eq!(c.levels[1].verdict, Some(Verdict::NotReproduced));
        assert!(
            matches!(v, Some((Verdict::NotTestable { .. }, None))),
            "{v:?}"
        );
    }

    #[test]
    fn a_level_under_a_tenth_of_the_blocks_is_too_rare_to_judge() {
        // Far in 1 block of each of 3 replicates of 8 (3 of 35 blocks): the near level decides.
        let mut replicates = run(8, 1.3, 0.5, 0);
        for r in replicates.iter_mut().take(3) {
            r.blocks.push(replicate(1.0, &[(FAR, 0.5)]).blocks[0]);
        }
        let (c, v) = judge(&replicates);
        assert!(c.by_level);
        assert!(c.levels[1].rare && c.levels[1].verdict.is_none(), "{c:?}");
        assert_eq!(c.levels[1].blocks, 3);
        let (verdict, interval) = v.unwrap();
        assert_eq!(verdict, Verdict::Reproduced);
        assert_eq!(interval.unwrap().n, 8);
    }

    #[test]
    fn one_decided_level_and_one_open_leave_the_claim_open_on_the_open_one() {
        // Far straddles the bound: 1.05 with a spread.
        let mut replicates = run(6, 1.3, 1.0, 0);
        for (i, r) in replicates.iter_mut().enumerate() {
            let ratio = [0.9, 1.2, 1.0, 1.15, 0.95, 1.1][i];
            r.blocks.extend(replicate(1.0, &[(FAR, ratio); 4]).blocks);
        }
        let (c, v) = judge(&replicates);
        assert_eq!(c.levels[0].verdict, Some(Verdict::Reproduced));
        let (verdict, interval) = v.unwrap();
        assert!(
            matches!(verdict, Verdict::Inconclusive { .. }),
            "{verdict:?}"
        );
        assert_eq!(interval, Some(c.levels[1].interval));
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
        let (c, v) = judge(&taken);
        assert!(c.by_level);
        assert_eq!(c.taken, 12);
        assert_eq!((c.levels[0].blocks, c.levels[1].blocks), (18, 18));
        let near = (1.3f64 * 2.0 + 0.5) / 3.0;
        assert!((c.levels[0].interval.ratio - near).abs() < 1e-9, "{c:?}");
        assert!(v.is_some());
        let (c, v) = judge(&run(6, 1.3, 1.3, 0));
        assert_eq!(
            (c.levels.len(), c.by_level, c.taken, v),
            (1, false, 0, None)
        );
        // No probes, no levels; every probe taken, no level either.
        let unprobed = vec![Paired::unordered(None, 1.0, 2.0); 6];
        assert_eq!(coherence(&unprobed, Direction::Higher, 1.05, 0.999), None);
        let busy = vec![replicate(1.0, &[(6_000.0, 1.3)]); 3];
        let (c, v) = judge(&busy);
        assert_eq!(
            (c.levels.len(), c.by_level, c.taken, v),
            (0, false, 3, None)
        );
    }
}
