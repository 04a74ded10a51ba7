//! Runs side by side: Rally's `Metric | Task | Baseline | Contender | Diff | Unit | Diff %` table
//! with each side's 99.9% interval, a significance mark, and any number of contenders.
//!
//! [`compare`] is pure: it takes the parsed entries of N runs (the first is the baseline) and
//! returns a [`Comparison`] value; [`render`] turns that into a terminal table, Markdown, CSV or
//! JSON. Entries are matched by [`JmhEntry::key`] (benchmark, mode, threads, parameters), so our
//! files and real JMH files (`-rf json`, 1.21 to 1.37) compare alike; an entry or secondary
//! metric that is not in every file is listed in [`Comparison::unmatched`], never dropped.
//!
//! Significance, at 99.9% like every interval we print: Welch's t-test on the iteration scores
//! (`rawData`, or per-iteration means of `rawDataHistogram` in sample mode) when both sides have
//! at least two iterations; otherwise whether the two `score ± scoreError` intervals are disjoint
//! (JMH files written with `-Djmh.json.rawData=false` carry no iterations); otherwise untestable.
//! Welch's test is the stronger of the two: two intervals may overlap while the means still
//! differ significantly, so disjoint intervals are only the fallback.
//!
//! The summary follows rebar: the geometric mean of contender/baseline ratios of the primary
//! score over the entries present in *all* files (the intersection), so every contender's mean
//! is taken over the same benchmarks.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::str::FromStr;

use serde::Serialize;

use critsec_harness::format::jmh::{JmhEntry, JmhMetric};
use critsec_harness::stats::hierarchy::components;
use critsec_harness::stats::welch::{Significance, Test, welch};
use critsec_harness::stats::{CONFIDENCE, t_quantile};

use crate::table::{Align, Color, Table, fmt_num, md_escape};

/// One run to compare: a label for headers (usually its file name) and its entries.
#[derive(Debug, Clone)]
pub struct Run {
    /// How the run is named in the output.
    pub label: String,
    /// Its entries, as read by [`critsec_harness::format::jmh::read_entries`].
    pub entries: Vec<JmhEntry>,
}

/// Why a comparison could not be made or rendered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// A comparison needs a baseline and at least one contender.
    #[error("compare needs at least 2 runs (a baseline and a contender), got {given}")]
    TooFewRuns {
        /// How many runs were given.
        given: usize,
    },
    /// An output format we do not write.
    #[error("unknown format `{given}`; valid formats: {}", Format::NAMES.join(", "))]
    UnknownFormat {
        /// The format asked for.
        given: String,
    },
}

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Better {
    /// Up is good: throughput (`ops/s`, `req/s`, `docs/s`).
    Higher,
    /// Down is good: time per operation, latency, waits, timeouts, failures.
    Lower,
    /// Unknown or two-sided (CPU utilisation, counts of things): never called better or worse.
    Neutral,
}

/// Words in a metric's name or unit that make "up" bad, whatever the unit's shape.
const UP_IS_BAD: [&str; 10] = [
    "latency",
    "wait",
    "timeout",
    "rejection",
    "fail",
    "error",
    "mismatch",
    "hold",
    "queue_depth",
    "gc.",
];

/// The direction of a metric from its name and unit (see [`Better`]).
///
/// A name or unit mentioning waits, timeouts, failures or latency, a percentile name (`get.p99`,
/// JMH's `p0.99`) and a time unit (`ns/op`, `us`) mean lower is better; a rate (`ops/…`, `…/s`)
/// means higher is better. The checks run in that order, so `waits/s` is still a cost. GC
/// allocation *rate* grows with throughput and spreads have no good direction: both neutral.
pub fn better(metric: &str, unit: &str) -> Better {
    let name = metric.to_ascii_lowercase();
    let unit_l = unit.to_ascii_lowercase();
    if name.ends_with("gc.alloc.rate") || name.contains("stddev") || name.contains("utilisation") {
        return Better::Neutral;
    }
    if UP_IS_BAD
        .iter()
        .any(|w| name.contains(w) || unit_l.contains(w))
        || is_percentile_name(&name)
    {
        return Better::Lower;
    }
    let numerator = unit_l.split('/').next().unwrap_or("");
    if seconds_of(numerator).is_some() {
        return Better::Lower;
    }
    if unit_l.contains("ops/") || unit_l.contains("/s") || unit_l.contains("/min") {
        return Better::Higher;
    }
    Better::Neutral
}

/// Whether a metric name is a latency percentile: a `.`/`·`-separated part `p` plus digits.
fn is_percentile_name(name: &str) -> bool {
    name.split(['.', '·', ':']).any(|part| {
        let mut chars = part.chars();
        chars.next() == Some('p')
            && chars.clone().next().is_some()
            && chars.all(|c| c.is_ascii_digit())
    })
}

/// Seconds in one of a time unit as JMH and we spell them.
fn seconds_of(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1e-9),
        "us" | "µs" | "μs" => Some(1e-6),
        "ms" => Some(1e-3),
        "s" | "sec" => Some(1.0),
        "min" => Some(60.0),
        _ => None,
    }
}

/// The factor that converts a value in unit `from` to unit `to`, when both are the same kind of
/// time-based unit (`ops/ms` → `ops/s`, `us/op` → `ns/op`, `ms` → `us`); `None` otherwise.
pub fn unit_factor(from: &str, to: &str) -> Option<f64> {
    if from == to {
        return Some(1.0);
    }
    match (from.split_once('/'), to.split_once('/')) {
        (None, None) => Some(seconds_of(from)? / seconds_of(to)?),
        (Some((fa, fb)), Some((ta, tb))) if fb == tb => Some(seconds_of(fa)? / seconds_of(ta)?),
        (Some((fa, fb)), Some((ta, tb))) if fa == ta => Some(seconds_of(tb)? / seconds_of(fb)?),
        _ => None,
    }
}

/// One side's number: the score, its interval half-width and the iteration scores behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Value {
    /// The score (JMH: mean over all iterations of all forks).
    pub score: f64,
    /// Half-width of the 99.9% interval; `None` when the file has none (one iteration, `NaN`).
    pub error: Option<f64>,
    /// How many iteration scores the file holds (0 when written without raw data).
    pub iterations: usize,
    /// The iteration scores, for the t-test.
    #[serde(skip)]
    pub raw: Vec<f64>,
    /// How many forks the file holds iterations of.
    pub forks: usize,
    /// Each fork's mean score: the unit of the test and interval when there are two or more.
    #[serde(skip)]
    pub fork_means: Vec<f64>,
    /// Intra-fork correlation ρ of the iteration scores (between-fork share of the variance),
    /// when there are two forks of two iterations or more.
    pub fork_rho: Option<f64>,
}

