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

use serde::Serialize;

use critsec_harness::format::RunMeta;
use critsec_harness::format::{JmhEntry, JmhKey, JmhMetric, benchmark_name};
use critsec_harness::stats::components;
use critsec_harness::stats::{CONFIDENCE, t_quantile};
use critsec_harness::stats::{Significance, SignificanceTest, welch};
use critsec_harness::{Direction, Mode};

use crate::table::fmt_num;

/// One run to compare: a label for headers (usually its file name) and its entries.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// How the run is named in the output.
    pub label: String,
    /// Its entries, as read by [`critsec_harness::format::read_entries`].
    pub entries: Vec<JmhEntry>,
    /// Which way each secondary metric improves, per benchmark, as the run's producer recorded
    /// it (our `.meta.json`); empty for a real JMH file.
    pub better: BTreeMap<String, BTreeMap<String, Direction>>,
}

impl Run {
    /// A run of `entries`: ours with the `.meta.json` written beside them (`meta`), which says
    /// which way each secondary metric improves, or a real JMH file's (`None`).
    pub fn new(label: impl Into<String>, entries: Vec<JmhEntry>, meta: Option<&RunMeta>) -> Run {
        let better = meta
            .into_iter()
            .flat_map(|m| &m.benchmarks)
            .filter(|b| !b.better.is_empty())
            .map(|b| (benchmark_name(&b.scenario), b.better.clone()))
            .collect();
        Run {
            label: label.into(),
            entries,
            better,
        }
    }
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

/// Which way a metric of an entry improves, `None` where nobody said (never better or worse).
///
/// The primary score's direction is JMH's mode's: throughput up, time per operation down. A
/// secondary metric's is its producer's: ours record it in the run's `.meta.json` (read into
/// [`Run::better`]); JMH's own profilers record none, so their metrics follow JMH's meaning:
/// a sample-mode percentile (`·p0.99`) is a time like the primary, and GC's normalised
/// allocation, count and time are costs, while an allocation *rate* grows with throughput.
pub fn direction(run: &Run, entry: &JmhEntry, metric: Option<&str>) -> Option<Direction> {
    let primary = mode_direction(&entry.mode);
    let Some(name) = metric else {
        return primary;
    };
    if let Some(d) = run.better.get(&entry.benchmark).and_then(|m| m.get(name)) {
        return Some(*d);
    }
    let profiler = name.strip_prefix('·').or_else(|| name.strip_prefix(':'))?;
    match profiler {
        "gc.alloc.rate.norm" | "gc.count" | "gc.time" => Some(Direction::Lower),
        p if p.starts_with('p') && p[1..].parse::<f64>().is_ok() => primary,
        _ => None,
    }
}

/// The primary score's direction by JMH mode (`thrpt`, `avgt`, `sample`, `ss`).
fn mode_direction(mode: &str) -> Option<Direction> {
    match Mode::parse(mode) {
        Ok(m) => Some(m.better()),
        Err(_) => (mode == "ss" || mode == "SingleShotTime").then_some(Direction::Lower),
    }
}

/// `higher`, `lower` or `neutral`: a direction as the comparison's JSON and CSV spell it.
pub fn direction_name(d: Option<Direction>) -> &'static str {
    match d {
        Some(Direction::Higher) => "higher",
        Some(Direction::Lower) => "lower",
        None => "neutral",
    }
}

