//! `critsec ab -- BASELINE CONTENDER`: two command lines as the sides, each run by `sh -c` once
//! per replicate, read as JMH's result file (`--jmh`) or as lines of values (`--lines`).

use critsec_harness::claims::{CommandSide, Reader};
use critsec_harness::{Claim, Direction, Side};

use super::super::UsageError;
use super::AbArgs;

/// The claim on the two command lines `args` names, the contender better in `direction`.
pub(super) fn claim(args: &AbArgs, direction: Direction) -> Result<Claim, UsageError> {
    let reader = match (&args.jmh, args.lines) {
        (Some(_), _) => Reader::Jmh,
        (None, true) => Reader::Lines,
        (None, false) => {
            return Err(UsageError(
                "say what the commands report: --jmh BENCHMARK (a JMH run) or --lines (one \
                 value[,unit] line per iteration)"
                    .into(),
            ));
        }
    };
    let line = |side: &Option<String>| side.clone().unwrap_or_default();
    let mut claim = super::claim(
        args,
        direction,
        side(args, reader, &line(&args.baseline))?,
        side(args, reader, &line(&args.contender))?,
    );
    claim.benchmark = args.jmh.clone();
    claim.mode = args.mode.clone();
    Ok(claim)
}

/// One side running `command` through `sh`.
pub(super) fn side(args: &AbArgs, reader: Reader, command: &str) -> Result<Side, UsageError> {
    if command.trim().is_empty() {
        return Err(UsageError("a side's command is empty".into()));
    }
    let sh_args = match reader {
        Reader::Jmh => {
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
        _ => vec!["-c".to_string(), command.to_string()],
    };
    Ok(Side {
        command: Some(CommandSide {
            timeout_s: args.timeout_s,
            ..CommandSide::new("sh", sh_args, reader)
        }),
        ..Side::default()
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
    use super::super::stated;
    use super::super::tests::{args, read_back};
    use super::*;

    /// The claim `ab` writes for `a`, read back as `reproduce --claims` reads it.
    fn claim_of(a: &[&str]) -> Result<Claim, UsageError> {
        let a = args(a);
        claim(&a, stated(&a).unwrap_or(Direction::Higher)).map(|c| read_back(&c))
    }

    #[test]
    fn the_claim_runs_both_commands_through_sh_and_parses_as_reproduce_reads_it() {
        let c = claim_of(&[
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
        let c = claim_of(&["--lines", "--", "a", "b"]).unwrap();
        assert_eq!(c.contender.command.as_ref().unwrap().args, ["-c", "b"]);
    }

    #[test]
    fn lower_is_better_claims_at_most_the_inverse_and_says_so() {
        let c = claim_of(&["--lines", "--lower", "--min-effect", "1.05", "--", "a", "b"]).unwrap();
        assert_eq!(c.direction, Some(Direction::Lower));
        assert_eq!(c.min_effect, Some(0.9524));
        assert_eq!(c.expected(), "<= 0.9524");
        assert!(c.title.contains("at most 0.9524x"), "{}", c.title);
        let c = claim_of(&["--lines", "--min-effect", "1.2", "--", "a", "b"]).unwrap();
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
        ] {
            let e = claim_of(a).unwrap_err().0;
            assert!(e.contains(says), "{a:?}: {e}");
        }
    }

    #[test]
    fn result_flags_are_found_as_words_not_as_text() {
        assert!(!sets_result_flags("java -jar /opt/pr-rfid/b.jar -f 1"));
        assert!(!sets_result_flags("java -jar 'a -rf b.jar'"));
        assert!(sets_result_flags("java -jar b.jar -rf json"));
        assert!(claim_of(&["--jmh", "B", "--", "java -jar /opt/pr-rfid/b.jar", "b"]).is_ok());
    }
}
