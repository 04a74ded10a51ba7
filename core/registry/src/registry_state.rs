//! `RegistryState`: the fields `SolrCores` guards with `modifyLock`, and their `*_locked` helpers.
//!
//! Solr's monitor is reentrant and its methods call each other under it (`putCore` calls
//! `addCoreDescriptor`, `swap` calls `getCore`). Rust locks are not reentrant, so every such step
//! is a `*_locked` method here that takes the state the caller already holds; no path re-locks.
//! [`Maps`] holds what readers need (loaded cores and resident descriptors); it is cloned whole to
//! publish a snapshot, so the snapshot strategy's readers use the same read helpers.

use super::core_registry::CoreHandle;
use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::name_map::NameMap;
use super::solr_core::{Core, CoreId};
use super::state_access::Lookup;
use super::transient_cache::{EvictionPolicy, TransientCores};
use critsec_sync::primitive::Arc;
use std::collections::HashSet;

/// Loaded cores and resident descriptors: everything a reader looks at.
#[derive(Clone, Default)]
pub(crate) struct Maps {
    /// Solr's `cores`: loaded cores by the name they are registered under. While a core is in
    /// here the registry owns one of its references.
    pub(crate) cores: NameMap<Arc<Core>>,
    /// Solr's `residentDescriptors`: every registered core, loaded or not.
    pub(crate) resident_descriptors: NameMap<Arc<CoreDescriptor>>,
    /// `TransientSolrCores`' cache of loaded transient cores (and PR #1155's overflow).
    pub(crate) transient: TransientCores,
}

impl Maps {
    /// Solr's lookup in `getCoreFromAnyList`: the loaded core `name`, if its id is `id` (when
    /// given); Solr returns null on an id mismatch, as if the core were missing.
    /// A permanent core is looked up first; a miss asks the transient cache, as
    /// `TransientSolrCores.getLoadedCoreWithoutIncrement` does, recording the access.
    #[inline]
    pub(crate) fn lookup(&self, name: &str, id: Option<CoreId>) -> Option<&Arc<Core>> {
        self.cores
            .get(name)
            .or_else(|| self.transient.get(name))
            .filter(|core| id.is_none_or(|id| core.id() == id))
    }

    /// The hot path of the locking strategies, `getCoreFromAnyList(name, true, id)`: the lookup
    /// and Solr's unconditional `open()`. Callers hold a lock under which the registry's
    /// reference to every core in here stays put, which is what makes `open()` safe.
    #[inline]
    pub(crate) fn open_locked(
        &self,
        name: &str,
        id: Option<CoreId>,
    ) -> Result<Lookup, RegistryError> {
        RegistryState::open_found(self.lookup(name, id))
    }

    pub(crate) fn descriptor(&self, name: &str) -> Option<Arc<CoreDescriptor>> {
        self.resident_descriptors.get(name).cloned()
    }

    /// The loaded core `name`, permanent or transient, without recording an access.
    pub(crate) fn loaded_core(&self, name: &str) -> Option<Arc<Core>> {
        self.cores
            .get(name)
            .or_else(|| self.transient.peek(name))
            .cloned()
    }

    /// The id of the loaded core `name`, permanent or transient (cache or overflow), without
    /// recording an access.
    pub(crate) fn loaded_id(&self, name: &str) -> Option<CoreId> {
        self.cores
            .get(name)
            .or_else(|| self.transient.peek(name))
            .map(|core| core.id())
    }

    /// Solr's `isLoaded`: permanent or transient.
    pub(crate) fn is_loaded(&self, name: &str) -> bool {
        self.cores.contains_key(name) || self.transient.peek(name).is_some()
    }

    /// Every loaded core, permanent ones first, then the transient cache and its overflow.
    fn loaded(&self) -> impl Iterator<Item = (&str, &Arc<Core>)> {
        self.cores
            .iter()
            .map(|(k, c)| (&**k, c))
            .chain(self.transient.iter())
    }

    pub(crate) fn loaded_names(&self) -> Vec<String> {
        self.loaded().map(|(k, _)| k.to_string()).collect()
    }

