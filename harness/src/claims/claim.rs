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
//! requires = { cores = 8 }    # optional: what the machine must have (else NOT TESTABLE HERE)
//! control = "OTHER-CLAIM"     # optional: a claim that must reproduce for this one to count
//! ```
//!
//! Two kinds: `kind = "ratio"` (the default) tests contender / baseline of the metric against
//! `direction` and `min_effect`; `kind = "count"` tests "none against some": the contender has
//! zero of the counted metric in every replicate and the baseline at least `k` in every one
//! (`exposure` names the metric that counts operations, for a rate per 1,000 of them).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::direction::Direction;

use crate::claims::command::{CommandSide, Reader};
use crate::format::jmh::JMH_MODES;
use crate::run::scenario::Params;

/// One side of a claim: parameter values and environment overrides on top of the shared ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Side {
    /// Parameter values for this side (merged over the claim's shared `params`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// Environment variables set in this side's forks.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A different scenario for this side, when the two sides are different scenarios.
    #[serde(default)]
    pub scenario: Option<String>,
    /// A different thread count for this side (e.g. scaling claims: 1 vs 2 threads).
    #[serde(default)]
    pub threads: Option<String>,
    /// A program to run instead of a scenario (a reviewer's own benchmark); then the side sets
    /// nothing else but `revision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSide>,
    /// The git revision whose build runs this side (anything `git rev-parse` accepts, or
    /// `working-tree` for the working tree as it is, uncommitted changes included): its
    /// `critsec` runs the claim's scenario, or its `cargo_bench` target the command. Both sides
    /// name one or neither does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

/// What a claim tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// contender / baseline of the metric against `direction` and `min_effect`.
    #[default]
    Ratio,
    /// None against some: zero in every contender replicate, at least `k` in every baseline one.
    Count,
}

/// What a claim needs from the machine to be testable at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// At least this many cores available to the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<usize>,
    /// Every side's thread count at most the cores, so that blocked time can show (a CPU
    /// utilisation claim is forced to ~100% on both sides by oversubscription).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub threads_within_cores: bool,
}

impl Requirements {
    /// Whether it requires nothing.
    fn is_none(&self) -> bool {
        *self == Requirements::default()
    }
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
    /// The scenario both sides run (unless a side names its own); empty for command sides.
    #[serde(default)]
    pub scenario: String,
    /// Command sides: the benchmark both must report (JMH's name, or a label for lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<String>,
    /// Command sides reading JMH results: the mode of the entry both read (`thrpt`, `avgt`,
    /// `sample`, `ss`), for a result that holds the benchmark in several (`-bm thrpt,avgt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// `primary`, or the name of a secondary metric.
    #[serde(default = "primary")]
    pub metric: String,
    /// What the claim tests: a ratio (the default) or a count.
    #[serde(default)]
    pub kind: ClaimKind,
    /// Ratio claims: expected direction of contender / baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// Ratio claims: the minimum effect, the ratio bound the interval must clear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_effect: Option<f64>,
    /// Ratio claims: the band around the bound within which the effect counts as equal to it,
    /// a factor either way (`1.05`: [bound / 1.05, bound × 1.05]; [`DEFAULT_TOLERANCE`] when
    /// absent). Stated with the claim, before measuring: an interval that straddles the bound
    /// but lies inside the band is AT THE BOUND.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// Count claims: the least count the baseline must show in every replicate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u64>,
    /// Count claims: the metric that counts operations per replicate (for a rate per 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure: Option<String>,
    /// What the machine must have for the claim to be testable.
    #[serde(default, skip_serializing_if = "Requirements::is_none")]
    pub requires: Requirements,
    /// A claim that must reproduce on this machine for this one's verdict to count (a positive
    /// control for a claim of "no effect").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
    /// Thread count for both sides, as `-t` accepts it.
    #[serde(default = "one")]
    pub threads: String,
    /// Parameters shared by both sides.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// The "before" configuration.
    pub baseline: Side,
    /// The "after" configuration.
    pub contender: Side,
    /// Why the two sides are comparable where they do not do identical work.
    #[serde(default)]
    pub note: Option<String>,
    /// An A/A claim: both sides are the same configuration on purpose, run as separate
    /// processes (or invocations), to measure the machine's noise; its interval should cover 1.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aa: bool,
}

