//! What `reproduce` learned about a claim: its verdict, the replicates it was derived from and
//! both sides' values, in the layout the verdict file writes (`critsec reproduce --json`), so
//! that a reader can recompute every interval from the file alone.

use serde::{Deserialize, Serialize};

use crate::claims::claim::{Bound, Claim, Direction, Role};
use crate::run::result::Build;
use crate::stats::hierarchy::VarianceComponents;
use crate::stats::poisson::RateInterval;
use crate::stats::ratio::RatioInterval;
use crate::stats::t_quantile;

/// The outcome of the measurements against the claimed effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Verdict {
    /// The interval lies entirely beyond the claimed effect (count: none against some).
    Reproduced,
    /// The interval lies entirely on the other side of the claimed effect.
    NotReproduced,
    /// The interval straddles the claimed effect but lies inside the band of the claim's
    /// tolerance around it: the effect equals the claimed bound, within the tolerance.
    AtTheBound,
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
            Verdict::AtTheBound => "AT THE BOUND",
            Verdict::Inconclusive { .. } => "INCONCLUSIVE",
            Verdict::NotTestable { .. } => "NOT TESTABLE HERE",
        }
    }

    /// Whether more replicates could not change it (AT THE BOUND may still become REPRODUCED
    /// or NOT REPRODUCED as a later look narrows it, both true of an effect at the bound).
    pub(crate) fn decided(&self) -> bool {
        matches!(
            self,
            Verdict::Reproduced | Verdict::NotReproduced | Verdict::AtTheBound
        )
    }
}

/// Whether a claim needs no more replicates: it has a verdict more cannot change (a look that
/// finds the CPUs' distances deciding opposite ways, [`super::distance`], is one), or an error.
pub(crate) fn settled(verdict: &Result<Verdict, String>) -> bool {
    verdict
        .as_ref()
        .map(|v| v.decided() || matches!(v, Verdict::NotTestable { .. }))
        .unwrap_or(true)
}

/// The verdict of an interval against "ratio >= m" (`Higher`) or "ratio <= m" (`Lower`), with
/// the band [m / t, m · t] of the claim's tolerance t: REPRODUCED and NOT REPRODUCED when the
/// interval lies on one side of m, AT THE BOUND when it straddles m inside the band (the
/// interval's confidence bounds the chance that a truth outside the band is called so, as it
/// bounds a wrong side: two one-sided tests, TOST), INCONCLUSIVE otherwise.
pub fn verdict(bound: &Bound, r: &RatioInterval) -> Verdict {
    let m = bound.min_effect;
    let (beyond, against) = match bound.direction {
        Direction::Higher => (r.low >= m, r.high < m),
        Direction::Lower => (r.high <= m, r.low > m),
    };
    if beyond {
        return Verdict::Reproduced;
    }
    if against {
        return Verdict::NotReproduced;
    }
    let band = bound.tolerance.max(1.0).ln();
    if band > 0.0 && r.low >= m / bound.tolerance && r.high <= m * bound.tolerance {
        return Verdict::AtTheBound;
    }
    // Replicates needed for the half-width to shrink below the distance to the bound, or below
    // the room the band leaves beside the estimate, at the current spread (a rough guide: the
    // t quantile also shrinks as n grows).
    let distance = (r.ratio.ln() - m.ln()).abs();
    let usable = r.log_sd.is_finite() && r.n >= 2;
    let t = t_quantile(r.confidence, (r.n.max(2) - 1) as f64);
    let needed = |room: f64| {
        (usable && room > 1e-12)
            .then(|| ((t * r.log_sd / room).powi(2)).ceil().max(r.n as f64 + 1.0) as u64)
    };
    let pairs_needed = match (needed(distance), needed(band - distance)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    Verdict::Inconclusive { pairs_needed }
}

/// What one replicate of a claim is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplicateKind {
    /// None was measured: the claim failed or was found untestable before its first look
    /// (written as an empty string).
    #[default]
    #[serde(rename = "")]
    Unmeasured,
    /// A pair of fresh processes: a round of a scenario's arms, or one invocation of each of a
    /// claim's two programs.
    #[serde(rename = "process-pair")]
    ProcessPair,
    /// A seed of a deterministic simulation.
    #[serde(rename = "seed")]
    Seed,
}

impl ReplicateKind {
    /// The name the verdict file writes: `process-pair`, `seed`, or empty.
    pub fn as_str(&self) -> &'static str {
        match self {
            ReplicateKind::Unmeasured => "",
            ReplicateKind::ProcessPair => "process-pair",
            ReplicateKind::Seed => "seed",
        }
    }
}

