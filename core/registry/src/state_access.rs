//! `StateAccess`: how a strategy reaches its registry state; everything else is written once here.
//!
//! The strategies differ only in how readers and writers reach the `SolrCores` state: a
//! monitor, a read-write lock with a condition, or a published snapshot beside a writer lock. Each
//! strategy implements [`StateAccess`] (its hot-path lookup and open, its read, write and wait
//! steps) and nothing else. The one implementation of [`CoreRegistry`] below, for every
//! `StateAccess`, then follows Solr's order of steps (the `getCore` load path, `unload`, `reload`,
//! `swap`, `putCore`, shutdown, the listings) with whatever lock the strategy uses, so the
//! strategies cannot drift apart in behaviour. Dispatch to the strategy is static: each strategy's
//! `CoreRegistry` methods are this code monomorphised for it, with no extra indirection or
//! allocation on the way to its lock.

use super::container::Container;
use super::core_registry::{CoreHandle, CoreRegistry};
use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::kind::RegistryKind;
use super::registry_state::{Maps, RegistryState};
use super::solr_core::{Core, CoreId};
use super::transient_cache::EvictionPolicy;
use critsec_sync::kind::StrategyKind;
use critsec_sync::primitive::Arc;

/// What a strategy's `getCoreFromAnyList(name, incRefCount = true, id)` found.
pub(crate) enum Lookup {
    /// The core, opened: the caller owns the reference the handle closes.
    Opened(CoreHandle),
    /// No loaded core has that name (and id). The name may be registered; the load path decides,
    /// under the strategy's lock.
    Missed,
    /// No loaded core, and no descriptor of that name either, in the view the lookup read: there
    /// is nothing to load, and the miss is answered without taking a lock.
    Unregistered,
}

/// A strategy's access to its registry state: the only thing that differs between strategies.
pub(crate) trait StateAccess: Send + Sync {
    /// The strategy's kind; its id is the registry's [`CoreRegistry::id`].
    const KIND: RegistryKind;

    /// The container parts.
    fn container(&self) -> &Container;

    /// The hot path, `getCoreFromAnyList(name, incRefCount = true, id)`: the loaded core `name`
    /// (only if its id is `id`, when given), opened. Its locking is the strategy's defining cost.
    fn open_loaded(&self, name: &str, id: Option<CoreId>) -> Result<Lookup, RegistryError>;

    /// Runs `f` with the authoritative state as a writer would see it, under the lock writers
    /// take (shared where the strategy allows). Used on slow paths and for pending-op queries.
    fn read<R>(&self, f: impl FnOnce(&RegistryState) -> R) -> R;

    /// Runs `f` on the loaded cores and descriptors as a request reads them (`getCoreDescriptor`,
    /// `isLoaded`). By default under [`StateAccess::read`]; the snapshot strategy reads its
    /// published snapshot instead.
    fn read_view<R>(&self, f: impl FnOnce(&Maps) -> R) -> R {
        self.read(|state| f(&state.maps))
    }

    /// Like [`StateAccess::read_view`], for observers (listings, counts, the core without an
    /// increment), which the snapshot strategy serves from a plain load that pins nothing.
    fn observe_view<R>(&self, f: impl FnOnce(&Maps) -> R) -> R {
        self.read_view(f)
    }

    /// Runs `f` with exclusive access; the snapshot strategy republishes after a change.
    fn write<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R;

    /// Like `write`, then wakes every waiter (Solr's `notifyAll` / `signalAll`).
    fn write_and_notify<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R;

    /// What the transient cache's eviction handler does with a core still in use.
    const EVICTION: EvictionPolicy;

    /// Runs the transient cache's maintenance after a write left it due (an insertion over the
    /// bound, or overflow cores to re-examine). By default inline, on the writer's thread, as
    /// Caffeine's `executor(Runnable::run)` does: the pass under the write lock, the closes of
    /// evicted cores after it. The read-write strategies hand it to their maintenance thread.
    fn maintain_transient(&self) {
        let evicted = self.write(|st| st.evict_transient_locked(Self::EVICTION));
        release_evicted(self, evicted);
    }

    /// [`CoreRegistry::clean_up_transient`]: by default the inline pass, here.
    fn clean_up_transient(&self) {
        self.maintain_transient();
    }

