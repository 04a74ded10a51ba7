//! bench-replication: critsec scenarios and claims for the replication system.

#![deny(missing_docs)]

use critsec_harness::{Claim, ClaimError, Scenario};

/// Every scenario of this crate.
pub fn scenarios() -> Vec<Box<dyn Scenario>> {
    Vec::new()
}

/// The claims declared in `claims.toml`.
pub fn claims() -> Result<Vec<Claim>, ClaimError> {
    Claim::parse_file(
        include_str!("../claims.toml"),
        "bench-replication/claims.toml",
    )
}