fn serialize_direction<S: serde::Serializer>(
    d: &Option<Direction>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(direction_name(*d))
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

/// The significance rule of this module (see the module doc) applied to two values.
pub fn significance(base: &Value, contender: &Value) -> Significance {
    // Forks are the unit when both sides have several: iterations of one fork are not
    // independent of each other.
    if base.forks >= 2
        && contender.forks >= 2
        && let Some(s) = welch(&base.fork_means, &contender.fork_means, CONFIDENCE)
    {
        return Significance {
            test: SignificanceTest::WelchForks,
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
                test: SignificanceTest::Intervals,
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
    /// A score or the difference is not a finite number (JMH writes a `NaN` score when one
    /// iteration was `NaN`): whatever a test on the finite iterations says, better or worse is
    /// unknown.
    NotFinite,
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
    /// Contender minus baseline; `None` when the units do not convert or it is not finite.
    pub diff: Option<f64>,
    /// `(contender - baseline) / |baseline| * 100`; `None` when the baseline is 0 or not finite.
    pub diff_pct: Option<f64>,
    /// The significance test's outcome.
    pub significance: Significance,
    /// Better, worse, changed, same, unknown or not finite.
    pub change: Change,
}

impl Versus {
    fn new(base: &Value, unit: &str, better: Option<Direction>, m: &JmhMetric) -> Versus {
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
        // A NaN or infinite score makes the difference so, and no comparison of it with 0 may
        // decide the cell, however significant the finite iterations are.
        if !diff.is_finite() {
            return Versus {
                value,
                unit: m.score_unit.clone(),
                comparable: true,
                diff: None,
                diff_pct: None,
                significance: Significance::untestable(),
                change: Change::NotFinite,
            };
        }
        let diff_pct = (base.score != 0.0 && base.score.is_finite() && diff.is_finite())
            .then(|| diff / base.score.abs() * 100.0);
        let significance = significance(base, &value);
        let change = match (significance.significant, better) {
            (None, _) => Change::Unknown,
            (Some(false), _) => Change::Same,
            (Some(true), None) => Change::Changed,
            (Some(true), Some(Direction::Higher)) if diff > 0.0 => Change::Better,
            (Some(true), Some(Direction::Lower)) if diff < 0.0 => Change::Better,
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
    /// The entry's [`JmhEntry::key`] as printed (entries are matched on the key itself: two
    /// different entries may print alike).
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
    /// Which way the metric improves (`neutral` where nobody said).
    #[serde(serialize_with = "serialize_direction")]
    pub better: Option<Direction>,
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
    /// How many of the skipped entries have a score that is `NaN` or infinite (written only
    /// when there are some).
    #[serde(skip_serializing_if = "is_zero")]
    pub not_finite: usize,
    /// Which way the mean improves. When the entries mix directions (thrpt and avgt), each
    /// ratio is oriented so that above 1 is better (baseline/contender for lower-is-better).
    #[serde(serialize_with = "serialize_direction")]
    pub better: Option<Direction>,
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
pub const RULE: &str = "significance at 99.9%: * Welch's t-test on the fork means when both sides have >= 2 forks (forks are the unit, and the ± is then over fork means), else on the iteration scores (rawData) when both sides have >= 2 iterations, else † the two 99.9% intervals do not overlap, ? untestable (no iterations and no interval); better/worse by the metric's direction (the primary score's by JMH mode: throughput up is good, time down; a secondary metric's as the run's .meta.json records its producer's, or as JMH's profilers mean theirs; else neutral)";

/// Compares runs; `runs[0]` is the baseline, the rest are contenders.
pub fn compare(runs: &[Run]) -> Result<Comparison, CompareError> {
    if runs.len() < 2 {
        return Err(CompareError::TooFewRuns { given: runs.len() });
    }
    let labels: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
    let mut notes = Vec::new();
    let mut order: Vec<JmhKey> = Vec::new();
    let mut seen: BTreeSet<JmhKey> = BTreeSet::new();
    let indexed: Vec<HashMap<JmhKey, &JmhEntry>> = runs
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
            let better = direction(&runs[0], base, metric.map(String::as_str));
            let baseline = Value::of(bm);
            Some(Row {
                key: key.to_string(),
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
    keys: &[JmhKey],
    base: &HashMap<JmhKey, &JmhEntry>,
    contender: &HashMap<JmhKey, &JmhEntry>,
) -> GeoMean {
    let mut not_finite = 0;
    let pairs: Vec<(Option<Direction>, f64)> = keys
        .iter()
        .filter_map(|k| {
            let (b, c) = (base.get(k)?, contender.get(k)?);
            let (bm, cm) = (&b.primary_metric, &c.primary_metric);
            if !(bm.score.0.is_finite() && cm.score.0.is_finite()) {
                not_finite += 1;
                return None;
            }
            let factor = unit_factor(&cm.score_unit, &bm.score_unit)?;
            let ratio = cm.score.0 * factor / bm.score.0;
            (ratio.is_finite() && ratio > 0.0).then(|| (mode_direction(&b.mode), ratio))
        })
        .collect();
    let directions: BTreeSet<Option<Direction>> = pairs.iter().map(|(d, _)| *d).collect();
    let oriented = directions.len() > 1;
    let logs: Vec<f64> = pairs
        .iter()
        .filter_map(|&(d, r)| match (oriented, d) {
            (false, _) | (true, Some(Direction::Higher)) => Some(r.ln()),
            (true, Some(Direction::Lower)) => Some(-r.ln()),
            (true, None) => None,
        })
        .collect();
    let better = match (oriented, pairs.first()) {
        (true, _) => Some(Direction::Higher),
        (false, Some((d, _))) => *d,
        (false, None) => None,
    };
    GeoMean {
        contender: label.to_string(),
        ratio: (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp()),
        entries: logs.len(),
        skipped: keys.len() - logs.len(),
        not_finite,
        better,
        oriented,
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

mod render;
mod verdict_runs;

pub use render::{Format, csv, json, markdown, render, text};
pub use verdict_runs::{
    VerdictCell, VerdictComparison, VerdictRow, compare_verdicts, render_verdicts,
};

#[cfg(test)]
mod tests;
