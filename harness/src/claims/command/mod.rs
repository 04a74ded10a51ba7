//! Claim sides that are programs: a reviewer's own benchmark (two JMH jars, any executable),
//! run once per replicate side, its result read from what it writes.
//!
//! Each invocation is one process, the unit of replication: a replicate runs the baseline's
//! and the contender's command once each, in a random order, and compares the means of the
//! iterations each reports. Its `reader` says how to read what it reports:
//! - `jmh`: JMH's `-rf json` file; the command's arguments name it as `{result}` (e.g.
//!   `-rf json -rff {result}`), and critsec reads the iteration scores of every fork of the
//!   claim's `benchmark` (the primary metric, or the secondary metric the claim names);
//! - `lines`: one `value[,unit]` per iteration on standard output, as rebar's runners print
//!   `duration,count`; blank lines and lines starting with `#` are ignored;
//! - `criterion`: a criterion benchmark executable; critsec points `CRITERION_HOME` at a folder
//!   of the invocation's own and reads the time per iteration of the claim's `benchmark` (its
//!   full id) from criterion's `sample.json`: the sample's total time over its iterations;
//! - `divan`: a divan benchmark executable; critsec reads the median of the claim's
//!   `benchmark` (its path, `module::function`) from the table divan prints (it writes no
//!   machine-readable output).
//!
//! A side's program is a path, or, with `cargo_bench`, the benchmark executable of its side's
//! git revision (built by [`crate::claims::build`]).
//!
//! An invocation runs in a process group of its own ([`supervise`]). It ends when the program
//! has exited and its output pipes have closed (a process it started may hold them); what it
//! left running then is killed and named, and at its `timeout_s`, or on an interrupt, the whole
//! group is killed, so nothing it started outlives it. What it reports is read by [`read`].
//!
//! Every invocation has `CRITSEC_REPLICATE` (its replicate's index), `CRITSEC_SIDE` (`baseline`
//! or `contender`) and `RUST_BACKTRACE=0`, `RUST_LIB_BACKTRACE=0` in its environment, with the
//! side's own `env` over them; the rest is inherited.

mod read;
pub(crate) mod supervise;

pub use read::EntrySelection;
pub use read::jmh::parse_jmh;
pub use read::lines::parse_lines;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::claims::claim::{Claim, ClaimKind};
use crate::direction::Direction;
use crate::run::Artifact;
use read::criterion::read_criterion;
use read::divan::DivanTable;
use read::lines::LineValues;
use read::tail;
use supervise::{SpawnOrStop, Stopped};

/// The placeholder in a `jmh` side's arguments that critsec replaces by the result file's path.
pub const RESULT_PLACEHOLDER: &str = "{result}";

/// Set in every invocation's environment: the replicate's index (0, 1, ...).
pub const REPLICATE_ENV: &str = "CRITSEC_REPLICATE";
/// Set in every invocation's environment: `baseline` or `contender`.
pub const SIDE_ENV: &str = "CRITSEC_SIDE";

/// How a command reports its iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reader {
    /// JMH's `-rf json` file, at `{result}`.
    Jmh,
    /// `value[,unit]` per iteration on standard output.
    Lines,
    /// criterion's files, under the `CRITERION_HOME` critsec gives the invocation.
    Criterion,
    /// divan's table on standard output.
    Divan,
}

/// A side that runs a program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSide {
    /// The program (a path, or a name looked up on `PATH`); empty for a `cargo_bench` side.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub program: String,
    /// Instead of a program: this bench target's executable, built from the side's `revision`
    /// with `cargo bench --no-run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cargo_bench: Option<String>,
    /// The package of `cargo_bench`, where the workspace has several with that target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Its arguments; `{result}` becomes the JMH result file's path.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for it (e.g. `JAVA_TOOL_OPTIONS`), recorded in the verdict.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Its working directory (the current one when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// How it reports its iterations (`output` in older claim files).
    #[serde(alias = "output")]
    pub reader: Reader,
    /// Seconds one invocation may take, its output included, before it and every process it
    /// started are killed (JMH's own default is 10 minutes per iteration; this bounds the whole
    /// invocation).
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
}

fn default_timeout() -> u64 {
    600
}

/// The longest `timeout_s` a side may set: a week, longer than any benchmark invocation should
/// run and far inside what the clock can count.
pub const MAX_TIMEOUT_S: u64 = 7 * 24 * 3600;

impl CommandSide {
    /// A side that runs `program` with `args`, read by `reader`, with no environment of its
    /// own, in the current folder, within the default time limit.
    pub fn new(program: impl Into<String>, args: Vec<String>, reader: Reader) -> Self {
        CommandSide {
            program: program.into(),
            cargo_bench: None,
            package: None,
            args,
            env: BTreeMap::new(),
            cwd: None,
            reader,
            timeout_s: default_timeout(),
        }
    }

