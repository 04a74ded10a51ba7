//! Results: per-iteration records, per-benchmark aggregates, and the trial specification.

use crate::direction::Direction;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::run::scenario::{GroupSpec, Metric, Params};
use crate::run::settings::{Mode, RunSettings};
use crate::stats::Summary;

/// Everything a fork needs to build and measure one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialSpec {
    /// Scenario name.
    pub scenario: String,
    /// One parameter combination.
    pub params: Params,
    /// Total thread count.
    pub threads: usize,
    /// Thread groups (their sizes add up to `threads`).
    pub groups: Vec<GroupSpec>,
    /// Benchmark mode.
    pub mode: Mode,
    /// Environment variables set in the fork, in order.
    pub env: Vec<(String, String)>,
    /// The build whose forks run the trial, when it is not this executable (a side built from a
    /// git revision). Not sent to the fork: the fork is that build.
    #[serde(skip)]
    pub build: Option<Build>,
}

/// What a side built from a git revision runs of its build.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Artifact {
    /// The `critsec` binary, whose forks run a scenario's trials.
    Critsec,
    /// A benchmark executable (`cargo bench --no-run`): `target` of `package` (the workspace's
    /// only package with it when `None`).
    CargoBench {
        /// The bench target's name.
        target: String,
        /// The package that has it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        package: Option<String>,
    },
}

impl std::fmt::Display for Artifact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Artifact::Critsec => f.write_str("critsec"),
            Artifact::CargoBench { target, package } => match package {
                Some(p) => write!(f, "bench {target} of {p}"),
                None => write!(f, "bench {target}"),
            },
        }
    }
}

/// An executable built from a git revision: `critsec`, whose forks run the trials of a side
/// that names the revision, or a benchmark executable a command side runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The revision as the claim names it (`main`, `HEAD~1`, a hash, or `working-tree`).
    pub revision: String,
    /// What was built.
    pub artifact: Artifact,
    /// The commit it resolved to (for the working tree: the commit it stands on).
    pub commit: String,
    /// Whether the build includes uncommitted changes (the working tree's, when it has any).
    pub dirty: bool,
    /// The cargo profile it was built with (`release`).
    pub profile: String,
    /// The executable.
    pub executable: std::path::PathBuf,
    /// The fork protocol it speaks, `None` when it does not say (a build older than the
    /// version): its trials then run as whole processes through its JSON output.
    pub fork_protocol: Option<u32>,
}

/// One iteration's measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationResult {
    /// The primary score (unit from the mode, or from the scenario for external samples).
    pub score: f64,
    /// Unit of `score`.
    pub unit: String,
    /// Length of the measured window in nanoseconds.
    pub window_ns: u64,
    /// Operations counted in the window, over all threads.
    pub ops: u64,
    /// Operations counted per thread, with the thread's group, in group order.
    pub thread_ops: Vec<(String, u64)>,
    /// Secondary metrics of this iteration.
    pub secondary: Vec<Metric>,
    /// Latency histogram of the window (sample mode): `(nanoseconds, count)` pairs.
    pub histogram: Option<Vec<(u64, u64)>>,
}

/// The record of one fork of one benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ForkRecord {
    /// The check value the trial reported before measuring.
    pub verified_before: String,
    /// The check value after the last iteration.
    pub verified_after: String,
    /// Measurement iterations (warmups are not kept).
    pub iterations: Vec<IterationResult>,
}

/// The result of one benchmark: a scenario at one parameter combination and thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkResult {
    /// What was run.
    pub spec: TrialSpec,
    /// How it was run.
    pub settings: RunSettings,
    /// One record per completed fork.
    pub forks: Vec<ForkRecord>,
    /// Why the benchmark has no score, if it has none. A failed check lands here.
    pub error: Option<String>,
}

impl BenchmarkResult {
    /// The display name: `scenario` plus parameters and threads.
    pub fn label(&self) -> String {
        format!(
            "{} [{}] t={}",
            self.spec.scenario, self.spec.params, self.spec.threads
        )
    }

    /// Iteration scores, fork-major.
    pub fn scores(&self) -> Vec<f64> {
        self.forks
            .iter()
            .flat_map(|f| f.iterations.iter().map(|i| i.score))
            .collect()
    }

    /// Unit of the primary score.
    pub fn unit(&self) -> String {
        self.forks
            .iter()
            .flat_map(|f| f.iterations.first())
            .map(|i| i.unit.clone())
            .next()
            .unwrap_or_else(|| self.spec.mode.unit().to_string())
    }

    /// Summary of the primary score.
    pub fn primary(&self) -> Summary {
        Summary::of(&self.scores())
    }

    /// Raw values of each secondary metric, `[fork][iteration]`, with their units.
    pub fn secondary_raw(&self) -> BTreeMap<String, (String, Vec<Vec<f64>>)> {
        let mut out: BTreeMap<String, (String, Vec<Vec<f64>>)> = BTreeMap::new();
        for (fi, fork) in self.forks.iter().enumerate() {
            for it in &fork.iterations {
                for m in &it.secondary {
                    let e = out
                        .entry(m.name.clone())
                        .or_insert_with(|| (m.unit.clone(), Vec::new()));
                    while e.1.len() <= fi {
                        e.1.push(Vec::new());
                    }
                    e.1[fi].push(m.value);
                }
            }
        }
        out
    }

    /// Which way each secondary metric improves, where its producer said.
    pub fn secondary_directions(&self) -> BTreeMap<String, Direction> {
        self.forks
            .iter()
            .flat_map(|f| &f.iterations)
            .flat_map(|it| &it.secondary)
            .filter_map(|m| Some((m.name.clone(), m.better?)))
            .collect()
    }

    /// Summary of a secondary metric over all iterations, if it was reported.
    pub fn secondary(&self, name: &str) -> Option<(Summary, String)> {
        self.secondary_raw().remove(name).map(|(unit, raw)| {
            let all: Vec<f64> = raw.into_iter().flatten().collect();
            (Summary::of(&all), unit)
        })
    }

    /// The merged latency histogram of all iterations (sample mode).
    pub fn merged_histogram(&self) -> Option<hdrhistogram::Histogram<u64>> {
        let mut merged = crate::run::control::new_histogram();
        let mut any = false;
        for it in self.forks.iter().flat_map(|f| &f.iterations) {
            if let Some(h) = &it.histogram {
                any = true;
                for &(v, c) in h {
                    merged.saturating_record_n(v, c);
                }
            }
        }
        any.then_some(merged)
    }
}
