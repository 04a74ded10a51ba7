//! Infinispan DIST-SYNC non-transactional writes: how a distributed cache keeps a key's primary and
//! backup owners in agreement, and what holding a key lock across a network round trip costs.
//!
//! Models `NonTxDistributionInterceptor` (Infinispan <= 8), Bela Ban's 2014 key-queue proposal
//! and `TriangleDistributionInterceptor` + `TriangleOrderManager` (Infinispan 9, ISPN-6919). A
//! put carries real value bytes ([`Value`], `value_size` of them): the threads and local drivers
//! copy them once per hop between nodes (marshalling), the simulation shares them.
//!
//! Laid out by role:
//! - [`node`]: the node machine, one cluster member as a sans-IO state machine
//!   ([`NodeMachine`]): its settings ([`ClusterConfig`]), the protocol-independent half
//!   ([`NodeBase`]: originator side, primary path, the held inbound path of the `block` policy)
//!   and the event loop ([`node::ProtocolNode`]) that dispatches each input to it or to a protocol.
//! - [`protocol`]: the trait the protocols implement ([`WriteProtocol`]), the kind enum that names
//!   them and builds their machines ([`ProtocolKind`]), and one module per protocol.
//! - [`components`]: what every node is built from: consistent hashing, the data container, key locks
//!   with FIFO waiters, bounded pools whose slots a command holds while it waits, deadlines.
//! - [`driver`]: what runs the machines: a seeded discrete-event simulation in virtual time
//!   ([`driver::sim`]) for 100-node clusters; real threads with real bounded pools whose threads
//!   block ([`driver::threads`]) for small ones, their messages over channels or loopback TCP
//!   ([`driver::net`], so far the wire format and the connections); every node on the calling
//!   thread with instant delivery ([`driver::local`]) for a protocol's bare CPU cost.
//! - [`message`] (the protocols' vocabulary: messages, inputs, outputs), [`verifier`] (checks a
//!   quiescent cluster), [`history`] (checks every completed get and put of a run against the
//!   puts of its key acknowledged before it started: the read guarantee), [`workload`]
//!   (IspnPerfTest's requesters) and [`error`].
//!
//! Architecture invariants: the machines and the simulation never read the wall clock
//! (`tests/architecture.rs` reads every file outside the threads driver); key locks and pool slots are granted, queued, rejected and timed out only by a
//! machine, so every driver accounts them identically; the simulation counts a held slot as busy
//! in virtual time, while the threads driver backs every slot with a real pool thread that stays
//! blocked (on a key-lock wait or a sync reply) until the machine releases the slot (the machine's
//! real-slot mode, [`NodeMachine::use_real_slots`], only changes *which thread* runs a command's
//! steps, never what they do); every protocol passes the conformance suite in `tests.rs` under
//! both drivers.
//!
//! Strategies:
//! - [`LockForwardingProtocol`] (`lock-forwarding`): sync backup RPC while holding the key lock.
//! - [`KeyQueueProtocol`] (`key-queue`): unlock, then a de-duplicating key FIFO replicated by a
//!   worker; gets read the primary only, since the backups lag.
//! - [`TriangleProtocol`] (`triangle`): per-segment sequence numbers; backups ack the originator.
//!
//! All three keep one read guarantee (see [`protocol::write_protocol`]): a get that starts after
//! a put of its key was acknowledged returns that put's version or a later one.

#![deny(missing_docs)]

mod components;
pub mod driver;
mod error;
mod history;
mod message;
mod node;
mod protocol;
mod verifier;
pub mod workload;

#[cfg(test)]
mod tests;

pub use components::hashing::ConsistentHash;
pub use components::pool::RejectionPolicy;
pub use error::{ConfigError, VerifyError};
pub use history::{HistoryCheck, TimedOp, check_timeline};
pub use message::{ClientOp, Input, Key, Msg, NodeId, OpError, Outcome, Output, Value, Versioned};
pub use node::{ClusterConfig, NodeBase, NodeMachine, NodeStats};
pub use protocol::{
    DeDupQueue, GetPlan, GetPlanChoice, KeyQueueProtocol, LockForwardingProtocol, ProtocolKind,
    TriangleProtocol, WriteProtocol,
};
pub use verifier::{AckLog, VerifyReport};
