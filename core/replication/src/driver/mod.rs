//! The drivers: what carries out a node machine's outputs, delivers its messages and keeps its
//! time. All three run the same [`NodeMachine`](super::NodeMachine)s, built by
//! [`ProtocolKind`](super::ProtocolKind), and check the quiescent cluster with the
//! [`verifier`](super::verifier).
//!
//! - [`sim`]: a seeded discrete-event simulation in virtual time (network, CPU model, GC pauses),
//!   for 100-node clusters; repeats exactly for a seed and never reads the wall clock.
//! - [`threads`]: real threads, as a JGroups/Infinispan node runs them: a transport thread per node
//!   and real bounded pools whose threads block in key-lock waits and synchronous replies.
//! - [`net`]: one process per node over real sockets; so far its wire format ([`net::wire`]).
//! - [`local`]: every node on the calling thread with instant delivery, for a protocol's bare CPU
//!   cost and fully predictable tests.
//!
//! [`retransmission`] is when the simulation and the threads driver repair a lost message
//! (UNICAST3's retransmission task).

pub mod local;
pub mod net;
mod retransmission;
pub mod sim;
pub mod threads;
