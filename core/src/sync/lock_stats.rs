//! Contended-wait accounting per named lock: our analogue of a JFR "monitor enter" profile.
//!
//! The Solr story was diagnosed from JFR snapshots showing accumulated halts on one monitor.
//! Each instrumented lock carries a static name; every lock with the same name adds to the same
//! [`LockStats`], so the figures read per lock *kind* (say `registry.modify_lock`), not per
//! instance. Only acquisitions whose `try_lock` failed are recorded: the uncontended path stays
//! one `try_lock` long and never reads the clock.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Counters for one lock name. All updates are `Relaxed`: they are statistics read after the
/// measured threads have reported, never used to order other memory.
#[derive(Debug)]
pub struct LockStats {
    name: &'static str,
    contended: AtomicU64,
    wait_ns: AtomicU64,
    max_wait_ns: AtomicU64,
}

/// A point-in-time copy of one lock's counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockStatsSnapshot {
    /// The lock's static name.
    pub name: &'static str,
    /// Acquisitions that found the lock held and had to wait.
    pub contended: u64,
    /// Total time spent waiting in those acquisitions, in nanoseconds.
    pub wait_ns: u64,
    /// The longest single wait, in nanoseconds.
    pub max_wait_ns: u64,
}

impl LockStats {
    /// The shared counters for `name`, created on first use and never freed (names are static
    /// and few, so the registry stays small).
    pub fn for_name(name: &'static str) -> &'static LockStats {
        let mut all = registry().lock();
        if let Some(s) = all.iter().find(|s| s.name == name) {
            return s;
        }
        let s: &'static LockStats = Box::leak(Box::new(LockStats {
            name,
            contended: AtomicU64::new(0),
            wait_ns: AtomicU64::new(0),
            max_wait_ns: AtomicU64::new(0),
        }));
        all.push(s);
        s
    }

    /// Records one contended acquisition that waited `waited`.
    pub fn record_wait(&self, waited: Duration) {
        let ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        self.contended.fetch_add(1, Ordering::Relaxed);
        self.wait_ns.fetch_add(ns, Ordering::Relaxed);
        self.max_wait_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// A copy of the counters.
    pub fn snapshot(&self) -> LockStatsSnapshot {
        LockStatsSnapshot {
            name: self.name,
            contended: self.contended.load(Ordering::Relaxed),
            wait_ns: self.wait_ns.load(Ordering::Relaxed),
            max_wait_ns: self.max_wait_ns.load(Ordering::Relaxed),
        }
    }

    fn reset(&self) {
        self.contended.store(0, Ordering::Relaxed);
        self.wait_ns.store(0, Ordering::Relaxed);
        self.max_wait_ns.store(0, Ordering::Relaxed);
    }
}

fn registry() -> &'static parking_lot::Mutex<Vec<&'static LockStats>> {
    static REGISTRY: OnceLock<parking_lot::Mutex<Vec<&'static LockStats>>> = OnceLock::new();
    REGISTRY.get_or_init(|| parking_lot::Mutex::new(Vec::new()))
}

/// Copies of every named lock's counters, sorted by name.
pub fn lock_stats() -> Vec<LockStatsSnapshot> {
    let mut v: Vec<_> = registry().lock().iter().map(|s| s.snapshot()).collect();
    v.sort_by_key(|s| s.name);
    v
}

/// Zeroes every lock's counters, e.g. at the start of a measured iteration.
pub fn reset_lock_stats() {
    for s in registry().lock().iter() {
        s.reset();
    }
}
