//! A claim's sides as the configurations ("arms") a round runs: each side's trial spec, its
//! label, and what the claim requires of the machine that this one lacks.

use std::collections::BTreeMap;

use crate::claims::claim::{Claim, ResolvedSide, Role};
use crate::run::fork::Catalog;
use crate::run::result::TrialSpec;
use crate::run::runner::{param_product, trial_spec};
use crate::run::settings::{Mode, available_cores, resolve_threads};

/// The environment variable that tells the two sides of an A/A claim apart (`a`, `b`); the
/// scenario never reads it.
pub const AA_SIDE: &str = "CRITSEC_AA_SIDE";

/// The trial spec of one side of a claim: its parameters over the scenario's first defaults.
pub(super) fn side_spec(catalog: &Catalog, claim: &Claim, role: Role) -> Result<TrialSpec, String> {
    let ResolvedSide {
        scenario: scenario_name,
        params,
        threads,
        env,
    } = claim.resolved(role);
    let scenario = catalog
        .find(&scenario_name)
        .ok_or_else(|| format!("unknown scenario `{scenario_name}`"))?;
    let mut overrides: BTreeMap<String, Vec<String>> = params
        .0
        .iter()
        .map(|(k, v)| (k.clone(), vec![v.clone()]))
        .collect();
    for p in scenario.params() {
        overrides
            .entry(p.name.to_string())
            .or_insert_with(|| p.defaults.iter().take(1).cloned().collect());
    }
    let params = param_product(scenario, &overrides)
        .map_err(|e| e.to_string())?
        .into_iter()
        .next()
        .ok_or("the claim selects no parameter combination")?;
    let threads = resolve_threads(&threads).map_err(|e| e.to_string())?;
    let mut env: Vec<(String, String)> = env.into_iter().collect();
    if claim.aa {
        // Two processes of one configuration: the marker keeps them two arms (arms that are
        // equal are measured once), with values of the same length on both sides.
        let side = match role {
            Role::Baseline => "a",
            Role::Contender => "b",
        };
        env.push((AA_SIDE.to_string(), side.to_string()));
    }
    Ok(trial_spec(
        scenario,
        params,
        threads,
        Mode::Throughput,
        &env,
    ))
}

/// A side's label: scenario, parameters and threads.
pub(crate) fn label(spec: &TrialSpec) -> String {
    format!("{} [{}] t={}", spec.scenario, spec.params, spec.threads)
}

/// What the claim requires that this machine lacks, if anything.
pub(super) fn unmet_requirement(claim: &Claim, specs: [&TrialSpec; 2]) -> Option<String> {
    let cores = available_cores();
    if let Some(need) = claim.requires.cores
        && cores < need
    {
        return Some(format!(
            "needs at least {need} cores; this machine has {cores}"
        ));
    }
    if claim.requires.threads_within_cores {
        let threads = specs.iter().map(|s| s.threads).max().unwrap_or(1);
        if threads > cores {
            return Some(format!(
                "needs every side's threads ({threads}) within the cores ({cores}), so that blocked time can show"
            ));
        }
    }
    None
}
