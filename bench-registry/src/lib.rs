//! bench-registry: critsec scenarios and claims for the core registry (SOLR-16497).
//!
//! Three scenarios run every registry strategy (`mutex`, `rwlock`, `jdk-rwlock`, `snapshot`):
//! `registry/get_core_micro` is the PR reviewer's JMH micro-benchmark (lookup + open, nothing
//! else), `registry/request_mix` is the production call mix from the same thread, with the
//! logging-context work inside the critical section and an optional writer, and
//! `registry/transient_cores` sends requests to more transient cores than the transient cache
//! holds, so loads and evictions run on the hot path. The claims in
//! `claims.toml` state what the PR thread measured and what our snapshot strategy must beat.
//! Every op verifies its answer, and every trial verifies that reference counts are back at the
//! registry's own reference and that retired cores closed exactly once.

#![deny(missing_docs)]

mod get_core_micro;
mod registry_setup;
mod request_mix;
mod transient_cores;

#[cfg(test)]
mod mutants;

pub use get_core_micro::GetCoreMicro;
pub use registry_setup::{
    RegistrySetup, SolrMode, build as build_registry, verify as verify_registry,
};
pub use request_mix::RequestMix;
pub use transient_cores::TransientCores;

use critsec_harness::{Claim, ClaimError, Scenario};
use critsec_registry::Mdc;

/// Every scenario of this crate.
pub fn scenarios() -> Vec<Box<dyn Scenario>> {
    vec![
        Box::new(GetCoreMicro),
        Box::new(RequestMix),
        Box::new(TransientCores),
    ]
}

/// The claims declared in `claims.toml`.
pub fn claims() -> Result<Vec<Claim>, ClaimError> {
    Claim::parse_file(include_str!("../claims.toml"), "bench-registry/claims.toml")
}

/// Checks that the calling worker thread closed every core it opened: each open deepens the
/// thread's logging-context depth by one and each close takes it back, so a depth of 0 between
/// ops means opens == closes on this thread.
fn check_thread_balanced() -> Result<(), String> {
    match Mdc::any_depth() {
        0 => Ok(()),
        d => Err(format!("this thread holds {d} more opens than closes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_name_real_scenarios_with_valid_parameters() {
        let claims = claims().unwrap();
        let ids: Vec<&str> = claims.iter().map(|c| c.id.as_str()).collect();
        for id in ["SOLR-16497-micro", "SOLR-16497-load", "SOLR-16497-load-cpu"] {
            assert!(ids.contains(&id), "missing claim {id}");
        }
        assert!(ids.iter().any(|id| id.starts_with("registry-snapshot")));
        critsec_harness::claims::check_claim_file(scenarios(), &claims).unwrap();
    }
}
