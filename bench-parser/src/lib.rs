//! bench-parser: critsec scenarios and claims for the parser system.
//!
//! Two scenarios: [`parse::ParseScenario`] (`parser/parse`), one query parse per operation over a
//! class of the [`corpus`], for our two strategies and tantivy's query grammar as the peer; and
//! [`mixed::MixedLoadScenario`] (`parser/mixed_load`), simple and complex parses on separate
//! threads at once. The
//! claims (`claims.toml`) restate the JDWP post (lookahead by exception collapses under a debugging
//! agent) and our own target against tantivy.

#![deny(missing_docs)]

pub mod corpus;
pub mod mixed;
pub mod parse;
pub mod peer;

use critsec_harness::{Claim, ClaimError, Scenario};

/// Every scenario of this crate.
pub fn scenarios() -> Vec<Box<dyn Scenario>> {
    vec![
        Box::new(parse::ParseScenario),
        Box::new(mixed::MixedLoadScenario),
    ]
}

/// The claims declared in `claims.toml`.
pub fn claims() -> Result<Vec<Claim>, ClaimError> {
    Claim::parse_file(include_str!("../claims.toml"), "bench-parser/claims.toml")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every claim names this crate's scenario and only parameter values it accepts.
    #[test]
    fn claims_are_valid_for_their_scenario() {
        let claims = claims().expect("claims.toml parses");
        let ids: Vec<&str> = claims.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.iter().any(|i| i.starts_with("LUCENE-jdwp")), "{ids:?}");
        assert!(
            ids.iter().any(|i| i.starts_with("parser-vs-tantivy")),
            "{ids:?}"
        );
        critsec_harness::claims::check_claim_file(scenarios(), &claims).unwrap();
    }
}
