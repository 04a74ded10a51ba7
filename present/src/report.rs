//! `REPORT.md`: the machine and mode of the measurements (read from their own metadata), the
//! verdict table, and per-run tables comparing strategies side by side, each run followed by
//! its plots: charts of ratios measured in pairs, read from the plots' `.pairs.json` files
//! beside the run (`crate::ratio_plot`), or tables of a metric.
//!
//! Cells read as rebar's `cmp` does: the value with its interval, then in parentheses its ratio
//! to the best value in the row (`1.00` marks the best), and `-` where nothing was measured.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use critsec_harness::claims::PairedSettings;
use critsec_harness::claims::{VerdictFile, VerdictReadError};
use critsec_harness::format::RunMeta;
use critsec_harness::format::read_entries;
use critsec_harness::format::write_atomically;
use critsec_harness::run::{Machine, git_commit, now_utc};

use crate::paired::{PLOT_PRECISION, pairs_path, summary};
use crate::plot::charts;
use crate::processes::{OverProcesses, over_processes};
use crate::publication::{PlotSpec, Publication, Published};
use crate::ratio_plot::{draw, notes};
use crate::verdicts::{ratio_cell, replicates, verdict_cell};

use crate::table::{fmt_num, md_escape};
use critsec_harness::Direction;
use critsec_harness::claims::{ClaimOutcome, SideRecord, Verdict};
use critsec_harness::format::JmhEntry;

/// The verdicts as a Markdown table, then the source's figure next to ours for each claim.
pub fn verdict_markdown(outcomes: &[ClaimOutcome]) -> String {
    let mut out = String::from(
        "| Claim | Verdict | Ratio [99.9% CI] | Expected | Metric | Replicates | Baseline → contender (ours) | Source figure |\n|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let ours = match (&o.verdict, &o.counts) {
            (Err(e), _) => md_escape(e),
            (Ok(Verdict::NotTestable { reason }), _) => md_escape(reason),
            (Ok(_), Some(c)) => format!(
                "{:?} → {:?} {} per replicate",
                c.baseline, c.contender, o.claim.metric
            ),
            (Ok(_), None) if o.baseline.values.is_empty() => "-".into(),
            (Ok(_), None) => format!(
                "{} → {} {}",
                fmt_num(o.baseline.mean()),
                fmt_num(o.contender.mean()),
                o.baseline.unit
            ),
        };
        let ours = ours + &runtimes_text(o);
        let _ = writeln!(
            out,
            "| `{}` | **{}** | {} | {} | {} | {} | {} | {} |",
            o.claim.id,
            verdict_cell(o),
            ratio_cell(o),
            md_escape(&o.claim.expected().replace(">=", "≥").replace("<=", "≤")),
            o.claim.metric,
            replicates(o),
            ours,
            md_escape(&o.claim.source_figure)
        );
    }
    out
}

/// What each program side ran on (JMH: JDK, VM, JMH version, JVM arguments), for a reviewer's
/// claims; empty for our own scenarios.
fn runtimes_text(o: &ClaimOutcome) -> String {
    let of = |side: &SideRecord| {
        let runtime = side.program.as_ref().and_then(|p| p.runtime_text());
        runtime.map(|r| md_escape(&r))
    };
    match (of(&o.baseline), of(&o.contender)) {
        (None, None) => String::new(),
        (b, c) => format!(
            " (runtime: baseline {}; contender {})",
            b.unwrap_or_else(|| "-".into()),
            c.unwrap_or_else(|| "-".into())
        ),
    }
}

