//! A node's deadlines (lock acquisition, replies, acks, get staggering) and its one wake-up timer.
//! Upstream each wait carries its own timeout (`lockAcquisitionTimeout` in the lock manager,
//! `remoteTimeout` on an RPC); the model keeps a node's deadlines in one table.
//!
//! Deadlines are removed when their wait ends, so the driver sees one timer per node instead of
//! one per request: a 100-node simulation with 15 s reply timeouts would otherwise carry millions
//! of dead timers in its event queue.
//!
//! Most deadlines of a node are armed with one of a few fixed timeouts, so the deadlines of one
//! timeout are armed in due order. The table keeps them in *lanes*: sorted queues that only ever
//! grow at the back (a deadline goes to the first lane whose last is earlier, or opens a lane).
//! The earliest deadline is the earliest lane front. A handle names its lane and position, so a
//! cancel marks its entry in O(1) and fronts that are cancelled are dropped. One sorted list costs
//! a binary search and a shift per cancel (about a tenth of a simulated run's instructions). Due
//! order is the same as one sorted list's: (time, arming order).

use std::collections::VecDeque;

/// What a deadline is for; ids are slab ids of the node's requests, ops or replication batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// An originator's request (get, put, or Triangle's ack collector) timed out.
    Client(u64),
    /// A staggered get should go to the next owner.
    Stagger(u64),
    /// A primary op waited too long for its key lock.
    Lock(u64),
    /// LockForwarding: a primary op waited too long for its backups' replies.
    Backup(u64),
    /// KeyQueue: a replication batch was not acked in time.
    Repl(u64),
}

/// The handle of an armed deadline, for cancelling it: its lane and its position in the lane
/// (counted from the lane's first deadline ever, so a stale handle matches nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadlineKey {
    lane: u32,
    pos: u64,
}

impl DeadlineKey {
    /// A handle that names no deadline (cancelling it does nothing).
    pub const NONE: DeadlineKey = DeadlineKey {
        lane: u32::MAX,
        pos: 0,
    };
}

/// One lane: deadlines in due order, `None` once cancelled.
#[derive(Debug, Default)]
struct Lane {
    entries: VecDeque<((u64, u64), Option<Deadline>)>,
    /// The position of `entries[0]`.
    first: u64,
}

impl Lane {
    /// Drops cancelled deadlines at the front, so a front is always armed.
    fn trim(&mut self) {
        while self.entries.front().is_some_and(|(_, d)| d.is_none()) {
            self.entries.pop_front();
            self.first += 1;
        }
    }

    fn front(&self) -> Option<(u64, u64)> {
        self.entries.front().map(|(k, _)| *k)
    }
}

/// Armed deadlines plus the wake-up time the driver last got.
#[derive(Debug, Default)]
pub struct Timeouts {
    lanes: Vec<Lane>,
    /// The lane holding the earliest deadline (`None`: none armed), kept current so that the
    /// driver's question after every input costs no scan.
    earliest: Option<usize>,
    live: usize,
    next_seq: u64,
    armed: Option<u64>,
}

impl Timeouts {
    /// Arms `d` for time `at`.
    pub fn add(&mut self, at: u64, d: Deadline) -> DeadlineKey {
        self.next_seq += 1;
        let k = (at, self.next_seq);
        let lane = match self
            .lanes
            .iter()
            .position(|l| l.entries.back().is_none_or(|(last, _)| *last < k))
        {
            Some(i) => i,
            None => {
                self.lanes.push(Lane::default());
                self.lanes.len() - 1
            }
        };
        let l = &mut self.lanes[lane];
        let pos = l.first + l.entries.len() as u64;
        l.entries.push_back((k, Some(d)));
        self.live += 1;
        // A deadline at the back of a lane is the earliest only if it is that lane's front.
        if l.entries.len() == 1 && self.earliest_key().is_none_or(|e| k < e) {
            self.earliest = Some(lane);
        }
        DeadlineKey {
            lane: lane as u32,
            pos,
        }
    }

    /// Disarms a deadline (its wait ended).
    pub fn cancel(&mut self, k: DeadlineKey) {
        let Some(l) = self.lanes.get_mut(k.lane as usize) else {
            return;
        };
        let Some(i) = k.pos.checked_sub(l.first) else {
            return;
        };
        if let Some((_, d)) = l.entries.get_mut(i as usize) {
            if d.take().is_some() {
                self.live -= 1;
                l.trim();
                if self.earliest == Some(k.lane as usize) {
                    self.earliest = self.find_earliest();
                }
            }
        }
    }

    /// The driver's timer fired: it is no longer armed.
    pub fn fired(&mut self) {
        self.armed = None;
    }

