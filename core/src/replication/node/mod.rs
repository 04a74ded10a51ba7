//! The machinery every protocol shares: one node's data container, key locks, pools, deadlines,
//! originator-side request tracking and GET handling, and the event loop ([`Node`]) that feeds a
//! protocol's logic ([`ProtocolLogic`]) one input at a time.
//!
//! Nothing here blocks or reads a clock: time comes in with each input (`now`, in µs on the
//! driver's clock) and effects go out as [`Output`]s.
//!
//! The `block` rejection policy is modelled here, so both drivers get it: JGroups delivers a
//! node's messages on its receiver thread, and with a blocking executor that thread waits in
//! `execute` until a pool thread is free. So when a command from another node finds the pool
//! full (or earlier commands waiting), the node *holds* it, and every later message from another
//! node, replies and acks included, queues behind it in arrival order: the inbound path is
//! blocked. Whenever a slot frees (a command finishing, or a lock, backup or reply timeout: timers
//! still fire, they are how a stalled node recovers), the head-of-line command takes the slot and
//! the messages behind it are delivered in order until the next command that finds the pool full.
//! Held messages cost no time of their own; the blocked span is counted in
//! [`NodeStats::inbound_blocked_us`] when it ends, and each held message in
//! [`NodeStats::blocked_deliveries`]. Not held: requests of the node's own requester threads and
//! messages a node sends itself, which do not come through the transport (a command looped back
//! to a full pool waits in the pool's own queue). Under `abort` and `caller-runs` nothing is held.

use std::collections::VecDeque;

use super::error::ConfigError;
use super::message::{
    ClientOp, Input, Key, Msg, NodeId, OpError, Outcome, Output, PutResult, Value, Versioned,
};
use super::parts::collections::{IdMap, Slab};
use super::parts::data_container::DataContainer;
use super::parts::hashing::{ConsistentHash, Owners};
use super::parts::key_lock::{KeyLockTable, LockAttempt};
use super::parts::pool::{Pool, RejectionPolicy, Slot};
use super::parts::timeouts::{Deadline, DeadlineKey, Timeouts};
use super::write_protocol::{NodeMachine, NodeStats, ProtocolKind};

/// Settings every node of a cluster shares.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterConfig {
    /// Cluster members.
    pub nodes: usize,
    /// Owners per key (`numOwners`).
    pub num_owners: usize,
    /// Segments of the consistent hash.
    pub num_segments: usize,
    /// Keys `0..keys`.
    pub keys: u32,
    /// Key lock acquisition timeout (`lockAcquisitionTimeout`; Bela's run used 5 s).
    pub lock_timeout_us: u64,
    /// Reply / ack timeout (`replTimeout`, `remoteTimeout`: 15 s by default in Infinispan 9).
    pub reply_timeout_us: u64,
    /// Remote-command pool slots per node (Infinispan's internal pool: 32 by default); the
    /// threads driver runs this many real pool threads per node.
    pub pool_size: usize,
    /// OOB pool slots per node, used when caller-runs overflows the remote-command pool (JGroups
    /// 3.x stock configs: `oob_thread_pool.max_threads="8"`); the threads driver runs this many
    /// real OOB threads per node under caller-runs.
    pub oob_pool_size: usize,
    /// What a full pool does with the next command.
    pub rejection: RejectionPolicy,
    /// KeyQueue: replication batches a primary's worker keeps in flight.
    pub repl_window: usize,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: 4,
            num_owners: 2,
            num_segments: 256,
            keys: 20_000,
            lock_timeout_us: 5_000_000,
            reply_timeout_us: 15_000_000,
            pool_size: 32,
            oob_pool_size: 8,
            rejection: RejectionPolicy::CallerRuns,
            repl_window: 64,
        }
    }
}

impl ClusterConfig {
    /// Checks the settings and builds the consistent hash.
    pub fn hash(&self) -> Result<ConsistentHash, ConfigError> {
        if self.keys == 0 {
            return Err(ConfigError::OutOfRange {
                name: "keys",
                value: 0,
                valid: ">= 1",
            });
        }
        if self.pool_size == 0 {
            return Err(ConfigError::OutOfRange {
                name: "pool_size",
                value: 0,
                valid: ">= 1",
            });
        }
        if self.repl_window == 0 {
            return Err(ConfigError::OutOfRange {
                name: "repl_window",
                value: 0,
                valid: ">= 1",
            });
        }
        if self.rejection == RejectionPolicy::CallerRuns && self.oob_pool_size == 0 {
            // Every arriving message would be dropped and retransmitted forever.
            return Err(ConfigError::OutOfRange {
                name: "oob_pool_size",
                value: 0,
                valid: ">= 1 with the caller-runs policy",
            });
        }
        if self.reply_timeout_us == 0 {
            return Err(ConfigError::OutOfRange {
                name: "reply_timeout_us",
                value: 0,
                valid: ">= 1",
            });
        }
        ConsistentHash::new(self.nodes, self.num_owners, self.num_segments)
    }
}

