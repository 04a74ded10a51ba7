//! The publication set: which runs `critsec report --fresh` measures, saves and plots besides
//! every claim. It is data (`results/publication.toml`, compiled in), so that adding a system's
//! run to the report changes no code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use critsec_harness::RunSettings;
use critsec_harness::claims::VerdictFile;
use critsec_harness::claims::{PairedSettings, reproduce_claims};
use critsec_harness::format::write_atomically;
use critsec_harness::format::{RunMeta, write_run};
use critsec_harness::run::available_cores;
use critsec_harness::run::{Machine, git_commit, hazards, machine, now_utc};
use critsec_harness::run::{Selection, Silent, interrupted, plan};
use critsec_harness::{Catalog, Claim, Launcher, TrialSpec};

/// The publication set shipped with critsec.
const BUILTIN: &str = include_str!("../../results/publication.toml");

/// The publication set: iteration settings and the runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Publication {
    /// How every run of the set is measured.
    pub settings: PublishedSettings,
    /// The runs, in report order.
    #[serde(rename = "run")]
    pub runs: Vec<Published>,
}

/// How every run of the set is measured (a short JMH-style run, one fork).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedSettings {
    /// Warmup iterations.
    pub warmup_iterations: u32,
    /// Length of a warmup iteration.
    pub warmup_ms: u64,
    /// Measurement iterations.
    pub measurement_iterations: u32,
    /// Length of a measurement iteration.
    pub measurement_ms: u64,
    /// Forks per benchmark.
    pub forks: u32,
}

/// One run of the set: what is measured, saved as `<file>.json`, and plotted.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// File stem of the run in the run folder.
    pub file: String,
    /// The scenario.
    pub scenario: String,
    /// `-p` overrides: comma-separated values per parameter.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// `-t` thread specs, comma-separated.
    pub threads: String,
    /// The parameter whose values are the report table's columns.
    pub series: String,
    /// The plots drawn from the run.
    #[serde(default)]
    pub plots: Vec<PlotSpec>,
    /// This run's own settings instead of the set's (a deterministic simulation needs no
    /// warmup, and one iteration is one seed).
    #[serde(default)]
    pub settings: Option<PublishedSettings>,
}

/// How a run is plotted. Every chart plots ratios to `baseline` measured in interleaved process
/// pairs (or seeds) by the claims' engine ([`crate::paired`]); a `table` lists a metric's values
/// from the run file instead, for a metric whose ratio is undefined (a count that is zero).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PlotSpec {
    /// Each series value's score over `baseline`'s against threads: one chart.
    Threads {
        /// The series parameter.
        series: String,
        /// The series value every other is divided by.
        baseline: String,
        /// `(parameter, value)` pairs the plotted configurations have, in title order.
        #[serde(default)]
        fix: Vec<(String, String)>,
    },
    /// Each series value's latency percentiles (secondary metrics `<prefix>.<level>`) over
    /// `baseline`'s, one x value per percentile; one chart per thread count.
    Latency {
        /// The series parameter.
        series: String,
        /// The series value every other is divided by.
        baseline: String,
        /// The metric prefix (`put`, `get`).
        prefix: String,
        /// The percentile levels, as the metrics name them.
        #[serde(default = "latency_levels")]
        levels: Vec<String>,
        /// `(parameter, value)` pairs the plotted configurations have, in title order.
        #[serde(default)]
        fix: Vec<(String, String)>,
    },
    /// Each series value's score over `baseline`'s against the numeric parameter `axis`; one
    /// chart per thread count.
    Ratio {
        /// The numeric parameter on the x axis.
        axis: String,
        /// The series parameter.
        series: String,
        /// The series value every other is divided by.
        baseline: String,
        /// `(parameter, value)` pairs the plotted configurations have, in title order.
        #[serde(default)]
        fix: Vec<(String, String)>,
    },
    /// A metric (`primary`, or a secondary metric's name) of each series value over
    /// `baseline`'s against the numeric parameter `axis`; one chart per thread count.
    Sweep {
        /// The numeric parameter on the x axis.
        axis: String,
        /// The series parameter.
        series: String,
        /// The series value every other is divided by.
        baseline: String,
        /// `primary`, or the name of a secondary metric.
        metric: String,
        /// `(parameter, value)` pairs the plotted configurations have, in title order.
        #[serde(default)]
        fix: Vec<(String, String)>,
    },
    /// A metric's value from the run file for each series value against `axis`, as a table: for
    /// counts whose ratio has no meaning where one side counts zero.
    Table {
        /// The parameter of the rows.
        axis: String,
        /// The series parameter (the columns).
        series: String,
        /// `primary`, or the name of a secondary metric.
        metric: String,
        /// `(parameter, value)` pairs the listed entries have, in title order.
        #[serde(default)]
        fix: Vec<(String, String)>,
    },
}

