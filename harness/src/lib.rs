//! critsec-harness: a JMH-style runner for contention benchmarks.
//!
//! Scenarios ([`Scenario`]) are written by the bench crates; this crate knows no system.
//! It instantiates a scenario per parameter combination, runs thread groups in synchronized
//! iterations (only operations completed inside the measured window count), optionally in
//! forked child processes with controlled environments, and summarises the iteration scores
//! with JMH's statistic (mean ± half-width of the 99.9% Student-t interval).

#![deny(missing_docs)]

pub mod claim;
pub mod probe;
pub mod scenario;

pub use claim::{Claim, ClaimError, Direction, Side};
pub use probe::{LockWaitProbe, LockWaits};
pub use scenario::{
    ExternalSample, GroupSpec, Metric, ParamSpec, Params, Probe, Scenario, ScenarioError, Trial,
    Window, Worker,
};