/// Who waits for a primary op's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A remote originator's request id.
    Remote { from: NodeId, rid: u64 },
    /// A requester of this node (its client request id).
    Local { rid: u64 },
}

/// A write in progress at its primary owner.
#[derive(Debug)]
pub(crate) struct PrimaryOp {
    pub origin: Origin,
    pub key: Key,
    /// The value to apply; moved into `entry` when applied.
    pub value: Value,
    /// The pool slot a remote command holds (a local requester holds none: it is its own thread).
    pub slot: Option<Slot>,
    /// The lock-acquisition or backup-reply deadline currently armed.
    pub deadline: Option<DeadlineKey>,
    /// The entry applied, once applied.
    pub entry: Versioned,
    /// LockForwarding: backup replies still missing.
    pub pending: u8,
    /// Whether the key lock is held.
    pub locked: bool,
    /// When the key lock was granted.
    pub locked_at: u64,
}

#[derive(Debug)]
enum ClientKind {
    Get {
        owners: Owners,
        next: u8,
        stagger: Option<DeadlineKey>,
    },
    Put {
        result: Option<PutResult>,
        acks_needed: u8,
        acks: u8,
    },
}

#[derive(Debug)]
struct ClientState {
    requester: u32,
    op: ClientOp,
    deadline: DeadlineKey,
    kind: ClientKind,
}

/// How an originator reads a key it may not own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GetPlan {
    /// Read the local container.
    Local,
    /// Ask every owner at once; the first reply wins (Infinispan <= 8).
    AllOwners,
    /// Ask the owners one after another (primary first), moving on after `stagger_us`.
    Staggered { stagger_us: u64 },
}

/// Work a node still has to do within the current input.
#[derive(Debug, Clone)]
enum Work {
    Msg(NodeId, Msg),
    LockGranted(u64),
}

/// One node's shared state; protocols reach it through [`ProtocolLogic`]'s `core` argument.
#[derive(Debug)]
pub struct NodeCore {
    pub(crate) id: NodeId,
    pub(crate) cfg: ClusterConfig,
    pub(crate) hash: ConsistentHash,
    pub(crate) data: DataContainer,
    pub(crate) locks: KeyLockTable,
    pub(crate) pool: Pool<(NodeId, Msg)>,
    pub(crate) timeouts: Timeouts,
    clients: Slab<ClientState>,
    pub(crate) ops: Slab<PrimaryOp>,
    work: VecDeque<Work>,
    pub(crate) stats: NodeStats,
    /// Real slots (threads driver): admitted commands wait here for their thread's `Input::Run`.
    real_slots: bool,
    parked: IdMap<u64, (Slot, NodeId, Msg)>,
    /// Real slots: ops whose key lock was granted while their thread was blocked, by slot id.
    granted: IdMap<u64, u64>,
    /// Real slots: the slot whose thread feeds the current input, if any.
    current_slot: Option<u64>,
    /// `block` policy: messages from other nodes held undelivered, in arrival order, while a
    /// command at their head waits for a pool slot (the blocked transport thread).
    held: VecDeque<(NodeId, Msg)>,
    /// When the inbound path last became blocked (µs), while it is.
    blocked_since: Option<u64>,
}

impl NodeCore {
    /// The state of node `id` in a cluster configured by `cfg`.
    pub fn new(id: NodeId, cfg: &ClusterConfig) -> Result<Self, ConfigError> {
        let hash = cfg.hash()?;
        if id as usize >= cfg.nodes {
            return Err(ConfigError::OutOfRange {
                name: "node id",
                value: id as u64,
                valid: "0..nodes",
            });
        }
        Ok(NodeCore {
            id,
            cfg: cfg.clone(),
            hash,
            data: DataContainer::new(cfg.keys),
            locks: KeyLockTable::default(),
            pool: Pool::new(cfg.pool_size, cfg.oob_pool_size, cfg.rejection),
            timeouts: Timeouts::default(),
            clients: Slab::default(),
            ops: Slab::default(),
            work: VecDeque::new(),
            stats: NodeStats::default(),
            real_slots: false,
            parked: IdMap::default(),
            granted: IdMap::default(),
            current_slot: None,
            held: VecDeque::new(),
            blocked_since: None,
        })
    }

    /// Sends `msg`; a message to this node itself is looped back within the current input.
    pub(crate) fn send(&mut self, to: NodeId, msg: Msg, out: &mut Vec<Output>) {
        self.stats.messages_sent += 1;
        if to == self.id {
            self.work.push_back(Work::Msg(to, msg));
        } else {
            self.stats.payload_bytes_sent += msg.payload_len() as u64;
            out.push(Output::Send { to, msg });
        }
    }

