//! Infinispan DIST-SYNC non-transactional writes: how a distributed cache keeps a key's primary and
//! backup owners in agreement, and what holding a key lock across a network round trip costs.
//!
//! Models `NonTxDistributionInterceptor` (Infinispan <= 8), Bela Ban's 2014 key-queue proposal
//! and `TriangleDistributionInterceptor` + `TriangleOrderManager` (Infinispan 9, ISPN-6919). The
//! protocols are sans-IO state machines ([`NodeMachine`]) over shared parts: consistent hashing
//! ([`parts::hashing`]), per-key locks with FIFO waiters ([`parts::key_lock`]), bounded pools whose slots a
//! command holds while it waits ([`parts::pool`]; under the `block` policy a full pool blocks the node's
//! whole inbound path, replies included, as a JGroups receiver thread blocked in a full executor
//! does: see [`node`]). Two drivers run the same machines: a seeded
//! discrete-event simulation in virtual time ([`driver::sim`]) for 100-node clusters, and real threads
//! over crossbeam channels, with real bounded pools whose threads block ([`driver::threads`]), for small
//! ones; [`driver::local`] runs a cluster on the calling thread with instant delivery, for a protocol's
//! bare CPU cost. The [`verifier`] checks a quiescent cluster. A put carries real value bytes
//! ([`Value`], `value_size` of them): the threads and local drivers copy them once per hop
//! between nodes (marshalling), the simulation shares them.
//!
//! Architecture invariants: the machines and the simulation never read the wall clock (a test
//! greps for it); key locks and pool slots are granted, queued, rejected and timed out only by a
//! machine, so both drivers account them identically; the simulation counts a held slot as busy
//! in virtual time, while the threads driver backs every slot with a real pool thread that stays
//! blocked (on a key-lock wait or a sync reply) until the machine releases the slot (the machine's
//! real-slot mode, [`NodeMachine::use_real_slots`], only changes *which thread* runs a command's
//! steps, never what they do); every protocol passes the conformance suite in `tests.rs` under
//! both drivers.
//!
//! Strategies:
//! - [`LockForwardingProtocol`] (`lock-forwarding`): sync backup RPC while holding the key lock.
//! - [`KeyQueueProtocol`] (`key-queue`): unlock, then a de-duplicating key FIFO replicated by a worker.
//! - [`TriangleProtocol`] (`triangle`): per-segment sequence numbers; backups ack the originator.

pub mod driver;
pub mod error;
pub mod message;
pub mod node;
pub mod parts;
pub mod protocol;
pub mod verifier;
pub mod workload;

#[cfg(test)]
mod tests;

pub use error::{ConfigError, VerifyError};
pub use message::{ClientOp, Input, Key, Msg, NodeId, OpError, Outcome, Output, Value, Versioned};
pub use node::{ClusterConfig, NodeBase, NodeMachine, NodeStats};
pub use parts::hashing::ConsistentHash;
pub use parts::pool::RejectionPolicy;
pub use protocol::{
    DeDupQueue, KeyQueueProtocol, LockForwardingProtocol, ProtocolKind, TriangleProtocol,
    WriteProtocol,
};
pub use verifier::{AckLog, VerifyReport};
