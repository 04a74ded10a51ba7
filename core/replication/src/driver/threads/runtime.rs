//! What the threads of the driver share: cluster-wide state ([`ClusterRuntime`]: the clock's
//! epoch, the in-flight count, every node's transport inbox, the link settings) and per-node state
//! ([`NodeRuntime`]: the machine behind its mutex ([`NodeState`]), its pools' job queues, the
//! thread counters). Upstream these are a JGroups channel's shared transport and one cache
//! member's executors.

use std::time::Instant;

use crossbeam::channel::Sender;

use super::signal::SlotSignal;
use crate::components::collections::IdMap;
use crate::driver::net::sockets::Connections;
use crate::driver::retransmission::LinkFaults;
use crate::error::VerifyError;
use crate::message::{ClientOp, Input, NodeId, Outcome, Output};
use crate::node::NodeMachine;
use critsec_sync::Mutex;
// Plain std types for the driver's own bookkeeping: the driver is measured, not model-checked
// (the wait/wake hand-off it relies on is [`SlotSignal`], which loom checks).
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// What a requester's reply channel carries: its op and the outcome.
pub(super) type Reply = (ClientOp, Outcome);

/// What a transport thread's inbox carries.
pub(super) enum Envelope {
    Input {
        at: u64,
        input: Input,
        /// A message resent on request (see `Stepper::step_message`).
        resent: bool,
    },
    Timer {
        at: u64,
    },
    /// The machine's inbound path, blocked under the `block` policy, delivers again.
    Unblocked,
    Stop,
}

/// What a pool (or OOB) thread's job queue carries: run a parked command in slot `slot`,
/// woken through `signal` while it waits.
pub(super) enum Job {
    Run { slot: u64, signal: Arc<SlotSignal> },
    Stop,
}

/// What every thread of the cluster shares (behind an `Arc`): the clock's epoch, the count of
/// messages in flight, every node's transport inbox and the link settings.
pub(super) struct ClusterRuntime {
    /// Time zero of the driver's clock (µs since then).
    pub(super) epoch: Instant,
    /// Messages sent but not yet handled. Incremented before a send and decremented after the
    /// handling with Release; the quiescence checker's Acquire load then sees the handling's
    /// effects (which it reads under the node mutexes anyway).
    pub(super) in_flight: AtomicI64,
    /// Inputs put into this process's transport inboxes and not yet handled: a process of a
    /// split cluster reports it (with [`Links`]' counts) for the coordinator's termination check.
    pub(super) pending: Arc<AtomicI64>,
    /// The next requester id to hand out.
    pub(super) next_requester: AtomicU32,
    /// Every node's transport inbox.
    pub(super) peers: Vec<Sender<Envelope>>,
    /// Link settings, as in [`ThreadsConfig`](super::ThreadsConfig).
    pub(super) link: LinkFaults,
    /// The history check of every requester's operations.
    pub(super) history: SharedHistory,
    /// The nodes' TCP connections, when messages go over sockets ([`ThreadsConfig::sockets`](super::ThreadsConfig::sockets)).
    pub(super) sockets: Option<Connections>,
    /// The state of the connections: errors, wire counts, peers gone.
    pub(super) links: Arc<Links>,
}

/// What the threads driver knows of its sockets ([`ThreadsConfig::sockets`](super::ThreadsConfig::sockets)).
/// Counters are Relaxed: statistics and the coordinator's termination check, which reads them
/// twice and compares (see [`Progress`](super::Progress)).
pub(super) struct Links {
    nodes: usize,
    /// Errors of connections (a send that failed, a reader that met bad bytes), each with the
    /// peer it concerns where known; the run fails its verification with the first that does
    /// not concern a peer known to be gone. At most [`Links::KEPT`] are kept.
    errors: std::sync::Mutex<Vec<(Option<NodeId>, String)>>,
    /// `sent[from * nodes + to]`: messages this process wrote on the connection from `from` to
    /// `to`; `received` likewise, those its readers delivered.
    sent: Vec<AtomicU64>,
    received: Vec<AtomicU64>,
    /// Per peer, the readers of its connections to this process that have ended.
    closed_from: Vec<AtomicU32>,
    /// Per peer, whether it is gone (its process killed): a send to it is dropped, as the dead
    /// process would have dropped it.
    gone: Vec<std::sync::atomic::AtomicBool>,
}

impl Links {
    const KEPT: usize = 16;

    pub(super) fn new(nodes: usize) -> Self {
        let counts = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect();
        Links {
            nodes,
            errors: std::sync::Mutex::new(Vec::new()),
            sent: counts(nodes * nodes),
            received: counts(nodes * nodes),
            closed_from: (0..nodes).map(|_| AtomicU32::new(0)).collect(),
            gone: (0..nodes)
                .map(|_| std::sync::atomic::AtomicBool::new(false))
                .collect(),
        }
    }

    /// Keeps `error` (about `peer`, if known) among the first [`Links::KEPT`].
    pub(super) fn failed(&self, peer: Option<NodeId>, error: String) {
        // A plain mutex, not a recorded one: it is taken only on an error, and the lock
        // statistics of a run should show the locks it measures.
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if errors.len() < Self::KEPT {
            errors.push((peer, error));
        }
    }

    /// The first error that does not concern a peer known to be gone.
    pub(super) fn first_error(&self) -> Option<String> {
        let errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        errors
            .iter()
            .find(|(peer, _)| !peer.is_some_and(|p| self.is_gone(p)))
            .map(|(_, e)| e.clone())
    }

