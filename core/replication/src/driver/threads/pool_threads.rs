//! The remote-command pool's and the OOB pool's threads: each takes a parked command, runs it, and
//! stays blocked in it for as long as the machine says it holds its slot (Infinispan's
//! remote-command executor threads and JGroups' OOB threads blocked in a synchronous command).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use crossbeam::channel::Receiver;

use super::runtime::Job;
use super::signal::SlotEvent;
use super::stepper::Stepper;
use crate::message::Input;

/// Adds one to a busy gauge and raises its maximum.
fn enter(busy: &AtomicUsize, max: &AtomicUsize) {
    let now = busy.fetch_add(1, AtomicOrdering::Relaxed) + 1;
    max.fetch_max(now, AtomicOrdering::Relaxed);
}

/// A pool (or OOB) thread: takes parked commands, runs them, and stays blocked in each for as
/// long as the machine says it holds its slot.
pub(super) fn pool_thread(mut stepper: Stepper, jobs: Receiver<Job>, oob: bool) {
    let node = Arc::clone(&stepper.node);
    let c = &node.counters;
    let (busy, max, runs) = if oob {
        (&c.oob_busy, &c.oob_busy_max, &c.oob_commands)
    } else {
        (&c.pool_busy, &c.pool_busy_max, &c.pool_commands)
    };
    while let Ok(Job::Run { slot, signal }) = jobs.recv() {
        enter(busy, max);
        runs.fetch_add(1, AtomicOrdering::Relaxed);
        let mut alive = stepper.step(Input::Run { slot });
        while alive {
            let (event, blocked) = signal.wait();
            if blocked {
                c.blocked_waits.fetch_add(1, AtomicOrdering::Relaxed);
            }
            match event {
                SlotEvent::Freed => break,
                SlotEvent::Resume => {
                    c.resumes.fetch_add(1, AtomicOrdering::Relaxed);
                    alive = stepper.step(Input::Resume { slot });
                }
                SlotEvent::Stop => alive = false,
            }
        }
        busy.fetch_sub(1, AtomicOrdering::Relaxed);
        if !alive {
            return;
        }
    }
}
