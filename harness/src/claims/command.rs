//! Claim sides that are programs: a reviewer's own benchmark (two JMH jars, any executable),
//! run once per replicate side, its result read from what it writes.
//!
//! Each invocation is one process, the unit of replication: a replicate runs the baseline's
//! and the contender's command once each, in a random order, and compares the means of the
//! iterations each reports. Two output protocols:
//! - `jmh`: JMH's `-rf json` file; the command's arguments name it as `{result}` (e.g.
//!   `-rf json -rff {result}`), and critsec reads the iteration scores of every fork of the
//!   claim's `benchmark` (the primary metric, or the secondary metric the claim names);
//! - `lines`: one `value[,unit]` per iteration on standard output, as rebar's runners print
//!   `duration,count`; blank lines and lines starting with `#` are ignored.
//!
//! An invocation runs in a process group of its own. It ends when the program has exited and
//! its output pipes have closed (a process it started may hold them); at its `timeout_s`, or on
//! an interrupt, the whole group is killed, so nothing it started outlives it.
//!
//! Every invocation has `CRITSEC_REPLICATE` (its replicate's index), `CRITSEC_SIDE` (`baseline`
//! or `contender`) and `RUST_BACKTRACE=0`, `RUST_LIB_BACKTRACE=0` in its environment, with the
//! side's own `env` over them; the rest is inherited.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::claims::claim::Claim;
use crate::format::jmh::{JmhEntry, JmhMetric, read_entries};
use crate::run::runner::interrupted;

/// The placeholder in a `jmh` side's arguments that critsec replaces by the result file's path.
pub const RESULT_PLACEHOLDER: &str = "{result}";

/// Set in every invocation's environment: the replicate's index (0, 1, ...).
pub const REPLICATE_ENV: &str = "CRITSEC_REPLICATE";
/// Set in every invocation's environment: `baseline` or `contender`.
pub const SIDE_ENV: &str = "CRITSEC_SIDE";

/// How a command reports its iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// JMH's `-rf json` file, at `{result}`.
    Jmh,
    /// `value[,unit]` per iteration on standard output.
    Lines,
}

