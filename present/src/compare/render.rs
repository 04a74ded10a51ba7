//! The renderings of a [`Comparison`]: a terminal table, Markdown, CSV and JSON.

use std::fmt::Write as _;
use std::str::FromStr;

use serde::Serialize;

use critsec_harness::stats::{Significance, SignificanceTest};

use super::{Change, CompareError, Comparison, Value, Versus, direction_name};
use crate::table::{Align, Color, Table, fmt_num, md_escape};
use critsec_harness::Direction;

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
        (SignificanceTest::Welch | SignificanceTest::WelchForks, Some(true)) => "*",
        (_, Some(true)) => "†",
    }
}

/// Why a cell's change is unknown when a number is not finite, naming the side and the value.
fn not_finite(base: &Value, v: &Versus) -> String {
    let (side, score) = if !base.score.is_finite() {
        ("baseline", base.score)
    } else if !v.value.score.is_finite() {
        ("contender", v.value.score)
    } else {
        return "unknown: the difference is not finite".into();
    };
    format!("unknown: {side} score is {}", fmt_num(score))
}

/// The cells of one contender against `base`: value, diff, diff %, and the change for colouring.
fn contender_cells(base: &Value, v: Option<&Versus>) -> (String, String, String, Change) {
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
    if v.change == Change::NotFinite {
        return (cell(&v.value), "-".into(), not_finite(base, v), v.change);
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
            let (value, diff, pct, change) = contender_cells(&row.baseline, v.as_ref());
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
            const NOT_FINITE: &str = "a score is NaN or infinite";
            let skipped = match (g.skipped, g.not_finite) {
                (0, _) => String::new(),
                (s, 0) => format!(" ({s} skipped)"),
                (s, n) if s == n => format!(" ({s} skipped: {NOT_FINITE})"),
                (s, n) => format!(" ({s} skipped, {n} of them because {NOT_FINITE})"),
            };
            let dir = match (g.oriented, g.better) {
                (true, _) => " (directions mixed: each ratio oriented so > 1 is better)",
                (false, Some(Direction::Higher)) => " (higher is better)",
                (false, Some(Direction::Lower)) => " (lower is better)",
                (false, None) => "",
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

pub(super) fn csv_field(s: &str) -> String {
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
                direction_name(row.better).to_string(),
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