/// A table per benchmark with one column per value of `series` (e.g. `strategy`): rows are the
/// other parameters and the thread count; cells hold the score with its 99.9% interval over
/// processes ([`over_processes`]: none from one fork) and the ratio to the row's best (highest
/// for rates, lowest for times).
pub fn series_markdown(entries: &[JmhEntry], series: &str) -> String {
    let mut by_bench: BTreeMap<&str, Vec<&JmhEntry>> = BTreeMap::new();
    for e in entries {
        by_bench.entry(e.benchmark.as_str()).or_default().push(e);
    }
    let mut out = String::new();
    for (bench, es) in by_bench {
        let mut columns: Vec<String> = Vec::new();
        let mut rows: BTreeMap<(String, u64), BTreeMap<String, &JmhEntry>> = BTreeMap::new();
        for e in es {
            let params = e.params.clone().unwrap_or_default();
            let col = params.get(series).cloned().unwrap_or_else(|| "-".into());
            if !columns.contains(&col) {
                columns.push(col.clone());
            }
            let rest: Vec<String> = params
                .iter()
                .filter(|(k, _)| k.as_str() != series)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            rows.entry((rest.join(" "), e.threads))
                .or_default()
                .insert(col, e);
        }
        let first = rows.values().flat_map(|r| r.values()).next();
        let unit = first
            .map(|e| e.primary_metric.score_unit.clone())
            .unwrap_or_default();
        // Which way is better comes from the mode (throughput up, times down), not the unit.
        let higher_better = first.and_then(|e| e.better()) != Some(Direction::Lower);
        let _ = writeln!(
            out,
            "#### `{}` ({}, by `{}`)\n",
            md_escape(bench),
            md_escape(&unit),
            md_escape(series)
        );
        let headers: Vec<String> = columns.iter().map(|c| md_escape(c)).collect();
        let _ = writeln!(out, "| params | threads | {} |", headers.join(" | "));
        let _ = writeln!(out, "|---|---|{}", "---|".repeat(columns.len()));
        for ((params, threads), cells) in rows {
            // Each cell's score and interval are one estimator's: the geometric mean over its
            // processes with the interval over them, or, from one fork, JMH's score alone.
            let scored: BTreeMap<&String, (f64, Option<OverProcesses>)> = cells
                .iter()
                .map(|(c, e)| {
                    let over = over_processes(&e.primary_metric);
                    let score = over.map_or(e.primary_metric.score.0, |p| p.level);
                    (c, (score, over))
                })
                .collect();
            let scores = scored
                .values()
                .map(|(s, _)| *s)
                .filter(|s| s.is_finite() && *s > 0.0);
            let best = if higher_better {
                scores.fold(f64::MIN, f64::max)
            } else {
                scores.fold(f64::MAX, f64::min)
            };
            let cells: Vec<String> = columns
                .iter()
                .map(|c| match scored.get(c) {
                    Some((s, over)) => {
                        let ratio = if higher_better { best / s } else { s / best };
                        let interval = over
                            .map(|p| format!(" [{}, {}]", fmt_num(p.low), fmt_num(p.high)))
                            .unwrap_or_default();
                        format!("{}{} ({:.2})", fmt_num(*s), interval, ratio)
                    }
                    None => "-".into(),
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                if params.is_empty() {
                    "-".to_string()
                } else {
                    md_escape(&params)
                },
                threads,
                cells.join(" | ")
            );
        }
        out.push('\n');
    }
    out
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A run file could not be read or parsed.
    #[error("{0}")]
    Run(String),
    /// The verdict file could not be read or parsed.
    #[error(transparent)]
    Verdicts(#[from] VerdictReadError),
    /// A folder could not be listed.
    #[error("cannot read {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A report or plot file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

fn write(path: &Path, contents: &[u8]) -> Result<(), ReportError> {
    write_atomically(path, contents).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The entries whose parameters have the values `fix` names.
fn fixed(entries: &[JmhEntry], fix: &[(String, String)]) -> Vec<JmhEntry> {
    entries
        .iter()
        .filter(|e| {
            fix.iter().all(|(k, v)| {
                e.params.as_ref().and_then(|p| p.get(k)).map(String::as_str) == Some(v.as_str())
            })
        })
        .cloned()
        .collect()
}

fn relative(from: &Path, to: &Path) -> String {
    to.strip_prefix(from)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| to.display().to_string())
}

/// Whether any plot of the published run saved as `path` was measured in pairs beside it.
fn has_pairs(path: &Path, publication: &Publication) -> bool {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("."));
    publication
        .find(&stem)
        .is_some_and(|run| (0..run.plots.len()).any(|k| pairs_path(dir, &run.file, k).is_file()))
}

/// The Markdown of a published run's plots: for each, its charts (SVG files written beside
/// its verdict file `<file>-<k>.pairs.json`) with the table and notes under each, or its table
/// of a metric's values from the run's `entries`.
fn plots_markdown(
    out: &Path,
    dir: &Path,
    run: &Published,
    entries: &[JmhEntry],
) -> Result<String, ReportError> {
    let mut md = String::new();
    for (k, spec) in run.plots.iter().enumerate() {
        if let PlotSpec::Table {
            axis,
            series,
            metric,
            fix,
        } = spec
        {
            md.push_str(&metric_table(
                &fixed(entries, fix),
                axis,
                series,
                metric,
                fix,
            ));
            continue;
        }
        let pairs = pairs_path(dir, &run.file, k);
        if !pairs.is_file() {
            let _ = writeln!(
                md,
                "_(plot {k} of {}: not measured in pairs in this folder; `critsec report {} --pair` measures it)_\n",
                run.file,
                dir.display()
            );
            continue;
        }
        let file = VerdictFile::read(&pairs)?;
        let _ = writeln!(
            md,
            "Plot {k}: ratios to `{}` measured in pairs at commit `{}` ({}: {}; [`{}`]({})).\n",
            md_escape(spec.baseline().unwrap_or_default()),
            file.git_commit,
            file.created,
            summary(&file.outcomes),
            pairs.display(),
            relative(out, &pairs)
        );
        let drawn = charts(run, spec, &file.outcomes);
        if drawn.is_empty() {
            let _ = writeln!(
                md,
                "_(plot {k} of {}: no outcome in its pairs file is a point of it, as the plot is now written; measure it again)_\n",
                run.file
            );
        }
        for (i, chart) in drawn.iter().enumerate() {
            let name = if drawn.len() == 1 {
                format!("{}-{k}.svg", run.file)
            } else {
                format!("{}-{k}-{i}.svg", run.file)
            };
            match draw(chart) {
                Ok(svg) => {
                    let plot = dir.join(name);
                    write(&plot, svg.as_bytes())?;
                    let _ = writeln!(md, "![{}]({})\n", chart.title, relative(out, &plot));
                }
                Err(e) => {
                    let _ = writeln!(md, "_(no chart: {e})_\n");
                }
            }
            md.push_str(&notes(chart));
            md.push('\n');
        }
    }
    Ok(md)
}

/// A metric's values from a run file, a row per `axis` value (and thread count), a column per
/// `series` value: what a plot cannot show as a ratio (a count that is zero on one side).
fn metric_table(
    entries: &[JmhEntry],
    axis: &str,
    series: &str,
    metric: &str,
    fix: &[(String, String)],
) -> String {
    let param = |e: &JmhEntry, p: &str| {
        e.params
            .as_ref()
            .and_then(|m| m.get(p))
            .cloned()
            .unwrap_or_else(|| "-".into())
    };
    let mut columns: Vec<String> = Vec::new();
    let mut rows: Vec<(u64, String)> = Vec::new();
    for e in entries {
        let c = param(e, series);
        if !columns.contains(&c) {
            columns.push(c);
        }
        let r = (e.threads, param(e, axis));
        if !rows.contains(&r) {
            rows.push(r);
        }
    }
    rows.sort_by(|a, b| {
        let num = |s: &str| s.parse::<f64>().unwrap_or(f64::INFINITY);
        a.0.cmp(&b.0).then(num(&a.1).total_cmp(&num(&b.1)))
    });
    let mut md = String::new();
    let fixed: Vec<String> = fix.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let unit = entries
        .iter()
        .find_map(|e| value_of(e, metric).map(|m| m.score_unit.clone()))
        .unwrap_or_default();
    let _ = writeln!(
        md,
        "`{}` ({}) by `{}` over `{}`{}, from the run file (its measurement, no interval):\n",
        md_escape(metric),
        md_escape(&unit),
        md_escape(series),
        md_escape(axis),
        if fixed.is_empty() {
            String::new()
        } else {
            format!(" at {}", md_escape(&fixed.join(", ")))
        }
    );
    let heads: Vec<String> = columns.iter().map(|c| md_escape(c)).collect();
    let _ = writeln!(
        md,
        "| {} | threads | {} |",
        md_escape(axis),
        heads.join(" | ")
    );
    let _ = writeln!(md, "|---|---|{}", "---|".repeat(columns.len()));
    for (threads, x) in &rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                entries
                    .iter()
                    .find(|e| {
                        e.threads == *threads && param(e, axis) == *x && param(e, series) == *c
                    })
                    .and_then(|e| value_of(e, metric))
                    .map_or("-".into(), |m| fmt_num(m.score.0))
            })
            .collect();
        let _ = writeln!(
            md,
            "| {} | {threads} | {} |",
            md_escape(x),
            cells.join(" | ")
        );
    }
    md.push('\n');
    md
}

