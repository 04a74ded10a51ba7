//! Sides built from git revisions: a reviewer's PR, with the base and the change as the two
//! sides (`critsec ab --rev`), or a claim whose sides name revisions.
//!
//! Each revision is checked out with `git worktree` (detached, under the workspace's target
//! folder, in `critsec-rev/`) and built with cargo, `--locked`; its executable is kept by
//! commit (`critsec-rev/bin/<commit>/`), so a second run against the same commit builds
//! nothing. Every revision builds into one target folder (`critsec-rev/build/`), so the
//! dependencies they share are compiled once. The working tree (`working-tree`) is built where
//! it is when it has uncommitted changes, and as its commit when it has none. Worktrees are
//! removed once built unless asked to be kept.
//!
//! Building a revision runs its code, as `cargo build` would: its build scripts and
//! procedural macros, and later its benchmarks.

mod cargo;
mod git;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::claims::claim::Claim;
use crate::claims::command::Reader;
use crate::run::fork::fork_protocol_of;
use crate::run::{Artifact, Build};

pub use cargo::Progress;
use git::Repo;
pub use git::WORKING_TREE;

/// Why a revision could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// git said no.
    #[error("{what}: {message}")]
    Git {
        /// What was asked of git.
        what: String,
        /// What git said.
        message: String,
    },
    /// The revision names no commit.
    #[error("`{revision}` names no commit of this repository (git rev-parse)")]
    Revision {
        /// The revision as given.
        revision: String,
    },
    /// cargo failed to build it.
    #[error("revision `{revision}` ({commit}) does not build its {artifact}: {output}")]
    Build {
        /// The revision as given.
        revision: String,
        /// Its commit.
        commit: String,
        /// What was being built.
        artifact: Artifact,
        /// The end of what cargo printed.
        output: String,
    },
    /// A file of the cache could not be written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// One executable to have, before it is built: what it is, its commit, and whether a build of
/// it is kept already.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planned {
    /// The revision as the claim names it.
    pub revision: String,
    /// What to build.
    pub artifact: Artifact,
    /// Its commit.
    pub commit: String,
    /// Whether it is the working tree with uncommitted changes.
    pub dirty: bool,
    /// The executable of an earlier build of the same commit, if one is kept.
    pub cached: Option<PathBuf>,
}

/// Builds revisions of one repository into its target folder's `critsec-rev/`.
pub struct Builder {
    repo: Repo,
    cache: PathBuf,
    keep_worktrees: bool,
    progress: Progress,
}

impl Builder {
    /// A builder for the repository `dir` lies in; `progress` sees each line of cargo's output.
    pub fn new(
        dir: &Path,
        keep_worktrees: bool,
        progress: Progress,
    ) -> Result<Builder, BuildError> {
        let repo = Repo::discover(dir)?;
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .map(|t| {
                if t.is_absolute() {
                    t
                } else {
                    repo.root.join(t)
                }
            })
            .unwrap_or_else(|| repo.root.join("target"));
        Ok(Builder {
            cache: target.join("critsec-rev"),
            repo,
            keep_worktrees,
            progress,
        })
    }

    /// The executables `claims` need: each side's revision, for its scenario (critsec) or its
    /// command's bench target, each once.
    pub fn wanted(claims: &[Claim]) -> Vec<(String, Artifact)> {
        let mut wanted: Vec<(String, Artifact)> = Vec::new();
        for claim in claims {
            for side in [&claim.baseline, &claim.contender] {
                let Some(revision) = &side.revision else {
                    continue;
                };
                let artifact = side
                    .command
                    .as_ref()
                    .and_then(|c| c.artifact())
                    .unwrap_or(Artifact::Critsec);
                let one = (revision.clone(), artifact);
                if !wanted.contains(&one) {
                    wanted.push(one);
                }
            }
        }
        wanted
    }

    /// What building `wanted` involves: each revision's commit, and which builds are kept.
    pub fn plan(&self, wanted: &[(String, Artifact)]) -> Result<Vec<Planned>, BuildError> {
        let dirty_tree = self.repo.is_dirty()?;
        wanted
            .iter()
            .map(|(revision, artifact)| {
                let commit = self.repo.commit_of(revision)?;
                let dirty = revision == WORKING_TREE && dirty_tree;
                let kept = self.kept(&commit, artifact);
                Ok(Planned {
                    revision: revision.clone(),
                    artifact: artifact.clone(),
                    commit,
                    dirty,
                    cached: (!dirty && kept.exists()).then_some(kept),
                })
            })
            .collect()
    }

