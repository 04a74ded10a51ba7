//! The write-protocol trait: how a DIST-SYNC cache keeps a key's owners in agreement.
//!
//! A [`WriteProtocol`] is a strategy; it builds one [`NodeMachine`] per cluster member. Machines
//! are sans-IO: a driver feeds them [`Input`]s with the current time and carries out their
//! [`Output`]s, so the threads driver and the simulation run the same protocol code.
//!
//! | protocol | upstream | key lock held across | put critical path |
//! |---|---|---|---|
//! | [`LockForwardingProtocol`](super::LockForwardingProtocol) | Infinispan <= 8 `NonTxDistributionInterceptor` | the backup RPC | O -> P -> B -> P -> O |
//! | [`KeyQueueProtocol`](super::KeyQueueProtocol) | Bela Ban's 2014 proposal | local apply only | O -> P -> O (backups lag) |
//! | [`TriangleProtocol`](super::TriangleProtocol) | Infinispan 9 `TriangleDistributionInterceptor` | local apply + seq | O -> P -> B -> O |
//!
//! Contract every machine keeps (checked by `tests.rs` and the verifier):
//! - after quiescence, every owner of a key holds the same entry (version and value);
//! - a put acknowledged with version `v` is never lost: the owners end at `v` or a later version;
//! - versions of a key are given by its primary under the key lock, 1, 2, 3 ...;
//! - every failure (lock timeout, reply timeout, pool rejection) is counted in [`NodeStats`];
//! - callers may not assume a get sees a write acknowledged to another requester before the get
//!   started unless the protocol reads the primary (KeyQueue) or waits for backups (the others).

use std::str::FromStr;

use crate::replication::error::ConfigError;
use crate::replication::message::{Input, Output};
use crate::replication::node::{ClusterConfig, NodeCore};

/// The three strategies, by their CLI id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolKind {
    /// `lock-forwarding`: sync backup RPC while holding the key lock.
    LockForwarding,
    /// `key-queue`: unlock, then a de-duplicating FIFO of keys replicated by a worker.
    KeyQueue,
    /// `triangle`: per-segment sequence numbers, backups ack the originator.
    Triangle,
}

impl ProtocolKind {
    /// Every protocol.
    pub const ALL: [ProtocolKind; 3] = [
        ProtocolKind::LockForwarding,
        ProtocolKind::KeyQueue,
        ProtocolKind::Triangle,
    ];
    /// The accepted ids.
    pub const NAMES: &'static str = "lock-forwarding, key-queue, triangle";

    /// The CLI id (the strategy file's stem in kebab-case).
    pub fn id(self) -> &'static str {
        match self {
            ProtocolKind::LockForwarding => "lock-forwarding",
            ProtocolKind::KeyQueue => "key-queue",
            ProtocolKind::Triangle => "triangle",
        }
    }

    /// The strategy object.
    pub fn protocol(self) -> &'static dyn WriteProtocol {
        match self {
            ProtocolKind::LockForwarding => &super::LockForwardingProtocol,
            ProtocolKind::KeyQueue => &super::KeyQueueProtocol,
            ProtocolKind::Triangle => &super::TriangleProtocol,
        }
    }
}

impl FromStr for ProtocolKind {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolKind::ALL
            .into_iter()
            .find(|k| k.id() == s)
            .ok_or_else(|| ConfigError::UnknownName {
                what: "protocol",
                given: s.to_string(),
                valid: ProtocolKind::NAMES,
            })
    }
}

/// A write protocol: a factory of node state machines.
pub trait WriteProtocol: Send + Sync {
    /// Which protocol this is.
    fn kind(&self) -> ProtocolKind;

    /// The state machine of member `node` of a cluster configured by `cfg`.
    fn new_node(&self, node: u16, cfg: &ClusterConfig)
    -> Result<Box<dyn NodeMachine>, ConfigError>;
}

/// One member's sans-IO state machine.
pub trait NodeMachine: Send {
    /// Which protocol it runs.
    fn kind(&self) -> ProtocolKind;

    /// Takes one input at time `now` (µs on the driver's clock) and appends its effects to `out`.
    /// Never blocks; messages to the node itself are handled before it returns.
    fn handle(&mut self, now: u64, input: Input, out: &mut Vec<Output>);

    /// Switches to real slots (the threads driver; call before the first input): an admitted
    /// command is parked and announced with [`Output::Execute`] until a thread of its pool feeds
    /// [`Input::Run`]; a key lock granted to a command whose thread is blocked is announced with
    /// [`Output::Resume`] and continued on [`Input::Resume`]; every released slot is announced
    /// with [`Output::SlotFreed`]. The protocol logic and every count stay the same.
    fn use_real_slots(&mut self);

