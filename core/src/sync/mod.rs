//! Instrumented locks: `Mutex`, `RwLock` and `Condvar` that count contended waits per lock name.
//!
//! Layered like parking_lot: [`primitive`] picks the raw primitives (parking_lot normally, loom
//! under `cfg(loom)`), [`lock_stats`] keeps the per-name counters, and the wrappers add the
//! accounting. Every lock protocol in `core` uses these types, so one `--cfg loom` build model-
//! checks all of them, and one benchmark run can say which named lock threads waited on.

pub mod lock_stats;
mod mutex;
pub mod primitive;
mod rwlock;

pub use lock_stats::{LockStats, LockStatsSnapshot, lock_stats, reset_lock_stats};
pub use mutex::{Condvar, Mutex, MutexGuard};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};

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

    #[test]
    fn a_held_lock_makes_the_waiter_count_its_wait() {
        let m = Arc::new(Mutex::new("test.sync.contended", ()));
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
        // The waiter can only get the lock after we release it; sleeping is not an assertion on
        // time, it just makes sure the waiter has reached `lock()` before the release.
        std::thread::sleep(Duration::from_millis(20));
        drop(guard);
        waiter.join().unwrap();
        let s = stats_of("test.sync.contended");
        assert_eq!(s.contended, 1);
        assert!(s.wait_ns > 0 && s.max_wait_ns <= s.wait_ns);
    }

    #[test]
    fn a_writer_makes_a_reader_wait() {
        let l = Arc::new(RwLock::new("test.sync.rw_contended", 0u8));
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
        std::thread::sleep(Duration::from_millis(20));
        drop(w);
        assert_eq!(reader.join().unwrap(), 0);
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
