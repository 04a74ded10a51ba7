//! critsec-harness: a JMH-style runner for contention benchmarks, split by job.
//!
//! - [`run`]: the scenario API the bench crates implement, and everything that runs trials:
//!   [`run::plan`] expands a selection into [`TrialSpec`]s (parameter product × thread counts);
//!   a [`Launcher`] runs each in forks or in this process; a trial sets up, verifies, and runs
//!   synchronized iterations in which only operations completed inside the measured window
//!   count. [`selftest`] holds the harness's own scenarios.
//! - [`stats`]: JMH's statistic (mean ± half-width of the 99.9% Student-t interval),
//!   percentiles, the log-ratio interval of paired runs, Welch's test.
//! - [`format`]: a run's on-disk formats: JMH's JSON layout and run metadata.
//! - [`claims`]: claims as data, and their paired A/B reproduction with verdicts (the verdict
//!   file among them).
//!
//! Each module's public items are re-exported at its root (`critsec_harness::run::plan`); what
//! lies deeper is the module's own.
//!
//! This crate knows no system and renders nothing for people but progress lines: tables,
//! comparisons, reports and plots live in `critsec-present`, which forks and bench crates do not
//! link.
//!
//! ```no_run
//! use std::sync::Arc;
//! use critsec_harness::{Catalog, Launcher, RunSettings, Selection, run, selftest};
//!
//! let catalog = Arc::new(Catalog::new(selftest::scenarios()));
//! let settings = RunSettings { forks: 0, ..RunSettings::default() };
//! let specs = run::plan(&catalog, &Selection { patterns: vec!["harness/empty".into()], ..Default::default() }, settings.mode).unwrap();
//! let results = Launcher::new(catalog, None).run_all(&specs, &settings, &mut run::Silent);
//! println!("{} results", results.len());
//! ```
//!
//! Key decision: measuring threads live for a whole trial and park between iterations, and a
//! trial is driven one iteration at a time over a channel or a pipe. That one shape serves plain
//! runs and paired A/B runs with two warm trials alive at once.

#![deny(missing_docs)]

pub mod claims;
pub mod direction;
pub mod format;
pub mod run;
pub mod selftest;
pub mod stats;

pub use claims::claim::{Claim, ClaimError, ResolvedSide, Role, Side};
pub use direction::Direction;
pub use run::fork::{Catalog, TrialHandle};
pub use run::probe::{LockWaitProbe, LockWaits};
pub use run::result::{BenchmarkResult, ForkRecord, IterationResult, TrialSpec};
pub use run::runner::{Launcher, Observer, Selection};
pub use run::scenario::{
    CheckFailed, Choice, ExternalSample, GroupSpec, Iterations, Metric, ParamSpec, Params, Probe,
    Scenario, ScenarioError, SelfTimed, Trial, Window, Worker, WorkerSource,
};
pub use run::settings::{Mode, RunSettings};
