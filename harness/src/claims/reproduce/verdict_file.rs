//! The verdict file of `critsec reproduce --json`: the outcomes of the claims plus where and how
//! they were measured. `critsec report --verdicts` reads it back, typed.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{ClaimOutcome, PairedSettings};
use crate::run::environment::{Hazard, Machine};

/// The verdict file: the outcomes plus where and how they were measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictFile {
    /// The layout's version: 2 since claims are replicated over process pairs or seeds.
    pub format: u32,
    /// When the run started (UTC).
    pub created: String,
    /// The machine.
    pub machine: Machine,
    /// Git commit.
    pub git_commit: String,
    /// Hazards detected before the run.
    pub hazards: Vec<Hazard>,
    /// The pairing settings.
    pub settings: PairedSettings,
    /// One outcome per claim.
    pub outcomes: Vec<ClaimOutcome>,
}

/// Why a verdict file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum VerdictReadError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A verdict file of the first layout (one pair of processes per claim), which this
    /// version does not read.
    #[error(
        "{path}: a verdict file of an older critsec (one process pair per claim, before format 2); re-run `critsec reproduce --json FILE` to get replicated verdicts"
    )]
    OldFormat {
        /// The file.
        path: String,
    },
    /// The file is not a verdict file of this version of critsec.
    #[error(
        "{path}: not a critsec verdict file (line {line}, column {column}: {message}); write one with `critsec reproduce --json FILE`"
    )]
    Malformed {
        /// The file.
        path: String,
        /// Line of the first error.
        line: usize,
        /// Column of the first error.
        column: usize,
        /// What serde found.
        message: String,
    },
}

impl VerdictFile {
    /// The layout this version writes.
    pub const FORMAT: u32 = 2;

    /// Parses a verdict file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, VerdictReadError> {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text)
            && value.get("outcomes").is_some()
            && value.get("format").is_none()
        {
            return Err(VerdictReadError::OldFormat {
                path: origin.to_string(),
            });
        }
        serde_json::from_str(text).map_err(|e| VerdictReadError::Malformed {
            path: origin.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    }

    /// Reads a verdict file.
    pub fn read(path: &Path) -> Result<Self, VerdictReadError> {
        let text = std::fs::read_to_string(path).map_err(|source| VerdictReadError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The file's JSON, pretty-printed as `--json` writes it.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("a verdict file always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_files_name_the_place() {
        let e = VerdictFile::parse("{\"created\": 3}", "v.json").unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("v.json: not a critsec verdict file (line 1"),
            "{m}"
        );
    }
}
