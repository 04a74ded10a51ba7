//! A claim's sides as what runs them: the configurations ("arms") a round runs, each side's
//! trial spec in this executable's forks or in those of its revision's build, or the programs
//! of sides that are commands (a `cargo_bench` side's program its revision's build); its label;
//! and what the claim requires of the machine that this one lacks.
//!
//! Two builds run in one round only when they speak the same fork protocol. Builds that speak
//! different ones are refused, both versions named; a build too old to say which it speaks runs
//! its side as whole processes instead (`critsec run ... --json`), each replicate one process
//! of each build, and the verdict says so.

use std::collections::BTreeMap;

use crate::claims::claim::{Claim, ResolvedSide, Role};
use crate::claims::command::{CommandSide, RESULT_PLACEHOLDER, Reader};
use crate::run::fork::Catalog;
use crate::run::result::{Artifact, Build, TrialSpec};
use crate::run::runner::{Launcher, param_product, trial_spec};
use crate::run::settings::{Mode, available_cores, resolve_threads};

use super::settings::PairedSettings;

/// How a claim's sides run.
pub(super) enum Runnable {
    /// As two arms of rounds.
    Arms(Box<[TrialSpec; 2]>),
    /// As invocations of programs: the claim with each side's program resolved, and why a
    /// claim on a scenario runs that way, if it is one.
    Programs(Box<Claim>, Option<String>),
}

/// How `claim` runs with `launcher`'s builds and `settings`.
pub(super) fn runnable(
    launcher: &Launcher,
    claim: &Claim,
    settings: &PairedSettings,
) -> Result<Runnable, String> {
    if claim.is_command() {
        let mut resolved = claim.clone();
        for role in Role::BOTH {
            let side = match role {
                Role::Baseline => &mut resolved.baseline,
                Role::Contender => &mut resolved.contender,
            };
            let (Some(command), Some(revision)) = (&mut side.command, &side.revision) else {
                continue;
            };
            let artifact = command
                .artifact()
                .expect("a revision's command runs its cargo_bench");
            command.program = built(launcher, revision, &artifact)?
                .executable
                .display()
                .to_string();
            command.cargo_bench = None;
            command.package = None;
        }
        return Ok(Runnable::Programs(Box::new(resolved), None));
    }
    let mut specs = [
        side_spec(launcher.catalog(), claim, Role::Baseline)?,
        side_spec(launcher.catalog(), claim, Role::Contender)?,
    ];
    let (Some(a), Some(b)) = (&claim.baseline.revision, &claim.contender.revision) else {
        return Ok(Runnable::Arms(Box::new(specs)));
    };
    let builds = [
        built(launcher, a, &Artifact::Critsec)?,
        built(launcher, b, &Artifact::Critsec)?,
    ];
    match (builds[0].fork_protocol, builds[1].fork_protocol) {
        (Some(x), Some(y)) if x == y => {
            for (spec, build) in specs.iter_mut().zip(builds) {
                spec.build = Some(build.clone());
            }
            Ok(Runnable::Arms(Box::new(specs)))
        }
        (Some(x), Some(y)) => Err(format!(
            "the baseline's build ({}) speaks fork protocol {x} and the contender's ({}) {y}: their forks cannot run in one round",
            builds[0].revision, builds[1].revision
        )),
        _ => {
            let old: Vec<&str> = builds
                .iter()
                .filter(|b| b.fork_protocol.is_none())
                .map(|b| b.revision.as_str())
                .collect();
            let mut programs = claim.clone();
            programs.scenario = String::new();
            programs.benchmark = Some(specs[0].scenario.clone());
            programs.params = BTreeMap::new();
            for (role, (spec, build)) in Role::BOTH.into_iter().zip(specs.iter().zip(builds)) {
                let side = match role {
                    Role::Baseline => &mut programs.baseline,
                    Role::Contender => &mut programs.contender,
                };
                *side = crate::claims::claim::Side {
                    command: Some(whole_process(build, spec, settings)),
                    revision: side.revision.clone(),
                    ..Default::default()
                };
            }
            let note = format!(
                "the build of {} says no fork protocol (it predates it), so each replicate ran both builds as whole processes (`critsec run ... --json`), not as forks in one round",
                old.join(" and ")
            );
            Ok(Runnable::Programs(Box::new(programs), Some(note)))
        }
    }
}

/// The build of `artifact` from `revision` the launcher has, or why there is none.
fn built<'l>(
    launcher: &'l Launcher,
    revision: &str,
    artifact: &Artifact,
) -> Result<&'l Build, String> {
    launcher.build_of(revision, artifact).ok_or_else(|| {
        format!("revision `{revision}` has no build of its {artifact}: build it first (critsec reproduce and ab build what claims name)")
    })
}

/// `build`'s critsec running `spec` as one whole process per replicate: `critsec run` with the
/// replicate's iterations (one fork, the run's warmup and iteration time, as many iterations
/// as a round's blocks), its result read from its `--json` file.
fn whole_process(build: &Build, spec: &TrialSpec, settings: &PairedSettings) -> CommandSide {
    let time = format!("{}ms", settings.iteration_time.as_millis().max(1));
    let mut args: Vec<String> = vec!["run".into(), spec.scenario.clone()];
    for (k, v) in &spec.params.0 {
        args.extend(["-p".into(), format!("{k}={v}")]);
    }
    args.extend(
        [
            "-t",
            &spec.threads.to_string(),
            "-f",
            "1",
            "--warmup-iterations",
            &settings.warmup_iterations.to_string(),
            "-i",
            &settings.blocks.max(1).to_string(),
            "-w",
            &time,
            "-r",
            &time,
            "--json",
            RESULT_PLACEHOLDER,
        ]
        .map(String::from),
    );
    CommandSide {
        env: spec.env.iter().cloned().collect(),
        ..CommandSide::new(build.executable.display().to_string(), args, Reader::Jmh)
    }
}

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