    /// Solr's `waitAddPendingCoreOps`: waits while `name` has an operation or a close pending,
    /// fails once the container is shut down, then claims `name` and returns its loaded core
    /// without taking a reference. `action` names the caller's operation in the error. Each pass
    /// decides by [`RegistryState::claim_locked`]; how to wait is the strategy's.
    fn wait_add_pending_core_ops(
        &self,
        name: &str,
        action: &'static str,
    ) -> Result<Option<Arc<Core>>, RegistryError>;
}

impl<S: StateAccess> CoreRegistry for S {
    fn id(&self) -> &'static str {
        S::KIND.id()
    }

    fn container(&self) -> &Container {
        StateAccess::container(self)
    }

    fn get_core(&self, name: &str) -> Result<Option<CoreHandle>, RegistryError> {
        match self.open_loaded(name, None)? {
            Lookup::Opened(handle) => Ok(Some(handle)),
            // A registration racing this call is ordered after it, as it would be had we locked.
            Lookup::Unregistered => Ok(None),
            Lookup::Missed => load_core(self, name),
        }
    }

    fn get_core_with_id(
        &self,
        name: &str,
        id: CoreId,
    ) -> Result<Option<CoreHandle>, RegistryError> {
        match self.open_loaded(name, Some(id))? {
            Lookup::Opened(handle) => Ok(Some(handle)),
            // The fast path serves the permanent cores and the transient cache, not the
            // overflow, whose cores the load path opens and re-admits; `get_core` reaches them
            // there, and so does an id lookup, for a core loaded with that id (it never loads).
            Lookup::Missed if self.read_view(|view| view.loaded_id(name)) == Some(id) => {
                open_claimed_with_id(self, name, id)
            }
            Lookup::Missed | Lookup::Unregistered => Ok(None),
        }
    }

    fn get_core_descriptor(&self, name: &str) -> Option<Arc<CoreDescriptor>> {
        self.read_view(|view| view.descriptor(name))
    }

    fn get_loaded_core_without_increment(&self, name: &str) -> Option<Arc<Core>> {
        self.observe_view(|view| view.loaded_core(name))
    }

    /// Solr's `SolrCores.addCoreDescriptor`: registers a core without loading it.
    fn add_core_descriptor(&self, descriptor: CoreDescriptor) -> Result<(), RegistryError> {
        self.write(|st| st.add_core_descriptor_locked(Arc::new(descriptor)))
    }

    /// Solr's `SolrCores.putCore`: registers a created core under its name.
    fn put_core(&self, core: Arc<Core>) -> Result<Option<CoreHandle>, RegistryError> {
        let name = core.name().to_string();
        let put = self.write(|st| {
            if st.shutdown {
                Err(core)
            } else {
                Ok(put_and_check(st, &name, Arc::clone(&core)))
            }
        });
        match put {
            Ok((old, due)) => {
                if due {
                    self.maintain_transient();
                }
                Ok(old.map(CoreHandle::from_open))
            }
            Err(core) => {
                let _ = core.close();
                Err(RegistryError::ShutDown {
                    action: "registered",
                    name,
                })
            }
        }
    }

    /// Solr's `SolrCores.remove`: the registry's reference comes back as a handle.
    fn remove(&self, name: &str) -> Option<CoreHandle> {
        self.write(|st| st.remove_locked(name))
            .map(CoreHandle::from_open)
    }

    /// Solr's `SolrCores.swap`.
    fn swap(&self, a: &str, b: &str) -> Result<(), RegistryError> {
        self.write(|st| st.swap_locked(a, b))
    }

    /// `CoreContainer.unload`: claim the name, unregister the core and its descriptor, release
    /// the registry's reference (the real close waits for the last handle), release the claim.
    fn unload(&self, name: &str) -> Result<(), RegistryError> {
        self.wait_add_pending_core_ops(name, "unloaded")?;
        let removed = self.write(|st| st.unload_locked(name));
        if let Ok(Some(core)) = &removed {
            let _ = core.close();
        }
        self.write_and_notify(|st| {
            if let Ok(Some(core)) = &removed {
                st.finish_close_locked(core);
            }
            st.pending_core_ops.remove(name);
        });
        removed.map(|_| ())
    }

    /// `CoreContainer.reload`: claim the name, create a new core from the descriptor, register it
    /// in place of the old one, release the old core's registry reference, release the claim.
    fn reload(&self, name: &str) -> Result<CoreId, RegistryError> {
        let existing = self.wait_add_pending_core_ops(name, "reloaded")?;
        let result = reload_claimed(self, name, existing);
        remove_from_pending_ops(self, name);
        result
    }

    fn loaded_names(&self) -> Vec<String> {
        self.observe_view(Maps::loaded_names)
    }

    fn all_names(&self) -> Vec<String> {
        self.observe_view(Maps::all_names)
    }

    fn loaded_cores(&self) -> Vec<(String, CoreId)> {
        self.observe_view(Maps::loaded_cores)
    }

    fn num_loaded(&self) -> usize {
        self.observe_view(Maps::num_loaded)
    }

    fn num_unloaded(&self) -> usize {
        self.observe_view(Maps::num_unloaded)
    }

    fn num_all(&self) -> usize {
        self.observe_view(Maps::num_all)
    }

    fn num_loaded_transient(&self) -> usize {
        self.observe_view(|view| view.transient.len())
    }

    fn clean_up_transient(&self) {
        StateAccess::clean_up_transient(self);
    }

    fn is_loaded(&self, name: &str) -> bool {
        self.read_view(|view| view.is_loaded(name))
    }

    fn is_core_loading(&self, name: &str) -> bool {
        self.read(|st| st.currently_loading.contains(name))
    }

    fn has_pending_core_ops(&self, name: &str) -> bool {
        self.read(|st| st.pending_core_ops.contains(name))
    }

    /// `CoreContainer.shutdown`: mark the registry shut down (waking every waiter, which then
    /// fails) and release the registry's reference to every loaded core.
    fn shutdown(&self) {
        let cores = self.write_and_notify(|st| st.shutdown_locked());
        for core in cores {
            let _ = core.close();
        }
    }
}