/// The tolerance of a ratio claim that states none: x/÷ 1.05, the few percent within which two
/// JMH scores are usually called equal.
pub const DEFAULT_TOLERANCE: f64 = 1.05;

/// What a ratio claim tests its interval against: the bound in its direction, and the band of
/// its tolerance around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// Which way the ratio is claimed to go.
    pub direction: Direction,
    /// The bound.
    pub min_effect: f64,
    /// The band's factor either way (1: no band).
    pub tolerance: f64,
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
    claim: Vec<toml::Value>,
}

/// A claims file as written: what [`Claim::file_text`] serialises.
#[derive(Serialize)]
struct ClaimFileOut<'a> {
    claim: &'a [Claim],
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

/// The first cycle of positive controls among `claims`, as the ids along it, the first
/// repeated at the end (`a -> b -> a`); `None` when every chain of controls ends.
fn control_cycle(claims: &[Claim]) -> Option<Vec<&str>> {
    let control_of = |id: &str| {
        claims
            .iter()
            .find(|c| c.id == id)
            .and_then(|c| c.control.as_deref())
    };
    // Each claim has at most one control: follow it from every claim until the chain ends or
    // comes back to a claim on it.
    for start in claims {
        let mut path: Vec<&str> = vec![&start.id];
        while let Some(next) = control_of(path[path.len() - 1]) {
            if let Some(at) = path.iter().position(|&p| p == next) {
                let mut cycle = path.split_off(at);
                cycle.push(next);
                return Some(cycle);
            }
            path.push(next);
        }
    }
    None
}

