//! `critsec ab -- BASELINE CONTENDER`: a reviewer's A/B test of two builds of a benchmark in one
//! command, without writing a claim file. It writes the claim it tested (so that the run can be
//! repeated, edited or published) and runs it as `critsec reproduce --claims` does. With
//! `--results` it judges two JMH result files already on disk instead, forks as replicates.
//!
//! The claim is always "the contender is better by at least `--min-effect`": for a metric where
//! lower is better, contender / baseline at most the inverse. Which way is better comes from a
//! JMH result's mode where there is one (`--results` reads it before the claim is made; a
//! command side's is checked when its first result is read), and a flag that contradicts it is
//! an error.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use critsec_harness::claims::ClaimKind;
use critsec_harness::claims::VerdictFile;
use critsec_harness::claims::{CommandSide, EntrySelection, OutputFormat, parse_jmh};
use critsec_harness::claims::{PairedSettings, judge_recorded};
use critsec_harness::format::write_atomically;
use critsec_harness::run::{git_commit, machine, now_utc};
use critsec_harness::{Claim, Direction, Side};
use critsec_present::verdicts::render;

use super::UsageError;
use super::reproduce::{ReproduceArgs, write_verdicts};

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
    /// The metric compared: `primary`, or a JMH secondary metric (e.g. `gc.alloc.rate.norm`).
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
    /// lower (`--results`).
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
    /// JMH-like durations: more replicates, a longer budget.
    #[arg(long)]
    pub full: bool,
    /// Seed of the launch orders (printed, so any run can be replayed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
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
    pub baseline: String,
    /// The contender's command line, likewise.
    pub contender: String,
}

/// Writes the claim and reproduces it (or, with `--results`, judges the two files).
pub fn run(args: &AbArgs) -> anyhow::Result<ExitCode> {
    if args.results {
        return judge_files(args);
    }
    let claim = claim_of(args, stated(args).unwrap_or(Direction::Higher))?;
    let text = Claim::file_text(std::slice::from_ref(&claim));
    // The file is parsed as `reproduce --claims` will parse it, before it is written.
    Claim::parse_file(&text, &args.claims_out.display().to_string())?;
    let text = format!(
        "# Written by `critsec ab`; repeat with `critsec reproduce --claims THIS_FILE`.\n{text}"
    );
    write_atomically(&args.claims_out, text.as_bytes())
        .with_context(|| format!("writing the claim to {}", args.claims_out.display()))?;
    println!("# the claim: {}", claim.title);
    println!(
        "# it is in {}; repeat the run with: critsec reproduce --claims {}",
        args.claims_out.display(),
        args.claims_out.display()
    );
    super::reproduce::run(&ReproduceArgs {
        claims: Vec::new(),
        quick: !args.full,
        full: args.full,
        iteration_time: None,
        pairs: None,
        json: args.json.clone(),
        seed: args.seed,
        claims_file: Some(args.claims_out.clone()),
        list: false,
        timeout: None,
        // Programs run as invocations, never in rounds: nothing to pin.
        no_pin: false,
        precision: args.precision,
    })
}

/// The direction the flags state, if they state one.
fn stated(args: &AbArgs) -> Option<Direction> {
    match (args.lower, args.higher) {
        (true, _) => Some(Direction::Lower),
        (_, true) => Some(Direction::Higher),
        _ => None,
    }
}

