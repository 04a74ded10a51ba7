//! The components every node is built from, whatever its protocol (Infinispan's component
//! registry holds their counterparts): consistent hashing, the data container, per-key locks,
//! bounded pools, deadlines, and the small containers they use.
//!
//! Each is a plain data structure with no clock and no I/O; the node machine
//! ([`node`](super::node)) owns one of each and decides when to use it.
//!
//! - [`hashing`]: `ConsistentHash` (key -> segment -> owners), as Infinispan's `ConsistentHash`.
//! - [`data_container`]: a node's entries with their versions (`DataContainer`).
//! - [`key_lock`]: the primary's per-key lock table with FIFO waiters (`LockManager`).
//! - [`pool`]: the remote-command pool and the JGroups OOB pool behind it, with rejection policies.
//! - [`timeouts`]: a node's deadlines and its one wake-up timer (`TimeoutService`-like).
//! - [`collections`]: a generation-checked slab and an integer-key hash map.

pub mod collections;
pub mod data_container;
pub mod hashing;
pub mod key_lock;
pub mod pool;
pub mod timeouts;
