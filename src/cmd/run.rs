//! `critsec run PATTERN...`: run scenarios JMH-style over their parameter product.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use critsec_harness::format::{RunMeta, write_run};
use critsec_harness::run::{Launcher, Selection, interrupted, plan};
use critsec_harness::run::{Mode, RunSettings, parse_duration};
use critsec_harness::run::{hazards, machine, now_utc};
use critsec_present::run_table::{header, table, verify_lines};

use super::UsageError;
use super::progress::{IterationBar, install_interrupt_handler};
use crate::catalog::catalog;

/// Arguments of `critsec run`; option names follow JMH's.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Scenarios to run: substrings of their names (all when none is given).
    pub patterns: Vec<String>,
    /// Parameter values, `name=v1,v2`; repeatable. Replaces the scenario's default values.
    #[arg(short = 'p', value_name = "NAME=V1,V2")]
    pub params: Vec<String>,
    /// Thread counts, comma-separated: numbers, `max` (all cores) or `Nx` (N times the cores).
    #[arg(short = 't', value_name = "THREADS")]
    pub threads: Option<String>,
    /// Warmup iterations per fork (JMH -wi).
    #[arg(long = "warmup-iterations", value_name = "N")]
    pub warmup_iterations: Option<u32>,
    /// Measurement iterations per fork (JMH -i).
    #[arg(short = 'i', value_name = "N")]
    pub iterations: Option<u32>,
    /// Warmup iteration time, e.g. 500ms, 2s (JMH -w).
    #[arg(short = 'w', value_name = "DUR")]
    pub warmup_time: Option<String>,
    /// Measurement iteration time (JMH -r).
    #[arg(short = 'r', value_name = "DUR")]
    pub measurement_time: Option<String>,
    /// Forks per benchmark; 0 runs in this process and inherits its environment (JMH -f).
    #[arg(short = 'f', value_name = "N")]
    pub forks: Option<u32>,
    /// Benchmark mode: thrpt, avgt or sample (JMH -bm).
    #[arg(long = "mode", value_name = "MODE")]
    pub mode: Option<String>,
    /// Environment variable for every fork, `KEY=VALUE`; repeatable; applied last.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Verify every selected benchmark once instead of measuring it: set up, check, one short
    /// iteration in a fork (so the fork's controlled environment is what gets checked), check
    /// again (rebar's `--verify`). Exit 1 if any check fails.
    #[arg(long)]
    pub verify: bool,
    /// Write the results in JMH's JSON layout here (and metadata to `<name>.meta.json`).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// JMH's result format (-rf): `json`, the one layout critsec writes (to -rff's file, or
    /// JMH's default `jmh-result.json`).
    #[arg(long = "result-format", value_name = "FORMAT")]
    pub result_format: Option<String>,
    /// JMH's result file (-rff): the file --json writes.
    #[arg(long = "result-file", value_name = "FILE", conflicts_with = "json")]
    pub result_file: Option<PathBuf>,
    /// Per-iteration timeout, e.g. 30s: a fork that has not answered this long after an
    /// iteration (or its setup) should have ended is killed, and its benchmark becomes an error
    /// (JMH -to; default 10m). With -f 0 the hung benchmark becomes an error and the run ends
    /// there (a thread cannot be killed).
    #[arg(long = "timeout", value_name = "DUR")]
    pub timeout: Option<String>,
}

impl RunArgs {
    /// Where the results go in JMH's layout: `--json`, or JMH's `-rf json -rff FILE`.
    pub fn json_path(&self) -> Result<Option<PathBuf>, UsageError> {
        match self.result_format.as_deref() {
            None | Some("json") => {}
            Some(other) => {
                return Err(UsageError(format!(
                    "-rf {other}: critsec writes JMH's json layout only (-rf json)"
                )));
            }
        }
        Ok(self
            .json
            .clone()
            .or_else(|| self.result_file.clone())
            .or_else(|| {
                self.result_format
                    .is_some()
                    .then(|| PathBuf::from("jmh-result.json"))
            }))
    }