/// `put_core_locked`, and whether it left the transient cache due for maintenance.
fn put_and_check(st: &mut RegistryState, name: &str, core: Arc<Core>) -> (Option<Arc<Core>>, bool) {
    let old = st.put_core_locked(name, core);
    (old, st.maps.transient.needs_maintenance())
}

/// The `CloserThread`'s part for cores the transient cache evicted: releases the registry's
/// reference to each (outside the lock), then unblocks their names and wakes waiters. Whichever
/// thread runs it (a request that loaded or hit a core, or a maintenance thread), its logging
/// context is left alone, as Solr's closer thread does not share a request's.
pub(crate) fn release_evicted<S: StateAccess + ?Sized>(s: &S, evicted: Vec<(Box<str>, Arc<Core>)>) {
    if evicted.is_empty() {
        return;
    }
    for (_, core) in &evicted {
        let _ = core.close_on_closer_thread();
    }
    s.write_and_notify(|st| st.finish_closes_locked(&evicted));
}

/// Solr's `removeFromPendingOps`: releases the claim on `name` and wakes waiters.
fn remove_from_pending_ops(s: &impl StateAccess, name: &str) {
    s.write_and_notify(|st| st.pending_core_ops.remove(name));
}

/// The rest of `CoreContainer.getCore(name)` after the fast path missed: find the descriptor,
/// claim the name, and load the core unless another caller loaded it meanwhile. `Ok(None)` only
/// if `name` is not registered.
fn load_core(s: &impl StateAccess, name: &str) -> Result<Option<CoreHandle>, RegistryError> {
    loop {
        let registered = s.read(|st| st.maps.resident_descriptors.contains_key(name));
        if !registered {
            return Ok(None);
        }
        let existing = s.wait_add_pending_core_ops(name, "loaded")?;
        let result = load_claimed(s, name, existing);
        remove_from_pending_ops(s, name);
        match result? {
            Lookup::Opened(handle) => return Ok(Some(handle)),
            Lookup::Unregistered => return Ok(None),
            // The core found under the claim closed before we could open it, and the name may
            // still be registered: look again. Each retry follows a writer that
            // released the registry's reference (a bare `remove`, a `put_core` replacing the core,
            // or shutdown, after which the next claim fails), so callers are lock-free, not
            // wait-free, as on the snapshot's fast path.
            Lookup::Missed => {}
        }
    }
}