/// An entry's metric: `primary`, or a secondary metric by name.
fn value_of<'e>(e: &'e JmhEntry, metric: &str) -> Option<&'e critsec_harness::format::JmhMetric> {
    if metric == "primary" {
        Some(&e.primary_metric)
    } else {
        e.secondary_metrics.get(metric)
    }
}

/// The name of a paired-settings preset, or the settings themselves.
fn mode_of(s: &PairedSettings) -> String {
    let unseeded = PairedSettings {
        seed: 0,
        ..s.clone()
    };
    if unseeded == PairedSettings::quick() {
        "quick mode".into()
    } else if unseeded == PairedSettings::publication() {
        "publication mode (quick's slices, a budget that settles what quick's cannot)".into()
    } else if unseeded == PairedSettings::full() {
        "full mode".into()
    } else {
        format!(
            "custom settings: {} warmup, {}–{} pairs of {:?}",
            s.warmup_iterations, s.min_pairs, s.max_pairs, s.iteration_time
        )
    }
}

/// The machine paragraph, from the measurements' own metadata.
fn machine_note(m: &Machine) -> String {
    let mut note = format!(
        "> **Machine.** Measured on {} with {} cores ({}), {} GiB, {}.",
        m.host, m.cores, m.cpu_model, m.memory_gib, m.rustc
    );
    if m.cores < 8 {
        note.push_str(&format!(
            " On {} cores, contention effects that need many cores (SOLR-16497's 32-core nodes, the reviewer's 12 threads) are muted, and `4x`/`64` threads oversubscribe the cores, which measures lock hand-off under preemption.",
            m.cores
        ));
    }
    note.push_str(
        " Read every figure with that in mind; METHODOLOGY.md lists the other threats.\n",
    );
    note
}

