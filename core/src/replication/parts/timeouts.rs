//! A node's deadlines (lock acquisition, replies, acks, get staggering) and its one wake-up timer.
//! Upstream each wait carries its own timeout (`lockAcquisitionTimeout` in the lock manager,
//! `remoteTimeout` on an RPC); the model keeps a node's deadlines in one table.
//!
//! Deadlines live in one sorted list and are removed when their wait ends, so the driver sees one
//! timer per node instead of one per request: a 100-node simulation with 15 s reply timeouts would
//! otherwise carry millions of dead timers in its event queue.
//!
//! The list is a `VecDeque` kept in (time, arming order), not a `BTreeMap`: a node has at most a
//! few hundred live deadlines, most are armed with the same timeout (so they go at the back) and
//! end in about the order they were armed (so they leave near the front), which makes a binary
//! search and a short shift cheaper than the tree's node walks and rebalancing (9% of a simulated
//! run's instructions, issue #15). Same order, same results.

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

/// The handle of an armed deadline, for cancelling it.
pub type DeadlineKey = (u64, u64);

/// Armed deadlines plus the wake-up time the driver last got.
#[derive(Debug, Default)]
pub struct Timeouts {
    /// Sorted by key: due time, then arming order.
    list: VecDeque<(DeadlineKey, Deadline)>,
    next_seq: u64,
    armed: Option<u64>,
}

impl Timeouts {
    /// Arms `d` for time `at`.
    pub fn add(&mut self, at: u64, d: Deadline) -> DeadlineKey {
        self.next_seq += 1;
        let k = (at, self.next_seq);
        // Usually the latest deadline yet: a timeout as long as the last one's, armed later.
        let i = if self.list.back().is_none_or(|(last, _)| *last < k) {
            self.list.len()
        } else {
            self.list.partition_point(|(e, _)| *e < k)
        };
        self.list.insert(i, (k, d));
        k
    }

    /// Disarms a deadline (its wait ended).
    pub fn cancel(&mut self, k: DeadlineKey) {
        if let Ok(i) = self.list.binary_search_by(|(e, _)| e.cmp(&k)) {
            self.list.remove(i);
        }
    }

    /// The driver's timer fired: it is no longer armed.
    pub fn fired(&mut self) {
        self.armed = None;
    }

    /// The earliest deadline due at `now`, removed.
    pub fn pop_expired(&mut self, now: u64) -> Option<Deadline> {
        let &((at, _), _) = self.list.front()?;
        if at <= now {
            self.list.pop_front().map(|(_, d)| d)
        } else {
            None
        }
    }

    /// A new wake-up time for the driver, when the earliest deadline is earlier than the armed one.
    pub fn rearm(&mut self) -> Option<u64> {
        let &((at, _), _) = self.list.front()?;
        match self.armed {
            Some(armed) if armed <= at => None,
            _ => {
                self.armed = Some(at);
                Some(at)
            }
        }
    }

    /// Deadlines still armed.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no deadline is armed.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list pops, cancels and re-arms exactly as the ordered map it replaced.
    #[test]
    fn behaves_as_an_ordered_map() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        use std::collections::BTreeMap;
        let mut rng = SmallRng::seed_from_u64(15);
        let mut t = Timeouts::default();
        let mut model: BTreeMap<DeadlineKey, Deadline> = BTreeMap::new();
        let mut now = 0;
        for i in 0..20_000u64 {
            match rng.random_range(0..10) {
                0..=4 => {
                    let d = [5, 20, 1, 7][rng.random_range(0..4)];
                    let k = t.add(now + d, Deadline::Client(i));
                    model.insert(k, Deadline::Client(i));
                }
                5..=7 => {
                    if let Some(&k) = model.keys().nth(rng.random_range(0..model.len().max(1))) {
                        t.cancel(k);
                        model.remove(&k);
                    }
                }
                _ => {
                    now += rng.random_range(0..4);
                    loop {
                        let want = model
                            .first_key_value()
                            .filter(|(k, _)| k.0 <= now)
                            .map(|(&k, &d)| (k, d));
                        assert_eq!(t.pop_expired(now), want.map(|(_, d)| d));
                        let Some((k, _)) = want else { break };
                        model.remove(&k);
                    }
                }
            }
            assert_eq!(t.len(), model.len());
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
