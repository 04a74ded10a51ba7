//! Models: Solr as shipped, one monitor (`registry.modify_lock`) over all registry state.
//! Upstream: `SolrCores.modifyLock` (`synchronized`) in `getCoreFromAnyList` + `SolrCore.open()`.
//! Hot path: 1 monitor entered, and re-entered around the lookup as Solr's nested
//! `getLoadedCoreWithoutIncrement` does; inside, a hash lookup, the refcount increment and the
//! MDC puts.
//!
//! Transient cores (`TransientSolrCores`, Solr 9.x): the cache's maintenance runs inline on the
//! thread whose access finds it due (Caffeine's `executor(Runnable::run)`), reads included, always
//! under the monitor, so the eviction handler's re-insert needs no other lock; a still-used core is
//! put back ([`EvictionPolicy::ReInsert`]).
//!
//! This file says only how the strategy reaches its state ([`StateAccess`]); the registry itself
//! ([`CoreRegistry`](super::CoreRegistry)) is the shared implementation in `state_access.rs`.

use super::container::{Container, RegistryConfig};
use super::error::RegistryError;
use super::kind::RegistryKind;
use super::registry_state::{Claim, RegistryState};
use super::solr_core::{Core, CoreId};
use super::state_access::{Lookup, StateAccess, release_evicted};
use super::transient_cache::EvictionPolicy;
use critsec_sync::primitive::Arc;
use critsec_sync::{Condvar, Monitor};

/// Upstream Solr: every read, write and wait takes `registry.modify_lock`.
///
/// Its [`CoreRegistry`](super::CoreRegistry) methods are the ones every strategy shares; this type
/// supplies only its state and the way to reach it.
pub struct MutexRegistry {
    container: Container,
    /// Solr's `modifyLock`, a re-entrant monitor.
    state: Monitor<RegistryState>,
    /// Solr's `modifyLock.wait()/notifyAll()`.
    changed: Condvar,
}

impl MutexRegistry {
    /// An empty registry.
    pub fn new(config: RegistryConfig) -> Self {
        MutexRegistry {
            state: Monitor::new("registry.modify_lock", RegistryState::new(&config)),
            container: Container::new(config),
            changed: Condvar::new(),
        }
    }
}

impl StateAccess for MutexRegistry {
    const KIND: RegistryKind = RegistryKind::Mutex;
    const EVICTION: EvictionPolicy = EvictionPolicy::ReInsert;

    fn container(&self) -> &Container {
        &self.container
    }

    /// `getCoreFromAnyList(name, incRefCount = true, id)`: lookup and `open()` under the lock;
    /// the lookup is `getLoadedCoreWithoutIncrement`, which enters the monitor again. A cache
    /// left over its bound by re-inserts is maintained here, as Caffeine drains on reads.
    fn open_loaded(&self, name: &str, id: Option<CoreId>) -> Result<Lookup, RegistryError> {
        let mut state = self.state.enter();
        let found = state.reenter(|st| st.maps.lookup(name, id));
        let found = RegistryState::open_found(found);
        if !state.maps.transient.needs_maintenance() {
            return found;
        }
        let evicted = state.evict_transient_locked(Self::EVICTION);
        drop(state);
        release_evicted(self, evicted);
        found
    }

    fn read<R>(&self, f: impl FnOnce(&RegistryState) -> R) -> R {
        f(&self.state.enter())
    }

    fn write<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
        f(&mut self.state.enter())
    }

    fn write_and_notify<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
        let r = f(&mut self.state.enter());
        self.changed.notify_all();
        r
    }

    fn wait_add_pending_core_ops(
        &self,
        name: &str,
        action: &'static str,
    ) -> Result<Option<Arc<Core>>, RegistryError> {
        let mut state = self.state.enter();
        loop {
            match state.claim_locked(name, action)? {
                Claim::Claimed(core) => return Ok(core),
                Claim::Busy => state.wait(&self.changed),
            }
        }
    }
}
