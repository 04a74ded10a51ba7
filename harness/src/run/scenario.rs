//! The scenario API: what a bench crate implements so the runner can measure it.
//!
//! A [`Scenario`] is a recipe (name, parameters, thread groups); [`Scenario::setup`] binds one
//! parameter combination to a [`Trial`], the shared state of one fork (JMH's `Scope.Benchmark`
//! state); [`Trial::worker`] gives each measuring thread its own [`Worker`] (JMH's
//! `Scope.Thread` state) whose [`Worker::op`] is the benchmarked operation.
//!
//! Verification is part of the contract, as in rebar: [`Trial::verify`] runs before the first
//! iteration and after the last, and [`Worker::check`] after every iteration. Any failure turns
//! the result into an error row; it never becomes a number.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::RangeBounds;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::direction::Direction;

/// One parameter of a scenario and the values it runs with by default (JMH `@Param`).
#[derive(Debug, Clone)]
pub struct ParamSpec {
    /// The name used on the command line (`-p name=v1,v2`) and in JMH's `params`.
    pub name: &'static str,
    /// Default values; a run covers all of them unless `-p` narrows the set.
    pub defaults: Vec<String>,
    /// Every accepted value, or empty when any value is accepted (numbers, say).
    pub accepted: Vec<String>,
    /// One line of help.
    pub help: &'static str,
}

impl ParamSpec {
    /// A parameter whose values are restricted to `accepted`, with `defaults` run by default.
    pub fn choice(
        name: &'static str,
        defaults: &[&str],
        accepted: &[&str],
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            defaults: defaults.iter().map(|s| s.to_string()).collect(),
            accepted: accepted.iter().map(|s| s.to_string()).collect(),
            help,
        }
    }

    /// A parameter whose values are the variants of `E`, with `defaults` run by default.
    pub fn choices<E: Choice>(name: &'static str, defaults: &[E], help: &'static str) -> Self {
        let ids = |all: &[E]| all.iter().map(|e| e.id()).collect::<Vec<_>>();
        Self::choice(name, &ids(defaults), &ids(E::ALL), help)
    }

    /// A parameter that takes any value the scenario can parse (numbers, durations).
    pub fn free(name: &'static str, defaults: &[&str], help: &'static str) -> Self {
        ParamSpec {
            name,
            defaults: defaults.iter().map(|s| s.to_string()).collect(),
            accepted: Vec::new(),
            help,
        }
    }
}

/// A parameter whose values name the variants of an enum: the valid set and the parsing come
/// from the enum, so a scenario never lists its values twice.
pub trait Choice: Copy + PartialEq + 'static {
    /// Every variant, in the order `critsec list` shows them.
    const ALL: &'static [Self];
    /// The variant's value on the command line and in JMH's `params`.
    fn id(self) -> &'static str;
}

/// `yes` and `no`.
impl Choice for bool {
    const ALL: &'static [Self] = &[true, false];
    fn id(self) -> &'static str {
        if self { "yes" } else { "no" }
    }
}

/// One combination of parameter values; values are strings, as in JMH.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params(pub BTreeMap<String, String>);

impl Params {
    /// Builds a combination from pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Params(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// The raw value of `name`.
    pub fn get(&self, name: &str) -> Result<&str, ScenarioError> {
        self.0
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| ScenarioError::MissingParam {
                name: name.to_string(),
            })
    }

    /// The value of `name` parsed as `T`, with an error naming the parameter and the bad value.
    pub fn parse<T: FromStr>(&self, name: &str) -> Result<T, ScenarioError>
    where
        T::Err: fmt::Display,
    {
        let raw = self.get(name)?;
        raw.parse::<T>()
            .map_err(|e| ScenarioError::bad(name, raw, e.to_string()))
    }

    /// The variant of `E` that `name` names; the error lists the valid values.
    pub fn choice<E: Choice>(&self, name: &str) -> Result<E, ScenarioError> {
        let raw = self.get(name)?;
        E::ALL
            .iter()
            .copied()
            .find(|e| e.id() == raw)
            .ok_or_else(|| {
                let valid: Vec<&str> = E::ALL.iter().map(|e| e.id()).collect();
                ScenarioError::bad(name, raw, format!("valid are {}", valid.join(", ")))
            })
    }

    /// The value of `name` parsed as `T` and checked against `valid`; the error names the
    /// parameter, the value and the valid range (`valid are 1..=16`).
    pub fn parse_in<T, R>(&self, name: &str, valid: R) -> Result<T, ScenarioError>
    where
        T: FromStr + PartialOrd,
        T::Err: fmt::Display,
        R: RangeBounds<T> + fmt::Debug,
    {
        let value = self.parse::<T>(name)?;
        if valid.contains(&value) {
            Ok(value)
        } else {
            Err(ScenarioError::bad(
                name,
                self.get(name)?,
                format!("valid are {valid:?}"),
            ))
        }
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (k, v) in &self.0 {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// A thread group (JMH `@Group` + `@GroupThreads`): threads that all run one kind of operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSpec {
    /// Group name, e.g. `readers`; it names the group's secondary metric.
    pub name: String,
    /// Number of threads in the group.
    pub threads: usize,
}

impl GroupSpec {
    /// A group of `threads` threads named `name`.
    pub fn new(name: impl Into<String>, threads: usize) -> Self {
        GroupSpec {
            name: name.into(),
            threads,
        }
    }
}

/// A secondary result reported alongside the primary score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Name as it appears in JMH's `secondaryMetrics`, e.g. `lock.registry.wait_ns`.
    pub name: String,
    /// The value for one iteration.
    pub value: f64,
    /// Unit, e.g. `ns/op` or `%`.
    pub unit: String,
    /// Which way it improves, as its producer knows; `None` (a utilisation, a count that only
    /// describes) is never called better or worse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Direction>,
}

