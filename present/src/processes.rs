//! A run's score with its 99.9% interval over processes (JMH's forks), for the published
//! tables: the unit of replication is the process, as in `reproduce`, so a score measured in
//! one fork has no interval, however many iterations it ran (JMH's `scoreError` is over the
//! iterations of all forks together, which leaves out what differs between processes).
//!
//! Each fork's level is the geometric mean of its iterations; the interval is a Student t over
//! the forks' log levels, mapped back with `exp`: never below zero, and as wide either way in
//! ratio terms.

use critsec_harness::format::JmhMetric;
use critsec_harness::stats::CONFIDENCE;
use critsec_harness::stats::log_interval;

/// A score's interval over its processes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OverProcesses {
    /// The geometric mean over the forks' levels.
    pub level: f64,
    /// The interval's bounds, both positive.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Forks it is over.
    pub forks: usize,
}

impl OverProcesses {
    /// The interval's half-width relative to the level, the larger side: 0.1 is within 10%.
    pub fn relative_width(&self) -> f64 {
        ((self.high - self.level) / self.level).max((self.level - self.low) / self.level)
    }
}

/// The interval over processes of `metric`'s raw iteration scores, when at least two forks gave
/// finite positive iterations (a fork with any other value is left out: its level is not a
/// throughput); `None` otherwise.
pub fn over_processes(metric: &JmhMetric) -> Option<OverProcesses> {
    let forks = metric.raw_data.as_ref()?;
    let levels: Vec<f64> = forks
        .iter()
        .filter(|f| !f.is_empty() && f.iter().all(|v| v.0.is_finite() && v.0 > 0.0))
        .map(|f| f.iter().map(|v| v.0.ln()).sum::<f64>() / f.len() as f64)
        .collect();
    if levels.len() < 2 {
        return None;
    }
    let r = log_interval(&levels, CONFIDENCE);
    (r.low.is_finite() && r.high.is_finite()).then_some(OverProcesses {
        level: r.ratio,
        low: r.low,
        high: r.high,
        forks: levels.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_harness::format::JmhNumber;

    fn metric(forks: &[&[f64]]) -> JmhMetric {
        JmhMetric {
            score: JmhNumber(0.0),
            score_error: JmhNumber(f64::NAN),
            score_confidence: [JmhNumber(0.0), JmhNumber(0.0)],
            score_percentiles: Default::default(),
            score_unit: "ops/s".into(),
            raw_data: Some(
                forks
                    .iter()
                    .map(|f| f.iter().map(|v| JmhNumber(*v)).collect())
                    .collect(),
            ),
            raw_data_histogram: None,
        }
    }

    #[test]
    fn the_interval_is_over_forks_and_never_below_zero() {
        // Levels 100 and 400 (geometric means of their iterations): a level of 200, and with
        // one degree of freedom at 99.9% an interval far wider than the score, yet positive.
        let m = metric(&[&[50.0, 200.0], &[400.0, 400.0]]);
        let p = over_processes(&m).unwrap();
        assert!((p.level - 200.0).abs() < 1e-9, "{p:?}");
        assert!(p.low > 0.0 && p.low < 1.0 && p.high > 40_000.0, "{p:?}");
        assert_eq!(p.forks, 2);
        // Close forks: a narrow interval.
        let close = over_processes(&metric(&[&[100.0], &[101.0], &[99.0], &[100.5], &[99.5]]));
        assert!(close.unwrap().relative_width() < 0.05, "{close:?}");
    }

    #[test]
    fn one_fork_or_unusable_values_give_no_interval() {
        assert_eq!(over_processes(&metric(&[&[1.0, 2.0, 3.0]])), None);
        assert_eq!(over_processes(&metric(&[&[1.0], &[0.0]])), None);
        assert_eq!(over_processes(&metric(&[&[1.0], &[f64::NAN]])), None);
    }
}