    // ----- originator side -----

    /// Starts a get of `key` for `requester` following `plan`.
    pub(crate) fn start_get(
        &mut self,
        now: u64,
        requester: u32,
        key: Key,
        plan: GetPlan,
        out: &mut Vec<Output>,
    ) {
        let op = ClientOp::Get(key);
        let stagger_us = match plan {
            GetPlan::Local => {
                let entry = self.data.get(key);
                out.push(Output::Reply {
                    requester,
                    op,
                    outcome: Outcome::Got(entry),
                });
                return;
            }
            GetPlan::AllOwners => None,
            GetPlan::Staggered { stagger_us } => Some(stagger_us),
        };
        let owners = self.hash.owners(key);
        let rid = self.clients.insert(ClientState {
            requester,
            op,
            deadline: (0, 0),
            kind: ClientKind::Get {
                owners,
                next: 0,
                stagger: None,
            },
        });
        let deadline = self
            .timeouts
            .add(now + self.cfg.reply_timeout_us, Deadline::Client(rid));
        match stagger_us {
            None => {
                for &o in owners.all() {
                    self.send(o, Msg::Get { rid, key }, out);
                }
                if let Some(c) = self.clients.get_mut(rid) {
                    c.deadline = deadline;
                    c.kind = ClientKind::Get {
                        owners,
                        next: owners.all().len() as u8,
                        stagger: None,
                    };
                }
            }
            Some(stagger_us) => {
                let stagger = (owners.all().len() > 1)
                    .then(|| self.timeouts.add(now + stagger_us, Deadline::Stagger(rid)));
                if let Some(c) = self.clients.get_mut(rid) {
                    c.deadline = deadline;
                    c.kind = ClientKind::Get {
                        owners,
                        next: 1,
                        stagger,
                    };
                }
                self.send(owners.primary(), Msg::Get { rid, key }, out);
            }
        }
    }

    /// A staggered get's delay passed: ask the next owner too.
    fn on_stagger(&mut self, now: u64, rid: u64, out: &mut Vec<Output>) {
        let stagger_us = self.stagger_us();
        let Some(c) = self.clients.get_mut(rid) else {
            return;
        };
        let ClientKind::Get {
            owners,
            next,
            stagger,
        } = &mut c.kind
        else {
            return;
        };
        let key = match c.op {
            ClientOp::Get(k) => k,
            ClientOp::Put(k, _) => k,
        };
        let Some(&target) = owners.all().get(*next as usize) else {
            *stagger = None;
            return;
        };
        *next += 1;
        let more = (*next as usize) < owners.all().len();
        *stagger = None;
        if more {
            let k = self.timeouts.add(now + stagger_us, Deadline::Stagger(rid));
            if let Some(ClientState {
                kind: ClientKind::Get { stagger, .. },
                ..
            }) = self.clients.get_mut(rid)
            {
                *stagger = Some(k);
            }
        }
        self.stats.staggered_gets += 1;
        self.send(target, Msg::Get { rid, key }, out);
    }

    /// Infinispan 9's stagger delay: `remoteTimeout / 10 / numOwners`.
    pub(crate) fn stagger_us(&self) -> u64 {
        (self.cfg.reply_timeout_us / 10 / self.hash.num_owners() as u64).max(1)
    }

    fn on_get_reply(&mut self, rid: u64, entry: Versioned, out: &mut Vec<Output>) {
        let Some(c) = self.clients.get(rid) else {
            return;
        };
        if !matches!(c.kind, ClientKind::Get { .. }) {
            return;
        }
        if let Some(c) = self.clients.remove(rid) {
            self.timeouts.cancel(c.deadline);
            if let ClientKind::Get {
                stagger: Some(k), ..
            } = c.kind
            {
                self.timeouts.cancel(k);
            }
            out.push(Output::Reply {
                requester: c.requester,
                op: c.op,
                outcome: Outcome::Got(entry),
            });
        }
    }

    /// Starts a client put from this node: registers it (see [`NodeCore::start_put`]), then runs
    /// it here if this node is the key's primary, else sends it to the primary. Every protocol
    /// routes a put this way; they differ in the acks the originator waits for.
    pub(crate) fn route_put(
        &mut self,
        now: u64,
        requester: u32,
        key: Key,
        value: Value,
        acks_needed: u8,
        out: &mut Vec<Output>,
    ) {
        // The originator keeps a reference for the requester's outcome; the primary's copy is the
        // same buffer until a driver marshals it onto another node.
        let rid = self.start_put(now, requester, key, value.clone(), acks_needed);
        let primary = self.hash.primary(key);
        if primary == self.id {
            self.begin_primary_put(now, Origin::Local { rid }, key, value, None);
        } else {
            self.send(primary, Msg::Put { rid, key, value }, out);
        }
    }

