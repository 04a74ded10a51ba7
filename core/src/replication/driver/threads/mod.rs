//! The real-threads driver: every node is a [`NodeMachine`] behind a mutex, driven by real
//! threads that block where Infinispan's threads block.
//!
//! Per node:
//! - a **transport thread** (JGroups' receiver): holds arriving messages until their link latency
//!   has passed (a small heap; it sleeps in `recv_timeout`, so latency costs no CPU), delivers
//!   them to the machine, and fires the node's deadline timer;
//! - a **remote-command pool** of `pool_size` real worker threads, and with the caller-runs policy
//!   an **OOB pool** of `oob_pool_size` threads (the JGroups OOB threads that run a command when
//!   the first pool is full);
//! - requester threads of the node call into the machine themselves through [`ClusterClient`]
//!   and block on their reply channel.
//!
//! The machine stays the single source of truth: it admits, queues or rejects a command
//! ([`Pool`](crate::replication::parts::pool::Pool)), grants key locks in FIFO order and runs every timeout, exactly
//! as in the simulation. The machine is switched to real slots
//! ([`NodeMachine::use_real_slots`]), so an admitted command is not run by whoever delivered it
//! but parked and announced ([`Output::Execute`]); a thread of the slot's pool takes it and from
//! then on *is* the slot:
//!
//! | the command ... | its pool thread | woken by |
//! |---|---|---|
//! | is parked (`Execute`) | the job waits in the pool's channel for a free thread | a thread returning to the pool |
//! | runs (`Input::Run`) | holds the node mutex for the step only | - |
//! | waits for its key lock | blocks on its [`SlotSignal`] | the unlocking thread posts `Resume` (machine: `Output::Resume`), or the transport thread's lock timeout posts `Freed` |
//! | continues after the grant (`Input::Resume`) | holds the node mutex for the step only | - |
//! | waits for a sync backup reply (lock forwarding) | blocks on its [`SlotSignal`] | the transport thread delivering the last reply, or the backup timeout, posts `Freed` |
//! | is done (`Output::SlotFreed`) | returns to the pool | - |
//!
//! So with lock forwarding a real worker stays blocked for a backup round trip while its key
//! stays locked, and key-lock waiters really queue up, one blocked thread each. Rejection
//! policies act on real threads because the machine's slot counts and the real threads move
//! together: `abort` rejects (the sender retransmits after `retransmit_us`); `caller-runs` hands
//! the command to an OOB thread, which is then blocked in it, and once every OOB thread is
//! blocked the machine drops arriving messages (replies included) for retransmission: the seed's
//! pool exhaustion; `block` blocks the transport thread (below).
//!
//! `block` (JGroups' receiver thread blocking in a full executor): a command from another node
//! that finds the pool full is held by the machine, and so is every later message from another
//! node, replies included, in arrival order, until a slot frees (see `node.rs`). The step that
//! held it reports the block, and the transport thread stops delivering: what arrives meanwhile
//! stays undelivered in its `delayed` heap. It then waits on its channel with the node's timer as
//! the only deadline, so it keeps firing lock, backup and reply timeouts: those are how a stalled
//! node recovers, and they may be what frees the slot (then the timer step itself reports the
//! block over). A slot freed on another thread (a pool thread finishing, a requester's step)
//! delivers the held messages in that step and, when the last one is delivered, the machine
//! says so (`Output::InboundResumed`) and that thread sends [`Envelope::Unblocked`] to the
//! transport. No wake-up is lost: the transport reads the block state under the node mutex at
//! the end of the step that started the block, and whatever ends it is a later step, under the
//! same mutex, whose `Unblocked` is sent after it, so it finds the transport waiting or
//! arrives in its channel. A stale `Unblocked` (a block that ended and a new one that began
//! before the transport read it) lets at most one more message into the machine, which holds
//! it in order: the machine, not the flag, decides delivery. Requester threads are not held:
//! their requests do not come through the transport. The pool threads never wait for the
//! transport, so the slot that ends a block always frees (or its timeout fires on the transport).
//!
//! Why no wake-up is lost: a signal is created and registered (under the node mutex) when the
//! machine announces `Execute`, before any thread can see the slot; every later `Resume` or
//! `SlotFreed` for that slot is produced under the same mutex, so it finds the signal; the post
//! itself happens after the node mutex is released and sets the signal's state before
//! notifying, and the worker checks that state before every wait (see [`signal`]).
//!
//! Why no deadlock: a thread holds at most one node mutex, only for one machine step, and never
//! waits for anything while holding it; everything a step produces (messages to other nodes,
//! timer changes, jobs, replies, signal posts) goes over unbounded channels or leaf-locked
//! signals after the mutex is released. A blocked worker holds no lock. The transport thread
//! never waits for a worker except under `block`, and then with its timer armed, so deadlines
//! always progress, and every wait the
//! machine puts a slot in has a deadline (lock timeout, backup-reply timeout). A parked job
//! always finds a thread: the machine admits at most as many slots as the pool has threads, and
//! a thread whose slot was freed returns to its pool without waiting for anything.
//!
//! Deviation: a requester whose own node is the key's primary holds no pool slot (as upstream:
//! it is its own thread); when the lock it waits for is granted, the grant's work runs on the
//! thread that released the lock, and the requester is woken by its reply.
//!
//! Value bytes: a message a node sends another is handed over as [`Msg::marshalled`], its
//! payload deep-copied into a fresh buffer on the sending thread, standing in for the
//! transport's marshal + unmarshal (one copy, where a real transport makes two). So the
//! receiver never shares the sender's buffer, and the copy costs the sender's CPU time per hop.
//!
//! Unlike the simulation this driver reads the wall clock: time is µs since the cluster started.
//! Contended waits for a node's mutex count as `replication.node` in the `sync` lock statistics.