impl Metric {
    /// A metric value with no better direction; see [`Metric::higher_is_better`] and
    /// [`Metric::lower_is_better`].
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Self {
        Metric {
            name: name.into(),
            value,
            unit: unit.into(),
            better: None,
        }
    }

    /// The same metric, better when higher (a rate of useful work).
    pub fn higher_is_better(self) -> Self {
        Metric {
            better: Some(Direction::Higher),
            ..self
        }
    }

    /// The same metric, better when lower (a cost: time, waits, timeouts, failures).
    pub fn lower_is_better(self) -> Self {
        Metric {
            better: Some(Direction::Lower),
            ..self
        }
    }
}

/// Window facts a [`Probe`] may need to normalise its counters.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Length of the measured window in nanoseconds.
    pub nanos: u64,
    /// Operations counted in the window, over all threads.
    pub ops: u64,
}

/// Extra per-iteration measurements, such as contended lock waits, read by the harness around
/// each measured window without the harness knowing what is measured.
pub trait Probe: Send + Sync {
    /// Called just before the window opens.
    fn reset(&self);
    /// Called just after the window closes and every thread has reported.
    fn read(&self, window: Window) -> Vec<Metric>;
}

/// Work of one measuring thread.
pub trait Worker: Send {
    /// The measured operation. Its result goes to `black_box`; workers may also compare it with
    /// the expected answer and remember mismatches for [`Worker::check`].
    fn op(&mut self) -> u64;

    /// Called by the worker's own thread after each iteration; an `Err` fails the run.
    fn check(&mut self) -> Result<(), CheckFailed> {
        Ok(())
    }
}

/// A failed verification or check: the scenario's own account of what it found wrong. It
/// fails the trial; the run reports it and never counts the trial's numbers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CheckFailed(pub String);

impl From<String> for CheckFailed {
    fn from(message: String) -> Self {
        CheckFailed(message)
    }
}

impl From<&str> for CheckFailed {
    fn from(message: &str) -> Self {
        CheckFailed(message.to_string())
    }
}

/// The state of one trial (one parameter combination in one fork).
pub trait Trial: Send + Sync {
    /// Checks the state and returns a short summary of what was checked (the check value).
    /// Runs before the first iteration and after the last.
    fn verify(&self) -> Result<String, CheckFailed>;

    /// How the trial's iterations are measured.
    fn iterations(&self) -> Iterations<'_>;

    /// Extra measurements to take around each window.
    fn probe(&self) -> Option<&dyn Probe> {
        None
    }

    /// Called after every iteration, before the trial idles: finish or stop background work
    /// (merges, refreshes) so that a side waiting its turn in a paired run takes no CPU from
    /// the side being measured. The next iteration may restart it.
    fn quiesce(&self) {}
}

impl dyn Trial + '_ {
    /// The worker source of a trial measured by worker threads, for code that drives a trial
    /// by hand (tests, criterion and divan benches); panics for a self-timed trial.
    pub fn expect_workers(&self) -> &dyn WorkerSource {
        match self.iterations() {
            Iterations::Workers(source) => source,
            Iterations::SelfTimed(_) => panic!("a self-timed trial has no workers"),
        }
    }

    /// The iterations of a self-timed trial, for code that drives a trial by hand; panics for
    /// a trial measured by worker threads.
    pub fn expect_self_timed(&self) -> &dyn SelfTimed {
        match self.iterations() {
            Iterations::SelfTimed(runs) => runs,
            Iterations::Workers(_) => {
                panic!("a worker-driven trial does not run iterations itself")
            }
        }
    }
}

