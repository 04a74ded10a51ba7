//! What a simulated run returns: the requesters' view inside the window, the summed node
//! counters, the CPU model's usage, the history check's counts and the verdict (IspnPerfTest's
//! per-run report).

use super::cpu::CpuUsage;
use crate::error::VerifyError;
use crate::node::NodeStats;
use crate::protocol::ProtocolKind;
use crate::verifier::VerifyReport;
use crate::workload::RequesterStats;

/// The outcome of a simulated run.
#[derive(Debug, Clone)]
pub struct SimReport {
    /// The protocol simulated.
    pub protocol: ProtocolKind,
    /// Cluster size.
    pub nodes: usize,
    /// The measured window in virtual µs.
    pub window_us: u64,
    /// Virtual time of the last message or reply: when the cluster became quiescent (stale
    /// wake-ups of expired deadlines after it are not counted).
    pub end_us: u64,
    /// Events processed.
    pub events: u64,
    /// What the requesters saw inside the window.
    pub requesters: RequesterStats,
    /// Operations completed after the window (drain), not counted in throughput.
    pub drained_ops: u64,
    /// Node counters summed over the cluster.
    pub stats: NodeStats,
    /// Transmissions lost (and retransmitted).
    pub drops: u64,
    /// Messages that hit a latency spike.
    pub spikes: u64,
    /// CPU model: what the cores did inside the measured window (zero without a model).
    pub cpu: CpuUsage,
    /// Processors per node (0: no CPU model).
    pub cores: u32,
    /// Gets the history check compared with the puts acknowledged before they started.
    pub gets_checked: u64,
    /// Gets that returned an older version than one acknowledged before they started (must be 0:
    /// the read guarantee of [`WriteProtocol`](crate::WriteProtocol)).
    pub stale_reads: u64,
    /// Put acknowledgements inconsistent with their key's history (must be 0).
    pub bad_put_replies: u64,
    /// The verdict: the history check's first violation during the run, else the verifier's
    /// after quiescence.
    pub verify: Result<VerifyReport, VerifyError>,
}

impl SimReport {
    /// Successful requests per second per node in virtual time (IspnPerfTest's `reqs/sec/node`).
    pub fn req_per_s_per_node(&self) -> f64 {
        self.req_per_s_cluster() / self.nodes.max(1) as f64
    }

    /// Successful requests per second over the cluster in virtual time.
    pub fn req_per_s_cluster(&self) -> f64 {
        self.requesters.ok_ops() as f64 / (self.window_us.max(1) as f64 / 1e6)
    }

    /// CPU model: the fraction of the cluster's core time in use in the window (0 without).
    pub fn cpu_utilisation(&self) -> f64 {
        let capacity = self.window_us.max(1) as f64 * self.cores as f64 * self.nodes as f64;
        if capacity == 0.0 {
            0.0
        } else {
            self.cpu.busy_us as f64 / capacity
        }
    }

    /// CPU model: the mean time an input waited for a core in the window, in µs.
    pub fn cpu_wait_mean_us(&self) -> f64 {
        self.cpu.wait_us as f64 / self.cpu.inputs.max(1) as f64
    }
}
