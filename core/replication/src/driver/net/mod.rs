//! The net driver: nodes over real sockets (issue #31, being built).
//!
//! What exists: [`wire`], the bytes two nodes exchange over TCP (JGroups' TCP stack frames
//! marshalled messages the same way), with the checks a reader makes before it trusts them; and
//! [`sockets`], a TCP connection per ordered pair of nodes with a reader thread each, opened in
//! two phases (bind, then connect) so that a cluster split over processes can open them too; the
//! threads driver uses them, all nodes in one process, in place of its channels when asked
//! (`ThreadsConfig::sockets`). What the
//! driver still lacks (a process per node, namespaces, a cluster file) is listed in
//! ARCHITECTURE.md.

pub mod sockets;
pub mod wire;
