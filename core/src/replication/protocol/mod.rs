//! The write protocols: how a DIST-SYNC cache keeps a key's owners in agreement.

pub mod key_queue;
pub mod kind;
pub mod lock_forwarding;
pub mod triangle;
pub mod write_protocol;

pub use key_queue::{DeDupQueue, KeyQueueProtocol};
pub use kind::{NodeMachine, NodeStats, ProtocolKind, WriteProtocol, build_cluster};
pub use lock_forwarding::LockForwardingProtocol;
pub use triangle::TriangleProtocol;
