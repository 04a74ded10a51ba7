//! The net driver: nodes over real sockets, one process per node.
//!
//! - `wire.rs`: the bytes two nodes exchange over TCP (JGroups' TCP stack frames marshalled
//!   messages the same way), with the checks a reader makes before it trusts them;
//! - `sockets.rs`: a TCP connection per ordered pair of nodes with a reader thread each, opened in
//!   two phases (bind, then connect) so that a cluster split over processes can open them; the
//!   threads driver uses them in place of its channels, all nodes in one process
//!   (`ThreadsConfig::sockets`) or one process's part of a split cluster
//!   ([`ThreadCluster::start_split`](crate::driver::threads::ThreadCluster::start_split));
//! - `node.rs`: a node process, which hosts one node on the threads driver's transport and pools
//!   with its requesters;
//! - `coordinator.rs`: the process that gathers the node processes, runs them, decides quiescence
//!   and verifies the cluster; `control.rs` is what the two say to each other.
//!
//! - `netns.rs`: a network namespace per node process on one machine, linked by veth pairs to a
//!   bridge.
//!
//! What the driver still lacks (faults of processes and links) is listed in ARCHITECTURE.md.
//! Its surface is the list below: the coordinator's side (what a trial drives), a node
//! process's main ([`serve`]), the namespaces, and of the wire what a fuzz target reads with.

mod control;
mod coordinator;
mod netns;
mod node;
pub(super) mod sockets;
pub(super) mod wire;

pub use control::RunFigures;
pub use coordinator::{Coordinator, NetCluster, NetReport, Started, dies_with_its_parent};
pub use netns::{Namespaces, sweep_stale};
pub use node::{NodeSettings, serve};
pub use wire::{FrameReader, Secret, WireError, encode};

use crate::driver::threads::ThreadsConfig;
use crate::message::NodeId;
use crate::protocol::ProtocolKind;
use crate::workload::WorkloadConfig;

/// The digest of a cluster's settings that every node's hello carries
/// ([`wire::settings_digest`]): everything that decides what a node does, so that a node of
/// another workload cannot join a run and be scored as this one's: the protocol, the cluster's
/// settings, the links', the seed, and what its requesters do.
fn cluster_digest(protocol: ProtocolKind, cfg: &ThreadsConfig, workload: &WorkloadConfig) -> u64 {
    // Every field of the links but `sockets`, which a node process implies.
    let links = (
        cfg.latency_us,
        cfg.jitter_us,
        cfg.xmit_interval_us,
        cfg.drop_per_mille,
    );
    wire::settings_digest(&(protocol, &cfg.cluster, links, cfg.seed, workload))
}

/// Why a net run failed; an error that concerns one node names it.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A connection's bytes or hello (see [`wire::WireError`]).
    #[error(transparent)]
    Wire(#[from] wire::WireError),
    /// A node failed, or said it did.
    #[error("node {node}: {what}")]
    Node {
        /// The node.
        node: NodeId,
        /// What happened.
        what: String,
    },
    /// Something did not happen in time.
    #[error("waited in vain for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
    },
    /// An address no connection could be opened to.
    #[error("cannot reach {what}: {error}")]
    Unreachable {
        /// Whom.
        what: String,
        /// The last attempt's error.
        error: String,
    },
    /// A node process's own report of its failure, naming it.
    #[error("{0}")]
    Failed(String),
    /// A frame out of turn on a control connection.
    #[error("control protocol: {0}")]
    Protocol(String),
    /// The cluster's state failed verification.
    #[error("verification failed: {0}")]
    Verify(String),
    /// Network namespaces cannot be made here.
    #[error("network namespaces: {0}")]
    Namespaces(String),
}

impl NetError {
    fn protocol(what: String) -> Self {
        NetError::Protocol(what)
    }
}

impl From<std::io::Error> for NetError {
    fn from(e: std::io::Error) -> Self {
        NetError::Wire(wire::WireError::Io(e))
    }
}