/// The percentiles a latency plot shows unless it names others: the median to the tail a
/// short simulation still resolves.
fn latency_levels() -> Vec<String> {
    ["p50", "p90", "p99", "p99.9"].map(String::from).to_vec()
}

impl PlotSpec {
    /// The series parameter.
    pub fn series(&self) -> &str {
        match self {
            PlotSpec::Threads { series, .. }
            | PlotSpec::Latency { series, .. }
            | PlotSpec::Ratio { series, .. }
            | PlotSpec::Sweep { series, .. }
            | PlotSpec::Table { series, .. } => series,
        }
    }

    /// The series value the plotted ratios divide by; `None` for a table.
    pub fn baseline(&self) -> Option<&str> {
        match self {
            PlotSpec::Threads { baseline, .. }
            | PlotSpec::Latency { baseline, .. }
            | PlotSpec::Ratio { baseline, .. }
            | PlotSpec::Sweep { baseline, .. } => Some(baseline),
            PlotSpec::Table { .. } => None,
        }
    }

    /// The `(parameter, value)` pairs every plotted configuration has.
    pub fn fix(&self) -> &[(String, String)] {
        match self {
            PlotSpec::Threads { fix, .. }
            | PlotSpec::Latency { fix, .. }
            | PlotSpec::Ratio { fix, .. }
            | PlotSpec::Sweep { fix, .. }
            | PlotSpec::Table { fix, .. } => fix,
        }
    }

    /// The numeric parameter on the x axis, for plots over one.
    pub fn axis(&self) -> Option<&str> {
        match self {
            PlotSpec::Ratio { axis, .. }
            | PlotSpec::Sweep { axis, .. }
            | PlotSpec::Table { axis, .. } => Some(axis),
            PlotSpec::Threads { .. } | PlotSpec::Latency { .. } => None,
        }
    }

    /// The metrics a chart's ratios are of: one, or one per percentile of a latency plot.
    pub fn metrics(&self) -> Vec<String> {
        match self {
            PlotSpec::Threads { .. } | PlotSpec::Ratio { .. } => vec!["primary".into()],
            PlotSpec::Sweep { metric, .. } | PlotSpec::Table { metric, .. } => {
                vec![metric.clone()]
            }
            PlotSpec::Latency { prefix, levels, .. } => {
                levels.iter().map(|l| format!("{prefix}.{l}")).collect()
            }
        }
    }
}

/// Why the set could not be read or measured.
#[derive(Debug, thiserror::Error)]
pub enum PublicationError {
    /// The TOML is malformed.
    #[error("{origin}: {message}")]
    Parse {
        /// The file.
        origin: String,
        /// What the TOML reader found, with line and column.
        message: String,
    },
    /// A run of the set could not be planned (an unknown scenario or parameter).
    #[error("publication run `{file}`: {message}")]
    Plan {
        /// The run's file stem.
        file: String,
        /// Why.
        message: String,
    },
    /// A file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// Ctrl-C stopped the measurement.
    #[error("interrupted")]
    Interrupted,
}

impl Publication {
    /// The set shipped in `results/publication.toml`.
    pub fn builtin() -> Self {
        Self::parse(BUILTIN, "results/publication.toml")
            .expect("results/publication.toml is checked by a test")
    }

