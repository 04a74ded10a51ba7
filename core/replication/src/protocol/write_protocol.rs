//! The trait every write protocol implements: the protocol-specific half of a node. A
//! [`ProtocolNode`](crate::node::ProtocolNode) runs the shared half (data container,
//! key locks, pools, deadlines, client requests, gets and puts) and calls the protocol for what
//! differs: when a write replicates, to whom, what a backup does with it, and what an originator
//! waits for. Upstream the protocols differ in the same place: the distribution interceptor
//! (`NonTxDistributionInterceptor` vs `TriangleDistributionInterceptor`) over the same locking
//! interceptor, data container and transport.
//!
//! | protocol | upstream | key lock held across | put critical path | get plan (non-owner / backup originator) | who has an acknowledged put |
//! |---|---|---|---|---|---|
//! | [`LockForwardingProtocol`](super::LockForwardingProtocol) | Infinispan <= 8 `NonTxDistributionInterceptor` | the backup RPC | O -> P -> B -> P -> O | every owner at once, first reply wins (an owner reads locally) | every owner |
//! | [`KeyQueueProtocol`](super::KeyQueueProtocol) | Bela Ban's 2014 proposal | local apply only | O -> P -> O (backups lag) | the primary only, no stagger (the primary reads locally) | the primary only |
//! | [`TriangleProtocol`](super::TriangleProtocol) | Infinispan 9 `TriangleDistributionInterceptor` | local apply + seq | O -> P -> B -> O | owners staggered, primary first (an owner reads locally) | every owner |
//!
//! Read guarantee, the same for all three: **a get that starts after a put of its key was
//! acknowledged returns that put's version or a later one** (so a requester reads its own
//! writes, and no requester reads a value older than one acknowledged to anybody before its get
//! began). Each protocol's get plan is what makes it true: lock forwarding and the triangle
//! acknowledge a put only once every owner has applied it (the primary waits for the backups'
//! replies; the originator waits for their acks), so any owner's answer is fresh enough and a get
//! may read locally, ask all owners or fall back to a backup after the stagger. Under the key
//! queue only the primary has applied a put when it is acknowledged (the backups get it later
//! from the queue), so, as the proposal says, gets go to the primary "because the backup
//! owner(s) may not yet have received the modification": [`GetPlan::Primary`], with no fallback
//! to a backup. A key-queue get whose primary does not answer within the reply timeout fails
//! ([`OpError::ReplyTimeout`](crate::OpError::ReplyTimeout)) instead of returning a
//! backup's possibly stale value (a staggered fallback to the backup could answer v0 after v1
//! was acknowledged). The simulation checks the guarantee on every get of
//! every run (`history.rs`; a violation fails the run's verification as a
//! [`VerifyError::StaleRead`](crate::VerifyError::StaleRead)).
//!
//! Pools (the same rule in the simulation and the threads driver, both take it from
//! `is_command`): upstream, a cache RPC that may block runs on the remote-commands executor
//! (`BasePerCacheInboundInvocationHandler.handleRunnable`, when `executeOnExecutorService`, i.e.
//! the delivery is not ordered and `command.canBlock()`), and a response is completed on the
//! JGroups thread that delivered it (the request correlator), with no executor. Here a command
//! takes a slot of the remote-command pool (overflowing to the OOB pool under caller-runs), and
//! every other message is handled on the delivering thread, which needs a free OOB thread under
//! caller-runs (else it is dropped and retransmitted).
//! Each protocol's header says which of its messages are commands.
//!
//! Contract every machine keeps (checked by `tests.rs` and the verifier):
//! - after quiescence, every owner of a key holds the same entry (version and value);
//! - a put acknowledged with version `v` is never lost: the owners end at `v` or a later version
//!   (with a killed node, `verify_survivors`: key queue, which acknowledges before it
//!   replicates, may lose the newest put of a key whose primary died, and counts it);
//! - versions of a key are given by its primary under the key lock, 1, 2, 3 ...;
//! - every failure (lock timeout, reply timeout, pool rejection) is counted in [`NodeStats`];
//! - the read guarantee above: a get started after a put of its key was acknowledged returns a
//!   version >= that put's; and a put started after another put of its key was acknowledged gets
//!   a higher version (both checked during simulated runs).

use super::get_plan::GetPlan;
use super::kind::ProtocolKind;
use crate::components::pool::Slot;
use crate::components::timeouts::Deadline;
use crate::message::{Key, Msg, NodeId, Output};
use crate::node::{NodeBase, NodeStats};

/// A write protocol: the per-node state and handlers of one strategy, run by a
/// [`ProtocolNode`](crate::node::ProtocolNode) over its
/// [`NodeBase`] (the `base` argument of every handler).
///
/// Implementations: [`LockForwardingProtocol`](super::LockForwardingProtocol) (Infinispan <= 8),
/// [`KeyQueueProtocol`](super::KeyQueueProtocol) (Bela Ban's 2014 proposal) and
/// [`TriangleProtocol`](super::TriangleProtocol) (Infinispan 9); pick one with
/// [`ProtocolKind`]. A handler never blocks and never reads a clock: time comes in as `now`, and
/// effects go out through `out` or the base's `send`. The base's methods are crate-internal, so
/// only this crate implements the trait; it is public so that its contract (this module's doc)
/// is documented where the protocols implement it. Building a node for a protocol chosen at run
/// time is [`ProtocolKind::new_node`]'s job, not this trait's.
pub trait WriteProtocol: Send + Sized + 'static {
    /// The protocol this is.
    const KIND: ProtocolKind;

    /// The protocol's state for a new node whose shared half is `base`.
    fn new(base: &NodeBase) -> Self;

    /// Whether every owner holds a put before it is acknowledged, so that a get may take any
    /// owner's answer; `false` restricts the configurable get plan to `primary-first`.
    const OWNERS_HOLD_ACKED_PUTS: bool = true;

    /// Whether `msg` is a command that needs a pool slot (gets and puts always are).
    fn is_command(msg: &Msg) -> bool {
        matches!(msg, Msg::Get { .. } | Msg::Put { .. })
    }

    /// How a requester of this node reads `key`; the plan must keep the read guarantee of this
    /// module's doc.
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

    /// The failure detector reported `node` gone ([`crate::Input::Left`]; `base.is_gone` already
    /// says so). By default nothing changes: a wait on the node ends at its deadline, as it
    /// does for lock forwarding's backup replies and the triangle's acks.
    fn on_member_left(
        &mut self,
        _base: &mut NodeBase,
        _now: u64,
        _node: NodeId,
        _out: &mut Vec<Output>,
    ) {
    }

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
