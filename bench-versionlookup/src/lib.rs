//! bench-versionlookup: critsec scenarios and claims for the versionlookup system.
//!
//! Two scenarios: `versionlookup/lookup` ([`LookupScenario`]: lookups only, against a prepared
//! index of a chosen segment count) and `versionlookup/index` ([`IndexScenario`]: end-to-end
//! indexing with Rally's 25% conflict workload, or auto ids as the no-lookup ceiling). Both
//! verify versions before they count, and report map gets, thread-local gets and term seeks per
//! operation as secondary metrics, the counts PR #19856 is about.

#![deny(missing_docs)]

pub mod counters;
pub mod index;
pub mod lookup;
pub mod setup;

#[cfg(test)]
mod mutants;

use critsec_harness::{Claim, ClaimError, Scenario};

pub use index::IndexScenario;
pub use lookup::LookupScenario;

/// Every scenario of this crate.
pub fn scenarios() -> Vec<Box<dyn Scenario>> {
    vec![Box::new(LookupScenario), Box::new(IndexScenario)]
}

/// The claims declared in `claims.toml`.
pub fn claims() -> Result<Vec<Claim>, ClaimError> {
    Claim::parse_file(
        include_str!("../claims.toml"),
        "bench-versionlookup/claims.toml",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_parse_and_name_valid_scenarios_and_parameters() {
        let claims = claims().unwrap();
        assert_eq!(claims.len(), 4);
        critsec_harness::claims::check_claim_file(scenarios(), &claims).unwrap();
    }
}