/// A side that runs a program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSide {
    /// The program (a path, or a name looked up on `PATH`).
    pub program: String,
    /// Its arguments; `{result}` becomes the JMH result file's path.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for it (e.g. `JAVA_TOOL_OPTIONS`), recorded in the verdict.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its working directory (the current one when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// How it reports its iterations.
    pub output: OutputFormat,
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
    /// The command line with its environment, for labels (`K=V program args`).
    pub fn label(&self) -> String {
        let env = self.env.iter().map(|(k, v)| format!("{k}={v}"));
        env.chain(std::iter::once(self.program.clone()))
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The side's own consistency.
    pub fn check(&self) -> Result<(), String> {
        if self.program.trim().is_empty() {
            return Err("a command side needs a `program`".into());
        }
        let names_result = self.args.iter().any(|a| a.contains(RESULT_PLACEHOLDER));
        match self.output {
            OutputFormat::Jmh if !names_result => Err(
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

/// The last `n` characters of `text`, on one line's worth of display.
fn tail(text: &str, n: usize) -> String {
    let t = text.trim_end();
    let start = t
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(0);
    t[start..].to_string()
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

/// Runs `side` once (`which` names it in errors: `baseline`, `contender`, or `shared
/// invocation` for one that serves both) and reads its result once per selection: each of `selects`
/// picks a JMH entry (needed when the file has several; a program that prints lines has one
/// result, so one selection), `metric` is `primary` or a secondary metric's name.
pub fn invoke(
    side: &CommandSide,
    which: &str,
    replicate: usize,
    selects: &[Selection],
    metric: &str,
) -> Result<Vec<Invocation>, Failure> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let result: PathBuf =
        std::env::temp_dir().join(format!("critsec-{}-{n}-result.json", std::process::id()));
    let _ = std::fs::remove_file(&result);
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
        .envs(&side.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &side.cwd {
        cmd.current_dir(dir);
    }
    // Its own process group, so that a time limit or an interrupt ends everything it started.
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|e| {
        Failure::lasting(format!(
            "{which} command `{}` could not start: {e}",
            side.program
        ))
    })?;
    let started = Instant::now();
    // A limit the clock cannot count to is none (a claims file cannot set one: `check`).
    let deadline = started.checked_add(Duration::from_secs(side.timeout_s));
    // Drain both pipes on their own threads, so a chatty program never blocks on a full pipe.
    let (tx, rx) = mpsc::channel::<(usize, String)>();
    let pipes: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ];
    for (slot, pipe) in pipes.into_iter().enumerate() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut out = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut out);
            }
            let _ = tx.send((slot, out));
        });
    }
    drop(tx);
    // Both pipes to their end (a process the program started may hold them after it exits),
    // then the program's exit; all within the time limit.
    let mut output: [Option<String>; 2] = [None, None];
    let stopped = |child: &mut Child, why: &str| {
        let _ = std::fs::remove_file(&result);
        Failure::lasting(format!(
            "{which} command `{}` {why}: {}",
            side.label(),
            kill_group(child, started)
        ))
    };
    let status = loop {
        if output.iter().all(Option::is_some) {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => {
                    let why = format!("could not be waited for ({e})");
                    return Err(stopped(&mut child, &why));
                }
            }
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) {
            let why = format!("ran past its time limit of {} s", side.timeout_s);
            return Err(stopped(&mut child, &why));
        }
        if interrupted() {
            return Err(stopped(&mut child, "was interrupted"));
        }
        let wait = left.map_or(POLL, |left| left.min(POLL));
        if output.iter().any(Option::is_none) {
            match rx.recv_timeout(wait) {
                Ok((slot, text)) => output[slot] = Some(text),
                Err(RecvTimeoutError::Timeout) => {}
                // Each reader sends before it ends; none is left to.
                Err(RecvTimeoutError::Disconnected) => {
                    output = output.map(|o| Some(o.unwrap_or_default()));
                }
            }
        } else {
            std::thread::sleep(wait);
        }
    };
    let [stdout, stderr] = output.map(Option::unwrap_or_default);
    if !status.success() {
        let _ = std::fs::remove_file(&result);
        return Err(Failure::transient(format!(
            "{which} command `{}` failed ({status}); the end of its stderr: {}",
            side.label(),
            tail(&stderr, 400)
        )));
    }
    let parsed = match side.output {
        OutputFormat::Lines => {
            debug_assert_eq!(selects.len(), 1, "lines are one result");
            let benchmark = selects.first().and_then(|s| s.benchmark);
            parse_lines(&stdout, benchmark.unwrap_or("lines")).map(|one| vec![one])
        }
        OutputFormat::Jmh => {
            let text = std::fs::read_to_string(&result)
                .map_err(|e| format!("no JMH result file at {} ({e})", result.display()));
            let _ = std::fs::remove_file(&result);
            // JMH exits 0 with an empty result when its fork died or the benchmark threw; the
            // cause is in what it printed.
            text.and_then(|t| {
                selects
                    .iter()
                    .map(|select| parse_jmh(&t, select, metric))
                    .collect()
            })
            .map_err(|e| {
                format!(
                    "{e}; the end of its output: {}",
                    tail(&format!("{stdout}\n{stderr}"), 600)
                )
            })
        }
    };
    parsed.map_err(|e| Failure::transient(format!("{which} command `{}`: {e}", side.label())))
}

/// How often a waiting invocation looks at its program, the clock and for an interrupt.
const POLL: Duration = Duration::from_millis(10);

/// How long a killed program's processes may take to be reaped (by their parents, or by init
/// for orphans, which may be slow to) before `invoke` stops waiting for them.
const REAP_GRACE: Duration = Duration::from_secs(10);

/// Kills `child`'s process group: every process it started and did not move to a group of its
/// own. Reaps `child`, then waits (up to [`REAP_GRACE`]) until the group is gone, so that when
/// `invoke` returns, nothing of the program runs. What was killed, in words.
fn kill_group(child: &mut Child, started: Instant) -> String {
    let pid = child.id();
    let pgid = pid as libc::pid_t;
    // SAFETY: killpg(2) takes plain integers. The group is the child's own (`process_group(0)`)
    // and the child is not reaped yet, so its id cannot have been reused by another group.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
    let _ = child.wait();
    let after = started.elapsed().as_secs_f64();
    let reaped = Instant::now();
    // SAFETY: signal 0 sends nothing; it asks whether any process of the group exists.
    while unsafe { libc::kill(-pgid, 0) } == 0 {
        if reaped.elapsed() >= REAP_GRACE {
            return format!(
                "killed its process group {pgid} (pid {pid} and the processes it started) after {after:.1} s; some of them were not reaped within {} s",
                REAP_GRACE.as_secs()
            );
        }
        std::thread::sleep(POLL);
    }
    format!(
        "killed its process group {pgid} (pid {pid} and the processes it started) after {after:.1} s"
    )
}

