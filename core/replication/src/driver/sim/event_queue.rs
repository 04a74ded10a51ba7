//! The simulation's event queue: a timing wheel of 1 µs buckets covering the next 65 ms, plus a
//! binary heap for events further out (timeouts). Link delays are a few ms, so almost every event
//! takes the O(1) wheel path; a heap alone spent most of a 100-node run sifting.
//!
//! A bucket is a FIFO list threaded through one slab of events, not a `Vec` of its own: with a
//! `Vec` per bucket, 65,536 buffers would each keep their capacity and be touched once per 65 ms
//! of virtual time, so every push and pop would miss the cache. The slab reuses the most recently
//! freed entry first, so the memory in use stays as small as the events pending. The lists' links
//! live in an array of their own and the event popped next is prefetched: an event is written
//! long before it is due, so it is rarely still in cache.
//!
//! Events due at the same µs run in the order they entered their bucket, so a run is repeatable.
//! No upstream counterpart: this is the simulation's clock.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::message::{Input, Msg, NodeId};

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
        /// A message resent on request: if it is lost again, it was asked for before.
        resent: bool,
    },
    /// The messages `from` resent to `to` when `to`'s retransmission task asked for them at
    /// `tick` arrive (see [`retransmission`](crate::driver::retransmission)).
    Resend {
        /// The receiver, which asked.
        to: NodeId,
        /// The sender.
        from: NodeId,
        /// The run of the receiver's retransmission task that asked.
        tick: u64,
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

/// The end of a list.
const NIL: u32 = u32::MAX;

/// A wheel bucket: the first and last slab entry of its FIFO list.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    head: u32,
    tail: u32,
}

const EMPTY: Bucket = Bucket {
    head: NIL,
    tail: NIL,
};

/// Pending events, earliest first.
#[derive(Debug)]
pub struct EventQueue {
    /// The time of the bucket being drained; nothing earlier is pending.
    now: u64,
    wheel: Vec<Bucket>,
    /// The slab of pending events (`None`: a free entry).
    entries: Vec<Option<EventKind>>,
    /// Per slab entry, the next entry of its bucket (or of the free list). Kept apart from the
    /// events (4 bytes an entry, so it stays in cache) so that walking a list never waits for an
    /// event's cold cache lines, and the event popped next can be prefetched.
    next: Vec<u32>,
    /// Freed entries, most recently freed first.
    free: u32,
    wheel_len: usize,
    far: BinaryHeap<Event>,
    next_seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            now: 0,
            wheel: vec![EMPTY; WHEEL as usize],
            entries: Vec::new(),
            next: Vec::new(),
            free: NIL,
            wheel_len: 0,
            far: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl EventQueue {
    /// Schedules `kind` at `time` (an earlier time than the current one runs now).
    #[inline]
    pub fn push(&mut self, time: u64, kind: EventKind) {
        let time = time.max(self.now);
        if time - self.now < WHEEL {
            self.append(time, kind);
        } else {
            self.next_seq += 1;
            self.far.push(Event {
                time,
                seq: self.next_seq,
                kind,
            });
        }
    }

    /// Appends `kind` to the bucket of `time` (within the wheel's span).
    #[inline]
    fn append(&mut self, time: u64, kind: EventKind) {
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.next[i as usize];
            self.entries[i as usize] = Some(kind);
            self.next[i as usize] = NIL;
            i
        } else {
            let i = u32::try_from(self.entries.len()).expect("fewer than 2^32 pending events");
            self.entries.push(Some(kind));
            self.next.push(NIL);
            i
        };
        let bucket = &mut self.wheel[(time % WHEEL) as usize];
        if bucket.tail == NIL {
            bucket.head = i;
        } else {
            self.next[bucket.tail as usize] = i;
        }
        bucket.tail = i;
        self.wheel_len += 1;
    }

    /// The earliest event, removed.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        loop {
            let bucket = &mut self.wheel[(self.now % WHEEL) as usize];
            if bucket.head != NIL {
                let i = bucket.head;
                bucket.head = self.next[i as usize];
                let up_next = if bucket.head == NIL {
                    bucket.tail = NIL;
                    self.wheel[((self.now + 1) % WHEEL) as usize].head
                } else {
                    bucket.head
                };
                self.prefetch(up_next);
                let kind = self.entries[i as usize].take();
                self.next[i as usize] = self.free;
                self.free = i;
                self.wheel_len -= 1;
                if let Some(kind) = kind {
                    return Some(Event {
                        time: self.now,
                        seq: 0,
                        kind,
                    });
                }
                continue;
            }
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
                self.append(e.time.max(self.now), e.kind);
            }
        }
    }

    /// Asks the processor to load slab entry `i` (if any) while the current event is handled:
    /// pending events are written long before they are due, so an entry is rarely in cache when
    /// its turn comes. A hint only; it changes no result.
    #[inline]
    fn prefetch(&self, i: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(e) = self.entries.get(i as usize) {
            // SAFETY: a prefetch reads nothing into the program and cannot fault; the pointers
            // are within a live element (an event spans two cache lines).
            unsafe {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                let p = (e as *const Option<EventKind>).cast::<i8>();
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.add(size_of::<Option<EventKind>>() - 1));
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// The pending events, in no particular order (their times are not kept with them).
    pub fn pending(&self) -> impl Iterator<Item = &EventKind> {
        self.entries
            .iter()
            .flatten()
            .chain(self.far.iter().map(|e| &e.kind))
    }

    /// Events pending.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.wheel_len + self.far.len()
    }

    /// Whether nothing is pending.
    #[cfg(test)]
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
        assert_eq!(q.pending().count(), 5);
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