impl Claim {
    /// Parses a claims file; `origin` names it in errors, and each claim's error names the
    /// claim.
    pub fn parse_file(text: &str, origin: &str) -> Result<Vec<Claim>, ClaimError> {
        let file: ClaimFile = toml::from_str(text).map_err(|e| ClaimError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        let mut claims: Vec<Claim> = Vec::with_capacity(file.claim.len());
        for (i, value) in file.claim.into_iter().enumerate() {
            let id = value
                .get("id")
                .and_then(|v| v.as_str())
                .map(String::from)
                .unwrap_or_else(|| format!("#{} (no id)", i + 1));
            let invalid = |message: String| ClaimError::Invalid {
                id: id.clone(),
                origin: origin.to_string(),
                message,
            };
            let c: Claim = value
                .try_into()
                .map_err(|e: toml::de::Error| invalid(e.message().to_string()))?;
            c.check().map_err(invalid)?;
            if claims.iter().any(|o| o.id == c.id) {
                return Err(invalid("the id is used twice".into()));
            }
            claims.push(c);
        }
        for c in &claims {
            if let Some(control) = &c.control
                && !claims.iter().any(|o| &o.id == control)
            {
                return Err(ClaimError::Invalid {
                    id: c.id.clone(),
                    origin: origin.to_string(),
                    message: format!("its control `{control}` is not a claim of this file"),
                });
            }
        }
        if let Some(cycle) = control_cycle(&claims) {
            return Err(ClaimError::Invalid {
                id: cycle[0].to_string(),
                origin: origin.to_string(),
                message: format!(
                    "its positive controls form a cycle: {}; a control must reproduce before the claims that need it",
                    cycle.join(" -> ")
                ),
            });
        }
        Ok(claims)
    }

    /// `claims` as a claims file that [`Claim::parse_file`] reads back as they are.
    pub fn file_text(claims: &[Claim]) -> String {
        toml::to_string(&ClaimFileOut { claim: claims }).expect("a claim serialises to TOML")
    }

    /// The claim's own consistency: the fields its kind needs, and no others.
    fn check(&self) -> Result<(), String> {
        match self.kind {
            ClaimKind::Ratio => {
                if self.direction.is_none() {
                    return Err("a ratio claim needs `direction` (higher or lower)".into());
                }
                match self.min_effect {
                    Some(m) if m.is_finite() && m > 0.0 => {}
                    Some(_) => return Err("min_effect must be a positive ratio".into()),
                    None => return Err("a ratio claim needs `min_effect`".into()),
                }
                if self.k.is_some() || self.exposure.is_some() {
                    return Err(
                        "`k` and `exposure` belong to count claims (kind = \"count\")".into(),
                    );
                }
                if let Some(t) = self.tolerance
                    && !(t.is_finite() && t > 1.0 && t <= 2.0)
                {
                    return Err(format!(
                        "`tolerance` is a factor above 1 and at most 2 (1.05: within 5% of the bound either way), not {t}"
                    ));
                }
            }
            ClaimKind::Count => {
                match self.k {
                    Some(k) if k >= 1 => {}
                    Some(_) => return Err("`k` must be at least 1".into()),
                    None => {
                        return Err("a count claim needs `k`, the least count the baseline shows per replicate".into());
                    }
                }
                if self.direction.is_some() || self.min_effect.is_some() || self.tolerance.is_some()
                {
                    return Err("a count claim has no `direction`, `min_effect` or `tolerance`: the contender must show none".into());
                }
            }
        }
        match (&self.baseline.revision, &self.contender.revision) {
            (Some(_), None) | (None, Some(_)) => {
                return Err("both sides name a `revision`, or neither does: one build against another, or both this one".into());
            }
            _ => {}
        }
        for side in [&self.baseline, &self.contender] {
            if let Some(c) = &side.command
                && c.cargo_bench.is_some() != side.revision.is_some()
            {
                return Err("a command side built from its `revision` runs a `cargo_bench` target; a `cargo_bench` side names the `revision` it is built from".into());
            }
        }
        match (&self.baseline.command, &self.contender.command) {
            (Some(a), Some(b)) => {
                a.check()?;
                b.check()?;
                let names_one = |c: &CommandSide| matches!(c.reader, Reader::Jmh | Reader::Lines);
                if self.benchmark.is_none() && !(names_one(a) && names_one(b)) {
                    return Err("a `criterion` or `divan` side reads one benchmark: name its id in the claim's `benchmark`".into());
                }
                let plain =
                    |s: &Side| s.env.is_empty() && s.scenario.is_none() && s.threads.is_none();
                if !plain(&self.baseline) || !plain(&self.contender) || !self.scenario.is_empty() {
                    return Err("a command side sets only `command` (its program, args, env, cwd, reader), `revision` and, for JMH, `params`; the claim names no scenario".into());
                }
                if let Some(mode) = &self.mode {
                    if !JMH_MODES.contains(&mode.as_str()) {
                        return Err(format!(
                            "`mode = \"{mode}\"` is not a JMH mode; JMH's are {}",
                            JMH_MODES.join(", ")
                        ));
                    }
                    if a.reader != Reader::Jmh || b.reader != Reader::Jmh {
                        return Err(
                            "`mode` selects a JMH entry; a side with `output = \"lines\"` has none"
                                .into(),
                        );
                    }
                }
                // Params pick one @Param combination out of a JMH result; lines have none.
                for (side, command) in [(&self.baseline, a), (&self.contender, b)] {
                    let selects = !side.params.is_empty() || !self.params.is_empty();
                    if selects && command.reader != Reader::Jmh {
                        return Err("`params` select a JMH entry's @Param values; a side with `output = \"lines\"` has none".into());
                    }
                }
            }
            (None, None) => {
                if self.mode.is_some() {
                    return Err("`mode` selects the JMH entry of command sides; a scenario's mode is the run's (`-bm`)".into());
                }
                let named = |s: &Side| s.scenario.is_some() || !self.scenario.is_empty();
                if !named(&self.baseline) || !named(&self.contender) {
                    return Err("a claim needs a `scenario`, or a `command` on both sides".into());
                }
            }
            _ => return Err("either both sides are commands or neither is".into()),
        }
        if self.control.as_deref() == Some(self.id.as_str()) {
            return Err("a claim cannot be its own control".into());
        }
        match (self.aa, self.baseline == self.contender) {
            (false, true) => {
                return Err(
                    "baseline and contender are identical (set `aa = true` for an A/A claim)"
                        .into(),
                );
            }
            (true, false) => {
                return Err("an A/A claim (`aa = true`) runs the same side twice: baseline and contender must be identical".into());
            }
            _ => {}
        }
        Ok(())
    }

    /// What a ratio claim tests its interval against; `None` for a count claim.
    pub fn bound(&self) -> Option<Bound> {
        Some(Bound {
            direction: self.direction?,
            min_effect: self.min_effect?,
            tolerance: self.tolerance.unwrap_or(DEFAULT_TOLERANCE),
        })
    }

    /// Whether the sides are programs rather than scenarios.
    pub fn is_command(&self) -> bool {
        self.baseline.command.is_some()
    }

    /// The claimed effect in words: `>= 1.05`, `<= 0.5`, or `0 vs >= 1`.
    pub fn expected(&self) -> String {
        match (self.kind, self.direction, self.min_effect) {
            (ClaimKind::Count, _, _) => format!("0 vs >= {}", self.k.unwrap_or(1)),
            (_, Some(Direction::Higher), Some(m)) => format!(">= {m}"),
            (_, Some(Direction::Lower), Some(m)) => format!("<= {m}"),
            _ => "-".into(),
        }
    }

    /// One side as written in the claim.
    pub fn side(&self, role: Role) -> &Side {
        match role {
            Role::Baseline => &self.baseline,
            Role::Contender => &self.contender,
        }
    }

    /// One side with the claim's shared settings under its own: what a trial of it runs.
    pub fn resolved(&self, role: Role) -> ResolvedSide {
        let side = self.side(role);
        let mut params = self.params.clone();
        params.extend(side.params.clone());
        ResolvedSide {
            scenario: side
                .scenario
                .clone()
                .unwrap_or_else(|| self.scenario.clone()),
            params: Params(params),
            threads: side.threads.clone().unwrap_or_else(|| self.threads.clone()),
            env: side.env.clone(),
        }
    }
}

/// Which side of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The "before" the claim measures against.
    Baseline,
    /// The "after" the claim is about.
    Contender,
}

