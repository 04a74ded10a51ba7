//! The vocabulary of the sans-IO protocols: ids, versioned values, wire messages, and the inputs
//! a node state machine takes and the outputs it emits.
//!
//! Messages are small `Copy` structs (no value bytes: a value is a 64-bit tag), so the simulation
//! moves them through its event queue without allocating.

use super::pool::SlotKind;

/// A node's index in the cluster view (0-based).
pub type NodeId = u16;

/// A cache key; IspnPerfTest uses the integers `1..=num_keys`, we use `0..keys`.
pub type Key = u32;

/// A value and the version the primary owner gave it under the key lock.
///
/// Version 0 means "absent"; the primary numbers writes of a key 1, 2, 3 ... in apply order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Versioned {
    /// The write's position in the primary's apply order for this key.
    pub version: u64,
    /// A tag naming the write (originator and counter), standing in for the value bytes.
    pub value: u64,
}

/// Where a Triangle backup write sits in its segment's total order (`TriangleOrderManager`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeqTag {
    /// The key's segment.
    pub segment: u16,
    /// The topology id the primary used when it took the sequence number.
    pub topology: u32,
    /// The per-segment, per-topology sequence number (starts at 1).
    pub seq: u64,
}

/// Why an operation failed; every failure is counted and reported, never hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpError {
    /// The primary could not acquire the key lock within `lock_timeout` (ISPN000299).
    LockTimeout,
    /// A synchronous reply or ack did not arrive within `reply_timeout`.
    ReplyTimeout,
}

/// The outcome of a write at the primary, as carried back to the originator.
pub type PutResult = Result<u64, OpError>;

/// A wire message between nodes. Request ids are tokens of the node that waits for the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Msg {
    /// Originator -> owner: read `key` (`ClusteredGetCommand`).
    Get {
        /// The originator's request id.
        rid: u64,
        /// The key to read.
        key: Key,
    },
    /// Owner -> originator: the owner's current entry (version 0 when absent).
    GetReply {
        /// The originator's request id.
        rid: u64,
        /// The entry read.
        entry: Versioned,
    },
    /// Originator -> primary: write `value` under `key` (`PutKeyValueCommand`).
    Put {
        /// The originator's request id.
        rid: u64,
        /// The key to write.
        key: Key,
        /// The value tag to write.
        value: u64,
    },
    /// Primary -> originator: the write's version, or why it failed.
    PutReply {
        /// The originator's request id.
        rid: u64,
        /// The version given to the write, or the failure.
        result: PutResult,
    },
    /// Primary -> backup: apply this entry (LockForwarding: a sync RPC; Triangle: ordered by `seq`).
    BackupWrite {
        /// LockForwarding: the primary's op id; Triangle: the originator's request id.
        rid: u64,
        /// Triangle: the node to ack (the originator).
        origin: NodeId,
        /// The key written.
        key: Key,
        /// The entry the primary applied.
        entry: Versioned,
        /// Triangle's segment order; unused (default) for LockForwarding.
        seq: SeqTag,
    },
    /// Backup -> primary: LockForwarding's synchronous reply to `BackupWrite`.
    BackupReply {
        /// The primary's op id.
        rid: u64,
    },
    /// Backup -> originator: Triangle's `BackupAckCommand`.
    BackupAck {
        /// The originator's request id.
        rid: u64,
    },
    /// Primary's replication worker -> backup: KeyQueue's "current value of key".
    Replicate {
        /// The worker's batch id, acked by the backup.
        wid: u64,
        /// The key replicated.
        key: Key,
        /// The primary's entry when the worker read it.
        entry: Versioned,
    },
    /// Backup -> primary: KeyQueue's replication ack.
    ReplicateAck {
        /// The worker's batch id.
        wid: u64,
    },
}

impl Msg {
    /// Payload bytes the message carries (placeholder until values carry bytes).
    pub fn payload_len(&self) -> usize {
        0
    }
}

impl ClientOp {
    /// Payload bytes the operation writes (placeholder until values carry bytes).
    pub fn payload_len(&self) -> usize {
        0
    }
}

/// An operation a requester thread issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientOp {
    /// `cache.get(key)`.
    Get(Key),
    /// `cache.put(key, value)`.
    Put(Key, u64),
}

/// What a requester's operation returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A get's entry (version 0: absent).
    Got(Versioned),
    /// A put was acknowledged with this entry: the version and value the primary applied.
    Put(Versioned),
    /// The operation failed.
    Failed(OpError),
}

/// An input to a node state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Requester `requester` of this node issues `op`.
    Client {
        /// The requester's index on this node.
        requester: u32,
        /// The operation.
        op: ClientOp,
    },
    /// A message from another node arrived.
    Message {
        /// The sender.
        from: NodeId,
        /// The message.
        msg: Msg,
    },
    /// The node's wake-up timer fired (it checks its own deadlines).
    Timer,
    /// Threads driver: the worker thread that took slot `slot` runs its parked command now.
    Run {
        /// The slot id from [`Output::Execute`].
        slot: u64,
    },
    /// Threads driver: the worker thread of slot `slot` continues its command after
    /// [`Output::Resume`] (its key lock was granted while it was blocked).
    Resume {
        /// The slot id from [`Output::Resume`].
        slot: u64,
    },
}

/// An output of a node state machine, for its driver to carry out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Send `msg` to node `to` (never to the node itself: the machine loops those back).
    Send {
        /// The destination.
        to: NodeId,
        /// The message.
        msg: Msg,
    },
    /// The node's pools rejected `msg` from `from`; the sender's transport retransmits it later.
    Rejected {
        /// The original sender.
        from: NodeId,
        /// The rejected message.
        msg: Msg,
    },
    /// Requester `requester`'s operation completed.
    Reply {
        /// The requester's index on this node.
        requester: u32,
        /// The operation it issued.
        op: ClientOp,
        /// Its result.
        outcome: Outcome,
    },
    /// Wake the node (with [`Input::Timer`]) at virtual or elapsed time `at` µs, or earlier.
    SetTimer {
        /// The time in µs on the driver's clock.
        at: u64,
    },
    /// Real slots only: a command was admitted into slot `slot` and is parked until a thread of
    /// pool `kind` feeds [`Input::Run`] for it; that thread then holds the slot.
    Execute {
        /// The slot id.
        slot: u64,
        /// The pool whose thread must run it.
        kind: SlotKind,
    },
    /// Real slots only: wake the thread holding slot `slot` so that it feeds [`Input::Resume`]
    /// (the key lock its command waited for is now its own).
    Resume {
        /// The slot id.
        slot: u64,
    },
    /// Real slots only: slot `slot` was released; its thread may return to its pool.
    SlotFreed {
        /// The slot id.
        slot: u64,
    },
    /// Real slots only: the node's inbound path, blocked by a full pool under the `block`
    /// policy, delivered its last held message; the transport may deliver again.
    InboundResumed,
}
