//! `critsec report`: a Markdown report with verdicts, strategy tables and SVG plots, from saved
//! runs or from a fresh publication run (`--fresh`) whose files land in `results/<date>-<host>/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use critsec_harness::environment::{git_commit, hazards, machine, now_utc, write_atomically};
use critsec_harness::jmh::{JmhEntry, read_entries};
use critsec_harness::output::{RunMeta, write_run};
use critsec_harness::plot::{latency_percentiles, throughput_vs_threads};
use critsec_harness::report::{series_markdown, verdict_markdown};
use critsec_harness::reproduce::{ClaimOutcome, PairedSettings, reproduce_claim};
use critsec_harness::runner::{Launcher, Selection, Silent, interrupted, plan};
use critsec_harness::settings::RunSettings;

use super::UsageError;
use super::run::install_interrupt_handler;
use crate::catalog::{catalog, claims};

/// Arguments of `critsec report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Saved runs (JMH JSON written by `critsec run --json`) to report on, or a published run's
    /// folder (its run files, and its `verdicts.json` unless `--verdicts` is given).
    pub runs: Vec<PathBuf>,
    /// A verdict file written by `critsec reproduce --json`.
    #[arg(long, value_name = "FILE")]
    pub verdicts: Option<PathBuf>,
    /// Where `REPORT.md` goes.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Measure first: run the publication set and every claim, saving them in
    /// `<out>/<date>-<cores>core-<cpu>/`, then report on them.
    #[arg(long)]
    pub fresh: bool,
}

/// How a run of the publication set is plotted.
enum PlotSpec {
    /// Throughput against threads, one series per value of a parameter, with other parameters fixed.
    Threads {
        series: &'static str,
        fix: &'static [(&'static str, &'static str)],
    },
    /// Latency percentiles of secondary metrics `<prefix>.pNN`, one group per parameter value.
    Latency {
        series: &'static str,
        prefix: &'static str,
        fix: &'static [(&'static str, &'static str)],
    },
}

/// One run of the publication set: what is measured, saved as `<file>.json`, and plotted.
struct Published {
    file: &'static str,
    scenario: &'static str,
    params: &'static [(&'static str, &'static str)],
    threads: &'static str,
    series: &'static str,
    plots: &'static [PlotSpec],
}

/// The publication set: each system's main scenario over the parameters its story turns on.
const PUBLICATION: &[Published] = &[
    Published {
        file: "registry-request_mix",
        scenario: "registry/request_mix",
        params: &[("writer_interval_ms", "10")],
        threads: "1,max,4x,64",
        series: "strategy",
        plots: &[PlotSpec::Threads {
            series: "strategy",
            fix: &[],
        }],
    },
    Published {
        file: "registry-get_core_micro",
        scenario: "registry/get_core_micro",
        params: &[],
        threads: "1,max,4x",
        series: "strategy",
        plots: &[PlotSpec::Threads {
            series: "strategy",
            fix: &[],
        }],
    },
    Published {
        file: "versionlookup-lookup",
        scenario: "versionlookup/lookup",
        params: &[("pattern", "miss,hit-old")],
        threads: "1",
        series: "strategy",
        plots: &[],
    },
    Published {
        file: "replication-ispn_perf",
        scenario: "replication/ispn_perf",
        params: &[("nodes", "100"), ("requesters", "100"), ("driver", "sim")],
        threads: "1",
        series: "protocol",
        plots: &[
            PlotSpec::Latency {
                series: "protocol",
                prefix: "put",
                fix: &[],
            },
            PlotSpec::Latency {
                series: "protocol",
                prefix: "get",
                fix: &[],
            },
        ],
    },
    // Bela Ban's own run: 25 requesters, cloud-zone links, a 20 ms pause per node per second
    // (the `-25` claims' configuration).
    Published {
        file: "replication-ispn_perf-25",
        scenario: "replication/ispn_perf",
        params: &[
            ("nodes", "100"),
            ("requesters", "25"),
            ("driver", "sim"),
            ("link_latency_us", "250"),
            ("jitter_us", "50"),
            ("gc_interval_ms", "1000"),
            ("gc_pause_ms", "20"),
        ],
        threads: "1",
        series: "protocol",
        plots: &[PlotSpec::Latency {
            series: "protocol",
            prefix: "put",
            fix: &[],
        }],
    },
    Published {
        file: "parser-parse",
        scenario: "parser/parse",
        params: &[("backtrace", "0,1")],
        threads: "1,2",
        series: "strategy",
        plots: &[
            PlotSpec::Threads {
                series: "strategy",
                fix: &[("class", "complex"), ("backtrace", "0")],
            },
            PlotSpec::Threads {
                series: "strategy",
                fix: &[("class", "complex"), ("backtrace", "1")],
            },
        ],
    },
];

