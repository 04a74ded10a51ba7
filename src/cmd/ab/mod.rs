//! `critsec ab`: a reviewer's A/B test in one command, without writing a claim file. The sides
//! are two command lines (`-- BASELINE CONTENDER`, [`commands`]), two JMH result files already
//! on disk (`--results`, [`results`]), or two git revisions of a workspace, built and run as
//! process pairs across the two builds (`--rev`, [`revisions`]). It writes the claim it tested
//! (so that the run can be repeated, edited or published) and runs it as `critsec reproduce
//! --claims` does.
//!
//! The claim is always "the contender is better by at least `--min-effect`": contender /
//! baseline at least that ratio where higher is better, at most its inverse where lower is.

mod commands;
mod results;
mod revisions;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use critsec_harness::claims::ClaimKind;
use critsec_harness::format::write_atomically;
use critsec_harness::{Claim, Direction, Side};

use super::UsageError;
use super::reproduce::ReproduceArgs;

/// Arguments of `critsec ab`.
#[derive(clap::Args, Debug)]
pub struct AbArgs {
    /// The sides are JMH runs of this benchmark: critsec adds `-rf json -rff FILE` to each
    /// command and reads the benchmark's entry from the file.
    #[arg(long, value_name = "BENCHMARK", conflicts_with = "lines")]
    pub jmh: Option<String>,
    /// With --jmh: the mode of the entry to read (`thrpt`, `avgt`, `sample`, `ss`), for a run of
    /// several modes (`-bm thrpt,avgt`).
    #[arg(long, value_name = "MODE", requires = "jmh")]
    pub mode: Option<String>,
    /// The sides print one `value[,unit]` line per iteration on stdout.
    #[arg(long)]
    pub lines: bool,
    /// The sides are builds of these git revisions (anything `git rev-parse` accepts), the
    /// baseline first; with one, the contender is the working tree as it is, uncommitted
    /// changes included.
    #[arg(long = "rev", value_name = "REVISION", num_args = 1, action = clap::ArgAction::Append)]
    pub revs: Vec<String>,
    /// With --rev: the scenario both builds run (`critsec list`), as process pairs across them.
    #[arg(long, value_name = "NAME", requires = "revs", conflicts_with_all = ["jmh", "lines"])]
    pub scenario: Option<String>,
    /// With --rev: the bench target (`cargo bench --no-run --bench TARGET`) both builds run.
    #[arg(long, value_name = "TARGET", requires = "revs", conflicts_with_all = ["jmh", "lines", "scenario"])]
    pub cargo_bench: Option<String>,
    /// With --cargo-bench: the benchmark's id (criterion's full id, divan's `module::function`).
    #[arg(long, value_name = "ID", requires = "cargo_bench")]
    pub filter: Option<String>,
    /// With --cargo-bench: the package that has the target (also `-p PACKAGE`).
    #[arg(long, value_name = "PACKAGE", requires = "cargo_bench")]
    pub package: Option<String>,
    /// With --cargo-bench: how its output is read, when its source does not say (`criterion`
    /// or `divan`).
    #[arg(long, value_name = "READER", requires = "cargo_bench")]
    pub reader: Option<String>,
    /// With --cargo-bench: more arguments for the bench executable (e.g. '--measurement-time 2').
    #[arg(
        long,
        value_name = "ARGS",
        requires = "cargo_bench",
        allow_hyphen_values = true
    )]
    pub bench_args: Option<String>,
    /// With --scenario: parameter values `NAME=VALUE` (repeatable); with --cargo-bench, the
    /// package.
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// With --scenario: the thread count (as `run -t` takes it).
    #[arg(short = 't', value_name = "THREADS", requires = "scenario")]
    pub threads: Option<String>,
    /// Keep the git worktrees of the revisions after building them.
    #[arg(long, requires = "revs")]
    pub keep_worktrees: bool,
    /// Print what would be built and run, and the claim, and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// The metric compared: `primary`, or a secondary metric (e.g. `gc.alloc.rate.norm`).
    #[arg(long, default_value = "primary")]
    pub metric: String,
    /// The claimed effect: the contender is better by at least this factor (contender /
    /// baseline at least RATIO, or at most 1/RATIO where lower is better).
    #[arg(long, default_value_t = 1.05, value_name = "RATIO")]
    pub min_effect: f64,
    /// Lower is better (a time per operation, an allocation rate). A JMH primary score's mode
    /// says which way it goes; a flag that contradicts it is an error.
    #[arg(long, conflicts_with = "higher")]
    pub lower: bool,
    /// Higher is better (a throughput): the default, except where JMH result files' mode says
    /// lower (`--results`) and for benchmarks' times (`--cargo-bench`).
    #[arg(long)]
    pub higher: bool,
    /// The claim's id in the file and the verdict.
    #[arg(long, default_value = "ab")]
    pub id: String,
    /// Where to write the claim file it tests.
    #[arg(long, value_name = "FILE", default_value = "critsec-ab.toml")]
    pub claims_out: PathBuf,
    /// Seconds one invocation may take before its process group is killed.
    #[arg(long, value_name = "S", default_value_t = 600)]
    pub timeout_s: u64,
    /// JMH-like durations (2 s iterations); by default the claim runs as the publication run's
    /// claims do (quick's slices, 40 s of budget after the pilot, up to 48 pairs).
    #[arg(long)]
    pub full: bool,
    /// Seed of the launch orders (printed, so any run can be replayed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// At least this many pairs, as `reproduce --pairs`: a narrower interval on a noisy machine.
    #[arg(long, value_name = "N")]
    pub pairs: Option<u32>,
    /// The log half-width the decided interval should reach, as `reproduce --precision` (0: stop
    /// at the decision, saving JVM starts).
    #[arg(long, value_name = "LOG_HALF_WIDTH", value_parser = super::reproduce::precision_goal)]
    pub precision: Option<f64>,
    /// Write the verdict as JSON here (atomically).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Judge two JMH result files already on disk (`-rf json` output of main's and of the PR's
    /// runs) instead of running commands: fork k of one against fork k of the other is a
    /// replicate. Needs --jmh.
    #[arg(long, requires = "jmh")]
    pub results: bool,
    /// The baseline's command line, run by `sh -c` (e.g. 'java -jar main.jar Bench -f 1'); with
    /// --results, its JMH result file.
    #[arg(required_unless_present = "revs")]
    pub baseline: Option<String>,
    /// The contender's command line, likewise.
    #[arg(required_unless_present = "revs")]
    pub contender: Option<String>,
}