    fn index(&self, from: NodeId, to: NodeId) -> Option<usize> {
        let (from, to) = (usize::from(from), usize::from(to));
        (from < self.nodes && to < self.nodes).then_some(from * self.nodes + to)
    }

    pub(super) fn count_sent(&self, from: NodeId, to: NodeId) {
        if let Some(i) = self.index(from, to) {
            self.sent[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn count_received(&self, from: NodeId, to: NodeId) {
        if let Some(i) = self.index(from, to) {
            self.received[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn reader_ended(&self, from: NodeId) {
        if let Some(c) = self.closed_from.get(usize::from(from)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn mark_gone(&self, peer: NodeId) {
        if let Some(g) = self.gone.get(usize::from(peer)) {
            g.store(true, Ordering::Relaxed);
        }
    }

    pub(super) fn is_gone(&self, peer: NodeId) -> bool {
        self.gone
            .get(usize::from(peer))
            .is_some_and(|g| g.load(Ordering::Relaxed))
    }

    /// The wire counts and closed readers, as [`Progress`](super::Progress) reports them.
    pub(super) fn counts(&self) -> (Vec<u64>, Vec<u64>, Vec<u32>) {
        let read = |v: &[AtomicU64]| v.iter().map(|a| a.load(Ordering::Relaxed)).collect();
        (
            read(&self.sent),
            read(&self.received),
            self.closed_from
                .iter()
                .map(|a| a.load(Ordering::Relaxed))
                .collect(),
        )
    }
}

/// The history check across requester threads (the threads driver's
/// [`HistoryCheck`](crate::HistoryCheck)): per key the newest version acknowledged
/// so far, in real time, and the violations found. A requester reads its op's floor before it
/// steps the op in and checks the outcome when its reply arrives: a get must return at least the
/// floor's version, a put must be acknowledged with a newer one and echo its value. (The
/// primary's own entry, which the simulation also compares, is behind another node's mutex
/// here, so it is not compared.)
pub(super) struct SharedHistory {
    newest: Vec<AtomicU64>,
    gets_checked: AtomicU64,
    stale_reads: AtomicU64,
    bad_put_replies: AtomicU64,
    first: Mutex<Option<VerifyError>>,
}

impl SharedHistory {
    pub(super) fn new(keys: u32) -> Self {
        SharedHistory {
            newest: (0..keys).map(|_| AtomicU64::new(0)).collect(),
            gets_checked: AtomicU64::new(0),
            stale_reads: AtomicU64::new(0),
            bad_put_replies: AtomicU64::new(0),
            first: Mutex::new("replication.history", None),
        }
    }

    /// The floor of an op of `key` issued now. Acquire pairs with the Release in [`Self::done`]:
    /// an op that sees an ack is ordered after it, hence after the put's apply at its primary.
    pub(super) fn floor(&self, key: u32) -> u64 {
        self.newest
            .get(key as usize)
            .map_or(0, |a| a.load(Ordering::Acquire))
    }

    /// `op`, issued with `floor`, completed with `outcome`.
    pub(super) fn done(&self, op: &ClientOp, outcome: &Outcome, floor: u64) {
        match (op, outcome) {
            (ClientOp::Get(key), Outcome::Got(e)) => {
                // Relaxed: counters read after the run.
                self.gets_checked.fetch_add(1, Ordering::Relaxed);
                if e.version < floor {
                    self.stale_reads.fetch_add(1, Ordering::Relaxed);
                    self.note(VerifyError::StaleRead {
                        key: *key,
                        floor,
                        got: e.version,
                        count: 0,
                    });
                }
            }
            (ClientOp::Put(key, value), Outcome::Put(e)) => {
                if e.version <= floor || e.value != *value {
                    self.bad_put_replies.fetch_add(1, Ordering::Relaxed);
                    self.note(VerifyError::BadPutReply {
                        key: *key,
                        what: format!(
                            "acknowledged as {e:?} after version {floor} was acknowledged, writing {value:?}"
                        ),
                    });
                }
                if let Some(a) = self.newest.get(*key as usize) {
                    a.fetch_max(e.version, Ordering::Release);
                }
            }
            _ => {}
        }
    }

    fn note(&self, e: VerifyError) {
        let mut first = self.first.lock();
        if first.is_none() {
            *first = Some(e);
        }
    }

    /// Gets checked so far.
    pub(super) fn gets_checked(&self) -> u64 {
        self.gets_checked.load(Ordering::Relaxed)
    }

    /// `Ok` if no op failed the check, else the first violation (a stale read with their count).
    pub(super) fn result(&self) -> Result<(), VerifyError> {
        let stale = self.stale_reads.load(Ordering::Relaxed);
        match self.first.lock().clone() {
            None => Ok(()),
            Some(VerifyError::StaleRead {
                key, floor, got, ..
            }) => Err(VerifyError::StaleRead {
                key,
                floor,
                got,
                count: stale,
            }),
            Some(e) => Err(e),
        }
    }
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
/// behind the node mutex, the job queues of its two pools, and the threads' counters.
pub(super) struct NodeRuntime {
    /// The node.
    pub(super) id: NodeId,
    pub(super) state: Mutex<NodeState>,
    /// Parked commands for the remote-command pool's threads, and for the OOB pool's.
    pub(super) jobs: Sender<Job>,
    pub(super) oob_jobs: Sender<Job>,
    pub(super) counters: Counters,
}
