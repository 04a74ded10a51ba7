//! The primary owner's per-key lock table (`LockManager` without striping: one lock per key).
//!
//! The lock is logical: the state machine that owns the table grants it and queues waiters in
//! FIFO order, so the simulation can model waiting in virtual time and the threads driver runs the
//! same code. The acquisition timeout is the node's business (it arms a deadline when
//! [`KeyLockTable::lock`] queues a waiter and calls [`KeyLockTable::cancel_wait`] when it fires).
//!
//! | entry state | meaning |
//! |---|---|
//! | absent | unlocked, nobody waiting |
//! | `holder = op`, `waiters = []` | held by `op` |
//! | `holder = op`, `waiters = [w1, w2 ...]` | held; `w1` gets it on unlock |

use std::collections::VecDeque;

use super::collections::IdMap;
use crate::message::Key;

/// An operation id (the node's op slab id) that holds or waits for a key lock.
pub type LockOwner = u64;

#[derive(Debug)]
struct LockEntry {
    holder: LockOwner,
    waiters: VecDeque<LockOwner>,
}

/// What [`KeyLockTable::lock`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockAttempt {
    /// The caller holds the lock now.
    Granted,
    /// The caller waits behind this many others (0 = next in line).
    Queued(usize),
}

/// Per-key locks with FIFO waiters.
#[derive(Debug, Default)]
pub struct KeyLockTable {
    entries: IdMap<Key, LockEntry>,
    acquisitions: u64,
    contended: u64,
}

impl KeyLockTable {
    /// Locks `key` for `op`, or queues `op` behind the holder and earlier waiters.
    pub fn lock(&mut self, key: Key, op: LockOwner) -> LockAttempt {
        self.acquisitions += 1;
        match self.entries.get_mut(&key) {
            None => {
                self.entries.insert(
                    key,
                    LockEntry {
                        holder: op,
                        waiters: VecDeque::new(),
                    },
                );
                LockAttempt::Granted
            }
            Some(e) => {
                self.contended += 1;
                e.waiters.push_back(op);
                LockAttempt::Queued(e.waiters.len() - 1)
            }
        }
    }

    /// Releases `key` held by `op` and returns the waiter that holds it now, if any.
    ///
    /// Releasing a lock one does not hold is a protocol bug; it is ignored and returns `None`.
    pub fn unlock(&mut self, key: Key, op: LockOwner) -> Option<LockOwner> {
        let e = self.entries.get_mut(&key)?;
        if e.holder != op {
            return None;
        }
        match e.waiters.pop_front() {
            Some(next) => {
                e.holder = next;
                Some(next)
            }
            None => {
                self.entries.remove(&key);
                None
            }
        }
    }

    /// Removes `op` from `key`'s waiters (its acquisition timed out); false if it was not waiting.
    pub fn cancel_wait(&mut self, key: Key, op: LockOwner) -> bool {
        let Some(e) = self.entries.get_mut(&key) else {
            return false;
        };
        match e.waiters.iter().position(|&w| w == op) {
            Some(i) => {
                e.waiters.remove(i);
                true
            }
            None => false,
        }
    }

    /// The holder of `key`, if locked.
    #[cfg(test)]
    pub fn holder(&self, key: Key) -> Option<LockOwner> {
        self.entries.get(&key).map(|e| e.holder)
    }

    /// The number of locked keys.
    pub fn locked_keys(&self) -> usize {
        self.entries.len()
    }

    /// Acquisition attempts and how many of them had to wait.
    #[cfg(test)]
    pub fn counts(&self) -> (u64, u64) {
        (self.acquisitions, self.contended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_get_the_lock_in_fifo_order() {
        let mut t = KeyLockTable::default();
        assert_eq!(t.lock(7, 1), LockAttempt::Granted);
        assert_eq!(t.lock(7, 2), LockAttempt::Queued(0));
        assert_eq!(t.lock(7, 3), LockAttempt::Queued(1));
        assert_eq!(t.unlock(7, 1), Some(2));
        assert_eq!(t.unlock(7, 2), Some(3));
        assert_eq!(t.unlock(7, 3), None);
        assert_eq!(t.locked_keys(), 0);
        assert_eq!(t.counts(), (3, 2));
    }

    #[test]
    fn a_timed_out_waiter_is_skipped() {
        let mut t = KeyLockTable::default();
        t.lock(1, 10);
        t.lock(1, 11);
        t.lock(1, 12);
        assert!(t.cancel_wait(1, 11));
        assert!(!t.cancel_wait(1, 11));
        assert_eq!(t.unlock(1, 10), Some(12));
        assert_eq!(t.holder(1), Some(12));
        // Only the holder can release.
        assert_eq!(t.unlock(1, 10), None);
        assert_eq!(t.holder(1), Some(12));
    }
}