    /// Registers a put of `requester`; it completes after the primary's result and `acks_needed`
    /// backup acks (Triangle's `CommandAckCollector`; other protocols need 0 acks).
    pub(crate) fn start_put(
        &mut self,
        now: u64,
        requester: u32,
        key: Key,
        value: Value,
        acks_needed: u8,
    ) -> u64 {
        let rid = self.clients.insert(ClientState {
            requester,
            op: ClientOp::Put(key, value),
            deadline: (0, 0),
            kind: ClientKind::Put {
                result: None,
                acks_needed,
                acks: 0,
            },
        });
        let deadline = self
            .timeouts
            .add(now + self.cfg.reply_timeout_us, Deadline::Client(rid));
        if let Some(c) = self.clients.get_mut(rid) {
            c.deadline = deadline;
        }
        rid
    }

    /// The primary's result for request `rid` arrived.
    pub(crate) fn put_result(&mut self, rid: u64, result: PutResult, out: &mut Vec<Output>) {
        let Some(c) = self.clients.get_mut(rid) else {
            return;
        };
        if let ClientKind::Put { result: r, .. } = &mut c.kind {
            *r = Some(result);
        }
        self.try_complete_put(rid, out);
    }

    /// A backup acked request `rid` (Triangle).
    pub(crate) fn put_ack(&mut self, rid: u64, out: &mut Vec<Output>) {
        let Some(c) = self.clients.get_mut(rid) else {
            return;
        };
        if let ClientKind::Put { acks, .. } = &mut c.kind {
            *acks += 1;
        }
        self.try_complete_put(rid, out);
    }

    fn try_complete_put(&mut self, rid: u64, out: &mut Vec<Output>) {
        let Some(c) = self.clients.get(rid) else {
            return;
        };
        let ClientKind::Put {
            result: Some(result),
            acks_needed,
            acks,
        } = c.kind
        else {
            return;
        };
        // A failed write sent no backup writes, so it completes without acks.
        if result.is_ok() && acks < acks_needed {
            return;
        }
        if let Some(c) = self.clients.remove(rid) {
            self.timeouts.cancel(c.deadline);
            let outcome = match (result, &c.op) {
                (Ok(version), ClientOp::Put(_, value)) => Outcome::Put(Versioned {
                    version,
                    value: value.clone(),
                }),
                (Ok(_), ClientOp::Get(_)) => return,
                (Err(e), _) => Outcome::Failed(e),
            };
            out.push(Output::Reply {
                requester: c.requester,
                op: c.op,
                outcome,
            });
        }
    }

    fn client_timeout(&mut self, rid: u64, out: &mut Vec<Output>) {
        if let Some(c) = self.clients.remove(rid) {
            if let ClientKind::Get {
                stagger: Some(k), ..
            } = c.kind
            {
                self.timeouts.cancel(k);
            }
            self.stats.reply_timeouts += 1;
            out.push(Output::Reply {
                requester: c.requester,
                op: c.op,
                outcome: Outcome::Failed(OpError::ReplyTimeout),
            });
        }
    }

    // ----- primary side -----

    /// Registers a write at this (primary) node and asks for its key lock.
    pub(crate) fn begin_primary_put(
        &mut self,
        now: u64,
        origin: Origin,
        key: Key,
        value: Value,
        slot: Option<Slot>,
    ) -> u64 {
        let op = self.ops.insert(PrimaryOp {
            origin,
            key,
            value,
            slot,
            deadline: None,
            entry: Versioned::default(),
            pending: 0,
            locked: false,
            locked_at: now,
        });
        match self.locks.lock(key, op) {
            LockAttempt::Granted => self.work.push_back(Work::LockGranted(op)),
            LockAttempt::Queued(_) => {
                let k = self
                    .timeouts
                    .add(now + self.cfg.lock_timeout_us, Deadline::Lock(op));
                if let Some(o) = self.ops.get_mut(op) {
                    o.deadline = Some(k);
                }
            }
        }
        op
    }

    /// Marks `op` as holding its lock (called by the protocol when the grant arrives).
    pub(crate) fn lock_granted(&mut self, now: u64, op: u64) -> Option<&mut PrimaryOp> {
        let o = self.ops.get_mut(op)?;
        if let Some(k) = o.deadline.take() {
            self.timeouts.cancel(k);
        }
        o.locked = true;
        o.locked_at = now;
        Some(o)
    }

    /// Applies `op`'s value at the next version of its key and returns the entry (sharing the
    /// stored value's bytes).
    pub(crate) fn apply_primary(&mut self, op: u64) -> Option<Versioned> {
        let o = self.ops.get_mut(op)?;
        let entry = Versioned {
            version: self.data.version(o.key) + 1,
            value: std::mem::take(&mut o.value),
        };
        o.entry = entry.clone();
        self.data.apply(o.key, entry.clone());
        Some(entry)
    }