    pub(crate) fn all_names(&self) -> Vec<String> {
        self.resident_descriptors
            .keys()
            .map(|k| k.to_string())
            .collect()
    }

    pub(crate) fn loaded_cores(&self) -> Vec<(String, CoreId)> {
        self.loaded()
            .map(|(k, c)| (k.to_string(), c.id()))
            .collect()
    }

    /// Solr's `getNumLoadedPermanentCores`: transient cores are not counted.
    pub(crate) fn num_loaded(&self) -> usize {
        self.cores.len()
    }

    pub(crate) fn num_all(&self) -> usize {
        self.resident_descriptors.len()
    }

    /// Solr's `getNumUnloadedCores`: registered minus loaded, permanent and transient.
    pub(crate) fn num_unloaded(&self) -> usize {
        self.resident_descriptors.len() - self.cores.len() - self.transient.len()
    }
}

/// What one pass of `waitAddPendingCoreOps` decided ([`RegistryState::claim_locked`]).
pub(crate) enum Claim {
    /// `name` is now claimed by the caller; its loaded core, if any, without an increment.
    Claimed(Option<Arc<Core>>),
    /// An operation or close on `name` is pending: wait for a change, then ask again.
    Busy,
}

/// Everything `SolrCores` guards with its one monitor.
#[derive(Default)]
pub(crate) struct RegistryState {
    /// Loaded cores and resident descriptors.
    pub(crate) maps: Maps,
    /// Bumped on every change to `maps`, so the snapshot strategy republishes only when needed.
    pub(crate) version: u64,
    /// Solr's `pendingCoreOps`: names with a load, unload or reload in progress.
    pub(crate) pending_core_ops: HashSet<Box<str>>,
    /// Solr's `currentlyLoadingCores`.
    pub(crate) currently_loading: HashSet<Box<str>>,
    /// Solr's `pendingCloses`: unloaded cores whose registry reference is being released, with the
    /// name they were registered under. A name stays blocked for new operations while listed.
    pub(crate) pending_closes: Vec<(Box<str>, Arc<Core>)>,
    /// Set once by shutdown; ends every wait with an error.
    pub(crate) shutdown: bool,
    /// Test-only: [`RegistryConfig::eviction_mutant`](super::RegistryConfig).
    #[cfg(test)]
    eviction_mutant: bool,
}

impl RegistryState {
    /// An empty state with `config`'s transient cache (`transient_cache_size` cores; 0: none).
    pub(crate) fn new(config: &super::RegistryConfig) -> Self {
        let mut state = RegistryState::default();
        state.maps.transient = TransientCores::new(config.transient_cache_size);
        #[cfg(test)]
        {
            state.eviction_mutant = config.eviction_mutant;
        }
        state
    }

    /// Solr's unconditional `open()` of what the lookup found, under the caller's lock.
    #[inline]
    pub(crate) fn open_found(found: Option<&Arc<Core>>) -> Result<Lookup, RegistryError> {
        match found {
            Some(core) => {
                core.open()?;
                Ok(Lookup::Opened(CoreHandle::from_open(Arc::clone(core))))
            }
            None => Ok(Lookup::Missed),
        }
    }

    /// One pass of Solr's `waitAddPendingCoreOps` loop: an error once the container is shut
    /// down, else the claim on `name` (with its loaded core, no increment) unless an operation or
    /// a close is pending on it, in which case the caller waits for a change and asks again.
    pub(crate) fn claim_locked(
        &mut self,
        name: &str,
        action: &'static str,
    ) -> Result<Claim, RegistryError> {
        if self.shutdown {
            return Err(RegistryError::ShutDown {
                action,
                name: name.to_string(),
            });
        }
        if self.must_wait_locked(name) {
            Ok(Claim::Busy)
        } else {
            Ok(Claim::Claimed(self.add_pending_core_op_locked(name)))
        }
    }

    /// Whether an operation on `name` must wait (Solr's loop condition in `waitAddPendingCoreOps`).
    fn must_wait_locked(&self, name: &str) -> bool {
        self.pending_core_ops.contains(name)
            || self.pending_closes.iter().any(|(n, _)| &**n == name)
    }