    /// Whether the inbound path is blocked (`block` policy: a command from another node waits
    /// for a pool slot, and every later message from another node waits behind it).
    fn inbound_blocked(&self) -> bool;

    /// The shared state (data container, hash), for the verifier.
    fn core(&self) -> &NodeCore;

    /// Why the node is not quiescent, or `None` when it has nothing in progress.
    fn busy_reason(&self) -> Option<String>;

    /// Counters so far.
    fn stats(&self) -> NodeStats;

    /// Triangle only: last sequence number sent per segment (as primary) and last delivered per
    /// segment (as backup); empty vectors for the other protocols.
    fn sequences(&self) -> (Vec<u64>, Vec<u64>);
}

/// Counters of one node; the drivers sum them over the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Writes that failed to get their key lock in time (at this node as primary).
    pub lock_timeouts: u64,
    /// Requests of this node's requesters that got no answer in time.
    pub reply_timeouts: u64,
    /// LockForwarding: backup RPCs that timed out at this primary.
    pub backup_timeouts: u64,
    /// KeyQueue: replication batches that timed out and were requeued.
    pub repl_timeouts: u64,
    /// Commands this node's pools rejected (retransmitted by the sender).
    pub pool_rejections: u64,
    /// The most pool slots in use at once.
    pub pool_max_busy: u64,
    /// The longest the pool's queue got (block policy).
    pub pool_max_queue: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Bytes of value payload in messages sent to other nodes
    /// ([`Msg::payload_len`](crate::replication::message::Msg::payload_len)); messages a node loops back to
    /// itself cross no network and are not counted.
    pub payload_bytes_sent: u64,
    /// Gets sent to a further owner after the stagger delay.
    pub staggered_gets: u64,
    /// Older versions applied over newer ones (must be 0).
    pub regressions: u64,
    /// KeyQueue: the longest the replication queue got.
    pub repl_queue_max: u64,
    /// KeyQueue: the replication queue's length now.
    pub repl_queue_now: u64,
    /// Triangle: backup writes that arrived before their turn and were buffered.
    pub reordered_backups: u64,
    /// Backup writes skipped because the backup already had a newer version.
    pub stale_skipped: u64,
    /// The longest a primary held a key lock (µs on the driver's clock).
    pub max_lock_hold_us: u64,
    /// Total key-lock hold time (µs), for the mean hold per write.
    pub lock_hold_total_us: u64,
    /// `block` policy: how long (µs on the driver's clock) the inbound path was blocked behind a
    /// command waiting for a pool slot; counted when each block ends.
    pub inbound_blocked_us: u64,
    /// `block` policy: messages from other nodes held undelivered by a blocked inbound path.
    pub blocked_deliveries: u64,
}

impl NodeStats {
    /// Adds `other`'s counters (maxima take the max).
    pub fn add(&mut self, other: &NodeStats) {
        self.lock_timeouts += other.lock_timeouts;
        self.reply_timeouts += other.reply_timeouts;
        self.backup_timeouts += other.backup_timeouts;
        self.repl_timeouts += other.repl_timeouts;
        self.pool_rejections += other.pool_rejections;
        self.pool_max_busy = self.pool_max_busy.max(other.pool_max_busy);
        self.pool_max_queue = self.pool_max_queue.max(other.pool_max_queue);
        self.messages_sent += other.messages_sent;
        self.payload_bytes_sent += other.payload_bytes_sent;
        self.staggered_gets += other.staggered_gets;
        self.regressions += other.regressions;
        self.repl_queue_max = self.repl_queue_max.max(other.repl_queue_max);
        self.repl_queue_now += other.repl_queue_now;
        self.reordered_backups += other.reordered_backups;
        self.stale_skipped += other.stale_skipped;
        self.max_lock_hold_us = self.max_lock_hold_us.max(other.max_lock_hold_us);
        self.lock_hold_total_us += other.lock_hold_total_us;
        self.inbound_blocked_us += other.inbound_blocked_us;
        self.blocked_deliveries += other.blocked_deliveries;
    }
}

/// Builds a machine for every member.
pub fn build_cluster(
    protocol: &dyn WriteProtocol,
    cfg: &ClusterConfig,
) -> Result<Vec<Box<dyn NodeMachine>>, ConfigError> {
    cfg.hash()?;
    (0..cfg.nodes)
        .map(|n| protocol.new_node(n as u16, cfg))
        .collect()
}
