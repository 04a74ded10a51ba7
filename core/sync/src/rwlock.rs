//! `RwLock<T>`: a raw read-write lock plus contended-wait accounting under a static name.

use super::lock_stats::{LockStats, lock_stats_enabled};
use super::primitive::{self, RawRwLock, RawRwLockReadGuard, RawRwLockWriteGuard};
use std::fmt;
use std::time::Instant;

/// A read-write lock that counts contended acquisitions of either kind, like [`super::Mutex`].
///
/// Note what the Solr reviewer measured: even an uncontended read acquisition writes the lock's
/// shared state word, so many readers on many cores still fight over one cache line.
pub struct RwLock<T> {
    raw: RawRwLock<T>,
    stats: &'static LockStats,
}

/// Shared access to an [`RwLock`]'s value.
pub type RwLockReadGuard<'a, T> = RawRwLockReadGuard<'a, T>;
/// Exclusive access to an [`RwLock`]'s value.
pub type RwLockWriteGuard<'a, T> = RawRwLockWriteGuard<'a, T>;

impl<T> RwLock<T> {
    /// A new lock named `name`; all locks of one name share their statistics.
    pub fn new(name: &'static str, value: T) -> Self {
        RwLock {
            raw: RawRwLock::new(value),
            stats: LockStats::for_name(name),
        }
    }

    /// Shared access, recording the wait if a writer held the lock.
    #[inline]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        match primitive::raw_try_read(&self.raw) {
            Some(g) => g,
            None => self.read_contended(),
        }
    }

    #[cold]
    fn read_contended(&self) -> RwLockReadGuard<'_, T> {
        if !lock_stats_enabled() {
            return primitive::raw_read(&self.raw);
        }
        let start = Instant::now();
        let g = primitive::raw_read(&self.raw);
        self.stats.record_wait(start.elapsed());
        g
    }

    /// Exclusive access, recording the wait if anyone held the lock.
    #[inline]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        match primitive::raw_try_write(&self.raw) {
            Some(g) => g,
            None => self.write_contended(),
        }
    }

    #[cold]
    fn write_contended(&self) -> RwLockWriteGuard<'_, T> {
        if !lock_stats_enabled() {
            return primitive::raw_write(&self.raw);
        }
        let start = Instant::now();
        let g = primitive::raw_write(&self.raw);
        self.stats.record_wait(start.elapsed());
        g
    }

    /// The lock's name.
    pub fn name(&self) -> &'static str {
        self.stats.name()
    }
}

impl<T> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RwLock")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}
