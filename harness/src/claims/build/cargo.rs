//! The cargo side of building a revision: `cargo build --release --locked` for critsec, or
//! `cargo bench --no-run --locked` for a benchmark executable, in a target folder every
//! revision shares (so what they share, the dependencies, is compiled once), with the
//! executable read from cargo's own messages and its progress shown as it goes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use crate::claims::command::supervise::{self, LineSink, SpawnOrStop};
use crate::run::Artifact;

/// What shows a build's progress: one line of cargo's at a time.
pub type Progress = Arc<dyn Fn(&str) + Send + Sync>;

/// How long a build may take before it is stopped: longer than any workspace needs on two
/// cores, short of forever.
const BUILD_LIMIT: Duration = Duration::from_secs(4 * 3600);

/// The lines of the compiler's output a failed build's error ends with.
const ERROR_LINES: usize = 30;

/// Builds `artifact` of the workspace at `dir` into `target_dir`; its executable, or what the
/// end of cargo's output said.
pub(super) fn build(
    dir: &Path,
    target_dir: &Path,
    artifact: &Artifact,
    progress: Progress,
) -> Result<PathBuf, String> {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    match artifact {
        Artifact::Critsec => {
            cmd.args(["build", "--release", "--locked", "--bin", "critsec"]);
        }
        Artifact::CargoBench { target, package } => {
            cmd.args(["bench", "--no-run", "--locked", "--bench", target]);
            if let Some(p) = package {
                cmd.args(["--package", p]);
            }
        }
    }
    cmd.arg("--message-format=json-render-diagnostics")
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir)
        .env("CARGO_TERM_COLOR", "never")
        .env("CARGO_TERM_PROGRESS_WHEN", "never")
        // A build inherits nothing of the measurement's environment that changes its output.
        .env_remove("RUSTFLAGS");
    let wanted = Executable::of(artifact);
    let ran = supervise::run_with(cmd, BUILD_LIMIT, wanted, Forward(progress));
    let finished = ran.map_err(|e| match e {
        SpawnOrStop::Spawn(e) => format!("cargo could not start: {e}"),
        SpawnOrStop::Stopped(s) => format!("cargo {}", s.0),
    })?;
    let end = || last_lines(&finished.stderr_tail, ERROR_LINES);
    if !finished.status.success() {
        return Err(format!("cargo failed ({}):\n{}", finished.status, end()));
    }
    finished.sink.found.ok_or_else(|| {
        format!(
            "cargo built no {artifact} (is it a target of this workspace?):\n{}",
            end()
        )
    })
}

/// The source file of bench target `target` (of `package`, when several have one) of the
/// workspace at `dir`, from `cargo metadata`.
pub(super) fn bench_source(
    dir: &Path,
    target: &str,
    package: Option<&str>,
) -> Result<PathBuf, String> {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cargo could not start: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let mut found = Vec::new();
    let mut benches = Vec::new();
    for p in meta["packages"].as_array().into_iter().flatten() {
        for t in p["targets"].as_array().into_iter().flatten() {
            if !t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bench"))
            {
                continue;
            }
            let name = t["name"].as_str().unwrap_or_default();
            benches.push(name.to_string());
            if name == target && package.is_none_or(|want| p["name"] == want) {
                found.push(PathBuf::from(t["src_path"].as_str().unwrap_or_default()));
            }
        }
    }
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => {
            benches.sort();
            Err(format!(
                "the workspace has no bench target `{target}`{}; it has: {}",
                package
                    .map(|p| format!(" in package {p}"))
                    .unwrap_or_default(),
                benches.join(", ")
            ))
        }
        _ => Err(format!(
            "several packages have a bench target `{target}`: name one with --package"
        )),
    }
}

/// The last `n` lines of `text`.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Reads cargo's JSON messages for the executable of one target.
struct Executable {
    kind: &'static str,
    name: String,
    found: Option<PathBuf>,
}

impl Executable {
    fn of(artifact: &Artifact) -> Self {
        let (kind, name) = match artifact {
            Artifact::Critsec => ("bin", "critsec".to_string()),
            Artifact::CargoBench { target, .. } => ("bench", target.clone()),
        };
        Executable {
            kind,
            name,
            found: None,
        }
    }
}

impl LineSink for Executable {
    fn line(&mut self, line: &[u8]) {
        let Ok(message) = serde_json::from_slice::<serde_json::Value>(line) else {
            return;
        };
        let target = &message["target"];
        let kinds = target["kind"].as_array();
        if message["reason"] == "compiler-artifact"
            && target["name"] == self.name.as_str()
            && kinds.is_some_and(|k| k.iter().any(|k| k == self.kind))
            && let Some(exe) = message["executable"].as_str()
        {
            self.found = Some(PathBuf::from(exe));
        }
    }
}

/// Hands each line of cargo's standard error to a progress display.
struct Forward(Progress);

impl LineSink for Forward {
    fn line(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if !text.is_empty() {
            (self.0)(text);
        }
    }
}
