//! A node's bounded pools for incoming commands: Infinispan's remote-command executor and, behind
//! it, the JGroups OOB thread pool that runs a command when the first pool rejects it ("caller
//! runs", Infinispan's default then).
//!
//! Pool threads are held slots: a command holds its slot from dequeue to completion, including
//! while it waits for a key lock or a synchronous reply. That is what exhausts the pools in the
//! seed story, so both drivers account slots through this type.

use std::collections::VecDeque;
use std::str::FromStr;

use crate::error::ConfigError;
use crate::message::SlotKind;

/// What a full pool does with one more command (`ThreadPoolExecutor`'s rejection handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectionPolicy {
    /// The delivering thread waits until a slot frees: the node's inbound path (commands and
    /// replies behind the command) is held in arrival order meanwhile. Only a command looped
    /// back from the node itself waits in the pool's queue instead.
    Block,
    /// Reject the command; the sender's transport retransmits it later.
    Abort,
    /// Run it on the delivering OOB thread; when the OOB pool is full too, the message is dropped
    /// and retransmitted later (UNICAST3), as in the seed's failure mode.
    CallerRuns,
}

impl RejectionPolicy {
    /// The accepted names.
    pub const NAMES: &'static str = "block, abort, caller-runs";
}

impl FromStr for RejectionPolicy {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "block" => Ok(RejectionPolicy::Block),
            "abort" => Ok(RejectionPolicy::Abort),
            "caller-runs" => Ok(RejectionPolicy::CallerRuns),
            _ => Err(ConfigError::UnknownName {
                what: "rejection policy",
                given: s.to_string(),
                valid: RejectionPolicy::NAMES,
            }),
        }
    }
}

/// One held slot: its pool and a node-unique id, so a driver that backs slots with real threads
/// can tell which thread to wake when the slot is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Which pool the slot belongs to.
    pub kind: SlotKind,
    /// Unique among this node's slots, never reused.
    pub id: u64,
}

/// Bounded slots plus a rejection policy; `T` is the queued command.
#[derive(Debug)]
pub struct Pool<T> {
    next_id: u64,
    track_releases: bool,
    released: Vec<u64>,
    size: usize,
    busy: usize,
    oob_size: usize,
    oob_busy: usize,
    policy: RejectionPolicy,
    queue: VecDeque<T>,
    rejections: u64,
    max_queue: usize,
    max_busy: usize,
}

impl<T> Pool<T> {
    /// A pool of `size` slots, `oob_size` overflow slots (used by caller-runs only) and `policy`.
    pub fn new(size: usize, oob_size: usize, policy: RejectionPolicy) -> Self {
        Pool {
            next_id: 0,
            track_releases: false,
            released: Vec::new(),
            size,
            busy: 0,
            oob_size,
            oob_busy: 0,
            policy,
            queue: VecDeque::new(),
            rejections: 0,
            max_queue: 0,
            max_busy: 0,
        }
    }

    /// Admits `cmd`: `Ok(slot)` to run it now, `Err(None)` when it was queued, `Err(Some(cmd))`
    /// when it was rejected (the caller hands it back to the transport for retransmission).
    pub fn admit(&mut self, cmd: T) -> Result<(Slot, T), Option<T>> {
        if self.busy < self.size && self.queue.is_empty() {
            self.busy += 1;
            self.max_busy = self.max_busy.max(self.busy + self.oob_busy);
            return Ok((self.slot(SlotKind::Pool), cmd));
        }
        match self.policy {
            RejectionPolicy::Block => {
                self.queue.push_back(cmd);
                self.max_queue = self.max_queue.max(self.queue.len());
                Err(None)
            }
            RejectionPolicy::CallerRuns if self.oob_busy < self.oob_size => {
                self.oob_busy += 1;
                self.max_busy = self.max_busy.max(self.busy + self.oob_busy);
                Ok((self.slot(SlotKind::Oob), cmd))
            }
            RejectionPolicy::Abort | RejectionPolicy::CallerRuns => {
                self.rejections += 1;
                Err(Some(cmd))
            }
        }
    }

    /// Whether the transport can deliver one more message: JGroups delivers OOB messages (replies
    /// included) on OOB threads, so when caller-runs has every OOB thread blocked in a command,
    /// an arriving message is dropped and retransmitted later. Counts the drop.
    pub fn can_deliver(&mut self) -> bool {
        if self.policy == RejectionPolicy::CallerRuns && self.oob_busy >= self.oob_size {
            self.rejections += 1;
            return false;
        }
        true
    }