    /// The command line with its environment, for labels (`K=V program args`).
    pub fn label(&self) -> String {
        let env = self.env.iter().map(|(k, v)| format!("{k}={v}"));
        env.chain(std::iter::once(self.program.clone()))
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What the side's revision builds for it, when it runs a `cargo_bench` target.
    pub fn artifact(&self) -> Option<Artifact> {
        self.cargo_bench
            .as_ref()
            .map(|target| Artifact::CargoBench {
                target: target.clone(),
                package: self.package.clone(),
            })
    }

    /// The side's own consistency.
    pub fn check(&self) -> Result<(), String> {
        match (self.program.trim().is_empty(), &self.cargo_bench) {
            (true, None) => {
                return Err("a command side needs a `program` or a `cargo_bench`".into());
            }
            (false, Some(_)) => {
                return Err(
                    "a command side runs a `program` or a `cargo_bench` target's build, not both"
                        .into(),
                );
            }
            _ => {}
        }
        if self.package.is_some() && self.cargo_bench.is_none() {
            return Err("`package` names the package of a `cargo_bench` target".into());
        }
        let names_result = self.args.iter().any(|a| a.contains(RESULT_PLACEHOLDER));
        match self.reader {
            Reader::Jmh if !names_result => Err(
                "a `jmh` command side must name its result file as {result} in `args` (e.g. \"-rf\", \"json\", \"-rff\", \"{result}\")".into(),
            ),
            _ if self.timeout_s == 0 => Err("`timeout_s` must be at least 1".into()),
            _ if self.timeout_s > MAX_TIMEOUT_S => Err(format!(
                "`timeout_s` must be at most {MAX_TIMEOUT_S} (a week); it is {}",
                self.timeout_s
            )),
            _ => Ok(()),
        }
    }
}

/// What one invocation reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// The benchmark it reported (JMH's name, or the claim's `benchmark` for lines).
    pub benchmark: String,
    /// The unit of its values.
    pub unit: String,
    /// Which way its values improve, where the output says (JMH's mode, for the primary
    /// score); `None` where it does not.
    pub better: Option<Direction>,
    /// Its iteration values, over all its forks, fork after fork.
    pub values: Vec<f64>,
    /// How many of `values` each fork (JMH's `-f N`: a process each) gave, in order; one entry
    /// for a program that prints lines.
    pub forks: Vec<usize>,
    /// The runtime it reported, in words (JMH: JDK, VM, JMH version, JVM arguments); empty for
    /// a program that prints lines.
    pub runtime: String,
    /// Its entry's place among the result file's entries, the order JMH ran them in (0 for a
    /// program that prints lines).
    pub position: usize,
}

impl Invocation {
    /// The mean of its iterations: the invocation's value.
    pub fn mean(&self) -> f64 {
        mean(&self.values)
    }

    /// Each fork's mean of its iterations.
    pub fn fork_means(&self) -> Vec<f64> {
        let mut start = 0;
        self.forks
            .iter()
            .map(|&n| {
                let fork = &self.values[start..start + n];
                start += n;
                mean(fork)
            })
            .collect()
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// Why an invocation gave no result.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// What happened, naming the side and its command.
    pub message: String,
    /// Whether running it again may succeed: it ran and failed, or gave no usable result (a
    /// dead JMH fork); not when it could not start, ran past its time limit or was interrupted.
    pub transient: bool,
}

impl Failure {
    fn transient(message: String) -> Self {
        Failure {
            message,
            transient: true,
        }
    }