impl Value {
    /// The value of a metric as a file states it.
    /// With two forks or more, the fork is the unit: the error is the 99.9% Student-t
    /// half-width over the fork means (F - 1 degrees of freedom), not JMH's over all iterations,
    /// which ignores the variation between forks.
    pub fn of(m: &JmhMetric) -> Value {
        let forks = fork_scores(m);
        let raw: Vec<f64> = forks.iter().flatten().copied().collect();
        let fork_means: Vec<f64> = forks
            .iter()
            .map(|f| f.iter().sum::<f64>() / f.len() as f64)
            .collect();
        let fork_rho = components(&forks).map(|c| c.rho);
        let mut error = Some(m.score_error.0).filter(|e| e.is_finite());
        if fork_means.len() >= 2 {
            let n = fork_means.len() as f64;
            let mean = fork_means.iter().sum::<f64>() / n;
            let var = fork_means.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            error = Some(t_quantile(CONFIDENCE, n - 1.0) * var.sqrt() / n.sqrt())
                .filter(|e| e.is_finite());
        }
        Value {
            score: m.score.0,
            error,
            iterations: raw.len(),
            raw,
            forks: forks.len(),
            fork_means,
            fork_rho,
        }
    }

    /// Whether the forks disagree: the variance between forks dominates the variance within
    /// them (ρ > 0.5), as in a bimodal split where some forks settle at another speed.
    pub fn forks_disagree(&self) -> bool {
        self.fork_rho.is_some_and(|rho| rho > 0.5)
    }

    fn scaled(mut self, factor: f64) -> Value {
        self.score *= factor;
        self.error = self.error.map(|e| e * factor);
        self.raw.iter_mut().for_each(|v| *v *= factor);
        self.fork_means.iter_mut().for_each(|v| *v *= factor);
        self
    }
}

/// The iteration scores of a metric per fork: `rawData`, or in sample mode the mean of each
/// iteration's `rawDataHistogram`; non-finite values and empty forks are left out.
pub fn fork_scores(m: &JmhMetric) -> Vec<Vec<f64>> {
    let raw: Vec<Vec<f64>> = m
        .raw_data
        .iter()
        .flatten()
        .map(|fork| {
            fork.iter()
                .map(|n| n.0)
                .filter(|v| v.is_finite())
                .collect::<Vec<f64>>()
        })
        .filter(|f| !f.is_empty())
        .collect();
    if !raw.is_empty() {
        return raw;
    }
    m.raw_data_histogram
        .iter()
        .flatten()
        .map(|fork| {
            fork.iter()
                .filter_map(|iteration| {
                    let count: u64 = iteration.iter().map(|(_, c)| c).sum();
                    let sum: f64 = iteration.iter().map(|(v, c)| v.0 * *c as f64).sum();
                    (count > 0).then(|| sum / count as f64)
                })
                .filter(|v| v.is_finite())
                .collect::<Vec<f64>>()
        })
        .filter(|f| !f.is_empty())
        .collect()
}

/// The iteration scores of a metric over all forks (see [`fork_scores`]).
pub fn iteration_scores(m: &JmhMetric) -> Vec<f64> {
    fork_scores(m).into_iter().flatten().collect()
}

/// The significance rule of this module (see the module doc) applied to two values.
pub fn significance(base: &Value, contender: &Value) -> Significance {
    // Forks are the unit when both sides have several: iterations of one fork are not
    // independent of each other.
    if base.forks >= 2
        && contender.forks >= 2
        && let Some(s) = welch(&base.fork_means, &contender.fork_means, CONFIDENCE)
    {
        return Significance {
            test: Test::WelchForks,
            ..s
        };
    }
    if let Some(s) = welch(&base.raw, &contender.raw, CONFIDENCE) {
        return s;
    }
    match (base.error, contender.error) {
        (Some(eb), Some(ec)) => {
            let disjoint =
                base.score + eb < contender.score - ec || contender.score + ec < base.score - eb;
            Significance {
                test: Test::Intervals,
                significant: Some(disjoint),
                ..Significance::untestable()
            }
        }
        _ => Significance::untestable(),
    }
}

/// The verdict on one contender cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Significant, in the metric's good direction.
    Better,
    /// Significant, in the metric's bad direction.
    Worse,
    /// Significant, on a neutral metric.
    Changed,
    /// Not significant.
    Same,
    /// Untestable, or the units cannot be compared.
    Unknown,
}

/// A contender's cell of a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Versus {
    /// The contender's value, converted to the row's unit when the units differ but convert.
    pub value: Value,
    /// The unit the contender's file states.
    pub unit: String,
    /// Whether the units are equal or convertible; when not, nothing below is computed.
    pub comparable: bool,
    /// Contender minus baseline.
    pub diff: Option<f64>,
    /// `(contender - baseline) / |baseline| * 100`; `None` when the baseline is 0 or not finite.
    pub diff_pct: Option<f64>,
    /// The significance test's outcome.
    pub significance: Significance,
    /// Better, worse, changed, same or unknown.
    pub change: Change,
}

impl Versus {
    fn new(base: &Value, unit: &str, better: Better, m: &JmhMetric) -> Versus {
        let Some(factor) = unit_factor(&m.score_unit, unit) else {
            return Versus {
                value: Value::of(m),
                unit: m.score_unit.clone(),
                comparable: false,
                diff: None,
                diff_pct: None,
                significance: Significance::untestable(),
                change: Change::Unknown,
            };
        };
        let value = Value::of(m).scaled(factor);
        let diff = value.score - base.score;
        let diff_pct = (base.score != 0.0 && base.score.is_finite() && diff.is_finite())
            .then(|| diff / base.score.abs() * 100.0);
        let significance = significance(base, &value);
        let change = match (significance.significant, better) {
            (None, _) => Change::Unknown,
            (Some(false), _) => Change::Same,
            (Some(true), Better::Neutral) => Change::Changed,
            (Some(true), Better::Higher) if diff > 0.0 => Change::Better,
            (Some(true), Better::Lower) if diff < 0.0 => Change::Better,
            (Some(true), _) => Change::Worse,
        };
        Versus {
            value,
            unit: m.score_unit.clone(),
            comparable: true,
            diff: Some(diff),
            diff_pct,
            significance,
            change,
        }
    }
}

/// One metric of one benchmark compared across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The entry's [`JmhEntry::key`].
    pub key: String,
    /// Benchmark name.
    pub benchmark: String,
    /// JMH mode.
    pub mode: String,
    /// Total threads.
    pub threads: u64,
    /// Parameters (empty when the benchmark has none).
    pub params: BTreeMap<String, String>,
    /// `None` for the primary metric, else the secondary metric's name.
    pub metric: Option<String>,
    /// The baseline's unit; contenders are converted to it.
    pub unit: String,
    /// Which way the metric improves.
    pub better: Better,
    /// The baseline's value.
    pub baseline: Value,
    /// One cell per contender, `None` where that run lacks the entry or the metric.
    pub contenders: Vec<Option<Versus>>,
}

impl Row {
    /// The Metric column: `score (thrpt)` for the primary metric, else the secondary's name.
    pub fn metric_label(&self) -> String {
        match &self.metric {
            None => format!("score ({})", self.mode),
            Some(m) => m.clone(),
        }
    }