    /// Releases `op`'s key lock, handing it to the next waiter.
    pub(crate) fn unlock(&mut self, now: u64, op: u64) {
        let Some(o) = self.ops.get_mut(op) else {
            return;
        };
        if !o.locked {
            return;
        }
        o.locked = false;
        // Lock-hold spans: how long the key stayed locked, network waits included.
        let held = now.saturating_sub(o.locked_at);
        self.stats.max_lock_hold_us = self.stats.max_lock_hold_us.max(held);
        self.stats.lock_hold_total_us += held;
        let key = o.key;
        if let Some(next) = self.locks.unlock(key, op) {
            self.work.push_back(Work::LockGranted(next));
        }
    }

    /// Ends `op`: unlocks if still locked, answers its origin, frees its pool slot.
    pub(crate) fn finish_primary_put(
        &mut self,
        now: u64,
        op: u64,
        result: PutResult,
        out: &mut Vec<Output>,
    ) {
        self.unlock(now, op);
        let Some(o) = self.ops.remove(op) else { return };
        if let Some(k) = o.deadline {
            self.timeouts.cancel(k);
        }
        match o.origin {
            Origin::Remote { from, rid } => self.send(from, Msg::PutReply { rid, result }, out),
            Origin::Local { rid } => self.put_result(rid, result, out),
        }
        if let Some(slot) = o.slot {
            self.pool.release(slot);
        }
    }

    /// Arms a protocol deadline for `op` (LockForwarding's backup replies).
    pub(crate) fn arm_op_deadline(&mut self, now: u64, op: u64, d: Deadline) {
        let k = self.timeouts.add(now + self.cfg.reply_timeout_us, d);
        if let Some(o) = self.ops.get_mut(op) {
            if let Some(old) = o.deadline.replace(k) {
                self.timeouts.cancel(old);
            }
        }
    }

    /// Whether anything is still in progress (for the verifier's quiescence check).
    pub(crate) fn busy_reason(&self) -> Option<String> {
        if !self.clients.is_empty() {
            return Some(format!("{} client requests pending", self.clients.len()));
        }
        if !self.ops.is_empty() {
            return Some(format!("{} primary ops pending", self.ops.len()));
        }
        if self.locks.locked_keys() > 0 {
            return Some(format!("{} keys locked", self.locks.locked_keys()));
        }
        if !self.held.is_empty() {
            return Some(format!("{} inbound messages held", self.held.len()));
        }
        if self.pool.busy() > 0 || self.pool.queued() > 0 {
            return Some(format!(
                "pool busy {} queued {}",
                self.pool.busy(),
                self.pool.queued()
            ));
        }
        None
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// This node's data container.
    pub fn data(&self) -> &DataContainer {
        &self.data
    }

    /// The consistent hash.
    pub fn hash(&self) -> &ConsistentHash {
        &self.hash
    }
}

/// The protocol-specific half of a node; [`Node`] runs the shared half.
pub(crate) trait ProtocolLogic: Send + 'static {
    /// The protocol this logic implements.
    const KIND: ProtocolKind;

    /// Whether `msg` is a command that needs a pool slot (gets and puts always are).
    fn is_command(msg: &Msg) -> bool {
        matches!(msg, Msg::Get { .. } | Msg::Put { .. })
    }

    /// How a requester of this node reads `key`.
    fn get_plan(core: &NodeCore, key: Key) -> GetPlan;

    /// Backup acks a put's originator waits for besides the primary's result (Triangle's
    /// `CommandAckCollector`); every protocol routes the put itself alike.
    fn put_acks(_core: &NodeCore, _key: Key) -> u8 {
        0
    }

    /// A command other than `Get` and `Put` (which every protocol runs alike) runs on `slot`;
    /// a protocol with no such command releases the slot.
    fn on_command(
        &mut self,
        core: &mut NodeCore,
        _now: u64,
        slot: Slot,
        _from: NodeId,
        _msg: Msg,
        _out: &mut Vec<Output>,
    ) {
        core.pool.release(slot);
    }

    /// A primary op got its key lock.
    fn on_lock_granted(&mut self, core: &mut NodeCore, now: u64, op: u64, out: &mut Vec<Output>);

    /// A non-command message the shared half does not handle.
    fn on_message(
        &mut self,
        core: &mut NodeCore,
        now: u64,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    );

    /// A protocol deadline (`Backup` or `Repl`) expired.
    fn on_deadline(&mut self, core: &mut NodeCore, now: u64, d: Deadline, out: &mut Vec<Output>);

    /// Protocol state still in progress, for the quiescence check.
    fn busy_reason(&self) -> Option<String>;

    /// Fills protocol-specific statistics.
    fn fill_stats(&self, stats: &mut NodeStats);

    /// Triangle: `(segment, last seq sent)` per segment this node is primary of, and the last seq
    /// delivered per segment as a backup. Empty for the other protocols.
    fn sequences(&self) -> (Vec<u64>, Vec<u64>) {
        (Vec::new(), Vec::new())
    }
}

