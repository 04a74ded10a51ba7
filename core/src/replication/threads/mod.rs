//! The real-threads driver: one thread per node runs its [`NodeMachine`]; requester threads call
//! in through [`ClusterClient`] and block for the reply; nodes talk over crossbeam channels with
//! a configurable latency and jitter.
//!
//! A node thread holds the messages not yet due in a small heap and sleeps in `recv_timeout`
//! until the next one is due, so latency costs no CPU. Key locks and pool slots are the machine's
//! logical ones (the same code the simulation runs); what this driver measures for real is the
//! protocol's CPU cost per operation plus the channel hand-offs, and real reply timeouts.
//! Unlike the simulation it reads the wall clock: time is µs since the cluster started.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::error::ConfigError;
use super::message::{ClientOp, Input, Key, NodeId, Outcome, Output};
use super::node::ClusterConfig;
use super::verifier::{AckLog, NodeSnapshot, VerifyReport, verify_snapshots};
use super::write_protocol::{NodeMachine, NodeStats, WriteProtocol, build_cluster};
// Plain std types: this driver is measured, not model-checked (the protocol code it runs is
// single-threaded per node).
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering as AtomicOrdering};

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
    /// No reply came within the reply timeout plus a margin (the node thread is stuck or gone).
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

type Reply = (ClientOp, Outcome);

enum Envelope {
    Input { at: u64, input: Input },
    Register { requester: u32, tx: Sender<Reply> },
    Inspect(Sender<(NodeSnapshot, NodeStats)>),
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
    /// Messages and client inputs sent but not yet handled. Incremented before a send and
    /// decremented after the handling; `SeqCst` is not needed, but the quiescence check reads it
    /// together with per-node inspections, so Acquire/Release pairs make a handled message's
    /// effects visible to the checker before the decrement is.
    in_flight: AtomicI64,
    next_requester: AtomicU32,
}

impl Shared {
    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }
}

/// A running cluster of node threads.
pub struct ThreadCluster {
    senders: Vec<Sender<Envelope>>,
    handles: Vec<std::thread::JoinHandle<()>>,
    shared: Arc<Shared>,
    cfg: ThreadsConfig,
}

impl std::fmt::Debug for ThreadCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadCluster")
            .field("nodes", &self.senders.len())
            .finish()
    }
}