/// Tests the claim the flags make.
pub fn run(args: &AbArgs) -> anyhow::Result<ExitCode> {
    if !(args.min_effect.is_finite() && args.min_effect > 0.0) {
        return Err(UsageError(format!(
            "--min-effect must be a positive ratio, not {}",
            args.min_effect
        ))
        .into());
    }
    if !args.revs.is_empty() {
        return revisions::run(args);
    }
    if args.results {
        return results::run(args);
    }
    let claim = commands::claim(args, stated(args).unwrap_or(Direction::Higher))?;
    write_and_reproduce(args, &claim)
}

/// The direction the flags state, if they state one.
fn stated(args: &AbArgs) -> Option<Direction> {
    match (args.lower, args.higher) {
        (true, _) => Some(Direction::Lower),
        (_, true) => Some(Direction::Higher),
        _ => None,
    }
}

fn word(d: Direction) -> &'static str {
    match d {
        Direction::Higher => "higher",
        Direction::Lower => "lower",
    }
}

/// The bound a claim that the contender is better by `factor` tests contender / baseline
/// against: `factor` where higher is better, its inverse (to four significant digits, so that
/// the bound printed is the bound tested) where lower is.
fn bound(direction: Direction, factor: f64) -> f64 {
    match direction {
        Direction::Higher => factor,
        Direction::Lower => {
            let inverse = 1.0 / factor;
            let scale = 10f64.powi(3 - inverse.log10().floor() as i32);
            (inverse * scale).round() / scale
        }
    }
}