    /// Builds what `planned` lacks (each kept by commit) and returns every build.
    pub fn build(&self, planned: &[Planned]) -> Result<Vec<Build>, BuildError> {
        planned.iter().map(|p| self.build_one(p)).collect()
    }

    fn build_one(&self, p: &Planned) -> Result<Build, BuildError> {
        let executable = match &p.cached {
            Some(kept) => kept.clone(),
            None => self.compile(p)?,
        };
        let fork_protocol = match p.artifact {
            Artifact::Critsec => fork_protocol_of(&executable),
            Artifact::CargoBench { .. } => None,
        };
        Ok(Build {
            revision: p.revision.clone(),
            artifact: p.artifact.clone(),
            commit: p.commit.clone(),
            dirty: p.dirty,
            profile: match p.artifact {
                Artifact::Critsec => "release".into(),
                Artifact::CargoBench { .. } => "bench".into(),
            },
            executable,
            fork_protocol,
        })
    }

    /// Builds `p` from its worktree (or, dirty, from the working tree itself) and keeps its
    /// executable.
    fn compile(&self, p: &Planned) -> Result<PathBuf, BuildError> {
        let short = &p.commit[..p.commit.len().min(12)];
        let label = format!(
            "{} ({short}{})",
            p.revision,
            if p.dirty { ", dirty" } else { "" }
        );
        let progress = self.progress.clone();
        let prefix = format!("building {label} {}: ", p.artifact);
        let forward: Progress =
            std::sync::Arc::new(move |line| progress(&format!("{prefix}{line}")));
        let worktree = self.cache.join("wt").join(short);
        let source = if p.dirty {
            self.repo.root.clone()
        } else {
            self.repo.add_worktree(&worktree, &p.commit)?;
            worktree.clone()
        };
        let built = cargo::build(&source, &self.cache.join("build"), &p.artifact, forward);
        if !p.dirty && !self.keep_worktrees {
            self.repo.remove_worktree(&worktree);
        }
        let built = built.map_err(|output| BuildError::Build {
            revision: p.revision.clone(),
            commit: p.commit.clone(),
            artifact: p.artifact.clone(),
            output,
        })?;
        let kept = if p.dirty {
            self.cache
                .join("bin")
                .join(WORKING_TREE)
                .join(file_name(&p.artifact))
        } else {
            self.kept(&p.commit, &p.artifact)
        };
        let io = |e: std::io::Error| BuildError::Io {
            path: kept.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(kept.parent().expect("a kept build has a folder")).map_err(io)?;
        // Copied to a temporary name, then renamed: a build interrupted here is never taken
        // for a whole one.
        let partial = kept.with_extension("partial");
        std::fs::copy(&built, &partial).map_err(io)?;
        std::fs::rename(&partial, &kept).map_err(io)?;
        Ok(kept)
    }

    /// Where the build of `artifact` at `commit` is kept.
    fn kept(&self, commit: &str, artifact: &Artifact) -> PathBuf {
        self.cache
            .join("bin")
            .join(commit)
            .join(file_name(artifact))
    }

    /// Where worktrees are checked out, for a dry run to say.
    pub fn cache(&self) -> &Path {
        &self.cache
    }

    /// How the output of bench target `target` (of `package`) is read, from its source in the
    /// working tree: criterion's files where it calls `criterion_main!`, divan's table where it
    /// calls `divan::main`.
    pub fn bench_reader(&self, target: &str, package: Option<&str>) -> Result<Reader, String> {
        let source = cargo::bench_source(&self.repo.root, target, package)?;
        let text =
            std::fs::read_to_string(&source).map_err(|e| format!("{}: {e}", source.display()))?;
        match (
            text.contains("criterion_main!"),
            text.contains("divan::main"),
        ) {
            (true, false) => Ok(Reader::Criterion),
            (false, true) => Ok(Reader::Divan),
            _ => Err(format!(
                "{} is neither a criterion bench (criterion_main!) nor a divan one (divan::main): say which with --reader",
                source.display()
            )),
        }
    }
}

/// The file a build of `artifact` is kept as.
fn file_name(artifact: &Artifact) -> String {
    match artifact {
        Artifact::Critsec => "critsec".into(),
        Artifact::CargoBench { target, package } => match package {
            Some(p) => format!("bench-{p}-{target}"),
            None => format!("bench-{target}"),
        },
    }
}
