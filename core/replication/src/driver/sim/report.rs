//! What a simulated run returns: the requesters' view inside the window, the summed node
//! counters, the CPU model's usage, the history check's counts and the verdict (IspnPerfTest's
//! per-run report), and, for a run the drain cap cut, what was still in flight ([`InFlight`]).
//! Its verdict is the model's ([`VerifyError`]) or the simulator's own ([`SimError::DrainCut`]).

use std::collections::BTreeMap;

use super::cpu::CpuUsage;
use crate::components::timeouts::Deadline;
use crate::error::VerifyError;
use crate::message::{Input, Msg, NodeId};
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
    /// wake-ups of expired deadlines after it are not counted), or, if the drain cap cut the
    /// run, the last before the cut.
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
    /// The least delay of a message between nodes, µs: the length of the windows the worker
    /// threads run in lockstep (0: the run had one thread, whatever was asked for).
    pub lookahead_us: u64,
    /// The verdict: [`SimError::DrainCut`] if the drain cap cut the run (with what was still
    /// in flight; its end state is mid-flight, so the verifier does not judge it, and the
    /// history check's findings stay in `stale_reads` and `bad_put_replies`), else the history
    /// check's first violation during the run, else the verifier's after quiescence.
    pub verify: Result<VerifyReport, SimError>,
}

/// Why a simulated run is not verified: the model's verdict on it, or the simulator's own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The history check (during the run) or the verifier (after quiescence) found a violation.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// The drain cap cut the run before it became quiescent: its end state is mid-flight, so the
    /// run is not verified (a cut run never passes).
    #[error("the drain cap cut the run at {at_us} µs, before it became quiescent; {in_flight}")]
    DrainCut {
        /// The virtual time of the cut.
        at_us: u64,
        /// What was still pending.
        in_flight: Box<InFlight>,
    },
}

/// The work a simulated run still had when the drain cap cut it, each kind of message, input
/// and deadline counted apart (a kind not pending is absent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InFlight {
    /// Messages on their way over a link (a transmission the link lost and will repair
    /// included), by message kind.
    pub on_links: BTreeMap<&'static str, u64>,
    /// Messages a node's full pools rejected, waiting for their connection's retransmission,
    /// by message kind.
    pub awaiting_retransmission: BTreeMap<&'static str, u64>,
    /// Inputs a node's core has taken and not yet handed to the node (CPU model), by kind: a
    /// message's kind, `client op` or `timer`.
    pub queued_inputs: BTreeMap<&'static str, u64>,
    /// Deadlines the nodes still have armed, by what they time out: `client` (an originator's
    /// request), `stagger`, `lock`, `backup` (lock forwarding's backup replies), `repl` (a
    /// key-queue replication batch).
    pub armed_deadlines: BTreeMap<&'static str, u64>,
    /// Operations requesters were still to issue (fixed-request runs).
    pub to_issue: u64,
    /// The nodes that were not quiescent, and why.
    pub busy_nodes: Vec<(NodeId, String)>,
}

impl InFlight {
    /// Counts a message on a link.
    pub(super) fn on_link(&mut self, msg: &Msg) {
        *self.on_links.entry(msg_kind(msg)).or_default() += 1;
    }

    /// Counts a message awaiting retransmission.
    pub(super) fn awaiting(&mut self, msg: &Msg) {
        *self
            .awaiting_retransmission
            .entry(msg_kind(msg))
            .or_default() += 1;
    }

    /// Counts an input queued for a core.
    pub(super) fn queued(&mut self, input: &Input) {
        let kind = match input {
            Input::Client { .. } => "client op",
            Input::Message { msg, .. } => msg_kind(msg),
            Input::Timer => "timer",
            Input::Run { .. } => "run",
            Input::Resume { .. } => "resume",
            Input::Left(_) => "left",
        };
        *self.queued_inputs.entry(kind).or_default() += 1;
    }

    /// Counts an armed deadline.
    pub(super) fn armed(&mut self, d: Deadline) {
        let kind = match d {
            Deadline::Client(_) => "client",
            Deadline::Stagger(_) => "stagger",
            Deadline::Lock(_) => "lock",
            Deadline::Backup(_) => "backup",
            Deadline::Repl(_) => "repl",
        };
        *self.armed_deadlines.entry(kind).or_default() += 1;
    }
}

/// A message's kind, as [`InFlight`] counts it.
fn msg_kind(msg: &Msg) -> &'static str {
    match msg {
        Msg::Get { .. } => "Get",
        Msg::GetReply { .. } => "GetReply",
        Msg::Put { .. } => "Put",
        Msg::PutReply { .. } => "PutReply",
        Msg::BackupWrite { .. } => "BackupWrite",
        Msg::BackupReply { .. } => "BackupReply",
        Msg::BackupAck { .. } => "BackupAck",
        Msg::Replicate { .. } => "Replicate",
        Msg::ReplicateAck { .. } => "ReplicateAck",
    }
}

impl std::fmt::Display for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn counts(
            f: &mut std::fmt::Formatter<'_>,
            what: &str,
            by_kind: &BTreeMap<&'static str, u64>,
        ) -> std::fmt::Result {
            let total: u64 = by_kind.values().sum();
            write!(f, "{what}: {total}")?;
            if total > 0 {
                let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
                write!(f, " ({})", kinds.join(", "))?;
            }
            write!(f, "; ")
        }
        counts(
            f,
            "messages awaiting retransmission",
            &self.awaiting_retransmission,
        )?;
        counts(f, "messages on the links", &self.on_links)?;
        counts(f, "inputs queued for a core", &self.queued_inputs)?;
        counts(f, "armed deadlines", &self.armed_deadlines)?;
        write!(f, "operations still to issue: {}; ", self.to_issue)?;
        if self.busy_nodes.is_empty() {
            write!(f, "no node busy")
        } else {
            let busy: Vec<String> = self
                .busy_nodes
                .iter()
                .map(|(n, why)| format!("node {n}: {why}"))
                .collect();
            write!(f, "busy: {}", busy.join(", "))
        }
    }
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
