//! JMH's `-rf json` layout, written for our results and read back from ours or real JMH's.
//!
//! Writing the exact layout lets JMH's ecosystem (visualisers, CI actions, diff scripts) read
//! critsec runs; reading it lets `critsec compare` put a Java JMH run next to ours. Run metadata
//! that JMH's layout has no place for goes in a sibling file (see [`crate::run::environment`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::direction::Direction;
use crate::run::result::BenchmarkResult;
use crate::run::settings::format_duration;
use crate::stats::{PERCENTILE_LEVELS, Summary, level_key};

/// The version string we write in `jmhVersion`: the JMH layout we follow, tagged as ours.
pub const JMH_LAYOUT_VERSION: &str = "1.37-critsec";

/// A JSON number as JMH writes it: NaN and infinities become the strings `"NaN"`, `"+INF"`, `"-INF"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JmhNumber(pub f64);

impl Serialize for JmhNumber {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.is_nan() {
            s.serialize_str("NaN")
        } else if v.is_infinite() {
            s.serialize_str(if v > 0.0 { "+INF" } else { "-INF" })
        } else {
            s.serialize_f64(v)
        }
    }
}

impl<'de> Deserialize<'de> for JmhNumber {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = JmhNumber;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or one of \"NaN\", \"+INF\", \"-INF\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<JmhNumber, E> {
                Ok(JmhNumber(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<JmhNumber, E> {
                Ok(JmhNumber(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<JmhNumber, E> {
                Ok(JmhNumber(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<JmhNumber, E> {
                match v {
                    "NaN" => Ok(JmhNumber(f64::NAN)),
                    "+INF" | "Infinity" | "INF" => Ok(JmhNumber(f64::INFINITY)),
                    "-INF" | "-Infinity" => Ok(JmhNumber(f64::NEG_INFINITY)),
                    _ => v
                        .parse()
                        .map(JmhNumber)
                        .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// One iteration's latency histogram in sample mode: `[value, count]` pairs.
pub type HistogramData = Vec<(JmhNumber, u64)>;

/// One metric of an entry (`primaryMetric` or a `secondaryMetrics` value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JmhMetric {
    /// Mean over all iterations of all forks.
    pub score: JmhNumber,
    /// Half-width of the 99.9% interval.
    pub score_error: JmhNumber,
    /// `[score - error, score + error]`.
    pub score_confidence: [JmhNumber; 2],
    /// Percentiles of the iteration scores (or of the latencies in sample mode).
    #[serde(default)]
    pub score_percentiles: BTreeMap<String, JmhNumber>,
    /// Unit, e.g. `ops/s`.
    pub score_unit: String,
    /// Iteration scores, `[fork][iteration]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_data: Option<Vec<Vec<JmhNumber>>>,
    /// Sample mode: `[fork][iteration][[value, count], ...]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_data_histogram: Option<Vec<Vec<HistogramData>>>,
}

/// One entry of the top-level array: a benchmark at one mode and parameter combination.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JmhEntry {
    /// Layout version (JMH writes its own version).
    #[serde(default)]
    pub jmh_version: String,
    /// Benchmark name; ours is the scenario with `/` replaced by `.`.
    pub benchmark: String,
    /// `thrpt`, `avgt`, `sample` or `ss`.
    pub mode: String,
    /// Total threads.
    pub threads: u64,
    /// Forks.
    #[serde(default)]
    pub forks: u64,
    /// The executable (JMH: the JVM).
    #[serde(default)]
    pub jvm: String,
    /// Environment overrides of the forks as `KEY=VALUE` (JMH: JVM arguments).
    #[serde(default)]
    pub jvm_args: Vec<String>,
    /// Toolchain version (JMH: JDK version).
    #[serde(default)]
    pub jdk_version: String,
    /// Toolchain name (JMH: VM name).
    #[serde(default)]
    pub vm_name: String,
    /// Toolchain version detail (JMH: VM version).
    #[serde(default)]
    pub vm_version: String,
    /// Warmup iterations.
    #[serde(default)]
    pub warmup_iterations: u64,
    /// Warmup iteration time, e.g. `10 s`.
    #[serde(default)]
    pub warmup_time: String,
    /// Always 1.
    #[serde(default)]
    pub warmup_batch_size: u64,
    /// Measurement iterations.
    #[serde(default)]
    pub measurement_iterations: u64,
    /// Measurement iteration time.
    #[serde(default)]
    pub measurement_time: String,
    /// Always 1.
    #[serde(default)]
    pub measurement_batch_size: u64,
    /// Parameters; absent when the benchmark has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<BTreeMap<String, String>>,
    /// The primary score.
    pub primary_metric: JmhMetric,
    /// Secondary metrics by name; always present, maybe empty.
    #[serde(default)]
    pub secondary_metrics: BTreeMap<String, JmhMetric>,
}

/// JMH's benchmark modes as its result files name them.
pub const JMH_MODES: [&str; 4] = ["thrpt", "avgt", "sample", "ss"];

impl JmhEntry {
    /// Which way its primary score improves, from its mode: throughput up, the times of
    /// `avgt`, `sample` and `ss` down; `None` for a mode JMH does not have.
    pub fn better(&self) -> Option<Direction> {
        match self.mode.as_str() {
            "thrpt" => Some(Direction::Higher),
            "avgt" | "sample" | "ss" => Some(Direction::Lower),
            _ => None,
        }
    }

    /// What identifies the same benchmark across runs: name, mode, threads, parameters.
    pub fn key(&self) -> JmhKey {
        JmhKey {
            benchmark: self.benchmark.clone(),
            mode: self.mode.clone(),
            threads: self.threads,
            params: self
                .params
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// The identity of a benchmark across runs ([`JmhEntry::key`]), compared field by field.
///
/// Matching on fields rather than on a joined string means no parameter value can make two
/// different benchmarks look alike: `{a: "1,b=2"}` and `{a: "1", b: "2"}` are different keys
/// even though both print as `a=1,b=2`. The [`Display`](fmt::Display) form is for people only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JmhKey {
    /// Benchmark name.
    pub benchmark: String,
    /// JMH mode.
    pub mode: String,
    /// Total threads.
    pub threads: u64,
    /// Parameters sorted by name; empty when the entry has none.
    pub params: Vec<(String, String)>,
}

impl fmt::Display for JmhKey {
    /// `name mode t=threads [k=v,k=v]`, unescaped: two keys may print alike.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        write!(
            f,
            "{} {} t={} [{}]",
            self.benchmark,
            self.mode,
            self.threads,
            params.join(",")
        )
    }
}

fn metric(summary: &Summary, unit: &str, raw: Vec<Vec<f64>>) -> JmhMetric {
    let (lo, hi) = summary.confidence();
    JmhMetric {
        score: JmhNumber(summary.mean),
        score_error: JmhNumber(summary.error),
        score_confidence: [JmhNumber(lo), JmhNumber(hi)],
        score_percentiles: summary
            .percentiles
            .iter()
            .map(|(k, v)| (k.clone(), JmhNumber(*v)))
            .collect(),
        score_unit: unit.to_string(),
        raw_data: Some(
            raw.into_iter()
                .map(|f| f.into_iter().map(JmhNumber).collect())
                .collect(),
        ),
        raw_data_histogram: None,
    }
}

/// The JMH benchmark name of a scenario.
pub fn benchmark_name(scenario: &str) -> String {
    scenario.replace('/', ".")
}

/// Converts a scored result to a JMH entry; results with an error have none.
pub fn to_entry(r: &BenchmarkResult, exe: &str, toolchain: &str) -> Option<JmhEntry> {
    if r.error.is_some() || r.forks.is_empty() {
        return None;
    }
    let raw: Vec<Vec<f64>> = r
        .forks
        .iter()
        .map(|f| f.iterations.iter().map(|i| i.score).collect())
        .collect();
    let mut primary = metric(&r.primary(), &r.unit(), raw);
    if let Some(h) = r.merged_histogram() {
        // Sample mode: percentiles are of the latencies, and raw data is the histogram.
        primary.score_percentiles = PERCENTILE_LEVELS
            .iter()
            .map(|&l| {
                (
                    level_key(l),
                    JmhNumber(h.value_at_quantile(l / 100.0) as f64),
                )
            })
            .collect();
        primary.raw_data = None;
        primary.raw_data_histogram = Some(
            r.forks
                .iter()
                .map(|f| {
                    f.iterations
                        .iter()
                        .map(|i| {
                            i.histogram
                                .iter()
                                .flatten()
                                .map(|&(v, c)| (JmhNumber(v as f64), c))
                                .collect()
                        })
                        .collect()
                })
                .collect(),
        );
    }
    let secondary_metrics = r
        .secondary_raw()
        .into_iter()
        .map(|(name, (unit, raw))| {
            let all: Vec<f64> = raw.iter().flatten().copied().collect();
            (name, metric(&Summary::of(&all), &unit, raw))
        })
        .collect();
    let s = &r.settings;
    Some(JmhEntry {
        jmh_version: JMH_LAYOUT_VERSION.to_string(),
        benchmark: benchmark_name(&r.spec.scenario),
        mode: r.spec.mode.jmh_name().to_string(),
        threads: r.spec.threads as u64,
        forks: u64::from(s.forks),
        jvm: exe.to_string(),
        jvm_args: r.spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        jdk_version: toolchain.to_string(),
        vm_name: "rustc".to_string(),
        vm_version: toolchain.to_string(),
        warmup_iterations: u64::from(s.warmup_iterations),
        warmup_time: format_duration(s.warmup_time),
        warmup_batch_size: 1,
        measurement_iterations: u64::from(s.measurement_iterations),
        measurement_time: format_duration(s.measurement_time),
        measurement_batch_size: 1,
        params: (!r.spec.params.0.is_empty()).then(|| r.spec.params.0.clone()),
        primary_metric: primary,
        secondary_metrics,
    })
}

/// Why a JMH JSON file could not be read.
#[derive(Debug, thiserror::Error)]
#[error(
    "{origin}: line {line}, column {column}: {message}; expected a JMH `-rf json` array of benchmark entries"
)]
pub struct JmhReadError {
    /// Which file.
    pub origin: String,
    /// Line of the problem (1-based).
    pub line: usize,
    /// Column of the problem (1-based).
    pub column: usize,
    /// What the JSON parser said.
    pub message: String,
}

/// Parses a JMH JSON document (ours or JMH's own); `origin` names it in errors.
pub fn read_entries(text: &str, origin: &str) -> Result<Vec<JmhEntry>, JmhReadError> {
    serde_json::from_str(text).map_err(|e| JmhReadError {
        origin: origin.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::result::{ForkRecord, IterationResult, TrialSpec};
    use crate::run::scenario::{GroupSpec, Metric, Params};
    use crate::run::settings::{Mode, RunSettings};

    fn iteration(score: f64) -> IterationResult {
        IterationResult {
            score,
            unit: "ops/s".into(),
            window_ns: 1_000_000_000,
            ops: score as u64,
            thread_ops: vec![("op".into(), score as u64)],
            secondary: vec![Metric::new("cpu.utilisation", 50.0, "%")],
            histogram: None,
        }
    }

    fn result() -> BenchmarkResult {
        BenchmarkResult {
            spec: TrialSpec {
                scenario: "registry/get_core_micro".into(),
                params: Params::from_pairs([("strategy", "mutex")]),
                threads: 2,
                groups: vec![GroupSpec::new("op", 2)],
                mode: Mode::Throughput,
                env: vec![("RUST_BACKTRACE".into(), "0".into())],
                build: None,
            },
            settings: RunSettings::default(),
            forks: vec![ForkRecord {
                verified_before: "ok".into(),
                verified_after: "ok".into(),
                iterations: vec![iteration(10.0), iteration(14.0), iteration(18.0)],
            }],
            error: None,
        }
    }

    #[test]
    fn entries_use_jmh_field_names_and_round_trip() {
        let entry = to_entry(&result(), "/bin/critsec", "rustc 1.95.0").unwrap();
        let json = serde_json::to_value(vec![&entry]).unwrap();
        let e = &json[0];
        for field in [
            "jmhVersion",
            "benchmark",
            "mode",
            "threads",
            "forks",
            "jvm",
            "jvmArgs",
            "jdkVersion",
            "vmName",
            "vmVersion",
            "warmupIterations",
            "warmupTime",
            "warmupBatchSize",
            "measurementIterations",
            "measurementTime",
            "measurementBatchSize",
            "params",
            "primaryMetric",
            "secondaryMetrics",
        ] {
            assert!(e.get(field).is_some(), "missing {field}");
        }
        let pm = &e["primaryMetric"];
        for field in [
            "score",
            "scoreError",
            "scoreConfidence",
            "scorePercentiles",
            "scoreUnit",
            "rawData",
        ] {
            assert!(pm.get(field).is_some(), "missing primaryMetric.{field}");
        }
        assert_eq!(e["benchmark"], "registry.get_core_micro");
        assert_eq!(e["mode"], "thrpt");
        assert_eq!(pm["score"], 14.0);
        assert_eq!(pm["rawData"], serde_json::json!([[10.0, 14.0, 18.0]]));
        assert_eq!(pm["scorePercentiles"]["50.0"], 14.0);
        assert!(e["secondaryMetrics"]["cpu.utilisation"].is_object());
        let text = serde_json::to_string_pretty(&vec![&entry]).unwrap();
        assert_eq!(read_entries(&text, "x.json").unwrap(), vec![entry]);
    }

    #[test]
    fn nan_is_written_as_jmh_writes_it() {
        let mut r = result();
        r.forks[0].iterations.truncate(1);
        let entry = to_entry(&r, "x", "y").unwrap();
        let json = serde_json::to_value(&entry).unwrap();
        assert_eq!(json["primaryMetric"]["scoreError"], "NaN");
        let back: JmhEntry = serde_json::from_value(json).unwrap();
        assert!(back.primary_metric.score_error.0.is_nan());
    }

    #[test]
    fn error_rows_have_no_entry() {
        let mut r = result();
        r.error = Some("check failed".into());
        assert!(to_entry(&r, "x", "y").is_none());
    }

    /// Guards against keys that join parameters as `k=v,k=v` without escaping, where a value
    /// holding `,` and `=` makes `{a: "1,b=2"}` and `{a: "1", b: "2"}` one benchmark.
    #[test]
    fn regression_13_keys_of_different_params_never_collide() {
        let entry = |params: &[(&str, &str)]| {
            let mut e = to_entry(&result(), "x", "y").unwrap();
            e.params = Some(
                params
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            );
            e
        };
        let joined = entry(&[("a", "1,b=2")]);
        let split = entry(&[("a", "1"), ("b", "2")]);
        assert_ne!(joined.key(), split.key());
        // Nor can a parameter value imitate the name, mode and threads of another entry.
        let imitating = entry(&[("a", "1] x thrpt t=2 [c=3")]);
        let mut named = entry(&[("c", "3")]);
        named.benchmark.push_str(" thrpt t=2 [a=1] x");
        assert_ne!(imitating.key(), named.key());
        // The same parameters, however the file orders them, are the same benchmark; no
        // parameters and an empty map are too.
        assert_eq!(split.key(), entry(&[("b", "2"), ("a", "1")]).key());
        let mut none = entry(&[]);
        none.params = None;
        assert_eq!(none.key(), entry(&[]).key());
    }

    #[test]
    fn malformed_files_name_the_file_and_position() {
        let e = read_entries("[{\"benchmark\": 3}]", "bad.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("bad.json: line 1"), "{e}");
        assert!(e.contains("expected a JMH"), "{e}");
    }
}