fn host_class() -> String {
    let m = machine();
    let cpu: String = m
        .cpu_model
        .to_lowercase()
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!(
        "{}core-{}",
        m.cores,
        if cpu.is_empty() { "cpu".into() } else { cpu }
    )
}

fn publication_settings() -> RunSettings {
    RunSettings {
        warmup_iterations: 1,
        warmup_time: std::time::Duration::from_millis(300),
        measurement_iterations: 3,
        measurement_time: std::time::Duration::from_millis(500),
        forks: 1,
        ..RunSettings::default()
    }
}

/// Runs the publication set and every claim into `dir`.
fn measure_fresh(dir: &Path) -> anyhow::Result<()> {
    let catalog = Arc::new(catalog());
    let exe = std::env::current_exe().context("locating this executable for forks")?;
    let launcher = Launcher::new(Arc::clone(&catalog), Some(exe.clone()));
    let settings = publication_settings();
    for p in PUBLICATION {
        if interrupted() {
            anyhow::bail!("interrupted");
        }
        let selection = Selection {
            patterns: vec![p.scenario.to_string()],
            params: p
                .params
                .iter()
                .map(|(k, v)| (k.to_string(), v.split(',').map(String::from).collect()))
                .collect(),
            threads: Some(p.threads.split(',').map(String::from).collect()),
            ..Selection::default()
        };
        let specs = plan(&catalog, &selection, settings.mode)?;
        eprintln!(
            "report: measuring {} ({} benchmarks)",
            p.scenario,
            specs.len()
        );
        let created = now_utc();
        let results = launcher.run_all(&specs, &settings, &mut Silent);
        let hazards = hazards(specs.iter().map(|s| s.threads).max().unwrap_or(1), true);
        let meta = RunMeta::of_run(
            env!("CARGO_PKG_VERSION"),
            created,
            hazards,
            &settings,
            &results,
        );
        let path = dir.join(format!("{}.json", p.file));
        write_run(&path, &results, &meta, "critsec")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let paired = PairedSettings::quick();
    let mut outcomes = Vec::new();
    for c in claims()? {
        if interrupted() {
            anyhow::bail!("interrupted");
        }
        eprintln!("report: reproducing {}", c.id);
        outcomes.push(reproduce_claim(&launcher, &c, &paired, &mut Silent));
    }
    let file = super::reproduce::VerdictFile {
        created: now_utc(),
        machine: machine(),
        git_commit: git_commit(),
        hazards: hazards(critsec_harness::settings::available_cores() * 4, true),
        settings: &paired,
        outcomes: &outcomes,
    };
    write_atomically(
        &dir.join("verdicts.json"),
        &serde_json::to_vec_pretty(&file)?,
    )?;
    Ok(())
}

fn read_run(path: &Path) -> anyhow::Result<Vec<JmhEntry>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(read_entries(&text, &path.display().to_string())?)
}

fn read_meta(path: &Path) -> Option<RunMeta> {
    let meta = critsec_harness::environment::meta_path(path);
    serde_json::from_str(&std::fs::read_to_string(meta).ok()?).ok()
}