impl std::fmt::Display for ReplicateKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind a name stands for, as [`ReplicateKind::as_str`] writes it (so that code which set
/// the kind from its name still compiles); a name this version never writes is `Unmeasured`.
impl From<&str> for ReplicateKind {
    fn from(name: &str) -> Self {
        match name {
            "process-pair" => ReplicateKind::ProcessPair,
            "seed" => ReplicateKind::Seed,
            _ => ReplicateKind::Unmeasured,
        }
    }
}

impl PartialEq<&str> for ReplicateKind {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
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
    #[serde(with = "crate::stats::nullable::vec_f64_or_null")]
    pub values: Vec<f64>,
    /// Unit of the metric.
    pub unit: String,
    /// A program side's runtime and raw iterations (absent for scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<ProgramRecord>,
    /// The build of the git revision the side ran (absent for this executable's own sides):
    /// its commit, whether it had uncommitted changes, its cargo profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<Build>,
}

/// What a program side ran and reported beyond the claim's metric: its provenance.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProgramRecord {
    /// The runtime its invocations reported, each distinct text once, in order of first report
    /// (JMH: JDK, VM, JMH version, JVM arguments; none for programs that print lines).
    pub runtimes: Vec<String>,
    /// Every iteration value of every invocation, one list per invocation, fork after fork.
    pub iterations: Vec<Vec<f64>>,
    /// How many values each fork of each invocation gave.
    pub forks: Vec<Vec<usize>>,
}

impl ProgramRecord {
    /// Its runtimes in words, in the order they were first reported (none when it reported
    /// none: a program that prints lines).
    pub fn runtime_text(&self) -> Option<String> {
        (!self.runtimes.is_empty()).then(|| self.runtimes.join("; then "))
    }
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
    /// The CPU both processes were pinned to after their setup (none: not pinned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// Per block: both sides' values and which ran first.
    pub blocks: Vec<BlockValue>,
    /// The replicate's log ratio contender/baseline, of the sides' mean values over its blocks
    /// (NaN, `null` in JSON, when a value is not positive). Files written before it was named so
    /// held the mean of the blocks' log ratios under `mean_log_ratio`.
    #[serde(alias = "mean_log_ratio", with = "crate::stats::nullable::f64_or_null")]
    pub log_ratio: f64,
}

/// One block of one replicate, as the claim's metric saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BlockValue {
    /// The baseline's value.
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub baseline: f64,
    /// The contender's value.
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub contender: f64,
    /// Whether the baseline ran first in the block.
    pub baseline_first: bool,
    /// A cache line's round trip between two CPUs (ns), timed right after the block
    /// ([`crate::run::coherence`]): multi-threaded process pairs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence_ns: Option<f64>,
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
    /// What a replicate is.
    pub replicate_kind: ReplicateKind,
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
    /// Processes whose level lay far from the other processes' of their side (process pairs
    /// only): kept in the interval, reported so that their cause can be looked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub far_processes: Vec<FarProcess>,
    /// What the reader must know about the replicates (e.g. identical values where independent
    /// runs cannot give them), in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The looks the claim's group planned and why (absent in files written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<Design>,
    /// The coherence probes' levels over a multi-threaded ratio claim's blocks, with its ratio
    /// at each, and its verdict at each where there are several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence: Option<Coherence>,
}

/// The looks a group planned, as planned after its pilot, and why they ended where they did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// Replicates at each planned look.
    pub looks: Vec<u32>,
    /// Each planned look's confidence (1 − the α it spends).
    pub confidence: Vec<f64>,
    /// Wall seconds per replicate over the pilot.
    pub replicate_seconds: f64,
    /// Why the last look is where it is, in words.
    pub why: String,
    /// Why the looks ended before the last planned look with this claim undecided, in words
    /// (empty when they did not, or when it was decided).
    pub ended: String,
    /// Which looks were taken for precision alone (every claim of the group decided, one
    /// interval still wider than the goal), in words; empty when none was. Absent in files
    /// written before.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub for_precision: String,
}

/// A process far from the others of its side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FarProcess {
    /// The replicate, counted from 1.
    pub replicate: usize,
    /// `baseline` or `contender`.
    pub side: String,
    /// Its level (geometric mean over its blocks) over the median of the other processes'.
    pub factor: f64,
}

impl ClaimOutcome {
    /// The record of one side.
    pub(crate) fn side_mut(&mut self, role: Role) -> &mut SideRecord {
        match role {
            Role::Baseline => &mut self.baseline,
            Role::Contender => &mut self.contender,
        }
    }

    /// A claim not run yet.
    pub fn new(claim: &Claim) -> Self {
        ClaimOutcome {
            claim: claim.clone(),
            replicate_kind: ReplicateKind::Unmeasured,
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
            far_processes: Vec::new(),
            flags: Vec::new(),
            design: None,
            coherence: None,
        }
    }
}