/// Values of the line protocol: `value[,unit]` per iteration.
pub fn parse_lines(stdout: &str, benchmark: &str) -> Result<Invocation, String> {
    let mut values = Vec::new();
    let mut unit: Option<String> = None;
    for (i, line) in stdout.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (v, u) = match line.split_once(',') {
            Some((v, u)) => (v.trim(), u.trim()),
            None => (line, ""),
        };
        let value: f64 = v.parse().map_err(|_| {
            format!(
                "stdout line {} is not `value[,unit]`: `{}`",
                i + 1,
                tail(line, 80)
            )
        })?;
        match &unit {
            Some(prev) if prev != u => {
                return Err(format!(
                    "stdout line {} has unit `{u}`, earlier lines `{prev}`",
                    i + 1
                ));
            }
            Some(_) => {}
            None => unit = Some(u.to_string()),
        }
        values.push(value);
    }
    if values.is_empty() {
        return Err("printed no `value[,unit]` line on stdout".into());
    }
    Ok(Invocation {
        benchmark: benchmark.to_string(),
        unit: unit.unwrap_or_default(),
        forks: vec![values.len()],
        values,
        runtime: String::new(),
        position: 0,
    })
}

/// Which entry of a JMH result a side reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    /// The benchmark's name, or the end of it after a `.` (the claim's `benchmark`).
    pub benchmark: Option<&'a str>,
    /// @Param values the entry must have (the claim's and the side's `params`).
    pub params: Option<&'a BTreeMap<String, String>>,
}

impl<'a> Selection<'a> {
    /// The entry of `claim`'s `benchmark` with a side's resolved `params` (the claim's shared
    /// ones under the side's own).
    pub fn of(claim: &'a Claim, params: &'a BTreeMap<String, String>) -> Self {
        Selection {
            benchmark: claim.benchmark.as_deref(),
            params: Some(params),
        }
    }

    fn matches(&self, e: &JmhEntry) -> bool {
        let named = self
            .benchmark
            .is_none_or(|b| e.benchmark == b || e.benchmark.ends_with(&format!(".{b}")));
        let params = self.params.is_none_or(|want| {
            want.iter().all(|(k, v)| {
                e.params
                    .as_ref()
                    .and_then(|p| p.get(k))
                    .is_some_and(|have| have == v)
            })
        });
        named && params
    }

    /// `benchmark` and `params` in words, for errors.
    fn words(&self) -> String {
        let mut w = self
            .benchmark
            .map(|b| format!(" for {b}"))
            .unwrap_or_default();
        if let Some(p) = self.params.filter(|p| !p.is_empty()) {
            w += &format!(" with {}", pairs_text(p));
        }
        w
    }
}

/// The runtime a JMH entry reports, in words: `JDK 17.0.9, OpenJDK 64-Bit Server VM 17.0.9+9,
/// JMH 1.37, args -Xmx2g` (what it leaves out, it did not report).
fn runtime(e: &JmhEntry) -> String {
    let mut parts = Vec::new();
    if !e.jdk_version.is_empty() {
        parts.push(format!("JDK {}", e.jdk_version));
    }
    let vm = format!("{} {}", e.vm_name, e.vm_version);
    if !vm.trim().is_empty() {
        parts.push(vm.trim().to_string());
    }
    if !e.jmh_version.is_empty() {
        parts.push(format!("JMH {}", e.jmh_version));
    }
    if !e.jvm_args.is_empty() {
        parts.push(format!("args {}", e.jvm_args.join(" ")));
    }
    if !e.jvm.is_empty() {
        parts.push(e.jvm.clone());
    }
    parts.join(", ")
}

