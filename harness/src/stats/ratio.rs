//! The geometric mean of paired ratios and its interval, taken in log space (where a ratio and
//! its inverse are symmetric) and mapped back with `exp`.

use serde::{Deserialize, Serialize};

use super::{CONFIDENCE, t_quantile};

/// A geometric-mean ratio with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioInterval {
    /// exp(mean of log-ratios).
    #[serde(with = "crate::format::nullable::f64_or_null")]
    pub ratio: f64,
    /// Lower bound of the interval.
    #[serde(with = "crate::format::nullable::f64_or_null")]
    pub low: f64,
    /// Upper bound of the interval (infinite over a single replicate).
    #[serde(with = "crate::format::nullable::f64_or_null")]
    pub high: f64,
    /// Number of replicates (process pairs, or seeds) the interval is over.
    pub n: usize,
    /// Standard deviation of the replicates' log-ratios (NaN over a single replicate).
    #[serde(with = "crate::format::nullable::f64_or_null")]
    pub log_sd: f64,
    /// The interval's confidence level (per look, after any correction for repeated looks).
    #[serde(default = "default_confidence")]
    pub confidence: f64,
}

fn default_confidence() -> f64 {
    CONFIDENCE
}

/// The interval of the geometric mean of `ratios` at 99.9% (all must be positive and finite).
pub fn ratio_interval(ratios: &[f64]) -> RatioInterval {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    log_interval(&logs, CONFIDENCE)
}

/// The interval at `confidence` of exp(mean) of replicate log-ratios `logs`: a Student t with
/// n - 1 degrees of freedom. A zero spread (a deterministic simulation) gives a point.
pub fn log_interval(logs: &[f64], confidence: f64) -> RatioInterval {
    let n = logs.len();
    let mean = logs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return RatioInterval {
            ratio: mean.exp(),
            low: 0.0,
            high: f64::INFINITY,
            n,
            log_sd: f64::NAN,
            confidence,
        };
    }
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let half = t_quantile(confidence, (n - 1) as f64) * sd / (n as f64).sqrt();
    RatioInterval {
        ratio: mean.exp(),
        low: (mean - half).exp(),
        high: (mean + half).exp(),
        n,
        log_sd: sd,
        confidence,
    }
}
