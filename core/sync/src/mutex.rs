//! `Mutex<T>`: a raw mutex plus contended-wait accounting under a static name.

use super::lock_stats::{LockStats, lock_stats_enabled};
use super::primitive::{self, RawCondvar, RawMutex, RawMutexGuard};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

/// A mutual-exclusion lock that counts how often, and how long, callers waited for it.
///
/// The fast path is `try_lock`; only when that fails is the clock read and the wait recorded
/// (in the waiting thread's own cell, see [`super::lock_stats`]), so an uncontended acquisition
/// costs exactly the raw lock's `try_lock`.
pub struct Mutex<T> {
    raw: RawMutex<T>,
    stats: &'static LockStats,
}

/// Proof of holding a [`Mutex`]; unlocks on drop.
pub struct MutexGuard<'a, T> {
    // `Option` only so that a condition-variable wait can move the raw guard out and back;
    // it is `Some` whenever user code can see the guard.
    raw: Option<RawMutexGuard<'a, T>>,
}

impl<T> Mutex<T> {
    /// A new lock named `name`; all locks of one name share their statistics.
    pub fn new(name: &'static str, value: T) -> Self {
        Mutex {
            raw: RawMutex::new(value),
            stats: LockStats::for_name(name),
        }
    }

    /// Acquires the lock, recording the wait if it was held.
    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        match primitive::raw_try_lock(&self.raw) {
            Some(g) => MutexGuard { raw: Some(g) },
            None => self.lock_contended(),
        }
    }

    #[cold]
    fn lock_contended(&self) -> MutexGuard<'_, T> {
        if !lock_stats_enabled() {
            return MutexGuard {
                raw: Some(primitive::raw_lock(&self.raw)),
            };
        }
        let start = Instant::now();
        let g = primitive::raw_lock(&self.raw);
        self.stats.record_wait(start.elapsed());
        MutexGuard { raw: Some(g) }
    }

    /// Acquires the lock only if it is free right now.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        primitive::raw_try_lock(&self.raw).map(|g| MutexGuard { raw: Some(g) })
    }

    /// The lock's name.
    pub fn name(&self) -> &'static str {
        self.stats.name()
    }
}

impl<T: fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutex")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.raw.as_ref().expect("guard present outside a wait")
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.raw.as_mut().expect("guard present outside a wait")
    }
}

/// A condition variable used with [`Mutex`], like Java's `Object.wait/notifyAll` on a monitor.
#[derive(Default)]
pub struct Condvar {
    raw: RawCondvar,
}

impl Condvar {
    /// A new condition variable.
    pub fn new() -> Self {
        Condvar {
            raw: RawCondvar::new(),
        }
    }

    /// Releases the lock behind `guard`, waits for a notification, and re-acquires it.
    /// Spurious wake-ups are possible: callers wait in a loop on their predicate.
    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        let g = guard.raw.take().expect("guard present outside a wait");
        guard.raw = Some(primitive::raw_wait(&self.raw, g));
    }

    /// Like [`Condvar::wait`], giving up after `timeout`; returns true if it timed out.
    pub fn wait_for<T>(&self, guard: &mut MutexGuard<'_, T>, timeout: Duration) -> bool {
        let g = guard.raw.take().expect("guard present outside a wait");
        let (g, timed_out) = primitive::raw_wait_for(&self.raw, g, timeout);
        guard.raw = Some(g);
        timed_out
    }

    /// Wakes one waiter.
    pub fn notify_one(&self) {
        self.raw.notify_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.raw.notify_all();
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Condvar")
    }
}
