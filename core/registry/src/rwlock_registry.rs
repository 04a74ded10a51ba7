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
//! # Transient cores: maintenance on its own thread
//!
//! Solr's eviction handler (`onEvict`) needs the write lock: it re-inserts a still-used core or
//! queues it to close. With Caffeine's `executor(Runnable::run)` the handler runs on whichever
//! thread's cache access triggers maintenance, a reader under the read lock included, and a
//! `ReentrantReadWriteLock` cannot upgrade a read hold to a write hold: that reader waits for
//! itself forever. `core/tests/loom_registry.rs` finds that deadlock in a naive variant (loom
//! builds only: [`RwLockRegistry::naive_inline_eviction`]). The PR's answer, modelled here: a
//! write that leaves the cache due only *requests* maintenance; a maintenance thread (spawned
//! only when a transient cache is configured) takes the write lock and runs the pass, and a
//! still-used core moves to the overflow map ([`EvictionPolicy::Overflow`]), still openable, until
//! a later pass finds it unused. A request under the read lock thus never needs the write lock:
//! it looks the core up in the cache or the overflow and opens it.
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
use critsec_sync::primitive::{Arc, thread};
use critsec_sync::{Condvar, JdkReadWriteLock, Mutex, RwLock};

/// The requests to the maintenance thread, counted, so that a flush can wait for its own.
#[derive(Default)]
struct MaintenanceRequests {
    /// Passes asked for.
    requested: u64,
    /// The `requested` value the last finished pass served.
    done: u64,
    /// The registry is being dropped: the thread ends.
    stop: bool,
}

/// The hand-off from writers to the maintenance thread (the PR's own maintenance executor).
struct Maintenance {
    requests: Mutex<MaintenanceRequests>,
    /// Wakes the maintenance thread.
    wake: Condvar,
    /// Wakes flushers when a pass finished.
    finished: Condvar,
}

impl Maintenance {
    fn new() -> Self {
        Maintenance {
            requests: Mutex::new(
                "registry.transient_maintenance",
                MaintenanceRequests::default(),
            ),
            wake: Condvar::new(),
            finished: Condvar::new(),
        }
    }

    /// Asks for a pass; never waits for the registry lock. Returns the request's number.
    fn request(&self) -> u64 {
        let mut requests = self.requests.lock();
        requests.requested += 1;
        let ticket = requests.requested;
        drop(requests);
        self.wake.notify_all();
        ticket
    }

    /// Asks for a pass and waits until one that started after the request has finished.
    fn flush(&self) {
        let ticket = self.request();
        let mut requests = self.requests.lock();
        while requests.done < ticket && !requests.stop {
            self.finished.wait(&mut requests);
        }
    }

    fn stop(&self) {
        self.requests.lock().stop = true;
        self.wake.notify_all();
        self.finished.notify_all();
    }

    /// On the maintenance thread: waits for a request; the number it serves, or `None` once
    /// stopped with nothing asked for.
    fn next(&self) -> Option<u64> {
        let mut requests = self.requests.lock();
        while requests.done == requests.requested && !requests.stop {
            self.wake.wait(&mut requests);
        }
        (requests.done < requests.requested).then_some(requests.requested)
    }

    /// On the maintenance thread: the pass serving `ticket` is finished.
    fn finish(&self, ticket: u64) {
        self.requests.lock().done = ticket;
        self.finished.notify_all();
    }
}