    /// The Benchmark/params (threads) column.
    pub fn benchmark_label(&self) -> String {
        describe(&self.benchmark, &self.params, self.threads)
    }
}

fn describe(benchmark: &str, params: &BTreeMap<String, String>, threads: u64) -> String {
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if p.is_empty() {
        format!("{benchmark} (t={threads})")
    } else {
        format!("{benchmark} {} (t={threads})", p.join(","))
    }
}

/// An entry, or a secondary metric of an entry, that is not in every run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unmatched {
    /// Benchmark name.
    pub benchmark: String,
    /// JMH mode.
    pub mode: String,
    /// Total threads.
    pub threads: u64,
    /// Parameters.
    pub params: BTreeMap<String, String>,
    /// `None` for the whole entry, else the secondary metric's name.
    pub metric: Option<String>,
    /// Labels of the runs that have it.
    pub present_in: Vec<String>,
    /// Labels of the runs that lack it (for a metric: runs that have the entry but not the metric).
    pub missing_from: Vec<String>,
}

impl Unmatched {
    /// Benchmark/params (threads), as in the table.
    pub fn benchmark_label(&self) -> String {
        describe(&self.benchmark, &self.params, self.threads)
    }
}

/// The summary of one contender: geometric mean of primary-score ratios over the intersection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeoMean {
    /// The contender's label.
    pub contender: String,
    /// The geometric mean of the ratios; `None` when no ratio could be formed.
    pub ratio: Option<f64>,
    /// How many ratios went into it.
    pub entries: usize,
    /// Entries of the intersection left out: a score not positive and finite, or units that
    /// do not convert, or (when directions are mixed) a neutral metric.
    pub skipped: usize,
    /// Which way the mean improves. When the entries mix directions (thrpt and avgt), each
    /// ratio is oriented so that above 1 is better (baseline/contender for lower-is-better).
    pub better: Better,
    /// Whether the ratios were oriented because directions were mixed.
    pub oriented: bool,
}

/// Facts about one input run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    /// Its label.
    pub label: String,
    /// How many entries it holds.
    pub entries: usize,
    /// The JMH versions its entries state (`1.37-critsec` for ours).
    pub jmh_versions: Vec<String>,
}

/// N runs compared: what every rendering shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The runs; the first is the baseline.
    pub runs: Vec<RunInfo>,
    /// Confidence level of intervals and tests.
    pub confidence: f64,
    /// The significance rule, in words.
    pub rule: String,
    /// Rows in the baseline's entry order: primary metric first, then secondaries by name.
    pub rows: Vec<Row>,
    /// Entries and metrics not present in every run.
    pub unmatched: Vec<Unmatched>,
    /// One summary per contender.
    pub geomeans: Vec<GeoMean>,
    /// How many entries are present in every run (the geometric means' intersection).
    pub intersection: usize,
    /// Anything else the reader must know (duplicate entries in a file).
    pub notes: Vec<String>,
}

/// The significance rule as printed in every header.
pub const RULE: &str = "significance at 99.9%: * Welch's t-test on the fork means when both sides have >= 2 forks (forks are the unit, and the ± is then over fork means), else on the iteration scores (rawData) when both sides have >= 2 iterations, else † the two 99.9% intervals do not overlap, ? untestable (no iterations and no interval); better/worse by the metric's direction (throughput up is good; time, latency, waits, timeouts up are bad; other units neutral)";

