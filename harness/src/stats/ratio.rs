//! The geometric mean of paired ratios and its interval, taken in log space (where a ratio and
//! its inverse are symmetric) and mapped back with `exp`.

use serde::{Deserialize, Serialize};

use super::{CONFIDENCE, t_quantile};

/// A geometric-mean ratio with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioInterval {
    /// exp(mean of log-ratios).
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub ratio: f64,
    /// Lower bound of the interval.
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub low: f64,
    /// Upper bound of the interval (infinite over a single replicate).
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub high: f64,
    /// Number of replicates (process pairs, or seeds) the interval is over.
    pub n: usize,
    /// Standard deviation of the replicates' log-ratios (NaN over a single replicate).
    #[serde(with = "crate::stats::nullable::f64_or_null")]
    pub log_sd: f64,
    /// The interval's confidence level: one look's share of α, or the sum of the shares of
    /// the looks whose intervals it combines ([`RatioInterval::combined`]).
    #[serde(default = "default_confidence")]
    pub confidence: f64,
}

fn default_confidence() -> f64 {
    CONFIDENCE
}

impl RatioInterval {
    /// This look's interval combined with an `earlier` look's (itself perhaps combined): their
    /// intersection where they overlap. The looks' α shares add up to at most the family's α, so
    /// with that much confidence every look's interval covers the truth at once (a union bound),
    /// and then so does the intersection (Jennison and Turnbull's repeated confidence
    /// intervals): its confidence is one minus the sum of both α. Intervals that do not overlap
    /// cannot both cover the truth; then their hull, which covers it if either does, is what is
    /// left. The estimate, replicates and spread stay this look's.
    pub fn combined(&self, earlier: &RatioInterval) -> RatioInterval {
        let (low, high) = if self.low <= earlier.high && earlier.low <= self.high {
            (self.low.max(earlier.low), self.high.min(earlier.high))
        } else {
            (self.low.min(earlier.low), self.high.max(earlier.high))
        };
        RatioInterval {
            low,
            high,
            confidence: 1.0 - ((1.0 - self.confidence) + (1.0 - earlier.confidence)),
            ..*self
        }
    }
}

/// The interval of the geometric mean of `ratios` at 99.9% (all must be positive and finite).
#[cfg(test)]
pub(crate) fn ratio_interval(ratios: &[f64]) -> RatioInterval {
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

#[cfg(test)]
mod tests {
    use super::RatioInterval;

    fn at(low: f64, high: f64, confidence: f64) -> RatioInterval {
        RatioInterval {
            ratio: (low * high).sqrt(),
            low,
            high,
            n: 8,
            log_sd: 0.1,
            confidence,
        }
    }

    #[test]
    fn looks_combine_into_their_intersection_or_else_their_hull_at_the_summed_alpha() {
        let earlier = at(1.0, 2.0, 0.9999);
        let later = at(1.2, 2.5, 0.999);
        let both = later.combined(&earlier);
        assert_eq!((both.low, both.high), (1.2, 2.0));
        assert!((both.confidence - 0.9989).abs() < 1e-12, "{both:?}");
        // The estimate and the spread stay the later look's.
        assert_eq!((both.ratio, both.n, both.log_sd), (later.ratio, 8, 0.1));
        // Disjoint: at least one missed the truth; the hull covers it if either covers it.
        let apart = at(2.2, 3.0, 0.999).combined(&earlier);
        assert_eq!((apart.low, apart.high), (1.0, 3.0));
    }
}