pub mod signal;

pub use signal::{SlotEvent, SlotSignal};

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::replication::error::ConfigError;
use crate::replication::message::{ClientOp, Input, Key, Msg, NodeId, Outcome, Output, Value};
use crate::replication::node::ClusterConfig;
use crate::replication::parts::collections::IdMap;
use crate::replication::parts::pool::{RejectionPolicy, SlotKind};
use crate::replication::verifier::{AckLog, NodeSnapshot, VerifyReport, verify_snapshots};
use crate::replication::write_protocol::{NodeMachine, NodeStats, WriteProtocol, build_cluster};
use crate::sync::Mutex;
// Plain std types for the driver's own bookkeeping: the driver is measured, not model-checked
// (the wait/wake hand-off it relies on is [`SlotSignal`], which loom checks).
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering as AtomicOrdering};

/// Settings of a threads cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadsConfig {
    /// The cluster and protocol settings.
    pub cluster: ClusterConfig,
    /// One-way message latency in µs (0: hand over at once).
    pub latency_us: u64,
    /// Uniform extra latency in `0..=jitter_us`.
    pub jitter_us: u64,
    /// Delay before a message a full pool rejected (or the link lost) is delivered again.
    pub retransmit_us: u64,
    /// Per-mille chance that a transmission is lost and retransmitted after `retransmit_us`.
    pub drop_per_mille: u32,
    /// Seed of the jitter.
    pub seed: u64,
}

impl Default for ThreadsConfig {
    fn default() -> Self {
        ThreadsConfig {
            cluster: ClusterConfig::default(),
            latency_us: 0,
            jitter_us: 0,
            retransmit_us: 2_000,
            drop_per_mille: 0,
            seed: 1,
        }
    }
}

/// Why a client call failed at the driver level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThreadsError {
    /// The key is outside the cluster's key space.
    #[error("key {key} is out of range: valid keys are 0..{keys}")]
    BadKey {
        /// The key.
        key: Key,
        /// The key count.
        keys: u32,
    },
    /// No reply came within the reply timeout plus a margin (the node is stuck or gone).
    #[error("no reply from node {node} within {waited_ms} ms")]
    NoReply {
        /// The node called.
        node: NodeId,
        /// How long the client waited.
        waited_ms: u64,
    },
    /// The cluster has shut down.
    #[error("the cluster has shut down")]
    ShutDown,
    /// The cluster did not become quiescent in time.
    #[error("the cluster did not quiesce within {waited_ms} ms: {reason}")]
    NotQuiescent {
        /// How long it waited.
        waited_ms: u64,
        /// What was still busy.
        reason: String,
    },
}

/// What the real threads did, summed over the cluster (the machine's own counts are in
/// [`NodeStats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Commands run by remote-command pool threads.
    pub pool_commands: u64,
    /// Commands run by OOB threads (caller-runs overflow).
    pub oob_commands: u64,
    /// Times a pool or OOB thread really blocked inside a command (key lock or sync reply).
    pub blocked_waits: u64,
    /// Commands continued on their own thread after a key lock was granted to them.
    pub resumes: u64,
    /// The most remote-command pool threads busy at once on one node.
    pub max_busy_pool_threads: u64,
    /// The most OOB threads busy at once on one node.
    pub max_busy_oob_threads: u64,
    /// `block` policy: times a transport thread stopped delivering because its node's inbound
    /// path was blocked by a full pool.
    pub transport_blocks: u64,
}

type Reply = (ClientOp, Outcome);

enum Envelope {
    Input {
        at: u64,
        input: Input,
    },
    Timer {
        at: u64,
    },
    /// The machine's inbound path, blocked under the `block` policy, delivers again.
    Unblocked,
    Stop,
}

