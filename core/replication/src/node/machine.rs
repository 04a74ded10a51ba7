//! The node machine as drivers see it: one cluster member's sans-IO state machine. A driver feeds
//! it [`Input`]s with the current time and carries out its [`Output`]s, so the simulation, the
//! threads driver and the local driver run the same protocol code. Upstream, a member is a cache
//! manager with its JGroups channel; here the channel's threads belong to the driver.

use super::node_base::NodeBase;
use super::stats::NodeStats;
use crate::message::{Input, Output};
use crate::protocol::ProtocolKind;

/// One member's sans-IO state machine, as the drivers and the verifier see it: the object-safe
/// face of a [`ProtocolNode`](super::ProtocolNode) over any protocol, built by
/// [`ProtocolKind::new_node`].
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
    fn base(&self) -> &NodeBase;

    /// Why the node is not quiescent, or `None` when it has nothing in progress.
    fn busy_reason(&self) -> Option<String>;

    /// Counters so far.
    fn stats(&self) -> NodeStats;

    /// Triangle only: last sequence number sent per segment (as primary) and last delivered per
    /// segment (as backup); empty vectors for the other protocols.
    fn sequences(&self) -> (Vec<u64>, Vec<u64>);
}
