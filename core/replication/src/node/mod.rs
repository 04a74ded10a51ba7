//! The node machine: one cluster member's sans-IO state machine ([`NodeMachine`]), built as a
//! [`ProtocolNode`]: the protocol-independent half every protocol shares ([`NodeBase`]: data
//! container, key locks, pools, deadlines, originator-side requests, gets and puts) plus one
//! protocol's half ([`WriteProtocol`](crate::protocol::WriteProtocol)), fed one input
//! at a time by its event loop. Upstream, this is one Infinispan cache member: its interceptor
//! stack over `DataContainer`, `LockManager`, the remote-command executor and the JGroups
//! channel's delivery.
//!
//! Nothing here blocks or reads a clock: time comes in with each input (`now`, in µs on the
//! driver's clock) and effects go out as [`Output`](crate::Output)s.
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
//!
//! Files, one role each: [`config`] (the cluster settings and their validation), `node_base.rs` (the
//! protocol-independent state of a node), `originator.rs` (client requests of this node's
//! requesters: gets, put routing, acks, reply timeouts), `primary.rs` (a write at its primary:
//! lock, apply, unlock, answer), `event_loop.rs` (input dispatch: which half handles what, the
//! held inbound path, real slots), `machine.rs` (the interface drivers use) and `stats.rs` (the
//! node's counters).

pub mod config;
mod event_loop;
mod machine;
mod node_base;
mod originator;
mod primary;
mod stats;

pub use config::ClusterConfig;
pub use event_loop::ProtocolNode;
pub use machine::NodeMachine;
pub use node_base::NodeBase;
pub(crate) use primary::Origin;
pub use stats::NodeStats;
