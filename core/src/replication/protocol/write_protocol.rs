//! The trait every write protocol implements: the protocol-specific half of a node. A
//! [`ProtocolNode`](crate::replication::node::ProtocolNode) runs the shared half (data container,
//! key locks, pools, deadlines, client requests, gets and puts) and calls the protocol for what
//! differs: when a write replicates, to whom, what a backup does with it, and what an originator
//! waits for. Upstream the protocols differ in the same place: the distribution interceptor
//! (`NonTxDistributionInterceptor` vs `TriangleDistributionInterceptor`) over the same locking
//! interceptor, data container and transport.
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

use super::kind::ProtocolKind;
use crate::replication::message::{Key, Msg, NodeId, Output};
use crate::replication::node::{NodeBase, NodeStats};
use crate::replication::parts::pool::Slot;
use crate::replication::parts::timeouts::Deadline;

/// How an originator reads a key it may not own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetPlan {
    /// Read the local container.
    Local,
    /// Ask every owner at once; the first reply wins (Infinispan <= 8).
    AllOwners,
    /// Ask the owners one after another (primary first), moving on after `stagger_us`.
    Staggered {
        /// How long to wait for an owner before asking the next one (µs).
        stagger_us: u64,
    },
}

/// A write protocol: the per-node state and handlers of one strategy, run by a
/// [`ProtocolNode`](crate::replication::node::ProtocolNode) over its
/// [`NodeBase`] (the `base` argument of every handler).
///
/// Implementations: [`LockForwardingProtocol`](super::LockForwardingProtocol) (Infinispan <= 8),
/// [`KeyQueueProtocol`](super::KeyQueueProtocol) (Bela Ban's 2014 proposal) and
/// [`TriangleProtocol`](super::TriangleProtocol) (Infinispan 9); pick one with
/// [`ProtocolKind`]. A handler never blocks and never reads a clock: time comes in as `now`, and
/// effects go out through `out` or the base's `send`. The base's methods are crate-internal, so
/// only this crate implements the trait; it is public so that its contract (this module's doc)
/// is documented where the protocols implement it.
///
/// Before the layout by role (issue #11) this was the crate-private `ProtocolLogic` in
/// `node.rs`, and `WriteProtocol` named a factory trait that is now [`ProtocolKind::new_node`].
pub trait WriteProtocol: Send + Sized + 'static {
    /// The protocol this is.
    const KIND: ProtocolKind;

    /// The protocol's state for a new node whose shared half is `base`.
    fn new(base: &NodeBase) -> Self;

    /// Whether `msg` is a command that needs a pool slot (gets and puts always are).
    fn is_command(msg: &Msg) -> bool {
        matches!(msg, Msg::Get { .. } | Msg::Put { .. })
    }

    /// How a requester of this node reads `key`.
    fn get_plan(base: &NodeBase, key: Key) -> GetPlan;

    /// Backup acks a put's originator waits for besides the primary's result (Triangle's
    /// `CommandAckCollector`); every protocol routes the put itself alike.
    fn put_acks(_base: &NodeBase, _key: Key) -> u8 {
        0
    }

    /// A command other than `Get` and `Put` (which every protocol runs alike) runs on `slot`;
    /// a protocol with no such command releases the slot.
    fn on_command(
        &mut self,
        base: &mut NodeBase,
        _now: u64,
        slot: Slot,
        _from: NodeId,
        _msg: Msg,
        _out: &mut Vec<Output>,
    ) {
        base.pool.release(slot);
    }

    /// A primary op got its key lock.
    fn on_lock_granted(&mut self, base: &mut NodeBase, now: u64, op: u64, out: &mut Vec<Output>);

    /// A non-command message the shared half does not handle.
    fn on_message(
        &mut self,
        base: &mut NodeBase,
        now: u64,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    );

    /// A protocol deadline (`Backup` or `Repl`) expired.
    fn on_deadline(&mut self, base: &mut NodeBase, now: u64, d: Deadline, out: &mut Vec<Output>);

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
