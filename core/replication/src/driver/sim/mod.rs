//! A seeded discrete-event simulation of a whole cluster in virtual time.
//!
//! Every node is a sans-IO [`NodeMachine`](crate::NodeMachine); the simulation owns
//! the clock, the network ([`network`]) and the requesters (closed loop, no think time, as
//! IspnPerfTest's invoker threads). It never reads the wall clock, and one seed fixes every random
//! choice, so a run repeats exactly. After the measured window requesters stop issuing; the run
//! continues until no event is left (quiescence), then the verifier checks the cluster. A run
//! still busy at the drain cap is cut, and fails its verification with what was still in flight
//! ([`InFlight`]), never passes it.
//!
//! With a CPU model ([`cpu`], off by default) a node's inputs queue for its cores and its cores
//! pause for GC, so a run can be CPU-bound and hiccup as real nodes do; without one, a node
//! handles each input the instant it arrives and a run is bound by link latency alone.
//!
//! Value bytes are neither allocated nor copied here: puts carry values that describe their bytes
//! (tag and length, [`Value::described`](crate::Value::described), equal to the
//! allocated ones), where the threads and local drivers allocate them and copy them once per hop.
//! The simulation accounts for the bytes through its CPU cost model instead.
//!
//! Architecture invariant: nothing in this module reads the wall clock (tested below).
//!
//! Randomness is per node: each node draws its messages' delays and faults and its requesters'
//! operations from streams of its own, derived from the seed and its id, and events at one
//! instant are ordered by keys made from the node's own history ([`event_queue::EventKey`]). So a
//! run can be split over worker threads ([`partition`]) and still give the same report.
//!
//! Files: [`simulation`] runs the windows (the history check between them, the drain and its
//! cap, the report); [`partition`] is one worker's share of the nodes and handles their events
//! (requesters, deliveries, timers, retransmissions); [`event_queue`] orders events in virtual
//! time; [`barrier`] is where the workers meet between windows; [`network`] delays and loses
//! messages; [`cpu`] models the nodes' cores; [`report`] is what a run returns.

mod barrier;
mod cpu;
mod event_queue;
mod network;
mod partition;
mod report;
mod simulation;

pub use cpu::{CpuConfig, CpuUsage};
pub use network::NetworkConfig;
pub use report::{InFlight, SimError, SimReport};
pub use simulation::Simulation;

use crate::error::ConfigError;
use crate::node::ClusterConfig;
use crate::protocol::ProtocolKind;
use crate::workload::WorkloadConfig;

/// Everything a simulated run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The cluster and protocol settings.
    pub cluster: ClusterConfig,
    /// Links and faults.
    pub network: NetworkConfig,
    /// The nodes' processors and GC pauses.
    pub cpu: CpuConfig,
    /// The requesters.
    pub workload: WorkloadConfig,
    /// The measured window in virtual µs.
    pub duration_us: u64,
    /// Requesters start at a random instant in `0..start_spread_us` (0: all at once).
    pub start_spread_us: u64,
    /// The seed of every random choice.
    pub seed: u64,
    /// Worker threads (each runs a share of the nodes; at most one per node, and one for links
    /// without latency). The report is the same for any number.
    pub threads: usize,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            cluster: ClusterConfig::default(),
            network: NetworkConfig::default(),
            cpu: CpuConfig::default(),
            workload: WorkloadConfig::default(),
            duration_us: 1_000_000,
            start_spread_us: 1_000,
            seed: 42,
            threads: 1,
        }
    }
}

/// Runs one simulation of `kind` with `cfg`.
pub fn simulate(kind: ProtocolKind, cfg: SimConfig) -> Result<SimReport, ConfigError> {
    Ok(Simulation::new(kind, cfg)?.run())
}
