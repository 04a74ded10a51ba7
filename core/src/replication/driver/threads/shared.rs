//! What the threads of the driver share: cluster-wide state ([`ClusterRuntime`]: the clock's
//! epoch, the in-flight count, every node's transport inbox, the link settings) and per-node state
//! ([`NodeRuntime`]: the machine behind its mutex ([`NodeState`]), its pools' job queues, the
//! thread counters). Upstream these are a JGroups channel's shared transport and one cache
//! member's executors.

use std::time::Instant;

use crossbeam::channel::Sender;

use super::pool_threads::Job;
use super::signal::SlotSignal;
use super::transport::Envelope;
use crate::replication::message::{ClientOp, NodeId, Outcome, Output};
use crate::replication::node::NodeMachine;
use crate::replication::parts::collections::IdMap;
use crate::sync::Mutex;
// Plain std types for the driver's own bookkeeping: the driver is measured, not model-checked
// (the wait/wake hand-off it relies on is [`SlotSignal`], which loom checks).
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicUsize};

/// What a requester's reply channel carries: its op and the outcome.
pub(super) type Reply = (ClientOp, Outcome);

/// What every thread of the cluster shares (behind an `Arc`): the clock's epoch, the count of
/// messages in flight, every node's transport inbox and the link settings. Was `Shared` before
/// the threads driver was split by role (issue #11).
pub(super) struct ClusterRuntime {
    /// Time zero of the driver's clock (µs since then).
    pub(super) epoch: Instant,
    /// Messages sent but not yet handled. Incremented before a send and decremented after the
    /// handling with Release; the quiescence checker's Acquire load then sees the handling's
    /// effects (which it reads under the node mutexes anyway).
    pub(super) in_flight: AtomicI64,
    /// The next requester id to hand out.
    pub(super) next_requester: AtomicU32,
    /// Every node's transport inbox.
    pub(super) peers: Vec<Sender<Envelope>>,
    /// Link settings, as in [`ThreadsConfig`](super::ThreadsConfig).
    pub(super) latency_us: u64,
    pub(super) jitter_us: u64,
    pub(super) retransmit_us: u64,
    pub(super) drop_per_mille: u32,
}

impl ClusterRuntime {
    /// The driver's clock: µs since the cluster started.
    pub(super) fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }
}

/// What a node's mutex guards: its machine, its requesters' reply channels, the signals of its
/// held slots, and the output buffer of the step in progress.
pub(super) struct NodeState {
    pub(super) machine: Box<dyn NodeMachine>,
    pub(super) clients: Vec<Option<Sender<Reply>>>,
    /// The signal of every slot a thread holds or will hold, by slot id.
    pub(super) signals: IdMap<u64, Arc<SlotSignal>>,
    pub(super) stopping: bool,
    pub(super) out: Vec<Output>,
}

/// Counters of the real threads; Relaxed everywhere: they are statistics read after the fact,
/// nothing is published through them.
#[derive(Default)]
pub(super) struct Counters {
    pub(super) pool_busy: AtomicUsize,
    pub(super) pool_busy_max: AtomicUsize,
    pub(super) oob_busy: AtomicUsize,
    pub(super) oob_busy_max: AtomicUsize,
    pub(super) pool_commands: AtomicU64,
    pub(super) oob_commands: AtomicU64,
    pub(super) blocked_waits: AtomicU64,
    pub(super) resumes: AtomicU64,
    pub(super) transport_blocks: AtomicU64,
}

/// Per-node state shared (behind an `Arc`) by the threads the driver runs for one node (its
/// transport thread, its pool and OOB threads, and the requesters calling into it): the machine
/// behind the node mutex, the job queues of its two pools, and the threads' counters. Was
/// `NodeShared` before the threads driver was split by role (issue #11).
pub(super) struct NodeRuntime {
    /// The node.
    pub(super) id: NodeId,
    pub(super) state: Mutex<NodeState>,
    /// Parked commands for the remote-command pool's threads, and for the OOB pool's.
    pub(super) jobs: Sender<Job>,
    pub(super) oob_jobs: Sender<Job>,
    pub(super) counters: Counters,
}
