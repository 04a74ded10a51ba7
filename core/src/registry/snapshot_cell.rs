//! `SnapshotCell`: the snapshot registry's published pointer; the one place chosen by `cfg`.
//!
//! Normally an `arc_swap::ArcSwap`: a load costs a few uncontended atomic operations on
//! thread-local debt slots, never a shared write, so readers do not fight over a cache line.
//! arc-swap is not loom-aware, so under `cfg(loom)` the cell is a loom-visible `Mutex<Arc<T>>`
//! with the same contract. That contract is all the registry relies on: `store` replaces the
//! pointer atomically, and a `load` that happens after a `store` returns that value or a later one
//! (both ArcSwap, whose operations are `SeqCst`, and a mutex give this). loom then checks our
//! reference-count protocol against every interleaving of loads and stores, not arc-swap's
//! internals, which arc-swap's own tests cover.

use crate::sync::primitive::Arc;
use std::ops::Deref;

#[cfg(not(loom))]
mod imp {
    use super::Arc;

    pub(crate) struct Cell<T>(arc_swap::ArcSwap<T>);
    pub(crate) type Guard<T> = arc_swap::Guard<Arc<T>>;

    impl<T> Cell<T> {
        pub(crate) fn new(value: Arc<T>) -> Self {
            Cell(arc_swap::ArcSwap::new(value))
        }
        #[inline]
        pub(crate) fn load(&self) -> Guard<T> {
            self.0.load()
        }
        pub(crate) fn store(&self, value: Arc<T>) {
            self.0.store(value);
        }
    }
}

#[cfg(loom)]
mod imp {
    use super::Arc;
    use crate::sync::Mutex;

    pub(crate) struct Cell<T>(Mutex<Arc<T>>);
    pub(crate) type Guard<T> = Arc<T>;

    impl<T> Cell<T> {
        pub(crate) fn new(value: Arc<T>) -> Self {
            Cell(Mutex::new("registry.snapshot_cell", value))
        }
        pub(crate) fn load(&self) -> Guard<T> {
            Arc::clone(&self.0.lock())
        }
        pub(crate) fn store(&self, value: Arc<T>) {
            *self.0.lock() = value;
        }
    }
}

/// An atomically replaceable `Arc<T>` (see the module doc).
pub(crate) struct SnapshotCell<T>(imp::Cell<T>);

/// A loaded value; keeps it alive while held. Hold it briefly: it pins one snapshot.
pub(crate) struct SnapshotGuard<T>(imp::Guard<T>);

impl<T> SnapshotCell<T> {
    /// A cell holding `value`.
    pub(crate) fn new(value: Arc<T>) -> Self {
        SnapshotCell(imp::Cell::new(value))
    }

    /// The current value.
    #[inline]
    pub(crate) fn load(&self) -> SnapshotGuard<T> {
        SnapshotGuard(self.0.load())
    }

    /// Replaces the value; later loads return it (or a value stored after it).
    pub(crate) fn store(&self, value: Arc<T>) {
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
