//! The net driver: one OS process per node, over real sockets (issue #31, being built).
//!
//! What exists: [`wire`], the bytes two node processes exchange over TCP (JGroups' TCP stack
//! frames marshalled messages the same way), with the checks a reader makes before it trusts
//! them. What the driver still lacks is listed in ARCHITECTURE.md (*Replication drivers*).

pub mod wire;
