//! The one place that chooses between real primitives and loom's model-checked ones.
//!
//! Every lock protocol in `core` takes its atomics, `Arc`, threads, thread-locals and raw locks
//! from here, so building with `RUSTFLAGS="--cfg loom"` swaps all of them at once and loom sees
//! every synchronisation step of the protocol under test. Nothing else in the crate may name
//! `loom` or pick a primitive by `cfg`, except `sync/snapshot_cell.rs` next door: arc-swap has no
//! loom counterpart, so that cell swaps it for a loom-visible one built from these primitives.

// The re-exported names are std's and loom's own, documented there.
#![allow(missing_docs)]

#[cfg(not(loom))]
mod imp {
    pub use std::sync::Arc;
    pub use std::sync::atomic::{
        AtomicBool, AtomicI32, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
    };
    pub use std::thread;
    pub use std::thread_local;

    /// std's `UnsafeCell` behind loom's pointer API, so lock implementations written against
    /// loom's cell (which checks every access for races) compile unchanged without loom.
    #[derive(Debug)]
    pub struct UnsafeCell<T>(std::cell::UnsafeCell<T>);
    /// A shared access to an [`UnsafeCell`]'s value (loom tracks it while alive).
    #[derive(Debug)]
    pub struct ConstPtr<T>(*const T);
    /// An exclusive access to an [`UnsafeCell`]'s value.
    #[derive(Debug)]
    pub struct MutPtr<T>(*mut T);
    impl<T> UnsafeCell<T> {
        pub fn new(value: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(value))
        }
        #[inline]
        pub fn get(&self) -> ConstPtr<T> {
            ConstPtr(self.0.get())
        }
        #[inline]
        pub fn get_mut(&self) -> MutPtr<T> {
            MutPtr(self.0.get())
        }
    }
    impl<T> ConstPtr<T> {
        /// # Safety
        /// No exclusive access to the value may exist while the reference lives.
        #[inline]
        pub unsafe fn deref(&self) -> &T {
            unsafe { &*self.0 }
        }
    }
    impl<T> MutPtr<T> {
        /// # Safety
        /// No other access to the value may exist while the reference lives.
        #[inline]
        #[allow(clippy::mut_from_ref)]
        pub unsafe fn deref(&self) -> &mut T {
            unsafe { &mut *self.0 }
        }
    }

    /// The raw mutex under `sync::Mutex`: parking_lot's, for its small uncontended path.
    pub type RawMutex<T> = parking_lot::Mutex<T>;
    /// The raw read-write lock under `sync::RwLock`: parking_lot's task-fair lock.
    pub type RawRwLock<T> = parking_lot::RwLock<T>;
    pub type RawMutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
    pub type RawRwLockReadGuard<'a, T> = parking_lot::RwLockReadGuard<'a, T>;
    pub type RawRwLockWriteGuard<'a, T> = parking_lot::RwLockWriteGuard<'a, T>;
    pub type RawCondvar = parking_lot::Condvar;

    #[inline]
    pub fn raw_lock<T>(m: &RawMutex<T>) -> RawMutexGuard<'_, T> {
        m.lock()
    }
    #[inline]
    pub fn raw_try_lock<T>(m: &RawMutex<T>) -> Option<RawMutexGuard<'_, T>> {
        m.try_lock()
    }
    #[inline]
    pub fn raw_read<T>(l: &RawRwLock<T>) -> RawRwLockReadGuard<'_, T> {
        l.read()
    }
    #[inline]
    pub fn raw_try_read<T>(l: &RawRwLock<T>) -> Option<RawRwLockReadGuard<'_, T>> {
        l.try_read()
    }
    #[inline]
    pub fn raw_write<T>(l: &RawRwLock<T>) -> RawRwLockWriteGuard<'_, T> {
        l.write()
    }
    #[inline]
    pub fn raw_try_write<T>(l: &RawRwLock<T>) -> Option<RawRwLockWriteGuard<'_, T>> {
        l.try_write()
    }
    /// Waits on `cv`, releasing and re-taking the mutex behind `guard`.
    pub fn raw_wait<'a, T>(
        cv: &RawCondvar,
        mut guard: RawMutexGuard<'a, T>,
    ) -> RawMutexGuard<'a, T> {
        cv.wait(&mut guard);
        guard
    }
    /// Like [`raw_wait`] with a deadline; the flag is true when it timed out.
    pub fn raw_wait_for<'a, T>(
        cv: &RawCondvar,
        mut guard: RawMutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> (RawMutexGuard<'a, T>, bool) {
        let r = cv.wait_for(&mut guard, timeout);
        (guard, r.timed_out())
    }
}

#[cfg(loom)]
mod imp {
    pub use loom::cell::{ConstPtr, MutPtr, UnsafeCell};
    pub use loom::sync::Arc;
    pub use loom::sync::atomic::{
        AtomicBool, AtomicI32, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
    };
    pub use loom::thread;
    pub use loom::thread_local;

    pub type RawMutex<T> = loom::sync::Mutex<T>;
    pub type RawRwLock<T> = loom::sync::RwLock<T>;
    pub type RawMutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;
    pub type RawRwLockReadGuard<'a, T> = loom::sync::RwLockReadGuard<'a, T>;
    pub type RawRwLockWriteGuard<'a, T> = loom::sync::RwLockWriteGuard<'a, T>;
    pub type RawCondvar = loom::sync::Condvar;

    // loom's locks report poisoning like std's; a panicking model thread fails the model anyway,
    // so unwrapping here loses nothing.
    pub fn raw_lock<T>(m: &RawMutex<T>) -> RawMutexGuard<'_, T> {
        m.lock().unwrap()
    }
    pub fn raw_try_lock<T>(m: &RawMutex<T>) -> Option<RawMutexGuard<'_, T>> {
        m.try_lock().ok()
    }
    pub fn raw_read<T>(l: &RawRwLock<T>) -> RawRwLockReadGuard<'_, T> {
        l.read().unwrap()
    }
    pub fn raw_try_read<T>(l: &RawRwLock<T>) -> Option<RawRwLockReadGuard<'_, T>> {
        l.try_read().ok()
    }
    pub fn raw_write<T>(l: &RawRwLock<T>) -> RawRwLockWriteGuard<'_, T> {
        l.write().unwrap()
    }
    pub fn raw_try_write<T>(l: &RawRwLock<T>) -> Option<RawRwLockWriteGuard<'_, T>> {
        l.try_write().ok()
    }
    pub fn raw_wait<'a, T>(cv: &RawCondvar, guard: RawMutexGuard<'a, T>) -> RawMutexGuard<'a, T> {
        cv.wait(guard).unwrap()
    }
    /// loom has no time: a timed wait is modelled as a wait that may also return on its own,
    /// which explores both the "notified" and the "timed out" outcome.
    pub fn raw_wait_for<'a, T>(
        cv: &RawCondvar,
        guard: RawMutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> (RawMutexGuard<'a, T>, bool) {
        let (g, r) = cv.wait_timeout(guard, timeout).unwrap();
        (g, r.timed_out())
    }
}

pub use imp::*;
