//! loom model of `core::sync` itself: proves the shim hands loom the real synchronisation, so the
//! registry and replication models built on it are checked rather than merely run.
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p critsec-core --release --test loom_sync`.
#![cfg(loom)]

use critsec_core::sync::primitive::{Arc, thread};
use critsec_core::sync::{Condvar, Mutex, RwLock};

#[test]
fn mutex_increments_are_not_lost() {
    loom::model(|| {
        let m = Arc::new(Mutex::new("loom.counter", 0u32));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let m = Arc::clone(&m);
                thread::spawn(move || *m.lock() += 1)
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*m.lock(), 2);
    });
}

#[test]
fn condvar_handoff_is_seen() {
    loom::model(|| {
        let pair = Arc::new((Mutex::new("loom.flag", false), Condvar::new()));
        let p2 = Arc::clone(&pair);
        let t = thread::spawn(move || {
            *p2.0.lock() = true;
            p2.1.notify_all();
        });
        let mut g = pair.0.lock();
        while !*g {
            pair.1.wait(&mut g);
        }
        drop(g);
        t.join().unwrap();
    });
}

#[test]
fn rwlock_writer_excludes_readers() {
    loom::model(|| {
        let l = Arc::new(RwLock::new("loom.rw", (0u32, 0u32)));
        let l2 = Arc::clone(&l);
        let w = thread::spawn(move || {
            let mut g = l2.write();
            g.0 += 1;
            g.1 += 1;
        });
        let (a, b) = *l.read();
        assert_eq!(a, b, "a reader saw half a write");
        w.join().unwrap();
    });
}