    /// Claims `name` for an operation and returns its loaded core, if any (no increment).
    fn add_pending_core_op_locked(&mut self, name: &str) -> Option<Arc<Core>> {
        self.pending_core_ops.insert(name.into());
        self.maps.loaded_core(name)
    }

    /// Solr's `addCoreDescriptor`.
    pub(crate) fn add_core_descriptor_locked(
        &mut self,
        descriptor: Arc<CoreDescriptor>,
    ) -> Result<(), RegistryError> {
        if self
            .maps
            .resident_descriptors
            .contains_key(descriptor.name.as_str())
        {
            return Err(RegistryError::AlreadyRegistered {
                name: descriptor.name.clone(),
                registered: self.maps.all_names(),
            });
        }
        self.maps
            .resident_descriptors
            .insert(descriptor.name.as_str().into(), descriptor);
        self.version += 1;
        Ok(())
    }

    /// Solr's `putCore`: registers `core` under `name` (adding its descriptor if the name is new)
    /// and returns the core it replaced, whose registry reference passes to the caller.
    ///
    /// A name's loaded core is in one map only, the permanent `cores` or the transient cache
    /// (`TransientSolrCores` asserts the two name sets are disjoint when it lists them), so a core
    /// put under a name whose loaded core is of the other kind replaces that one too: it leaves
    /// its map and is returned. Deviation: Solr's `putCore` puts into one map without looking at
    /// the other, which would break that invariant; every reader here (listings, counts, the
    /// lookups by id) relies on it.
    pub(crate) fn put_core_locked(&mut self, name: &str, core: Arc<Core>) -> Option<Arc<Core>> {
        if !self.maps.resident_descriptors.contains_key(name) {
            let descriptor = Arc::new(core.descriptor().renamed(name));
            self.maps
                .resident_descriptors
                .insert(name.into(), descriptor);
        }
        self.version += 1;
        let (replaced, other_kind) =
            if self.maps.transient.enabled() && core.descriptor().is_transient() {
                let replaced = self.maps.transient.put(name, core);
                (replaced, self.maps.cores.shift_remove(name))
            } else {
                let replaced = self.maps.cores.insert(name.into(), core);
                (replaced, self.maps.transient.remove(name))
            };
        debug_assert!(
            replaced.is_none() || other_kind.is_none(),
            "{name} was loaded twice"
        );
        replaced.or(other_kind)
    }

    /// One pass of the transient cache's maintenance with `TransientSolrCores.onEvict` as the
    /// handler: a core with a pending operation or another user (`getOpenCount() > 1`) is kept
    /// by `policy`; any other is unregistered and queued to close (`queueCoreToClose`: listed in
    /// `pending_closes`, which blocks new operations on the name). Returns the queued cores; the
    /// caller closes each outside the lock, then calls [`RegistryState::finish_closes_locked`].
    pub(crate) fn evict_transient_locked(
        &mut self,
        policy: EvictionPolicy,
    ) -> Vec<(Box<str>, Arc<Core>)> {
        #[cfg(not(test))]
        let mutant = false;
        #[cfg(test)]
        let mutant = self.eviction_mutant;
        let pending = &self.pending_core_ops;
        let queued = self.maps.transient.evict(policy, |name, core| {
            pending.contains(name) || (core.ref_count() > 1 && !mutant)
        });
        self.pending_closes.extend(
            queued
                .iter()
                .map(|(name, core)| (name.clone(), Arc::clone(core))),
        );
        self.version += 1;
        queued
    }

    /// A request found `name` loaded in the transient overflow: back into the cache. Whether the
    /// cache is now due for maintenance.
    pub(crate) fn readmit_transient_locked(&mut self, name: &str) -> bool {
        if !self.maps.transient.readmit(name) {
            return false;
        }
        self.version += 1;
        self.maps.transient.needs_maintenance()
    }

