//! Infinispan DIST-SYNC non-transactional writes: how a distributed cache keeps a key's primary and
//! backup owners in agreement, and what holding a key lock across a network round trip costs.
//!
//! Models `NonTxDistributionInterceptor` (Infinispan <= 8), Bela Ban's 2014 key-queue proposal
//! and `TriangleDistributionInterceptor` + `TriangleOrderManager` (Infinispan 9, ISPN-6919). A
//! put carries real value bytes ([`Value`], `value_size` of them): the threads and local drivers
//! copy them once per hop between nodes (marshalling), the simulation shares them.
//!
//! Laid out in two layers. **The model**, at the bottom, is every file outside `driver/`: it
//! imports no driver, reads no clock and does no I/O (time comes in with each input, effects go
//! out as [`Output`]s), so any driver can run it and a test can step it by hand:
//! - `message` (the protocols' vocabulary: [`Msg`], Infinispan's replicable commands such as
//!   `PutKeyValueCommand` and `ClusteredGetCommand` as JGroups carries them; a machine's
//!   [`Input`]s and [`Output`]s) and `error` (bad configurations, failed verifications);
//! - `components`: what every node is built from, Infinispan's components: consistent hashing
//!   (`ConsistentHash`), the data container (`DataContainer`), key locks with FIFO waiters
//!   (`LockManager`), the remote-command pool and JGroups' OOB pool, whose slots a command holds
//!   while it waits, and deadlines;
//! - `node`: one cluster member (a cache manager's interceptor stack and delivery) as a sans-IO
//!   state machine ([`NodeMachine`]): its settings ([`ClusterConfig`]), the protocol-independent
//!   half ([`NodeBase`]: originator side, primary path, the held inbound path of the `block`
//!   policy) and the event loop that dispatches each input to it or to a protocol;
//! - `protocol`: the trait the protocols implement ([`WriteProtocol`]), the kind enum that names
//!   them and builds their machines ([`ProtocolKind`]), the get plans ([`GetPlanChoice`]), and
//!   one module per protocol;
//! - `verifier` (checks a quiescent cluster), `history` (checks every completed get and put of a
//!   run against the puts of its key acknowledged before it started: the read guarantee) and
//!   [`workload`] (IspnPerfTest's requesters).
//!
//! **The drivers**, above it, run the machines, each wrapping the model's errors in its own:
//! [`sim`], a seeded discrete-event simulation in virtual time for 100-node clusters (a run its
//! drain cap cuts is [`sim::SimError::DrainCut`]); [`threads`], real threads where a JGroups
//! node has them (the transport's receiver, Infinispan's remote-command executor, JGroups' OOB
//! pool) whose threads block, for small clusters, their messages over channels or loopback TCP;
//! [`net`], one process per node over real sockets (JGroups' TCP, one JVM per node as
//! IspnPerfTest runs them), on the threads driver's pools; [`local`],
//! every node on the calling thread with instant delivery, for a protocol's bare CPU cost. The
//! simulation and the threads driver repair a lost or rejected message alike (UNICAST3's
//! retransmission, `driver/retransmission.rs`).
//!
//! The crate's surface is the list below: the model's types at the root, [`workload`], and one
//! module per driver, each its own chosen list.
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
mod driver;
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
pub use driver::{local, net, sim, threads};
pub use error::{ConfigError, VerifyError};
pub use history::{HistoryCheck, TimedOp, check_timeline};
pub use message::{ClientOp, Input, Key, Msg, NodeId, OpError, Outcome, Output, Value, Versioned};
pub use node::{ClusterConfig, NodeBase, NodeMachine, NodeStats};
pub use protocol::{
    DeDupQueue, GetPlan, GetPlanChoice, KeyQueueProtocol, LockForwardingProtocol, ProtocolKind,
    TriangleProtocol, WriteProtocol,
};
pub use verifier::{AckLog, VerifyReport};
