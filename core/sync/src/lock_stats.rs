//! Contended-wait accounting per named lock: our analogue of a JFR "monitor enter" profile.
//!
//! The Solr story was diagnosed from JFR snapshots showing accumulated halts on one monitor.
//! Each instrumented lock carries a static name; every lock with the same name adds to the same
//! [`LockStats`], so the figures read per lock *kind* (say `registry.modify_lock`), not per
//! instance. Only acquisitions whose `try_lock` failed are recorded: the uncontended path stays
//! one `try_lock` long and never reads the clock.
//!
//! Instruments must not change what they measure, so a recorded wait touches no shared line:
//! each thread accumulates into its own cache-padded cell (a plain load and store of atomics only
//! it writes, no read-modify-write), and [`lock_stats`] sums the cells when the probe reads them,
//! between iterations. [`set_lock_stats_enabled`] turns recording off entirely: a contended
//! acquisition then does exactly what the raw lock does. What remains with statistics on is the
//! clock read around a contended wait (the end of the wait is the moment the lock was granted, so
//! one `Instant::now` runs after acquisition) and the store into the thread's own cell.

use crossbeam_utils::CachePadded;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use thread_local::ThreadLocal;

/// Whether contended waits are recorded at all (on by default).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns lock statistics on or off for every lock. Off, a contended acquisition reads no clock
/// and writes no counter. Meant to be set before measured threads start.
pub fn set_lock_stats_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether lock statistics are being recorded.
#[inline]
pub fn lock_stats_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// One thread's counters for one lock name; only that thread writes them.
#[derive(Default)]
struct ThreadWaits {
    contended: AtomicU64,
    wait_ns: AtomicU64,
    max_wait_ns: AtomicU64,
}

impl ThreadWaits {
    /// Adds one wait with a load and a store per counter: the owner is the only writer, so no
    /// read-modify-write (and no locked instruction) is needed.
    fn add(&self, ns: u64) {
        let bump = |a: &AtomicU64, v: u64| a.store(v, Ordering::Relaxed);
        bump(&self.contended, self.contended.load(Ordering::Relaxed) + 1);
        bump(
            &self.wait_ns,
            self.wait_ns.load(Ordering::Relaxed).saturating_add(ns),
        );
        if ns > self.max_wait_ns.load(Ordering::Relaxed) {
            bump(&self.max_wait_ns, ns);
        }
    }
}

/// Counters for one lock name: one cell per thread that ever waited on a lock of that name.
pub struct LockStats {
    name: &'static str,
    threads: ThreadLocal<CachePadded<ThreadWaits>>,
}

impl std::fmt::Debug for LockStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockStats")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
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
            threads: ThreadLocal::new(),
        }));
        all.push(s);
        s
    }

    /// The lock's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Records one contended acquisition that waited `waited`, in the calling thread's cell.
    pub fn record_wait(&self, waited: Duration) {
        let ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        self.threads.get_or_default().add(ns);
    }

    /// A copy of the counters, summed over threads. Exact once the recording threads have
    /// stopped (or reported); while they run, a sum may miss their latest waits.
    pub fn snapshot(&self) -> LockStatsSnapshot {
        let mut s = LockStatsSnapshot {
            name: self.name,
            contended: 0,
            wait_ns: 0,
            max_wait_ns: 0,
        };
        for t in self.threads.iter() {
            s.contended += t.contended.load(Ordering::Relaxed);
            s.wait_ns = s.wait_ns.saturating_add(t.wait_ns.load(Ordering::Relaxed));
            s.max_wait_ns = s.max_wait_ns.max(t.max_wait_ns.load(Ordering::Relaxed));
        }
        s
    }

    /// Zeroes every thread's cell. Call it while no thread is recording (between iterations):
    /// a wait recorded concurrently may survive the reset.
    fn reset(&self) {
        for t in self.threads.iter() {
            t.contended.store(0, Ordering::Relaxed);
            t.wait_ns.store(0, Ordering::Relaxed);
            t.max_wait_ns.store(0, Ordering::Relaxed);
        }
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