    fn lasting(message: String) -> Self {
        Failure {
            message,
            transient: false,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What reads a program's standard output as it runs: its values (lines), its table (divan),
/// or nothing, for a program whose result is in files (JMH, criterion).
enum Reading {
    Lines(LineValues),
    Divan(DivanTable),
    Files,
}

impl Reading {
    fn of(reader: Reader) -> Reading {
        match reader {
            Reader::Lines => Reading::Lines(LineValues::default()),
            Reader::Divan => Reading::Divan(DivanTable::default()),
            Reader::Jmh | Reader::Criterion => Reading::Files,
        }
    }
}

impl supervise::LineSink for Reading {
    fn line(&mut self, line: &[u8]) {
        match self {
            Reading::Lines(values) => values.line(line),
            Reading::Divan(table) => table.line(line),
            Reading::Files => {}
        }
    }
}

/// What one invocation reported, and what it left behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Invoked {
    /// One result per selection.
    pub results: Vec<Invocation>,
    /// The processes it left running after it exited, killed, in words.
    pub left_behind: Option<String>,
}

/// Why `claim`, a ratio claim on `inv`'s metric, contradicts what its output says of the
/// metric's direction: a claim that the contender is "at least" some ratio of a time per
/// operation reads a slowdown as a speed-up. `None` when they agree or the output says nothing.
pub fn direction_conflict(claim: &Claim, inv: &Invocation) -> Option<String> {
    let (ClaimKind::Ratio, Some(claimed), Some(better)) = (claim.kind, claim.direction, inv.better)
    else {
        return None;
    };
    let word = |d: Direction| match d {
        Direction::Higher => "higher",
        Direction::Lower => "lower",
    };
    (claimed != better).then(|| {
        format!(
            "{} reports {} in {}, where {} is better, but the claim says `direction = \"{}\"`; \
             a claim on it says `direction = \"{}\"` (critsec ab: {})",
            inv.benchmark,
            claim.metric,
            inv.unit,
            word(better),
            word(claimed),
            word(better),
            match better {
                Direction::Lower => "--lower",
                Direction::Higher => "without --lower",
            }
        )
    })
}

/// Runs `side` once (`which` names it in errors: `baseline`, `contender`, or `shared
/// invocation` for one that serves both) and reads its result once per selection: each of
/// `selects` picks a JMH entry (needed when the file has several; a program that prints lines
/// has one result, so one selection), `metric` is `primary` or a secondary metric's name.
pub fn invoke(
    side: &CommandSide,
    which: &str,
    replicate: usize,
    selects: &[EntrySelection],
    metric: &str,
) -> Result<Invoked, Failure> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let own = |what: &str| {
        std::env::temp_dir().join(format!("critsec-{}-{n}-{what}", std::process::id()))
    };
    // The invocation's own result file (JMH) or folder (criterion), gone when it is read.
    let (result, criterion_home) = (own("result.json"), own("criterion"));
    let clean = || {
        let _ = std::fs::remove_file(&result);
        let _ = std::fs::remove_dir_all(&criterion_home);
    };
    clean();
    let args: Vec<String> = side
        .args
        .iter()
        .map(|a| a.replace(RESULT_PLACEHOLDER, &result.display().to_string()))
        .collect();
    let mut cmd = Command::new(&side.program);
    // Which replicate and side this process is, for a benchmark that logs or seeds by it; and,
    // as in forks, backtraces off unless the side's own `env` turns them on (this machine's
    // environment must not decide how a Rust benchmark behaves).
    cmd.args(&args)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .env(REPLICATE_ENV, replicate.to_string())
        .env(SIDE_ENV, which)
        .envs(&side.env);
    if side.reader == Reader::Criterion {
        cmd.env("CRITERION_HOME", &criterion_home);
    }
    if let Some(dir) = &side.cwd {
        cmd.current_dir(dir);
    }
    // A limit the clock cannot count to is none (a claims file cannot set one: `check`).
    let timeout = Duration::from_secs(side.timeout_s);
    let ran = supervise::run(cmd, timeout, Reading::of(side.reader));
    let finished = ran.map_err(|e| {
        clean();
        Failure::lasting(match e {
            SpawnOrStop::Spawn(e) => {
                format!("{which} command `{}` could not start: {e}", side.program)
            }
            SpawnOrStop::Stopped(Stopped(why)) => {
                format!("{which} command `{}` {why}", side.label())
            }
        })
    })?;
    let left_behind = finished.left_behind.clone();
    let with_left = |message: String| match &left_behind {
        Some(left) => format!("{message}; it {left}"),
        None => message,
    };
    if !finished.status.success() {
        clean();
        return Err(Failure::transient(with_left(format!(
            "{which} command `{}` failed ({}); the end of its stderr: {}",
            side.label(),
            finished.status,
            tail(&finished.stderr_tail, 400)
        ))));
    }
    let benchmark = selects.first().and_then(|s| s.benchmark);
    let parsed = match finished.sink {
        Reading::Lines(values) => {
            debug_assert_eq!(selects.len(), 1, "lines are one result");
            values
                .finish(benchmark.unwrap_or("lines"))
                .map(|one| vec![one])
        }
        Reading::Divan(table) => table.finish(benchmark).map(|one| vec![one]),
        Reading::Files => match side.reader {
            Reader::Criterion => read_criterion(&criterion_home, benchmark).map(|one| vec![one]),
            _ => std::fs::read(&result)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .map_err(|e| format!("no JMH result file at {} ({e})", result.display()))
                .and_then(|t| {
                    selects
                        .iter()
                        .map(|select| parse_jmh(&t, select, metric))
                        .collect()
                }),
        },
    };
    clean();
    // A reader's error comes with the end of what the program printed: JMH exits 0 with an
    // empty result when its fork died or the benchmark threw, and the cause is there.
    let parsed = parsed.map_err(|e| {
        format!(
            "{e}; the end of its output: {}",
            tail(
                &format!("{}\n{}", finished.stdout_tail, finished.stderr_tail),
                600
            )
        )
    });
    match parsed {
        Ok(results) => Ok(Invoked {
            results,
            left_behind,
        }),
        Err(e) => Err(Failure::transient(with_left(format!(
            "{which} command `{}`: {e}",
            side.label()
        )))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side that runs `script` with `sh -c`, printing lines, with a time limit of `timeout_s`.
    fn sh(script: &str, timeout_s: u64) -> CommandSide {
        CommandSide {
            timeout_s,
            ..CommandSide::new("sh", vec!["-c".into(), script.into()], Reader::Lines)
        }
    }

    fn run(side: &CommandSide) -> Result<Invoked, Failure> {
        invoke(
            side,
            "contender",
            0,
            &[EntrySelection::default()],
            "primary",
        )
    }

    /// Whether any process of group `pgid` exists.
    fn group_exists(pgid: libc::pid_t) -> bool {
        // SAFETY: signal 0 sends nothing; it asks whether any process of the group exists.
        let found = unsafe { libc::kill(-pgid, 0) };
        let errno = std::io::Error::last_os_error().raw_os_error();
        !(found == -1 && errno == Some(libc::ESRCH))
    }

    /// The process group a message says it killed.
    fn killed_group(e: &str) -> libc::pid_t {
        e.split("process group ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no process group in: {e}"))
    }

    #[test]
    fn a_side_past_its_time_limit_is_killed_with_every_process_it_started() {
        // `sh` prints and exits at once; the `sleep` it leaves behind holds its stdout.
        let failure = run(&sh("sleep 30 & echo 1.0", 1)).unwrap_err();
        assert!(!failure.transient, "a time limit is not retried: {failure}");
        let e = failure.message;
        assert!(
            e.contains("contender command `sh -c sleep 30 & echo 1.0`")
                && e.contains("time limit of 1 s"),
            "{e}"
        );
        assert!(!group_exists(killed_group(&e)), "{e}");
    }

    #[test]
    fn what_a_finished_side_leaves_running_is_killed_and_named() {
        // The `sleep` lets go of the pipes, so the invocation ends when `sh` does.
        let invoked = run(&sh("sleep 30 >/dev/null 2>&1 & echo 1.0", 60)).unwrap();
        assert_eq!(invoked.results[0].values, vec![1.0]);
        let left = invoked.left_behind.expect("the sleep is named");
        assert!(
            left.contains("1 process(es)") && left.contains("(sleep)"),
            "{left}"
        );
        // Dead, if maybe not yet reaped by whoever adopted it.
        let pid = left
            .rsplit(": ")
            .next()
            .and_then(|p| p.split(' ').next())
            .unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next());
        assert!(matches!(state, None | Some("Z")), "{left}: {stat}");
        // A side that starts nothing leaves nothing.
        assert_eq!(run(&sh("echo 1.0", 60)).unwrap().left_behind, None);
        // A failing side's error names what it left too.
        let e = run(&sh("sleep 30 >/dev/null 2>&1 & exit 3", 60)).unwrap_err();
        assert!(
            e.message.contains("exit status: 3") && e.message.contains("(sleep)"),
            "{e}"
        );
    }

    #[test]
    fn output_that_is_not_utf8_loses_nothing_else() {
        let i = run(&sh(r"printf '# caf\351\n2.5\n'; printf 'x\377y\n' >&2", 60)).unwrap();
        assert_eq!(i.results[0].values, vec![2.5]);
        let e = run(&sh(r"printf 'bad \377 news\n' >&2; exit 1", 60)).unwrap_err();
        assert!(e.message.ends_with("bad \u{fffd} news"), "{e}");
    }

    #[test]
    fn a_side_that_prints_tens_of_megabytes_is_read_to_its_last_words() {
        // 32 MB of stderr, then a line the error must end with; only a tail of it is kept.
        let script =
            "head -c 33554432 /dev/zero | tr '\\0' x >&2; echo >&2; echo the end >&2; exit 1";
        let e = run(&sh(script, 600)).unwrap_err();
        assert!(
            e.message.ends_with("the end"),
            "{}",
            &e.message[e.message.len() - 80..]
        );
        assert!(e.message.len() < 1000, "{} bytes", e.message.len());
    }

    #[test]
    fn a_time_limit_too_long_for_the_clock_is_no_limit_not_a_panic() {
        let i = invoke(
            &sh("echo 1.0", u64::MAX),
            "baseline",
            0,
            &[EntrySelection::default()],
            "primary",
        )
        .unwrap()
        .results
        .remove(0);
        assert_eq!(i.values, vec![1.0]);
    }

    #[test]
    fn a_jmh_side_must_name_its_result_file() {
        let side = CommandSide::new("java", vec!["-jar".into(), "b.jar".into()], Reader::Jmh);
        assert!(side.check().unwrap_err().contains("{result}"));
    }
}
