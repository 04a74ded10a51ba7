//! The drivers: what carries out a node machine's outputs, delivers its messages and keeps its
//! time. They sit on the model (every module outside this one), which imports none of them: all
//! run the same [`NodeMachine`](crate::NodeMachine)s, built by
//! [`ProtocolKind`](crate::ProtocolKind), and check the quiescent cluster with the model's
//! verifier. Each wraps the model's errors in its own ([`sim::SimError`], [`threads::ThreadsError`],
//! [`net::NetError`]), and each module's root is its chosen public list.
//!
//! - [`sim`]: a seeded discrete-event simulation in virtual time (network, CPU model, GC pauses),
//!   for 100-node clusters; repeats exactly for a seed and never reads the wall clock.
//! - [`threads`]: real threads, as a JGroups/Infinispan node runs them: a transport thread per node
//!   and real bounded pools whose threads block in key-lock waits and synchronous replies.
//! - [`net`]: one process per node over real sockets, on the threads driver's transport and
//!   pools, with a coordinator process that runs and verifies them.
//! - [`local`]: every node on the calling thread with instant delivery, for a protocol's bare CPU
//!   cost and fully predictable tests.
//!
//! `retransmission` is when the simulation and the threads driver repair a lost message
//! (UNICAST3's retransmission task). The threads and net drivers read the wall clock; the
//! simulation and the local driver never do.

pub mod local;
pub mod net;
mod retransmission;
pub mod sim;
pub mod threads;
