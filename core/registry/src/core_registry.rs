//! The `CoreRegistry` trait: `SolrCores` plus the `CoreContainer` methods that use it.
//!
//! Four strategies implement it, differing only in how they make readers and writers agree. Each
//! states just that (the crate-private `StateAccess`, one file per strategy); the methods of this
//! trait are written once on top of it, in `state_access.rs`.
//!
//! - [`MutexRegistry`](super::MutexRegistry) (`mutex`): upstream Solr, one monitor over
//!   everything, `open()` and its logging-context puts inside it. Pick it to reproduce Solr.
//! - [`RwLockRegistry`](super::RwLockRegistry) (`rwlock`): apache/solr PR #1155, readers share a
//!   read-write lock (parking_lot's), writers and waiters take the write lock.
//! - [`JdkRwLockRegistry`](super::JdkRwLockRegistry) (`jdk-rwlock`): the same on a model of the
//!   JDK's `ReentrantReadWriteLock`. Pick it to reproduce the PR as it ran.
//! - [`SnapshotRegistry`](super::SnapshotRegistry) (`snapshot`): ours, readers take no lock at
//!   all; writers are serialised and publish an immutable snapshot. Pick it for speed.
//!
//! What callers may rely on, whatever the strategy:
//! - A handle's core is open (reference count of at least 1 counting the handle) until the handle
//!   drops; its real close runs exactly once, after the last reference is gone.
//! - Once a write method returns, every later call on any thread sees its effect. A read that runs
//!   concurrently with a write sees the state wholly before or wholly after it (e.g. `swap`), but a
//!   sequence of reads may span writes: two `get_core` calls are not one atomic view.
//! - Names are listed in registration order; a `swap` keeps both names' positions.

use super::container::{Container, RequestHandler};
use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::solr_core::{Core, CoreId};
use critsec_sync::primitive::Arc;
use std::fmt;
use std::ops::Deref;

/// An open reference to a core; closes it (Solr's `SolrCore.close()`) on drop.
pub struct CoreHandle {
    core: Arc<Core>,
}

impl CoreHandle {
    /// Wraps a reference the caller has already taken (by `open`, `try_open`, or the registry's
    /// own reference handed back by `remove`).
    pub(crate) fn from_open(core: Arc<Core>) -> Self {
        CoreHandle { core }
    }

    /// The core itself, e.g. to observe its count or closes after the handle is gone.
    pub fn core(&self) -> &Arc<Core> {
        &self.core
    }
}

impl Deref for CoreHandle {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

impl Drop for CoreHandle {
    fn drop(&mut self) {
        // A close below zero cannot be returned from `drop`; the core counts it
        // (`Core::over_closes`), which every test and benchmark verification checks.
        let _ = self.core.close();
    }
}

impl fmt::Debug for CoreHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CoreHandle").field(&*self.core).finish()
    }
}

/// The core registry: lookups with reference counting, registration, and the load path.
pub trait CoreRegistry: Send + Sync {
    /// The strategy's id, its [`RegistryKind`](crate::RegistryKind)'s (the file stem in kebab-case:
    /// `mutex`, `rwlock`,
    /// `snapshot`).
    fn id(&self) -> &'static str;

    /// Configuration, request handlers and the created-cores counter.
    fn container(&self) -> &Container;

    /// `CoreContainer.getCore(name)`: an open handle to the loaded core `name`. A registered but
    /// unloaded core is loaded first, once, however many callers ask at the same time (the others
    /// wait and then share it). `Ok(None)` if no such core is registered; an error if the container
    /// shuts down while the caller waits to load.
    fn get_core(&self, name: &str) -> Result<Option<CoreHandle>, RegistryError>;

    /// `CoreContainer.getCore(name, id)`: like [`CoreRegistry::get_core`] but only if the loaded
    /// core has this id (a reload makes a new id). Never loads: an id names one core instance,
    /// and a core that is not loaded cannot be it.
    fn get_core_with_id(&self, name: &str, id: CoreId)
    -> Result<Option<CoreHandle>, RegistryError>;

    /// `SolrCores.getCoreDescriptor`: the registered descriptor of `name`, loaded or not.
    fn get_core_descriptor(&self, name: &str) -> Option<Arc<CoreDescriptor>>;

