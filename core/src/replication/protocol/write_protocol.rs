//! The protocol-specific half of a node: the trait each write protocol implements, and how an
//! originator reads a key.

use super::kind::{NodeStats, ProtocolKind};
use crate::replication::message::{Key, Msg, NodeId, Output};
use crate::replication::node::NodeCore;
use crate::replication::parts::pool::Slot;
use crate::replication::parts::timeouts::Deadline;

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