impl Role {
    /// Both, baseline first.
    pub const BOTH: [Role; 2] = [Role::Baseline, Role::Contender];

    /// `baseline` or `contender`, as messages name the side.
    pub fn name(self) -> &'static str {
        match self {
            Role::Baseline => "baseline",
            Role::Contender => "contender",
        }
    }
}

/// A side with the claim's shared settings applied.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedSide {
    /// The scenario it runs.
    pub scenario: String,
    /// Its parameters: the claim's, then the side's own.
    pub params: Params,
    /// Its thread spec, as `-t` takes it.
    pub threads: String,
    /// Environment variables of its forks.
    pub env: BTreeMap<String, String>,
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
        let ResolvedSide {
            scenario,
            params,
            threads,
            env,
        } = claims[0].resolved(Role::Contender);
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
        assert!(
            e.contains("claim `x` in bad.toml") && e.contains("expected `higher` or `lower`"),
            "{e}"
        );
        let same = bad.replace("'up'", "'higher'");
        let e = Claim::parse_file(&same, "same.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("identical"), "{e}");
    }

    #[test]
    fn params_on_a_command_side_select_a_jmh_entry_and_nothing_on_lines() {
        let side = |output: &str, imp: &str| {
            format!(
                "{{command={{program='java', args=['-rff', '{{result}}'], output='{output}'}}, params={{impl='{imp}'}}}}"
            )
        };
        let claim = |output: &str| {
            format!(
                "[[claim]]\nid='p'\ntitle='t'\nsource='s'\nsource_figure='f'\ndirection='higher'\nmin_effect=1.05\nbaseline={}\ncontender={}\n",
                side(output, "chm"),
                side(output, "cow")
            )
        };
        let c = &Claim::parse_file(&claim("jmh"), "p.toml").unwrap()[0];
        assert_eq!(c.resolved(Role::Contender).params.0["impl"], "cow");
        let e = Claim::parse_file(&claim("lines"), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`params` select a JMH entry"), "{e}");
    }

    #[test]
    fn an_aa_claim_has_identical_sides_and_no_other_claim_does() {
        let aa = "[[claim]]\nid='x-aa'\ntitle='t'\nsource='s'\nsource_figure='f'\nscenario='a'\ndirection='higher'\nmin_effect=1.05\naa=true\nbaseline={}\ncontender={}\n";
        let claims = Claim::parse_file(aa, "aa.toml").unwrap();
        assert!(claims[0].aa);
        let differing = aa.replace("contender={}", "contender={params={p='2'}}");
        let e = Claim::parse_file(&differing, "aa.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be identical"), "{e}");
    }

    const COUNT: &str = "[[claim]]\nid='c'\ntitle='t'\nsource='s'\nsource_figure='f'\nscenario='a'\nmetric='timeouts'\nkind='count'\nk=1\nbaseline={params={p='1'}}\ncontender={params={p='2'}}\n";

    #[test]
    fn count_claims_and_requirements_parse() {
        let claims = Claim::parse_file(COUNT, "c.toml").unwrap();
        assert_eq!(claims[0].kind, ClaimKind::Count);
        assert_eq!(claims[0].expected(), "0 vs >= 1");
        let req = COUNT.replace(
            "k=1\n",
            "k=1\nrequires={cores=8, threads_within_cores=true}\n",
        );
        let c = &Claim::parse_file(&req, "c.toml").unwrap()[0];
        assert_eq!(c.requires.cores, Some(8));
        assert!(c.requires.threads_within_cores);
    }

    #[test]
    fn malformed_kinds_requirements_and_controls_name_the_claim_and_the_valid_set() {
        let err = |text: &str| Claim::parse_file(text, "c.toml").unwrap_err().to_string();
        let e = err(&COUNT.replace("kind='count'", "kind='median'"));
        assert!(
            e.contains("claim `c` in c.toml") && e.contains("expected `ratio` or `count`"),
            "{e}"
        );
        let e = err(&COUNT.replace("k=1\n", ""));
        assert!(e.contains("claim `c`") && e.contains("needs `k`"), "{e}");
        let e = err(&COUNT.replace("k=1\n", "k=1\nrequires={gpus=1}\n"));
        assert!(
            e.contains("claim `c`") && e.contains("gpus") && e.contains("cores"),
            "{e}"
        );
        let e = err(&COUNT.replace("k=1\n", "k=1\ncontrol='nope'\n"));
        assert!(e.contains("control `nope`"), "{e}");
        let e = err(&COUNT.replace("k=1\n", "k=1\ndirection='higher'\n"));
        assert!(e.contains("no `direction`"), "{e}");
    }

    #[test]
    fn a_cycle_of_controls_is_invalid_and_named() {
        let claim = |id: &str, control: &str| {
            COUNT
                .replace("id='c'", &format!("id='{id}'"))
                .replace("k=1\n", &format!("k=1\ncontrol='{control}'\n"))
        };
        let err = |text: &str| Claim::parse_file(text, "c.toml").unwrap_err().to_string();
        let e = err(&(claim("a", "b") + &claim("b", "a")));
        assert!(e.contains("cycle") && e.contains("a -> b -> a"), "{e}");
        let three = claim("x", "y") + &claim("y", "z") + &claim("z", "y") + &claim("w", "x");
        let e = err(&three);
        assert!(e.contains("claim `y`") && e.contains("y -> z -> y"), "{e}");
        let e = err(&(claim("p", "q") + &claim("q", "r") + &claim("r", "p")));
        assert!(e.contains("p -> q -> r -> p"), "{e}");
        // A chain is no cycle.
        let chain =
            claim("top", "mid") + &claim("mid", "base") + &COUNT.replace("id='c'", "id='base'");
        assert_eq!(Claim::parse_file(&chain, "c.toml").unwrap().len(), 3);
    }

    /// A command claim whose contender's `timeout_s` is `timeout`.
    fn command_claim(timeout: &str) -> String {
        format!(
            "[[claim]]\nid='cmd'\ntitle='t'\nsource='s'\nsource_figure='f'\ndirection='higher'\nmin_effect=1.5\nbaseline={{command={{program='a', output='lines'}}}}\ncontender={{command={{program='b', output='lines', timeout_s={timeout}}}}}\n"
        )
    }

    #[test]
    fn a_time_limit_beyond_any_clock_is_invalid_when_the_file_is_read() {
        let e = Claim::parse_file(&command_claim("9223372036854775807"), "c.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("claim `cmd` in c.toml")
                && e.contains("timeout_s")
                && e.contains("9223372036854775807"),
            "{e}"
        );
        assert!(Claim::parse_file(&command_claim("0"), "c.toml").is_err());
        assert!(Claim::parse_file(&command_claim("3600"), "c.toml").is_ok());
    }
}
