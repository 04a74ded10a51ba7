//! The simulation's event queue: a timing wheel of 1 µs buckets covering the next 65 ms, plus a
//! binary heap for events further out (timeouts). Link delays are a few ms, so almost every event
//! takes the O(1) wheel path; a heap alone spent most of a 100-node run sifting.
//!
//! Events due at one instant run in the order of their [`EventKey`], which names the event by
//! where it goes and who made it, never by when the simulation happened to handle its cause. So a
//! node sees its inputs in the same order whichever worker thread runs it and however the cluster
//! is split between threads (see [`super::partition`]).
//!
//! A bucket is an unordered list threaded through one slab of events, not a `Vec` of its own:
//! with a `Vec` per bucket, 65,536 buffers would each keep their capacity and be touched once per
//! 65 ms of virtual time, so every push and pop would miss the cache. When the clock reaches a
//! bucket, its events are sorted by key into the *current* instant; an event pushed for the
//! current instant is inserted there in key order. The slab reuses the most recently freed entry
//! first, so the memory in use stays as small as the events pending. The lists' links and keys
//! live in arrays of their own and the event popped next is prefetched: an event is written long
//! before it is due, so it is rarely still in cache.
//!
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

/// An event's place in the run: due at `time` µs of virtual time, then by the node it happens
/// at, the node that made it (the sender of a message; the node itself for its own wake-ups,
/// CPU work, retransmission requests and requesters) and that node's count of events made before
/// it. Unique, and fixed when the event is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey {
    /// Virtual time in µs.
    pub time: u64,
    /// `at << 48 | maker << 32 | the maker's sequence number`, so that one comparison orders
    /// the tie-breakers.
    order: u64,
}

impl EventKey {
    /// The key of the `seq`-th event `maker` made, due at `time` at node `at`.
    pub fn new(time: u64, at: NodeId, maker: NodeId, seq: u32) -> Self {
        EventKey {
            time,
            order: u64::from(at) << 48 | u64::from(maker) << 32 | u64::from(seq),
        }
    }

    /// The node the event happens at.
    #[cfg(test)]
    pub fn at(&self) -> NodeId {
        (self.order >> 48) as NodeId
    }

    /// The node that made the event.
    #[cfg(test)]
    pub fn maker(&self) -> NodeId {
        (self.order >> 32) as NodeId
    }

    /// The maker's sequence number of the event.
    #[cfg(test)]
    pub fn seq(&self) -> u32 {
        self.order as u32
    }
}

/// An event and its key.
#[derive(Debug, Clone)]
pub struct Event {
    /// When and in which order it happens.
    pub key: EventKey,
    /// What happens.
    pub kind: EventKind,
}

impl Event {
    /// Virtual time in µs.
    pub fn time(&self) -> u64 {
        self.key.time
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
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
        other.key.cmp(&self.key)
    }
}

const WHEEL: u64 = 1 << 16;

/// The end of a list.
const NIL: u32 = u32::MAX;

/// A wheel bucket: the first and last slab entry of its list.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    head: u32,
    tail: u32,
}

const EMPTY: Bucket = Bucket {
    head: NIL,
    tail: NIL,
};

/// Pending events, earliest key first.
#[derive(Debug)]
pub struct EventQueue {
    /// The current instant; nothing earlier is pending, and its bucket is always empty (its
    /// events are in `current`). It only moves while events are popped.
    now: u64,
    /// The current instant's events as (key order, slab entry), latest first (popped from the
    /// end); their time is `now`.
    current: Vec<(u64, u32)>,
    wheel: Vec<Bucket>,
    /// The slab of pending events (`None`: a free entry).
    entries: Vec<Option<EventKind>>,
    /// Per slab entry, its key and the next entry of its bucket (or of the free list). Kept apart
    /// from the events (16 + 4 bytes an entry, so they stay in cache) so that walking a list never
    /// waits for an event's cold cache lines, and the event popped next can be prefetched.
    keys: Vec<EventKey>,
    next: Vec<u32>,
    /// Freed entries, most recently freed first.
    free: u32,
    /// Events in wheel buckets (not counting `current`).
    wheel_len: usize,
    /// One bit per bucket, set while it holds events: the next pending instant is found a word
    /// at a time, so a drain whose events are milliseconds apart does not walk every µs.
    occupied: Vec<u64>,
    far: BinaryHeap<Event>,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            now: 0,
            current: Vec::new(),
            wheel: vec![EMPTY; WHEEL as usize],
            entries: Vec::new(),
            keys: Vec::new(),
            next: Vec::new(),
            free: NIL,
            wheel_len: 0,
            occupied: vec![0; (WHEEL / 64) as usize],
            far: BinaryHeap::new(),
        }
    }
}

