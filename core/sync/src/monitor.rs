//! `Monitor<T>`: a [`Mutex`] with HotSpot `synchronized`'s re-entrancy, for code that enters the
//! same monitor again while holding it.
//!
//! Solr's `getCoreFromAnyList` holds `synchronized (modifyLock)` and calls
//! `getLoadedCoreWithoutIncrement`, itself `synchronized (modifyLock)`. HotSpot makes that inner
//! entry cheap but not free: it finds the monitor already owned by the current thread (a load of
//! the owner and a compare) and counts the recursion (`_recursions++`, or one more lock-stack
//! entry with lightweight locking), then undoes the count on exit. [`MonitorGuard::reenter`] does
//! the same: an owner check and a recursion count, stored by the owner only.

use super::mutex::{Condvar, Mutex, MutexGuard};
use super::primitive::{AtomicU32, AtomicU64, Ordering, thread_local};
use std::ops::{Deref, DerefMut};

thread_local! {
    /// A non-zero id per thread: the monitor's owner field holds it.
    static THREAD_ID: u64 = {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    };
}

/// A re-entrant monitor: a named [`Mutex`] plus an owner and a recursion count.
pub struct Monitor<T> {
    lock: Mutex<T>,
    owner: AtomicU64,
    recursions: AtomicU32,
}

/// Proof of owning a [`Monitor`]; exits it on drop.
pub struct MonitorGuard<'a, T> {
    monitor: &'a Monitor<T>,
    guard: MutexGuard<'a, T>,
}

impl<T> Monitor<T> {
    /// A new monitor named `name` (its lock statistics are the mutex's).
    pub fn new(name: &'static str, value: T) -> Self {
        Monitor {
            lock: Mutex::new(name, value),
            owner: AtomicU64::new(0),
            recursions: AtomicU32::new(0),
        }
    }

    /// `monitorenter` by a thread that does not own the monitor yet.
    #[inline]
    pub fn enter(&self) -> MonitorGuard<'_, T> {
        let guard = self.lock.lock();
        self.owner.store(THREAD_ID.with(|t| *t), Ordering::Relaxed);
        MonitorGuard {
            monitor: self,
            guard,
        }
    }

    /// The monitor's lock statistics name.
    pub fn name(&self) -> &'static str {
        self.lock.name()
    }
}

impl<T> MonitorGuard<'_, T> {
    /// A nested `synchronized` block on the monitor this guard owns: runs `f` at one more
    /// recursion level, as HotSpot's recursive enter and exit. What `f` returns may borrow the
    /// value: like a reference returned from a nested `synchronized` method, it outlives the
    /// nested block but not the outer one.
    #[inline]
    pub fn reenter<'g, R>(&'g self, f: impl FnOnce(&'g T) -> R) -> R {
        let m = self.monitor;
        assert_eq!(
            m.owner.load(Ordering::Relaxed),
            THREAD_ID.with(|t| *t),
            "re-entered a monitor this thread does not own"
        );
        let depth = m.recursions.load(Ordering::Relaxed);
        m.recursions.store(depth + 1, Ordering::Relaxed);
        let r = f(&self.guard);
        m.recursions.store(depth, Ordering::Relaxed);
        r
    }

    /// `Object.wait()`: gives up the monitor (owner cleared) while waiting on `cv`.
    pub fn wait(&mut self, cv: &Condvar) {
        self.monitor.owner.store(0, Ordering::Relaxed);
        cv.wait(&mut self.guard);
        self.monitor
            .owner
            .store(THREAD_ID.with(|t| *t), Ordering::Relaxed);
    }
}

impl<T> Drop for MonitorGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Cleared before the mutex guard (a field) releases the lock.
        self.monitor.owner.store(0, Ordering::Relaxed);
    }
}

impl<T> Deref for MonitorGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for MonitorGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_owner_reenters_and_the_count_unwinds() {
        let m = Monitor::new("test.monitor", 1);
        let mut g = m.enter();
        *g += 1;
        let inner = g.reenter(|v| *v);
        assert_eq!(inner, 2);
        assert_eq!(m.recursions.load(Ordering::Relaxed), 0);
        assert_ne!(m.owner.load(Ordering::Relaxed), 0);
        drop(g);
        assert_eq!(m.owner.load(Ordering::Relaxed), 0);
    }
}