enum Job {
    Run { slot: u64, signal: Arc<SlotSignal> },
    Stop,
}

struct Delayed {
    at: u64,
    seq: u64,
    input: Input,
}
impl PartialEq for Delayed {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Delayed {}
impl PartialOrd for Delayed {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Delayed {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

struct Shared {
    epoch: Instant,
    /// Messages sent but not yet handled. Incremented before a send and decremented after the
    /// handling with Release; the quiescence checker's Acquire load then sees the handling's
    /// effects (which it reads under the node mutexes anyway).
    in_flight: AtomicI64,
    next_requester: AtomicU32,
    /// Every node's transport inbox.
    peers: Vec<Sender<Envelope>>,
    latency_us: u64,
    jitter_us: u64,
    retransmit_us: u64,
    drop_per_mille: u32,
}

impl Shared {
    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }
}

/// What a node's mutex guards.
struct NodeState {
    machine: Box<dyn NodeMachine>,
    clients: Vec<Option<Sender<Reply>>>,
    /// The signal of every slot a thread holds or will hold, by slot id.
    signals: IdMap<u64, Arc<SlotSignal>>,
    stopping: bool,
    out: Vec<Output>,
}

/// Counters of the real threads; Relaxed everywhere: they are statistics read after the fact,
/// nothing is published through them.
#[derive(Default)]
struct Counters {
    pool_busy: AtomicUsize,
    pool_busy_max: AtomicUsize,
    oob_busy: AtomicUsize,
    oob_busy_max: AtomicUsize,
    pool_commands: AtomicU64,
    oob_commands: AtomicU64,
    blocked_waits: AtomicU64,
    resumes: AtomicU64,
    transport_blocks: AtomicU64,
}

struct NodeShared {
    id: NodeId,
    state: Mutex<NodeState>,
    jobs: Sender<Job>,
    oob_jobs: Sender<Job>,
    counters: Counters,
}

/// Something a step produced, carried out after the node mutex is released.
enum Action {
    /// `msg` from `from` goes to `to`'s transport.
    Send {
        to: NodeId,
        /// A retransmission of a message this node rejected: it is already this node's copy.
        retransmit: bool,
        from: NodeId,
        msg: Msg,
    },
    Reply(Sender<Reply>, Reply),
    Timer(u64),
    Job(SlotKind, Job),
    Signal(Arc<SlotSignal>, SlotEvent),
    Unblock,
}

/// One thread's handle for stepping its node's machine.
struct Stepper {
    node: Arc<NodeShared>,
    shared: Arc<Shared>,
    rng: SmallRng,
    actions: Vec<Action>,
    /// Whether this is the node's transport thread (which learns of unblocking from its own
    /// step's result instead of an [`Envelope::Unblocked`]).
    transport: bool,
    /// Whether the machine's inbound path was blocked at the end of this thread's last step.
    inbound_blocked: bool,
}

impl Stepper {
    /// Feeds `input` to the machine under the node mutex, then carries out the effects outside
    /// it. False when the cluster is shutting down (nothing was fed).
    fn step(&mut self, input: Input) -> bool {
        let now = {
            let mut guard = self.node.state.lock();
            let st = &mut *guard;
            if st.stopping {
                return false;
            }
            let now = self.shared.now_us();
            st.machine.handle(now, input, &mut st.out);
            self.inbound_blocked = st.machine.inbound_blocked();
            let id = self.node.id;
            for o in st.out.drain(..) {
                let action = match o {
                    Output::Send { to, msg } => Action::Send {
                        to,
                        retransmit: false,
                        from: id,
                        msg,
                    },
                    Output::Rejected { from, msg } => Action::Send {
                        to: id,
                        retransmit: true,
                        from,
                        msg,
                    },
                    Output::Reply {
                        requester,
                        op,
                        outcome,
                    } => match st.clients.get(requester as usize) {
                        Some(Some(tx)) => Action::Reply(tx.clone(), (op, outcome)),
                        _ => continue,
                    },
                    Output::SetTimer { at } => Action::Timer(at),
                    Output::Execute { slot, kind } => {
                        let signal = Arc::new(SlotSignal::new());
                        st.signals.insert(slot, Arc::clone(&signal));
                        Action::Job(kind, Job::Run { slot, signal })
                    }
                    Output::Resume { slot } => match st.signals.get(&slot) {
                        Some(s) => Action::Signal(Arc::clone(s), SlotEvent::Resume),
                        None => continue,
                    },
                    Output::SlotFreed { slot } => match st.signals.remove(&slot) {
                        Some(s) => Action::Signal(s, SlotEvent::Freed),
                        None => continue,
                    },
                    Output::InboundResumed if !self.transport => Action::Unblock,
                    Output::InboundResumed => continue,
                };
                self.actions.push(action);
            }
            now
        };
        self.perform(now);
        true
    }

