//! Models: apache/solr PR #1155 (SOLR-16497): one read-write lock over all registry state.
//! Upstream: a `ReentrantReadWriteLock` for `modifyLock`; reads `readLock()`, writes `writeLock()`.
//! Hot path: 1 read lock; inside, lookup, 2 increments, MDC.
//!
//! Two strategies share this file, differing only in the lock:
//! - [`JdkRwLockRegistry`] (`jdk-rwlock`, lock `registry.jdk_rw_lock`): the PR as it ran, on
//!   [`JdkReadWriteLock`], the JDK's read path (CAS retry loop, shared hold-count fields,
//!   thread-local hold counters) on acquire and release.
//! - [`RwLockRegistry`] (`rwlock`, lock `registry.rw_lock`): the same design on parking_lot's
//!   `RwLock` (one CAS to acquire, one to release), i.e. what the PR would cost with a leaner lock.
//!
//! # Waiting on the write lock
//!
//! Java's `writeLock().newCondition()` releases the write lock while waiting. A Rust condition
//! variable pairs only with a mutex, so the condition is a mutex-guarded epoch counter
//! (`registry.rw_signal`) plus a condvar, used under one rule: *bump the epoch only while holding
//! the write lock, and read it while still holding the write lock.* A waiter that finds its
//! predicate false locks the epoch mutex, reads the epoch, releases the write lock, and sleeps
//! until the epoch changes; then it re-takes the write lock and re-checks. A notifier changes the
//! state under the write lock, then bumps the epoch under the epoch mutex and notifies.
//! No wake-up is lost: a change made before the waiter read the epoch was visible when it checked
//! its predicate (both under the write lock), and a change made after can only bump the epoch
//! while the waiter sleeps, because the waiter holds the epoch mutex from reading it until the
//! condvar releases it. No deadlock: both sides take the write lock before the epoch mutex, and
//! the waiter drops the epoch mutex before it re-takes the write lock.
//!
//! This file says only how the strategy reaches its state ([`StateAccess`]); the registry itself
//! ([`CoreRegistry`](super::CoreRegistry)) is the shared implementation in `state_access.rs`.

use super::container::{Container, RegistryConfig};
use super::core::{Core, CoreId};
use super::core_registry::RegistryKind;
use super::error::RegistryError;
use super::registry_state::{Claim, RegistryState};
use super::state_access::{Lookup, StateAccess};
use crate::sync::primitive::Arc;
use crate::sync::{Condvar, JdkReadWriteLock, Mutex, RwLock};

/// One read-write-lock registry type per lock (see the module doc).
macro_rules! read_write_registry {
    ($(#[$doc:meta])* $name:ident, $lock:ident, $kind:expr, $lock_name:literal) => {
    $(#[$doc])*
    /// PR #1155: readers share the lock; writers and waiters take it exclusively.
    ///
    /// Its [`CoreRegistry`](super::CoreRegistry) methods are the ones every strategy shares; this type
    /// supplies only its state and the way to reach it.
    pub struct $name {
        container: Container,
        /// The PR's `READ_WRITE_LOCK`.
        state: $lock<RegistryState>,
        /// The epoch of the write lock's condition (see the module doc).
        signal: Mutex<u64>,
        /// Woken when `signal` changes.
        changed: Condvar,
    }

    impl $name {
        /// An empty registry.
        pub fn new(config: RegistryConfig) -> Self {
            $name {
                container: Container::new(config),
                state: $lock::new($lock_name, RegistryState::default()),
                signal: Mutex::new("registry.rw_signal", 0),
                changed: Condvar::new(),
            }
        }
    }

    impl StateAccess for $name {
        const KIND: RegistryKind = $kind;

        fn container(&self) -> &Container {
            &self.container
        }

        /// `getCoreFromAnyList(name, incRefCount = true, id)`: lookup and `open()` under the read
        /// lock, so many readers open cores at once.
        fn open_loaded(&self, name: &str, id: Option<CoreId>) -> Result<Lookup, RegistryError> {
            let state = self.state.read();
            state.maps.open_locked(name, id)
        }

        fn read<R>(&self, f: impl FnOnce(&RegistryState) -> R) -> R {
            f(&self.state.read())
        }

        fn write<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
            f(&mut self.state.write())
        }

        fn write_and_notify<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
            let mut state = self.state.write();
            let r = f(&mut state);
            // The epoch moves while the write lock is still held (the rule in the module doc).
            *self.signal.lock() += 1;
            drop(state);
            self.changed.notify_all();
            r
        }

        fn wait_add_pending_core_ops(
            &self,
            name: &str,
            action: &'static str,
        ) -> Result<Option<Arc<Core>>, RegistryError> {
            loop {
                let mut state = self.state.write();
                if let Claim::Claimed(core) = state.claim_locked(name, action)? {
                    return Ok(core);
                }
                // Read the epoch before giving up the write lock, then sleep until it moves.
                let mut epoch = self.signal.lock();
                let seen = *epoch;
                drop(state);
                while *epoch == seen {
                    self.changed.wait(&mut epoch);
                }
            }
        }
    }
    };
}

read_write_registry!(
    /// PR #1155 on parking_lot's `RwLock` (`registry.rw_lock`).
    RwLockRegistry,
    RwLock,
    RegistryKind::RwLock,
    "registry.rw_lock"
);

read_write_registry!(
    /// PR #1155 on the JDK's `ReentrantReadWriteLock` model (`registry.jdk_rw_lock`).
    JdkRwLockRegistry,
    JdkReadWriteLock,
    RegistryKind::JdkRwLock,
    "registry.jdk_rw_lock"
);