    /// The iteration settings these flags ask for, over the defaults.
    pub fn settings(&self) -> anyhow::Result<RunSettings> {
        let mut s = if self.verify {
            RunSettings::verify()
        } else {
            RunSettings::default()
        };
        if let Some(m) = &self.mode {
            s.mode = Mode::parse(m)?;
        }
        if let Some(n) = self.warmup_iterations {
            s.warmup_iterations = n;
        }
        if let Some(n) = self.iterations {
            if n == 0 {
                return Err(UsageError(
                    "-i must be at least 1: a benchmark needs a measured iteration".into(),
                )
                .into());
            }
            s.measurement_iterations = n;
        }
        if let Some(d) = &self.warmup_time {
            s.warmup_time = parse_duration(d)?;
        }
        if let Some(d) = &self.measurement_time {
            s.measurement_time = parse_duration(d)?;
        }
        if let Some(f) = self.forks {
            s.forks = f;
        }
        Ok(s)
    }

    /// The selection these flags make.
    pub fn selection(&self) -> anyhow::Result<Selection> {
        let mut params: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for p in &self.params {
            let (name, values) = p
                .split_once('=')
                .ok_or_else(|| UsageError(format!("-p takes NAME=V1,V2, got `{p}`")))?;
            let values: Vec<String> = values
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect();
            if name.is_empty() || values.is_empty() {
                return Err(UsageError(format!("-p takes NAME=V1,V2, got `{p}`")).into());
            }
            params.entry(name.to_string()).or_default().extend(values);
        }
        // A net run's cluster file sets the defaults of the parameters it names.
        bench_replication::ispn_perf::fill_params(&mut params).map_err(UsageError)?;
        let mut env = Vec::new();
        for e in &self.env {
            let (k, v) = e
                .split_once('=')
                .ok_or_else(|| UsageError(format!("--env takes KEY=VALUE, got `{e}`")))?;
            env.push((k.to_string(), v.to_string()));
        }
        Ok(Selection {
            patterns: self.patterns.clone(),
            params,
            threads: self
                .threads
                .as_ref()
                .map(|t| t.split(',').map(|s| s.trim().to_string()).collect()),
            env,
            first_threads_only: self.verify,
        })
    }
}

/// The `--timeout` of `run` and `reproduce`: how long a fork may overrun before it is killed.
pub fn fork_timeout(flag: Option<&str>) -> anyhow::Result<std::time::Duration> {
    match flag {
        None => Ok(critsec_harness::run::DEFAULT_TIMEOUT),
        Some(d) => {
            let t = parse_duration(d)?;
            if t.is_zero() {
                return Err(UsageError("--timeout must be longer than 0".into()).into());
            }
            Ok(t)
        }
    }
}

/// Runs the selection and prints the table; exit 1 if any benchmark failed.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let settings = args.settings()?;
    let selection = args.selection()?;
    let json = args.json_path()?;
    let timeout = fork_timeout(args.timeout.as_deref())?;
    let catalog = Arc::new(catalog());
    let specs = plan(&catalog, &selection, settings.mode)?;
    let max_threads = specs.iter().map(|s| s.threads).max().unwrap_or(1);
    // The handler goes in before the header is printed, so a caller that waits for the header
    // knows an interrupt from then on is handled.
    install_interrupt_handler();
    let hz = hazards(max_threads, settings.forks > 0);
    print!(
        "{}",
        header(env!("CARGO_PKG_VERSION"), &machine(), &settings, &hz)
    );
    let created = now_utc();
    let exe = std::env::current_exe().context("locating this executable for forks")?;
    let launcher = Launcher::new(catalog, Some(exe.clone())).with_timeout(timeout);
    let mut progress = IterationBar::new(specs.len(), &settings);
    let results = launcher.run_all(&specs, &settings, &mut progress);
    progress.finish();
    println!();
    if args.verify {
        print!("{}", verify_lines(&results));
    } else {
        print!("{}", table(&results));
    }
    if let Some(path) = &json {
        let meta = RunMeta::of_run(env!("CARGO_PKG_VERSION"), created, hz, &settings, &results);
        write_run(path, &results, &meta, &exe.display().to_string())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("critsec: wrote {} and its .meta.json", path.display());
    }
    let failed = results.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 || interrupted() || results.len() < specs.len() {
        let not_run = specs.len() - results.len();
        eprintln!(
            "critsec: {failed} of {} benchmarks failed{}{}",
            specs.len(),
            if not_run > 0 {
                format!(", {not_run} not run")
            } else {
                String::new()
            },
            if interrupted() {
                " (interrupted)"
            } else if launcher.run_ended() {
                " (an in-process trial hung; its threads end with this process)"
            } else {
                ""
            }
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
