//! The builds of the git revisions claims name, for `reproduce` and `ab`: planned, built (or
//! taken from the builds kept by commit), with cargo's progress on stderr.

use std::io::IsTerminal;
use std::sync::Arc;

use critsec_harness::Claim;
use critsec_harness::claims::{BuildError, BuildProgress, Builder, Planned};
use critsec_harness::run::Build;

use super::UsageError;

/// A builder for the repository of the current folder; `keep_worktrees` leaves the checkouts.
pub fn builder(keep_worktrees: bool) -> anyhow::Result<Builder> {
    let here = std::env::current_dir()?;
    // On a terminal one line, rewritten; in a log every line of cargo's.
    let progress: BuildProgress = if std::io::stderr().is_terminal() {
        Arc::new(|line| {
            let line: String = line.chars().take(100).collect();
            eprint!("\r\x1b[2K{line}");
        })
    } else {
        Arc::new(|line| eprintln!("{line}"))
    };
    Builder::new(&here, keep_worktrees, progress).map_err(usage)
}

/// What building the revisions of `claims` involves (nothing when they name none).
pub fn plan(builder: &Builder, claims: &[Claim]) -> anyhow::Result<Vec<Planned>> {
    builder.plan(&Builder::wanted(claims)).map_err(usage)
}

/// Builds what `planned` lacks; every build.
pub fn build(builder: &Builder, planned: &[Planned]) -> anyhow::Result<Vec<Build>> {
    if planned.is_empty() {
        return Ok(Vec::new());
    }
    let builds = builder.build(planned);
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
    let builds = builds.map_err(usage)?;
    for b in &builds {
        let kept = planned
            .iter()
            .find(|p| p.revision == b.revision && p.artifact == b.artifact)
            .is_some_and(|p| p.cached.is_some());
        eprintln!(
            "critsec: {} {} of {} ({}{}): {}{}",
            if kept { "kept" } else { "built" },
            b.artifact,
            b.revision,
            &b.commit[..b.commit.len().min(12)],
            if b.dirty {
                ", with uncommitted changes"
            } else {
                ""
            },
            b.executable.display(),
            match (&b.artifact, b.fork_protocol) {
                (critsec_harness::run::Artifact::Critsec, Some(p)) =>
                    format!(", fork protocol {p}"),
                (critsec_harness::run::Artifact::Critsec, None) =>
                    ", no fork protocol (older build)".into(),
                _ => String::new(),
            }
        );
    }
    Ok(builds)
}

/// What a dry run says of `planned`, a line each.
pub fn plan_lines(builder: &Builder, planned: &[Planned]) -> Vec<String> {
    planned
        .iter()
        .map(|p| {
            let short = &p.commit[..p.commit.len().min(12)];
            let how = match (&p.cached, p.dirty) {
                (Some(kept), _) => format!("kept at {}: nothing to build", kept.display()),
                (None, true) => {
                    "build the working tree as it is, with its uncommitted changes".into()
                }
                (None, false) => format!(
                    "check out into {} and build (cargo build --release --locked)",
                    builder.cache().join("wt").join(short).display()
                ),
            };
            format!("# {} of {} ({short}): {how}", p.artifact, p.revision)
        })
        .collect()
}

/// A revision that names no commit is the user's mistake (exit 2); a build that fails is not.
fn usage(e: BuildError) -> anyhow::Error {
    match e {
        BuildError::Revision { .. } => UsageError(e.to_string()).into(),
        other => other.into(),
    }
}