/// An entry's name and @Param values, as errors list them.
fn entry_words(e: &JmhEntry) -> String {
    match &e.params {
        Some(p) if !p.is_empty() => format!("{} [{}]", e.benchmark, pairs_text(p)),
        _ => e.benchmark.clone(),
    }
}

/// `k=v, k=v` in key order.
fn pairs_text(params: &BTreeMap<String, String>) -> String {
    let kv: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    kv.join(", ")
}

/// Values of a JMH result file: the iteration scores of every fork of the entry `select` picks
/// (its score when it lists none).
pub fn parse_jmh(text: &str, select: &Selection, metric: &str) -> Result<Invocation, String> {
    let start = text.trim_start();
    if start.is_empty() {
        return Err("the JMH result file is empty".into());
    }
    if !start.starts_with('[') {
        return Err(format!(
            "the JMH result file is not JSON (it starts `{}`): JMH writes CSV unless told \
             otherwise; add `-rf json` to the command's arguments",
            start
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(40)
                .collect::<String>()
        ));
    }
    let entries = read_entries(text, "the JMH result file").map_err(|e| e.to_string())?;
    if entries.is_empty() {
        return Err(
            "the JMH result is empty ([]): JMH writes that when its fork died or the benchmark \
             threw"
                .into(),
        );
    }
    let chosen: Vec<(usize, &JmhEntry)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| select.matches(e))
        .collect();
    let all = || {
        entries
            .iter()
            .map(entry_words)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (position, entry) = match chosen.as_slice() {
        [one] => *one,
        [] => {
            return Err(format!(
                "the JMH result has no entry{}; it has: {}",
                select.words(),
                all()
            ));
        }
        _ => {
            return Err(format!(
                "the JMH result has {} entries{}; pick one with the claim's `benchmark` and the side's `params` (it has: {})",
                chosen.len(),
                select.words(),
                all()
            ));
        }
    };
    let m: &JmhMetric = if metric == "primary" {
        &entry.primary_metric
    } else {
        entry.secondary_metrics.get(metric).ok_or_else(|| {
            format!(
                "the JMH result has no secondary metric `{metric}`; it has: {}",
                entry
                    .secondary_metrics
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?
    };
    // Every iteration as written, NaN included (whoever uses the values decides what they may
    // be); the score stands in only for a file that lists no iterations.
    let values: Vec<f64> = m.raw_data.iter().flatten().flatten().map(|v| v.0).collect();
    let forks: Vec<usize> = m
        .raw_data
        .iter()
        .flatten()
        .map(Vec::len)
        .filter(|&n| n > 0)
        .collect();
    let (values, forks) = if values.is_empty() {
        (vec![m.score.0], vec![1])
    } else {
        (values, forks)
    };
    Ok(Invocation {
        benchmark: entry.benchmark.clone(),
        unit: m.score_unit.clone(),
        values,
        forks,
        runtime: runtime(entry),
        position,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_values_units_and_name_bad_lines() {
        let i = parse_lines("# warmup\n1.5,ops/s\n\n2.5,ops/s\n", "b").unwrap();
        assert_eq!(i.values, vec![1.5, 2.5]);
        assert_eq!(i.unit, "ops/s");
        assert_eq!(i.mean(), 2.0);
        let e = parse_lines("1.0\nfast\n", "b").unwrap_err();
        assert!(e.contains("line 2") && e.contains("fast"), "{e}");
        let e = parse_lines("1,s\n2,ms\n", "b").unwrap_err();
        assert!(e.contains("unit `ms`"), "{e}");
        assert!(parse_lines("", "b").unwrap_err().contains("no `value"));
    }

    #[test]
    fn params_pick_one_combination_out_of_a_result_with_several() {
        let entry = |imp: &str, score: f64| {
            format!(
                r#"{{"benchmark":"org.B.run","mode":"thrpt","threads":1,"params":{{"impl":"{imp}","size":"10"}},"primaryMetric":{{"score":{score},"scoreError":0,"scoreConfidence":[0,0],"scoreUnit":"ops/s","rawData":[[{score}]]}}}}"#
            )
        };
        let file = format!("[{},{}]", entry("chm", 5.0), entry("cow", 7.0));
        let pick = |imp: &str| {
            let params = BTreeMap::from([("impl".to_string(), imp.to_string())]);
            parse_jmh(
                &file,
                &Selection {
                    benchmark: Some("run"),
                    params: Some(&params),
                },
                "primary",
            )
        };
        assert_eq!(pick("chm").unwrap().values, vec![5.0]);
        assert_eq!(pick("cow").unwrap().values, vec![7.0]);
        let e = pick("skiplist").unwrap_err();
        assert!(
            e.contains("no entry for run with impl=skiplist")
                && e.contains("org.B.run [impl=cow, size=10]"),
            "{e}"
        );
        let e = parse_jmh(&file, &Selection::default(), "primary").unwrap_err();
        assert!(e.contains("2 entries") && e.contains("`params`"), "{e}");
    }

    #[test]
    fn a_csv_result_asks_for_rf_json() {
        let csv = "\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\"\n";
        let e = parse_jmh(csv, &Selection::default(), "primary").unwrap_err();
        assert!(e.contains("-rf json") && e.contains("Benchmark"), "{e}");
    }

    #[test]
    fn jmh_iterations_are_read_as_written_and_the_score_stands_in_only_for_none() {
        let file = |raw: &str| {
            format!(
                r#"[{{"benchmark":"b.run","mode":"thrpt","threads":1,"primaryMetric":{{"score":7,"scoreError":0,"scoreConfidence":[0,0],"scoreUnit":"ops/s"{raw}}}}}]"#
            )
        };
        let values = |raw: &str| {
            parse_jmh(&file(raw), &Selection::default(), "primary")
                .unwrap()
                .values
        };
        let nan = values(r#","rawData":[["NaN","NaN"]]"#);
        assert!(nan.len() == 2 && nan.iter().all(|v| v.is_nan()), "{nan:?}");
        assert_eq!(values(r#","rawData":[[1.5],[2.5]]"#), vec![1.5, 2.5]);
        let forks = parse_jmh(
            &file(r#","rawData":[[1.0,3.0],[],[5.0]]"#),
            &Selection::default(),
            "primary",
        )
        .unwrap();
        assert_eq!(forks.forks, vec![2, 1]);
        assert_eq!(forks.fork_means(), vec![2.0, 5.0]);
        assert_eq!(values(""), vec![7.0]);
    }

    /// The process group `invoke`'s error says it killed.
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
        let side = CommandSide {
            program: "sh".into(),
            args: vec!["-c".into(), "sleep 30 & echo 1.0".into()],
            env: BTreeMap::new(),
            cwd: None,
            output: OutputFormat::Lines,
            timeout_s: 1,
        };
        let failure =
            invoke(&side, "contender", 0, &[Selection::default()], "primary").unwrap_err();
        assert!(!failure.transient, "a time limit is not retried: {failure}");
        let e = failure.message;
        assert!(
            e.contains("contender command `sh -c sleep 30 & echo 1.0`")
                && e.contains("time limit of 1 s"),
            "{e}"
        );
        let pgid = killed_group(&e);
        // SAFETY: signal 0 sends nothing; it asks whether any process of the group exists.
        let found = unsafe { libc::kill(-pgid, 0) };
        let errno = std::io::Error::last_os_error().raw_os_error();
        assert_eq!((found, errno), (-1, Some(libc::ESRCH)), "{e}");
    }

    #[test]
    fn a_time_limit_too_long_for_the_clock_is_no_limit_not_a_panic() {
        let side = CommandSide {
            program: "sh".into(),
            args: vec!["-c".into(), "echo 1.0".into()],
            env: BTreeMap::new(),
            cwd: None,
            output: OutputFormat::Lines,
            timeout_s: u64::MAX,
        };
        let i = invoke(&side, "baseline", 0, &[Selection::default()], "primary")
            .unwrap()
            .remove(0);
        assert_eq!(i.values, vec![1.0]);
    }

    #[test]
    fn a_jmh_side_must_name_its_result_file() {
        let side = CommandSide {
            program: "java".into(),
            args: vec!["-jar".into(), "b.jar".into()],
            env: BTreeMap::new(),
            cwd: None,
            output: OutputFormat::Jmh,
            timeout_s: 600,
        };
        assert!(side.check().unwrap_err().contains("{result}"));
    }
}
