//! Claims as data: what a PR or post asserts, in a form `critsec reproduce` can test.
//!
//! Each bench crate keeps its claims in a `claims.toml` beside its scenarios:
//!
//! ```toml
//! [[claim]]
//! id = "SOLR-16497-micro"
//! title = "In the bare micro-benchmark the synchronized registry beats the read-write one"
//! source = "SOLR-16497 / apache/solr PR #1155, stillalex's JMH run of 2022-12-16"
//! source_figure = "synchronized 7.01M ops/s vs read-write 1.49M ops/s on 12 threads (4.7x)"
//! scenario = "registry/get_core_micro"
//! metric = "primary"          # or the name of a secondary metric
//! direction = "higher"        # contender / baseline is expected to be >= min_effect
//! min_effect = 1.05           # ("lower": contender / baseline <= min_effect)
//! threads = "max"
//! params = { cores = "10" }   # shared by both sides
//! baseline = { params = { strategy = "rwlock" } }
//! contender = { params = { strategy = "mutex" }, env = {} }
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::run::scenario::Params;

/// Which way the contender is expected to move the metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// contender / baseline >= `min_effect` (e.g. throughput up).
    Higher,
    /// contender / baseline <= `min_effect` (e.g. latency down).
    Lower,
}

/// One side of a claim: parameter values and environment overrides on top of the shared ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Side {
    /// Parameter values for this side (merged over the claim's shared `params`).
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// Environment variables set in this side's forks.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A different scenario for this side, when the two sides are different scenarios.
    #[serde(default)]
    pub scenario: Option<String>,
    /// A different thread count for this side (e.g. scaling claims: 1 vs 2 threads).
    #[serde(default)]
    pub threads: Option<String>,
}

/// A performance claim from a source, testable by `critsec reproduce`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Stable identifier, e.g. `SOLR-16497-load`.
    pub id: String,
    /// One-line statement of the claim.
    pub title: String,
    /// Where the claim comes from: the PR, issue or post.
    pub source: String,
    /// The figure the source quotes, printed next to ours.
    pub source_figure: String,
    /// The scenario both sides run (unless a side names its own).
    pub scenario: String,
    /// `primary`, or the name of a secondary metric.
    #[serde(default = "primary")]
    pub metric: String,
    /// Expected direction of contender / baseline.
    pub direction: Direction,
    /// The minimum effect: the ratio bound the interval must clear.
    pub min_effect: f64,
    /// Thread count for both sides, as `-t` accepts it.
    #[serde(default = "one")]
    pub threads: String,
    /// Parameters shared by both sides.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// The "before" configuration.
    pub baseline: Side,
    /// The "after" configuration.
    pub contender: Side,
    /// Why the two sides are comparable where they do not do identical work.
    #[serde(default)]
    pub note: Option<String>,
}

fn primary() -> String {
    "primary".to_string()
}
fn one() -> String {
    "1".to_string()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimFile {
    #[serde(default)]
    claim: Vec<Claim>,
}

/// Why a claims file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// The TOML did not parse or did not match the claim layout.
    #[error("claims file {origin}: {message}")]
    Parse {
        /// Which file.
        origin: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A claim is internally inconsistent.
    #[error("claim `{id}` in {origin}: {message}")]
    Invalid {
        /// The claim's id.
        id: String,
        /// Which file.
        origin: String,
        /// What is wrong.
        message: String,
    },
}

impl Claim {
    /// Parses a claims file; `origin` names it in errors.
    pub fn parse_file(text: &str, origin: &str) -> Result<Vec<Claim>, ClaimError> {
        let file: ClaimFile = toml::from_str(text).map_err(|e| ClaimError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        for c in &file.claim {
            let invalid = |message: &str| ClaimError::Invalid {
                id: c.id.clone(),
                origin: origin.to_string(),
                message: message.to_string(),
            };
            if !(c.min_effect.is_finite() && c.min_effect > 0.0) {
                return Err(invalid("min_effect must be a positive ratio"));
            }
            if c.baseline == c.contender {
                return Err(invalid("baseline and contender are identical"));
            }
        }
        Ok(file.claim)
    }

    /// The scenario, parameters, thread spec and environment of one side.
    pub fn side(&self, contender: bool) -> (String, Params, String, BTreeMap<String, String>) {
        let side = if contender {
            &self.contender
        } else {
            &self.baseline
        };
        let mut params = self.params.clone();
        params.extend(side.params.clone());
        (
            side.scenario
                .clone()
                .unwrap_or_else(|| self.scenario.clone()),
            Params(params),
            side.threads.clone().unwrap_or_else(|| self.threads.clone()),
            side.env.clone(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_layout() {
        let text = r#"
[[claim]]
id = "X-1"
title = "t"
source = "s"
source_figure = "f"
scenario = "sys/scen"
direction = "higher"
min_effect = 1.05
threads = "max"
params = { cores = "10" }
baseline = { params = { strategy = "rwlock" } }
contender = { params = { strategy = "mutex" }, env = { RUST_BACKTRACE = "0" } }
"#;
        let claims = Claim::parse_file(text, "test.toml").unwrap();
        assert_eq!(claims.len(), 1);
        let (scenario, params, threads, env) = claims[0].side(true);
        assert_eq!(scenario, "sys/scen");
        assert_eq!(params.get("strategy").unwrap(), "mutex");
        assert_eq!(params.get("cores").unwrap(), "10");
        assert_eq!(threads, "max");
        assert_eq!(env.get("RUST_BACKTRACE").map(String::as_str), Some("0"));
        assert_eq!(claims[0].metric, "primary");
    }

    #[test]
    fn rejects_unknown_keys_and_identical_sides() {
        let bad = "[[claim]]\nid='x'\ntitle='t'\nsource='s'\nsource_figure='f'\nscenario='a'\ndirection='up'\nmin_effect=1.0\nbaseline={}\ncontender={}\n";
        let e = Claim::parse_file(bad, "bad.toml").unwrap_err().to_string();
        assert!(e.contains("bad.toml") && e.contains("direction"), "{e}");
        let same = bad.replace("'up'", "'higher'");
        let e = Claim::parse_file(&same, "same.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("identical"), "{e}");
    }
}
