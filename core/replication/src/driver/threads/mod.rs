//! The real-threads driver: every node is a [`NodeMachine`](crate::NodeMachine)
//! behind a mutex, driven by real threads that block where Infinispan's threads block.
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
//! ([`Pool`](crate::components::pool::Pool)), grants key locks in FIFO order and runs
//! every timeout, exactly as in the simulation. The machine is switched to real slots
//! ([`NodeMachine::use_real_slots`](crate::NodeMachine::use_real_slots)), so an
//! admitted command is not run by whoever delivered it but parked and announced
//! ([`Output::Execute`](crate::Output::Execute)); a thread of the slot's pool takes
//! it and from then on *is* the slot:
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
//! together: `abort` rejects (repaired as UNICAST3 repairs a loss, on the next run but one of
//! the receiver's retransmission task every `xmit_interval_us`); `caller-runs` hands
//! the command to an OOB thread, which is then blocked in it, and once every OOB thread is
//! blocked the machine drops arriving messages (replies included) for retransmission: the seed's
//! pool exhaustion; `block` blocks the transport thread (see `transport.rs`).
//!
//! Why no deadlock: a thread holds at most one node mutex, only for one machine step, and never
//! waits for anything while holding it; everything a step produces (messages to other nodes,
//! timer changes, jobs, replies, signal posts) goes over unbounded channels or leaf-locked
//! signals after the mutex is released. A blocked worker holds no lock. The transport thread
//! never waits for a worker except under `block`, and then with its timer armed, so deadlines
//! always progress, and every wait the machine puts a slot in has a deadline (lock timeout,
//! backup-reply timeout). A parked job always finds a thread: the machine admits at most as many
//! slots as the pool has threads, and a thread whose slot was freed returns to its pool without
//! waiting for anything.
//!
//! Deviation: a requester whose own node is the key's primary holds no pool slot (as upstream:
//! it is its own thread); when the lock it waits for is granted, the grant's work runs on the
//! thread that released the lock, and the requester is woken by its reply.
//!
//! Unlike the simulation this driver reads the wall clock: time is µs since the cluster started.
//! Contended waits for a node's mutex count as `replication.node` in the `sync` lock statistics.
//!
//! Files, one role each: `cluster.rs` starts the threads and inspects, quiesces and verifies the
//! cluster; `client.rs` is a requester's handle; `stepper.rs` feeds one input to a node's machine
//! under its mutex and carries out the effects outside it; `transport.rs` and `pool_threads.rs`
//! are the two kinds of node thread; `runtime.rs` holds what they share and what they send each other; [`signal`] is the
//! wait/wake hand-off between a blocked pool thread and the thread that ends its wait
//! (loom-checked).

mod client;
mod cluster;
mod pool_threads;
mod runtime;
mod signal;
mod stepper;
mod transport;

pub use client::ClusterClient;
pub use cluster::{DriverStats, Progress, Split, ThreadCluster};
pub use signal::{SlotEvent, SlotSignal};

use crate::error::ConfigError;
use crate::message::{Key, NodeId};
use crate::node::ClusterConfig;

/// Settings of a threads cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadsConfig {
    /// The cluster and protocol settings.
    pub cluster: ClusterConfig,
    /// One-way message latency in µs (0: hand over at once).
    pub latency_us: u64,
    /// Uniform extra latency in `0..=jitter_us`.
    pub jitter_us: u64,
    /// The period of every node's retransmission task (`UNICAST3.xmit_interval`), which repairs
    /// a message a full pool rejected or the link lost (see
    /// [`retransmission`](crate::driver::retransmission)). The default is a test
    /// scale (2 ms, so real-time runs with losses end quickly), not JGroups' 500 ms.
    pub xmit_interval_us: u64,
    /// Per-mille chance that a transmission is lost (repaired as a rejected message is).
    pub drop_per_mille: u32,
    /// Seed of the jitter.
    pub seed: u64,
    /// Carry every message between two nodes over a loopback TCP connection, as a
    /// [`wire`](crate::driver::net::wire) frame, instead of a channel: the net driver's links
    /// ([`sockets`](crate::driver::net::sockets)) under the threads driver's pools. The link's
    /// latency and jitter are then a user-space shaper's: the receiving transport holds a message
    /// for the delay its frame carries, after the socket delivered it.
    pub sockets: bool,
}

impl Default for ThreadsConfig {
    fn default() -> Self {
        ThreadsConfig {
            cluster: ClusterConfig::default(),
            latency_us: 0,
            jitter_us: 0,
            xmit_interval_us: 2_000,
            drop_per_mille: 0,
            seed: 1,
            sockets: false,
        }
    }
}

/// Why a threads cluster could not start, or a client call failed at the driver level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThreadsError {
    /// The model cannot run the cluster's configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The nodes' TCP connections could not be opened (`ThreadsConfig::sockets`, or a split
    /// cluster's part).
    #[error("could not connect the nodes over loopback TCP: {0}")]
    Sockets(String),
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
