//! loom model of the threads driver's wait/wake hand-off (`replication::driver::threads::signal`): a pool
//! thread blocked in its command is never left asleep, whatever the interleaving.
//! Run with `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p critsec-replication
//! --release --test loom_replication`.
#![cfg(loom)]

use std::collections::VecDeque;

use critsec_replication::threads::{SlotEvent, SlotSignal};
use critsec_sync::Mutex;
use critsec_sync::primitive::{Arc, thread};

/// Resume then Freed, posted by another thread at any point relative to the wait, both arrive in
/// order and the waiter ends.
#[test]
fn resume_then_freed_reach_the_waiter() {
    loom::model(|| {
        let s = Arc::new(SlotSignal::new());
        let poster = {
            let s = Arc::clone(&s);
            thread::spawn(move || {
                s.post(SlotEvent::Resume);
                s.post(SlotEvent::Freed);
            })
        };
        assert_eq!(s.wait().0, SlotEvent::Resume);
        assert_eq!(s.wait().0, SlotEvent::Freed);
        poster.join().unwrap();
    });
}

/// Shutdown wakes a waiter that nothing else will wake.
#[test]
fn stop_wakes_a_blocked_waiter() {
    loom::model(|| {
        let s = Arc::new(SlotSignal::new());
        let w = {
            let s = Arc::clone(&s);
            thread::spawn(move || s.wait().0)
        };
        s.post(SlotEvent::Stop);
        assert_eq!(w.join().unwrap(), SlotEvent::Stop);
    });
}

/// The driver's key-lock protocol in miniature: the node state (a logical lock with FIFO waiters
/// and each waiter's signal, as the machine and the driver keep them) lives behind the node
/// mutex; a thread that finds the key locked registers and waits on its signal outside the
/// mutex; the releaser hands the lock over under the mutex and posts `Resume` after releasing
/// it. Both commands get the lock, one at a time, and nobody sleeps forever.
#[test]
fn key_lock_hand_off_through_signals() {
    struct Node {
        holder: Option<usize>,
        waiters: VecDeque<(usize, Arc<SlotSignal>)>,
        inside: usize,
        done: usize,
    }
    loom::model(|| {
        let node = Arc::new(Mutex::new(
            "loom.replication.node",
            Node {
                holder: None,
                waiters: VecDeque::new(),
                inside: 0,
                done: 0,
            },
        ));
        let command = |me: usize, node: Arc<Mutex<Node>>| {
            move || {
                let signal = Arc::new(SlotSignal::new());
                let queued = {
                    let mut n = node.lock();
                    if n.holder.is_none() {
                        n.holder = Some(me);
                        false
                    } else {
                        n.waiters.push_back((me, Arc::clone(&signal)));
                        true
                    }
                };
                if queued {
                    assert_eq!(signal.wait().0, SlotEvent::Resume);
                }
                let next = {
                    let mut n = node.lock();
                    assert_eq!(n.holder, Some(me), "resumed without the lock");
                    n.inside += 1;
                    assert_eq!(n.inside, 1, "two holders at once");
                    n.inside -= 1;
                    n.done += 1;
                    let next = n.waiters.pop_front();
                    n.holder = next.as_ref().map(|(id, _)| *id);
                    next
                };
                if let Some((_, s)) = next {
                    s.post(SlotEvent::Resume);
                }
            }
        };
        let a = thread::spawn(command(0, Arc::clone(&node)));
        let b = thread::spawn(command(1, Arc::clone(&node)));
        a.join().unwrap();
        b.join().unwrap();
        let n = node.lock();
        assert_eq!((n.done, n.holder, n.waiters.len()), (2, None, 0));
    });
}