/// Compares runs; `runs[0]` is the baseline, the rest are contenders.
pub fn compare(runs: &[Run]) -> Result<Comparison, CompareError> {
    if runs.len() < 2 {
        return Err(CompareError::TooFewRuns { given: runs.len() });
    }
    let labels: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
    let mut notes = Vec::new();
    let mut order: Vec<String> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let indexed: Vec<HashMap<String, &JmhEntry>> = runs
        .iter()
        .map(|run| {
            let mut map = HashMap::new();
            let mut duplicates = 0;
            for e in &run.entries {
                let key = e.key();
                if seen.insert(key.clone()) {
                    order.push(key.clone());
                }
                match map.entry(key) {
                    std::collections::hash_map::Entry::Occupied(_) => duplicates += 1,
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(e);
                    }
                }
            }
            if duplicates > 0 {
                notes.push(format!(
                    "{}: {duplicates} entries repeat an earlier entry's benchmark, mode, threads and params; only the first of each is compared",
                    run.label
                ));
            }
            map
        })
        .collect();

    let mut rows = Vec::new();
    let mut unmatched = Vec::new();
    let mut in_all = Vec::new();
    for key in &order {
        let present: Vec<Option<&JmhEntry>> = indexed.iter().map(|m| m.get(key).copied()).collect();
        let Some(any) = present.iter().flatten().next() else {
            continue;
        };
        let split = |has: &dyn Fn(usize) -> bool, among: &dyn Fn(usize) -> bool| {
            let (mut yes, mut no) = (Vec::new(), Vec::new());
            for (i, l) in labels.iter().enumerate().filter(|(i, _)| among(*i)) {
                if has(i) {
                    yes.push(l.clone());
                } else {
                    no.push(l.clone());
                }
            }
            (yes, no)
        };
        if present.iter().all(Option::is_some) {
            in_all.push(key.clone());
        } else {
            let (present_in, missing_from) = split(&|i| present[i].is_some(), &|_| true);
            unmatched.push(Unmatched {
                benchmark: any.benchmark.clone(),
                mode: any.mode.clone(),
                threads: any.threads,
                params: params_of(any),
                metric: None,
                present_in,
                missing_from,
            });
        }
        // Secondary metrics missing from some run that has the entry are listed too.
        let names: BTreeSet<&String> = present
            .iter()
            .flatten()
            .flat_map(|e| e.secondary_metrics.keys())
            .collect();
        for name in &names {
            let has =
                |i: usize| present[i].is_some_and(|e| e.secondary_metrics.contains_key(*name));
            let (present_in, missing_from) = split(&has, &|i| present[i].is_some());
            if !missing_from.is_empty() {
                unmatched.push(Unmatched {
                    benchmark: any.benchmark.clone(),
                    mode: any.mode.clone(),
                    threads: any.threads,
                    params: params_of(any),
                    metric: Some((*name).clone()),
                    present_in,
                    missing_from,
                });
            }
        }
        let Some(base) = present[0] else { continue };
        if present[1..].iter().all(Option::is_none) {
            continue;
        }
        let row = |metric: Option<&String>, pick: &dyn Fn(&JmhEntry) -> Option<&JmhMetric>| {
            let bm = pick(base)?;
            let cells: Vec<Option<&JmhMetric>> =
                present[1..].iter().map(|e| e.and_then(pick)).collect();
            if cells.iter().all(Option::is_none) {
                return None;
            }
            let unit = bm.score_unit.clone();
            let better = better(metric.map_or(&base.mode, |m| m), &unit);
            let baseline = Value::of(bm);
            Some(Row {
                key: key.clone(),
                benchmark: base.benchmark.clone(),
                mode: base.mode.clone(),
                threads: base.threads,
                params: params_of(base),
                metric: metric.cloned(),
                contenders: cells
                    .into_iter()
                    .map(|m| m.map(|m| Versus::new(&baseline, &unit, better, m)))
                    .collect(),
                unit,
                better,
                baseline,
            })
        };
        rows.extend(row(None, &|e| Some(&e.primary_metric)));
        for name in names {
            rows.extend(row(Some(name), &|e| e.secondary_metrics.get(name)));
        }
    }

    let geomeans = (1..runs.len())
        .map(|c| geomean(&labels[c], &in_all, &indexed[0], &indexed[c]))
        .collect();
    // Rows whose forks disagree: the between-fork variance dominates (ρ > 0.5), so any one fork
    // would have told another story (JMH pools the forks and hides it).
    for r in &rows {
        let values = std::iter::once((labels[0].as_str(), &r.baseline)).chain(
            r.contenders
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_ref().map(|v| (labels[i + 1].as_str(), &v.value))),
        );
        for (label, v) in values {
            if v.forks_disagree() {
                notes.push(format!(
                    "forks disagree in {label}, {} {}: between-fork variance dominates (ρ = {:.2} over {} forks); fork means {}",
                    r.benchmark_label(),
                    r.metric.as_deref().unwrap_or("primary"),
                    v.fork_rho.unwrap_or(f64::NAN),
                    v.forks,
                    v.fork_means.iter().map(|m| fmt_num(*m)).collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    Ok(Comparison {
        runs: runs
            .iter()
            .map(|r| RunInfo {
                label: r.label.clone(),
                entries: r.entries.len(),
                jmh_versions: r
                    .entries
                    .iter()
                    .map(|e| e.jmh_version.clone())
                    .filter(|v| !v.is_empty())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
            })
            .collect(),
        confidence: CONFIDENCE,
        rule: RULE.to_string(),
        rows,
        unmatched,
        geomeans,
        intersection: in_all.len(),
        notes,
    })
}

fn params_of(e: &JmhEntry) -> BTreeMap<String, String> {
    e.params.clone().unwrap_or_default()
}

fn geomean(
    label: &str,
    keys: &[String],
    base: &HashMap<String, &JmhEntry>,
    contender: &HashMap<String, &JmhEntry>,
) -> GeoMean {
    let pairs: Vec<(Better, f64)> = keys
        .iter()
        .filter_map(|k| {
            let (b, c) = (base.get(k)?, contender.get(k)?);
            let (bm, cm) = (&b.primary_metric, &c.primary_metric);
            let factor = unit_factor(&cm.score_unit, &bm.score_unit)?;
            let ratio = cm.score.0 * factor / bm.score.0;
            (ratio.is_finite() && ratio > 0.0).then(|| (better(&b.mode, &bm.score_unit), ratio))
        })
        .collect();
    let directions: BTreeSet<Better> = pairs.iter().map(|(d, _)| *d).collect();
    let oriented = directions.len() > 1;
    let logs: Vec<f64> = pairs
        .iter()
        .filter_map(|&(d, r)| match (oriented, d) {
            (false, _) | (true, Better::Higher) => Some(r.ln()),
            (true, Better::Lower) => Some(-r.ln()),
            (true, Better::Neutral) => None,
        })
        .collect();
    let better = match (oriented, pairs.first()) {
        (true, _) => Better::Higher,
        (false, Some((d, _))) => *d,
        (false, None) => Better::Neutral,
    };
    GeoMean {
        contender: label.to_string(),
        ratio: (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp()),
        entries: logs.len(),
        skipped: keys.len() - logs.len(),
        better,
        oriented,
    }
}

/// The output formats of [`render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An aligned table for a terminal, optionally coloured.
    Text,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// One CSV row per (row, contender), for spreadsheets and scripts.
    Csv,
    /// The [`Comparison`] value as pretty JSON.
    Json,
}

impl Format {
    /// The names accepted by [`Format::from_str`].
    pub const NAMES: [&'static str; 4] = ["text", "markdown", "csv", "json"];
}

impl FromStr for Format {
    type Err = CompareError;
    fn from_str(s: &str) -> Result<Format, CompareError> {
        match s {
            "text" => Ok(Format::Text),
            "markdown" | "md" => Ok(Format::Markdown),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            _ => Err(CompareError::UnknownFormat { given: s.into() }),
        }
    }
}

/// Renders a comparison; `color` adds ANSI colours to `Text` (green better, red worse).
pub fn render(c: &Comparison, format: Format, color: bool) -> String {
    match format {
        Format::Text => text(c, color),
        Format::Markdown => markdown(c),
        Format::Csv => csv(c),
        Format::Json => json(c),
    }
}

fn cell(v: &Value) -> String {
    match v.error {
        Some(e) => format!("{} ± {}", fmt_num(v.score), fmt_num(e)),
        None => fmt_num(v.score),
    }
}

fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", fmt_num(v))
    } else {
        fmt_num(v)
    }
}

fn mark(s: &Significance) -> &'static str {
    match (s.test, s.significant) {
        (_, None) => "?",
        (_, Some(false)) => "",
        (Test::Welch | Test::WelchForks, Some(true)) => "*",
        (_, Some(true)) => "†",
    }
}

/// The cells of one contender: value, diff, diff %, and the change for colouring.
fn contender_cells(v: Option<&Versus>) -> (String, String, String, Change) {
    let Some(v) = v else {
        return ("-".into(), "-".into(), "-".into(), Change::Unknown);
    };
    if !v.comparable {
        return (
            format!("{} {}", cell(&v.value), v.unit),
            "-".into(),
            "units differ".into(),
            Change::Unknown,
        );
    }
    let diff = v.diff.map(signed).unwrap_or_else(|| "-".into());
    let mut pct = v
        .diff_pct
        .map(|p| format!("{p:+.2}%"))
        .unwrap_or_else(|| "-".into());
    let m = mark(&v.significance);
    if !m.is_empty() {
        pct = format!("{pct} {m}");
    }
    match v.change {
        Change::Better => pct.push_str(" better"),
        Change::Worse => pct.push_str(" worse"),
        _ => {}
    }
    (cell(&v.value), diff, pct, v.change)
}

/// The table as rows of cells (header first) with, per cell, the change that colours it.
fn table_cells(c: &Comparison) -> (Vec<Vec<String>>, Vec<Vec<Change>>) {
    let two = c.runs.len() == 2;
    let mut header = vec![
        "Metric".to_string(),
        "Benchmark/params (threads)".to_string(),
        "Baseline".to_string(),
    ];
    if two {
        header.extend(["Contender", "Diff", "Unit", "Diff %"].map(String::from));
    } else {
        for r in &c.runs[1..] {
            header.push(r.label.clone());
            header.push("Diff %".into());
        }
        header.push("Unit".into());
    }
    let mut cells = vec![header];
    let mut changes = vec![vec![Change::Unknown; cells[0].len()]];
    for row in &c.rows {
        let mut line = vec![
            row.metric_label(),
            row.benchmark_label(),
            cell(&row.baseline),
        ];
        let mut ch = vec![Change::Unknown; 3];
        for v in &row.contenders {
            let (value, diff, pct, change) = contender_cells(v.as_ref());
            if two {
                line.extend([value, diff, row.unit.clone(), pct]);
                ch.extend([Change::Unknown, change, Change::Unknown, change]);
            } else {
                line.extend([value, pct]);
                ch.extend([Change::Unknown, change]);
            }
        }
        if !two {
            line.push(row.unit.clone());
            ch.push(Change::Unknown);
        }
        cells.push(line);
        changes.push(ch);
    }
    (cells, changes)
}