/// A node: shared machinery plus a protocol's logic.
#[derive(Debug)]
pub(crate) struct Node<L: ProtocolLogic> {
    core: NodeCore,
    logic: L,
}

impl<L: ProtocolLogic> Node<L> {
    /// Wraps `core` with `logic`.
    pub(crate) fn new(core: NodeCore, logic: L) -> Self {
        Node { core, logic }
    }

    fn run(&mut self, now: u64, out: &mut Vec<Output>) {
        loop {
            if let Some(w) = self.core.work.pop_front() {
                match w {
                    Work::Msg(from, msg) => self.on_msg(now, from, msg, out),
                    Work::LockGranted(op) => {
                        let Some(slot) = self.core.lock_granted(now, op).map(|o| o.slot) else {
                            continue;
                        };
                        match slot {
                            // Real slots: the lock is the op's from now on, but its command
                            // continues on its own (blocked) thread, not on the one that unlocked.
                            Some(slot)
                                if self.core.real_slots
                                    && self.core.current_slot != Some(slot.id) =>
                            {
                                self.core.granted.insert(slot.id, op);
                                out.push(Output::Resume { slot: slot.id });
                            }
                            _ => self.logic.on_lock_granted(&mut self.core, now, op, out),
                        }
                    }
                }
                continue;
            }
            if let Some((slot, (from, msg))) = self.core.pool.next_queued() {
                self.run_command(now, slot, from, msg, out);
                continue;
            }
            // A freed slot unblocks the inbound path: the head-of-line command takes it, and the
            // messages behind it are delivered in order until the next command that finds the
            // pool full again.
            if let Some((_, msg)) = self.core.held.front() {
                if L::is_command(msg) && self.core.pool.blocks() {
                    break;
                }
                let Some((from, msg)) = self.core.held.pop_front() else {
                    break;
                };
                if self.core.held.is_empty() {
                    self.end_block(now, out);
                }
                self.deliver(now, from, msg, out);
                continue;
            }
            break;
        }
    }

    /// The inbound path delivers again: counts the blocked time and tells a real transport.
    fn end_block(&mut self, now: u64, out: &mut Vec<Output>) {
        if let Some(since) = self.core.blocked_since.take() {
            self.core.stats.inbound_blocked_us += now.saturating_sub(since);
            if self.core.real_slots {
                out.push(Output::InboundResumed);
            }
        }
    }

    fn on_msg(&mut self, now: u64, from: NodeId, msg: Msg, out: &mut Vec<Output>) {
        // Under `block`, a message from another node waits behind any held one (one inbound
        // path, in order), and a command that finds the pool full blocks the path itself. A
        // message the node sent itself does not come through the transport and is never held.
        if from != self.core.id
            && (!self.core.held.is_empty() || (L::is_command(&msg) && self.core.pool.blocks()))
        {
            if self.core.held.is_empty() {
                self.core.blocked_since = Some(now);
            }
            self.core.stats.blocked_deliveries += 1;
            self.core.held.push_back((from, msg));
            return;
        }
        self.deliver(now, from, msg, out);
    }

    fn deliver(&mut self, now: u64, from: NodeId, msg: Msg, out: &mut Vec<Output>) {
        if from != self.core.id && !self.core.pool.can_deliver() {
            out.push(Output::Rejected { from, msg });
            return;
        }
        if L::is_command(&msg) {
            match self.core.pool.admit((from, msg)) {
                Ok((slot, (from, msg))) => self.run_command(now, slot, from, msg, out),
                Err(None) => {}
                Err(Some((from, msg))) => out.push(Output::Rejected { from, msg }),
            }
            return;
        }
        match msg {
            Msg::GetReply { rid, entry } => self.core.on_get_reply(rid, entry, out),
            Msg::PutReply { rid, result } => self.core.put_result(rid, result, out),
            Msg::BackupAck { rid } => self.core.put_ack(rid, out),
            _ => self.logic.on_message(&mut self.core, now, from, msg, out),
        }
    }

    fn run_command(&mut self, now: u64, slot: Slot, from: NodeId, msg: Msg, out: &mut Vec<Output>) {
        if self.core.real_slots && self.core.current_slot != Some(slot.id) {
            // The command runs when a thread of its pool takes the slot (`Input::Run`).
            self.core.parked.insert(slot.id, (slot, from, msg));
            out.push(Output::Execute {
                slot: slot.id,
                kind: slot.kind,
            });
            return;
        }
        match msg {
            Msg::Get { rid, key } => {
                let entry = self.core.data.get(key);
                self.core.send(from, Msg::GetReply { rid, entry }, out);
                self.core.pool.release(slot);
            }
            Msg::Put { rid, key, value } => {
                let origin = Origin::Remote { from, rid };
                self.core
                    .begin_primary_put(now, origin, key, value, Some(slot));
            }
            _ => self
                .logic
                .on_command(&mut self.core, now, slot, from, msg, out),
        }
    }

