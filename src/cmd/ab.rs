//! `critsec ab -- BASELINE CONTENDER`: a reviewer's A/B test of two builds of a benchmark in one
//! command, without writing a claim file. It writes the claim it tested (so that the run can be
//! repeated, edited or published) and runs it as `critsec reproduce --claims` does. With
//! `--results` it judges two JMH result files already on disk instead, forks as replicates.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use critsec_harness::Claim;
use critsec_harness::claims::reproduce::{PairedSettings, judge_recorded};
use critsec_harness::format::verdict::VerdictFile;
use critsec_harness::format::write_atomically;
use critsec_harness::run::environment::{git_commit, machine, now_utc};
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
    /// The sides print one `value[,unit]` line per iteration on stdout.
    #[arg(long)]
    pub lines: bool,
    /// The metric compared: `primary`, or a JMH secondary metric (e.g. `gc.alloc.rate.norm`).
    #[arg(long, default_value = "primary")]
    pub metric: String,
    /// The claimed effect: the contender is at least this times the baseline (at most its
    /// inverse with --lower).
    #[arg(long, default_value_t = 1.05, value_name = "RATIO")]
    pub min_effect: f64,
    /// Lower is better (a time per operation, an allocation rate).
    #[arg(long)]
    pub lower: bool,
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
    let text = claim_text(args)?;
    if args.results {
        return judge_files(args, &text);
    }
    // The file is parsed as `reproduce --claims` will parse it, before it is written.
    Claim::parse_file(&text, &args.claims_out.display().to_string())?;
    write_atomically(&args.claims_out, text.as_bytes())
        .with_context(|| format!("writing the claim to {}", args.claims_out.display()))?;
    println!(
        "# the claim is in {}; repeat the run with: critsec reproduce --claims {}",
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

/// Judges the claim of `text` from the two result files `args` names; nothing runs.
fn judge_files(args: &AbArgs, text: &str) -> anyhow::Result<ExitCode> {
    let claim = Claim::parse_file(text, "critsec ab")?.remove(0);
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read the JMH result file {path}: {e}")))
    };
    let (baseline, contender) = (read(&args.baseline)?, read(&args.contender)?);
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

/// The claim file `critsec ab` tests: one claim on two commands.
fn claim_text(args: &AbArgs) -> Result<String, UsageError> {
    if !(args.min_effect.is_finite() && args.min_effect > 0.0) {
        return Err(UsageError(format!(
            "--min-effect must be a positive ratio, not {}",
            args.min_effect
        )));
    }
    let output = match (&args.jmh, args.lines) {
        (Some(_), _) => "jmh",
        (None, true) => "lines",
        (None, false) => {
            return Err(UsageError(
                "say what the commands report: --jmh BENCHMARK (a JMH run) or --lines (one \
                 value[,unit] line per iteration)"
                    .into(),
            ));
        }
    };
    let side = |command: &str| -> Result<String, UsageError> {
        if command.trim().is_empty() {
            return Err(UsageError("a side's command is empty".into()));
        }
        let sh_args = if output == "jmh" {
            if command.contains("-rf") && !args.results {
                return Err(UsageError(format!(
                    "`{command}` sets -rf or -rff: critsec ab adds `-rf json -rff FILE` itself"
                )));
            }
            // `sh -c SCRIPT FILE` runs SCRIPT with FILE as $0: the result file critsec reads.
            format!(
                "[\"-c\", {}, \"{{result}}\"]",
                quoted(&format!("{command} -rf json -rff \"$0\""))
            )
        } else {
            format!("[\"-c\", {}]", quoted(command))
        };
        Ok(format!(
            "{{ command = {{ program = \"sh\", args = {sh_args}, output = \"{output}\", timeout_s = {} }} }}",
            args.timeout_s
        ))
    };
    let (direction, bound) = if args.lower {
        ("lower", format!("at most {}x", args.min_effect))
    } else {
        ("higher", format!("at least {}x", args.min_effect))
    };
    let benchmark = args
        .jmh
        .as_ref()
        .map(|b| format!("benchmark = {}\n", quoted(b)))
        .unwrap_or_default();
    Ok(format!(
        "# Written by `critsec ab`; repeat with `critsec reproduce --claims THIS_FILE`.\n\
         [[claim]]\n\
         id = {id}\n\
         title = {title}\n\
         source = \"critsec ab\"\n\
         source_figure = {figure}\n\
         {benchmark}\
         metric = {metric}\n\
         direction = \"{direction}\"\n\
         min_effect = {min_effect:?}\n\
         baseline = {baseline}\n\
         contender = {contender}\n",
        id = quoted(&args.id),
        title = quoted(&format!(
            "The contender's {} is {bound} the baseline's",
            args.metric
        )),
        figure = quoted(&format!("the reviewer's expectation: {bound}")),
        metric = quoted(&args.metric),
        min_effect = args.min_effect,
        baseline = side(&args.baseline)?,
        contender = side(&args.contender)?,
    ))
}

/// `text` as a TOML basic string (JSON's escapes are TOML's).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
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

    fn text(args: &[&str]) -> Result<String, UsageError> {
        let cli = Cli::try_parse_from(std::iter::once("ab").chain(args.iter().copied())).unwrap();
        claim_text(&cli.ab)
    }

    #[test]
    fn the_claim_runs_both_commands_through_sh_and_parses_as_reproduce_reads_it() {
        let t = text(&[
            "--jmh",
            "org.Bench.run",
            "--",
            "java -jar \"main dir/b.jar\" Bench -f 1",
            "java -jar pr.jar Bench -f 1",
        ])
        .unwrap();
        let claims = Claim::parse_file(&t, "ab").unwrap();
        let c = &claims[0];
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
        let lines = text(&["--lines", "--lower", "--min-effect", "0.5", "--", "a", "b"]).unwrap();
        let c = &Claim::parse_file(&lines, "ab").unwrap()[0];
        assert_eq!(c.contender.command.as_ref().unwrap().args, ["-c", "b"]);
        assert_eq!(c.min_effect, Some(0.5));
    }

    #[test]
    fn what_it_cannot_run_is_a_usage_error() {
        for (args, says) in [
            (&["--", "a", "b"][..], "--jmh BENCHMARK"),
            (&["--jmh", "B", "--", "a -rf csv", "b"], "adds `-rf json"),
            (&["--lines", "--", " ", "b"], "empty"),
            (
                &["--lines", "--min-effect", "0", "--", "a", "b"],
                "positive",
            ),
        ] {
            let e = text(args).unwrap_err().0;
            assert!(e.contains(says), "{args:?}: {e}");
        }
    }
}
