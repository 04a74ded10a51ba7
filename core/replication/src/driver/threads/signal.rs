//! The hand-off between a pool thread blocked in its command and the threads that end the wait.
//!
//! A [`SlotSignal`] belongs to one held slot. Its pool thread waits on it; any other thread that
//! drives the node machine posts to it what the machine said about the slot: the key lock was
//! granted ([`SlotEvent::Resume`], once per grant), the slot was released ([`SlotEvent::Freed`],
//! final), or the cluster is shutting down ([`SlotEvent::Stop`], final).
//!
//! | state (`resumes`, `freed`, `stop`) | `wait` returns |
//! |---|---|
//! | `stop` | `Stop` (whatever else is pending) |
//! | `resumes > 0` | `Resume`, and `resumes -= 1` |
//! | `freed` | `Freed` (stays set) |
//! | `0, false, false` | blocks until a post |
//!
//! No wake-up is lost: a post changes the state under the signal's mutex before notifying, and
//! the waiter reads the state under the same mutex before every wait, so a post that comes
//! before the wait is seen by the check and a post that comes during it finds the waiter parked
//! on the condvar. The mutex is a leaf: nobody takes another lock while holding it.

use critsec_sync::{Condvar, Mutex};

/// What a blocked pool thread is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotEvent {
    /// The command's key lock was granted: continue it (`Input::Resume`).
    Resume,
    /// The command's slot was released: return to the pool.
    Freed,
    /// The cluster shuts down: exit.
    Stop,
}

#[derive(Debug, Default)]
struct State {
    resumes: u32,
    freed: bool,
    stop: bool,
}

/// A one-waiter event box for one held slot.
#[derive(Debug)]
pub struct SlotSignal {
    state: Mutex<State>,
    cv: Condvar,
}

impl Default for SlotSignal {
    fn default() -> Self {
        Self::new()
    }
}

impl SlotSignal {
    /// A signal with nothing posted.
    pub fn new() -> Self {
        SlotSignal {
            state: Mutex::new("replication.slot_signal", State::default()),
            cv: Condvar::new(),
        }
    }

    /// Records `event` and wakes the waiter, if it waits.
    pub fn post(&self, event: SlotEvent) {
        {
            let mut s = self.state.lock();
            match event {
                SlotEvent::Resume => s.resumes += 1,
                SlotEvent::Freed => s.freed = true,
                SlotEvent::Stop => s.stop = true,
            }
        }
        // Notifying after the unlock is enough: the state change is already visible to a waiter
        // that re-checks under the mutex, and there is only one waiter.
        self.cv.notify_one();
    }

    /// Waits for the next event; the flag says whether the caller really had to block.
    pub fn wait(&self) -> (SlotEvent, bool) {
        let mut s = self.state.lock();
        let mut blocked = false;
        loop {
            if s.stop {
                return (SlotEvent::Stop, blocked);
            }
            if s.resumes > 0 {
                s.resumes -= 1;
                return (SlotEvent::Resume, blocked);
            }
            if s.freed {
                return (SlotEvent::Freed, blocked);
            }
            blocked = true;
            self.cv.wait(&mut s);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn events_posted_before_the_wait_are_not_lost() {
        let s = SlotSignal::new();
        s.post(SlotEvent::Resume);
        s.post(SlotEvent::Freed);
        assert_eq!(s.wait(), (SlotEvent::Resume, false));
        assert_eq!(s.wait(), (SlotEvent::Freed, false));
        assert_eq!(s.wait(), (SlotEvent::Freed, false), "freed is final");
        s.post(SlotEvent::Stop);
        assert_eq!(s.wait(), (SlotEvent::Stop, false));
    }

    #[test]
    fn a_blocked_waiter_is_woken() {
        let s = std::sync::Arc::new(SlotSignal::new());
        let t = {
            let s = std::sync::Arc::clone(&s);
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                loop {
                    let (e, _) = s.wait();
                    seen.push(e);
                    if e != SlotEvent::Resume {
                        return seen;
                    }
                }
            })
        };
        s.post(SlotEvent::Resume);
        s.post(SlotEvent::Freed);
        assert_eq!(t.join().unwrap(), vec![SlotEvent::Resume, SlotEvent::Freed]);
    }
}