/// One read-write-lock registry type per lock (see the module doc).
macro_rules! read_write_registry {
    ($(#[$doc:meta])* $name:ident, $shared:ident, $lock:ident, $kind:expr, $lock_name:literal) => {
    $(#[$doc])*
    /// PR #1155: readers share the lock; writers and waiters take it exclusively.
    ///
    /// Its [`CoreRegistry`](super::CoreRegistry) methods are the ones every strategy shares; this type
    /// supplies only its state and the way to reach it.
    pub struct $name {
        shared: Arc<$shared>,
        /// The transient cache's maintenance thread, if a cache is configured.
        maintainer: Option<thread::JoinHandle<()>>,
    }

    /// What the registry and its maintenance thread share.
    struct $shared {
        container: Container,
        /// The PR's `READ_WRITE_LOCK`.
        state: $lock<RegistryState>,
        /// The epoch of the write lock's condition (see the module doc).
        signal: Mutex<u64>,
        /// Woken when `signal` changes.
        changed: Condvar,
        /// Requests to the maintenance thread.
        maintenance: Maintenance,
        /// The naive design (loom builds only): maintenance inline, readers included.
        #[cfg(loom)]
        naive: bool,
    }

    impl $name {
        /// An empty registry; with a transient cache configured, its maintenance thread starts.
        pub fn new(config: RegistryConfig) -> Self {
            Self::build(config, false)
        }

        /// The naive design the PR had to leave: transient-cache maintenance runs inline on the
        /// thread whose access finds it due, under whatever lock that thread holds, with Solr's
        /// re-inserting handler. A reader that finds the cache over its bound (after a re-insert)
        /// then takes the write lock under its read lock and deadlocks. For loom models only.
        #[cfg(loom)]
        pub fn naive_inline_eviction(config: RegistryConfig) -> Self {
            Self::build(config, true)
        }

        fn build(config: RegistryConfig, naive: bool) -> Self {
            let _ = naive;
            let transient = config.transient_cache_size > 0;
            let shared = Arc::new($shared {
                state: $lock::new($lock_name, RegistryState::new(&config)),
                container: Container::new(config),
                signal: Mutex::new("registry.rw_signal", 0),
                changed: Condvar::new(),
                maintenance: Maintenance::new(),
                #[cfg(loom)]
                naive,
            });
            #[cfg(loom)]
            let transient = transient && !naive;
            let maintainer = transient.then(|| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    while let Some(ticket) = shared.maintenance.next() {
                        let evicted = shared
                            .state
                            .write()
                            .evict_transient_locked(EvictionPolicy::Overflow);
                        release_evicted(&*shared, evicted);
                        shared.maintenance.finish(ticket);
                    }
                })
            });
            $name { shared, maintainer }
        }
    }

    impl Drop for $name {
        fn drop(&mut self) {
            if let Some(maintainer) = self.maintainer.take() {
                self.shared.maintenance.stop();
                let _ = maintainer.join();
            }
        }
    }

    impl StateAccess for $name {
        const KIND: RegistryKind = $kind;
        const EVICTION: EvictionPolicy = EvictionPolicy::Overflow;

        fn container(&self) -> &Container {
            &self.shared.container
        }

        /// `getCoreFromAnyList(name, incRefCount = true, id)`: lookup and `open()` under the read
        /// lock, so many readers open cores at once.
        fn open_loaded(&self, name: &str, id: Option<CoreId>) -> Result<Lookup, RegistryError> {
            let state = self.shared.state.read();
            let found = state.maps.open_locked(name, id);
            #[cfg(loom)]
            if self.shared.naive && state.maps.transient.needs_maintenance() {
                // The naive design: the handler takes the write lock under our read lock.
                let evicted = self
                    .shared
                    .state
                    .write()
                    .evict_transient_locked(EvictionPolicy::ReInsert);
                drop(state);
                release_evicted(self, evicted);
            }
            found
        }

        fn read<R>(&self, f: impl FnOnce(&RegistryState) -> R) -> R {
            self.shared.read(f)
        }

        fn write<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
            self.shared.write(f)
        }

        fn write_and_notify<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R {
            self.shared.write_and_notify(f)
        }

        /// Asks the maintenance thread for a pass (the naive variant runs it here).
        fn maintain_transient(&self) {
            #[cfg(loom)]
            if self.shared.naive {
                let evicted = self.write(|st| st.evict_transient_locked(EvictionPolicy::ReInsert));
                release_evicted(self, evicted);
                return;
            }
            self.shared.maintenance.request();
        }

        /// Waits for a pass of the maintenance thread (the naive variant runs it here).
        fn clean_up_transient(&self) {
            #[cfg(loom)]
            if self.shared.naive {
                return self.maintain_transient();
            }
            if self.maintainer.is_some() {
                self.shared.maintenance.flush();
            }
        }

        fn wait_add_pending_core_ops(
            &self,
            name: &str,
            action: &'static str,
        ) -> Result<Option<Arc<Core>>, RegistryError> {
            self.shared.wait_add_pending_core_ops(name, action)
        }
    }

    impl StateAccess for $shared {
        const KIND: RegistryKind = $kind;
        const EVICTION: EvictionPolicy = EvictionPolicy::Overflow;

        fn container(&self) -> &Container {
            &self.container
        }

        fn open_loaded(&self, name: &str, id: Option<CoreId>) -> Result<Lookup, RegistryError> {
            self.state.read().maps.open_locked(name, id)
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

        fn maintain_transient(&self) {
            self.maintenance.request();
        }

        fn clean_up_transient(&self) {
            self.maintenance.flush();
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
    RwLockShared,
    RwLock,
    RegistryKind::RwLock,
    "registry.rw_lock"
);

read_write_registry!(
    /// PR #1155 on the JDK's `ReentrantReadWriteLock` model (`registry.jdk_rw_lock`).
    JdkRwLockRegistry,
    JdkRwLockShared,
    JdkReadWriteLock,
    RegistryKind::JdkRwLock,
    "registry.jdk_rw_lock"
);