fn header_lines(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for (i, r) in c.runs.iter().enumerate() {
        let role = match (i, c.runs.len()) {
            (0, _) => "Baseline".to_string(),
            (_, 2) => "Contender".to_string(),
            _ => format!("Contender {i}"),
        };
        let versions = if r.jmh_versions.is_empty() {
            String::new()
        } else {
            format!(", JMH layout {}", r.jmh_versions.join("/"))
        };
        out.push(format!(
            "{role}: {} ({} entries{versions})",
            r.label, r.entries
        ));
    }
    out.push("Cells: score ± half-width of the 99.9% confidence interval; Diff = contender - baseline; Diff % relative to the baseline.".into());
    out.push(format!("Marks: {}.", c.rule));
    out
}

fn unmatched_lines(c: &Comparison) -> Vec<String> {
    c.unmatched
        .iter()
        .map(|u| {
            let what = match &u.metric {
                None => format!("{} [{}]", u.benchmark_label(), u.mode),
                Some(m) => format!("{} [{}] metric {m}", u.benchmark_label(), u.mode),
            };
            if u.present_in.len() == 1 {
                format!("{what}: only in {}", u.present_in[0])
            } else {
                format!(
                    "{what}: in {}; missing from {}",
                    u.present_in.join(", "),
                    u.missing_from.join(", ")
                )
            }
        })
        .collect()
}

fn summary_line(c: &Comparison) -> String {
    if c.intersection == 0 {
        return "Geometric mean: no entry is present in all files, so there is none.".into();
    }
    let parts: Vec<String> = c
        .geomeans
        .iter()
        .map(|g| {
            let r = g
                .ratio
                .map(|r| format!("{r:.3}x"))
                .unwrap_or_else(|| "-".into());
            let skipped = if g.skipped > 0 {
                format!(" ({} skipped)", g.skipped)
            } else {
                String::new()
            };
            let dir = match (g.oriented, g.better) {
                (true, _) => " (directions mixed: each ratio oriented so > 1 is better)",
                (false, Better::Higher) => " (higher is better)",
                (false, Better::Lower) => " (lower is better)",
                (false, Better::Neutral) => "",
            };
            format!("{} {r}{dir}{skipped}", g.contender)
        })
        .collect();
    let entries = if c.intersection == 1 {
        "the 1 entry".to_string()
    } else {
        format!("the {} entries", c.intersection)
    };
    format!(
        "Geometric mean of contender/baseline primary-score ratios over {entries} present in all files: {}",
        parts.join("; ")
    )
}

/// The terminal table; `color` wraps significant better/worse cells in ANSI green/red.
pub fn text(c: &Comparison, color: bool) -> String {
    let mut out = String::new();
    for l in header_lines(c) {
        out.push_str(&l);
        out.push('\n');
    }
    out.push('\n');
    let (cells, changes) = table_cells(c);
    let align: Vec<Align> = cells[0]
        .iter()
        .enumerate()
        .map(|(i, h)| {
            if i >= 2 && h != "Unit" {
                Align::Right
            } else {
                Align::Left
            }
        })
        .collect();
    let mut table = Table::new(&align);
    for (row, ch) in cells.iter().zip(&changes) {
        table.colored_row(row.iter().zip(ch).map(|(cell, change)| {
            let tint = match change {
                Change::Better => Some(Color::Green),
                Change::Worse => Some(Color::Red),
                _ => None,
            };
            (cell.clone(), tint)
        }));
    }
    out.push_str(&table.render(color));
    let unmatched = unmatched_lines(c);
    if !unmatched.is_empty() {
        out.push_str("\nNot in every file (listed, not compared):\n");
        for l in unmatched {
            let _ = writeln!(out, "  {l}");
        }
    }
    for n in &c.notes {
        let _ = writeln!(out, "\nNote: {n}");
    }
    out.push('\n');
    out.push_str(&summary_line(c));
    out.push('\n');
    out
}

/// The comparison as Markdown: header lines, the table, the unmatched list and the summary.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    for l in header_lines(c) {
        let _ = writeln!(out, "- {}", md_escape(&l));
    }
    out.push('\n');
    let (cells, _) = table_cells(c);
    for (r, row) in cells.iter().enumerate() {
        let escaped: Vec<String> = row.iter().map(|s| md_escape(s)).collect();
        let _ = writeln!(out, "| {} |", escaped.join(" | "));
        if r == 0 {
            let seps: Vec<&str> = (0..row.len())
                .map(|i| {
                    if i >= 2 && row[i] != "Unit" {
                        "---:"
                    } else {
                        "---"
                    }
                })
                .collect();
            let _ = writeln!(out, "|{}|", seps.join("|"));
        }
    }
    let unmatched = unmatched_lines(c);
    if !unmatched.is_empty() {
        out.push_str("\nNot in every file (listed, not compared):\n\n");
        for l in unmatched {
            let _ = writeln!(out, "- {}", md_escape(&l));
        }
    }
    for n in &c.notes {
        let _ = writeln!(out, "\nNote: {}", md_escape(n));
    }
    out.push('\n');
    out.push_str(&md_escape(&summary_line(c)));
    out.push('\n');
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt_num(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map(|v| format!("{v}"))
        .unwrap_or_default()
}