/// The run files of a folder (every `*.json` but metadata, plots' `*.pairs.json` and
/// `verdicts*.json`, and the path of a published run whose plots alone were measured here; the
/// publication set's files in its order, then any others by name) and its verdict file, if any.
pub fn run_folder(
    dir: &Path,
    publication: &Publication,
) -> Result<(Vec<PathBuf>, Option<PathBuf>), ReportError> {
    let listing = std::fs::read_dir(dir).map_err(|source| ReportError::Folder {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut runs: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            // verdicts.json is the folder's verdicts; verdicts-N.json are repeated runs of them.
            name.ends_with(".json")
                && !name.ends_with(".meta.json")
                && !name.ends_with(".pairs.json")
                && !name.starts_with("verdicts")
        })
        .collect();
    // A run of the set whose plots were measured in pairs here without the run itself.
    for run in &publication.runs {
        let path = dir.join(format!("{}.json", run.file));
        if !runs.contains(&path) && has_pairs(&path, publication) {
            runs.push(path);
        }
    }
    let rank = |p: &PathBuf| {
        let stem = p.file_stem().map(|s| s.to_string_lossy().to_string());
        publication.rank(stem.as_deref().unwrap_or(""))
    };
    runs.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    let verdicts = Some(dir.join("verdicts.json")).filter(|v| v.is_file());
    Ok((runs, verdicts))
}

