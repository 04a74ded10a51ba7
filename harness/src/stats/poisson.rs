//! The exact (Garwood) confidence interval of a Poisson rate: for `x` events over an exposure of
//! `e` operations, `[χ²(α/2; 2x) / 2e, χ²(1 - α/2; 2x + 2) / 2e]`, with the lower bound 0 when
//! `x = 0`. Count claims report their rates per 1,000 operations with it.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// A rate with its exact interval, per `per` operations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateInterval {
    /// Events counted.
    pub events: f64,
    /// Operations they happened in.
    pub exposure: f64,
    /// Events per `per` operations.
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub rate: f64,
    /// Lower bound of the interval, per `per` operations.
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub low: f64,
    /// Upper bound of the interval, per `per` operations.
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub high: f64,
    /// The rate's denominator (1,000 operations).
    pub per: f64,
}

/// The exact interval at `confidence` of `events` over `exposure` operations, per `per`.
pub fn rate_interval(events: u64, exposure: f64, per: f64, confidence: f64) -> RateInterval {
    let alpha = 1.0 - confidence;
    let x = events as f64;
    let quantile = |p: f64, df: f64| {
        ChiSquared::new(df)
            .map(|d| d.inverse_cdf(p))
            .unwrap_or(f64::NAN)
    };
    let low = if events == 0 {
        0.0
    } else {
        quantile(alpha / 2.0, 2.0 * x) / 2.0
    };
    let high = quantile(1.0 - alpha / 2.0, 2.0 * x + 2.0) / 2.0;
    let scale = per / exposure.max(f64::MIN_POSITIVE);
    RateInterval {
        events: x,
        exposure,
        rate: x * scale,
        low: low * scale,
        high: high * scale,
        per,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garwood_bounds_match_tables() {
        // 95% exact bounds for x = 0: [0, 3.689]; for x = 10: [4.795, 18.39] (Garwood 1936,
        // as tabulated in every Poisson table).
        let z = rate_interval(0, 1.0, 1.0, 0.95);
        assert_eq!(z.low, 0.0);
        assert!((z.high - 3.689).abs() < 1e-3, "{}", z.high);
        let t = rate_interval(10, 1.0, 1.0, 0.95);
        assert!((t.low - 4.795).abs() < 1e-3, "{}", t.low);
        assert!((t.high - 18.39).abs() < 1e-2, "{}", t.high);
        // Per 1,000 of 20,000 operations: 10 events are 0.5 per 1,000.
        let r = rate_interval(10, 20_000.0, 1_000.0, 0.95);
        assert!((r.rate - 0.5).abs() < 1e-12);
        assert!((r.low - 4.795 / 20.0).abs() < 1e-4);
    }
}
