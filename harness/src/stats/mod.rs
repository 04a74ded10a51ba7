//! Summary statistics of iteration scores, computed as JMH computes them.
//!
//! JMH reports `score ± error` where the error is the half-width of the 99.9% confidence
//! interval of the mean from Student's t distribution over all iteration scores of all forks.
//! We keep that statistic so our numbers read like JMH's, and add percentiles of the scores.
//! [`ratio`] is the log-ratio interval of paired A/B runs, [`hierarchy`] its variance components
//! (within and between process pairs), [`poisson`] the exact rate interval of count claims,
//! [`spending`] how repeated looks share α, [`welch`] the significance test of
//! `critsec compare`, [`nullable`] how a statistic that is not a number is written to JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

pub(crate) mod hierarchy;
pub(crate) mod nullable;
pub(crate) mod outlier;
pub(crate) mod poisson;
pub(crate) mod ratio;
pub(crate) mod spending;
pub(crate) mod welch;

pub use hierarchy::{VarianceComponents, components};
pub use poisson::RateInterval;
pub use ratio::{RatioInterval, log_interval};
pub use welch::{Significance, SignificanceTest, welch};

/// Confidence level of every interval we print.
pub const CONFIDENCE: f64 = 0.999;

/// Statistics of a sample of iteration scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1); NaN when n < 2.
    pub stddev: f64,
    /// Half-width of the 99.9% Student-t interval of the mean; NaN when n < 2.
    pub error: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Percentiles of the values at JMH's levels (0, 50, 90, 95, 99, 99.9, ..., 100).
    pub percentiles: BTreeMap<String, f64>,
}

/// The two-sided Student-t quantile for `confidence` with `df` degrees of freedom.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(1.0 - (1.0 - confidence) / 2.0),
        Err(_) => f64::NAN,
    }
}

/// JMH's percentile levels for `scorePercentiles`.
pub const PERCENTILE_LEVELS: [f64; 10] = [
    0.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999, 99.9999, 100.0,
];

/// Formats a percentile level as JMH's JSON key (`"50.0"`, `"99.9"`).
pub fn level_key(level: f64) -> String {
    let s = format!("{level}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

impl Summary {
    /// Summarises `values`; an empty slice gives NaN everywhere.
    pub fn of(values: &[f64]) -> Summary {
        let n = values.len();
        let mean = if n == 0 {
            f64::NAN
        } else {
            values.iter().sum::<f64>() / n as f64
        };
        let stddev = if n < 2 {
            f64::NAN
        } else {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        };
        let error = if n < 2 {
            f64::NAN
        } else {
            t_quantile(CONFIDENCE, (n - 1) as f64) * stddev / (n as f64).sqrt()
        };
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let percentiles = PERCENTILE_LEVELS
            .iter()
            .map(|&l| (level_key(l), percentile(&sorted, l)))
            .collect();
        Summary {
            n,
            mean,
            stddev,
            error,
            min: sorted.first().copied().unwrap_or(f64::NAN),
            max: sorted.last().copied().unwrap_or(f64::NAN),
            percentiles,
        }
    }

    /// The interval `[mean - error, mean + error]`.
    pub fn confidence(&self) -> (f64, f64) {
        (self.mean - self.error, self.mean + self.error)
    }
}

/// The `level`-th percentile of sorted values, interpolating linearly between ranks (the
/// estimator JMH's Apache Commons Math `Percentile` default uses: position p(n+1)/100).
pub fn percentile(sorted: &[f64], level: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let pos = level / 100.0 * (n as f64 + 1.0);
    if pos < 1.0 {
        return sorted[0];
    }
    if pos >= n as f64 {
        return sorted[n - 1];
    }
    let lower = pos.floor();
    let d = pos - lower;
    let i = lower as usize - 1;
    sorted[i] + d * (sorted[i + 1] - sorted[i])
}

/// Median of unsorted values.
pub fn median(values: &[f64]) -> f64 {
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    percentile(&s, 50.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn interval_matches_a_hand_computed_example() {
        // Scores 10, 12, 14, 16, 18: mean 14, sample sd sqrt(10) = 3.16228.
        // t(0.9995, 4) = 8.61030 (table value), so error = 8.61030 * 3.16228 / sqrt(5) = 12.17679.
        let s = Summary::of(&[10.0, 12.0, 14.0, 16.0, 18.0]);
        assert_eq!(s.n, 5);
        assert!(close(s.mean, 14.0, 1e-12));
        assert!(close(s.stddev, 10f64.sqrt(), 1e-12));
        assert!(close(s.error, 12.17679, 1e-4), "error {}", s.error);
        let (lo, hi) = s.confidence();
        assert!(close(lo, 1.82321, 1e-4) && close(hi, 26.17679, 1e-4));
        assert_eq!((s.min, s.max), (10.0, 18.0));
        assert!(close(s.percentiles["50.0"], 14.0, 1e-12));
        assert!(close(s.percentiles["100.0"], 18.0, 1e-12));
    }

    #[test]
    fn t_quantiles_match_tables() {
        assert!(close(t_quantile(0.999, 1.0), 636.619, 1e-2));
        assert!(close(t_quantile(0.999, 9.0), 4.780_9, 1e-3));
        assert!(close(t_quantile(0.95, 30.0), 2.042_3, 1e-3));
    }

    #[test]
    fn a_single_value_has_no_interval() {
        let s = Summary::of(&[3.0]);
        assert_eq!(s.mean, 3.0);
        assert!(s.error.is_nan() && s.stddev.is_nan());
        assert!(Summary::of(&[]).mean.is_nan());
    }

    #[test]
    fn percentile_interpolates_between_ranks() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert!(close(percentile(&v, 50.0), 2.5, 1e-12));
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 100.0), 4.0);
        assert!(close(median(&[5.0, 1.0, 3.0]), 3.0, 1e-12));
    }
}
