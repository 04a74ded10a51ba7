//! Models: ours, lock-free readers: read-copy-update over an immutable snapshot of loaded cores.
//! Upstream: none (the control SOLR-16497 lacked); writers follow `SolrCores` under one mutex.
//! Hot path: no lock; a per-thread cached snapshot (1 load), lookup, a CAS + `Arc` increment, MDC.
//!
//! Writers (put, remove, swap, unload, reload, the load path, shutdown) serialise on
//! `registry.writer_lock`, change the authoritative [`RegistryState`] and, if the loaded cores or
//! descriptors changed, publish a fresh copy of them before releasing the lock. Waits use a condvar
//! on that same lock, exactly as in the mutex strategy.
//!
//! # Why a reader never gets a closed core
//!
//! The race: a reader loads snapshot S holding core C; a writer unregisters C, publishes S' and
//! releases the registry's reference; the last handle drops; C closes; the reader now opens C.
//! With Solr's unconditional `open()` the count would go 0 → 1 and the reader would use a closed
//! core. Here readers call [`Core::try_open`], which increments only a count above 0, and retry
//! from a fresh snapshot otherwise.
//!
//! - *Never a closed core:* `try_open` succeeds only by a compare-exchange from a count `n >= 1`
//!   to `n + 1`. A count never rises from 0 (the table in [`Core`]), so the real close, which runs
//!   only on the decrement from 1 to 0, can happen only after our matching close.
//! - *The retry makes progress:* the registry releases its reference only after publishing the
//!   snapshot without C, under the writer lock (the writer's program order: store S', then the
//!   Release decrement). A reader that sees C's count at 0 read it with Acquire from a decrement in
//!   the release sequence headed by the registry's Release decrement (every later change to the
//!   count is a read-modify-write, which continues the sequence), so the store of S' happens
//!   before the reader's next load, which therefore returns S' or later: C
//!   is gone from it, or replaced. Each retry thus follows a writer's change; readers are
//!   lock-free, not wait-free, and only a writer can make them retry.
//!
//! loom checks this in `core/tests/loom_registry.rs`.

use super::container::{self, Container, RegistryConfig, StateAccess};
use super::core::{Core, CoreId};
use super::core_registry::{CoreHandle, CoreRegistry, RegistryKind};
use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::registry_state::{Maps, RegistryState};
use crate::kind::StrategyKind;
use crate::sync::primitive::Arc;
use crate::sync::{Condvar, Mutex, SnapshotCell};

/// Ours: lock-free readers over a published snapshot; writers serialised by a mutex.
pub struct SnapshotRegistry {
    container: Container,
    /// The authoritative state; only writers and waiters take this lock.
    writer: Mutex<RegistryState>,
    /// Woken by writers that end a pending operation or close, or shut down.
    changed: Condvar,
    /// The loaded cores and descriptors as of the last write that changed them.
    view: SnapshotCell<Maps>,
}

impl SnapshotRegistry {
    /// An empty registry.
    pub fn new(config: RegistryConfig) -> Self {
        SnapshotRegistry {
            container: Container::new(config),
            writer: Mutex::new("registry.writer_lock", RegistryState::default()),
            changed: Condvar::new(),
            view: SnapshotCell::new(Arc::new(Maps::default())),
        }
    }

    /// The lock-free `getCoreFromAnyList(name, true, id)`: `Ok` with an open handle, or `Err`
    /// saying whether the snapshot that missed had `name` registered (then a load may be due).
    fn open_loaded(&self, name: &str, id: Option<CoreId>) -> Result<CoreHandle, bool> {
        loop {
            let attempt = self.view.read(|view| match view.lookup(name, id) {
                None => Some(Err(view.resident_descriptors.contains_key(name))),
                Some(core) => core
                    .try_open()
                    .then(|| Ok(CoreHandle::from_open(Arc::clone(core)))),
            });
            if let Some(result) = attempt {
                return result;
            }
            // The core closed after we read the snapshot: it was unpublished before it closed,
            // so a fresh read no longer holds it (module doc).
        }
    }

    /// Runs `f` under the writer lock and publishes the maps if `f` changed them.
    fn write_locked<R>(
        &self,
        state: &mut RegistryState,
        f: impl FnOnce(&mut RegistryState) -> R,
    ) -> R {
        let before = state.version;
        let r = f(state);
        if state.version != before {
            // Published while the writer lock is held, so snapshots appear in write order.
            self.view.store(Arc::new(state.maps.clone()));
        }
        r
    }
}

impl StateAccess for SnapshotRegistry {
    fn container(&self) -> &Container {
        &self.container
    }

    fn read<R>(&self, f: impl FnOnce(&RegistryState) -> R) -> R {
        f(&self.writer.lock())
    }

    fn write<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
        self.write_locked(&mut self.writer.lock(), f)
    }

    fn write_and_notify<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
        let r = self.write_locked(&mut self.writer.lock(), f);
        self.changed.notify_all();
        r
    }

    fn wait_add_pending_core_ops(
        &self,
        name: &str,
        action: &'static str,
    ) -> Result<Option<Arc<Core>>, RegistryError> {
        let mut state = self.writer.lock();
        loop {
            if state.shutdown {
                return Err(RegistryError::ShutDown {
                    action,
                    name: name.to_string(),
                });
            }
            if !state.must_wait_locked(name) {
                return Ok(state.add_pending_core_op_locked(name));
            }
            self.changed.wait(&mut state);
        }
    }
}

impl CoreRegistry for SnapshotRegistry {
    fn id(&self) -> &'static str {
        RegistryKind::Snapshot.id()
    }

    fn container(&self) -> &Container {
        &self.container
    }

    fn get_core(&self, name: &str) -> Result<Option<CoreHandle>, RegistryError> {
        match self.open_loaded(name, None) {
            Ok(handle) => Ok(Some(handle)),
            // Unknown in the snapshot: answer the miss without the writer lock. A registration
            // racing this call is ordered after it, as it would be had we locked first.
            Err(false) => Ok(None),
            Err(true) => container::load_core(self, name),
        }
    }

    fn get_core_with_id(
        &self,
        name: &str,
        id: CoreId,
    ) -> Result<Option<CoreHandle>, RegistryError> {
        Ok(self.open_loaded(name, Some(id)).ok())
    }

    fn get_core_descriptor(&self, name: &str) -> Option<Arc<CoreDescriptor>> {
        self.view.read(|view| view.descriptor(name))
    }

    fn get_loaded_core_without_increment(&self, name: &str) -> Option<Arc<Core>> {
        self.view.load().loaded_core(name)
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
        self.view.load().loaded_names()
    }

    fn all_names(&self) -> Vec<String> {
        self.view.load().all_names()
    }

    fn loaded_cores(&self) -> Vec<(String, CoreId)> {
        self.view.load().loaded_cores()
    }

    fn num_loaded(&self) -> usize {
        self.view.load().num_loaded()
    }

    fn num_unloaded(&self) -> usize {
        self.view.load().num_unloaded()
    }

    fn num_all(&self) -> usize {
        self.view.load().num_all()
    }

    fn is_loaded(&self, name: &str) -> bool {
        self.view.read(|view| view.cores.contains_key(name))
    }

    fn is_core_loading(&self, name: &str) -> bool {
        self.writer.lock().currently_loading.contains(name)
    }

    fn has_pending_core_ops(&self, name: &str) -> bool {
        self.writer.lock().pending_core_ops.contains(name)
    }

    fn shutdown(&self) {
        container::shutdown(self)
    }
}