/// Under the claim on `name`: opens the core another caller loaded while we waited, or loads it.
/// [`Lookup::Missed`] when the core we found closed before we could open it.
fn load_claimed(
    s: &impl StateAccess,
    name: &str,
    existing: Option<Arc<Core>>,
) -> Result<Lookup, RegistryError> {
    if let Some(core) = existing {
        // Another caller loaded it while we waited, or the fast path does not serve it.
        return Ok(open_claimed(s, name, core));
    }
    let Some(descriptor) = s.read(|st| st.maps.descriptor(name)) else {
        return Ok(Lookup::Unregistered);
    };
    s.write(|st| st.currently_loading.insert(name.into()));
    let core = s.container().create_core(descriptor);
    // Deviation: Solr opens the core after `registerCore`; we open it before publishing, while no
    // other thread can reach it, so even a lock-free reader never sees a registered core whose
    // loader has not taken its reference yet. The claim on the name makes the orders equivalent.
    core.open()?;
    let replaced = s.write_and_notify(|st| {
        st.currently_loading.remove(name);
        if st.shutdown {
            Err(())
        } else {
            Ok(put_and_check(st, name, Arc::clone(&core)))
        }
    });
    match replaced {
        Ok((old, due)) => {
            if let Some(old) = old {
                // A bare `put_core` raced us; its core's registry reference is ours to release.
                let _ = old.close();
            }
            if due {
                s.maintain_transient();
            }
            Ok(Lookup::Opened(CoreHandle::from_open(core)))
        }
        Err(()) => {
            // Shut down while loading: release the loader's and the would-be registry reference.
            let _ = core.close();
            let _ = core.close();
            Err(RegistryError::ShutDown {
                action: "loaded",
                name: name.to_string(),
            })
        }
    }
}

/// Under the claim on `name`: opens its loaded `core` and, if it was in the transient overflow,
/// re-admits it to the cache. Our claim keeps unload and reload away, but a bare `remove` (the
/// descriptor stays) may have released the registry's reference since, and the last handle may
/// have closed the core: then [`Lookup::Missed`], and a loader looks again rather than answering
/// that nothing is registered.
fn open_claimed(s: &impl StateAccess, name: &str, core: Arc<Core>) -> Lookup {
    if !core.try_open() {
        return Lookup::Missed;
    }
    // An evicted core still in use (the transient overflow) is used again: re-admit it.
    if core.descriptor().is_transient() && s.write(|st| st.readmit_transient_locked(name)) {
        s.maintain_transient();
    }
    Lookup::Opened(CoreHandle::from_open(core))
}

/// `get_core_with_id` for a core the fast path does not serve (the transient overflow): as the
/// load path does for such a core, claims `name` and opens its loaded core (re-admitting it), but
/// only if that core still has `id`; never loads.
fn open_claimed_with_id(
    s: &impl StateAccess,
    name: &str,
    id: CoreId,
) -> Result<Option<CoreHandle>, RegistryError> {
    let existing = s.wait_add_pending_core_ops(name, "opened")?;
    let found = match existing {
        Some(core) if core.id() == id => open_claimed(s, name, core),
        _ => Lookup::Missed,
    };
    remove_from_pending_ops(s, name);
    match found {
        Lookup::Opened(handle) => Ok(Some(handle)),
        Lookup::Missed | Lookup::Unregistered => Ok(None),
    }
}

fn reload_claimed(
    s: &impl StateAccess,
    name: &str,
    existing: Option<Arc<Core>>,
) -> Result<CoreId, RegistryError> {
    if existing.is_none() {
        return Err(s.read(|st| st.not_loaded_locked(name)));
    }
    let descriptor = s
        .read(|st| st.maps.descriptor(name))
        .ok_or_else(|| s.read(|st| st.no_such_core_locked(name)))?;
    let core = s.container().create_core(descriptor);
    let id = core.id();
    let replaced = s.write(|st| {
        if st.shutdown {
            Err(())
        } else {
            Ok(put_and_check(st, name, Arc::clone(&core)))
        }
    });
    match replaced {
        Ok((old, due)) => {
            if let Some(old) = old {
                let _ = old.close();
            }
            if due {
                s.maintain_transient();
            }
            Ok(id)
        }
        Err(()) => {
            let _ = core.close();
            Err(RegistryError::ShutDown {
                action: "reloaded",
                name: name.to_string(),
            })
        }
    }
}