impl EventQueue {
    /// Schedules `event`; one due before the current instant (which the simulation never
    /// makes) runs at it.
    #[inline]
    pub fn push(&mut self, mut event: Event) {
        event.key.time = event.key.time.max(self.now);
        let time = event.key.time;
        if time - self.now < WHEEL {
            let i = self.store(event);
            if time == self.now {
                self.insert_current(i);
            } else {
                self.append(time, i);
            }
        } else {
            self.far.push(event);
        }
    }

    /// Puts `event` in a free slab entry.
    #[inline]
    fn store(&mut self, event: Event) -> u32 {
        if self.free != NIL {
            let i = self.free;
            self.free = self.next[i as usize];
            self.entries[i as usize] = Some(event.kind);
            self.keys[i as usize] = event.key;
            self.next[i as usize] = NIL;
            i
        } else {
            let i = u32::try_from(self.entries.len()).expect("fewer than 2^32 pending events");
            self.entries.push(Some(event.kind));
            self.keys.push(event.key);
            self.next.push(NIL);
            i
        }
    }

    /// Adds slab entry `i` (due now) to the current instant, in key order.
    #[inline]
    fn insert_current(&mut self, i: u32) {
        let order = self.keys[i as usize].order;
        let at = self.current.partition_point(|&(o, _)| o > order);
        self.current.insert(at, (order, i));
    }

    /// Appends slab entry `i` to the bucket of `time` (later than now, within the wheel's span).
    #[inline]
    fn append(&mut self, time: u64, i: u32) {
        let b = (time % WHEEL) as usize;
        self.occupied[b / 64] |= 1 << (b % 64);
        let bucket = &mut self.wheel[b];
        if bucket.tail == NIL {
            bucket.head = i;
        } else {
            self.next[bucket.tail as usize] = i;
        }
        bucket.tail = i;
        self.wheel_len += 1;
    }

    /// Moves the clock to the earliest pending event if it is due before `end`, and says
    /// whether one is. The clock never reaches `end`, so events may still be pushed for any
    /// time from `end` on (another worker's messages, between windows).
    fn advance(&mut self, end: u64) -> bool {
        loop {
            if !self.current.is_empty() {
                return self.now < end;
            }
            match self.later_time() {
                Some(t) if t < end => self.now = t,
                _ => return false,
            }
            self.load_bucket();
            // Move far events into the wheel once they are within its span; they were pushed
            // at least one span ahead, so this happens no later than they are due.
            while self
                .far
                .peek()
                .is_some_and(|e| e.key.time < self.now + WHEEL)
            {
                let Some(e) = self.far.pop() else { break };
                let time = e.key.time;
                let i = self.store(e);
                if time == self.now {
                    self.insert_current(i);
                } else {
                    self.append(time, i);
                }
            }
        }
    }

    /// The time of the earliest pending event, without moving the clock.
    pub fn peek_time(&self) -> Option<u64> {
        if self.current.is_empty() {
            self.later_time()
        } else {
            Some(self.now)
        }
    }

    /// The time of the earliest event after the current instant: the first occupied bucket
    /// (every wheel event is due within the span after now) or the first far event.
    fn later_time(&self) -> Option<u64> {
        let far = self.far.peek().map(|e| e.key.time);
        if self.wheel_len == 0 {
            return far;
        }
        let start = ((self.now + 1) % WHEEL) as usize;
        let bucket = self
            .occupied_from(start, WHEEL as usize)
            .or_else(|| self.occupied_from(0, start));
        let near =
            bucket.map(|b| self.now + 1 + ((b + WHEEL as usize - start) % WHEEL as usize) as u64);
        match (near, far) {
            (Some(n), Some(f)) => Some(n.min(f)),
            (n, f) => n.or(f),
        }
    }