    fn on_deadline(&mut self, now: u64, d: Deadline, out: &mut Vec<Output>) {
        match d {
            Deadline::Client(rid) => self.core.client_timeout(rid, out),
            Deadline::Stagger(rid) => self.core.on_stagger(now, rid, out),
            Deadline::Lock(op) => {
                let Some(o) = self.core.ops.get_mut(op) else {
                    return;
                };
                o.deadline = None;
                let key = o.key;
                if self.core.locks.cancel_wait(key, op) {
                    self.core.stats.lock_timeouts += 1;
                    self.core
                        .finish_primary_put(now, op, Err(OpError::LockTimeout), out);
                }
            }
            Deadline::Backup(_) | Deadline::Repl(_) => {
                self.logic.on_deadline(&mut self.core, now, d, out)
            }
        }
    }
}

impl<L: ProtocolLogic> NodeMachine for Node<L> {
    fn kind(&self) -> ProtocolKind {
        L::KIND
    }

    fn handle(&mut self, now: u64, input: Input, out: &mut Vec<Output>) {
        match input {
            Input::Client { requester, op } => match op {
                ClientOp::Get(key) => {
                    let plan = L::get_plan(&self.core, key);
                    self.core.start_get(now, requester, key, plan, out);
                }
                ClientOp::Put(key, value) => {
                    let acks = L::put_acks(&self.core, key);
                    self.core.route_put(now, requester, key, value, acks, out);
                }
            },
            Input::Message { from, msg } => self.core.work.push_back(Work::Msg(from, msg)),
            Input::Timer => {
                self.core.timeouts.fired();
                while let Some(d) = self.core.timeouts.pop_expired(now) {
                    self.on_deadline(now, d, out);
                    self.run(now, out);
                }
            }
            Input::Run { slot } => {
                if let Some((slot, from, msg)) = self.core.parked.remove(&slot) {
                    self.core.current_slot = Some(slot.id);
                    self.run_command(now, slot, from, msg, out);
                }
            }
            Input::Resume { slot } => {
                if let Some(op) = self.core.granted.remove(&slot) {
                    self.core.current_slot = Some(slot);
                    self.logic.on_lock_granted(&mut self.core, now, op, out);
                }
            }
        }
        self.run(now, out);
        self.core.current_slot = None;
        if let Some(at) = self.core.timeouts.rearm() {
            out.push(Output::SetTimer { at });
        }
        if self.core.real_slots {
            out.extend(
                self.core
                    .pool
                    .take_released()
                    .map(|slot| Output::SlotFreed { slot }),
            );
        }
    }

    fn use_real_slots(&mut self) {
        self.core.real_slots = true;
        self.core.pool.track_releases();
    }

    fn core(&self) -> &NodeCore {
        &self.core
    }

    fn inbound_blocked(&self) -> bool {
        !self.core.held.is_empty()
    }

    fn busy_reason(&self) -> Option<String> {
        self.core.busy_reason().or_else(|| self.logic.busy_reason())
    }

    fn stats(&self) -> NodeStats {
        let mut s = self.core.stats.clone();
        s.pool_rejections = self.core.pool.rejections();
        s.pool_max_busy = self.core.pool.max_busy() as u64;
        s.pool_max_queue = self.core.pool.max_queue() as u64;
        s.regressions = self.core.data.regressions();
        self.logic.fill_stats(&mut s);
        s
    }