    /// Parses a publication file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, PublicationError> {
        toml::from_str(text).map_err(|e| PublicationError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })
    }

    /// The run saved as `<stem>.json`, if it is one of the set's.
    pub fn find(&self, stem: &str) -> Option<&Published> {
        self.runs.iter().find(|p| p.file == stem)
    }

    /// The report order of a file stem: the set's order, then anything else.
    pub fn rank(&self, stem: &str) -> usize {
        self.runs
            .iter()
            .position(|p| p.file == stem)
            .unwrap_or(self.runs.len())
    }

    /// The run settings of `run`: its own, or the set's.
    pub fn run_settings(&self, run: &Published) -> RunSettings {
        let s = run.settings.as_ref().unwrap_or(&self.settings);
        RunSettings {
            warmup_iterations: s.warmup_iterations,
            warmup_time: Duration::from_millis(s.warmup_ms),
            measurement_iterations: s.measurement_iterations,
            measurement_time: Duration::from_millis(s.measurement_ms),
            forks: s.forks,
            ..RunSettings::default()
        }
    }

    /// The benchmarks `run` measures: its scenario at every combination of its parameter values
    /// and thread counts, checked against `catalog`.
    pub fn plan(
        &self,
        run: &Published,
        catalog: &Catalog,
    ) -> Result<Vec<TrialSpec>, PublicationError> {
        let selection = Selection {
            patterns: vec![run.scenario.clone()],
            params: run
                .params
                .iter()
                .map(|(k, v)| (k.clone(), v.split(',').map(String::from).collect()))
                .collect(),
            threads: Some(run.threads.split(',').map(String::from).collect()),
            ..Selection::default()
        };
        plan(catalog, &selection, self.run_settings(run).mode).map_err(|e| PublicationError::Plan {
            file: run.file.clone(),
            message: e.to_string(),
        })
    }

    /// Measures the set and every claim into `dir`: a run file (+ metadata) per run of the set,
    /// each plot's paired ratios (`<file>-<k>.pairs.json`, [`crate::paired::measure_pairs`])
    /// and `verdicts.json`; returns the run files in report order. Progress goes to stderr.
    pub fn measure(
        &self,
        dir: &Path,
        catalog: &std::sync::Arc<Catalog>,
        claims: &[Claim],
        exe: PathBuf,
        seed: u64,
    ) -> Result<Vec<PathBuf>, PublicationError> {
        let launcher = Launcher::new(std::sync::Arc::clone(catalog), Some(exe.clone()));
        let mut files = Vec::new();
        for p in &self.runs {
            if interrupted() {
                return Err(PublicationError::Interrupted);
            }
            let settings = self.run_settings(p);
            let specs = self.plan(p, catalog)?;
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
            write_run(&path, &results, &meta, "critsec").map_err(|source| {
                PublicationError::Write {
                    path: path.clone(),
                    source,
                }
            })?;
            files.push(path);
        }
        crate::paired::measure_pairs(self, dir, catalog, exe, seed)?;
        // The publication run decides what quick mode cannot: a larger budget per claim.
        let paired = PairedSettings::publication().with_seed(seed);
        let created = now_utc();
        eprintln!("report: reproducing {} claims (seed {seed})", claims.len());
        let outcomes = reproduce_claims(&launcher, claims, claims, &paired, &mut Silent);
        if interrupted() {
            return Err(PublicationError::Interrupted);
        }
        let file = VerdictFile {
            format: VerdictFile::FORMAT,
            created,
            machine: machine(),
            git_commit: git_commit(),
            hazards: hazards(available_cores() * 4, true),
            settings: paired,
            outcomes,
        };
        let path = dir.join("verdicts.json");
        write_atomically(&path, &file.to_json())
            .map_err(|source| PublicationError::Write { path, source })?;
        Ok(files)
    }
}

/// The folder a fresh publication run lands in: `<date>-<machine>-<commit>`, the machine as
/// `<cores>core-<cpu words>` and the commit as the short hash of HEAD, e.g.
/// `2026-12-03-2core-amd-epyc-7dc8ed2591c6`. A tree with changes gets its commit's name all the
/// same (the run's files record the `-dirty` mark), and a run outside git is `nocommit`.
pub fn folder_name(date: &str, m: &Machine) -> String {
    folder_name_at(date, m, &git_commit())
}

/// [`folder_name`] for a commit as [`git_commit`] gives it.
fn folder_name_at(date: &str, m: &Machine, commit: &str) -> String {
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
    let cpu = if cpu.is_empty() { "cpu".into() } else { cpu };
    let commit = commit.strip_suffix("-dirty").unwrap_or(commit);
    let commit = if !commit.is_empty() && commit.chars().all(|c| c.is_ascii_hexdigit()) {
        commit
    } else {
        "nocommit"
    };
    format!("{date}-{}core-{cpu}-{commit}", m.cores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_set_parses_and_bad_files_name_the_place() {
        let p = Publication::builtin();
        assert_eq!(p.runs[0].file, "registry-request_mix");
        assert_eq!(p.rank("parser-parse"), 5);
        assert_eq!(p.rank("other"), p.runs.len());
        let e = Publication::parse("[settings]\nwarmup_iterations = \"x\"\n", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.toml: ") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn a_run_folder_is_named_by_date_machine_and_commit() {
        let mut m = machine();
        m.cores = 2;
        m.cpu_model = "AMD EPYC 7B13 64-Core Processor".into();
        let at = |m: &Machine, commit| folder_name_at("2026-12-03", m, commit);
        assert_eq!(
            at(&m, "7dc8ed2591c6"),
            "2026-12-03-2core-amd-epyc-7dc8ed2591c6"
        );
        assert_eq!(
            at(&m, "7dc8ed2591c6-dirty"),
            "2026-12-03-2core-amd-epyc-7dc8ed2591c6"
        );
        assert_eq!(at(&m, "unknown"), "2026-12-03-2core-amd-epyc-nocommit");
        m.cpu_model = "Intel(R) Xeon(R) Processor".into();
        assert_eq!(
            at(&m, "9ac16fb73d91"),
            "2026-12-03-2core-intelr-xeonr-9ac16fb73d91"
        );
        // In this checkout the name ends in HEAD's short hash; outside git, in `nocommit`.
        let name = folder_name("2026-12-03", &m);
        let commit = name
            .strip_prefix("2026-12-03-2core-intelr-xeonr-")
            .unwrap_or_else(|| panic!("{name}"));
        assert!(
            commit == "nocommit"
                || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
            "{name}"
        );
    }
}
