//! Scenarios that test and calibrate the harness itself, with no system behind them.
//!
//! - `harness/empty`: an empty operation, to measure the harness's own per-operation overhead.
//! - `harness/env`: reports whether `RUST_BACKTRACE` is set in the process that measures, so a
//!   test can prove forks apply their environment.

use crate::run::scenario::{
    GroupSpec, Metric, ParamSpec, Params, Probe, Scenario, ScenarioError, Trial, Window, Worker,
};

/// The self-test scenarios.
pub fn scenarios() -> Vec<Box<dyn Scenario>> {
    vec![Box::new(Empty), Box::new(EnvReport)]
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
    fn verify(&self) -> Result<String, String> {
        Ok("nothing to verify".into())
    }
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
    fn verify(&self) -> Result<String, String> {
        Ok("nothing to verify".into())
    }
    fn worker(&self, _: &str, _: usize) -> Box<dyn Worker + '_> {
        Box::new(EmptyWorker)
    }
    fn probe(&self) -> Option<&dyn Probe> {
        Some(self)
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
