//! A running threads cluster: starts every node's transport and pool threads, hands out requester
//! clients, and inspects, quiesces and verifies the cluster; dropping it stops every thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering as AtomicOrdering};
use std::time::{Duration, Instant};

use crossbeam::channel;

use super::client::ClusterClient;
use super::pool_threads::pool_thread;
use super::runtime::{
    ClusterRuntime, Counters, Envelope, Job, Links, NodeRuntime, NodeState, SharedHistory,
};
use super::signal::SlotEvent;
use super::stepper::Stepper;
use super::transport::Transport;
use super::{ThreadsConfig, ThreadsError};
use crate::components::collections::IdMap;
use crate::components::pool::RejectionPolicy;
use std::net::SocketAddr;

use crate::driver::net::sockets::{Bound, Connections, Deliver, Handshake, OnEnd};
use crate::driver::net::wire::Secret;
use crate::driver::retransmission::LinkFaults;
use crate::error::ConfigError;
use crate::message::{Input, NodeId};
use crate::node::{NodeMachine, NodeStats};
use crate::protocol::ProtocolKind;
use crate::verifier::{AckLog, NodeSnapshot, VerifyReport, verify_snapshots};
use critsec_sync::Mutex;

/// What the real threads did, summed over the cluster (the machine's own counts are in
/// [`NodeStats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// Messages written on sockets ([`ThreadsConfig::sockets`]), and their frames' bytes.
    pub socket_messages: u64,
    /// See `socket_messages`.
    pub socket_bytes: u64,
}

impl DriverStats {
    /// Adds another part's counts (maxima take the max): a split cluster's processes summed.
    pub fn add(&mut self, d: &DriverStats) {
        self.pool_commands += d.pool_commands;
        self.oob_commands += d.oob_commands;
        self.blocked_waits += d.blocked_waits;
        self.resumes += d.resumes;
        self.transport_blocks += d.transport_blocks;
        self.socket_messages += d.socket_messages;
        self.socket_bytes += d.socket_bytes;
        self.max_busy_pool_threads = self.max_busy_pool_threads.max(d.max_busy_pool_threads);
        self.max_busy_oob_threads = self.max_busy_oob_threads.max(d.max_busy_oob_threads);
    }
}

/// The part of a cluster split over processes that one process hosts
/// ([`ThreadCluster::start_split`]).
#[derive(Debug)]
pub struct Split {
    /// The listeners of the nodes this process hosts.
    pub bound: Bound,
    /// Every node's address, by node id (the hosted ones' included).
    pub addresses: Vec<SocketAddr>,
    /// What the hellos between the processes carry and prove.
    pub handshake: Handshake,
}

/// Where one process's messages stand ([`ThreadCluster::progress`]). A split cluster is
/// quiescent when, in two rounds of its processes' reports that agree, every message written on
/// a connection between two live nodes was read at the other end, no process has an input
/// queued or held, no node is busy, and every live process has read a dead peer's connection to
/// its end (the four-counter termination check: a message that moves between two reads changes
/// a count).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    /// `sent[from * nodes + to]`: messages this process wrote on the connection `from -> to`.
    pub sent: Vec<u64>,
    /// Likewise, messages its readers delivered.
    pub received: Vec<u64>,
    /// Per peer, the readers of its connections to this process that have ended.
    pub closed_from: Vec<u32>,
    /// Inputs queued or held in this process's transports, not yet handled.
    pub pending: i64,
    /// Why a hosted node is busy, if one is.
    pub busy: Option<String>,
}

/// A running cluster: per node a transport thread and its pools' threads.
pub struct ThreadCluster {
    nodes: Vec<Arc<NodeRuntime>>,
    handles: Vec<std::thread::JoinHandle<()>>,
    shared: Arc<ClusterRuntime>,
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
    pub fn start(protocol: ProtocolKind, cfg: ThreadsConfig) -> Result<Self, ThreadsError> {
        let machines = protocol.build_cluster(&cfg.cluster)?;
        Self::start_machines(machines, cfg, None)
    }

