//! Checks that a claim can run here: its sides name known scenarios, parameters and valid
//! values; a bench crate's own claims set every parameter of their scenarios.

use crate::claims::claim::{Claim, ResolvedSide, Role};
use crate::run::fork::Catalog;
use crate::run::settings::resolve_threads;

/// Why a claim cannot be run: it names something its scenario does not have.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InvalidClaim {
    /// The scenario does not exist.
    #[error("claim `{claim}` names unknown scenario `{scenario}`")]
    UnknownScenario {
        /// The claim.
        claim: String,
        /// The scenario it names.
        scenario: String,
    },
    /// A side's thread spec is malformed.
    #[error("claim `{claim}`: {message}")]
    Threads {
        /// The claim.
        claim: String,
        /// What is wrong with the spec.
        message: String,
    },
    /// A side sets a parameter the scenario does not have.
    #[error("claim `{claim}`: scenario {scenario} has no parameter `{param}`")]
    UnknownParam {
        /// The claim.
        claim: String,
        /// The scenario.
        scenario: String,
        /// The parameter.
        param: String,
    },
    /// A side sets a parameter to a value it does not accept.
    #[error("claim `{claim}`: `{value}` is not a valid `{param}` ({valid})")]
    BadValue {
        /// The claim.
        claim: String,
        /// The parameter.
        param: String,
        /// The value given.
        value: String,
        /// The accepted values, comma-separated.
        valid: String,
    },
    /// The metric is empty.
    #[error("claim `{claim}`: empty metric")]
    EmptyMetric {
        /// The claim.
        claim: String,
    },
    /// A side leaves a parameter unset (only in a bench crate's own claims file).
    #[error("claim `{claim}` leaves `{param}` of {scenario} unset")]
    Unset {
        /// The claim.
        claim: String,
        /// The scenario.
        scenario: String,
        /// The parameter.
        param: String,
    },
}

/// Checks that a claim's sides name known scenarios, known parameters and valid values.
pub fn validate_claim(catalog: &Catalog, claim: &Claim) -> Result<(), InvalidClaim> {
    if claim.is_command() {
        return Ok(());
    }
    let id = || claim.id.clone();
    for role in Role::BOTH {
        let ResolvedSide {
            scenario,
            params,
            threads,
            ..
        } = claim.resolved(role);
        let s = catalog
            .find(&scenario)
            .ok_or_else(|| InvalidClaim::UnknownScenario {
                claim: id(),
                scenario: scenario.clone(),
            })?;
        resolve_threads(&threads).map_err(|e| InvalidClaim::Threads {
            claim: id(),
            message: e.to_string(),
        })?;
        let known: Vec<_> = s.params();
        for (k, v) in &params.0 {
            let p =
                known
                    .iter()
                    .find(|p| p.name == k)
                    .ok_or_else(|| InvalidClaim::UnknownParam {
                        claim: id(),
                        scenario: scenario.clone(),
                        param: k.clone(),
                    })?;
            if !p.accepted.is_empty() && !p.accepted.contains(v) {
                return Err(InvalidClaim::BadValue {
                    claim: id(),
                    param: k.clone(),
                    value: v.clone(),
                    valid: p.accepted.join(", "),
                });
            }
        }
        if claim.metric != "primary" && claim.metric.is_empty() {
            return Err(InvalidClaim::EmptyMetric { claim: id() });
        }
    }
    Ok(())
}

/// Checks a bench crate's claims against its scenarios: each claim is valid (see
/// [`validate_claim`]) and sets every parameter of its scenario, so that each side runs exactly
/// one configuration that a reader can see in `claims.toml`. Bench crates call this in a test.
pub fn check_claim_file(
    scenarios: Vec<Box<dyn crate::Scenario>>,
    claims: &[Claim],
) -> Result<(), InvalidClaim> {
    let catalog = Catalog::new(scenarios);
    for claim in claims {
        validate_claim(&catalog, claim)?;
        for role in Role::BOTH {
            let ResolvedSide {
                scenario, params, ..
            } = claim.resolved(role);
            let s = catalog.find(&scenario).expect("validated above");
            for p in s.params() {
                if !params.0.contains_key(p.name) {
                    return Err(InvalidClaim::Unset {
                        claim: claim.id.clone(),
                        scenario: scenario.clone(),
                        param: p.name.to_string(),
                    });
                }
            }
        }
    }
    Ok(())
}