    /// After the closes of evicted cores: they leave `pending_closes`, unblocking their names.
    pub(crate) fn finish_closes_locked(&mut self, closed: &[(Box<str>, Arc<Core>)]) {
        for (_, core) in closed {
            self.finish_close_locked(core);
        }
    }

    /// Solr's `remove`: unregisters the loaded core (its descriptor stays) and hands its registry
    /// reference to the caller.
    pub(crate) fn remove_locked(&mut self, name: &str) -> Option<Arc<Core>> {
        let removed = self
            .maps
            .cores
            .shift_remove(name)
            .or_else(|| self.maps.transient.remove(name));
        if removed.is_some() {
            self.version += 1;
        }
        removed
    }

    /// Solr's `swap`: the two names exchange cores and descriptors in one step, so no observer of
    /// the state sees a core under both names or neither. Only permanent cores are swapped (a
    /// transient one counts as not loaded here: swapping cache entries is not modelled).
    pub(crate) fn swap_locked(&mut self, a: &str, b: &str) -> Result<(), RegistryError> {
        if a == b {
            return Err(RegistryError::SwapWithItself {
                name: a.to_string(),
            });
        }
        let (Some(ca), Some(cb)) = (
            self.maps.cores.get(a).cloned(),
            self.maps.cores.get(b).cloned(),
        ) else {
            let missing = if self.maps.cores.contains_key(a) {
                b
            } else {
                a
            };
            return Err(self.not_loaded_locked(missing));
        };
        // `insert` on a present key replaces the value in place, so both names keep their
        // positions and each now maps to the other core.
        self.maps.cores.insert(a.into(), cb);
        self.maps.cores.insert(b.into(), ca);
        if let (Some(da), Some(db)) = (self.maps.descriptor(a), self.maps.descriptor(b)) {
            self.maps
                .resident_descriptors
                .insert(a.into(), Arc::new(db.renamed(a)));
            self.maps
                .resident_descriptors
                .insert(b.into(), Arc::new(da.renamed(b)));
        }
        self.version += 1;
        Ok(())
    }

    /// Unload, first step: unregisters the core and its descriptor and lists the core as pending
    /// close; the caller then releases the registry's reference and calls `finish_close_locked`.
    pub(crate) fn unload_locked(&mut self, name: &str) -> Result<Option<Arc<Core>>, RegistryError> {
        if !self.maps.resident_descriptors.contains_key(name) {
            return Err(self.no_such_core_locked(name));
        }
        self.maps.resident_descriptors.shift_remove(name);
        let core = self
            .maps
            .cores
            .shift_remove(name)
            .or_else(|| self.maps.transient.remove(name));
        if let Some(core) = &core {
            self.pending_closes.push((name.into(), Arc::clone(core)));
        }
        self.version += 1;
        Ok(core)
    }

    /// Unload, last step: the registry's reference to `core` is released.
    pub(crate) fn finish_close_locked(&mut self, core: &Arc<Core>) {
        self.pending_closes.retain(|(_, c)| !Arc::ptr_eq(c, core));
    }

    /// Marks the container shut down and unregisters every loaded core, handing their registry
    /// references to the caller. Descriptors stay, so a later `get_core` reports the shutdown.
    pub(crate) fn shutdown_locked(&mut self) -> Vec<Arc<Core>> {
        self.shutdown = true;
        self.version += 1;
        let mut cores: Vec<Arc<Core>> = self.maps.cores.drain(..).map(|(_, core)| core).collect();
        cores.extend(self.maps.transient.drain());
        cores
    }

    /// The error for a name that is not loaded (or not even registered).
    pub(crate) fn not_loaded_locked(&self, name: &str) -> RegistryError {
        if self.maps.resident_descriptors.contains_key(name) {
            RegistryError::NotLoaded {
                name: name.to_string(),
                loaded: self.maps.loaded_names(),
            }
        } else {
            self.no_such_core_locked(name)
        }
    }

    /// The error for a name that is not registered.
    pub(crate) fn no_such_core_locked(&self, name: &str) -> RegistryError {
        RegistryError::NoSuchCore {
            name: name.to_string(),
            registered: self.maps.all_names(),
        }
    }
}
