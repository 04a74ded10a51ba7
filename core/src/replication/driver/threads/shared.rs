//! What the threads of the driver share: cluster-wide state ([`Shared`]: the clock's epoch, the
//! in-flight count, every node's transport inbox, the link settings) and per-node state
//! ([`NodeShared`]: the machine behind its mutex, its pools' job queues, the thread counters).

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

pub(super) struct Shared {
    pub(super) epoch: Instant,
    /// Messages sent but not yet handled. Incremented before a send and decremented after the
    /// handling with Release; the quiescence checker's Acquire load then sees the handling's
    /// effects (which it reads under the node mutexes anyway).
    pub(super) in_flight: AtomicI64,
    pub(super) next_requester: AtomicU32,
    /// Every node's transport inbox.
    pub(super) peers: Vec<Sender<Envelope>>,
    pub(super) latency_us: u64,
    pub(super) jitter_us: u64,
    pub(super) retransmit_us: u64,
    pub(super) drop_per_mille: u32,
}

impl Shared {
    pub(super) fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }
}

/// What a node's mutex guards.
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

pub(super) struct NodeShared {
    pub(super) id: NodeId,
    pub(super) state: Mutex<NodeState>,
    pub(super) jobs: Sender<Job>,
    pub(super) oob_jobs: Sender<Job>,
    pub(super) counters: Counters,
}