/// Judges the claim on the two result files `args` names; nothing runs. Which way the metric
/// improves comes from the baseline file's mode, where it has one.
fn judge_files(args: &AbArgs) -> anyhow::Result<ExitCode> {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read the JMH result file {path}: {e}")))
    };
    let (baseline, contender) = (read(&args.baseline)?, read(&args.contender)?);
    let select = EntrySelection {
        benchmark: args.jmh.as_deref(),
        mode: args.mode.as_deref(),
        params: None,
    };
    // A file that does not parse is judged (and its error reported) below.
    let better = parse_jmh(&baseline, &select, &args.metric)
        .ok()
        .and_then(|run| run.better);
    let direction = match (stated(args), better) {
        (Some(said), Some(better)) if said != better => {
            return Err(UsageError(format!(
                "--{} contradicts {}: its {} runs in a mode where {} is better",
                word(said),
                args.baseline,
                args.jmh.as_deref().unwrap_or("benchmark"),
                word(better)
            ))
            .into());
        }
        (Some(said), _) => said,
        (None, better) => better.unwrap_or(Direction::Higher),
    };
    let claim = claim_of(args, direction)?;
    let outcome = judge_recorded(
        &claim,
        [&baseline, &contender],
        [&args.baseline, &args.contender],
    );
    let failed = outcome.verdict.is_err();
    let outcomes = vec![outcome];
    println!(
        "# critsec ab --results: {} against {}, forks as replicates",
        args.contender, args.baseline
    );
    println!("# the claim: {}", claim.title);
    println!();
    print!("{}", render(&outcomes));
    if let Some(path) = &args.json {
        write_verdicts(
            path,
            VerdictFile {
                format: VerdictFile::FORMAT,
                created: now_utc(),
                machine: machine(),
                git_commit: git_commit(),
                hazards: Vec::new(),
                settings: PairedSettings::quick(),
                outcomes,
            },
        )?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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

/// The claim `critsec ab` tests: one claim on two commands, the contender better by
/// `--min-effect` in `direction`.
fn claim_of(args: &AbArgs, direction: Direction) -> Result<Claim, UsageError> {
    if !(args.min_effect.is_finite() && args.min_effect > 0.0) {
        return Err(UsageError(format!(
            "--min-effect must be a positive ratio, not {}",
            args.min_effect
        )));
    }
    let output = match (&args.jmh, args.lines) {
        (Some(_), _) => OutputFormat::Jmh,
        (None, true) => OutputFormat::Lines,
        (None, false) => {
            return Err(UsageError(
                "say what the commands report: --jmh BENCHMARK (a JMH run) or --lines (one \
                 value[,unit] line per iteration)"
                    .into(),
            ));
        }
    };
    let side = |command: &str| -> Result<Side, UsageError> {
        if command.trim().is_empty() {
            return Err(UsageError("a side's command is empty".into()));
        }
        let args_of = match output {
            OutputFormat::Jmh => {
                if !args.results && sets_result_flags(command) {
                    return Err(UsageError(format!(
                        "`{command}` sets -rf or -rff: critsec ab adds `-rf json -rff FILE` itself"
                    )));
                }
                // `sh -c SCRIPT FILE` runs SCRIPT with FILE as $0: the result file critsec reads.
                vec![
                    "-c".to_string(),
                    format!("{command} -rf json -rff \"$0\""),
                    "{result}".to_string(),
                ]
            }
            OutputFormat::Lines => vec!["-c".to_string(), command.to_string()],
        };
        Ok(Side {
            command: Some(CommandSide {
                program: "sh".into(),
                args: args_of,
                env: BTreeMap::new(),
                cwd: None,
                output,
                timeout_s: args.timeout_s,
            }),
            ..Side::default()
        })
    };
    let min_effect = bound(direction, args.min_effect);
    let relation = match direction {
        Direction::Higher => format!("at least {min_effect}x the baseline's (higher is better)"),
        Direction::Lower => format!("at most {min_effect}x the baseline's (lower is better)"),
    };
    Ok(Claim {
        id: args.id.clone(),
        title: format!("The contender's {} is {relation}", args.metric),
        source: "critsec ab".into(),
        source_figure: format!(
            "the reviewer's expectation: better by at least {}x",
            args.min_effect
        ),
        scenario: String::new(),
        benchmark: args.jmh.clone(),
        mode: args.mode.clone(),
        metric: args.metric.clone(),
        kind: ClaimKind::Ratio,
        direction: Some(direction),
        min_effect: Some(min_effect),
        k: None,
        exposure: None,
        requires: Default::default(),
        control: None,
        threads: "1".into(),
        params: BTreeMap::new(),
        baseline: side(&args.baseline)?,
        contender: side(&args.contender)?,
        note: None,
        aa: false,
    })
}

/// Whether `command` passes JMH's result flags itself: `-rf`/`-rff` as words of the command
/// line (as `sh` splits it), not as text inside a path.
fn sets_result_flags(command: &str) -> bool {
    let words = shlex::split(command)
        .unwrap_or_else(|| command.split_whitespace().map(String::from).collect());
    words.iter().any(|w| {
        ["-rf", "-rff"]
            .iter()
            .any(|flag| w == flag || w.starts_with(&format!("{flag}=")))
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

    fn args(args: &[&str]) -> AbArgs {
        Cli::try_parse_from(std::iter::once("ab").chain(args.iter().copied()))
            .unwrap()
            .ab
    }

    /// The claim `ab` writes for `args`, read back as `reproduce --claims` reads it.
    fn claim(a: &[&str]) -> Result<Claim, UsageError> {
        let a = args(a);
        let claim = claim_of(&a, stated(&a).unwrap_or(Direction::Higher))?;
        let text = Claim::file_text(std::slice::from_ref(&claim));
        let read = Claim::parse_file(&text, "ab").unwrap().remove(0);
        assert_eq!(read, claim, "{text}");
        Ok(read)
    }

    #[test]
    fn the_claim_runs_both_commands_through_sh_and_parses_as_reproduce_reads_it() {
        let c = claim(&[
            "--jmh",
            "org.Bench.run",
            "--",
            "java -jar \"main dir/b.jar\" Bench -f 1",
            "java -jar pr.jar Bench -f 1",
        ])
        .unwrap();
        assert_eq!(c.benchmark.as_deref(), Some("org.Bench.run"));
        assert_eq!(c.min_effect, Some(1.05));
        let base = c.baseline.command.as_ref().unwrap();
        assert_eq!(base.program, "sh");
        assert_eq!(
            base.args,
            [
                "-c",
                "java -jar \"main dir/b.jar\" Bench -f 1 -rf json -rff \"$0\"",
                "{result}"
            ]
        );
        let c = claim(&["--lines", "--", "a", "b"]).unwrap();
        assert_eq!(c.contender.command.as_ref().unwrap().args, ["-c", "b"]);
    }

    #[test]
    fn lower_is_better_claims_at_most_the_inverse_and_says_so() {
        let c = claim(&["--lines", "--lower", "--min-effect", "1.05", "--", "a", "b"]).unwrap();
        assert_eq!(c.direction, Some(Direction::Lower));
        assert_eq!(c.min_effect, Some(0.9524));
        assert_eq!(c.expected(), "<= 0.9524");
        assert!(c.title.contains("at most 0.9524x"), "{}", c.title);
        let c = claim(&["--lines", "--lower", "--min-effect", "2", "--", "a", "b"]).unwrap();
        assert_eq!(c.min_effect, Some(0.5));
        let c = claim(&["--lines", "--min-effect", "1.2", "--", "a", "b"]).unwrap();
        assert_eq!(
            (c.direction, c.min_effect),
            (Some(Direction::Higher), Some(1.2))
        );
    }

    #[test]
    fn what_it_cannot_run_is_a_usage_error() {
        for (a, says) in [
            (&["--", "a", "b"][..], "--jmh BENCHMARK"),
            (&["--jmh", "B", "--", "a -rf csv", "b"], "adds `-rf json"),
            (
                &["--jmh", "B", "--", "a", "b -rff=x.json"],
                "adds `-rf json",
            ),
            (&["--lines", "--", " ", "b"], "empty"),
            (
                &["--lines", "--min-effect", "0", "--", "a", "b"],
                "positive",
            ),
        ] {
            let e = claim(a).unwrap_err().0;
            assert!(e.contains(says), "{a:?}: {e}");
        }
    }

    #[test]
    fn result_flags_are_found_as_words_not_as_text() {
        assert!(!sets_result_flags("java -jar /opt/pr-rfid/b.jar -f 1"));
        assert!(!sets_result_flags("java -jar 'a -rf b.jar'"));
        assert!(sets_result_flags("java -jar b.jar -rf json"));
        assert!(claim(&["--jmh", "B", "--", "java -jar /opt/pr-rfid/b.jar", "b"]).is_ok());
    }
}