    /// `CoreContainer.getRequestHandler(path)`: takes no registry lock in any strategy, as in Solr.
    fn get_request_handler(&self, path: &str) -> Option<&'static RequestHandler> {
        self.container().request_handler(path)
    }

    /// `SolrCores.getLoadedCoreWithoutIncrement`: the core without taking a reference. For
    /// observation only; the core may be closed at any time after this returns.
    fn get_loaded_core_without_increment(&self, name: &str) -> Option<Arc<Core>>;

    /// `SolrCores.addCoreDescriptor`: registers a core to be loaded on first use. An error if the
    /// name is already registered.
    fn add_core_descriptor(&self, descriptor: CoreDescriptor) -> Result<(), RegistryError>;

    /// `SolrCores.putCore`: registers `core` (made by [`Container::create_core`]) under its name,
    /// taking over its one reference. Returns the core it replaced, if any, whose registry
    /// reference is now the returned handle's.
    fn put_core(&self, core: Arc<Core>) -> Result<Option<CoreHandle>, RegistryError>;

    /// `SolrCores.remove`: unregisters the loaded core (its descriptor stays) and returns the
    /// registry's reference as a handle.
    fn remove(&self, name: &str) -> Option<CoreHandle>;

    /// `SolrCores.swap`: the two names exchange cores and descriptors atomically: no reader ever
    /// sees one core under both names. Both must be loaded.
    fn swap(&self, a: &str, b: &str) -> Result<(), RegistryError>;

    /// `CoreContainer.unload`: unregisters `name` and its descriptor; the core's real close runs
    /// when its last handle drops. Waits for any pending operation on `name` first.
    fn unload(&self, name: &str) -> Result<(), RegistryError>;

    /// `CoreContainer.reload`: replaces the loaded core `name` with a new instance (new id) of the
    /// same descriptor; the old one closes when its last handle drops. Returns the new id.
    fn reload(&self, name: &str) -> Result<CoreId, RegistryError>;

    /// `SolrCores.getLoadedCoreNames`.
    fn loaded_names(&self) -> Vec<String>;

    /// `SolrCores.getAllCoreNames`: every registered name, loaded or not.
    fn all_names(&self) -> Vec<String>;

    /// Every loaded name with its core's id, from one consistent view of the registry.
    fn loaded_cores(&self) -> Vec<(String, CoreId)>;

    /// `SolrCores.getNumLoadedPermanentCores`.
    fn num_loaded(&self) -> usize;

    /// `SolrCores.getNumUnloadedCores`: registered minus loaded, from one consistent view.
    fn num_unloaded(&self) -> usize;

    /// `TransientSolrCores.getNumLoadedTransientCores`: cores in the transient cache, plus
    /// evicted ones still in use (Solr's re-inserted ones are in the cache; PR #1155's overflow).
    fn num_loaded_transient(&self) -> usize;

    /// Caffeine's `cleanUp()`: runs any pending transient-cache maintenance (an eviction pass,
    /// and the closes it queued) and returns once it is done, on whatever thread the strategy
    /// runs maintenance. For tests and verification; requests never need it.
    fn clean_up_transient(&self);

    /// `SolrCores.getNumAllCores`.
    fn num_all(&self) -> usize;

    /// `SolrCores.isLoaded`.
    fn is_loaded(&self, name: &str) -> bool;

    /// `SolrCores.isCoreLoading`: a load of `name` is in progress.
    fn is_core_loading(&self, name: &str) -> bool;

    /// `SolrCores.hasPendingCoreOps`: a load, unload or reload of `name` is in progress.
    fn has_pending_core_ops(&self, name: &str) -> bool;

    /// `CoreContainer.shutdown`: callers waiting to operate on a core fail, later loads fail, and
    /// every loaded core is unregistered and closed once its last handle drops.
    fn shutdown(&self);

    /// `CoreContainer.create`: registers `descriptor` and loads the core. Returns its id.
    fn create(&self, descriptor: CoreDescriptor) -> Result<CoreId, RegistryError> {
        let name = descriptor.name.clone();
        self.add_core_descriptor(descriptor)?;
        match self.get_core(&name)? {
            Some(handle) => Ok(handle.id()),
            // Unloaded again before we could open it: report what the registry now holds.
            None => Err(RegistryError::NoSuchCore {
                name,
                registered: self.all_names(),
            }),
        }
    }
}
