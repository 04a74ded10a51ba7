//! A run's files: the JMH JSON array and its sibling `.meta.json` with everything JMH's layout
//! has no place for (machine, command, hazards, check values, errors).

use std::collections::BTreeMap;

use crate::direction::Direction;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{meta_path, write_atomically};
use crate::format::jmh::{JmhEntry, to_entry};
use crate::run::environment::{Hazard, Machine};
use crate::run::result::BenchmarkResult;
use crate::run::scenario::GroupSpec;
use crate::run::settings::RunSettings;

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
    /// Which way each secondary metric improves, as its producer said (JMH's layout has no
    /// place for it); metrics without a direction are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub better: BTreeMap<String, Direction>,
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
            better: r.secondary_directions(),
        }
    }
}

/// Why the metadata beside a run could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{path} is not a run's metadata ({message})")]
pub struct MetaReadError {
    /// The metadata file.
    pub path: String,
    /// The parser's message.
    pub message: String,
}

impl RunMeta {
    /// The metadata beside the run file `json` (`run.json` → `run.meta.json`): `Ok(None)` when
    /// there is none (a real JMH file), an error when there is one that does not parse.
    pub fn read_beside(json: &Path) -> Result<Option<RunMeta>, MetaReadError> {
        let path = meta_path(json);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| MetaReadError {
                path: path.display().to_string(),
                message: e.to_string(),
            })
    }

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
            machine: crate::run::environment::machine(),
            git_commit: crate::run::environment::git_commit(),
            hazards,
            settings: settings.clone(),
            interrupted: crate::run::runner::interrupted(),
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
