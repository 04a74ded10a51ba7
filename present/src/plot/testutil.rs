//! Entries for the charts' tests: a metric, an entry with parameters and secondary metrics, a
//! thread sweep of three strategies, and a substring counter for the SVG text.

use std::collections::BTreeMap;

use critsec_harness::format::{JmhEntry, JmhMetric, JmhNumber};

pub(super) fn metric(score: f64, error: f64, unit: &str) -> JmhMetric {
    JmhMetric {
        score: JmhNumber(score),
        score_error: JmhNumber(error),
        score_confidence: [JmhNumber(score - error), JmhNumber(score + error)],
        score_percentiles: BTreeMap::new(),
        score_unit: unit.into(),
        raw_data: None,
        raw_data_histogram: None,
    }
}

pub(super) fn entry(
    benchmark: &str,
    threads: u64,
    params: &[(&str, &str)],
    primary: JmhMetric,
    secondary: &[(&str, f64, &str)],
) -> JmhEntry {
    JmhEntry {
        jmh_version: "1.37-critsec".into(),
        benchmark: benchmark.into(),
        mode: "thrpt".into(),
        threads,
        forks: 1,
        jvm: String::new(),
        jvm_args: Vec::new(),
        jdk_version: String::new(),
        vm_name: String::new(),
        vm_version: String::new(),
        warmup_iterations: 1,
        warmup_time: "1 s".into(),
        warmup_batch_size: 1,
        measurement_iterations: 3,
        measurement_time: "1 s".into(),
        measurement_batch_size: 1,
        params: Some(
            params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        primary_metric: primary,
        secondary_metrics: secondary
            .iter()
            .map(|(n, v, u)| (n.to_string(), metric(*v, f64::NAN, u)))
            .collect(),
    }
}

/// A thread sweep of three strategies; the snapshot scales, the mutex collapses (>10x apart).
pub(super) fn sweep() -> Vec<JmhEntry> {
    let mut out = Vec::new();
    for (strategy, base, scale) in [
        ("mutex", 4.0e6, 0.6),
        ("rwlock", 5.0e6, 0.9),
        ("snapshot", 9.0e6, 1.9),
    ] {
        for (i, t) in [1u64, 2, 4, 8, 16].into_iter().enumerate() {
            let score = base * f64::powi(scale, i as i32);
            let p = [("strategy", strategy), ("cores", "10")];
            out.push(entry(
                "registry.get_core_micro",
                t,
                &p,
                metric(score, score * 0.05, "ops/s"),
                &[],
            ));
        }
    }
    // A second core count at one point: the chart must fix `cores` at 10 and say so.
    out.push(entry(
        "registry.get_core_micro",
        4,
        &[("strategy", "mutex"), ("cores", "1000")],
        metric(1.0, 0.1, "ops/s"),
        &[],
    ));
    out
}

pub(super) fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}