/// How a trial's iterations are measured: by measuring threads in a timed window, or by the
/// trial itself (a simulation in virtual time, whose score is not operations per second).
pub enum Iterations<'t> {
    /// Worker threads run [`Worker::op`] in synchronized windows.
    Workers(&'t dyn WorkerSource),
    /// The trial runs each iteration and scores it.
    SelfTimed(&'t dyn SelfTimed),
}

/// A trial measured by worker threads.
pub trait WorkerSource: Sync {
    /// A worker for thread `index` (0-based within its group) of group `group`, built on the
    /// thread that will run it.
    fn worker(&self, group: &str, index: usize) -> Box<dyn Worker + '_>;
}

/// A trial that runs its iterations itself.
pub trait SelfTimed: Sync {
    /// Runs one iteration within about `budget` of wall time and returns its score.
    fn run_iteration(
        &self,
        warmup: bool,
        budget: std::time::Duration,
    ) -> Result<ExternalSample, CheckFailed>;
}

/// The result of an iteration a trial ran itself (see [`SelfTimed::run_iteration`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExternalSample {
    /// The primary score of the iteration.
    pub score: f64,
    /// Its unit, e.g. `req/s`.
    pub unit: String,
    /// Secondary metrics of the iteration.
    pub secondary: Vec<Metric>,
}

/// A benchmark scenario: a recipe the runner instantiates once per parameter combination.
pub trait Scenario: Send + Sync {
    /// Unique name, `system/scenario`, e.g. `registry/request_mix`.
    fn name(&self) -> &'static str;
    /// One paragraph: what is measured and what work sits inside the critical section.
    fn description(&self) -> &'static str;
    /// Parameters and their default values.
    fn params(&self) -> Vec<ParamSpec>;
    /// Thread counts run by default, as `-t` accepts them: a number, `max` (all cores) or `4x`
    /// (four times the cores).
    fn default_threads(&self) -> Vec<String> {
        vec!["1".to_string()]
    }
    /// Thread groups for this combination and total thread count. The default is one group,
    /// `op`, with every thread.
    fn groups(&self, _params: &Params, threads: usize) -> Vec<GroupSpec> {
        vec![GroupSpec::new("op", threads)]
    }
    /// Whether this combination is a deterministic simulation whose iterations run successive
    /// seeds: then a claim's replicate is a seed, not a process pair, and nothing is warmed up.
    /// If it has a `seed` parameter, its first iteration must run that seed: a claim's later
    /// look then starts a trial at the first seed not yet run instead of rerunning them all.
    fn deterministic(&self, _params: &Params) -> bool {
        false
    }
    /// Limits a deterministic combination whose iterations have worker threads of their own
    /// (a parallel simulation) to `cores` cores: the runner of seeds runs arms side by side and
    /// gives each its share of the machine. Must not change a result.
    fn fit_cores(&self, _params: &mut Params, _cores: usize) {}
    /// Removes what killed forks of this scenario left on the machine (a fork killed at a
    /// timeout or an interrupt cannot clean up after itself: network namespaces of its node
    /// processes, say). Called when a [`Launcher`](crate::Launcher) is done; it must leave alone
    /// what a live process still uses.
    fn sweep(&self) {}
    /// Environment variables a fork must set for this combination (e.g. `RUST_BACKTRACE`).
    fn fork_env(&self, _params: &Params) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Builds the shared state for one trial. Called in the fork that measures it.
    fn setup(&self, params: &Params, groups: &[GroupSpec])
    -> Result<Box<dyn Trial>, ScenarioError>;
}

/// Why a scenario could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A parameter the scenario needs was not given.
    #[error("parameter `{name}` is missing")]
    MissingParam {
        /// The parameter's name.
        name: String,
    },
    /// A parameter value could not be used.
    #[error("parameter `{name}` has the bad value `{value}`: {reason}")]
    BadParam {
        /// The parameter's name.
        name: String,
        /// The rejected value.
        value: String,
        /// What was wrong, and what would be valid.
        reason: String,
    },
    /// Building the state failed.
    #[error("setup failed: {0}")]
    Setup(String),
}

impl ScenarioError {
    /// A rejected parameter value, with what was wrong and what would be valid.
    pub fn bad(name: &str, value: &str, reason: impl Into<String>) -> Self {
        ScenarioError::BadParam {
            name: name.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
