//! The scenarios and claims this binary knows: the harness self-tests and the four bench crates.

use bench_replication::ispn_perf::NodeProgram;
use critsec_harness::selftest;
use critsec_harness::{Catalog, Claim, ClaimError};

/// Every scenario, self-tests first, then one bench crate after another.
pub fn catalog() -> Catalog {
    let mut all = selftest::scenarios();
    all.extend(bench_registry::scenarios());
    all.extend(bench_versionlookup::scenarios());
    all.extend(bench_replication::scenarios_hosting_nodes(node_program()));
    all.extend(bench_parser::scenarios());
    Catalog::new(all)
}

/// How a `driver=net` trial, in a fork or not, starts its node processes: this binary's hidden
/// `node` command (`cmd/node.rs`).
fn node_program() -> Option<NodeProgram> {
    let exe = std::env::current_exe().ok()?;
    Some(NodeProgram::new(exe, ["node"]))
}

/// Every claim of the four bench crates.
pub fn claims() -> Result<Vec<Claim>, ClaimError> {
    let mut all = bench_registry::claims()?;
    all.extend(bench_versionlookup::claims()?);
    all.extend(bench_replication::claims()?);
    all.extend(bench_parser::claims()?);
    Ok(all)
}

#[cfg(test)]
mod tests {
    use critsec_present::publication::Publication;

    /// Every run of the publication set plans against the catalog (its scenario exists and
    /// takes its parameter values), so a typo fails here and not 10 minutes into
    /// `critsec report --fresh`.
    #[test]
    fn every_publication_run_plans() {
        let publication = Publication::builtin();
        let catalog = super::catalog();
        for run in &publication.runs {
            let specs = publication
                .plan(run, &catalog)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!specs.is_empty(), "{}", run.file);
        }
        let sweep = publication
            .find("replication-pause-sweep")
            .expect("the pause sweep is published");
        let specs = publication.plan(sweep, &catalog).unwrap();
        assert_eq!(specs.len(), 2 * 2 * 5, "protocols x requesters x pauses");
        assert_eq!(publication.run_settings(sweep).warmup_iterations, 0);
    }
}