/// The comparison as CSV: one line per (row, contender) with status `compared`, `missing` or
/// `units-differ`, then one `not-in-all-files` line per unmatched entry or metric.
pub fn csv(c: &Comparison) -> String {
    let mut out = String::from(
        "status,metric,benchmark,mode,threads,params,unit,better,baseline,baseline_score,baseline_error,baseline_iterations,contender,contender_score,contender_error,contender_iterations,diff,diff_pct,test,significant,change,present_in,missing_from\n",
    );
    for row in &c.rows {
        let params: Vec<String> = row.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for (i, v) in row.contenders.iter().enumerate() {
            let label = &c.runs[i + 1].label;
            let status = match v {
                None => "missing",
                Some(v) if !v.comparable => "units-differ",
                Some(_) => "compared",
            };
            let fields = [
                status.to_string(),
                row.metric.clone().unwrap_or_else(|| "primary".into()),
                row.benchmark.clone(),
                row.mode.clone(),
                row.threads.to_string(),
                params.join(","),
                row.unit.clone(),
                kebab(&row.better),
                c.runs[0].label.clone(),
                opt_num(Some(row.baseline.score)),
                opt_num(row.baseline.error),
                row.baseline.iterations.to_string(),
                label.clone(),
                opt_num(v.as_ref().map(|v| v.value.score)),
                opt_num(v.as_ref().and_then(|v| v.value.error)),
                v.as_ref()
                    .map(|v| v.value.iterations.to_string())
                    .unwrap_or_default(),
                opt_num(v.as_ref().and_then(|v| v.diff)),
                opt_num(v.as_ref().and_then(|v| v.diff_pct)),
                v.as_ref()
                    .map(|v| kebab(&v.significance.test))
                    .unwrap_or_default(),
                v.as_ref()
                    .and_then(|v| v.significance.significant)
                    .map(|s| s.to_string())
                    .unwrap_or_default(),
                v.as_ref().map(|v| kebab(&v.change)).unwrap_or_default(),
                String::new(),
                String::new(),
            ];
            let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            let _ = writeln!(out, "{}", line.join(","));
        }
    }
    for u in &c.unmatched {
        let mut fields = vec![String::new(); 23];
        fields[0] = "not-in-all-files".into();
        fields[1] = u.metric.clone().unwrap_or_else(|| "primary".into());
        fields[2] = u.benchmark.clone();
        fields[3] = u.mode.clone();
        fields[4] = u.threads.to_string();
        fields[5] = u
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        fields[21] = u.present_in.join(";");
        fields[22] = u.missing_from.join(";");
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        let _ = writeln!(out, "{}", line.join(","));
    }
    out
}

