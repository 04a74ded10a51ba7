//! The simulation's event queue: a timing wheel of 1 µs buckets covering the next 65 ms, plus a
//! binary heap for events further out (timeouts). Link delays are a few ms, so almost every event
//! takes the O(1) wheel path; a heap alone spent most of a 100-node run sifting.
//!
//! Events due at the same µs run in the order they entered their bucket, so a run is repeatable.
//! No upstream counterpart: this is the simulation's clock.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::replication::message::{Input, Msg, NodeId};

/// What happens at an event.
#[derive(Debug, Clone)]
pub enum EventKind {
    /// `msg` from `from` arrives at `to`.
    Deliver {
        /// The receiver.
        to: NodeId,
        /// The sender.
        from: NodeId,
        /// The message.
        msg: Msg,
    },
    /// `node`'s wake-up timer fires.
    Timer {
        /// The node.
        node: NodeId,
    },
    /// `node` has done the CPU work of `input` (see [`super::cpu`]) and handles it now.
    Handle {
        /// The node.
        node: NodeId,
        /// What it handles.
        input: Input,
    },
    /// Requester `requester` of `node` issues its next operation.
    Issue {
        /// The node.
        node: NodeId,
        /// The requester's index on the node.
        requester: u32,
    },
}

/// An event due at `time` µs of virtual time.
#[derive(Debug, Clone)]
pub struct Event {
    /// Virtual time in µs.
    pub time: u64,
    seq: u64,
    /// What happens.
    pub kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` is a max-heap and we want the earliest event first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

const WHEEL: u64 = 1 << 16;

/// Pending events, earliest first.
#[derive(Debug)]
pub struct EventQueue {
    /// The time of the bucket being drained; nothing earlier is pending.
    now: u64,
    wheel: Vec<Vec<EventKind>>,
    /// Position in the current bucket.
    pos: usize,
    wheel_len: usize,
    far: BinaryHeap<Event>,
    next_seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            now: 0,
            wheel: (0..WHEEL).map(|_| Vec::new()).collect(),
            pos: 0,
            wheel_len: 0,
            far: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl EventQueue {
    /// Schedules `kind` at `time` (an earlier time than the current one runs now).
    pub fn push(&mut self, time: u64, kind: EventKind) {
        let time = time.max(self.now);
        if time - self.now < WHEEL {
            self.wheel[(time % WHEEL) as usize].push(kind);
            self.wheel_len += 1;
        } else {
            self.next_seq += 1;
            self.far.push(Event {
                time,
                seq: self.next_seq,
                kind,
            });
        }
    }

    /// The earliest event, removed.
    pub fn pop(&mut self) -> Option<Event> {
        loop {
            let bucket = &mut self.wheel[(self.now % WHEEL) as usize];
            if self.pos < bucket.len() {
                // Taken out (a timer stands in): the bucket is cleared once drained anyway.
                let kind = std::mem::replace(&mut bucket[self.pos], EventKind::Timer { node: 0 });
                self.pos += 1;
                self.wheel_len -= 1;
                return Some(Event {
                    time: self.now,
                    seq: 0,
                    kind,
                });
            }
            bucket.clear();
            self.pos = 0;
            if self.wheel_len == 0 {
                // Jump over the empty stretch to the next far event.
                let next = self.far.peek()?.time;
                self.now = next.max(self.now + 1);
            } else {
                self.now += 1;
            }
            // Move far events into the wheel once they are within its span; they were pushed
            // at least one span ahead, so this happens before they are due.
            while self.far.peek().is_some_and(|e| e.time < self.now + WHEEL) {
                let Some(e) = self.far.pop() else { break };
                self.wheel[(e.time.max(self.now) % WHEEL) as usize].push(e.kind);
                self.wheel_len += 1;
            }
        }
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.wheel_len + self.far.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue) -> Vec<(u64, u16)> {
        std::iter::from_fn(|| q.pop())
            .map(|e| match e.kind {
                EventKind::Timer { node } => (e.time, node),
                _ => (0, 0),
            })
            .collect()
    }

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, EventKind::Timer { node: 1 });
        q.push(3, EventKind::Timer { node: 2 });
        q.push(5, EventKind::Timer { node: 3 });
        q.push(10_000_000, EventKind::Timer { node: 4 });
        q.push(70_000, EventKind::Timer { node: 5 });
        assert_eq!(q.len(), 5);
        assert_eq!(
            drain(&mut q),
            vec![(3, 2), (5, 1), (5, 3), (70_000, 5), (10_000_000, 4)]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn far_events_interleave_with_near_ones() {
        let mut q = EventQueue::default();
        q.push(100_000, EventKind::Timer { node: 1 });
        q.push(1, EventKind::Timer { node: 2 });
        assert_eq!(q.pop().map(|e| e.time), Some(1));
        q.push(99_999, EventKind::Timer { node: 3 });
        q.push(100_001, EventKind::Timer { node: 4 });
        assert_eq!(drain(&mut q), vec![(99_999, 3), (100_000, 1), (100_001, 4)]);
    }
}