/// The claim `ab` tests on `baseline` and `contender`: the contender's metric better by
/// `--min-effect` in `direction`. The caller sets what the sides share (scenario, benchmark).
fn claim(args: &AbArgs, direction: Direction, baseline: Side, contender: Side) -> Claim {
    let min_effect = bound(direction, args.min_effect);
    let relation = match direction {
        Direction::Higher => format!("at least {min_effect}x the baseline's (higher is better)"),
        Direction::Lower => format!("at most {min_effect}x the baseline's (lower is better)"),
    };
    Claim {
        id: args.id.clone(),
        title: format!("The contender's {} is {relation}", args.metric),
        source: "critsec ab".into(),
        source_figure: format!(
            "the reviewer's expectation: better by at least {}x",
            args.min_effect
        ),
        scenario: String::new(),
        benchmark: None,
        mode: None,
        metric: args.metric.clone(),
        kind: ClaimKind::Ratio,
        direction: Some(direction),
        min_effect: Some(min_effect),
        tolerance: None,
        k: None,
        exposure: None,
        requires: Default::default(),
        control: None,
        threads: "1".into(),
        params: Default::default(),
        baseline,
        contender,
        note: None,
        aa: false,
    }
}

/// The claim as a claims file, checked as `reproduce --claims` reads it.
fn claim_file(claim: &Claim, origin: &str) -> anyhow::Result<String> {
    let text = Claim::file_text(std::slice::from_ref(claim));
    Claim::parse_file(&text, origin)?;
    Ok(format!(
        "# Written by `critsec ab`; repeat with `critsec reproduce --claims THIS_FILE`.\n{text}"
    ))
}

/// Writes `claim` to `--claims-out` and reproduces it as `critsec reproduce --claims` does (or,
/// on a dry run, prints it).
fn write_and_reproduce(args: &AbArgs, claim: &Claim) -> anyhow::Result<ExitCode> {
    let out = &args.claims_out;
    let text = claim_file(claim, &out.display().to_string())?;
    if args.dry_run {
        println!("# would write {} and run it:\n{text}", out.display());
        return Ok(ExitCode::SUCCESS);
    }
    write_atomically(out, text.as_bytes())
        .with_context(|| format!("writing the claim to {}", out.display()))?;
    println!("# the claim: {}", claim.title);
    let file = out.display();
    println!("# it is in {file}; repeat the run with: critsec reproduce --claims {file}");
    super::reproduce::run(&ReproduceArgs {
        claims: Vec::new(),
        // One claim gets the publication run's budget, where the main job's 6 s serve 39 claims.
        quick: false,
        publication: !args.full,
        full: args.full,
        iteration_time: None,
        pairs: args.pairs,
        json: args.json.clone(),
        seed: args.seed,
        claims_file: Some(out.clone()),
        list: false,
        timeout: None,
        keep_worktrees: args.keep_worktrees,
        no_pin: false,
        precision: args.precision,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        ab: AbArgs,
    }

    /// The flags `args` parse to.
    pub(super) fn args(args: &[&str]) -> AbArgs {
        Cli::try_parse_from(std::iter::once("ab").chain(args.iter().copied()))
            .unwrap()
            .ab
    }

    /// `claim` as `reproduce --claims` reads it back, which must be the claim itself.
    pub(super) fn read_back(claim: &Claim) -> Claim {
        let text = claim_file(claim, "ab").unwrap();
        let read = Claim::parse_file(&text, "ab").unwrap().remove(0);
        assert_eq!(&read, claim, "{text}");
        read
    }

    #[test]
    fn the_bound_of_a_lower_is_better_claim_is_the_inverse_to_four_digits() {
        assert_eq!(bound(Direction::Lower, 1.05), 0.9524);
        assert_eq!(bound(Direction::Lower, 2.0), 0.5);
        assert_eq!(bound(Direction::Lower, 1.1), 0.9091);
        assert_eq!(bound(Direction::Higher, 1.2), 1.2);
    }
}
