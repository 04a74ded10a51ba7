//! `critsec reproduce [CLAIM]...`: test each claim with a paired A/B run and print verdicts.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use critsec_harness::Claim;
use critsec_harness::claims::VerdictFile;
use critsec_harness::claims::validate_claim;
use critsec_harness::claims::{PairedSettings, reproduce_claims};
use critsec_harness::format::write_atomically;
use critsec_harness::run::{Launcher, did_you_mean, interrupted};
use critsec_harness::run::{available_cores, parse_duration};
use critsec_harness::run::{git_commit, hazards, machine, now_utc};
use critsec_present::run_table::{hazard_lines, machine_words};
use critsec_present::verdicts::{render, time_table};

use super::UsageError;
use super::builds;
use super::progress::{ReplicateLines, install_interrupt_handler};
use super::run::fork_timeout;
use crate::catalog::{catalog, claims};

/// Arguments of `critsec reproduce`.
#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// Claims to reproduce: substrings of their ids (all when none is given).
    pub claims: Vec<String>,
    /// Short iterations, the default: the whole claim set takes a few minutes on 2 cores.
    #[arg(long, conflicts_with_all = ["full", "publication"])]
    pub quick: bool,
    /// The publication run's settings: quick's slices with a budget that settles what quick's
    /// cannot (40 s per claim after the pilot, up to 48 pairs; 10-30 seeds).
    #[arg(long, conflicts_with = "full")]
    pub publication: bool,
    /// JMH-like durations: 5 warmups and 10-30 pairs of 2 s per claim.
    #[arg(long)]
    pub full: bool,
    /// Override the iteration time of both sides, e.g. 500ms.
    #[arg(short = 'r', value_name = "DUR")]
    pub iteration_time: Option<String>,
    /// Override the minimum number of pairs.
    #[arg(long = "pairs", value_name = "N")]
    pub pairs: Option<u32>,
    /// Write the verdicts as JSON here (atomically).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seed of every random choice (launch and block orders, environment padding); the default
    /// is drawn from the clock and printed, so any run can be replayed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Claims from a file of yours instead of the built-in ones (the `claims.toml` layout, where
    /// a side may also be a command: see the README).
    #[arg(long = "claims", value_name = "FILE")]
    pub claims_file: Option<PathBuf>,
    /// List the claims and exit.
    #[arg(long)]
    pub list: bool,
    /// Per-iteration timeout, e.g. 30s: a fork that has not answered this long after an
    /// iteration (or its setup) should have ended is killed, and its benchmark becomes an error
    /// (JMH -to; default 10m).
    #[arg(long = "timeout", value_name = "DUR")]
    pub timeout: Option<String>,
    /// Keep the git worktrees of the revisions claims name after building them (under the
    /// workspace's `target/critsec-rev/wt/`).
    #[arg(long)]
    pub keep_worktrees: bool,
    /// Leave single-threaded claims' processes where the scheduler puts them (by default each
    /// round's are pinned to one CPU after their setup: METHODOLOGY.md, *CPU affinity*).
    #[arg(long)]
    pub no_pin: bool,
    /// The log half-width a decided claim's interval should reach: its group measures on,
    /// within its budget, while one is wider (default 0.05 quick, 0.02 full: x/÷ 1.051 and
    /// 1.020; 0 stops a group once its claims are decided). METHODOLOGY.md, *Looks for precision*.
    #[arg(long, value_name = "LOG_HALF_WIDTH", value_parser = precision_goal)]
    pub precision: Option<f64>,
}

/// `--precision`'s value, refused when parsing the command line (so `ab` writes no claim file
/// for a run that cannot start): a log half-width is a finite number >= 0.
pub(super) fn precision_goal(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err("a log half-width is a finite number >= 0 (0: none)".into()),
    }
}

/// Hazards that concern only our own Rust scenarios.
const RUST_ONLY_HAZARDS: [&str; 3] = ["debug-build", "backtrace-env", "oversubscribed"];

