//! Models: Bela Ban's 2014 proposal "DIST-SYNC, put(), a problem and a solution" (key queue, IRAC-style).
//! Upstream: infinispan-dev post of 2014-07-29, section "Improvement"; never shipped as such (Infinispan 9 chose the Triangle).
//! Hot-path cost: one key lock held for the local apply only; one dedup-queue insert; replication happens later, off the lock.
//!
//! The primary locks the key, applies, unlocks, puts the key into a de-duplicating FIFO (a key
//! already queued is not added again, because the worker will read the latest value anyway) and
//! replies. A replication worker per node takes keys in FIFO order, reads the key's current entry
//! and sends it to the backups, keeping up to `repl_window` batches in flight; backups apply an
//! entry only when it is newer than theirs and ack. A batch whose acks time out is requeued.
//! Because backups lag the primary, gets go to the primary (local when the originator is the
//! primary), then to the next owner after the stagger delay.

use std::collections::VecDeque;

use super::kind::{NodeMachine, NodeStats, ProtocolKind, WriteProtocol};
use super::write_protocol::{GetPlan, ProtocolLogic};
use crate::replication::error::ConfigError;
use crate::replication::message::{Key, Msg, NodeId, Output};
use crate::replication::node::{ClusterConfig, Node, NodeCore};
use crate::replication::parts::collections::Slab;
use crate::replication::parts::timeouts::{Deadline, DeadlineKey};

/// The key-queue strategy (`key-queue`).
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyQueueProtocol;

impl WriteProtocol for KeyQueueProtocol {
    fn kind(&self) -> ProtocolKind {
        ProtocolKind::KeyQueue
    }

    fn new_node(
        &self,
        node: u16,
        cfg: &ClusterConfig,
    ) -> Result<Box<dyn NodeMachine>, ConfigError> {
        let logic = KeyQueueLogic {
            queue: DeDupQueue::new(cfg.keys),
            in_flight: Slab::default(),
            window: cfg.repl_window,
        };
        Ok(Box::new(Node::new(NodeCore::new(node, cfg)?, logic)))
    }
}

/// A FIFO of keys in which a key appears at most once.
#[derive(Debug)]
pub struct DeDupQueue {
    fifo: VecDeque<Key>,
    queued: Vec<bool>,
    max_len: usize,
}

impl DeDupQueue {
    /// An empty queue for keys `0..keys`.
    pub fn new(keys: u32) -> Self {
        DeDupQueue {
            fifo: VecDeque::new(),
            queued: vec![false; keys as usize],
            max_len: 0,
        }
    }

    /// Appends `key` unless it is already queued; returns whether it was added.
    pub fn push(&mut self, key: Key) -> bool {
        match self.queued.get_mut(key as usize) {
            Some(q) if !*q => {
                *q = true;
                self.fifo.push_back(key);
                self.max_len = self.max_len.max(self.fifo.len());
                true
            }
            _ => false,
        }
    }

    /// Takes the oldest key.
    pub fn pop(&mut self) -> Option<Key> {
        let key = self.fifo.pop_front()?;
        if let Some(q) = self.queued.get_mut(key as usize) {
            *q = false;
        }
        Some(key)
    }

    /// Keys queued now.
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// Whether no key is queued.
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    /// The longest the queue has been.
    pub fn max_len(&self) -> usize {
        self.max_len
    }
}

#[derive(Debug)]
struct Batch {
    key: Key,
    pending: u8,
    deadline: DeadlineKey,
}

#[derive(Debug)]
struct KeyQueueLogic {
    queue: DeDupQueue,
    in_flight: Slab<Batch>,
    window: usize,
}

impl KeyQueueLogic {
    /// The replication worker: replicate queued keys while the window has room.
    fn pump(&mut self, core: &mut NodeCore, now: u64, out: &mut Vec<Output>) {
        while self.in_flight.len() < self.window {
            let Some(key) = self.queue.pop() else { return };
            let entry = core.data.get(key);
            let owners = core.hash.owners(key);
            let wid = self.in_flight.insert(Batch {
                key,
                pending: owners.backups().len() as u8,
                deadline: (0, 0),
            });
            let deadline = core
                .timeouts
                .add(now + core.cfg.reply_timeout_us, Deadline::Repl(wid));
            if let Some(b) = self.in_flight.get_mut(wid) {
                b.deadline = deadline;
            }
            for &b in owners.backups() {
                let entry = entry.clone();
                core.send(b, Msg::Replicate { wid, key, entry }, out);
            }
        }
    }
}

impl ProtocolLogic for KeyQueueLogic {
    const KIND: ProtocolKind = ProtocolKind::KeyQueue;

    fn get_plan(core: &NodeCore, key: Key) -> GetPlan {
        if core.hash.primary(key) == core.id {
            GetPlan::Local
        } else {
            GetPlan::Staggered {
                stagger_us: core.stagger_us(),
            }
        }
    }

    fn on_lock_granted(&mut self, core: &mut NodeCore, now: u64, op: u64, out: &mut Vec<Output>) {
        let Some(entry) = core.apply_primary(op) else {
            return;
        };
        let Some(key) = core.ops.get(op).map(|o| o.key) else {
            return;
        };
        core.unlock(now, op);
        if core.hash.num_owners() > 1 {
            self.queue.push(key);
        }
        core.finish_primary_put(now, op, Ok(entry.version), out);
        self.pump(core, now, out);
    }

    fn on_message(
        &mut self,
        core: &mut NodeCore,
        now: u64,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        match msg {
            Msg::Replicate { wid, key, entry } => {
                // Applying a newer entry never waits, so it runs on the delivering thread.
                if !core.data.apply_if_newer(key, entry) {
                    core.stats.stale_skipped += 1;
                }
                core.send(from, Msg::ReplicateAck { wid }, out);
            }
            Msg::ReplicateAck { wid } => {
                let Some(b) = self.in_flight.get_mut(wid) else {
                    return;
                };
                b.pending = b.pending.saturating_sub(1);
                if b.pending == 0 {
                    if let Some(b) = self.in_flight.remove(wid) {
                        core.timeouts.cancel(b.deadline);
                    }
                    self.pump(core, now, out);
                }
            }
            _ => {}
        }
    }

    fn on_deadline(&mut self, core: &mut NodeCore, now: u64, d: Deadline, out: &mut Vec<Output>) {
        if let Deadline::Repl(wid) = d {
            if let Some(b) = self.in_flight.remove(wid) {
                core.stats.repl_timeouts += 1;
                self.queue.push(b.key);
                self.pump(core, now, out);
            }
        }
    }

    fn busy_reason(&self) -> Option<String> {
        if !self.queue.is_empty() || !self.in_flight.is_empty() {
            return Some(format!(
                "replication queue {} keys, {} batches in flight",
                self.queue.len(),
                self.in_flight.len()
            ));
        }
        None
    }

    fn fill_stats(&self, stats: &mut NodeStats) {
        stats.repl_queue_max = self.queue.max_len() as u64;
        stats.repl_queue_now = self.queue.len() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_key_is_not_added_again() {
        let mut q = DeDupQueue::new(20);
        for k in [5, 2, 17, 3] {
            assert!(q.push(k));
        }
        assert!(!q.push(2));
        assert_eq!(q.len(), 4);
        assert_eq!(q.pop(), Some(5));
        assert_eq!(q.pop(), Some(2));
        assert!(q.push(2), "a key taken by the worker can be queued again");
        assert_eq!(q.max_len(), 4);
        assert!(!q.push(99), "out-of-range keys are ignored");
    }
}
