//! Planning a run (scenario × parameter product × thread counts) and executing it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::run::fork::{Catalog, TrialError, TrialHandle};
use crate::run::result::{
    Artifact, BenchmarkResult, Build, ForkRecord, IterationResult, TrialSpec,
};
use crate::run::scenario::{Params, Scenario};
use crate::run::settings::{Mode, RunSettings, SettingsError, resolve_threads};

/// Variables every fork sets unless the scenario or the user says otherwise: the machines this
/// runs on often export `RUST_BACKTRACE=1`, which makes every backtrace capture about 100×
/// dearer. A benchmark controls such settings; it never inherits them.
pub const CONTROLLED_ENV: [(&str, &str); 2] =
    [("RUST_BACKTRACE", "0"), ("RUST_LIB_BACKTRACE", "0")];

/// What the user selected: scenario patterns, parameter overrides, thread counts, environment.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Substrings of scenario names; empty selects all.
    pub patterns: Vec<String>,
    /// `-p name=v1,v2` overrides.
    pub params: BTreeMap<String, Vec<String>>,
    /// `-t` thread specs; `None` uses each scenario's defaults.
    pub threads: Option<Vec<String>>,
    /// `--env K=V` overrides, applied last in every fork.
    pub env: Vec<(String, String)>,
    /// Use only the first of each scenario's default thread counts (for `--verify` runs).
    pub first_threads_only: bool,
}

/// Why a selection cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No scenario matched.
    #[error("no scenario matches `{pattern}`{}", suggest(.close))]
    UnknownScenario {
        /// The pattern given.
        pattern: String,
        /// Scenario names that look close.
        close: Vec<String>,
    },
    /// A `-p` name that none of the selected scenarios has.
    #[error("no selected scenario has a parameter `{name}`; valid parameters: {}", .valid.join(", "))]
    UnknownParam {
        /// The name given.
        name: String,
        /// Parameters of the selected scenarios.
        valid: Vec<String>,
    },
    /// A `-p` value outside the parameter's accepted set.
    #[error("`{value}` is not a valid value of `{name}` in {scenario}; valid values: {}", .valid.join(", "))]
    UnknownValue {
        /// The scenario.
        scenario: String,
        /// The parameter.
        name: String,
        /// The value given.
        value: String,
        /// The accepted values.
        valid: Vec<String>,
    },
    /// A bad thread spec.
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

/// The hint appended to an unknown name's error: `; did you mean: a, b?`, or nothing when no
/// name of `names` is close to `pattern`.
pub fn did_you_mean<'a>(pattern: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    suggest(&close_matches(pattern, names))
}

fn suggest(close: &[String]) -> String {
    if close.is_empty() {
        String::new()
    } else {
        format!("; did you mean: {}?", close.join(", "))
    }
}

/// Scenario names close to `pattern`, closest first (at most five): within a small edit
/// distance, or sharing a substring with it.
pub fn close_matches<'a>(pattern: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let p = pattern.to_lowercase();
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .filter_map(|n| {
            let lower = n.to_lowercase();
            let d = edit_distance(&lower, &p);
            let related = lower.contains(&p)
                || lower
                    .split(['/', '_'])
                    .any(|part| part.len() > 2 && p.contains(part));
            (d <= 3.max(p.len() / 3) || related).then_some((d, n))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(5)
        .map(|(_, n)| n.to_string())
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Whether `name` is selected by `patterns` (a substring match; an exact name always matches).
pub fn matches(name: &str, patterns: &[String]) -> bool {
    patterns.is_empty()
        || patterns
            .iter()
            .any(|p| name == p || name.contains(p.as_str()))
}

/// The parameter product of `scenario` under the overrides, validated.
pub fn param_product(
    scenario: &dyn Scenario,
    overrides: &BTreeMap<String, Vec<String>>,
) -> Result<Vec<Params>, PlanError> {
    let mut combos = vec![BTreeMap::new()];
    for spec in scenario.params() {
        let values = overrides
            .get(spec.name)
            .cloned()
            .unwrap_or_else(|| spec.defaults.clone());
        for v in &values {
            if !spec.accepted.is_empty() && !spec.accepted.contains(v) {
                return Err(PlanError::UnknownValue {
                    scenario: scenario.name().to_string(),
                    name: spec.name.to_string(),
                    value: v.clone(),
                    valid: spec.accepted.clone(),
                });
            }
        }
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.insert(spec.name.to_string(), v.clone());
                    c
                })
            })
            .collect();
    }
    Ok(combos.into_iter().map(Params).collect())
}

/// The environment of a fork: controlled defaults, then the scenario's, then the user's.
pub fn fork_env(
    scenario: &dyn Scenario,
    params: &Params,
    user: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = CONTROLLED_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in scenario
        .fork_env(params)
        .into_iter()
        .chain(user.iter().cloned())
    {
        env.retain(|(ek, _)| *ek != k);
        env.push((k, v));
    }
    env
}