/// Reproduces the selected claims; exit 1 if any claim failed to run or verify.
pub fn run(args: &ReproduceArgs) -> anyhow::Result<ExitCode> {
    let all = match &args.claims_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))?;
            Claim::parse_file(&text, &path.display().to_string())?
        }
        None => claims()?,
    };
    let timeout = fork_timeout(args.timeout.as_deref())?;
    let catalog = Arc::new(catalog());
    let selected: Vec<&Claim> = all
        .iter()
        .filter(|c| args.claims.is_empty() || args.claims.iter().any(|p| c.id.contains(p.as_str())))
        .collect();
    if selected.is_empty() {
        let hint = did_you_mean(&args.claims.join(" "), all.iter().map(|c| c.id.as_str()));
        return Err(UsageError(format!(
            "no claim matches `{}`{hint}",
            args.claims.join(" ")
        ))
        .into());
    }
    for c in &selected {
        validate_claim(&catalog, c)?;
    }
    if let Some(c) = selected.iter().find(|c| c.is_command())
        && (args.iteration_time.is_some() || args.timeout.is_some())
    {
        return Err(UsageError(format!(
            "-r and --timeout set the iterations and forks of scenario claims; `{}` runs programs, \
             whose time limit is their side's `timeout_s` and whose iterations are their own \
             (JMH's -r)",
            c.id
        ))
        .into());
    }
    if args.list {
        for c in selected {
            println!(
                "{:<34} {}\n{:<34} source: {}\n",
                c.id, c.title, "", c.source
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (mut settings, mode) = if args.full {
        (PairedSettings::full(), "full")
    } else if args.publication {
        (PairedSettings::publication(), "publication")
    } else {
        (PairedSettings::quick(), "quick")
    };
    if let Some(r) = &args.iteration_time {
        settings.iteration_time = parse_duration(r)?;
    }
    if let Some(p) = args.pairs {
        if p < 2 {
            return Err(UsageError(
                "--pairs must be at least 2: an interval needs two pairs".into(),
            )
            .into());
        }
        settings.min_pairs = p;
        settings.max_pairs = settings.max_pairs.max(p);
    }
    if let Some(p) = args.precision {
        settings.precision = (p > 0.0).then_some(p);
    }
    settings.seed = args.seed.unwrap_or_else(PairedSettings::clock_seed);
    settings.pin_single_threaded = !args.no_pin;
    let m = machine();
    println!(
        "# critsec reproduce: {} claim(s), {} mode, {}",
        selected.len(),
        mode,
        machine_words(&m)
    );
    println!(
        "# seed {} (replay the same launch and block orders with --seed {})",
        settings.seed, settings.seed
    );
    let mut hz = hazards(available_cores() * 4, settings.forked);
    if selected.iter().all(|c| c.is_command()) {
        // Programs (a reviewer's JVMs) get RUST_BACKTRACE=0 per invocation, run their own
        // threads, and are not built by us: this binary's build and environment are not theirs.
        hz.retain(|h| !RUST_ONLY_HAZARDS.contains(&h.code.as_str()));
    }
    print!("{}", hazard_lines(&hz));
    install_interrupt_handler();
    let selected: Vec<Claim> = selected.into_iter().cloned().collect();
    // Every revision the claims name is built before anything runs.
    let revisions: Vec<Claim> = selected
        .iter()
        .filter(|c| c.baseline.revision.is_some())
        .cloned()
        .collect();
    let builds = if revisions.is_empty() {
        Vec::new()
    } else {
        let builder = builds::builder(args.keep_worktrees)?;
        builds::build(&builder, &builds::plan(&builder, &revisions)?)?
    };
    let created = now_utc();
    let exe = std::env::current_exe().context("locating this executable for forks")?;
    let launcher = Launcher::new(catalog, Some(exe))
        .with_timeout(timeout)
        .with_builds(builds);
    let mut progress = ReplicateLines::new();
    let outcomes = reproduce_claims(&launcher, &selected, &all, &settings, &mut progress);
    progress.finish();
    println!();
    print!("{}", render(&outcomes));
    print!("{}", time_table(&outcomes));
    let failed = outcomes.iter().filter(|o| o.verdict.is_err()).count();
    if let Some(path) = &args.json {
        write_verdicts(
            path,
            VerdictFile {
                format: VerdictFile::FORMAT,
                created,
                machine: m,
                git_commit: git_commit(),
                hazards: hz,
                settings,
                outcomes,
            },
        )?;
    }
    if failed > 0 || interrupted() {
        eprintln!(
            "critsec: {failed} claim(s) could not be measured{}",
            if interrupted() { "; interrupted" } else { "" }
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `file` to `path` atomically and says so.
pub(super) fn write_verdicts(path: &Path, file: VerdictFile) -> anyhow::Result<()> {
    write_atomically(path, &file.to_json())
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!("critsec: wrote {}", path.display());
    Ok(())
}
