//! The core registry: a model of Solr's `SolrCores` and the `CoreContainer.getCore` path over it.
//!
//! Every request resolves its core by name, takes a reference (`SolrCore.open()`: a refcount
//! increment plus logging-context puts) and gives it back when done (`close()`). SOLR-16497 is
//! about where that lookup and open run: inside one global monitor upstream, under a shared read
//! lock in PR #1155, and, in our design, under no lock at all.
//!
//! Principal types: [`CoreRegistry`] (the trait, with each method's contract), [`Core`] (the
//! reference count and exactly-once close), [`CoreHandle`] (an open reference, closed on drop),
//! [`CoreDescriptor`], [`Mdc`] (the per-thread logging context) and [`Container`] (the shared
//! `CoreContainer` parts). The strategies, listed by [`RegistryKind`] (their ids, and
//! [`RegistryKind::build`] to construct one):
//!
//! - [`MutexRegistry`] (`mutex`): upstream Solr, `synchronized (modifyLock)`.
//! - [`RwLockRegistry`] (`rwlock`): apache/solr PR #1155, a read-write lock with a condition, on
//!   parking_lot's `RwLock`.
//! - [`JdkRwLockRegistry`] (`jdk-rwlock`): the same on [`critsec_sync::JdkReadWriteLock`], the
//!   JDK's `ReentrantReadWriteLock` mechanism by mechanism.
//! - [`SnapshotRegistry`] (`snapshot`): ours, lock-free readers over an arc-swap snapshot.
//!
//! Layout: the trait in `core_registry.rs`, its kind enum in `kind.rs`; the state `SolrCores`
//! guards and its
//! `*_locked` steps in `registry_state.rs`; each strategy file says only how it reaches that state
//! (`StateAccess`, with its hot-path lookup), and `state_access.rs` writes every `CoreRegistry`
//! method once on top of it; `tests.rs` is the conformance suite.

#![deny(missing_docs)]

mod container;
mod core_registry;
mod descriptor;
mod error;
mod kind;
mod mdc;
mod mdc_log4j2;
mod mutex_registry;
mod name_map;
mod registry_state;
mod rwlock_registry;
mod snapshot_registry;
mod solr_core;
mod state_access;
mod strategies;
mod transient_cache;

#[cfg(all(test, not(loom)))]
mod tests;

pub use container::{CONTAINER_HANDLERS, Container, LoadHook, RegistryConfig, RequestHandler};
pub use core_registry::{CoreHandle, CoreRegistry};
pub use descriptor::{CloudDescriptor, CoreDescriptor, TRANSIENT_PROPERTY};
pub use error::RegistryError;
pub use kind::RegistryKind;
pub use mdc::{MAX_MDC_PUTS, MDC_KEYS, Mdc, MdcEntries, MdcKind, NODE_KEY};
pub use mutex_registry::MutexRegistry;
pub use rwlock_registry::{JdkRwLockRegistry, RwLockRegistry};
pub use snapshot_registry::SnapshotRegistry;
#[cfg(loom)]
pub use solr_core::RefCountMutant;
pub use solr_core::{CloseTally, Core, CoreId};
