//! `critsec ab --rev BASE [--rev CONTENDER]`: two git revisions of the workspace as the sides,
//! each built (and kept by commit) before anything runs. With `--scenario` each build's forks
//! run the scenario as process pairs across the two builds, as `reproduce` runs any claim;
//! with `--cargo-bench` each build's benchmark executable runs once per replicate and its time
//! per iteration is read from criterion's files or divan's table. One `--rev` makes the
//! contender the working tree as it is, uncommitted changes included.
//!
//! The claim names each revision by its commit (the working tree as `working-tree`), so that
//! `reproduce --claims` repeats the run on the same code.

use std::process::ExitCode;

use critsec_harness::claims::{CommandSide, Reader, WORKING_TREE};
use critsec_harness::run::Artifact;
use critsec_harness::{Claim, Direction, Side};

use super::super::{UsageError, builds};
use super::{AbArgs, stated};

/// Plans the builds, writes the claim and reproduces it (on a dry run: prints them).
pub(super) fn run(args: &AbArgs) -> anyhow::Result<ExitCode> {
    let (base, contender) = match args.revs.as_slice() {
        [base] => (base.as_str(), WORKING_TREE),
        [base, contender] => (base.as_str(), contender.as_str()),
        _ => {
            return Err(UsageError(
                "give --rev once (the contender is the working tree) or twice".into(),
            )
            .into());
        }
    };
    if args.baseline.is_some() {
        return Err(UsageError(
            "with --rev the sides are the revisions' builds: give no command lines".into(),
        )
        .into());
    }
    let builder = builds::builder(args.keep_worktrees)?;
    let artifact = artifact(args)?;
    let wanted = [
        (base.to_string(), artifact.clone()),
        (contender.to_string(), artifact.clone()),
    ];
    let planned = builder
        .plan(&wanted)
        .map_err(|e| UsageError(e.to_string()))?;
    // The claim names commits, not names that move (a branch), so that a repeat runs the same.
    let named = |i: usize| match planned[i].revision.as_str() {
        WORKING_TREE => WORKING_TREE.to_string(),
        _ => planned[i].commit.clone(),
    };
    let side = |revision: String| -> Result<Side, UsageError> {
        let command = match &artifact {
            Artifact::Critsec => None,
            Artifact::CargoBench { target, package } => {
                Some(bench_side(&builder, args, target, package.as_deref())?)
            }
        };
        Ok(Side {
            revision: Some(revision),
            command,
            ..Side::default()
        })
    };
    let claim = claim(args, side(named(0))?, side(named(1))?)?;
    println!(
        "# baseline: {base} ({}); contender: {contender} ({}){}",
        short(&planned[0].commit),
        short(&planned[1].commit),
        if contender == WORKING_TREE {
            if planned[1].dirty {
                ", the working tree as it is, uncommitted changes included"
            } else {
                ", the working tree (no uncommitted changes)"
            }
        } else {
            ""
        }
    );
    if args.dry_run {
        for line in builds::plan_lines(&builder, &planned) {
            println!("{line}");
        }
    }
    super::write_and_reproduce(args, &claim)
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// What each revision builds: critsec for a scenario, the bench target's executable otherwise.
fn artifact(args: &AbArgs) -> Result<Artifact, UsageError> {
    match (&args.scenario, &args.cargo_bench) {
        (Some(_), None) => Ok(Artifact::Critsec),
        (None, Some(target)) => {
            let mut package = args.package.clone();
            for p in &args.params {
                if p.contains('=') || package.is_some() {
                    return Err(UsageError(format!("with --cargo-bench, -p names the package, once: `{p}`")));
                }
                package = Some(p.clone());
            }
            Ok(Artifact::CargoBench { target: target.clone(), package })
        }
        _ => Err(UsageError("with --rev, say what both builds run: --scenario NAME or --cargo-bench TARGET --filter ID".into())),
    }
}

/// A side running `target`'s executable for the one benchmark `--filter` names.
fn bench_side(
    builder: &critsec_harness::claims::Builder,
    args: &AbArgs,
    target: &str,
    package: Option<&str>,
) -> Result<CommandSide, UsageError> {
    let reader = match args.reader.as_deref() {
        Some("criterion") => Reader::Criterion,
        Some("divan") => Reader::Divan,
        Some(other) => return Err(UsageError(format!("--reader {other}: criterion or divan"))),
        None => builder.bench_reader(target, package).map_err(UsageError)?,
    };
    let Some(id) = &args.filter else {
        return Err(UsageError(
            "--cargo-bench runs one benchmark: name its id with --filter".into(),
        ));
    };
    let mut bench_args: Vec<String> = vec!["--bench".into(), "--exact".into(), id.clone()];
    if reader == Reader::Criterion {
        bench_args.push("--noplot".into());
    }
    if let Some(extra) = &args.bench_args {
        bench_args.extend(shlex::split(extra).ok_or_else(|| {
            UsageError(format!("--bench-args `{extra}` does not split as sh would"))
        })?);
    }
    Ok(CommandSide {
        cargo_bench: Some(target.to_string()),
        package: package.map(String::from),
        timeout_s: args.timeout_s,
        ..CommandSide::new("", bench_args, reader)
    })
}

/// The claim on the two builds: a scenario's metric (higher is better unless `--lower`), or a
/// benchmark's time per iteration (lower is better unless `--higher`).
fn claim(args: &AbArgs, baseline: Side, contender: Side) -> Result<Claim, UsageError> {
    let bench = args.cargo_bench.is_some();
    let default = if bench {
        Direction::Lower
    } else {
        Direction::Higher
    };
    let mut claim = super::claim(args, stated(args).unwrap_or(default), baseline, contender);
    if bench {
        claim.benchmark = args.filter.clone();
        return Ok(claim);
    }
    claim.scenario = args.scenario.clone().unwrap_or_default();
    claim.threads = args.threads.clone().unwrap_or_else(|| "1".into());
    for p in &args.params {
        let (name, value) = p
            .split_once('=')
            .ok_or_else(|| UsageError(format!("-p takes NAME=VALUE, got `{p}`")))?;
        claim.params.insert(name.to_string(), value.to_string());
    }
    Ok(claim)
}
