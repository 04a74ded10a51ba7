//! The primary owner's path of a write (Infinispan's `NonTransactionalLockingInterceptor` and the
//! primary half of the distribution interceptor): register the write, take the key lock (or queue
//! for it with a lock-acquisition deadline), apply at the next version, unlock, and answer the
//! originator. What happens between apply and unlock is the protocol's business.

use super::node_base::{NodeBase, Work};
use crate::components::key_lock::LockAttempt;
use crate::components::pool::Slot;
use crate::components::timeouts::{Deadline, DeadlineKey};
use crate::message::{Key, Msg, NodeId, Output, PutResult, Value, Versioned};

/// Who waits for a primary op's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A remote originator's request id.
    Remote { from: NodeId, rid: u64 },
    /// A requester of this node (its client request id).
    Local { rid: u64 },
}

/// A write in progress at its primary owner.
#[derive(Debug)]
pub(crate) struct PrimaryOp {
    pub origin: Origin,
    pub key: Key,
    /// The value to apply; moved into `entry` when applied.
    pub value: Value,
    /// The pool slot a remote command holds (a local requester holds none: it is its own thread).
    pub slot: Option<Slot>,
    /// The lock-acquisition or backup-reply deadline currently armed.
    pub deadline: Option<DeadlineKey>,
    /// The entry applied, once applied.
    pub entry: Versioned,
    /// LockForwarding: backup replies still missing.
    pub pending: u8,
    /// Whether the key lock is held.
    pub locked: bool,
    /// When the key lock was granted.
    pub locked_at: u64,
}

impl NodeBase {
    /// Registers a write at this (primary) node and asks for its key lock.
    pub(crate) fn begin_primary_put(
        &mut self,
        now: u64,
        origin: Origin,
        key: Key,
        value: Value,
        slot: Option<Slot>,
    ) -> u64 {
        let op = self.ops.insert(PrimaryOp {
            origin,
            key,
            value,
            slot,
            deadline: None,
            entry: Versioned::default(),
            pending: 0,
            locked: false,
            locked_at: now,
        });
        match self.locks.lock(key, op) {
            LockAttempt::Granted => self.work.push_back(Work::LockGranted(op)),
            LockAttempt::Queued(_) => {
                let k = self
                    .timeouts
                    .add(now + self.cfg.lock_timeout_us, Deadline::Lock(op));
                if let Some(o) = self.ops.get_mut(op) {
                    o.deadline = Some(k);
                }
            }
        }
        op
    }

    /// Marks `op` as holding its lock (called by the protocol when the grant arrives).
    pub(crate) fn lock_granted(&mut self, now: u64, op: u64) -> Option<&mut PrimaryOp> {
        let o = self.ops.get_mut(op)?;
        if let Some(k) = o.deadline.take() {
            self.timeouts.cancel(k);
        }
        o.locked = true;
        o.locked_at = now;
        Some(o)
    }

    /// Applies `op`'s value at the next version of its key and returns the entry (sharing the
    /// stored value's bytes).
    pub(crate) fn apply_primary(&mut self, op: u64) -> Option<Versioned> {
        let o = self.ops.get_mut(op)?;
        let entry = Versioned {
            version: self.data.version(o.key) + 1,
            value: std::mem::take(&mut o.value),
        };
        o.entry = entry.clone();
        self.data.apply(o.key, entry.clone());
        Some(entry)
    }

    /// Releases `op`'s key lock, handing it to the next waiter.
    pub(crate) fn unlock(&mut self, now: u64, op: u64) {
        let Some(o) = self.ops.get_mut(op) else {
            return;
        };
        if !o.locked {
            return;
        }
        o.locked = false;
        // Lock-hold spans: how long the key stayed locked, network waits included.
        let held = now.saturating_sub(o.locked_at);
        self.stats.max_lock_hold_us = self.stats.max_lock_hold_us.max(held);
        self.stats.lock_hold_total_us += held;
        let key = o.key;
        if let Some(next) = self.locks.unlock(key, op) {
            self.work.push_back(Work::LockGranted(next));
        }
    }

    /// Ends `op`: unlocks if still locked, answers its origin, frees its pool slot.
    pub(crate) fn finish_primary_put(
        &mut self,
        now: u64,
        op: u64,
        result: PutResult,
        out: &mut Vec<Output>,
    ) {
        self.unlock(now, op);
        let Some(o) = self.ops.remove(op) else { return };
        if let Some(k) = o.deadline {
            self.timeouts.cancel(k);
        }
        match o.origin {
            Origin::Remote { from, rid } => self.send(from, Msg::PutReply { rid, result }, out),
            Origin::Local { rid } => self.put_result(rid, result, out),
        }
        if let Some(slot) = o.slot {
            self.pool.release(slot);
        }
    }

    /// Arms a protocol deadline for `op` (LockForwarding's backup replies).
    pub(crate) fn arm_op_deadline(&mut self, now: u64, op: u64, d: Deadline) {
        let k = self.timeouts.add(now + self.cfg.reply_timeout_us, d);
        if let Some(o) = self.ops.get_mut(op) {
            if let Some(old) = o.deadline.replace(k) {
                self.timeouts.cancel(old);
            }
        }
    }
}