    /// Starts this process's part of a cluster split over processes (the net driver's node
    /// process): the threads of the nodes `split` binds, connected over sockets to every node's
    /// address. The other nodes run elsewhere; [`Self::progress`] and [`Self::snapshots`] are
    /// what a coordinator needs of this part to quiesce and verify the whole.
    pub fn start_split(
        protocol: ProtocolKind,
        mut cfg: ThreadsConfig,
        split: Split,
    ) -> Result<Self, ThreadsError> {
        if split.addresses.len() != cfg.cluster.nodes {
            return Err(ThreadsError::Sockets(format!(
                "{} node addresses for a cluster of {} nodes",
                split.addresses.len(),
                cfg.cluster.nodes
            )));
        }
        cfg.sockets = true;
        let machines = protocol.build_cluster(&cfg.cluster)?;
        Self::start_machines(machines, cfg, Some(split))
    }

    /// Tests: a cluster of the given machines (one per member of `cfg.cluster`, in id order), for
    /// a protocol variant no `ProtocolKind` names (the mutants of `tests/mutants.rs`).
    #[cfg(test)]
    pub(crate) fn with_machines(
        cfg: ThreadsConfig,
        machines: Vec<Box<dyn NodeMachine>>,
    ) -> Result<Self, ThreadsError> {
        cfg.cluster.hash()?;
        Self::start_machines(machines, cfg, None)
    }

