//! The scenarios and claims this binary knows: the harness self-tests and the four bench crates.

use critsec_harness::run::selftest;
use critsec_harness::{Catalog, Claim, ClaimError};

/// Every scenario, self-tests first, then one bench crate after another.
pub fn catalog() -> Catalog {
    let mut all = selftest::scenarios();
    all.extend(bench_registry::scenarios());
    all.extend(bench_versionlookup::scenarios());
    all.extend(bench_replication::scenarios());
    all.extend(bench_parser::scenarios());
    Catalog::new(all)
}

/// Every claim of the four bench crates.
pub fn claims() -> Result<Vec<Claim>, ClaimError> {
    let mut all = bench_registry::claims()?;
    all.extend(bench_versionlookup::claims()?);
    all.extend(bench_replication::claims()?);
    all.extend(bench_parser::claims()?);
    Ok(all)
}
