//! bench-replication: critsec scenarios and claims for the replication system (Infinispan
//! DIST-SYNC writes: lock forwarding vs Bela Ban's key queue vs the Triangle).
//!
//! One scenario, [`ispn_perf::IspnPerf`] (`replication/ispn_perf`), replays IspnPerfTest's
//! workload through either driver of `critsec_replication`; `claims.toml` holds the claims
//! of Bela Ban's 2014 post, tested in the simulation.

#![deny(missing_docs)]

pub mod ispn_perf;
pub mod sim_speed;

use critsec_harness::{Claim, ClaimError, Scenario};

/// Every scenario of this crate; `driver=net` trials cannot start node processes of their own
/// (see [`scenarios_hosting_nodes`]).
pub fn scenarios() -> Vec<Box<dyn Scenario>> {
    vec![Box::new(ispn_perf::IspnPerf::default())]
}

/// Every scenario of this crate, `driver=net` trials starting their node processes with
/// `nodes` (a program whose command serves [`ispn_perf::run_node`]), where there is one.
pub fn scenarios_hosting_nodes(nodes: Option<ispn_perf::NodeProgram>) -> Vec<Box<dyn Scenario>> {
    match nodes {
        Some(nodes) => vec![Box::new(ispn_perf::IspnPerf::hosting_nodes(nodes))],
        None => scenarios(),
    }
}

/// The claims declared in `claims.toml`.
pub fn claims() -> Result<Vec<Claim>, ClaimError> {
    Claim::parse_file(
        include_str!("../claims.toml"),
        "bench-replication/claims.toml",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_name_the_scenario_with_every_parameter_set() {
        let claims = claims().unwrap();
        assert!(claims.iter().any(|c| c.id.starts_with("ISPN-dist-sync")));
        assert!(claims.iter().any(|c| c.id.starts_with("ISPN-numowners1")));
        critsec_harness::claims::check_claim_file(scenarios(), &claims).unwrap();
    }

    /// `net-claims.toml` (run with `critsec reproduce --claims`) names the scenario with every
    /// parameter set, as the crate's own claims do, and compares the simulation with the net
    /// driver and nothing else.
    #[test]
    fn the_net_claims_compare_the_simulation_with_the_net_driver() {
        let claims = Claim::parse_file(
            include_str!("../net-claims.toml"),
            "bench-replication/net-claims.toml",
        )
        .unwrap();
        assert_eq!(claims.len(), 14);
        for c in &claims {
            assert!(c.id.contains("-net-"), "{}", c.id);
            assert_eq!(
                c.baseline.params.get("driver").map(String::as_str),
                Some("sim")
            );
            assert_eq!(
                c.contender.params.get("driver").map(String::as_str),
                Some("net")
            );
        }
        critsec_harness::claims::check_claim_file(scenarios(), &claims).unwrap();
    }
}