/// What the coherence probes after a claim's blocks read, and the claim's ratio at each level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coherence {
    /// The levels, fastest first (none when every probe found a CPU taken).
    pub levels: Vec<CoherenceLevel>,
    /// Blocks whose probe found a CPU taken by other work (above [`TAKEN_NS`](crate::run::coherence::TAKEN_NS)), counted at the
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
    /// Whether the level held too few of the blocks to judge ([`RARE_SHARE`](super::distance::RARE_SHARE)).
    #[serde(default)]
    pub rare: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::ratio::ratio_interval;

    fn interval(ratios: &[f64]) -> RatioInterval {
        ratio_interval(ratios)
    }

    /// The bound `m` in `direction` with the default band of x/÷ 1.05.
    fn bound(direction: Direction, m: f64) -> Bound {
        Bound {
            direction,
            min_effect: m,
            tolerance: crate::claims::claim::DEFAULT_TOLERANCE,
        }
    }

    #[test]
    fn verdicts_on_synthetic_ratios() {
        let clearly_beyond = interval(&[2.0, 2.1, 1.95, 2.05, 2.02, 1.98]);
        assert_eq!(
            verdict(&bound(Direction::Higher, 1.5), &clearly_beyond),
            Verdict::Reproduced
        );
        let clearly_against = interval(&[0.8, 0.82, 0.79, 0.81, 0.8, 0.805]);
        assert_eq!(
            verdict(&bound(Direction::Higher, 1.05), &clearly_against),
            Verdict::NotReproduced
        );
        let straddling = interval(&[0.9, 1.2, 1.0, 1.3, 0.95, 1.1]);
        match verdict(&bound(Direction::Higher, 1.05), &straddling) {
            Verdict::Inconclusive {
                pairs_needed: Some(n),
            } => assert!(n > 6, "{n}"),
            other => panic!("expected inconclusive with a pair estimate, got {other:?}"),
        }
        // Lower mirrors higher.
        assert_eq!(
            verdict(&bound(Direction::Lower, 0.9), &clearly_against),
            Verdict::Reproduced
        );
        assert_eq!(
            verdict(&bound(Direction::Lower, 0.9), &clearly_beyond),
            Verdict::NotReproduced
        );
    }

    /// An interval around the bound: 1.05 [lo, hi] with a half-width of `half` in log terms.
    fn around(ratio: f64, half: f64) -> RatioInterval {
        RatioInterval {
            ratio,
            low: ratio * (-half).exp(),
            high: ratio * half.exp(),
            n: 8,
            log_sd: 0.05,
            confidence: 0.999,
        }
    }

    #[test]
    fn an_interval_straddling_the_bound_inside_its_band_is_at_the_bound() {
        // The band of >= 1.05 at x/÷ 1.05 is [1.0, 1.1025].
        let on = bound(Direction::Higher, 1.05);
        assert_eq!(verdict(&on, &around(1.05, 0.04)), Verdict::AtTheBound);
        assert_eq!(verdict(&on, &around(1.06, 0.03)), Verdict::AtTheBound);
        // Out of the band on either side: not yet.
        assert!(matches!(
            verdict(&on, &around(1.05, 0.06)),
            Verdict::Inconclusive { .. }
        ));
        assert!(matches!(
            verdict(&on, &around(1.08, 0.04)),
            Verdict::Inconclusive { .. }
        ));
        // Entirely beyond the bound (and inside the band) it is REPRODUCED, as ever.
        assert_eq!(verdict(&on, &around(1.09, 0.01)), Verdict::Reproduced);
        // Lower mirrors higher.
        assert_eq!(
            verdict(&bound(Direction::Lower, 0.5), &around(0.5, 0.04)),
            Verdict::AtTheBound
        );
        // Without a band (a tolerance of 1) an estimate on the bound cannot be settled.
        let exact = Bound {
            tolerance: 1.0,
            ..on
        };
        assert_eq!(
            verdict(&exact, &around(1.05, 0.04)),
            Verdict::Inconclusive { pairs_needed: None }
        );
        // With one, the pairs it needs are those that fit the interval inside the band.
        match verdict(&on, &around(1.05, 0.1)) {
            Verdict::Inconclusive {
                pairs_needed: Some(n),
            } => assert!(n > 8, "{n}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn replicate_kinds_keep_the_names_the_verdict_file_has_always_had() {
        for (kind, name) in [
            (ReplicateKind::Unmeasured, ""),
            (ReplicateKind::ProcessPair, "process-pair"),
            (ReplicateKind::Seed, "seed"),
        ] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<ReplicateKind>(&json).unwrap(), kind);
            assert_eq!(kind, name);
            assert_eq!(ReplicateKind::from(name), kind);
        }
    }
}