/// Writes `<out>/REPORT.md` (and plots beside the runs) for `runs` and `verdicts`; returns the
/// report's path.
pub fn write_report(
    out: &Path,
    runs: &[PathBuf],
    verdicts: Option<&Path>,
    publication: &Publication,
) -> Result<PathBuf, ReportError> {
    let verdict_file = verdicts.map(VerdictFile::read).transpose()?;
    let mut loaded = Vec::new();
    for path in runs {
        if !path.exists() && has_pairs(path, publication) {
            // A folder measured by `--pair` alone: its charts, without the run's tables.
            loaded.push((path, Vec::new(), None));
            continue;
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| ReportError::Run(format!("cannot read {}: {e}", path.display())))?;
        let entries = read_entries(&text, &path.display().to_string())
            .map_err(|e| ReportError::Run(e.to_string()))?;
        loaded.push((path, entries, RunMeta::read_beside(path).ok().flatten()));
    }
    let mut md = String::new();
    let _ = writeln!(md, "# critsec report\n");
    let _ = writeln!(
        md,
        "Generated {} by `critsec report` at commit `{}`.\n",
        now_utc(),
        git_commit()
    );
    let machine = verdict_file.as_ref().map(|v| &v.machine).or_else(|| {
        loaded
            .iter()
            .find_map(|(_, _, m)| m.as_ref().map(|m| &m.machine))
    });
    if let Some(m) = machine {
        let _ = writeln!(md, "{}", machine_note(m));
    }
    if let (Some(v), Some(file)) = (verdicts, &verdict_file) {
        let _ = writeln!(md, "## Verdicts\n");
        let _ = writeln!(
            md,
            "Measured {} at commit `{}` ({}, seed {}). A replicate is a round of fresh processes, one per configuration, measured in ABBA blocks (or a seed, for the simulation); the ratio is contender / baseline with its 99.9% interval over replicates. Source: [`{}`]({}).\n",
            file.created,
            file.git_commit,
            mode_of(&file.settings),
            file.settings.seed,
            v.display(),
            relative(out, v)
        );
        md.push_str(&verdict_markdown(&file.outcomes));
        md.push('\n');
    }
    if !loaded.is_empty() {
        let _ = writeln!(md, "## Runs\n");
        let _ = writeln!(
            md,
            "Cells: the geometric mean over processes [its 99.9% interval], when it ran in two forks or more (JMH's score from one fork), and in parentheses the ratio to the best cell of the row (1.00 = best). `-`: not measured.\n"
        );
        let _ = writeln!(
            md,
            "Charts: each point is a ratio to the plot's named baseline, measured in interleaved process pairs (seeds, for the simulation) by the claims' engine, with its 99.9% interval over replicates, on a log axis with 1 drawn; the goal is an interval within x/÷ {PLOT_PRECISION:.2}. The table under a chart holds the same ratios; the absolute scores are in the run's table above it (METHODOLOGY.md, *Pictures: ratios from paired measurements*).\n"
        );
    }
    for (path, entries, meta) in &loaded {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let _ = writeln!(md, "### {stem}\n");
        if let Some(meta) = meta {
            let s = &meta.settings;
            let _ = writeln!(
                md,
                "[`{}`]({}): {} mode, {} warmup + {} measurement iterations of {:?}, {} fork(s); {} benchmarks, {} failed.\n",
                path.display(),
                relative(out, path),
                s.mode,
                s.warmup_iterations,
                s.measurement_iterations,
                s.measurement_time,
                s.forks,
                meta.benchmarks.len(),
                meta.benchmarks.iter().filter(|b| b.error.is_some()).count()
            );
            for b in meta.benchmarks.iter().filter(|b| b.error.is_some()) {
                let _ = writeln!(
                    md,
                    "- error in {} {:?}: {}",
                    b.scenario,
                    b.params,
                    b.error.as_deref().unwrap_or("")
                );
            }
        }
        let published = publication.find(&stem);
        let series = published.map(|p| p.series.as_str()).unwrap_or("strategy");
        if entries.is_empty() {
            let _ = writeln!(md, "_(no run file here: the paired charts only)_\n");
        } else {
            md.push_str(&series_markdown(entries, series));
        }
        if let Some(published) = published {
            let dir = path.parent().unwrap_or(Path::new("."));
            md.push_str(&plots_markdown(out, dir, published, entries)?);
        }
    }
    let report = out.join("REPORT.md");
    write(&report, md.as_bytes())?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_harness::claims::Claim;
    use critsec_harness::claims::{BlockValue, ProgramRecord, Replicate};
    use critsec_harness::format::read_entries;
    use critsec_harness::stats::RatioInterval;

    /// An entry of two forks whose levels are `score` · (1 ± 0.001), or of one fork.
    fn entry(strategy: &str, threads: u64, score: f64) -> String {
        let raw = if threads == 2 {
            format!("[[{}],[{}]]", score * 0.999, score * 1.001)
        } else {
            format!("[[{score}]]")
        };
        format!(
            r#"{{"benchmark":"registry.request_mix","mode":"thrpt","threads":{threads},"params":{{"strategy":"{strategy}","cores":"10"}},
               "primaryMetric":{{"score":{score},"scoreError":1.0,"scoreConfidence":[0,0],"scoreUnit":"ops/s","rawData":{raw}}}}}"#
        )
    }

    #[test]
    fn series_tables_put_strategies_side_by_side_with_ratios_to_the_best() {
        let json = format!(
            "[{},{},{}]",
            entry("mutex", 2, 100.0),
            entry("snapshot", 2, 400.0),
            entry("mutex", 8, 50.0)
        );
        let entries = read_entries(&json, "t.json").unwrap();
        let md = series_markdown(&entries, "strategy");
        assert!(
            md.contains("| params | threads | mutex | snapshot |"),
            "{md}"
        );
        // Two forks: their interval (t = 636.6 at one degree of freedom); one fork: none.
        assert!(
            md.contains(
                "| cores=10 | 2 | 100.0 [52.908, 189.0] (4.00) | 400.0 [211.6, 756.0] (1.00) |"
            ),
            "{md}"
        );
        assert!(md.contains("| cores=10 | 8 | 50.000 (1.00) | - |"), "{md}");
    }

    #[test]
    fn a_cell_s_score_and_interval_are_one_estimator_s() {
        // JMH's score is the plain mean (100) of iterations whose forks' geometric means are
        // both 86.6: the cell shows 86.6 inside its own interval, not 100 outside it.
        let json = r#"[{"benchmark":"b.run","mode":"thrpt","threads":1,"params":{"strategy":"a"},
            "primaryMetric":{"score":100.0,"scoreError":1.0,"scoreConfidence":[0,0],"scoreUnit":"ops/s","rawData":[[50.0,150.0],[50.0,150.0]]}}]"#;
        let md = series_markdown(&read_entries(json, "t.json").unwrap(), "strategy");
        assert!(
            md.contains("| - | 1 | 86.603 [86.603, 86.603] (1.00) |"),
            "{md}"
        );
    }

    #[test]
    fn param_values_cannot_break_the_table() {
        let json = r#"[{"benchmark":"b.run","mode":"avgt","threads":1,"params":{"strategy":"a|b","q":"x|y\nz"},
            "primaryMetric":{"score":5.0,"scoreError":1.0,"scoreConfidence":[0,0],"scoreUnit":"ns/op","rawData":[[5.0]]}},
            {"benchmark":"b.run","mode":"avgt","threads":1,"params":{"strategy":"c","q":"x|y\nz"},
            "primaryMetric":{"score":10.0,"scoreError":1.0,"scoreConfidence":[0,0],"scoreUnit":"ns/op","rawData":[[10.0]]}}]"#;
        let md = series_markdown(&read_entries(json, "t.json").unwrap(), "strategy");
        assert!(md.contains("| params | threads | a\\|b | c |"), "{md}");
        // Lower is better in avgt: 5 ns is the best, 10 ns twice it.
        assert!(
            md.contains("| q=x\\|y z | 1 | 5.000 (1.00) | 10.000 (2.00) |"),
            "{md}"
        );
    }

    #[test]
    fn verdict_rows_show_ratio_expectation_and_errors() {
        let claim = Claim::parse_file(
            "[[claim]]\nid='X-1'\ntitle='t'\nsource='s'\nsource_figure='7.0M vs 1.5M | 4.7x'\nscenario='a/b'\ndirection='higher'\nmin_effect=1.05\nbaseline={}\ncontender={env={K='V'}}\n",
            "x.toml",
        )
        .unwrap()
        .remove(0);
        let side = |v: f64| SideRecord {
            values: vec![v],
            unit: "ops/s".into(),
            ..Default::default()
        };
        let replicate = Replicate {
            seed: None,
            baseline_launched_first: true,
            env_pad: (0, 0),
            cpu: None,
            blocks: vec![BlockValue {
                baseline: 100.0,
                contender: 200.0,
                baseline_first: true,
                coherence_ns: None,
            }],
            log_ratio: 2f64.ln(),
        };
        let ok = ClaimOutcome {
            claim: claim.clone(),
            replicate_kind: "process-pair".into(),
            baseline: side(100.0),
            contender: side(200.0),
            replicates: vec![replicate.clone(), replicate],
            interval: Some(RatioInterval {
                ratio: 2.0,
                low: 1.5,
                high: 2.5,
                n: 2,
                log_sd: 0.1,
                confidence: 0.999,
            }),
            components: None,
            optimal_blocks: None,
            counts: None,
            looks: vec![2],
            verdict: Ok(Verdict::Reproduced),
            seconds: 1.0,
            group: vec!["X-1".into()],
            far_processes: Vec::new(),
            flags: Vec::new(),
            design: None,
            coherence: None,
        };
        let failed = ClaimOutcome {
            verdict: Err("check failed: wrong core".into()),
            interval: None,
            ..ok.clone()
        };
        let mut jvm = ok.clone();
        for (side, jdk) in [(&mut jvm.baseline, "17"), (&mut jvm.contender, "25")] {
            side.program = Some(ProgramRecord {
                runtimes: vec![format!("JDK {jdk}, JMH 1.37")],
                ..Default::default()
            });
        }
        assert!(
            verdict_markdown(&[jvm]).contains(
                "| 100.0 → 200.0 ops/s (runtime: baseline JDK 17, JMH 1.37; contender JDK 25, JMH 1.37) |"
            )
        );
        let md = verdict_markdown(&[ok, failed]);
        assert!(md.contains("| `X-1` | **REPRODUCED** | 2.000 [1.500, 2.500] | ≥ 1.05 | primary | 2 pairs | 100.0 → 200.0 ops/s | 7.0M vs 1.5M \\| 4.7x |"), "{md}");
        assert!(md.contains("| `X-1` | **ERROR** | - |"), "{md}");
    }

    /// The replication pause sweep of the publication set: its lock timeouts are tables read
    /// from the run file (a ratio of counts where the key queue counts none means nothing), its
    /// req/s/node plots wait for their paired measurements, and the report says how to get them.
    #[test]
    fn the_pause_sweep_lists_lock_timeouts_and_asks_for_its_pairs() {
        let entry = |protocol: &str, requesters: u32, pause: u32| {
            let collapsed = protocol == "lock-forwarding" && pause >= 5;
            let (timeouts, rate) = if collapsed {
                (20.0 * f64::from(pause), 500.0)
            } else {
                (0.0, 30_000.0 - 100.0 * f64::from(pause))
            };
            format!(
                r#"{{"benchmark":"critsec.replication.ispn_perf","mode":"thrpt","threads":1,"forks":1,"params":{{"protocol":"{protocol}","requesters":"{requesters}","gc_pause_ms":"{pause}","nodes":"100"}},"primaryMetric":{{"score":{rate},"scoreError":"NaN","scoreConfidence":[0,0],"scoreUnit":"req/s/node","rawData":[[{rate}]]}},"secondaryMetrics":{{"lock_timeouts":{{"score":{timeouts},"scoreError":"NaN","scoreConfidence":[0,0],"scoreUnit":"count","rawData":[[{timeouts}]]}}}}}}"#
            )
        };
        let mut all = Vec::new();
        for protocol in ["lock-forwarding", "key-queue"] {
            for requesters in [25, 100] {
                for pause in [0, 5, 20] {
                    all.push(entry(protocol, requesters, pause));
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("critsec-pause-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let run = dir.join("replication-pause-sweep.json");
        std::fs::write(&run, format!("[{}]", all.join(","))).unwrap();
        let report = write_report(&dir, &[run], None, &Publication::builtin()).unwrap();
        let md = std::fs::read_to_string(report).unwrap();
        for requesters in [25, 100] {
            assert!(
                md.contains(&format!(
                    "`lock_timeouts` (count) by `protocol` over `gc_pause_ms` at requesters={requesters}"
                )),
                "{md}"
            );
        }
        // Rows in numeric order; lock forwarding's timeouts against none for the key queue.
        assert!(
            md.contains("| gc_pause_ms | threads | lock-forwarding | key-queue |\n|---|---|---|---|\n| 0 | 1 | 0 | 0 |\n| 5 | 1 | 100.0 | 0 |\n| 20 | 1 | 400.0 | 0 |"),
            "{md}"
        );
        for k in [1, 3] {
            assert!(
                md.contains(&format!(
                    "_(plot {k} of replication-pause-sweep: not measured in pairs in this folder"
                )),
                "{md}"
            );
        }
        assert!(!md.contains(".svg"), "no chart without its pairs: {md}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
