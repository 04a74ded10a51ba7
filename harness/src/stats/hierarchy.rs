//! Two-level random-effects statistics of paired runs (Kalibera & Jones, "Rigorous Benchmarking
//! in Reasonable Time", ISMM 2013; libkalibera's `Si2`/`Ti2`/`optimalreps`).
//!
//! Level 1 is a block (one measurement of each arm, giving one log ratio), level 2 the process
//! pair (fresh processes for every arm), which is the unit of replication: the interval is a
//! Student t over the P pair means with P - 1 degrees of freedom, whatever the number of blocks
//! per pair. Pooling the blocks instead would make the interval too narrow by the design effect
//! 1 + (m - 1)ρ.

use serde::{Deserialize, Serialize};

/// The variance components of `P` pairs of `m` blocks each.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VarianceComponents {
    /// Pairs.
    pub pairs: usize,
    /// Blocks per pair (the smallest count, if the pairs differ).
    pub blocks: usize,
    /// Within-pair variance of the block values, T1² = S1² (unbiased).
    pub within: f64,
    /// Between-pair variance, T2² = S2² - S1²/m, clamped at 0 (unbiased before clamping).
    pub between: f64,
    /// Intra-pair correlation ρ = T2² / (T1² + T2²); 0 when both are 0.
    pub rho: f64,
    /// How much narrower pooling all blocks would make the variance: 1 + (m - 1)ρ.
    pub design_effect: f64,
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Kalibera & Jones' estimators for `pairs[p][b]` (at least two pairs of at least two blocks;
/// `None` otherwise). Pairs of different lengths use their own means and the smallest m.
pub fn components(pairs: &[Vec<f64>]) -> Option<VarianceComponents> {
    let p = pairs.len();
    let m = pairs.iter().map(Vec::len).min()?;
    if p < 2 || m < 2 {
        return None;
    }
    // S1²: the variance of blocks around their pair's mean, averaged over pairs.
    let s1 = pairs
        .iter()
        .map(|blocks| {
            let mu = mean(blocks);
            blocks.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (blocks.len() - 1) as f64
        })
        .sum::<f64>()
        / p as f64;
    // S2²: the variance of the pair means around the grand mean.
    let means: Vec<f64> = pairs.iter().map(|b| mean(b)).collect();
    let grand = mean(&means);
    let s2 = means.iter().map(|x| (x - grand).powi(2)).sum::<f64>() / (p - 1) as f64;
    let within = s1;
    let between = (s2 - s1 / m as f64).max(0.0);
    let rho = if within + between > 0.0 {
        between / (within + between)
    } else {
        0.0
    };
    Some(VarianceComponents {
        pairs: p,
        blocks: m,
        within,
        between,
        rho,
        design_effect: 1.0 + (m as f64 - 1.0) * rho,
    })
}

impl VarianceComponents {
    /// The blocks per pair that minimise the interval for a fixed budget, given the cost of a
    /// pair (start, set up and warm its processes) and of a block:
    /// `m* = ceil(sqrt((c_pair / c_block) · T1² / T2²))` (libkalibera's `optimalreps`).
    /// `None` when no between-pair variance was detected (then more blocks are always cheaper).
    pub fn optimal_blocks(&self, pair_cost: f64, block_cost: f64) -> Option<u64> {
        (self.between > 0.0 && block_cost > 0.0)
            .then(|| {
                ((pair_cost / block_cost) * self.within / self.between)
                    .sqrt()
                    .ceil()
                    .max(1.0) as u64
            })
            .filter(|_| pair_cost.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimators_match_a_hand_computed_example() {
        // Pair means 2, 4, 6 (grand mean 4): S2² = (4 + 0 + 4) / 2 = 4.
        // Within: each pair is (mean - 1, mean + 1): variance 2 per pair, S1² = 2.
        // T2² = 4 - 2/2 = 3, ρ = 3 / 5 = 0.6, design effect 1 + 1 · 0.6 = 1.6.
        let pairs = vec![vec![1.0, 3.0], vec![3.0, 5.0], vec![5.0, 7.0]];
        let c = components(&pairs).unwrap();
        assert_eq!((c.pairs, c.blocks), (3, 2));
        assert!((c.within - 2.0).abs() < 1e-12);
        assert!((c.between - 3.0).abs() < 1e-12);
        assert!((c.rho - 0.6).abs() < 1e-12);
        assert!((c.design_effect - 1.6).abs() < 1e-12);
        // m* = ceil(sqrt((10 / 1) · 2 / 3)) = ceil(2.58) = 3.
        assert_eq!(c.optimal_blocks(10.0, 1.0), Some(3));
    }

    #[test]
    fn no_between_variance_is_clamped_and_needs_no_more_pairs() {
        // Identical pair means: S2² = 0 < S1²/m, so T2² clamps to 0.
        let pairs = vec![vec![1.0, 3.0], vec![3.0, 1.0]];
        let c = components(&pairs).unwrap();
        assert_eq!(c.between, 0.0);
        assert_eq!(c.rho, 0.0);
        assert_eq!(c.optimal_blocks(10.0, 1.0), None);
        assert!(components(&[vec![1.0, 2.0]]).is_none());
        assert!(components(&[vec![1.0], vec![2.0]]).is_none());
    }
}