    /// Starts the threads of the machines this process hosts: all of them, or those `split`
    /// binds. `machines` holds one per member, in id order.
    fn start_machines(
        mut machines: Vec<Box<dyn NodeMachine>>,
        cfg: ThreadsConfig,
        split: Option<Split>,
    ) -> Result<Self, ThreadsError> {
        let hosted: Vec<bool> = match &split {
            None => vec![true; machines.len()],
            Some(split) => {
                let mut hosted = vec![false; machines.len()];
                for n in split.bound.hosted() {
                    *hosted.get_mut(usize::from(n)).ok_or_else(|| {
                        ThreadsError::Sockets(format!(
                            "node {n} is not a member of a cluster of {} nodes",
                            machines.len()
                        ))
                    })? = true;
                }
                hosted
            }
        };
        for m in &mut machines {
            m.use_real_slots();
        }
        // An inbox per member; a node hosted elsewhere gets no messages through its own (its
        // receiver is dropped below), only through its connections.
        let (inboxes, receivers): (Vec<_>, Vec<_>) = (0..machines.len())
            .map(|_| channel::unbounded::<Envelope>())
            .unzip();
        let epoch = Instant::now();
        let links = Arc::new(Links::new(machines.len()));
        let pending = Arc::new(AtomicI64::new(0));
        let kind = machines
            .first()
            .map(|m| m.kind())
            .ok_or(ConfigError::OutOfRange {
                name: "nodes",
                value: 0,
                valid: ">= 1",
            })?;
        let sockets = if cfg.sockets {
            Some(open_sockets(
                &cfg, kind, split, &inboxes, epoch, &links, &pending,
            )?)
        } else {
            None
        };
        let shared = Arc::new(ClusterRuntime {
            epoch,
            in_flight: AtomicI64::new(0),
            pending,
            next_requester: AtomicU32::new(0),
            peers: inboxes,
            link: LinkFaults {
                latency_us: cfg.latency_us,
                jitter_us: cfg.jitter_us,
                drop_per_mille: cfg.drop_per_mille,
                xmit_interval_us: cfg.xmit_interval_us,
            },
            history: SharedHistory::new(cfg.cluster.keys),
            sockets,
            links,
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
            if !hosted[i] {
                continue;
            }
            let (jobs, job_rx) = channel::unbounded();
            let (oob_jobs, oob_rx) = channel::unbounded();
            let node = Arc::new(NodeRuntime {
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
            let stepper = |salt: u64| {
                Stepper::new(
                    Arc::clone(&node),
                    Arc::clone(&shared),
                    seed.wrapping_add(salt),
                )
            };
            let transport = Transport::new(stepper(0), rx);
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

    /// The number of nodes this process hosts (all of the cluster's unless it is split).
    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// A new requester on `node` (its own reply channel and ack log).
    pub fn client(&self, node: NodeId) -> Result<ClusterClient, ThreadsError> {
        let shared_node = self
            .nodes
            .iter()
            .find(|n| n.id == node)
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
            stepper: Stepper::new(
                Arc::clone(shared_node),
                Arc::clone(&self.shared),
                self.cfg.seed ^ (u64::from(requester) << 40),
            ),
            rx: reply_rx,
            keys: self.cfg.cluster.keys,
            wait: Duration::from_micros(self.cfg.cluster.reply_timeout_us) + Duration::from_secs(5),
            acks: AckLog::new(self.cfg.cluster.keys),
            shared: Arc::clone(&self.shared),
        })
    }

    /// Where the messages of this process stand, and why a hosted node is busy: a coordinator
    /// sums these over the processes of a split cluster to decide that it is quiescent.
    pub fn progress(&self) -> Progress {
        let (sent, received, closed_from) = self.shared.links.counts();
        Progress {
            sent,
            received,
            closed_from,
            pending: self.shared.pending.load(AtomicOrdering::Relaxed),
            busy: self.busy(),
        }
    }

    /// Tells this process that `peer`'s process is gone (killed): messages to it are dropped
    /// from now on, and errors of its connections no longer fail the run.
    pub fn peer_gone(&self, peer: NodeId) {
        self.shared.links.mark_gone(peer);
        // And each hosted node's failure detector reports it ([`Input::Left`]).
        for node in &self.nodes {
            Stepper::new(Arc::clone(node), Arc::clone(&self.shared), self.cfg.seed)
                .step(Input::Left(peer));
        }
    }

    /// The history check of this process's requesters: `Ok` or its first violation.
    pub fn history(&self) -> Result<(), String> {
        self.shared.history.result().map_err(|e| e.to_string())
    }

    /// The first error of a connection that does not concern a peer known to be gone.
    pub fn link_error(&self) -> Option<String> {
        self.shared.links.first_error()
    }

    /// What the verifier needs of each hosted node, and its counters, as they are now.
    pub fn snapshots(&self) -> Vec<(NodeSnapshot, NodeStats)> {
        self.nodes
            .iter()
            .map(|n| {
                let st = n.state.lock();
                (NodeSnapshot::of(st.machine.as_ref()), st.machine.stats())
            })
            .collect()
    }

    /// Why a hosted node is busy, if one is (without copying any node's data, as a snapshot
    /// does).
    fn busy(&self) -> Option<String> {
        self.nodes
            .iter()
            .find_map(|n| n.state.lock().machine.busy_reason())
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
                let snaps = self.snapshots();
                let busy = snaps.iter().find_map(|(s, _)| s.busy.clone());
                if busy.is_none() && self.shared.in_flight.load(AtomicOrdering::Acquire) == 0 {
                    return Ok(snaps);
                }
            }
            if start.elapsed() > max_wait {
                let reason = self
                    .busy()
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
    /// Fails first if the history check found a stale read or a bad put reply among the
    /// requesters' operations so far.
    pub fn verify(
        &self,
        acks: &AckLog,
        max_wait: Duration,
    ) -> Result<(VerifyReport, NodeStats), String> {
        self.history()?;
        let snaps = self.quiesce(max_wait).map_err(|e| e.to_string())?;
        if let Some(e) = self.link_error() {
            return Err(e);
        }
        let mut stats = NodeStats::default();
        for (_, s) in &snaps {
            stats.add(s);
        }
        let snaps: Vec<_> = snaps.into_iter().map(|(s, _)| s).collect();
        verify_snapshots(&snaps, acks)
            .map(|r| (r, stats))
            .map_err(|e| e.to_string())
    }

    /// Gets the history check compared with the puts acknowledged before they were issued.
    pub fn gets_checked(&self) -> u64 {
        self.shared.history.gets_checked()
    }

    /// Node counters summed over the cluster.
    pub fn stats(&self) -> Result<NodeStats, ThreadsError> {
        let mut stats = NodeStats::default();
        for n in &self.nodes {
            stats.add(&n.state.lock().machine.stats());
        }
        Ok(stats)
    }

    /// What the real pool threads did so far.
    pub fn driver_stats(&self) -> DriverStats {
        let mut d = DriverStats::default();
        if let Some(sockets) = &self.shared.sockets {
            (d.socket_messages, d.socket_bytes) = sockets.sent();
        }
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

/// Connects every pair of nodes over TCP ([`ThreadsConfig::sockets`]): over loopback, all
/// hosted here, or the nodes `split` binds to every node's address; a reader hands each message
/// to its node's transport, due once the delay its frame carries has passed.
fn open_sockets(
    cfg: &ThreadsConfig,
    kind: ProtocolKind,
    split: Option<Split>,
    inboxes: &[channel::Sender<Envelope>],
    epoch: Instant,
    links: &Arc<Links>,
    pending: &Arc<AtomicI64>,
) -> Result<Connections, ThreadsError> {
    let inboxes = inboxes.to_vec();
    let (counted, queued) = (Arc::clone(links), Arc::clone(pending));
    let deliver: Deliver = Arc::new(move |to, from, msg, resent, delay_us| {
        let at = epoch.elapsed().as_micros() as u64 + delay_us;
        let input = Input::Message { from, msg };
        counted.count_received(from, to);
        // Relaxed: see `ClusterRuntime::pending`. A closed inbox: the cluster is shutting down.
        queued.fetch_add(1, AtomicOrdering::Relaxed);
        let _ = inboxes[usize::from(to)].send(Envelope::Input { at, input, resent });
    });
    let ended = Arc::clone(links);
    let on_end: OnEnd = Arc::new(move |_to, from, error| {
        if let Some(from) = from {
            ended.reader_ended(from);
        }
        if let Some(e) = error {
            ended.failed(from, e);
        }
    });
    match split {
        // All nodes in this process: the hellos need prove nothing beyond it.
        None => {
            let handshake = Handshake {
                cluster: crate::driver::net::wire::settings_digest(&(kind, cfg)),
                secret: Secret::random(),
            };
            Connections::open(cfg.cluster.nodes, &handshake, deliver, on_end)
        }
        Some(split) => Connections::connect(
            split.bound,
            &split.addresses,
            &split.handshake,
            deliver,
            on_end,
        ),
    }
    .map_err(|e| ThreadsError::Sockets(e.to_string()))
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
        // The readers end with their connections, before the transports they deliver to.
        if let Some(sockets) = &self.shared.sockets {
            sockets.close();
        }
        let threads_per_node = self.cfg.cluster.pool_size + self.cfg.cluster.oob_pool_size;
        for n in &self.nodes {
            for _ in 0..threads_per_node {
                let _ = n.jobs.send(Job::Stop);
                let _ = n.oob_jobs.send(Job::Stop);
            }
            if let Some(inbox) = self.shared.peers.get(usize::from(n.id)) {
                let _ = inbox.send(Envelope::Stop);
            }
        }
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProtocolKind;
    use crate::message::Outcome;
    use crate::message::{Value, Versioned};
    use crate::node::ClusterConfig;
    use critsec_sync::kind::StrategyKind;

    #[test]
    fn put_then_get_on_every_protocol_and_verify() {
        for &kind in ProtocolKind::ALL {
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
            let cluster = ThreadCluster::start(kind, cfg).unwrap();
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
        for &kind in ProtocolKind::ALL {
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
            let cluster = ThreadCluster::start(kind, cfg).unwrap();
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
        let cluster = ThreadCluster::start(crate::ProtocolKind::LockForwarding, cfg).unwrap();
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