/// The entries whose parameters have the values `fix` names.
fn fixed(entries: &[JmhEntry], fix: &[(&str, &str)]) -> Vec<JmhEntry> {
    entries
        .iter()
        .filter(|e| {
            fix.iter().all(|(k, v)| {
                e.params
                    .as_ref()
                    .and_then(|p| p.get(*k))
                    .map(String::as_str)
                    == Some(*v)
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

/// Writes `<out>/REPORT.md` (and plots beside the runs) for `runs` and `verdicts`.
fn render(out: &Path, runs: &[PathBuf], verdicts: Option<&Path>) -> anyhow::Result<PathBuf> {
    let mut md = String::new();
    let m = machine();
    let _ = writeln!(md, "# critsec report\n");
    let _ = writeln!(
        md,
        "Generated {} by `critsec report` at commit `{}`.\n",
        now_utc(),
        git_commit()
    );
    let _ = writeln!(
        md,
        "> **Machine.** {} with {} cores ({}), {} GiB, {}. This is a small virtual machine: contention effects that need many cores (SOLR-16497's 32-core nodes, the reviewer's 12 threads) are muted here, and `4x`/`64` threads oversubscribe 2 cores, which measures lock hand-off under preemption. Read every figure with that in mind; METHODOLOGY.md lists the other threats.\n",
        m.host, m.cores, m.cpu_model, m.memory_gib, m.rustc
    );
    if let Some(v) = verdicts {
        let text =
            std::fs::read_to_string(v).with_context(|| format!("cannot read {}", v.display()))?;
        let file: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a verdict file", v.display()))?;
        let outcomes: Vec<ClaimOutcome> = serde_json::from_value(file["outcomes"].clone())
            .with_context(|| {
                format!(
                    "{}: expected `outcomes` as written by `critsec reproduce --json`",
                    v.display()
                )
            })?;
        let _ = writeln!(md, "## Verdicts\n");
        let _ = writeln!(
            md,
            "Each claim ran as paired A/B iterations in two warm forks (quick mode); the ratio is contender / baseline with its 99.9% interval. Source: [`{}`]({}).\n",
            v.display(),
            relative(out, v)
        );
        md.push_str(&verdict_markdown(&outcomes));
        md.push('\n');
    }
    if !runs.is_empty() {
        let _ = writeln!(md, "## Runs\n");
        let _ = writeln!(
            md,
            "Cells: score ± 99.9% error, and in parentheses the ratio to the best cell of the row (1.00 = best). `-`: not measured.\n"
        );
    }
    for path in runs {
        let entries = read_run(path)?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let _ = writeln!(md, "### {stem}\n");
        if let Some(meta) = read_meta(path) {
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
        let published = PUBLICATION.iter().find(|p| p.file == stem);
        let series = published.map(|p| p.series).unwrap_or("strategy");
        md.push_str(&series_markdown(&entries, series));
        for (i, spec) in published.map(|p| p.plots).unwrap_or(&[]).iter().enumerate() {
            let benchmark = entries
                .first()
                .map(|e| e.benchmark.clone())
                .unwrap_or_default();
            let (svg, title) = match spec {
                PlotSpec::Threads { series, fix } => {
                    let title = format!("{benchmark}: throughput vs threads{}", fix_suffix(fix));
                    (
                        throughput_vs_threads(&fixed(&entries, fix), &benchmark, series, &title),
                        title,
                    )
                }
                PlotSpec::Latency {
                    series,
                    prefix,
                    fix,
                } => {
                    let title = format!(
                        "{benchmark}: {prefix} latency percentiles{}",
                        fix_suffix(fix)
                    );
                    (
                        latency_percentiles(
                            &fixed(&entries, fix),
                            &benchmark,
                            series,
                            prefix,
                            &title,
                        ),
                        title,
                    )
                }
            };
            match svg {
                Ok(svg) => {
                    let plot = path.with_file_name(format!("{stem}-{i}.svg"));
                    write_atomically(&plot, svg.as_bytes())?;
                    let _ = writeln!(md, "![{title}]({})\n", relative(out, &plot));
                }
                Err(e) => {
                    let _ = writeln!(md, "_(no plot: {e})_\n");
                }
            }
        }
    }
    let report = out.join("REPORT.md");
    write_atomically(&report, md.as_bytes())?;
    Ok(report)
}

/// The run files of a folder (every `*.json` but metadata and verdicts; publication-set files in
/// the set's order, then any others by name) and its verdicts.
fn run_folder(dir: &Path) -> anyhow::Result<(Vec<PathBuf>, Option<PathBuf>)> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            name.ends_with(".json") && !name.ends_with(".meta.json") && name != "verdicts.json"
        })
        .collect();
    let rank = |p: &PathBuf| {
        let stem = p.file_stem().map(|s| s.to_string_lossy().to_string());
        PUBLICATION
            .iter()
            .position(|pubd| Some(pubd.file) == stem.as_deref())
            .unwrap_or(PUBLICATION.len())
    };
    runs.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    let verdicts = Some(dir.join("verdicts.json")).filter(|v| v.is_file());
    Ok((runs, verdicts))
}

fn fix_suffix(fix: &[(&str, &str)]) -> String {
    if fix.is_empty() {
        String::new()
    } else {
        format!(
            " ({})",
            fix.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Writes the report; with `--fresh` measures first.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let (runs, verdicts) = if args.fresh {
        if !args.runs.is_empty() || args.verdicts.is_some() {
            return Err(UsageError(
                "--fresh measures its own runs; give no run files or --verdicts with it".into(),
            )
            .into());
        }
        install_interrupt_handler();
        let dir = args
            .out
            .join(format!("{}-{}", &now_utc()[..10], host_class()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        measure_fresh(&dir)?;
        let runs = PUBLICATION
            .iter()
            .map(|p| dir.join(format!("{}.json", p.file)))
            .collect();
        (runs, Some(dir.join("verdicts.json")))
    } else {
        if args.runs.is_empty() && args.verdicts.is_none() {
            return Err(UsageError(
                "give run files (critsec run --json), a run folder, --verdicts FILE, or --fresh"
                    .into(),
            )
            .into());
        }
        let mut runs = Vec::new();
        let mut verdicts = args.verdicts.clone();
        for path in &args.runs {
            if path.is_dir() {
                let (folder_runs, folder_verdicts) = run_folder(path)?;
                runs.extend(folder_runs);
                verdicts = verdicts.or(folder_verdicts);
            } else {
                runs.push(path.clone());
            }
        }
        (runs, verdicts)
    };
    let report = render(&args.out, &runs, verdicts.as_deref())?;
    eprintln!("critsec: wrote {}", report.display());
    Ok(ExitCode::SUCCESS)
}
