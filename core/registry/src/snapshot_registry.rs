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
//!
//! Transient cores: readers find them in the published snapshot (the cache's entries, and so
//! their access stamps, are shared with the authoritative state) and open them with `try_open`
//! like any other core. Maintenance runs inline on the writer that inserted, under the writer
//! lock, never on a reader; a still-used core moves to the overflow map
//! ([`EvictionPolicy::Overflow`]), which every later pass re-examines. The eviction handler's
//! open-count test is a racy read here (a reader may open the core just after it), which costs
//! only correctness-neutral slack: such a reader holds an open core whose real close waits for
//! its handle, exactly as after an unload.
//!
//! This file says only how the strategy reaches its state ([`StateAccess`]): the lock-free lookup,
//! the snapshot for reads, the writer lock for writes and waits. The registry itself
//! ([`CoreRegistry`](super::CoreRegistry)) is the shared implementation in `state_access.rs`.

use super::container::{Container, RegistryConfig};
use super::core_registry::CoreHandle;
use super::error::RegistryError;
use super::kind::RegistryKind;
use super::registry_state::{Claim, Maps, RegistryState};
use super::solr_core::{Core, CoreId};
use super::state_access::{Lookup, StateAccess};
use super::transient_cache::EvictionPolicy;
use critsec_sync::primitive::Arc;
use critsec_sync::{Condvar, Mutex, SnapshotCell};

/// Ours: lock-free readers over a published snapshot; writers serialised by a mutex.
///
/// Its [`CoreRegistry`](super::CoreRegistry) methods are the ones every strategy shares; this type
/// supplies only its state and the way to reach it.
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
        let state = RegistryState::new(&config);
        SnapshotRegistry {
            container: Container::new(config),
            view: SnapshotCell::new(Arc::new(state.maps.clone())),
            writer: Mutex::new("registry.writer_lock", state),
            changed: Condvar::new(),
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
    const KIND: RegistryKind = RegistryKind::Snapshot;
    const EVICTION: EvictionPolicy = EvictionPolicy::Overflow;

    fn container(&self) -> &Container {
        &self.container
    }

    /// The lock-free `getCoreFromAnyList(name, true, id)`. A miss reports whether the snapshot
    /// had `name` registered: only then may a load be due, and only then is the writer lock taken.
    fn open_loaded(&self, name: &str, id: Option<CoreId>) -> Result<Lookup, RegistryError> {
        loop {
            let attempt = self.view.read(|view| match view.lookup(name, id) {
                None if view.resident_descriptors.contains_key(name) => Some(Lookup::Missed),
                None => Some(Lookup::Unregistered),
                Some(core) => core
                    .try_open()
                    .then(|| Lookup::Opened(CoreHandle::from_open(Arc::clone(core)))),
            });
            if let Some(found) = attempt {
                return Ok(found);
            }
            // The core closed after we read the snapshot: it was unpublished before it closed,
            // so a fresh read no longer holds it (module doc).
        }
    }

    fn read<R>(&self, f: impl FnOnce(&RegistryState) -> R) -> R {
        f(&self.writer.lock())
    }

    /// Requests read the published snapshot through this thread's cache, taking no lock.
    fn read_view<R>(&self, f: impl FnOnce(&Maps) -> R) -> R {
        self.view.read(f)
    }

    /// Observers take a plain load of the snapshot, which pins nothing once they are done.
    fn observe_view<R>(&self, f: impl FnOnce(&Maps) -> R) -> R {
        f(&self.view.load())
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
            match state.claim_locked(name, action)? {
                Claim::Claimed(core) => return Ok(core),
                Claim::Busy => self.changed.wait(&mut state),
            }
        }
    }
}
