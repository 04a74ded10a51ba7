//! The lock-statistics switch, in its own process: it is global, and turning it off inside the
//! library's unit tests would race with the tests that expect waits to be counted.
#![cfg(not(loom))]

use critsec_sync::{Mutex, lock_stats, set_lock_stats_enabled};
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn contended(name: &str) -> u64 {
    lock_stats()
        .into_iter()
        .find(|s| s.name == name)
        .map_or(0, |s| s.contended)
}

/// Makes another thread wait on `m` for `patience`; true if it was seen waiting (by stats on the
/// control lock, or by the raw lock's own state).
fn make_wait(m: &Arc<Mutex<()>>, patience: Duration) {
    let barrier = Arc::new(Barrier::new(2));
    let guard = m.lock();
    let waiter = {
        let (m, barrier) = (Arc::clone(m), Arc::clone(&barrier));
        std::thread::spawn(move || {
            barrier.wait();
            drop(m.lock());
        })
    };
    barrier.wait();
    std::thread::sleep(patience);
    drop(guard);
    waiter.join().unwrap();
}

#[test]
fn with_statistics_off_a_contended_wait_is_not_recorded() {
    // Control: with statistics on, the same procedure records a wait (retrying with more patience
    // until the scheduler lets the waiter reach the lock while it is held).
    let on = Arc::new(Mutex::new("test.switch.on", ()));
    let mut patience = Duration::from_millis(10);
    while contended("test.switch.on") == 0 {
        assert!(patience < Duration::from_secs(6), "the waiter never waited");
        make_wait(&on, patience);
        patience *= 2;
    }
    set_lock_stats_enabled(false);
    let off = Arc::new(Mutex::new("test.switch.off", ()));
    make_wait(&off, patience);
    set_lock_stats_enabled(true);
    assert_eq!(contended("test.switch.off"), 0);
}
