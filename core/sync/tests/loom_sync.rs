//! loom model of `core::sync` itself: proves the shim hands loom the real synchronisation, so the
//! registry and replication models built on it are checked rather than merely run.
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p critsec-sync --release --test loom_sync`.
#![cfg(loom)]

use critsec_sync::primitive::{Arc, thread};
use critsec_sync::{Condvar, Mutex, RwLock};

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

/// Preemptions per execution for the `JdkReadWriteLock` models: 2 by default (about a minute
/// in CI), 3 with `CRITSEC_LONG=1` (the project's switch for long runs).
fn jdk_model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    let long = std::env::var("CRITSEC_LONG").is_ok_and(|v| v == "1");
    builder.preemption_bound = Some(if long { 3 } else { 2 });
    builder.check(f);
}

#[test]
fn jdk_rwlock_writer_excludes_readers_and_readers_share() {
    use critsec_sync::JdkReadWriteLock;
    jdk_model(|| {
        let l = Arc::new(JdkReadWriteLock::new("loom.jdk", (0u32, 0u32)));
        let w = {
            let l = Arc::clone(&l);
            thread::spawn(move || {
                let mut g = l.write();
                g.0 += 1;
                g.1 += 1;
            })
        };
        let r = {
            let l = Arc::clone(&l);
            thread::spawn(move || {
                let (a, b) = *l.read();
                assert_eq!(a, b, "a reader saw half a write");
            })
        };
        let (a, b) = *l.read();
        assert_eq!(a, b, "a reader saw half a write");
        w.join().unwrap();
        r.join().unwrap();
        assert_eq!(*l.read(), (1, 1));
        assert!(!l.has_queued_threads());
    });
}

#[test]
fn jdk_rwlock_writers_lose_no_increment_and_no_wake_up() {
    use critsec_sync::JdkReadWriteLock;
    jdk_model(|| {
        let l = Arc::new(JdkReadWriteLock::new("loom.jdk_w", 0u32));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let l = Arc::clone(&l);
                thread::spawn(move || *l.write() += 1)
            })
            .collect();
        *l.write() += 1;
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*l.read(), 3);
    });
}

#[test]
fn jdk_rwlock_reentrant_read_passes_a_queued_writer() {
    use critsec_sync::JdkReadWriteLock;
    jdk_model(|| {
        let l = Arc::new(JdkReadWriteLock::new("loom.jdk_re", 0u32));
        let outer = l.read();
        let w = {
            let l = Arc::clone(&l);
            thread::spawn(move || *l.write() += 1)
        };
        // Whether or not the writer has queued yet, a nested read must not wait for it.
        let inner = l.read();
        assert_eq!(l.read_hold_count(), 2);
        drop(inner);
        drop(outer);
        w.join().unwrap();
        assert_eq!(*l.read(), 1);
    });
}

/// The checker checked: without the RMW read before a queued try, a waiter and a releaser can
/// each miss the other's write (store buffering), and the waiter sleeps forever. loom must report
/// the deadlock. loom's clean-up after that report aborts the process, so the model runs in a child
/// process (this test binary again, filtered to this test) and the parent reads its output.
#[test]
fn jdk_rwlock_without_the_rmw_read_loses_a_wake_up() {
    use critsec_sync::JdkReadWriteLock;
    const NAME: &str = "jdk_rwlock_without_the_rmw_read_loses_a_wake_up";
    if std::env::var_os("CRITSEC_LOOM_MUTANT").is_some() {
        jdk_model(|| {
            let l = Arc::new(JdkReadWriteLock::mutant_without_rmw_read(
                "loom.jdk_mutant",
                0u32,
            ));
            let w = {
                let l = Arc::clone(&l);
                thread::spawn(move || *l.write() += 1)
            };
            *l.write() += 1;
            w.join().unwrap();
        });
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env("CRITSEC_LOOM_MUTANT", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "loom passed the broken lock");
    assert!(
        stderr.contains("deadlock"),
        "the broken lock failed, but not by a deadlock: {stderr}"
    );
}