/// The serde name of one of our enums (`higher`, `welch`, `better`), for CSV cells.
fn kebab<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The [`Comparison`] as pretty JSON (non-finite numbers become `null`).
pub fn json(c: &Comparison) -> String {
    let mut s =
        serde_json::to_string_pretty(c).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_harness::format::jmh::read_entries;

    const BASE: &str = include_str!("../tests/fixtures/critsec_registry_base.json");
    const CONTENDER: &str = include_str!("../tests/fixtures/critsec_registry_contender.json");
    const JMH_SYNC: &str = include_str!("../tests/fixtures/jmh_solr_cores.json");
    const JMH_RW: &str = include_str!("../tests/fixtures/jmh_solr_cores_rwlock.json");

    fn run(label: &str, text: &str) -> Run {
        Run {
            label: label.into(),
            entries: read_entries(text, label).expect("fixture parses"),
        }
    }

    fn ours() -> Comparison {
        compare(&[run("base.json", BASE), run("contender.json", CONTENDER)]).unwrap()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    fn find<'a>(c: &'a Comparison, benchmark: &str, metric: Option<&str>) -> &'a Row {
        c.rows
            .iter()
            .find(|r| r.benchmark_label() == benchmark && r.metric.as_deref() == metric)
            .unwrap_or_else(|| panic!("no row {benchmark} {metric:?}"))
    }

    fn value(score: f64, error: Option<f64>, raw: &[f64]) -> Value {
        Value {
            score,
            error,
            iterations: raw.len(),
            raw: raw.to_vec(),
            forks: 1,
            fork_means: Vec::new(),
            fork_rho: None,
        }
    }

    #[test]
    fn intervals_decide_without_iterations() {
        let check = |b: (f64, f64), c: (f64, f64), expected: Option<bool>, test: Test| {
            let s = significance(&value(b.0, Some(b.1), &[]), &value(c.0, Some(c.1), &[]));
            assert_eq!((s.significant, s.test), (expected, test), "{b:?} vs {c:?}");
        };
        check((100.0, 5.0), (120.0, 10.0), Some(true), Test::Intervals); // [95,105] [110,130]
        check((100.0, 15.0), (120.0, 10.0), Some(false), Test::Intervals); // [85,115] [110,130]
        check((120.0, 1.0), (100.0, 1.0), Some(true), Test::Intervals);
        // One iteration on a side (JMH writes "NaN" as its error) and no interval: untestable.
        let s = significance(&value(100.0, None, &[100.0]), &value(120.0, Some(1.0), &[]));
        assert_eq!((s.significant, s.test), (None, Test::None));
    }

    #[test]
    fn direction_follows_name_then_unit() {
        let check = |name: &str, unit: &str, expected: Better| {
            assert_eq!(better(name, unit), expected, "{name} [{unit}]");
        };
        check("thrpt", "ops/s", Better::Higher);
        check("thrpt", "ops/ms", Better::Higher);
        check("req_per_s_cluster", "req/s", Better::Higher);
        check("indexing", "docs/s", Better::Higher);
        check("group.readers", "ops/s", Better::Higher);
        check("avgt", "ns/op", Better::Lower);
        check("sample", "us/op", Better::Lower);
        check("get.p99.9", "us", Better::Lower);
        check("·p0.99", "ms/op", Better::Lower);
        check("lock.registry.cores.waits", "waits/op", Better::Lower);
        check("lock.registry.cores.wait_ns", "ns/op", Better::Lower);
        check("lock_timeouts", "count", Better::Lower);
        check("pool_rejections", "count", Better::Lower);
        check("·gc.alloc.rate.norm", "B/op", Better::Lower);
        check("·gc.alloc.rate", "MB/sec", Better::Neutral);
        check("threads.stddev", "ops/s", Better::Neutral);
        check("cpu.utilisation", "%", Better::Neutral);
        check("segments", "segments", Better::Neutral);
        check("gets_per_lookup", "1/lookup", Better::Neutral);
    }

    #[test]
    fn units_convert_between_time_scales_only() {
        assert_eq!(unit_factor("ops/s", "ops/s"), Some(1.0));
        assert!(close(unit_factor("ops/ms", "ops/s").unwrap(), 1000.0, 1e-9));
        assert!(close(unit_factor("us/op", "ns/op").unwrap(), 1000.0, 1e-9));
        assert!(close(unit_factor("ms", "us").unwrap(), 1000.0, 1e-9));
        assert_eq!(unit_factor("ops/s", "ns/op"), None);
        assert_eq!(unit_factor("B/op", "MB/op"), None);
        assert_eq!(unit_factor("%", "count"), None);
    }

    #[test]
    fn compares_two_critsec_runs() {
        let c = ours();
        assert_eq!(c.runs.len(), 2);
        assert_eq!(c.intersection, 2);
        // snapshot at 2 threads: 9,863,333 -> 12,465,000 ops/s, +26.4%, Welch significant.
        let row = find(
            &c,
            "registry.get_core_micro cores=10,strategy=snapshot (t=2)",
            None,
        );
        assert_eq!(row.unit, "ops/s");
        assert_eq!(row.better, Better::Higher);
        assert_eq!(row.baseline.iterations, 6);
        let v = row.contenders[0].as_ref().unwrap();
        assert!(
            close(v.diff_pct.unwrap(), 26.3773, 1e-3),
            "{:?}",
            v.diff_pct
        );
        assert_eq!(v.significance.test, Test::WelchForks);
        assert_eq!(v.change, Change::Better);
        // mutex at 2 threads: +0.7%, within the noise.
        let row = find(
            &c,
            "registry.get_core_micro cores=10,strategy=mutex (t=2)",
            None,
        );
        assert_eq!(row.contenders[0].as_ref().unwrap().change, Change::Same);
        // Secondary metrics on both sides become rows, with their own direction.
        let waits = find(
            &c,
            "registry.get_core_micro cores=10,strategy=mutex (t=2)",
            Some("lock.registry.cores.waits"),
        );
        assert_eq!(waits.better, Better::Lower);
        assert_eq!(waits.unit, "waits/op");
        let cpu = find(
            &c,
            "registry.get_core_micro cores=10,strategy=snapshot (t=2)",
            Some("cpu.utilisation"),
        );
        assert_eq!(cpu.better, Better::Neutral);
    }

    #[test]
    fn one_side_only_entries_are_listed_not_dropped() {
        let c = ours();
        let only: Vec<String> = c
            .unmatched
            .iter()
            .map(|u| format!("{} {:?} {:?}", u.benchmark_label(), u.metric, u.present_in))
            .collect();
        assert_eq!(
            only,
            [
                "registry.get_core_micro cores=10,strategy=mutex (t=1) None [\"base.json\"]",
                "registry.get_core_micro cores=10,strategy=snapshot (t=4) None [\"contender.json\"]",
            ]
        );
        assert!(
            c.rows.iter().all(|r| r.threads == 2),
            "no row for one-side entries"
        );
        let text = text(&c, false);
        assert!(
            text.contains("strategy=mutex (t=1) [thrpt]: only in base.json"),
            "{text}"
        );
        assert!(text.contains("strategy=snapshot (t=4) [thrpt]: only in contender.json"));
    }

    #[test]
    fn a_metric_missing_on_one_side_is_listed() {
        let mut base = run("a.json", BASE);
        base.entries[0].secondary_metrics.remove("cpu.utilisation");
        let c = compare(&[base, run("b.json", CONTENDER)]).unwrap();
        let u = c
            .unmatched
            .iter()
            .find(|u| u.metric.as_deref() == Some("cpu.utilisation"))
            .expect("listed");
        assert_eq!(
            (u.present_in.clone(), u.missing_from.clone()),
            (vec!["b.json".to_string()], vec!["a.json".to_string()])
        );
    }

    #[test]
    fn geometric_mean_is_over_the_intersection() {
        let c = ours();
        // Ratios of the two entries in both files: mutex t=2 4,146,667 / 4,116,667 and
        // snapshot t=2 12,465,000 / 9,863,333; the one-side entries do not count.
        let r1: f64 = 4_146_666.666_667 / 4_116_666.666_667;
        let r2: f64 = 12_465_000.0 / 9_863_333.333_333;
        let g = &c.geomeans[0];
        assert_eq!((g.entries, g.skipped, g.oriented), (2, 0, false));
        assert_eq!(g.better, Better::Higher);
        assert!(
            close(g.ratio.unwrap(), (r1 * r2).sqrt(), 1e-6),
            "{:?}",
            g.ratio
        );
        assert!(text(&c, false).contains(
            "over the 2 entries present in all files: contender.json 1.128x (higher is better)"
        ));
    }

    #[test]
    fn mixed_directions_orient_the_ratios() {
        // thrpt doubles (better) and avgt halves (better): oriented, both ratios are 2.
        let file = |thrpt: f64, avgt: f64| {
            format!(
                r#"[{{"benchmark":"b.B.t","mode":"thrpt","threads":1,"primaryMetric":{{"score":{thrpt},
                "scoreError":"NaN","scoreConfidence":["NaN","NaN"],"scoreUnit":"ops/s"}}}},
                {{"benchmark":"b.B.a","mode":"avgt","threads":1,"primaryMetric":{{"score":{avgt},
                "scoreError":"NaN","scoreConfidence":["NaN","NaN"],"scoreUnit":"ns/op"}}}}]"#
            )
        };
        let c = compare(&[run("a", &file(100.0, 40.0)), run("b", &file(200.0, 20.0))]).unwrap();
        let g = &c.geomeans[0];
        assert!(g.oriented && g.better == Better::Higher);
        assert!(close(g.ratio.unwrap(), 2.0, 1e-12));
        assert!(text(&c, false).contains("b 2.000x (directions mixed"));
    }

    #[test]
    fn compares_real_jmh_files() {
        let c = compare(&[run("sync.json", JMH_SYNC), run("rwlock.json", JMH_RW)]).unwrap();
        let name = "org.apache.solr.core.SolrCoresBenchTest.getCoreFromAnyList (t=12)";
        let p = find(&c, name, None);
        let v = p.contenders[0].as_ref().unwrap();
        assert_eq!(v.significance.test, Test::Welch);
        assert_eq!(v.change, Change::Better);
        assert!(close(v.diff_pct.unwrap(), 41.787, 1e-2), "{:?}", v.diff_pct);
        // JMH < 1.37 spells profiler metrics with a middle dot; gc.count has "NaN" as its error
        // and one value, so it is untestable.
        let count = find(&c, name, Some("·gc.count"));
        let v = count.contenders[0].as_ref().unwrap();
        assert_eq!(
            (v.significance.test, v.change),
            (Test::None, Change::Unknown)
        );
        assert_eq!(count.baseline.error, None);
        assert_eq!(
            find(&c, name, Some("·gc.alloc.rate.norm")).better,
            Better::Lower
        );
        assert!(c.unmatched.is_empty());
        assert_eq!(c.runs[0].jmh_versions, ["1.32"]);
    }

    #[test]
    fn jmh_against_ours_lists_both_sides() {
        let c = compare(&[run("jmh.json", JMH_SYNC), run("ours.json", BASE)]).unwrap();
        assert!(c.rows.is_empty());
        assert_eq!(c.unmatched.len(), 4);
        assert_eq!(c.intersection, 0);
        assert!(text(&c, false).contains("no entry is present in all files"));
    }

    #[test]
    fn jmh_without_raw_data_and_in_sample_mode() {
        // -Djmh.json.rawData=false leaves empty arrays; sample mode has histograms instead.
        let entry = |score: f64, error: &str, raw: &str| {
            format!(
                r#"{{"jmhVersion":"1.21","benchmark":"b.B.get","mode":"sample","threads":1,"forks":1,
                "primaryMetric":{{"score":{score},"scoreError":{error},"scoreConfidence":[0,0],
                "scoreUnit":"us/op",{raw}}},"secondaryMetrics":{{}}}}"#
            )
        };
        let no_raw = |score, error| format!("[{}]", entry(score, error, r#""rawData":[[]]"#));
        let c = compare(&[
            run("a", &no_raw(10.0, "0.5")),
            run("b", &no_raw(12.0, "0.5")),
        ])
        .unwrap();
        let v = c.rows[0].contenders[0].as_ref().unwrap();
        assert_eq!(
            (v.significance.test, v.change),
            (Test::Intervals, Change::Worse)
        );
        let c = compare(&[
            run("a", &no_raw(10.0, "\"NaN\"")),
            run("b", &no_raw(12.0, "0.5")),
        ])
        .unwrap();
        assert_eq!(
            c.rows[0].contenders[0].as_ref().unwrap().change,
            Change::Unknown
        );
        // Histograms: iterations with means 10, 10.5, 11 against 20, 20.5, 21 (t = 24.5, df = 4).
        let hist = |a: f64| {
            let (b, c) = (a + 0.5, a + 1.0);
            format!(
                "[{}]",
                entry(
                    a + 0.5,
                    "1.0",
                    &format!(r#""rawDataHistogram":[[[[{a},2]],[[{b},3]],[[{c},1],[{c},4]]]]"#)
                )
            )
        };
        let c = compare(&[run("a", &hist(10.0)), run("b", &hist(20.0))]).unwrap();
        let row = &c.rows[0];
        assert_eq!(row.baseline.raw, [10.0, 10.5, 11.0]);
        let v = row.contenders[0].as_ref().unwrap();
        assert_eq!(v.significance.test, Test::Welch);
        assert_eq!(v.change, Change::Worse);
    }

    #[test]
    fn units_are_converted_before_comparing() {
        let entry = |score: f64, unit: &str| {
            format!(
                r#"[{{"benchmark":"b.B.m","mode":"thrpt","threads":1,"primaryMetric":{{"score":{score},
                "scoreError":"NaN","scoreConfidence":["NaN","NaN"],"scoreUnit":"{unit}"}}}}]"#
            )
        };
        let c = compare(&[
            run("a", &entry(2000.0, "ops/s")),
            run("b", &entry(3.0, "ops/ms")),
        ])
        .unwrap();
        let v = c.rows[0].contenders[0].as_ref().unwrap();
        assert!(close(v.value.score, 3000.0, 1e-9) && close(v.diff_pct.unwrap(), 50.0, 1e-9));
        let c = compare(&[
            run("a", &entry(2000.0, "ops/s")),
            run("b", &entry(3.0, "B/op")),
        ])
        .unwrap();
        let v = c.rows[0].contenders[0].as_ref().unwrap();
        assert!(!v.comparable && v.diff.is_none());
        assert!(text(&c, false).contains("units differ"));
    }

    #[test]
    fn three_runs_sit_side_by_side() {
        let c = compare(&[
            run("base.json", BASE),
            run("contender.json", CONTENDER),
            run("again.json", CONTENDER),
        ])
        .unwrap();
        assert_eq!(c.geomeans.len(), 2);
        let t = text(&c, false);
        let header = t
            .lines()
            .find(|l| l.starts_with("Metric"))
            .expect("table header");
        for col in ["Baseline", "contender.json", "again.json", "Diff %", "Unit"] {
            assert!(header.contains(col), "{header}");
        }
        assert!(t.contains("Contender 2: again.json"));
        // The t=4 entry is in both contenders but not in the baseline.
        assert!(
            t.contains("in contender.json, again.json; missing from base.json"),
            "{t}"
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let c = ours();
        assert!(!text(&c, false).contains('\x1b'));
        let coloured = text(&c, true);
        assert!(coloured.contains("\x1b[32m"), "an improvement is green");
    }

    #[test]
    fn too_few_runs_and_unknown_formats_are_errors() {
        assert_eq!(
            compare(&[run("a", BASE)]).unwrap_err(),
            CompareError::TooFewRuns { given: 1 }
        );
        let e = "html".parse::<Format>().unwrap_err().to_string();
        assert!(e.contains("text, markdown, csv, json"), "{e}");
        assert_eq!("md".parse::<Format>(), Ok(Format::Markdown));
    }

    #[test]
    fn malformed_files_say_where() {
        let truncated = &JMH_SYNC[..JMH_SYNC.len() / 2];
        let e = read_entries(truncated, "sync.json").unwrap_err();
        assert_eq!(e.origin, "sync.json");
        assert!(e.line > 1);
        assert!(e.to_string().contains("expected a JMH"));
        let e = read_entries(r#"[{"benchmark":"x","mode":"thrpt"}]"#, "m.json").unwrap_err();
        assert!(e.to_string().contains("missing field `threads`"), "{e}");
    }

    #[test]
    fn markdown_rendering() {
        insta::assert_snapshot!(markdown(&ours()));
    }

    #[test]
    fn csv_rendering() {
        insta::assert_snapshot!(csv(&ours()));
    }

    #[test]
    fn json_rendering() {
        insta::assert_snapshot!(json(&ours()));
    }

    #[test]
    fn text_rendering() {
        insta::assert_snapshot!(text(&ours(), false));
    }

    /// A JMH entry whose forks' iteration scores are `forks`.
    fn forked(forks: &[&[f64]]) -> String {
        let e: serde_json::Value = serde_json::from_str::<Vec<serde_json::Value>>(JMH_SYNC)
            .unwrap()
            .remove(0);
        let mut e = e;
        let all: Vec<f64> = forks.iter().flat_map(|f| f.iter().copied()).collect();
        let mean = all.iter().sum::<f64>() / all.len() as f64;
        e["forks"] = forks.len().into();
        e["primaryMetric"]["score"] = mean.into();
        e["primaryMetric"]["rawData"] = serde_json::to_value(forks).unwrap();
        e["secondaryMetrics"] = serde_json::json!({});
        serde_json::to_string(&vec![e]).unwrap()
    }

    #[test]
    fn forks_are_the_unit_and_disagreeing_forks_are_flagged() {
        // Every fork steady (±0.1%), but the forks differ from each other by 5-10%: pooling
        // 15 iterations calls a 10% difference significant; over 3 forks a side it is not.
        let bimodal = forked(&[
            &[10.0, 10.01, 9.99, 10.0, 10.0],
            &[10.5, 10.51, 10.49, 10.5, 10.5],
            &[11.0, 11.01, 10.99, 11.0, 11.0],
        ]);
        let steady = forked(&[
            &[11.0, 11.01, 10.99, 11.0, 11.0],
            &[11.5, 11.51, 11.49, 11.5, 11.5],
            &[12.0, 12.01, 11.99, 12.0, 12.0],
        ]);
        let c = compare(&[run("a.json", &bimodal), run("b.json", &steady)]).unwrap();
        let row = &c.rows[0];
        assert_eq!(row.baseline.forks, 3);
        assert!(row.baseline.forks_disagree(), "{:?}", row.baseline.fork_rho);
        let v = row.contenders[0].as_ref().unwrap();
        assert_eq!(v.significance.test, Test::WelchForks);
        assert_eq!(v.significance.significant, Some(false));
        // Pooled iterations would have called it significant.
        let pooled = welch(&row.baseline.raw, &v.value.raw, CONFIDENCE).unwrap();
        assert_eq!(pooled.significant, Some(true));
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("forks disagree in a.json")),
            "{:?}",
            c.notes
        );
        assert!(v.value.forks_disagree());
    }
}
