//! Models: apache/solr PR #1155 (SOLR-16497): one read-write lock, `registry.rw_lock`, over all.
//! Upstream: a `ReentrantReadWriteLock` for `modifyLock`; reads `readLock()`, writes `writeLock()`.
//! Hot path: 1 read lock (a CAS on a word all readers share); inside, lookup, 2 increments, MDC.
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

use super::container::{self, Container, RegistryConfig, StateAccess};
use super::core::{Core, CoreId};
use super::core_registry::{CoreHandle, CoreRegistry, RegistryKind};
use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::registry_state::RegistryState;
use crate::kind::StrategyKind;
use crate::sync::primitive::Arc;
use crate::sync::{Condvar, Mutex, RwLock};

/// PR #1155: readers share `registry.rw_lock`; writers and waiters take it exclusively.
pub struct RwLockRegistry {
    container: Container,
    /// The PR's `READ_WRITE_LOCK`.
    state: RwLock<RegistryState>,
    /// The epoch of the write lock's condition (see the module doc).
    signal: Mutex<u64>,
    /// Woken when `signal` changes.
    changed: Condvar,
}

impl RwLockRegistry {
    /// An empty registry.
    pub fn new(config: RegistryConfig) -> Self {
        RwLockRegistry {
            container: Container::new(config),
            state: RwLock::new("registry.rw_lock", RegistryState::default()),
            signal: Mutex::new("registry.rw_signal", 0),
            changed: Condvar::new(),
        }
    }

    /// `getCoreFromAnyList(name, incRefCount = true, id)`: lookup and `open()` under the read lock,
    /// so many readers open cores at once.
    /// `None` when no loaded core has that name (and id).
    fn open_loaded(
        &self,
        name: &str,
        id: Option<CoreId>,
    ) -> Result<Option<CoreHandle>, RegistryError> {
        let state = self.state.read();
        match state.maps.lookup(name, id) {
            Some(core) => {
                core.open()?;
                Ok(Some(CoreHandle::from_open(Arc::clone(core))))
            }
            None => Ok(None),
        }
    }
}

impl StateAccess for RwLockRegistry {
    fn container(&self) -> &Container {
        &self.container
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
            if state.shutdown {
                return Err(RegistryError::ShutDown {
                    action,
                    name: name.to_string(),
                });
            }
            if !state.must_wait_locked(name) {
                return Ok(state.add_pending_core_op_locked(name));
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

impl CoreRegistry for RwLockRegistry {
    fn id(&self) -> &'static str {
        RegistryKind::RwLock.id()
    }

    fn container(&self) -> &Container {
        &self.container
    }

    fn get_core(&self, name: &str) -> Result<Option<CoreHandle>, RegistryError> {
        match self.open_loaded(name, None)? {
            Some(handle) => Ok(Some(handle)),
            None => container::load_core(self, name),
        }
    }

    fn get_core_with_id(
        &self,
        name: &str,
        id: CoreId,
    ) -> Result<Option<CoreHandle>, RegistryError> {
        self.open_loaded(name, Some(id))
    }

    fn get_core_descriptor(&self, name: &str) -> Option<Arc<CoreDescriptor>> {
        self.state.read().maps.descriptor(name)
    }

    fn get_loaded_core_without_increment(&self, name: &str) -> Option<Arc<Core>> {
        self.state.read().maps.loaded_core(name)
    }

    fn add_core_descriptor(&self, descriptor: CoreDescriptor) -> Result<(), RegistryError> {
        container::add_core_descriptor(self, descriptor)
    }

    fn put_core(&self, core: Arc<Core>) -> Result<Option<CoreHandle>, RegistryError> {
        container::put_core(self, core)
    }

    fn remove(&self, name: &str) -> Option<CoreHandle> {
        container::remove(self, name)
    }

    fn swap(&self, a: &str, b: &str) -> Result<(), RegistryError> {
        container::swap(self, a, b)
    }

    fn unload(&self, name: &str) -> Result<(), RegistryError> {
        container::unload(self, name)
    }

    fn reload(&self, name: &str) -> Result<CoreId, RegistryError> {
        container::reload(self, name)
    }

    fn loaded_names(&self) -> Vec<String> {
        self.state.read().maps.loaded_names()
    }

    fn all_names(&self) -> Vec<String> {
        self.state.read().maps.all_names()
    }

    fn loaded_cores(&self) -> Vec<(String, CoreId)> {
        self.state.read().maps.loaded_cores()
    }

    fn num_loaded(&self) -> usize {
        self.state.read().maps.num_loaded()
    }

    fn num_unloaded(&self) -> usize {
        self.state.read().maps.num_unloaded()
    }

    fn num_all(&self) -> usize {
        self.state.read().maps.num_all()
    }

    fn is_loaded(&self, name: &str) -> bool {
        self.state.read().maps.cores.contains_key(name)
    }

    fn is_core_loading(&self, name: &str) -> bool {
        self.state.read().currently_loading.contains(name)
    }

    fn has_pending_core_ops(&self, name: &str) -> bool {
        self.state.read().pending_core_ops.contains(name)
    }

    fn shutdown(&self) {
        container::shutdown(self)
    }
}