    /// The first occupied bucket in `from..to`.
    fn occupied_from(&self, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        let mut word = from / 64;
        let mut bits = self.occupied[word] & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let b = word * 64 + bits.trailing_zeros() as usize;
                return (b < to).then_some(b);
            }
            word += 1;
            if word * 64 >= to {
                return None;
            }
            bits = self.occupied[word];
        }
    }

    /// Moves the current instant's bucket into `current`, sorted.
    fn load_bucket(&mut self) {
        let b = (self.now % WHEEL) as usize;
        self.occupied[b / 64] &= !(1 << (b % 64));
        let bucket = std::mem::replace(&mut self.wheel[b], EMPTY);
        let mut i = bucket.head;
        while i != NIL {
            self.current.push((self.keys[i as usize].order, i));
            self.wheel_len -= 1;
            i = self.next[i as usize];
        }
        self.current
            .sort_unstable_by_key(|&(order, _)| std::cmp::Reverse(order));
    }

    /// The earliest event, removed, if it is due before `end`.
    #[inline]
    pub fn pop_before(&mut self, end: u64) -> Option<Event> {
        if !self.advance(end) {
            return None;
        }
        let (_, i) = self.current.pop()?;
        let key = self.keys[i as usize];
        if let Some(&(_, up_next)) = self.current.last() {
            self.prefetch(up_next);
        }
        let kind = self.entries[i as usize].take()?;
        self.next[i as usize] = self.free;
        self.free = i;
        Some(Event { key, kind })
    }

    /// The earliest event, removed.
    #[cfg(test)]
    pub fn pop(&mut self) -> Option<Event> {
        self.pop_before(u64::MAX)
    }

    /// Asks the processor to load slab entry `i` while the current event is handled: pending
    /// events are written long before they are due, so an entry is rarely in cache when its turn
    /// comes. A hint only; it changes no result.
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
        self.current.len() + self.wheel_len + self.far.len()
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

    fn timer(time: u64, node: NodeId, maker: NodeId, seq: u32) -> Event {
        Event {
            key: EventKey::new(time, node, maker, seq),
            kind: EventKind::Timer { node },
        }
    }

    fn drain(q: &mut EventQueue) -> Vec<(u64, NodeId, NodeId, u32)> {
        std::iter::from_fn(|| q.pop())
            .map(|e| (e.key.time, e.key.at(), e.key.maker(), e.key.seq()))
            .collect()
    }

    /// Earliest first; at one instant by the node it happens at, then its maker, then the
    /// maker's count, whatever order they were pushed in, near or far.
    #[test]
    fn events_run_by_time_then_node_then_maker_then_sequence() {
        let mut q = EventQueue::default();
        for e in [
            timer(5, 2, 9, 0),
            timer(5, 1, 3, 7),
            timer(3, 4, 4, 1),
            timer(5, 1, 3, 2),
            timer(5, 1, 1, 9),
            timer(10_000_000, 0, 0, 0),
            timer(70_000, 5, 5, 0),
            timer(70_000, 5, 4, 3),
        ] {
            q.push(e);
        }
        assert_eq!(q.len(), 8);
        assert_eq!(q.pending().count(), 8);
        assert_eq!(
            drain(&mut q),
            vec![
                (3, 4, 4, 1),
                (5, 1, 1, 9),
                (5, 1, 3, 2),
                (5, 1, 3, 7),
                (5, 2, 9, 0),
                (70_000, 5, 4, 3),
                (70_000, 5, 5, 0),
                (10_000_000, 0, 0, 0)
            ]
        );
        assert!(q.is_empty());
    }

    /// An event made for the current instant while it runs takes its place by key: before
    /// those still due then whose keys are greater, after the smaller ones.
    #[test]
    fn an_event_pushed_for_the_current_instant_runs_in_key_order() {
        let mut q = EventQueue::default();
        q.push(timer(7, 1, 0, 0));
        q.push(timer(7, 3, 3, 0));
        assert_eq!(q.pop().map(|e| e.key.at()), Some(1));
        q.push(timer(7, 2, 2, 5));
        q.push(timer(7, 4, 4, 0));
        assert_eq!(
            drain(&mut q),
            vec![(7, 2, 2, 5), (7, 3, 3, 0), (7, 4, 4, 0)]
        );
    }

    #[test]
    fn far_events_interleave_with_near_ones_and_nothing_past_the_end_is_popped() {
        let mut q = EventQueue::default();
        q.push(timer(100_000, 1, 1, 0));
        q.push(timer(1, 2, 2, 0));
        assert_eq!(q.pop_before(2).map(|e| e.time()), Some(1));
        assert!(q.pop_before(99_999).is_none());
        assert_eq!(q.peek_time(), Some(100_000));
        q.push(timer(99_999, 3, 3, 0));
        assert_eq!(q.peek_time(), Some(99_999));
        assert_eq!(q.pop_before(100_000).map(|e| e.time()), Some(99_999));
        q.push(timer(100_000, 0, 0, 1));
        q.push(timer(100_001, 4, 4, 0));
        assert_eq!(
            drain(&mut q),
            vec![(100_000, 0, 0, 1), (100_000, 1, 1, 0), (100_001, 4, 4, 0)]
        );
    }

    /// The queue against a model (a sorted set of keys): pushes at random delays from the
    /// current instant (the instant itself, near, across the wheel's wrap, far), pops before
    /// random window ends, single pops, and peeks, in any mix; the queue must give exactly the
    /// model's earliest key each time.
    mod model {
        use super::*;
        use proptest::prelude::*;
        use std::collections::BTreeSet;

        #[derive(Debug, Clone)]
        enum Step {
            Push {
                delay: u64,
                node: NodeId,
            },
            PopBefore {
                window: u64,
            },
            /// One event, leaving the clock at its instant (pushes then land in the current one).
            PopOne,
        }

        fn step() -> impl Strategy<Value = Step> {
            prop_oneof![
                (
                    prop_oneof![0u64..3, 0u64..2_000, WHEEL - 3..WHEEL + 3, 0u64..300_000],
                    0u16..5
                )
                    .prop_map(|(delay, node)| Step::Push { delay, node }),
                prop_oneof![1u64..3, 1u64..5_000, 1u64..200_000]
                    .prop_map(|window| Step::PopBefore { window }),
                Just(Step::PopOne),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

            #[test]
            fn the_queue_pops_what_a_sorted_set_would(steps in prop::collection::vec(step(), 1..300)) {
                let mut q = EventQueue::default();
                let mut model: BTreeSet<EventKey> = BTreeSet::new();
                // The clock as the simulation sees it: the last popped time, or a window's end.
                let mut now = 0u64;
                let mut seq = 0u32;
                for s in steps {
                    match s {
                        Step::Push { delay, node } => {
                            seq += 1;
                            let e = timer(now + delay, node, node, seq);
                            model.insert(e.key);
                            q.push(e);
                        }
                        Step::PopBefore { window } => {
                            let end = now + window;
                            prop_assert_eq!(q.peek_time(), model.first().map(|k| k.time));
                            while let Some(e) = q.pop_before(end) {
                                let want = model.pop_first();
                                prop_assert_eq!(Some(e.key), want);
                                now = e.key.time;
                            }
                            prop_assert!(model.first().is_none_or(|k| k.time >= end));
                            // Between windows the clock stands at the window's end.
                            now = end.max(now);
                        }
                        Step::PopOne => {
                            let e = q.pop();
                            prop_assert_eq!(e.as_ref().map(|e| e.key), model.pop_first());
                            if let Some(e) = e {
                                now = e.key.time;
                            }
                        }
                    }
                    prop_assert_eq!(q.len(), model.len());
                }
                while let Some(e) = q.pop() {
                    prop_assert_eq!(Some(e.key), model.pop_first());
                }
                prop_assert!(model.is_empty());
            }
        }
    }
}
