//! The write protocols: how a DIST-SYNC cache keeps a key's owners in agreement, and what each
//! holds its key lock across.
//!
//! [`write_protocol`] holds the trait every protocol implements (the protocol-specific half of a
//! node, with the contract all three keep); [`kind`] names them, and `build.rs` builds their node
//! machines; [`get_plan`] is how a get picks the owners it asks. One file or folder per protocol:
//! - [`lock_forwarding`]: [`LockForwardingProtocol`] (`lock-forwarding`), Infinispan <= 8.
//! - [`key_queue`]: [`KeyQueueProtocol`] (`key-queue`) and its [`DeDupQueue`], Bela Ban's 2014
//!   proposal.
//! - [`triangle`]: [`TriangleProtocol`] (`triangle`) and its per-segment ordering
//!   ([`triangle::order`]), Infinispan 9.

mod build;
pub mod get_plan;
pub mod key_queue;
pub mod kind;
pub mod lock_forwarding;
pub mod triangle;
pub mod write_protocol;

pub use get_plan::{GetPlan, GetPlanChoice};
pub use key_queue::{DeDupQueue, KeyQueueProtocol};
pub use kind::ProtocolKind;
pub use lock_forwarding::LockForwardingProtocol;
pub use triangle::TriangleProtocol;
pub use write_protocol::WriteProtocol;
