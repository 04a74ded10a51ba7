//! `SnapshotCell`: an atomically replaceable `Arc<T>` with a per-thread cached read path (the
//! snapshot registry's published pointer), arc-swap normally and a loom-visible cell under loom.
//!
//! It lives in `sync/` beside [`primitive`](super::primitive) because it is the other place that
//! picks an implementation by `cfg(loom)`; keeping both here leaves `sync/` the only module with
//! such a switch.
//!
//! Normally an `arc_swap::ArcSwap` plus, per reading thread, an `arc_swap::Cache` of the last
//! value that thread saw. [`SnapshotCell::read`], the hot path, checks the cache against the
//! cell's pointer with one plain load and, while no writer has stored since, runs the caller on
//! the cached value: no atomic read-modify-write at all, where `ArcSwap::load` costs two (claiming
//! a thread-local debt slot and releasing it) and a guarded `Arc` clone would write a count that
//! every reader shares. [`SnapshotCell::load`], for observers, is the plain `ArcSwap::load`.
//!
//! arc-swap is not loom-aware, so under `cfg(loom)` the cell is a loom-visible `Mutex<Arc<T>>`
//! with the same contract. That contract is all its user, the snapshot registry, relies on:
//! `store` replaces the pointer atomically, and a read that happens after a `store` sees that
//! value or a later one.
//! `ArcSwap` gives this (its operations are `SeqCst`), a mutex gives it, and so does the cache:
//! its check is a load of the same pointer, and read-read and write-read coherence hold for every
//! atomic, Relaxed included, so a check that happens after a store reads that store or a later
//! one; if that differs from the cached pointer the cache takes a full `ArcSwap` load, which
//! synchronises with the store. A cached pointer cannot be reused by another value (ABA) because
//! the cache keeps its value alive. loom then checks our reference-count protocol against every
//! interleaving of reads and stores, not arc-swap's internals, which arc-swap's own tests cover.
//!
//! Cost of the cache: each thread that has read the cell keeps the value it last saw alive until
//! it reads again or the cell is dropped, so a retired snapshot (and the memory, not the
//! reference count, of the cores it lists) can outlive its replacement by a while.

use super::primitive::Arc;
use std::ops::Deref;

#[cfg(not(loom))]
mod imp {
    use super::Arc;
    use arc_swap::ArcSwap;
    use arc_swap::cache::Cache;
    use std::cell::RefCell;
    use thread_local::ThreadLocal;

    /// One thread's cached value; it shares the cell through a std `Arc` (the cell owns it too).
    type ThreadCache<T> = RefCell<Cache<std::sync::Arc<ArcSwap<T>>, Arc<T>>>;

    pub(crate) struct Cell<T: Send + Sync> {
        shared: std::sync::Arc<ArcSwap<T>>,
        caches: ThreadLocal<ThreadCache<T>>,
    }
    pub(crate) type Guard<T> = arc_swap::Guard<Arc<T>>;

    impl<T: Send + Sync> Cell<T> {
        pub(crate) fn new(value: Arc<T>) -> Self {
            Cell {
                shared: std::sync::Arc::new(ArcSwap::new(value)),
                caches: ThreadLocal::new(),
            }
        }
        #[inline]
        pub(crate) fn load(&self) -> Guard<T> {
            self.shared.load()
        }
        #[inline]
        pub(crate) fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
            let cache = self
                .caches
                .get_or(|| RefCell::new(Cache::new(std::sync::Arc::clone(&self.shared))));
            match cache.try_borrow_mut() {
                Ok(mut cache) => f(cache.load()),
                // A read nested in a read on this thread: the cache is in use, so take the
                // shared path, which has the same contract.
                Err(_) => f(&self.shared.load()),
            }
        }
        pub(crate) fn store(&self, value: Arc<T>) {
            self.shared.store(value);
        }
    }
}

#[cfg(loom)]
mod imp {
    use super::Arc;
    use crate::Mutex;

    pub(crate) struct Cell<T>(Mutex<Arc<T>>);
    pub(crate) type Guard<T> = Arc<T>;

    impl<T> Cell<T> {
        pub(crate) fn new(value: Arc<T>) -> Self {
            // Named for its one user, the snapshot registry, whose lock names start `registry.`.
            Cell(Mutex::new("registry.snapshot_cell", value))
        }
        pub(crate) fn load(&self) -> Guard<T> {
            Arc::clone(&self.0.lock())
        }
        pub(crate) fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
            // The lock is released before `f` runs, so loom sees writers interleave between the
            // load and whatever `f` does with the value, as they can with the real cell.
            let value = self.load();
            f(&value)
        }
        pub(crate) fn store(&self, value: Arc<T>) {
            *self.0.lock() = value;
        }
    }
}

/// An atomically replaceable `Arc<T>` (see the module doc).
pub struct SnapshotCell<T: Send + Sync>(imp::Cell<T>);

/// A loaded value; keeps it alive while held. Hold it briefly: it pins one snapshot.
pub struct SnapshotGuard<T>(imp::Guard<T>);

impl<T: Send + Sync> SnapshotCell<T> {
    /// A cell holding `value`.
    pub fn new(value: Arc<T>) -> Self {
        SnapshotCell(imp::Cell::new(value))
    }

    /// The current value, for observers: costs an `ArcSwap::load` and pins nothing afterwards.
    #[inline]
    pub fn load(&self) -> SnapshotGuard<T> {
        SnapshotGuard(self.0.load())
    }

    /// Runs `f` on the current value through this thread's cache (the hot path; module doc).
    #[inline]
    pub fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        self.0.read(f)
    }

    /// Replaces the value; later loads and reads see it (or a value stored after it).
    pub fn store(&self, value: Arc<T>) {
        self.0.store(value)
    }
}

impl<T> Deref for SnapshotGuard<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_read_after_a_store_sees_it_even_with_a_cached_value() {
        let cell = SnapshotCell::new(Arc::new(1));
        assert_eq!(cell.read(|v| *v), 1, "fills this thread's cache");
        cell.store(Arc::new(2));
        assert_eq!(cell.read(|v| *v), 2);
        assert_eq!(*cell.load(), 2);
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(cell.read(|v| *v), 2, "a new thread's first read"));
        });
    }

    #[test]
    fn a_nested_read_takes_the_shared_path() {
        let cell = SnapshotCell::new(Arc::new(7));
        let sum = cell.read(|outer| outer + cell.read(|inner| *inner));
        assert_eq!(sum, 14);
    }

    #[test]
    fn the_cache_pins_at_most_the_last_value_it_saw() {
        let first = Arc::new(1);
        let cell = SnapshotCell::new(Arc::clone(&first));
        cell.read(|_| ());
        cell.store(Arc::new(2));
        assert_eq!(Arc::strong_count(&first), 2, "ours and this thread's cache");
        cell.read(|_| ());
        assert_eq!(
            Arc::strong_count(&first),
            1,
            "released once the thread reads again"
        );
    }
}
