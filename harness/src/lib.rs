//! critsec-harness: a JMH-style runner for contention benchmarks.
//!
//! Scenarios ([`Scenario`]) are written by the bench crates; this crate knows no system.
//! The flow: [`runner::plan`] expands a selection into [`TrialSpec`]s (parameter product ×
//! thread counts); a [`Launcher`] runs each in forks ([`fork`]) or in this process; a trial
//! ([`trial::run_trial`]) sets up, verifies, and runs synchronized iterations ([`control`]) in
//! which only operations completed inside the measured window count; [`stats`] summarises the
//! iteration scores as JMH does (mean ± half-width of the 99.9% Student-t interval); [`jmh`]
//! writes JMH's JSON layout and [`output`] the table and metadata. [`compare`] puts N runs (ours
//! or real JMH's) side by side with intervals and a significance test; [`plot`] draws SVG charts
//! (throughput vs threads, latency percentiles) for reports.
//!
//! ```no_run
//! use std::sync::Arc;
//! use critsec_harness::{Catalog, Launcher, RunSettings, Selection, runner, selftest};
//!
//! let catalog = Arc::new(Catalog::new(selftest::scenarios()));
//! let settings = RunSettings { forks: 0, ..RunSettings::default() };
//! let specs = runner::plan(&catalog, &Selection { patterns: vec!["harness/empty".into()], ..Default::default() }, settings.mode).unwrap();
//! let results = Launcher::new(catalog, None).run_all(&specs, &settings, &mut runner::Silent);
//! println!("{}", critsec_harness::output::table(&results));
//! ```
//!
//! Key decision: measuring threads live for a whole trial and park between iterations, and a
//! trial is driven one iteration at a time over a channel or a pipe. That one shape serves plain
//! runs and paired A/B runs with two warm trials alive at once.

#![deny(missing_docs)]

pub mod claim;
pub mod compare;
pub mod control;
pub mod cpu;
pub mod environment;
pub mod fork;
pub mod jmh;
pub mod output;
pub mod plot;
pub mod probe;
pub mod report;
pub mod reproduce;
pub mod result;
pub mod runner;
pub mod scenario;
pub mod selftest;
pub mod settings;
pub mod stats;
pub mod trial;

pub use claim::{Claim, ClaimError, Direction, Side};
pub use fork::{Catalog, FORK_ARG, TrialHandle, fork_child_main};
pub use probe::{LockWaitProbe, LockWaits};
pub use result::{BenchmarkResult, ForkRecord, IterationResult, TrialSpec};
pub use runner::{Launcher, Observer, Selection};
pub use scenario::{
    ExternalSample, GroupSpec, Metric, ParamSpec, Params, Probe, Scenario, ScenarioError, Trial,
    Window, Worker,
};
pub use settings::{Mode, RunSettings};
