//! A node's transport thread (JGroups' receiver thread): holds arriving messages until their link
//! latency has passed, delivers them to the machine, and fires the node's deadline timer.
//!
//! `block` (JGroups' receiver thread blocking in a full executor): a command from another node
//! that finds the pool full is held by the machine, and so is every later message from another
//! node, replies included, in arrival order, until a slot frees (see `node/mod.rs`). The step that
//! held it reports the block, and the transport thread stops delivering: what arrives meanwhile
//! stays undelivered in its `delayed` heap. It then waits on its channel with the node's timer as
//! the only deadline, so it keeps firing lock, backup and reply timeouts: those are how a stalled
//! node recovers, and they may be what frees the slot (then the timer step itself reports the
//! block over). A slot freed on another thread (a pool thread finishing, a requester's step)
//! delivers the held messages in that step and, when the last one is delivered, the machine
//! says so (`Output::InboundResumed`) and that thread sends [`Envelope::Unblocked`] to the
//! transport. No wake-up is lost: the transport reads the block state under the node mutex at
//! the end of the step that started the block, and whatever ends it is a later step, under the
//! same mutex, whose `Unblocked` is sent after it, so it finds the transport waiting or
//! arrives in its channel. A stale `Unblocked` (a block that ended and a new one that began
//! before the transport read it) lets at most one more message into the machine, which holds
//! it in order: the machine, not the flag, decides delivery. Requester threads are not held:
//! their requests do not come through the transport. The pool threads never wait for the
//! transport, so the slot that ends a block always frees (or its timeout fires on the transport).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::time::Duration;

use crossbeam::channel::{Receiver, RecvTimeoutError};

use super::runtime::Envelope;
use super::stepper::Stepper;
use crate::message::Input;

struct Delayed {
    at: u64,
    seq: u64,
    input: Input,
    resent: bool,
}
impl PartialEq for Delayed {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Delayed {}
impl PartialOrd for Delayed {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Delayed {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// The transport thread: delivers messages when their latency has passed, fires the timer.
pub(super) struct Transport {
    stepper: Stepper,
    rx: Receiver<Envelope>,
    delayed: BinaryHeap<Delayed>,
    seq: u64,
    timer_at: Option<u64>,
    /// The `block` policy stopped this thread's deliveries: it waits for [`Envelope::Unblocked`]
    /// or its timer, and keeps what arrives meanwhile undelivered in `delayed`.
    blocked: bool,
}

impl Transport {
    /// The transport thread of `stepper`'s node, reading its inbox `rx`.
    pub(super) fn new(mut stepper: Stepper, rx: Receiver<Envelope>) -> Self {
        stepper.transport = true;
        Transport {
            stepper,
            rx,
            delayed: BinaryHeap::new(),
            seq: 0,
            timer_at: None,
            blocked: false,
        }
    }

    pub(super) fn run(mut self) {
        loop {
            let now = self.stepper.shared.now_us();
            while !self.blocked && self.delayed.peek().is_some_and(|d| d.at <= now) {
                if let Some(d) = self.delayed.pop() {
                    self.deliver(d.input, d.resent);
                }
            }
            if self.timer_at.is_some_and(|t| t <= now) {
                self.timer_at = None;
                self.stepper.step(Input::Timer);
                self.blocked = self.stepper.inbound_blocked;
                if !self.blocked {
                    // The timer (a lock or reply timeout) freed a slot: deliver what is due.
                    continue;
                }
            }
            // Blocked: wait for the unblocking or the timer only, never for a delivery.
            let due = if self.blocked {
                None
            } else {
                self.delayed.peek().map(|d| d.at)
            };
            let next = match (due, self.timer_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let env = match next {
                Some(t) => match self
                    .rx
                    .recv_timeout(Duration::from_micros(t.saturating_sub(now)))
                {
                    Ok(e) => e,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match self.rx.recv() {
                    Ok(e) => e,
                    Err(_) => return,
                },
            };
            match env {
                Envelope::Input { at, input, resent } => {
                    if !self.blocked && at <= self.stepper.shared.now_us() {
                        self.deliver(input, resent);
                    } else {
                        self.seq += 1;
                        self.delayed.push(Delayed {
                            at,
                            seq: self.seq,
                            input,
                            resent,
                        });
                    }
                }
                Envelope::Timer { at } => {
                    self.timer_at = Some(self.timer_at.map_or(at, |t| t.min(at)));
                }
                Envelope::Unblocked => self.blocked = false,
                Envelope::Stop => return,
            }
        }
    }

    fn deliver(&mut self, input: Input, resent: bool) {
        self.stepper.step_message(input, resent);
        if self.stepper.inbound_blocked && !self.blocked {
            self.stepper
                .node
                .counters
                .transport_blocks
                .fetch_add(1, AtomicOrdering::Relaxed);
        }
        self.blocked = self.stepper.inbound_blocked;
        // Release: pairs with the quiescence checker's Acquire load (see
        // `ClusterRuntime::in_flight`).
        self.stepper
            .shared
            .in_flight
            .fetch_sub(1, AtomicOrdering::Release);
        self.stepper
            .shared
            .pending
            .fetch_sub(1, AtomicOrdering::Relaxed);
    }
}
