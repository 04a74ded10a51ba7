//! Run output: the human table, and the JMH JSON file with its sibling metadata file.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::environment::{Hazard, Machine, meta_path, write_atomically};
use crate::jmh::{JmhEntry, to_entry};
use crate::result::BenchmarkResult;
use crate::scenario::GroupSpec;
use crate::settings::RunSettings;

/// What a run's `.meta.json` holds: everything JMH's layout has no place for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// critsec's version.
    pub critsec_version: String,
    /// When the run started (UTC).
    pub created: String,
    /// The command line.
    pub command: Vec<String>,
    /// The machine.
    pub machine: Machine,
    /// Git commit of the working directory.
    pub git_commit: String,
    /// Hazards detected before the run.
    pub hazards: Vec<Hazard>,
    /// Iteration settings.
    pub settings: RunSettings,
    /// Whether the run was interrupted before all benchmarks completed.
    pub interrupted: bool,
    /// Per benchmark: groups, environment, check values and errors.
    pub benchmarks: Vec<BenchmarkMeta>,
}

/// Per-benchmark metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkMeta {
    /// Scenario name.
    pub scenario: String,
    /// Parameters.
    pub params: std::collections::BTreeMap<String, String>,
    /// Total threads.
    pub threads: usize,
    /// Thread groups.
    pub groups: Vec<GroupSpec>,
    /// Environment of the forks.
    pub env: Vec<(String, String)>,
    /// Check values `(before, after)` per fork.
    pub verified: Vec<(String, String)>,
    /// The error, for a benchmark without a score.
    pub error: Option<String>,
}

impl BenchmarkMeta {
    /// The metadata of one result.
    pub fn of(r: &BenchmarkResult) -> Self {
        BenchmarkMeta {
            scenario: r.spec.scenario.clone(),
            params: r.spec.params.0.clone(),
            threads: r.spec.threads,
            groups: r.spec.groups.clone(),
            env: r.spec.env.clone(),
            verified: r
                .forks
                .iter()
                .map(|f| (f.verified_before.clone(), f.verified_after.clone()))
                .collect(),
            error: r.error.clone(),
        }
    }
}

impl RunMeta {
    /// The metadata of a run of `results` that started at `created`, read from this process and
    /// machine now (command line, machine, git commit, interruption), so that every command
    /// that saves a run records the same things.
    pub fn of_run(
        critsec_version: &str,
        created: String,
        hazards: Vec<Hazard>,
        settings: &RunSettings,
        results: &[BenchmarkResult],
    ) -> Self {
        RunMeta {
            critsec_version: critsec_version.to_string(),
            created,
            command: std::env::args().collect(),
            machine: crate::environment::machine(),
            git_commit: crate::environment::git_commit(),
            hazards,
            settings: settings.clone(),
            interrupted: crate::runner::interrupted(),
            benchmarks: results.iter().map(BenchmarkMeta::of).collect(),
        }
    }
}

/// Writes the JMH JSON array to `path` and the metadata next to it, both atomically.
pub fn write_run(
    path: &Path,
    results: &[BenchmarkResult],
    meta: &RunMeta,
    exe: &str,
) -> std::io::Result<Vec<JmhEntry>> {
    let entries: Vec<JmhEntry> = results
        .iter()
        .filter_map(|r| to_entry(r, exe, &meta.machine.rustc))
        .collect();
    let json = serde_json::to_vec_pretty(&entries).map_err(std::io::Error::other)?;
    write_atomically(path, &json)?;
    let meta_json = serde_json::to_vec_pretty(meta).map_err(std::io::Error::other)?;
    write_atomically(&meta_path(path), &meta_json)?;
    Ok(entries)
}

/// Formats a number for tables: 4 significant digits, thousands grouped where large.
pub fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "+INF".into()
        } else {
            "-INF".into()
        };
    }
    let a = v.abs();
    if a >= 1e4 {
        let s = format!("{:.0}", v);
        let (sign, digits) = s.strip_prefix('-').map(|d| ("-", d)).unwrap_or(("", &s));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.4}")
    }
}

/// The human table of a run, JMH style: one row per benchmark with score ± error, then its
/// secondary metrics indented below it. Error rows say why there is no number.
pub fn table(results: &[BenchmarkResult]) -> String {
    let mut rows: Vec<[String; 7]> = Vec::new();
    rows.push([
        "Benchmark".into(),
        "Params".into(),
        "Mode".into(),
        "Thr".into(),
        "Cnt".into(),
        "Score ± Error (99.9%)".into(),
        "Units".into(),
    ]);
    let mut extra: Vec<Vec<String>> = vec![Vec::new()];
    for r in results {
        let params = r.spec.params.to_string();
        match &r.error {
            Some(e) => {
                rows.push([
                    r.spec.scenario.clone(),
                    params,
                    r.spec.mode.jmh_name().into(),
                    r.spec.threads.to_string(),
                    "0".into(),
                    "ERROR".into(),
                    String::new(),
                ]);
                extra.push(vec![format!("    error: {e}")]);
            }
            None => {
                let s = r.primary();
                let score = if s.error.is_nan() {
                    fmt_num(s.mean)
                } else {
                    format!("{} ± {}", fmt_num(s.mean), fmt_num(s.error))
                };
                rows.push([
                    r.spec.scenario.clone(),
                    params,
                    r.spec.mode.jmh_name().into(),
                    r.spec.threads.to_string(),
                    s.n.to_string(),
                    score,
                    r.unit(),
                ]);
                let mut lines = Vec::new();
                if let Some(h) = r.merged_histogram() {
                    lines.push(format!(
                        "    latency: p50 {} p90 {} p99 {} p99.9 {} max {} ns",
                        fmt_num(h.value_at_quantile(0.5) as f64),
                        fmt_num(h.value_at_quantile(0.9) as f64),
                        fmt_num(h.value_at_quantile(0.99) as f64),
                        fmt_num(h.value_at_quantile(0.999) as f64),
                        fmt_num(h.max() as f64)
                    ));
                }
                for (name, (unit, raw)) in r.secondary_raw() {
                    let all: Vec<f64> = raw.into_iter().flatten().collect();
                    let s = crate::stats::Summary::of(&all);
                    let v = if s.error.is_nan() {
                        fmt_num(s.mean)
                    } else {
                        format!("{} ± {}", fmt_num(s.mean), fmt_num(s.error))
                    };
                    lines.push(format!("    :{name} {v} {unit}"));
                }
                extra.push(lines);
            }
        }
    }
    let widths: Vec<usize> = (0..7)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (row, lines) in rows.iter().zip(&extra) {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c == 5 || c == 3 || c == 4 {
                let _ = write!(line, "{cell:>w$}  ", w = widths[c]);
            } else {
                let _ = write!(line, "{cell:<w$}  ", w = widths[c]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_rounded() {
        assert_eq!(fmt_num(7_013_249.176), "7,013,249");
        assert_eq!(fmt_num(-12_345.0), "-12,345");
        assert_eq!(fmt_num(123.456), "123.5");
        assert_eq!(fmt_num(1.23456), "1.235");
        assert_eq!(fmt_num(0.000123), "0.0001");
        assert_eq!(fmt_num(f64::NAN), "NaN");
    }
}
