//! The git side of building a revision: resolving what a claim names to a commit, telling a
//! dirty working tree from a clean one, and checking a commit out in a worktree of its own.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::BuildError;

/// What a claim names for the working tree as it is, uncommitted changes included.
pub const WORKING_TREE: &str = "working-tree";

/// A git repository, by its top folder.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// The top of its working tree.
    pub root: PathBuf,
}

impl Repo {
    /// The repository `dir` lies in.
    pub fn discover(dir: &Path) -> Result<Repo, BuildError> {
        let root = git(dir, &["rev-parse", "--show-toplevel"]).map_err(|e| BuildError::Git {
            what: format!("finding the git repository of {}", dir.display()),
            message: e,
        })?;
        Ok(Repo {
            root: PathBuf::from(root),
        })
    }

    /// The full commit hash `revision` names (anything `git rev-parse` accepts), or the commit
    /// the working tree stands on for [`WORKING_TREE`].
    pub fn commit_of(&self, revision: &str) -> Result<String, BuildError> {
        let name = if revision == WORKING_TREE {
            "HEAD"
        } else {
            revision
        };
        git(
            &self.root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{name}^{{commit}}"),
            ],
        )
        .map_err(|_| BuildError::Revision {
            revision: revision.to_string(),
        })
    }

    /// Whether the working tree has changes a build of it would include: tracked files changed
    /// or files git does not ignore added.
    pub fn is_dirty(&self) -> Result<bool, BuildError> {
        git(&self.root, &["status", "--porcelain"])
            .map(|s| !s.trim().is_empty())
            .map_err(|e| BuildError::Git {
                what: "reading the working tree's status".into(),
                message: e,
            })
    }

    /// Checks `commit` out, detached, at `path` (replacing a worktree a killed run left there).
    pub fn add_worktree(&self, path: &Path, commit: &str) -> Result<(), BuildError> {
        if path.exists() {
            self.remove_worktree(path);
        }
        let path_text = path.display().to_string();
        git(
            &self.root,
            &["worktree", "add", "--detach", "--force", &path_text, commit],
        )
        .map(|_| ())
        .map_err(|e| BuildError::Git {
            what: format!("checking {commit} out at {path_text}"),
            message: e,
        })
    }

    /// Removes the worktree at `path`, and what git remembers of worktrees that are gone.
    pub fn remove_worktree(&self, path: &Path) {
        let _ = git(
            &self.root,
            &["worktree", "remove", "--force", &path.display().to_string()],
        );
        let _ = std::fs::remove_dir_all(path);
        let _ = git(&self.root, &["worktree", "prune"]);
    }
}

/// Runs `git ARGS` in `dir`: its trimmed standard output, or its standard error.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("git could not start: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}