    fn perform(&mut self, now: u64) {
        for a in std::mem::take(&mut self.actions) {
            match a {
                Action::Send {
                    to,
                    retransmit,
                    from,
                    msg,
                } => {
                    // Marshal + unmarshal, as one copy of the value bytes, outside the node
                    // mutex; a retransmitted message is the receiver's copy already.
                    let msg = if retransmit || to == from {
                        msg
                    } else {
                        msg.marshalled()
                    };
                    let input = Input::Message { from, msg };
                    let sh = &self.shared;
                    let at = if retransmit {
                        now + sh.retransmit_us
                    } else {
                        let mut at = now + sh.latency_us;
                        if sh.jitter_us > 0 {
                            at += self.rng.random_range(0..=sh.jitter_us);
                        }
                        while sh.drop_per_mille > 0
                            && self.rng.random_range(0..1000) < sh.drop_per_mille
                        {
                            at += sh.retransmit_us;
                        }
                        at
                    };
                    // Release: see `Shared::in_flight`.
                    sh.in_flight.fetch_add(1, AtomicOrdering::Release);
                    let sent = sh
                        .peers
                        .get(to as usize)
                        .is_some_and(|p| p.send(Envelope::Input { at, input }).is_ok());
                    if !sent {
                        sh.in_flight.fetch_sub(1, AtomicOrdering::Release);
                    }
                }
                Action::Reply(tx, reply) => {
                    let _ = tx.send(reply);
                }
                Action::Timer(at) => {
                    if let Some(p) = self.shared.peers.get(self.node.id as usize) {
                        let _ = p.send(Envelope::Timer { at });
                    }
                }
                Action::Job(kind, job) => {
                    let pool = match kind {
                        SlotKind::Pool => &self.node.jobs,
                        SlotKind::Oob => &self.node.oob_jobs,
                    };
                    let _ = pool.send(job);
                }
                Action::Signal(signal, event) => signal.post(event),
                Action::Unblock => {
                    if let Some(p) = self.shared.peers.get(self.node.id as usize) {
                        let _ = p.send(Envelope::Unblocked);
                    }
                }
            }
        }
    }
}

/// Adds one to a busy gauge and raises its maximum.
fn enter(busy: &AtomicUsize, max: &AtomicUsize) {
    let now = busy.fetch_add(1, AtomicOrdering::Relaxed) + 1;
    max.fetch_max(now, AtomicOrdering::Relaxed);
}

/// A pool (or OOB) thread: takes parked commands, runs them, and stays blocked in each for as
/// long as the machine says it holds its slot.
fn pool_thread(mut stepper: Stepper, jobs: Receiver<Job>, oob: bool) {
    let node = Arc::clone(&stepper.node);
    let c = &node.counters;
    let (busy, max, runs) = if oob {
        (&c.oob_busy, &c.oob_busy_max, &c.oob_commands)
    } else {
        (&c.pool_busy, &c.pool_busy_max, &c.pool_commands)
    };
    while let Ok(Job::Run { slot, signal }) = jobs.recv() {
        enter(busy, max);
        runs.fetch_add(1, AtomicOrdering::Relaxed);
        let mut alive = stepper.step(Input::Run { slot });
        while alive {
            let (event, blocked) = signal.wait();
            if blocked {
                c.blocked_waits.fetch_add(1, AtomicOrdering::Relaxed);
            }
            match event {
                SlotEvent::Freed => break,
                SlotEvent::Resume => {
                    c.resumes.fetch_add(1, AtomicOrdering::Relaxed);
                    alive = stepper.step(Input::Resume { slot });
                }
                SlotEvent::Stop => alive = false,
            }
        }
        busy.fetch_sub(1, AtomicOrdering::Relaxed);
        if !alive {
            return;
        }
    }
}

/// The transport thread: delivers messages when their latency has passed, fires the timer.
struct Transport {
    stepper: Stepper,
    rx: Receiver<Envelope>,
    delayed: BinaryHeap<Delayed>,
    seq: u64,
    timer_at: Option<u64>,
    /// The `block` policy stopped this thread's deliveries: it waits for [`Envelope::Unblocked`]
    /// or its timer, and keeps what arrives meanwhile undelivered in `delayed`.
    blocked: bool,
}

impl Transport {
    fn run(mut self) {
        loop {
            let now = self.stepper.shared.now_us();
            while !self.blocked && self.delayed.peek().is_some_and(|d| d.at <= now) {
                if let Some(d) = self.delayed.pop() {
                    self.deliver(d.input);
                }
            }
            if self.timer_at.is_some_and(|t| t <= now) {
                self.timer_at = None;
                self.stepper.step(Input::Timer);
                self.blocked = self.stepper.inbound_blocked;
                if !self.blocked {
                    // The timer (a lock or reply timeout) freed a slot: deliver what is due.
                    continue;
                }
            }
            // Blocked: wait for the unblocking or the timer only, never for a delivery.
            let due = if self.blocked {
                None
            } else {
                self.delayed.peek().map(|d| d.at)
            };
            let next = match (due, self.timer_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let env = match next {
                Some(t) => match self
                    .rx
                    .recv_timeout(Duration::from_micros(t.saturating_sub(now)))
                {
                    Ok(e) => e,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match self.rx.recv() {
                    Ok(e) => e,
                    Err(_) => return,
                },
            };
            match env {
                Envelope::Input { at, input } => {
                    if !self.blocked && at <= self.stepper.shared.now_us() {
                        self.deliver(input);
                    } else {
                        self.seq += 1;
                        self.delayed.push(Delayed {
                            at,
                            seq: self.seq,
                            input,
                        });
                    }
                }
                Envelope::Timer { at } => {
                    self.timer_at = Some(self.timer_at.map_or(at, |t| t.min(at)));
                }
                Envelope::Unblocked => self.blocked = false,
                Envelope::Stop => return,
            }
        }
    }

    fn deliver(&mut self, input: Input) {
        self.stepper.step(input);
        if self.stepper.inbound_blocked && !self.blocked {
            self.stepper
                .node
                .counters
                .transport_blocks
                .fetch_add(1, AtomicOrdering::Relaxed);
        }
        self.blocked = self.stepper.inbound_blocked;
        // Release: pairs with the quiescence checker's Acquire load (see `Shared::in_flight`).
        self.stepper
            .shared
            .in_flight
            .fetch_sub(1, AtomicOrdering::Release);
    }
}

/// A running cluster: per node a transport thread and its pools' threads.
pub struct ThreadCluster {
    nodes: Vec<Arc<NodeShared>>,
    handles: Vec<std::thread::JoinHandle<()>>,
    shared: Arc<Shared>,
    cfg: ThreadsConfig,
}

impl std::fmt::Debug for ThreadCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadCluster")
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl ThreadCluster {
    /// Starts the threads of every node running `protocol`.
    pub fn start(protocol: &dyn WriteProtocol, cfg: ThreadsConfig) -> Result<Self, ConfigError> {
        let mut machines = build_cluster(protocol, &cfg.cluster)?;
        for m in &mut machines {
            m.use_real_slots();
        }
        let (inboxes, receivers): (Vec<_>, Vec<_>) = (0..machines.len())
            .map(|_| channel::unbounded::<Envelope>())
            .unzip();
        let shared = Arc::new(Shared {
            epoch: Instant::now(),
            in_flight: AtomicI64::new(0),
            next_requester: AtomicU32::new(0),
            peers: inboxes,
            latency_us: cfg.latency_us,
            jitter_us: cfg.jitter_us,
            retransmit_us: cfg.retransmit_us,
            drop_per_mille: cfg.drop_per_mille.min(900),
        });
        let oob_threads = match cfg.cluster.rejection {
            // Only caller-runs ever admits a command into an OOB slot.
            RejectionPolicy::CallerRuns => cfg.cluster.oob_pool_size,
            RejectionPolicy::Block | RejectionPolicy::Abort => 0,
        };
        let mut cluster = ThreadCluster {
            nodes: Vec::new(),
            handles: Vec::new(),
            shared: Arc::clone(&shared),
            cfg,
        };
        for (i, (machine, rx)) in machines.into_iter().zip(receivers).enumerate() {
            let (jobs, job_rx) = channel::unbounded();
            let (oob_jobs, oob_rx) = channel::unbounded();
            let node = Arc::new(NodeShared {
                id: i as NodeId,
                state: Mutex::new(
                    "replication.node",
                    NodeState {
                        machine,
                        clients: Vec::new(),
                        signals: IdMap::default(),
                        stopping: false,
                        out: Vec::new(),
                    },
                ),
                jobs,
                oob_jobs,
                counters: Counters::default(),
            });
            cluster.nodes.push(Arc::clone(&node));
            let seed = cluster.cfg.seed.wrapping_add((i as u64) << 32);
            let stepper = |salt: u64| Stepper {
                node: Arc::clone(&node),
                shared: Arc::clone(&shared),
                rng: SmallRng::seed_from_u64(seed.wrapping_add(salt)),
                actions: Vec::new(),
                transport: false,
                inbound_blocked: false,
            };
            let transport = Transport {
                stepper: Stepper {
                    transport: true,
                    ..stepper(0)
                },
                rx,
                delayed: BinaryHeap::new(),
                seq: 0,
                timer_at: None,
                blocked: false,
            };
            cluster.spawn(format!("repl-{i}-transport"), move || transport.run())?;
            for w in 0..cluster.cfg.cluster.pool_size {
                let (s, jobs) = (stepper(1 + w as u64), job_rx.clone());
                cluster.spawn(format!("repl-{i}-pool-{w}"), move || {
                    pool_thread(s, jobs, false)
                })?;
            }
            for w in 0..oob_threads {
                let (s, jobs) = (stepper(10_000 + w as u64), oob_rx.clone());
                cluster.spawn(format!("repl-{i}-oob-{w}"), move || {
                    pool_thread(s, jobs, true)
                })?;
            }
        }
        Ok(cluster)
    }

    fn spawn(
        &mut self,
        name: String,
        f: impl FnOnce() + Send + 'static,
    ) -> Result<(), ConfigError> {
        let h = std::thread::Builder::new()
            .name(name)
            .stack_size(256 * 1024)
            .spawn(f)
            .map_err(|_| ConfigError::OutOfRange {
                name: "threads",
                value: self.handles.len() as u64,
                valid: "as many as the OS lets us spawn (nodes x (1 + pool_size + oob_pool_size))",
            })?;
        self.handles.push(h);
        Ok(())
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// A new requester on `node` (its own reply channel and ack log).
    pub fn client(&self, node: NodeId) -> Result<ClusterClient, ThreadsError> {
        let shared_node = self
            .nodes
            .get(node as usize)
            .ok_or(ThreadsError::ShutDown)?;
        // Relaxed: the counter only hands out distinct ids.
        let requester = self
            .shared
            .next_requester
            .fetch_add(1, AtomicOrdering::Relaxed);
        let (reply_tx, reply_rx) = channel::unbounded();
        {
            let mut st = shared_node.state.lock();
            if st.stopping {
                return Err(ThreadsError::ShutDown);
            }
            let i = requester as usize;
            if st.clients.len() <= i {
                st.clients.resize(i + 1, None);
            }
            st.clients[i] = Some(reply_tx);
        }
        Ok(ClusterClient {
            node,
            requester,
            stepper: Stepper {
                node: Arc::clone(shared_node),
                shared: Arc::clone(&self.shared),
                rng: SmallRng::seed_from_u64(self.cfg.seed ^ (u64::from(requester) << 40)),
                actions: Vec::new(),
                transport: false,
                inbound_blocked: false,
            },
            rx: reply_rx,
            keys: self.cfg.cluster.keys,
            wait: Duration::from_micros(self.cfg.cluster.reply_timeout_us) + Duration::from_secs(5),
            acks: AckLog::new(self.cfg.cluster.keys),
        })
    }

    fn inspect(&self) -> Vec<(NodeSnapshot, NodeStats)> {
        self.nodes
            .iter()
            .map(|n| {
                let st = n.state.lock();
                (NodeSnapshot::of(st.machine.as_ref()), st.machine.stats())
            })
            .collect()
    }

    /// Waits (polling every millisecond) until nothing is in flight and every node is idle.
    pub fn quiesce(
        &self,
        max_wait: Duration,
    ) -> Result<Vec<(NodeSnapshot, NodeStats)>, ThreadsError> {
        let start = Instant::now();
        loop {
            // Acquire pairs with the transport threads' Release decrement after a delivery.
            if self.shared.in_flight.load(AtomicOrdering::Acquire) == 0 {
                let snaps = self.inspect();
                let busy = snaps.iter().find_map(|(s, _)| s.busy.clone());
                if busy.is_none() && self.shared.in_flight.load(AtomicOrdering::Acquire) == 0 {
                    return Ok(snaps);
                }
            }
            if start.elapsed() > max_wait {
                let reason = self
                    .inspect()
                    .iter()
                    .find_map(|(s, _)| s.busy.clone())
                    .unwrap_or_else(|| "messages in flight".to_string());
                return Err(ThreadsError::NotQuiescent {
                    waited_ms: start.elapsed().as_millis() as u64,
                    reason,
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Quiesces, then verifies the cluster against `acks`; returns the report and summed stats.
    pub fn verify(
        &self,
        acks: &AckLog,
        max_wait: Duration,
    ) -> Result<(VerifyReport, NodeStats), String> {
        let snaps = self.quiesce(max_wait).map_err(|e| e.to_string())?;
        let mut stats = NodeStats::default();
        for (_, s) in &snaps {
            stats.add(s);
        }
        let snaps: Vec<_> = snaps.into_iter().map(|(s, _)| s).collect();
        verify_snapshots(&snaps, acks)
            .map(|r| (r, stats))
            .map_err(|e| e.to_string())
    }

    /// Node counters summed over the cluster.
    pub fn stats(&self) -> Result<NodeStats, ThreadsError> {
        let mut stats = NodeStats::default();
        for (_, s) in self.inspect() {
            stats.add(&s);
        }
        Ok(stats)
    }

    /// What the real pool threads did so far.
    pub fn driver_stats(&self) -> DriverStats {
        let mut d = DriverStats::default();
        for n in &self.nodes {
            let c = &n.counters;
            let get = |a: &AtomicU64| a.load(AtomicOrdering::Relaxed);
            d.pool_commands += get(&c.pool_commands);
            d.oob_commands += get(&c.oob_commands);
            d.blocked_waits += get(&c.blocked_waits);
            d.resumes += get(&c.resumes);
            d.transport_blocks += get(&c.transport_blocks);
            d.max_busy_pool_threads = d
                .max_busy_pool_threads
                .max(c.pool_busy_max.load(AtomicOrdering::Relaxed) as u64);
            d.max_busy_oob_threads = d
                .max_busy_oob_threads
                .max(c.oob_busy_max.load(AtomicOrdering::Relaxed) as u64);
        }
        d
    }
}

impl Drop for ThreadCluster {
    fn drop(&mut self) {
        // Under each node mutex: no step runs from now on, so no new slot signal appears; every
        // thread blocked in a command is told to stop, and requesters' reply channels close.
        for n in &self.nodes {
            let signals: Vec<_> = {
                let mut st = n.state.lock();
                st.stopping = true;
                st.clients.clear();
                st.signals.drain().map(|(_, s)| s).collect()
            };
            for s in signals {
                s.post(SlotEvent::Stop);
            }
        }
        let threads_per_node = self.cfg.cluster.pool_size + self.cfg.cluster.oob_pool_size;
        for (n, inbox) in self.nodes.iter().zip(&self.shared.peers) {
            for _ in 0..threads_per_node {
                let _ = n.jobs.send(Job::Stop);
                let _ = n.oob_jobs.send(Job::Stop);
            }
            let _ = inbox.send(Envelope::Stop);
        }
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// A requester thread's handle on the cluster: it steps its node's machine itself.
pub struct ClusterClient {
    node: NodeId,
    requester: u32,
    stepper: Stepper,
    rx: Receiver<Reply>,
    keys: u32,
    wait: Duration,
    acks: AckLog,
}

impl std::fmt::Debug for ClusterClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterClient")
            .field("node", &self.node)
            .field("requester", &self.requester)
            .finish()
    }
}

impl ClusterClient {
    /// Runs `op` on this client's node and blocks for its outcome; an acknowledged put is
    /// recorded in the client's ack log.
    pub fn call(&mut self, op: ClientOp) -> Result<Outcome, ThreadsError> {
        let key = op.key();
        if key >= self.keys {
            return Err(ThreadsError::BadKey {
                key,
                keys: self.keys,
            });
        }
        let input = Input::Client {
            requester: self.requester,
            op,
        };
        if !self.stepper.step(input) {
            return Err(ThreadsError::ShutDown);
        }
        match self.rx.recv_timeout(self.wait) {
            Ok((op, outcome)) => {
                if let (ClientOp::Put(key, _), Outcome::Put(entry)) = (&op, &outcome) {
                    self.acks.record(*key, entry);
                }
                Ok(outcome)
            }
            Err(RecvTimeoutError::Timeout) => Err(ThreadsError::NoReply {
                node: self.node,
                waited_ms: self.wait.as_millis() as u64,
            }),
            Err(RecvTimeoutError::Disconnected) => Err(ThreadsError::ShutDown),
        }
    }

    /// `put(key, value)`.
    pub fn put(&mut self, key: Key, value: Value) -> Result<Outcome, ThreadsError> {
        self.call(ClientOp::Put(key, value))
    }

    /// `get(key)`.
    pub fn get(&mut self, key: Key) -> Result<Outcome, ThreadsError> {
        self.call(ClientOp::Get(key))
    }

    /// The puts this client saw acknowledged.
    pub fn acks(&self) -> &AckLog {
        &self.acks
    }

    /// Takes the ack log, leaving an empty one.
    pub fn take_acks(&mut self) -> AckLog {
        std::mem::replace(&mut self.acks, AckLog::new(self.keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replication::ProtocolKind;
    use crate::replication::message::{Value, Versioned};

    #[test]
    fn put_then_get_on_every_protocol_and_verify() {
        for kind in ProtocolKind::ALL {
            let cfg = ThreadsConfig {
                cluster: ClusterConfig {
                    nodes: 3,
                    keys: 64,
                    ..ClusterConfig::default()
                },
                latency_us: 200,
                jitter_us: 100,
                ..ThreadsConfig::default()
            };
            let cluster = ThreadCluster::start(kind.protocol(), cfg).unwrap();
            let mut c = cluster.client(1).unwrap();
            let mut acks = AckLog::new(64);
            for key in 0..64u32 {
                let value = Value::new((key as u64) << 32 | 1, 24);
                let expected = Versioned { version: 1, value };
                let put = c.put(key, expected.value.clone()).unwrap();
                assert_eq!(put, Outcome::Put(expected.clone()), "{kind:?}");
                assert_eq!(c.get(key).unwrap(), Outcome::Got(expected));
            }
            acks.merge(c.acks());
            assert_eq!(
                c.put(64, Value::new(0, 8)),
                Err(ThreadsError::BadKey { key: 64, keys: 64 })
            );
            let (report, _) = cluster.verify(&acks, Duration::from_secs(10)).unwrap();
            assert_eq!(report.keys_written, 64, "{kind:?}");
        }
    }

    /// A put's bytes reach both owners intact, each in its own buffer (the transport copied them
    /// on every hop), and the get that reads them back gets a copy too.
    #[test]
    fn each_owner_stores_its_own_copy_of_the_put_bytes() {
        for kind in ProtocolKind::ALL {
            let cfg = ThreadsConfig {
                cluster: ClusterConfig {
                    nodes: 3,
                    keys: 30,
                    ..ClusterConfig::default()
                },
                ..ThreadsConfig::default()
            };
            let hash = cfg.cluster.hash().unwrap();
            let key = (0..30).find(|&k| !hash.owners(k).contains(2)).unwrap();
            let cluster = ThreadCluster::start(kind.protocol(), cfg).unwrap();
            let mut c = cluster.client(2).unwrap();
            let value = Value::new(u64::from(key) << 32 | 1, 1000);
            let Ok(Outcome::Put(acked)) = c.put(key, value.clone()) else {
                panic!("{kind:?}: the put failed");
            };
            assert!(acked.value.shares_buffer(&value));
            let Ok(Outcome::Got(read)) = c.get(key) else {
                panic!("{kind:?}: the get failed");
            };
            assert_eq!(read.value, value);
            assert!(!read.value.shares_buffer(&value));
            let snaps = cluster.quiesce(Duration::from_secs(10)).unwrap();
            let stored: Vec<_> = hash
                .owners(key)
                .all()
                .iter()
                .map(|&n| snaps[n as usize].0.data.get(key))
                .collect();
            for (i, e) in stored.iter().enumerate() {
                assert_eq!((e.version, &e.value), (1, &value), "{kind:?}");
                assert!(!e.value.shares_buffer(&value), "{kind:?}: owner {i} shares");
                assert!(!e.value.shares_buffer(&read.value), "{kind:?}");
                for other in &stored[..i] {
                    assert!(!e.value.shares_buffer(&other.value), "{kind:?}");
                }
            }
            let stats = cluster.stats().unwrap();
            assert!(stats.payload_bytes_sent >= 2_000, "{stats:?}");
        }
    }

    /// Two requesters on node 1 writing one key whose primary is node 0, over 1 ms links: node
    /// 0's pool threads really block in lock-forwarding commands (backup round trips) and a
    /// command queued for the key lock is continued on its own thread after the grant.
    #[test]
    fn lock_forwarding_commands_block_their_pool_threads() {
        let cfg = ThreadsConfig {
            cluster: ClusterConfig {
                nodes: 2,
                keys: 16,
                pool_size: 4,
                ..ClusterConfig::default()
            },
            latency_us: 1_000,
            ..ThreadsConfig::default()
        };
        let hash = cfg.cluster.hash().unwrap();
        let key = (0..16).find(|&k| hash.primary(k) == 0).unwrap();
        let cluster =
            ThreadCluster::start(&crate::replication::LockForwardingProtocol, cfg).unwrap();
        let mut acks = AckLog::new(16);
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..2u64)
                .map(|i| {
                    let mut c = cluster.client(1).unwrap();
                    s.spawn(move || {
                        for n in 0..20 {
                            let v = Value::new((key as u64) << 32 | i << 8 | n, 16);
                            assert!(
                                matches!(c.put(key, v.clone()).unwrap(), Outcome::Put(e) if e.value == v)
                            );
                        }
                        c.take_acks()
                    })
                })
                .collect();
            for h in hs {
                acks.merge(&h.join().unwrap());
            }
        });
        let (report, stats) = cluster.verify(&acks, Duration::from_secs(10)).unwrap();
        assert_eq!(report.acked_writes, 40);
        assert_eq!(stats.pool_rejections + stats.lock_timeouts, 0);
        let d = cluster.driver_stats();
        // 40 remote puts at node 0 and 40 backup writes at node 1 ran on pool threads.
        assert_eq!(d.pool_commands, 80, "{d:#?}");
        assert!(d.blocked_waits > 0 && d.resumes > 0, "{d:#?}");
        assert!(d.max_busy_pool_threads >= 2, "{d:#?}");
    }
}
