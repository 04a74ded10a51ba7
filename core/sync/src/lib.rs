//! Instrumented locks: `Mutex`, `RwLock` and `Condvar` that count contended waits per lock name,
//! plus two JVM-faithful locks: `JdkReadWriteLock` (`ReentrantReadWriteLock`) and `Monitor`
//! (re-entrant `synchronized`).
//!
//! Layered like parking_lot: [`primitive`] picks the raw primitives (parking_lot normally, loom
//! under `cfg(loom)`), [`lock_stats`] keeps the per-name counters, and the wrappers add the
//! accounting. Beside them, [`SnapshotCell`] is an atomically replaceable `Arc`
//! for lock-free readers: arc-swap normally, a loom-visible cell under `cfg(loom)`. These two
//! modules are the only places in `core/` that pick an implementation by `cfg(loom)`. Every lock
//! protocol of the four systems uses these types, so one `--cfg loom` build model-checks all of
//! them, and one benchmark run can say which named lock threads waited on.
//!
//! [`kind`] is the strategy-kind idiom every system shares. This crate runs no benchmark and
//! knows no harness type; its contended-wait recorder is the only clock in `core/`.

#![deny(missing_docs)]

mod jdk_rwlock;
pub mod kind;
pub mod lock_stats;
mod monitor;
mod mutex;
pub mod primitive;
mod rwlock;
mod snapshot_cell;
#[cfg(all(test, not(loom)))]
mod tsan_canary;

pub use jdk_rwlock::{JdkReadGuard, JdkReadWriteLock, JdkWriteGuard, hold_counters_allocated};
pub use lock_stats::{
    LockStats, LockStatsSnapshot, lock_stats, lock_stats_enabled, reset_lock_stats,
    set_lock_stats_enabled,
};
pub use monitor::{Monitor, MonitorGuard};
pub use mutex::{Condvar, Mutex, MutexGuard};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use snapshot_cell::{SnapshotCell, SnapshotGuard};

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    fn stats_of(name: &str) -> LockStatsSnapshot {
        lock_stats()
            .into_iter()
            .find(|s| s.name == name)
            .expect("lock registered")
    }

    #[test]
    fn uncontended_acquisitions_are_not_counted() {
        let m = Mutex::new("test.sync.uncontended", 0u32);
        for _ in 0..1000 {
            *m.lock() += 1;
        }
        let l = RwLock::new("test.sync.uncontended_rw", 0u32);
        for _ in 0..1000 {
            let _r = l.read();
            let _r2 = l.read(); // two readers at once are not contention
        }
        *l.write() += 1;
        assert_eq!(*m.lock(), 1000);
        assert_eq!(stats_of("test.sync.uncontended").contended, 0);
        assert_eq!(stats_of("test.sync.uncontended_rw").contended, 0);
    }

    /// Holds a lock in `hold` while `contend` runs on another thread, releasing it after
    /// `patience`; repeats with doubled patience until the other thread was seen waiting, since
    /// only the scheduler decides when it reaches the lock. Returns the attempts made.
    fn until_contended(name: &str, mut attempt: impl FnMut(Duration)) -> u32 {
        let mut patience = Duration::from_millis(10);
        for tries in 1..=10 {
            attempt(patience);
            if stats_of(name).contended > 0 {
                return tries;
            }
            patience *= 2;
        }
        panic!("{name}: the other thread never reached the lock while it was held");
    }

    #[test]
    fn a_held_lock_makes_the_waiter_count_its_wait() {
        let m = Arc::new(Mutex::new("test.sync.contended", ()));
        until_contended("test.sync.contended", |patience| {
            let barrier = Arc::new(Barrier::new(2));
            let guard = m.lock();
            let waiter = {
                let (m, barrier) = (Arc::clone(&m), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    drop(m.lock());
                })
            };
            barrier.wait();
            std::thread::sleep(patience);
            drop(guard);
            waiter.join().unwrap();
        });
        let s = stats_of("test.sync.contended");
        assert_eq!(s.contended, 1, "one waiter waited once");
        assert!(s.wait_ns > 0 && s.max_wait_ns <= s.wait_ns);
    }

    #[test]
    fn a_writer_makes_a_reader_wait() {
        let l = Arc::new(RwLock::new("test.sync.rw_contended", 0u8));
        until_contended("test.sync.rw_contended", |patience| {
            let barrier = Arc::new(Barrier::new(2));
            let w = l.write();
            let reader = {
                let (l, barrier) = (Arc::clone(&l), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    *l.read()
                })
            };
            barrier.wait();
            std::thread::sleep(patience);
            drop(w);
            assert_eq!(reader.join().unwrap(), 0);
        });
        assert_eq!(stats_of("test.sync.rw_contended").contended, 1);
    }

    #[test]
    fn condvar_wait_releases_and_reacquires() {
        let pair = Arc::new((Mutex::new("test.sync.condvar", false), Condvar::new()));
        let t = {
            let pair = Arc::clone(&pair);
            std::thread::spawn(move || {
                *pair.0.lock() = true;
                pair.1.notify_all();
            })
        };
        let mut g = pair.0.lock();
        while !*g {
            pair.1.wait(&mut g);
        }
        t.join().unwrap();
        assert!(*g);
        assert!(pair.1.wait_for(&mut g, Duration::from_millis(1)));
    }
}