    fn sequences(&self) -> (Vec<u64>, Vec<u64>) {
        self.logic.sequences()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replication::parts::pool::SlotKind;
    use crate::replication::{LockForwardingProtocol, WriteProtocol};

    fn step(m: &mut dyn NodeMachine, input: Input) -> Vec<Output> {
        let mut out = Vec::new();
        m.handle(0, input, &mut out);
        out.retain(|o| !matches!(o, Output::SetTimer { .. }));
        out
    }

    /// `block`: a command at a full pool holds the inbound path, a reply behind it is held too
    /// (the stall), and the backup timeout that frees the slot resumes deliveries in order.
    #[test]
    fn block_holds_replies_behind_a_command_until_a_timeout_frees_a_slot() {
        let cfg = ClusterConfig {
            nodes: 2,
            keys: 16,
            pool_size: 1,
            rejection: RejectionPolicy::Block,
            reply_timeout_us: 1_000,
            ..ClusterConfig::default()
        };
        let hash = cfg.hash().unwrap();
        let key = (0..16).find(|&k| hash.primary(k) == 0).unwrap();
        let mut m = LockForwardingProtocol.new_node(0, &cfg).unwrap();
        let at = |m: &mut dyn NodeMachine, now, input| {
            let mut out = Vec::new();
            m.handle(now, input, &mut out);
            out.retain(|o| !matches!(o, Output::SetTimer { .. }));
            out
        };
        let put = |rid| Input::Message {
            from: 1,
            msg: Msg::Put {
                rid,
                key,
                value: Value::new(rid, 8),
            },
        };
        // Put 1 takes the only slot and waits for its backup reply.
        let out = at(m.as_mut(), 0, put(1));
        let [
            Output::Send {
                msg: Msg::BackupWrite { rid: op1, .. },
                ..
            },
        ] = out[..]
        else {
            panic!("{out:?}")
        };
        // Put 2 finds the pool full: the inbound path blocks.
        assert_eq!(at(m.as_mut(), 10, put(2)), vec![]);
        assert!(m.inbound_blocked());
        // The reply put 1 waits for is held behind put 2: nothing happens.
        let reply = Input::Message {
            from: 1,
            msg: Msg::BackupReply { rid: op1 },
        };
        assert_eq!(at(m.as_mut(), 20, reply), vec![]);
        assert!(m.inbound_blocked());
        assert_eq!(m.stats().blocked_deliveries, 2);
        // The backup timeout fails put 1 and frees its slot: put 2 runs, then the (now stale)
        // reply is delivered and the path is open again.
        let out = at(m.as_mut(), 1_000, Input::Timer);
        assert!(
            out.iter().any(|o| matches!(
                o,
                Output::Send {
                    msg: Msg::PutReply {
                        rid: 1,
                        result: Err(_)
                    },
                    ..
                }
            )),
            "{out:?}"
        );
        assert!(
            out.iter().any(|o| matches!(
                o,
                Output::Send {
                    msg: Msg::BackupWrite { .. },
                    ..
                }
            )),
            "put 2 replicates: {out:?}"
        );
        assert!(!m.inbound_blocked());
        let s = m.stats();
        assert_eq!((s.inbound_blocked_us, s.backup_timeouts), (990, 1));
    }

    /// Real-slot mode at the machine level (what the threads driver relies on): an admitted
    /// command waits for `Run`; a lock granted by another input is announced with `Resume` and
    /// continued only on `Resume`; released slots are announced.
    #[test]
    fn real_slots_park_commands_and_hand_lock_grants_to_their_slot() {
        let cfg = ClusterConfig {
            nodes: 2,
            keys: 16,
            ..ClusterConfig::default()
        };
        let hash = cfg.hash().unwrap();
        let key = (0..16).find(|&k| hash.primary(k) == 0).unwrap();
        let mut m = LockForwardingProtocol.new_node(0, &cfg).unwrap();
        m.use_real_slots();
        let put = |rid| Input::Message {
            from: 1,
            msg: Msg::Put {
                rid,
                key,
                value: Value::new(rid, 8),
            },
        };
        let [Output::Execute { slot: a, kind }] = step(m.as_mut(), put(1))[..] else {
            panic!("the first put is parked");
        };
        assert_eq!(kind, SlotKind::Pool);
        let [Output::Execute { slot: b, .. }] = step(m.as_mut(), put(2))[..] else {
            panic!("the second put is parked");
        };
        // `a` gets the lock at once and replicates while holding it.
        let out = step(m.as_mut(), Input::Run { slot: a });
        assert!(
            matches!(
                out[..],
                [Output::Send {
                    to: 1,
                    msg: Msg::BackupWrite { .. }
                }]
            ),
            "{out:?}"
        );
        // `b` queues for the lock: nothing happens, its thread blocks.
        assert_eq!(step(m.as_mut(), Input::Run { slot: b }), vec![]);
        // The backup reply ends `a`: its slot is freed and `b` is told it holds the lock, but
        // `b`'s replication has not started on this (delivering) input.
        let Output::Send {
            msg: Msg::BackupWrite { rid: op_a, .. },
            ..
        } = out[0]
        else {
            unreachable!()
        };
        let out = step(
            m.as_mut(),
            Input::Message {
                from: 1,
                msg: Msg::BackupReply { rid: op_a },
            },
        );
        assert!(out.contains(&Output::Resume { slot: b }), "{out:?}");
        assert!(out.contains(&Output::SlotFreed { slot: a }), "{out:?}");
        assert!(
            !out.iter().any(|o| matches!(
                o,
                Output::Send {
                    msg: Msg::BackupWrite { .. },
                    ..
                }
            )),
            "{out:?}"
        );
        // `b`'s thread continues it.
        let out = step(m.as_mut(), Input::Resume { slot: b });
        assert!(
            matches!(
                out[..],
                [Output::Send {
                    to: 1,
                    msg: Msg::BackupWrite { .. }
                }]
            ),
            "{out:?}"
        );
        assert!(m.busy_reason().is_some());
        assert_eq!(m.stats().lock_timeouts, 0);
    }
}
