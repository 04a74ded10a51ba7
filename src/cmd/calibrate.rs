//! `critsec calibrate`: the A/A claims, run many times and at several slice lengths, to show
//! this machine's noise and check that the intervals cover 1 as often as they say.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use critsec_harness::Claim;
use critsec_harness::claims::PairedSettings;
use critsec_harness::claims::validate_claim;
use critsec_harness::claims::{CalibrationPlan, calibrate};
use critsec_harness::run::parse_duration;
use critsec_harness::run::{Launcher, interrupted};
use critsec_present::calibration::render;
use critsec_present::run_table::machine_words;

use super::UsageError;
use super::progress::{ReplicateLines, install_interrupt_handler};
use super::run::fork_timeout;
use crate::catalog::{catalog, claims};

/// Arguments of `critsec calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// A/A claims to run: substrings of their ids (every claim with `aa = true` when none).
    pub claims: Vec<String>,
    /// Runs of each claim and slice length, each with its own seed.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Slice lengths to compare, comma-separated (each side runs one slice in turn).
    #[arg(long, value_delimiter = ',', default_value = "20ms,50ms,200ms")]
    pub slices: Vec<String>,
    /// Measured time per side per round, the same at every slice length.
    #[arg(long, default_value = "400ms")]
    pub per_side: String,
    /// Affinity of single-threaded claims' processes: `both` (pinned to one CPU per round, then
    /// unpinned, to compare), `on` or `off`.
    #[arg(long, value_enum, default_value = "both")]
    pub pin: PinChoice,
    /// Rounds (process pairs) per run.
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    /// Seed of the first run (run n uses seed + n).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Per-iteration timeout of a fork, as for `reproduce`.
    #[arg(long = "timeout", value_name = "DUR")]
    pub timeout: Option<String>,
}

/// Which affinities `critsec calibrate` compares.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinChoice {
    /// Pinned, then unpinned.
    Both,
    /// Pinned only (what `reproduce` does).
    On,
    /// Unpinned only (`reproduce --no-pin`).
    Off,
}

impl PinChoice {
    fn tried(self) -> Vec<bool> {
        match self {
            PinChoice::Both => vec![true, false],
            PinChoice::On => vec![true],
            PinChoice::Off => vec![false],
        }
    }
}

/// Runs the A/A claims under every design and prints the table; exit 1 if a run failed.
pub fn run(args: &CalibrateArgs) -> anyhow::Result<ExitCode> {
    let all = claims()?;
    let selected: Vec<Claim> = all
        .iter()
        .filter(|c| c.aa)
        .filter(|c| args.claims.is_empty() || args.claims.iter().any(|p| c.id.contains(p.as_str())))
        .cloned()
        .collect();
    if selected.is_empty() {
        let ids: Vec<&str> = all.iter().filter(|c| c.aa).map(|c| c.id.as_str()).collect();
        return Err(UsageError(format!(
            "no A/A claim matches `{}`; the A/A claims are: {}",
            args.claims.join(" "),
            ids.join(", ")
        ))
        .into());
    }
    let slices = args
        .slices
        .iter()
        .map(|s| parse_duration(s))
        .collect::<Result<Vec<_>, _>>()?;
    let per_side = parse_duration(&args.per_side)?;
    let catalog = Arc::new(catalog());
    for c in &selected {
        validate_claim(&catalog, c)?;
    }
    let plan = CalibrationPlan {
        slices,
        per_side,
        rounds: args.rounds,
        runs: args.runs,
        pin: args.pin.tried(),
        base: PairedSettings::quick()
            .with_seed(args.seed.unwrap_or_else(PairedSettings::clock_seed)),
    };
    plan.check().map_err(UsageError)?;
    println!(
        "# critsec calibrate: {} A/A claim(s) x {} slice length(s) x {} run(s) of {} rounds, {}",
        selected.len(),
        plan.slices.len(),
        plan.runs,
        plan.rounds,
        machine_words(&critsec_harness::run::machine())
    );
    println!("# seed {} (run n uses seed + n)", plan.base.seed);
    install_interrupt_handler();
    let exe = std::env::current_exe().context("locating this executable for forks")?;
    let launcher =
        Launcher::new(catalog, Some(exe)).with_timeout(fork_timeout(args.timeout.as_deref())?);
    let mut progress = ReplicateLines::new();
    let rows = calibrate(&launcher, &selected, &plan, &mut progress);
    progress.finish();
    print!("{}", render(&rows));
    if rows.iter().any(|r| !r.errors.is_empty()) || interrupted() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
