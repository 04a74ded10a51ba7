//! Running trials: the scenario API ([`scenario`]) a bench crate implements, the plan of a run
//! ([`runner`]), one trial's life ([`trial`]) with its synchronized iterations ([`control`]),
//! forks over a JSON-lines pipe ([`fork`]), and what a run records about its process and
//! machine ([`cpu`], [`probe`], [`environment`]), and where a fork may run ([`affinity`]). [`selftest`] holds the harness's own
//! scenarios.

pub mod affinity;
pub mod coherence;
pub mod control;
pub mod cpu;
pub mod environment;
pub mod fork;
pub mod probe;
pub mod result;
pub mod runner;
pub mod scenario;
pub mod selftest;
pub mod settings;
pub mod trial;
