//! The simulation's event queue: a binary heap ordered by (virtual time, insertion number), so
//! events due at the same instant run in the order they were scheduled and a run is repeatable.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::replication::message::{Msg, NodeId};

/// What happens at an event.
#[derive(Debug, Clone, Copy)]
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
    /// Requester `requester` of `node` issues its next operation.
    Issue {
        /// The node.
        node: NodeId,
        /// The requester's index on the node.
        requester: u32,
    },
}

/// An event due at `time` µs of virtual time.
#[derive(Debug, Clone, Copy)]
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

/// Pending events, earliest first.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
}

impl EventQueue {
    /// Schedules `kind` at `time`.
    pub fn push(&mut self, time: u64, kind: EventKind) {
        self.next_seq += 1;
        self.heap.push(Event { time, seq: self.next_seq, kind });
    }

    /// The earliest event, removed.
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, EventKind::Timer { node: 1 });
        q.push(3, EventKind::Timer { node: 2 });
        q.push(5, EventKind::Timer { node: 3 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|e| match e.kind {
                EventKind::Timer { node } => (e.time, node),
                _ => (0, 0),
            })
            .collect();
        assert_eq!(order, vec![(3, 2), (5, 1), (5, 3)]);
    }
}