/// A trial spec for one scenario, parameter combination and thread count.
pub fn trial_spec(
    scenario: &dyn Scenario,
    params: Params,
    threads: usize,
    mode: Mode,
    user_env: &[(String, String)],
) -> TrialSpec {
    let groups = scenario.groups(&params, threads);
    let env = fork_env(scenario, &params, user_env);
    TrialSpec {
        scenario: scenario.name().to_string(),
        threads: groups.iter().map(|g| g.threads).sum(),
        groups,
        params,
        mode,
        env,
        build: None,
    }
}

/// Expands a selection into trial specs, in scenario order.
pub fn plan(
    catalog: &Catalog,
    selection: &Selection,
    mode: Mode,
) -> Result<Vec<TrialSpec>, PlanError> {
    let selected: Vec<&dyn Scenario> = catalog
        .scenarios()
        .iter()
        .map(|s| &**s)
        .filter(|s| matches(s.name(), &selection.patterns))
        .collect();
    if selected.is_empty() {
        let pattern = selection.patterns.join(" ");
        let close = close_matches(&pattern, catalog.scenarios().iter().map(|s| s.name()));
        return Err(PlanError::UnknownScenario { pattern, close });
    }
    let known: BTreeSet<&str> = selected
        .iter()
        .flat_map(|s| s.params())
        .map(|p| p.name)
        .collect();
    for name in selection.params.keys() {
        if !known.contains(name.as_str()) {
            return Err(PlanError::UnknownParam {
                name: name.clone(),
                valid: known.iter().map(|s| s.to_string()).collect(),
            });
        }
    }
    let mut specs = Vec::new();
    for s in selected {
        let thread_specs = selection
            .threads
            .clone()
            .unwrap_or_else(|| s.default_threads());
        let mut counts = Vec::new();
        for t in &thread_specs {
            let n = resolve_threads(t)?;
            if !counts.contains(&n) {
                counts.push(n);
            }
        }
        for params in param_product(s, &selection.params)? {
            for &t in &counts {
                specs.push(trial_spec(s, params.clone(), t, mode, &selection.env));
            }
        }
    }
    Ok(specs)
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Asks running and planned benchmarks to stop at the next iteration boundary (Ctrl-C).
pub fn request_interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether an interrupt was requested.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Progress callbacks; the CLI draws a progress bar with them.
pub trait Observer {
    /// A benchmark starts (`index` of `total`).
    fn benchmark_started(&mut self, _index: usize, _total: usize, _spec: &TrialSpec) {}
    /// An iteration finished.
    fn iteration_done(
        &mut self,
        _fork: u32,
        _iteration: u32,
        _warmup: bool,
        _result: &IterationResult,
    ) {
    }
    /// A benchmark finished, with a score or an error.
    fn benchmark_done(&mut self, _result: &BenchmarkResult) {}
}

/// An observer that reports nothing.
pub struct Silent;
impl Observer for Silent {}

/// Where trials run: forks of an executable, or threads of this process.
#[derive(Clone)]
pub struct Launcher {
    catalog: Arc<Catalog>,
    exe: Option<PathBuf>,
    /// The builds of git revisions whose forks run the sides that name them, by revision.
    builds: Vec<Build>,
    timeout: Duration,
    /// Set when an in-process trial hung ([`TrialError::ends_the_run`]): nothing more runs.
    ended: Arc<AtomicBool>,
}

/// A launcher that is done sweeps what killed forks left behind ([`Scenario::sweep`]), so that a
/// run ended by a timeout or an interrupt leaves the machine as it found it.
impl Drop for Launcher {
    fn drop(&mut self) {
        // A sweep touches only what no live process uses, so a clone may sweep too.
        for scenario in self.catalog.scenarios() {
            scenario.sweep();
        }
    }
}

impl Launcher {
    /// Trials run in forks of `exe` when `settings.forks > 0`, else in this process.
    pub fn new(catalog: Arc<Catalog>, exe: Option<PathBuf>) -> Self {
        Launcher {
            catalog,
            exe,
            builds: Vec::new(),
            timeout: crate::run::fork::DEFAULT_TIMEOUT,
            ended: Arc::default(),
        }
    }

    /// Whether an in-process trial hung, so that [`Self::run_all`] stopped after it: its threads
    /// still run, and would distort anything measured next in this process.
    pub fn run_ended(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    /// How long a fork may take beyond an iteration's length to answer before it is killed and
    /// its benchmark becomes an error row (JMH's `-to`; default [`DEFAULT_TIMEOUT`]).
    ///
    /// [`DEFAULT_TIMEOUT`]: crate::run::fork::DEFAULT_TIMEOUT
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sides that name a git revision run in forks of its build, one of `builds`.
    pub fn with_builds(mut self, builds: Vec<Build>) -> Self {
        self.builds = builds;
        self
    }

    /// The build of `artifact` from `revision`, as the claim names it.
    pub fn build_of(&self, revision: &str, artifact: &Artifact) -> Option<&Build> {
        self.builds
            .iter()
            .find(|b| b.revision == revision && &b.artifact == artifact)
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Starts `spec`'s trial without waiting for its setup: in a fork of its build or of this
    /// executable when `forked`, else in this process (where a side built from a revision
    /// cannot run).
    fn spawn(&self, spec: &TrialSpec, forked: bool) -> Result<TrialHandle, TrialError> {
        match (&spec.build, &self.exe, forked) {
            (Some(build), _, true) => TrialHandle::spawn_forked(&build.executable, spec),
            (Some(build), _, false) => Err(TrialError::Start {
                what: format!("running revision {} in this process", build.revision),
                message: "a side built from a revision runs in forks of its build".into(),
            }),
            (None, Some(exe), true) => TrialHandle::spawn_forked(exe, spec),
            _ => TrialHandle::spawn_in_process(Arc::clone(&self.catalog), spec),
        }
    }

    /// Starts one trial, forked if an executable is known and `forked` is set.
    pub fn start(
        &self,
        spec: &TrialSpec,
        forked: bool,
    ) -> Result<(TrialHandle, String), TrialError> {
        let mut handle = self.spawn(spec, forked)?;
        handle.set_timeout(self.timeout);
        let verified = handle.ready()?;
        Ok((handle, verified))
    }

    /// Starts several trials at once (their setups overlap), then waits for each to be ready;
    /// returns the handles and check values in the order of `specs`.
    pub fn start_all(
        &self,
        specs: &[TrialSpec],
        forked: bool,
    ) -> Result<Vec<(TrialHandle, String)>, TrialError> {
        let handles = specs
            .iter()
            .map(|spec| self.spawn(spec, forked))
            .collect::<Result<Vec<_>, _>>()?;
        handles
            .into_iter()
            .map(|mut h| {
                h.set_timeout(self.timeout);
                let verified = h.ready()?;
                Ok((h, verified))
            })
            .collect()
    }

    /// Runs every fork of one benchmark.
    pub fn run_one(
        &self,
        spec: &TrialSpec,
        settings: &RunSettings,
        observer: &mut dyn Observer,
    ) -> BenchmarkResult {
        let mut result = BenchmarkResult {
            spec: spec.clone(),
            settings: settings.clone(),
            forks: Vec::new(),
            error: None,
        };
        for fork in 0..settings.forks.max(1) {
            if interrupted() {
                result
                    .error
                    .get_or_insert_with(|| "interrupted".to_string());
                break;
            }
            match self.run_fork(spec, settings, fork, observer) {
                Ok(record) => result.forks.push(record),
                Err(e) => {
                    if e.ends_the_run() {
                        self.ended.store(true, Ordering::SeqCst);
                    }
                    result.error = Some(e.to_string());
                    break;
                }
            }
        }
        if result.error.is_some() {
            // A benchmark with any failed fork gets no score: a partial mean would hide the failure.
            result.forks.clear();
        }
        observer.benchmark_done(&result);
        result
    }

    fn run_fork(
        &self,
        spec: &TrialSpec,
        settings: &RunSettings,
        fork: u32,
        observer: &mut dyn Observer,
    ) -> Result<ForkRecord, TrialError> {
        let (mut handle, verified_before) = self.start(spec, settings.forks > 0)?;
        let mut record = ForkRecord {
            verified_before,
            ..Default::default()
        };
        let plan = (0..settings.warmup_iterations)
            .map(|i| (true, i, settings.warmup_time))
            .chain(
                (0..settings.measurement_iterations).map(|i| (false, i, settings.measurement_time)),
            );
        for (warmup, i, duration) in plan {
            if interrupted() {
                return Err(TrialError::Interrupted);
            }
            let r = handle.iteration(warmup, duration)?;
            observer.iteration_done(fork, i, warmup, &r);
            if !warmup {
                record.iterations.push(r);
            }
        }
        record.verified_after = handle.finish()?;
        Ok(record)
    }

    /// Runs all planned benchmarks in order, stopping early on interrupt or after an in-process
    /// trial that hung ([`Self::run_ended`]).
    pub fn run_all(
        &self,
        specs: &[TrialSpec],
        settings: &RunSettings,
        observer: &mut dyn Observer,
    ) -> Vec<BenchmarkResult> {
        let mut out = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            if interrupted() || self.run_ended() {
                break;
            }
            observer.benchmark_started(i, specs.len(), spec);
            out.push(self.run_one(spec, settings, observer));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_matches_find_typos_and_parts() {
        let names = [
            "registry/get_core_micro",
            "registry/request_mix",
            "parser/parse",
        ];
        assert_eq!(
            close_matches("registry/request_mx", names)[0],
            "registry/request_mix"
        );
        assert!(close_matches("request", names).contains(&"registry/request_mix".to_string()));
        assert!(close_matches("zzzz", names).is_empty());
    }

    #[test]
    fn matching_is_by_substring() {
        assert!(matches("registry/request_mix", &["registry".into()]));
        assert!(matches("registry/request_mix", &[]));
        assert!(!matches("parser/parse", &["registry".into()]));
    }
}