    /// Whether a remote command must wait for a slot under `block`: every slot is busy or
    /// earlier commands already wait.
    pub fn blocks(&self) -> bool {
        self.policy == RejectionPolicy::Block && (self.busy >= self.size || !self.queue.is_empty())
    }

    fn slot(&mut self, kind: SlotKind) -> Slot {
        self.next_id += 1;
        Slot {
            kind,
            id: self.next_id,
        }
    }

    /// Records the ids of released slots from now on (the threads driver wakes their threads).
    pub fn track_releases(&mut self) {
        self.track_releases = true;
    }

    /// Takes the ids of the slots released since the last call (empty unless tracking).
    pub fn take_released(&mut self) -> impl Iterator<Item = u64> + '_ {
        self.released.drain(..)
    }

    /// Gives a slot back.
    pub fn release(&mut self, slot: Slot) {
        match slot.kind {
            SlotKind::Pool => self.busy = self.busy.saturating_sub(1),
            SlotKind::Oob => self.oob_busy = self.oob_busy.saturating_sub(1),
        }
        if self.track_releases {
            self.released.push(slot.id);
        }
    }

    /// A queued command and the slot it now holds, when a slot is free.
    pub fn next_queued(&mut self) -> Option<(Slot, T)> {
        if self.busy < self.size {
            let cmd = self.queue.pop_front()?;
            self.busy += 1;
            return Some((self.slot(SlotKind::Pool), cmd));
        }
        None
    }

    /// Slots in use over both pools.
    pub fn busy(&self) -> usize {
        self.busy + self.oob_busy
    }

    /// Commands waiting for a slot.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Rejected commands so far.
    pub fn rejections(&self) -> u64 {
        self.rejections
    }

    /// The longest the queue has been.
    pub fn max_queue(&self) -> usize {
        self.max_queue
    }

    /// The most slots ever in use at once.
    pub fn max_busy(&self) -> usize {
        self.max_busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_queues_in_fifo_order() {
        let mut p = Pool::new(1, 0, RejectionPolicy::Block);
        p.track_releases();
        let first = match p.admit(1) {
            Ok((slot, 1)) if slot.kind == SlotKind::Pool => slot,
            other => panic!("{other:?}"),
        };
        assert!(matches!(p.admit(2), Err(None)));
        assert!(matches!(p.admit(3), Err(None)));
        assert!(p.next_queued().is_none());
        p.release(first);
        assert_eq!(p.take_released().collect::<Vec<_>>(), vec![first.id]);
        let (slot, cmd) = p.next_queued().unwrap();
        assert_eq!((slot.kind, cmd), (SlotKind::Pool, 2));
        assert_ne!(slot.id, first.id, "slot ids are never reused");
        assert_eq!(p.queued(), 1);
        assert_eq!(p.rejections(), 0);
    }

    #[test]
    fn only_block_reports_a_full_pool_as_blocking() {
        let mut p = Pool::new(1, 1, RejectionPolicy::Block);
        assert!(!p.blocks());
        let (slot, _) = p.admit(1).unwrap();
        assert!(p.blocks());
        p.release(slot);
        assert!(!p.blocks());
        let mut c = Pool::new(1, 1, RejectionPolicy::CallerRuns);
        let _ = c.admit(1);
        assert!(!c.blocks());
    }

    #[test]
    fn caller_runs_overflows_to_oob_then_rejects() {
        let mut p = Pool::new(1, 1, RejectionPolicy::CallerRuns);
        assert!(matches!(
            p.admit(1),
            Ok((
                Slot {
                    kind: SlotKind::Pool,
                    ..
                },
                _
            ))
        ));
        assert!(matches!(
            p.admit(2),
            Ok((
                Slot {
                    kind: SlotKind::Oob,
                    ..
                },
                _
            ))
        ));
        assert!(matches!(p.admit(3), Err(Some(3))));
        assert_eq!(p.rejections(), 1);
        assert!(
            !p.can_deliver(),
            "every OOB thread is busy: even a reply is dropped"
        );
        assert_eq!(p.rejections(), 2);
        assert_eq!(p.busy(), 2);
    }

    #[test]
    fn abort_rejects_when_full() {
        let mut p = Pool::new(1, 5, RejectionPolicy::Abort);
        assert!(p.admit(1).is_ok());
        assert!(matches!(p.admit(2), Err(Some(2))));
        assert_eq!(
            "abort".parse::<RejectionPolicy>(),
            Ok(RejectionPolicy::Abort)
        );
        assert!("drop".parse::<RejectionPolicy>().is_err());
    }
}