impl ThreadCluster {
    /// Starts one thread per node running `protocol`.
    pub fn start(protocol: &dyn WriteProtocol, cfg: ThreadsConfig) -> Result<Self, ConfigError> {
        let machines = build_cluster(protocol, &cfg.cluster)?;
        let shared = Arc::new(Shared {
            epoch: Instant::now(),
            in_flight: AtomicI64::new(0),
            next_requester: AtomicU32::new(0),
        });
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..machines.len())
            .map(|_| channel::unbounded::<Envelope>())
            .unzip();
        let mut handles = Vec::new();
        for (i, (machine, rx)) in machines.into_iter().zip(receivers).enumerate() {
            let node = NodeThread {
                id: i as NodeId,
                machine,
                rx,
                peers: senders.clone(),
                shared: Arc::clone(&shared),
                clients: Vec::new(),
                delayed: BinaryHeap::new(),
                seq: 0,
                timer_at: None,
                rng: SmallRng::seed_from_u64(cfg.seed.wrapping_add(i as u64)),
                latency_us: cfg.latency_us,
                jitter_us: cfg.jitter_us,
                retransmit_us: cfg.retransmit_us,
                drop_per_mille: cfg.drop_per_mille.min(900),
                out: Vec::new(),
            };
            let h = std::thread::Builder::new()
                .name(format!("replication-node-{i}"))
                .spawn(move || node.run())
                .map_err(|_| ConfigError::OutOfRange {
                    name: "nodes",
                    value: i as u64,
                    valid: "as many as the OS lets us spawn threads",
                })?;
            handles.push(h);
        }
        Ok(ThreadCluster {
            senders,
            handles,
            shared,
            cfg,
        })
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.senders.len()
    }

    /// A new requester on `node` (its own reply channel and ack log).
    pub fn client(&self, node: NodeId) -> Result<ClusterClient, ThreadsError> {
        let tx = self
            .senders
            .get(node as usize)
            .ok_or(ThreadsError::ShutDown)?
            .clone();
        // Relaxed: the counter only hands out distinct ids.
        let requester = self
            .shared
            .next_requester
            .fetch_add(1, AtomicOrdering::Relaxed);
        let (reply_tx, reply_rx) = channel::unbounded();
        tx.send(Envelope::Register {
            requester,
            tx: reply_tx,
        })
        .map_err(|_| ThreadsError::ShutDown)?;
        Ok(ClusterClient {
            node,
            requester,
            tx,
            rx: reply_rx,
            shared: Arc::clone(&self.shared),
            keys: self.cfg.cluster.keys,
            wait: Duration::from_micros(self.cfg.cluster.reply_timeout_us) + Duration::from_secs(5),
            acks: AckLog::new(self.cfg.cluster.keys),
        })
    }

    fn inspect(&self) -> Result<Vec<(NodeSnapshot, NodeStats)>, ThreadsError> {
        let mut out = Vec::new();
        for tx in &self.senders {
            let (stx, srx) = channel::bounded(1);
            tx.send(Envelope::Inspect(stx))
                .map_err(|_| ThreadsError::ShutDown)?;
            out.push(srx.recv().map_err(|_| ThreadsError::ShutDown)?);
        }
        Ok(out)
    }

    /// Waits (polling every millisecond) until nothing is in flight and every node is idle.
    pub fn quiesce(
        &self,
        max_wait: Duration,
    ) -> Result<Vec<(NodeSnapshot, NodeStats)>, ThreadsError> {
        let start = Instant::now();
        loop {
            // Acquire pairs with the node threads' Release decrement after handling a message.
            if self.shared.in_flight.load(AtomicOrdering::Acquire) == 0 {
                let snaps = self.inspect()?;
                let busy = snaps.iter().find_map(|(s, _)| s.busy.clone());
                if busy.is_none() && self.shared.in_flight.load(AtomicOrdering::Acquire) == 0 {
                    return Ok(snaps);
                }
            }
            if start.elapsed() > max_wait {
                let reason = self
                    .inspect()?
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
        for (_, s) in self.inspect()? {
            stats.add(&s);
        }
        Ok(stats)
    }
}

impl Drop for ThreadCluster {
    fn drop(&mut self) {
        for tx in &self.senders {
            let _ = tx.send(Envelope::Stop);
        }
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// A requester thread's handle on the cluster.
pub struct ClusterClient {
    node: NodeId,
    requester: u32,
    tx: Sender<Envelope>,
    rx: Receiver<Reply>,
    shared: Arc<Shared>,
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
        let key = match op {
            ClientOp::Get(k) | ClientOp::Put(k, _) => k,
        };
        if key >= self.keys {
            return Err(ThreadsError::BadKey {
                key,
                keys: self.keys,
            });
        }
        // Release: the node's Acquire-free decrement follows its handling; the count only needs
        // to be visible before the envelope is, which the channel's own synchronisation gives.
        self.shared.in_flight.fetch_add(1, AtomicOrdering::Release);
        let at = self.shared.now_us();
        let sent = self.tx.send(Envelope::Input {
            at,
            input: Input::Client {
                requester: self.requester,
                op,
            },
        });
        if sent.is_err() {
            self.shared.in_flight.fetch_sub(1, AtomicOrdering::Release);
            return Err(ThreadsError::ShutDown);
        }
        match self.rx.recv_timeout(self.wait) {
            Ok((op, outcome)) => {
                if let (ClientOp::Put(key, _), Outcome::Put(entry)) = (op, outcome) {
                    self.acks.record(key, entry);
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
    pub fn put(&mut self, key: Key, value: u64) -> Result<Outcome, ThreadsError> {
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

struct NodeThread {
    id: NodeId,
    machine: Box<dyn NodeMachine>,
    rx: Receiver<Envelope>,
    peers: Vec<Sender<Envelope>>,
    shared: Arc<Shared>,
    clients: Vec<Option<Sender<Reply>>>,
    delayed: BinaryHeap<Delayed>,
    seq: u64,
    timer_at: Option<u64>,
    rng: SmallRng,
    latency_us: u64,
    jitter_us: u64,
    retransmit_us: u64,
    drop_per_mille: u32,
    out: Vec<Output>,
}

impl NodeThread {
    fn run(mut self) {
        loop {
            let now = self.shared.now_us();
            while self.delayed.peek().is_some_and(|d| d.at <= now) {
                if let Some(d) = self.delayed.pop() {
                    self.handle(now, d.input);
                }
            }
            if self.timer_at.is_some_and(|t| t <= now) {
                self.timer_at = None;
                self.machine.handle(now, Input::Timer, &mut self.out);
                self.dispatch(now);
            }
            let next = match (self.delayed.peek().map(|d| d.at), self.timer_at) {
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
                    let now = self.shared.now_us();
                    if at <= now {
                        self.handle(now, input);
                    } else {
                        self.seq += 1;
                        self.delayed.push(Delayed {
                            at,
                            seq: self.seq,
                            input,
                        });
                    }
                }
                Envelope::Register { requester, tx } => {
                    let i = requester as usize;
                    if self.clients.len() <= i {
                        self.clients.resize(i + 1, None);
                    }
                    self.clients[i] = Some(tx);
                }
                Envelope::Inspect(tx) => {
                    let _ = tx.send((
                        NodeSnapshot::of(self.machine.as_ref()),
                        self.machine.stats(),
                    ));
                }
                Envelope::Stop => return,
            }
        }
    }

    fn handle(&mut self, now: u64, input: Input) {
        self.machine.handle(now, input, &mut self.out);
        self.dispatch(now);
        // Release: pairs with the quiescence checker's Acquire load (see `Shared::in_flight`).
        self.shared.in_flight.fetch_sub(1, AtomicOrdering::Release);
    }

    fn dispatch(&mut self, now: u64) {
        for o in std::mem::take(&mut self.out) {
            match o {
                Output::Send { to, msg } => {
                    let mut at = now + self.latency_us;
                    if self.jitter_us > 0 {
                        at += self.rng.random_range(0..=self.jitter_us);
                    }
                    while self.drop_per_mille > 0
                        && self.rng.random_range(0..1000) < self.drop_per_mille
                    {
                        at += self.retransmit_us;
                    }
                    self.shared.in_flight.fetch_add(1, AtomicOrdering::Release);
                    let env = Envelope::Input {
                        at,
                        input: Input::Message { from: self.id, msg },
                    };
                    if let Some(p) = self.peers.get(to as usize) {
                        if p.send(env).is_err() {
                            self.shared.in_flight.fetch_sub(1, AtomicOrdering::Release);
                        }
                    }
                }
                Output::Rejected { from, msg } => {
                    self.shared.in_flight.fetch_add(1, AtomicOrdering::Release);
                    self.seq += 1;
                    let at = now + self.retransmit_us;
                    self.delayed.push(Delayed {
                        at,
                        seq: self.seq,
                        input: Input::Message { from, msg },
                    });
                }
                Output::Reply {
                    requester,
                    op,
                    outcome,
                } => {
                    if let Some(Some(tx)) = self.clients.get(requester as usize) {
                        let _ = tx.send((op, outcome));
                    }
                }
                Output::SetTimer { at } => {
                    self.timer_at = Some(self.timer_at.map_or(at, |t| t.min(at)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replication::ProtocolKind;
    use crate::replication::message::Versioned;

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
                let value = (key as u64) << 32 | 1;
                let put = c.put(key, value).unwrap();
                assert_eq!(
                    put,
                    Outcome::Put(Versioned { version: 1, value }),
                    "{kind:?}"
                );
                assert_eq!(
                    c.get(key).unwrap(),
                    Outcome::Got(Versioned { version: 1, value })
                );
            }
            acks.merge(c.acks());
            assert_eq!(
                c.put(64, 0),
                Err(ThreadsError::BadKey { key: 64, keys: 64 })
            );
            let (report, _) = cluster.verify(&acks, Duration::from_secs(10)).unwrap();
            assert_eq!(report.keys_written, 64, "{kind:?}");
        }
    }
}
