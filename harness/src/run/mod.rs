//! Running trials: the scenario API ([`scenario`]) a bench crate implements, the plan of a run
//! ([`runner`]), one trial's life ([`trial`]) with its synchronized iterations ([`control`]),
//! forks over a JSON-lines pipe ([`fork`]), what a run records about its process and machine
//! ([`cpu`], [`probe`], [`environment`], [`coherence`]), and where a fork may run
//! ([`affinity`]).

pub(crate) mod affinity;
pub(crate) mod coherence;
pub(crate) mod control;
pub(crate) mod cpu;
pub(crate) mod environment;
pub(crate) mod fork;
pub(crate) mod probe;
pub(crate) mod result;
pub(crate) mod runner;
pub(crate) mod scenario;
pub(crate) mod settings;
pub(crate) mod trial;

pub use affinity::allowed_cpus;
pub use coherence::{Level, Levels, TAKEN_NS, cache_line_round_trips, coherence_levels};
pub use environment::{Hazard, Machine, git_commit, hazards, machine, now_utc};
pub use fork::{Catalog, DEFAULT_TIMEOUT, FORK_PROTOCOL, as_fork, fork_protocol_of};
pub use result::{Artifact, Build};
pub use runner::{
    Launcher, Observer, PlanError, Selection, Silent, did_you_mean, interrupted, matches,
    param_product, plan, request_interrupt,
};
pub use settings::{
    Mode, RunSettings, SettingsError, available_cores, parse_duration, resolve_threads,
};