    /// The earliest deadline's key.
    fn earliest_key(&self) -> Option<(u64, u64)> {
        self.lanes[self.earliest?].front()
    }

    /// The lane holding the earliest deadline, by a scan of the lanes' fronts.
    fn find_earliest(&self) -> Option<usize> {
        let mut best: Option<(usize, (u64, u64))> = None;
        for (i, l) in self.lanes.iter().enumerate() {
            if let Some(k) = l.front() {
                if best.is_none_or(|(_, b)| k < b) {
                    best = Some((i, k));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// The earliest deadline due at `now`, removed.
    pub fn pop_expired(&mut self, now: u64) -> Option<Deadline> {
        let l = &mut self.lanes[self.earliest?];
        if l.front()?.0 > now {
            return None;
        }
        let (_, d) = l.entries.pop_front()?;
        l.first += 1;
        l.trim();
        self.live -= 1;
        self.earliest = self.find_earliest();
        d
    }

    /// A new wake-up time for the driver, when the earliest deadline is earlier than the armed one.
    pub fn rearm(&mut self) -> Option<u64> {
        let (at, _) = self.earliest_key()?;
        match self.armed {
            Some(armed) if armed <= at => None,
            _ => {
                self.armed = Some(at);
                Some(at)
            }
        }
    }

    /// The deadlines still armed, in no particular order.
    pub fn armed(&self) -> impl Iterator<Item = Deadline> + '_ {
        self.lanes
            .iter()
            .flat_map(|l| l.entries.iter().filter_map(|(_, d)| *d))
    }

    /// Deadlines still armed.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes pop, cancel and re-arm exactly as one ordered map of (time, arming order),
    /// with a few fixed timeouts and with arbitrary ones (many lanes); a handle cancelled twice
    /// or after its deadline fired cancels nothing.
    #[test]
    fn behaves_as_an_ordered_map() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        use std::collections::BTreeMap;
        for arbitrary in [false, true] {
            let mut rng = SmallRng::seed_from_u64(15);
            let mut t = Timeouts::default();
            let mut model: BTreeMap<(u64, u64), (DeadlineKey, Deadline)> = BTreeMap::new();
            let mut spent: Vec<DeadlineKey> = vec![DeadlineKey::NONE];
            let (mut seq, mut now, mut armed) = (0, 0, None);
            for i in 0..20_000u64 {
                match rng.random_range(0..10) {
                    0..=4 => {
                        let d = if arbitrary {
                            rng.random_range(0..50)
                        } else {
                            [5, 20, 1, 7][rng.random_range(0..4)]
                        };
                        seq += 1;
                        let k = t.add(now + d, Deadline::Client(i));
                        model.insert((now + d, seq), (k, Deadline::Client(i)));
                    }
                    5..=7 => {
                        if rng.random_range(0..4) == 0 {
                            t.cancel(spent[rng.random_range(0..spent.len())]);
                        } else if let Some(&at) =
                            model.keys().nth(rng.random_range(0..model.len().max(1)))
                        {
                            let (k, _) = model.remove(&at).unwrap();
                            t.cancel(k);
                            spent.push(k);
                        }
                    }
                    _ => {
                        now += rng.random_range(0..4);
                        t.fired();
                        armed = None;
                        loop {
                            let want = model.first_key_value().filter(|(k, _)| k.0 <= now);
                            let want = want.map(|(&at, &(k, d))| (at, k, d));
                            assert_eq!(t.pop_expired(now), want.map(|w| w.2));
                            let Some((at, k, _)) = want else { break };
                            model.remove(&at);
                            spent.push(k);
                        }
                    }
                }
                let earliest = model.keys().next().map(|k| k.0);
                let want = earliest.filter(|&e| armed.is_none_or(|a| e < a));
                assert_eq!(t.rearm(), want);
                armed = want.or(armed);
                assert_eq!(t.len(), model.len());
            }
            assert!(!arbitrary || t.lanes.len() > 4, "{} lanes", t.lanes.len());
        }
    }

    #[test]
    fn rearm_only_when_earlier() {
        let mut t = Timeouts::default();
        let a = t.add(100, Deadline::Client(1));
        assert_eq!(t.rearm(), Some(100));
        t.add(200, Deadline::Lock(2));
        assert_eq!(t.rearm(), None);
        t.add(50, Deadline::Stagger(3));
        assert_eq!(t.rearm(), Some(50));
        t.cancel(a);
        t.fired();
        assert_eq!(t.pop_expired(60), Some(Deadline::Stagger(3)));
        assert_eq!(t.pop_expired(60), None);
        assert_eq!(t.rearm(), Some(200));
    }
}
