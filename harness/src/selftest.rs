//! Scenarios that test and calibrate the harness itself, with no system behind them.
//!
//! - `harness/empty`: an empty operation, to measure the harness's own per-operation overhead.
//! - `harness/env`: reports whether `RUST_BACKTRACE` is set in the process that measures, so a
//!   test can prove forks apply their environment.
//! - `harness/fault`: a trial that fails in the middle of an iteration (`-p fault=kill` SIGKILLs
//!   its fork, `panic` panics in a worker, `hang` never returns from an operation,
//!   `close-stdout` closes its fork's pipe to the parent), so tests can show the runner reports
//!   an error row and goes on. `panic` and `hang` also fire in this process (`-f 0`); `kill`
//!   and `close-stdout` only in a fork (in-process they would end `critsec` itself, so setup
//!   refuses them there).

use crate::run::scenario::{
    CheckFailed, GroupSpec, Iterations, Metric, ParamSpec, Params, Probe, Scenario, ScenarioError,
    Trial, Window, Worker, WorkerSource,
};

/// The self-test scenarios.
pub fn scenarios() -> Vec<Box<dyn Scenario>> {
    vec![Box::new(Empty), Box::new(EnvReport), Box::new(Fault)]
}

struct Empty;

impl Scenario for Empty {
    fn name(&self) -> &'static str {
        "harness/empty"
    }
    fn description(&self) -> &'static str {
        "An empty operation: the score is the harness's own ceiling (dyn call + phase check per op)."
    }
    fn params(&self) -> Vec<ParamSpec> {
        Vec::new()
    }
    fn setup(&self, _: &Params, _: &[GroupSpec]) -> Result<Box<dyn Trial>, ScenarioError> {
        Ok(Box::new(EmptyTrial))
    }
}

struct EmptyTrial;
struct EmptyWorker;

impl Trial for EmptyTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        Ok("nothing to verify".into())
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }
}

impl WorkerSource for EmptyTrial {
    fn worker(&self, _: &str, _: usize) -> Box<dyn Worker + '_> {
        Box::new(EmptyWorker)
    }
}

impl Worker for EmptyWorker {
    #[inline(never)]
    fn op(&mut self) -> u64 {
        0
    }
}

struct EnvReport;

impl Scenario for EnvReport {
    fn name(&self) -> &'static str {
        "harness/env"
    }
    fn description(&self) -> &'static str {
        "Reports, as the secondary metric `env.rust_backtrace`, 1 if RUST_BACKTRACE is set to a value other than 0 in the measuring process, else 0."
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![ParamSpec::choice(
            "backtrace",
            &["0"],
            &["0", "1"],
            "RUST_BACKTRACE applied in the fork",
        )]
    }
    fn fork_env(&self, params: &Params) -> Vec<(String, String)> {
        let v = params.get("backtrace").unwrap_or("0").to_string();
        vec![("RUST_BACKTRACE".into(), v)]
    }
    fn setup(&self, _: &Params, _: &[GroupSpec]) -> Result<Box<dyn Trial>, ScenarioError> {
        Ok(Box::new(EnvTrial))
    }
}

struct EnvTrial;

impl Trial for EnvTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        Ok("nothing to verify".into())
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }
    fn probe(&self) -> Option<&dyn Probe> {
        Some(self)
    }
}

impl WorkerSource for EnvTrial {
    fn worker(&self, _: &str, _: usize) -> Box<dyn Worker + '_> {
        Box::new(EmptyWorker)
    }
}

impl Probe for EnvTrial {
    fn reset(&self) {}
    fn read(&self, _: Window) -> Vec<Metric> {
        let set = std::env::var("RUST_BACKTRACE").is_ok_and(|v| v != "0");
        vec![Metric::new(
            "env.rust_backtrace",
            if set { 1.0 } else { 0.0 },
            "bool",
        )]
    }
}

struct Fault;

/// The faults `harness/fault` can inject, by `-p fault=` value.
const FAULTS: &[&str] = &["none", "kill", "panic", "hang", "close-stdout"];

impl Scenario for Fault {
    fn name(&self) -> &'static str {
        "harness/fault"
    }
    fn description(&self) -> &'static str {
        "Tests of the runner: a trial that is killed, panics, hangs or closes its pipe mid-iteration (-p fault=...; `none` by default; kill and close-stdout only in a fork)."
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![ParamSpec::choice(
            "fault",
            &["none"],
            FAULTS,
            "what the trial does after 1000 operations",
        )]
    }
    fn setup(&self, params: &Params, _: &[GroupSpec]) -> Result<Box<dyn Trial>, ScenarioError> {
        let fault = params.get("fault")?;
        if matches!(fault, "kill" | "close-stdout") && !crate::run::fork::in_fork() {
            return Err(ScenarioError::bad(
                "fault",
                fault,
                "fires only in a fork (-f 1 or more): in this process it would end critsec itself",
            ));
        }
        Ok(Box::new(FaultTrial(fault.to_string())))
    }
}

struct FaultTrial(String);
struct FaultWorker<'a> {
    fault: &'a str,
    ops: u64,
}

impl Trial for FaultTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        Ok("nothing to verify".into())
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }
}

impl WorkerSource for FaultTrial {
    fn worker(&self, _: &str, _: usize) -> Box<dyn Worker + '_> {
        Box::new(FaultWorker {
            fault: &self.0,
            ops: 0,
        })
    }
}

impl Worker for FaultWorker<'_> {
    fn op(&mut self) -> u64 {
        self.ops += 1;
        if self.ops == 1000 {
            match self.fault {
                // SAFETY: kill(2) and close(2) take plain integers; closing stdout only makes
                // later writes to it fail.
                "kill" => unsafe {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                },
                "panic" => panic!("harness/fault: a worker panicked mid-iteration"),
                "hang" => loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                },
                "close-stdout" => unsafe {
                    libc::close(1);
                },
                _ => {}
            }
        }
        0
    }
}
