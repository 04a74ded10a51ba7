//! The geometric mean of paired ratios and its 99.9% interval, taken in log space (where a ratio
//! and its inverse are symmetric) and mapped back with `exp`.

use serde::{Deserialize, Serialize};

use super::{CONFIDENCE, t_quantile};

/// A geometric-mean ratio with its 99.9% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioInterval {
    /// exp(mean of log-ratios).
    pub ratio: f64,
    /// Lower bound of the interval.
    pub low: f64,
    /// Upper bound of the interval.
    pub high: f64,
    /// Number of pairs.
    pub n: usize,
    /// Standard deviation of the log-ratios.
    pub log_sd: f64,
}

/// The interval of the geometric mean of `ratios` (all must be positive and finite).
pub fn ratio_interval(ratios: &[f64]) -> RatioInterval {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let n = logs.len();
    let mean = logs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return RatioInterval {
            ratio: mean.exp(),
            low: 0.0,
            high: f64::INFINITY,
            n,
            log_sd: f64::NAN,
        };
    }
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let half = t_quantile(CONFIDENCE, (n - 1) as f64) * sd / (n as f64).sqrt();
    RatioInterval {
        ratio: mean.exp(),
        low: (mean - half).exp(),
        high: (mean + half).exp(),
        n,
        log_sd: sd,
    }
}
