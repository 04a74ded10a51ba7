//! What a replicate source hands to the verdicts: each replicate of one claim as the claim's
//! metric saw it ([`Paired`]: both sides' values per block, and how they were launched), what a
//! replicate cost, and which values a claim can take. Every kind of replicate (rounds of
//! processes, seeds, invocations of programs, result files) is observed in this one shape, so
//! the verdicts know nothing of how it was measured.

use crate::claims::claim::ClaimKind;
use crate::run::result::IterationResult;

use super::outcome::BlockValue;

/// Picks the claim's metric out of one iteration (`primary`, `ops`, or a secondary metric).
pub fn metric_of(metric: &str, it: &IterationResult) -> Result<(f64, String), String> {
    if metric == "primary" {
        return Ok((it.score, it.unit.clone()));
    }
    if let Some(m) = it.secondary.iter().find(|m| m.name == metric) {
        return Ok((m.value, m.unit.clone()));
    }
    if metric == "ops" {
        return Ok((it.ops as f64, "ops".into()));
    }
    let names: Vec<_> = it.secondary.iter().map(|m| m.name.as_str()).collect();
    Err(unknown_metric(metric, &names))
}

/// Why `metric` cannot be read from what reports `primary`, `ops` and `secondary`.
pub(crate) fn unknown_metric(metric: &str, secondary: &[&str]) -> String {
    format!(
        "the scenario reports no metric `{metric}`; it reports: primary, ops, {}",
        secondary.join(", ")
    )
}

/// Whether `value` can enter a claim of `kind`: a ratio needs a finite positive value, a count
/// a finite one not below zero.
pub(crate) fn admissible(kind: ClaimKind, value: f64) -> bool {
    value.is_finite()
        && match kind {
            ClaimKind::Ratio => value > 0.0,
            ClaimKind::Count => value >= 0.0,
        }
}

/// What a claim of `kind` needs of every value, for errors.
pub(crate) fn needs(kind: ClaimKind) -> &'static str {
    match kind {
        ClaimKind::Ratio => {
            "a ratio needs finite positive values (a count claim tests none against some)"
        }
        ClaimKind::Count => "a count needs finite values, none negative",
    }
}

/// A side's level in one process: the log of its blocks' mean value. JMH's score is the mean of
/// its iterations too; a mean of logs would count a slice that one stall covered (a refresh
/// blocking every indexing thread, a pause) as a collapse of the whole process's level, where the
/// process lost only the stall's time.
pub(crate) fn level(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (sum / n.max(1) as f64).ln()
}

/// One replicate of one claim as the claim's metric saw it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Paired {
    /// The seed offset of a deterministic replicate.
    pub seed: Option<u64>,
    /// Whether the baseline's process was started before the contender's.
    pub baseline_launched_first: bool,
    /// Environment padding of the baseline's and the contender's processes, in bytes.
    pub env_pad: (usize, usize),
    /// The CPU both processes were pinned to, if they were.
    pub cpu: Option<usize>,
    /// Both sides' values per block.
    pub blocks: Vec<BlockValue>,
}

/// The log ratio of a replicate's `blocks` (all of them, or those of one kind): of the
/// contender's [`level`] over them to the baseline's.
pub fn blocks_log_ratio<'a>(blocks: impl Iterator<Item = &'a BlockValue> + Clone) -> f64 {
    level(blocks.clone().map(|b| b.contender)) - level(blocks.map(|b| b.baseline))
}

impl Paired {
    /// The replicate's log ratio ([`blocks_log_ratio`] over all its blocks).
    pub fn log_ratio(&self) -> f64 {
        blocks_log_ratio(self.blocks.iter())
    }

    /// A replicate of one block whose sides ran in no order to speak of: a seed of a
    /// simulation, or a fork pair of two result files.
    pub fn unordered(seed: Option<u64>, baseline: f64, contender: f64) -> Paired {
        Paired {
            seed,
            baseline_launched_first: true,
            env_pad: (0, 0),
            cpu: None,
            blocks: vec![BlockValue {
                baseline,
                contender,
                baseline_first: true,
                coherence_ns: None,
            }],
        }
    }
}

/// The mean costs of one replicate, for Kalibera's blocks per pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Costs {
    /// Wall seconds to start, set up and warm a replicate's processes.
    pub pair: f64,
    /// Wall seconds of one block of the two arms of a claim.
    pub block: f64,
}

impl Costs {
    /// The mean costs of replicates given as (seconds to start their processes, seconds of
    /// their blocks, blocks), `arms` measured in each block.
    pub fn mean_of(replicates: &[(f64, f64, usize)], arms: usize) -> Costs {
        let n = replicates.len().max(1) as f64;
        Costs {
            pair: replicates.iter().map(|r| r.0).sum::<f64>() / n,
            block: replicates
                .iter()
                .map(|r| r.1 / r.2.max(1) as f64)
                .sum::<f64>()
                / n
                * 2.0
                / arms.max(1) as f64,
        }
    }
}

/// What one claim's verdict is derived from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Observed {
    /// The replicates so far, in order.
    pub replicates: Vec<Paired>,
    /// The metric's unit.
    pub unit: String,
    /// What a replicate cost.
    pub costs: Costs,
    /// A count claim's exposure metric summed over every block, baseline then contender (or
    /// why it could not be read); `None` when the claim names none.
    pub exposure: Option<[Result<f64, String>; 2]>,
}
