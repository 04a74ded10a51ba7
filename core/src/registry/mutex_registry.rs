//! Models: Solr as shipped, one monitor (`registry.modify_lock`) over all registry state.
//! Upstream: `SolrCores.modifyLock` (`synchronized`) in `getCoreFromAnyList` + `SolrCore.open()`.
//! Hot path: 1 mutex; inside it a hash lookup, 2 atomic increments and the MDC puts; no allocation.

use super::container::{self, Container, RegistryConfig, StateAccess};
use super::core::{Core, CoreId};
use super::core_registry::{CoreHandle, CoreRegistry, RegistryKind};
use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::registry_state::RegistryState;
use crate::kind::StrategyKind;
use crate::sync::primitive::Arc;
use crate::sync::{Condvar, Mutex};

/// Upstream Solr: every read, write and wait takes `registry.modify_lock`.
pub struct MutexRegistry {
    container: Container,
    /// Solr's `modifyLock`.
    state: Mutex<RegistryState>,
    /// Solr's `modifyLock.wait()/notifyAll()`.
    changed: Condvar,
}

impl MutexRegistry {
    /// An empty registry.
    pub fn new(config: RegistryConfig) -> Self {
        MutexRegistry {
            container: Container::new(config),
            state: Mutex::new("registry.modify_lock", RegistryState::default()),
            changed: Condvar::new(),
        }
    }

    /// `getCoreFromAnyList(name, incRefCount = true, id)`: lookup and `open()` under the lock.
    /// `None` when no loaded core has that name (and id).
    fn open_loaded(
        &self,
        name: &str,
        id: Option<CoreId>,
    ) -> Result<Option<CoreHandle>, RegistryError> {
        let state = self.state.lock();
        match state.maps.lookup(name, id) {
            Some(core) => {
                core.open()?;
                Ok(Some(CoreHandle::from_open(Arc::clone(core))))
            }
            None => Ok(None),
        }
    }
}

impl StateAccess for MutexRegistry {
    fn container(&self) -> &Container {
        &self.container
    }

    fn read<R>(&self, f: impl FnOnce(&RegistryState) -> R) -> R {
        f(&self.state.lock())
    }

    fn write<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
        f(&mut self.state.lock())
    }

    fn write_and_notify<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
        let r = f(&mut self.state.lock());
        self.changed.notify_all();
        r
    }

    fn wait_add_pending_core_ops(
        &self,
        name: &str,
        action: &'static str,
    ) -> Result<Option<Arc<Core>>, RegistryError> {
        let mut state = self.state.lock();
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

impl CoreRegistry for MutexRegistry {
    fn id(&self) -> &'static str {
        RegistryKind::Mutex.id()
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
        self.state.lock().maps.descriptor(name)
    }

    fn get_loaded_core_without_increment(&self, name: &str) -> Option<Arc<Core>> {
        self.state.lock().maps.loaded_core(name)
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
        self.state.lock().maps.loaded_names()
    }

    fn all_names(&self) -> Vec<String> {
        self.state.lock().maps.all_names()
    }

    fn loaded_cores(&self) -> Vec<(String, CoreId)> {
        self.state.lock().maps.loaded_cores()
    }

    fn num_loaded(&self) -> usize {
        self.state.lock().maps.num_loaded()
    }

    fn num_unloaded(&self) -> usize {
        self.state.lock().maps.num_unloaded()
    }

    fn num_all(&self) -> usize {
        self.state.lock().maps.num_all()
    }

    fn is_loaded(&self, name: &str) -> bool {
        self.state.lock().maps.cores.contains_key(name)
    }

    fn is_core_loading(&self, name: &str) -> bool {
        self.state.lock().currently_loading.contains(name)
    }

    fn has_pending_core_ops(&self, name: &str) -> bool {
        self.state.lock().pending_core_ops.contains(name)
    }

    fn shutdown(&self) {
        container::shutdown(self)
    }
}
