//! A node's deadlines (lock acquisition, replies, acks, get staggering) and its one wake-up timer.
//! Upstream each wait carries its own timeout (`lockAcquisitionTimeout` in the lock manager,
//! `remoteTimeout` on an RPC); the model keeps a node's deadlines in one table.
//!
//! Deadlines live in an ordered map and are removed when their wait ends, so the driver sees one
//! timer per node instead of one per request: a 100-node simulation with 15 s reply timeouts would
//! otherwise carry millions of dead timers in its event queue.

use std::collections::BTreeMap;

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
    map: BTreeMap<DeadlineKey, Deadline>,
    next_seq: u64,
    armed: Option<u64>,
}

impl Timeouts {
    /// Arms `d` for time `at`.
    pub fn add(&mut self, at: u64, d: Deadline) -> DeadlineKey {
        self.next_seq += 1;
        let k = (at, self.next_seq);
        self.map.insert(k, d);
        k
    }

    /// Disarms a deadline (its wait ended).
    pub fn cancel(&mut self, k: DeadlineKey) {
        self.map.remove(&k);
    }

    /// The driver's timer fired: it is no longer armed.
    pub fn fired(&mut self) {
        self.armed = None;
    }

    /// The earliest deadline due at `now`, removed.
    pub fn pop_expired(&mut self, now: u64) -> Option<Deadline> {
        let entry = self.map.first_entry()?;
        if entry.key().0 <= now {
            Some(entry.remove())
        } else {
            None
        }
    }

    /// A new wake-up time for the driver, when the earliest deadline is earlier than the armed one.
    pub fn rearm(&mut self) -> Option<u64> {
        let (&(at, _), _) = self.map.first_key_value()?;
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
        self.map.len()
    }

    /// Whether no deadline is armed.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
