//! Models: Bela Ban's 2014 proposal "DIST-SYNC, put(), a problem and a solution" (key queue, IRAC-style).
//! Upstream: infinispan-dev post of 2014-07-29, section "Improvement"; never shipped as such (Infinispan 9 chose the Triangle).
//! Hot-path cost: one key lock held for the local apply only; one dedup-queue insert; replication happens later, off the lock.
//!
//! The primary locks the key, applies, unlocks, puts the key into a de-duplicating FIFO (a key
//! already queued is not added again, because the worker will read the latest value anyway) and
//! replies. A replication worker per node takes keys in FIFO order, reads the key's current entry
//! and sends it to the backups, keeping up to `repl_window` batches in flight; backups apply an
//! entry only when it is newer than theirs and ack. A batch whose acks time out is requeued.
//!
//! Deviation: the proposal does not say how resends wait. Here a key's next batch after a
//! timeout waits twice as long for its acks, doubling per timeout in a row up to
//! `2^MAX_BACKOFF_DOUBLINGS` reply timeouts, and the first full ack resets it. A late ack for a
//! timed-out batch is still dropped, so with a fixed timeout a backup slower than it would be
//! resent to forever; with the doubling, the resend outwaits any finite delay.
//!
//! Read guarantee: a get that starts after a put of its key was acknowledged returns that put's
//! version or a later one. Only the primary holds a put when it is acknowledged (the backups get
//! it from the queue later), so gets go to the primary only, as the proposal says ("because the
//! backup owner(s) may not yet have received the modification"): a local read when the
//! originator is the primary, else [`GetPlan::Primary`], which waits for the primary's answer up
//! to the reply timeout and never falls back to a backup. A get whose primary does not answer in
//! time fails with a reply timeout instead of returning a possibly stale value. A fallback would
//! break the guarantee: with gets staggered to the next owner after `reply timeout / 10 / owners`
//! (750 ms by default), a requester on a backup whose put's replicate is late (2 s) and whose
//! get's answer from the primary is slow (1 s) reads its own backup's v0 after v1 was
//! acknowledged.
//!
//! Pools (the rule is in `write_protocol.rs`):
//! Key queue: `Get`, `Put` and `Replicate` (the worker's write of a key's current value at a
//! backup: a replicated write, a command as any upstream) are commands on the pool;
//! `GetReply`, `PutReply` and `ReplicateAck` are responses on the delivering thread.

use std::collections::VecDeque;

use super::get_plan::GetPlan;
use super::kind::ProtocolKind;
use super::write_protocol::WriteProtocol;
use crate::components::collections::{IdMap, Slab};
use crate::components::pool::Slot;
use crate::components::timeouts::{Deadline, DeadlineKey};
use crate::message::{Key, Msg, NodeId, Output};
use crate::node::{NodeBase, NodeStats};

/// A backup applies a replicated entry if it is newer than its own (it never waits) and acks it.
fn apply_replicate(
    base: &mut NodeBase,
    from: NodeId,
    wid: u64,
    key: Key,
    entry: crate::message::Versioned,
    out: &mut Vec<Output>,
) {
    if !base.data.apply_if_newer(key, entry) {
        base.stats.stale_skipped += 1;
    }
    base.send(from, Msg::ReplicateAck { wid }, out);
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

/// At most `2^MAX_BACKOFF_DOUBLINGS` reply timeouts for a batch's acks: enough for a backup
/// whose acks take a round trip of milliseconds behind a 1 µs reply timeout.
const MAX_BACKOFF_DOUBLINGS: u32 = 32;

#[derive(Debug)]
struct Batch {
    key: Key,
    pending: u8,
    deadline: DeadlineKey,
}

/// The key-queue strategy (`key-queue`): per node, the replication queue and the batches its
/// worker has in flight.
#[derive(Debug)]
pub struct KeyQueueProtocol {
    queue: DeDupQueue,
    in_flight: Slab<Batch>,
    window: usize,
    /// Keys whose last batch timed out, with how many of their batches timed out in a row (the
    /// backoff of their next batch); a key leaves when one of its batches is fully acked.
    timed_out: IdMap<Key, u32>,
}

impl KeyQueueProtocol {
    /// The replication worker: replicate queued keys while the window has room.
    fn pump(&mut self, base: &mut NodeBase, now: u64, out: &mut Vec<Output>) {
        while self.in_flight.len() < self.window {
            let Some(key) = self.queue.pop() else { return };
            let entry = base.data.get(key);
            let owners = base.hash.owners(key);
            let live = owners
                .backups()
                .iter()
                .filter(|&&b| !base.is_gone(b))
                .count();
            if live == 0 {
                // Every backup is gone: nothing to replicate to.
                continue;
            }
            let wid = self.in_flight.insert(Batch {
                key,
                pending: live as u8,
                deadline: DeadlineKey::NONE,
            });
            let doublings = self
                .timed_out
                .get(&key)
                .map_or(0, |&n| n.min(MAX_BACKOFF_DOUBLINGS));
            let wait = base.cfg.reply_timeout_us.saturating_mul(1 << doublings);
            let deadline = base
                .timeouts
                .add(now.saturating_add(wait), Deadline::Repl(wid));
            if let Some(b) = self.in_flight.get_mut(wid) {
                b.deadline = deadline;
            }
            for &b in owners.backups() {
                if !base.is_gone(b) {
                    let entry = entry.clone();
                    base.send(b, Msg::Replicate { wid, key, entry }, out);
                }
            }
        }
    }
}

impl WriteProtocol for KeyQueueProtocol {
    const KIND: ProtocolKind = ProtocolKind::KeyQueue;

    fn new(base: &NodeBase) -> Self {
        KeyQueueProtocol {
            queue: DeDupQueue::new(base.cfg.keys),
            in_flight: Slab::default(),
            window: base.cfg.repl_window,
            timed_out: IdMap::default(),
        }
    }

    const OWNERS_HOLD_ACKED_PUTS: bool = false;

    fn is_command(msg: &Msg) -> bool {
        // A replicate is a remote write at the backup: it runs on the remote-command pool as any
        // replicated write does upstream (module doc, "Pools").
        matches!(
            msg,
            Msg::Get { .. } | Msg::Put { .. } | Msg::Replicate { .. }
        )
    }

    fn on_command(
        &mut self,
        base: &mut NodeBase,
        _now: u64,
        slot: Slot,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        if let Msg::Replicate { wid, key, entry } = msg {
            apply_replicate(base, from, wid, key, entry, out);
        }
        base.pool.release(slot);
    }

    fn get_plan(base: &NodeBase, key: Key) -> GetPlan {
        if base.hash.primary(key) == base.id {
            GetPlan::Local
        } else {
            // Not even a backup originator reads its own container: it may lag (module doc).
            GetPlan::Primary
        }
    }

    fn on_lock_granted(&mut self, base: &mut NodeBase, now: u64, op: u64, out: &mut Vec<Output>) {
        let Some(entry) = base.apply_primary(op) else {
            return;
        };
        let Some(key) = base.ops.get(op).map(|o| o.key) else {
            return;
        };
        base.unlock(now, op);
        if base.hash.num_owners() > 1 {
            self.queue.push(key);
        }
        base.finish_primary_put(now, op, Ok(entry.version), out);
        self.pump(base, now, out);
    }

    fn on_message(
        &mut self,
        base: &mut NodeBase,
        now: u64,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        match msg {
            // A replicate is a command (`is_command`): it reaches `on_command` on a pool slot.
            // Only a wrapper that keeps the default `is_command` delivers it here.
            Msg::Replicate { wid, key, entry } => apply_replicate(base, from, wid, key, entry, out),
            Msg::ReplicateAck { wid } => {
                let Some(b) = self.in_flight.get_mut(wid) else {
                    return;
                };
                b.pending = b.pending.saturating_sub(1);
                if b.pending == 0 {
                    if let Some(b) = self.in_flight.remove(wid) {
                        base.timeouts.cancel(b.deadline);
                        if !self.timed_out.is_empty() {
                            self.timed_out.remove(&b.key);
                        }
                    }
                    self.pump(base, now, out);
                }
            }
            _ => {}
        }
    }

    fn on_deadline(&mut self, base: &mut NodeBase, now: u64, d: Deadline, out: &mut Vec<Output>) {
        if let Deadline::Repl(wid) = d {
            if let Some(b) = self.in_flight.remove(wid) {
                base.stats.repl_timeouts += 1;
                let n = self.timed_out.entry(b.key).or_insert(0);
                *n = n.saturating_add(1);
                self.queue.push(b.key);
                self.pump(base, now, out);
            }
        }
    }

    /// A batch waiting on the gone node would wait for ever (it acks nothing, and a timed-out
    /// batch is resent to it): each such batch is dropped and its key queued again, and the
    /// worker sends keys to live backups only from now on. Upstream a new view would also give
    /// the key a new owner and transfer its state to it; this model has no view change, so the
    /// survivors keep fewer copies.
    fn on_member_left(
        &mut self,
        base: &mut NodeBase,
        now: u64,
        node: NodeId,
        out: &mut Vec<Output>,
    ) {
        let waiting: Vec<u64> = self
            .in_flight
            .ids()
            .filter(|&wid| {
                self.in_flight
                    .get(wid)
                    .is_some_and(|b| base.hash.owners(b.key).backups().contains(&node))
            })
            .collect();
        for wid in waiting {
            if let Some(b) = self.in_flight.remove(wid) {
                base.timeouts.cancel(b.deadline);
                self.queue.push(b.key);
            }
        }
        self.pump(base, now, out);
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

    /// Guards against the stale backup read at the machine: a requester on the key's backup asks
    /// the primary only and keeps waiting for it past the stagger delay (750 ms with the default
    /// 15 s reply timeout and two owners); nothing is asked of the backup, not even its own
    /// container.
    #[test]
    fn a_backup_requesters_get_asks_the_primary_only_past_the_stagger() {
        use crate::message::{ClientOp, Input};
        let (cfg, key) = crate::tests::two_nodes_and_a_key_of_node_0();
        let mut backup = ProtocolKind::KeyQueue.new_node(1, &cfg).unwrap();
        let mut out = Vec::new();
        let get = Input::Client {
            requester: 0,
            op: ClientOp::Get(key),
        };
        backup.handle(0, get, &mut out);
        out.retain(|o| !matches!(o, Output::SetTimer { .. }));
        assert!(
            matches!(
                out[..],
                [Output::Send {
                    to: 0,
                    msg: Msg::Get { .. }
                }]
            ),
            "{out:?}"
        );
        out.clear();
        backup.handle(750_000, Input::Timer, &mut out);
        backup.handle(14_000_000, Input::Timer, &mut out);
        out.retain(|o| !matches!(o, Output::SetTimer { .. }));
        assert_eq!(out, vec![], "no stagger, no reply yet");
        assert_eq!(backup.stats().staggered_gets, 0);
        assert!(backup.busy_reason().is_some(), "the get still waits");
    }

    /// A batch in flight to a backup the failure detector reports gone is not waited for: it
    /// is dropped, its key has no live backup left, and the primary quiesces, as it does after
    /// a later put of the key.
    #[test]
    fn a_gone_backup_is_not_waited_for() {
        use crate::message::{ClientOp, Input, Value};
        let (cfg, key) = crate::tests::two_nodes_and_a_key_of_node_0();
        let mut primary = ProtocolKind::KeyQueue.new_node(0, &cfg).unwrap();
        let replicates = |out: &[Output]| {
            out.iter()
                .filter(|o| {
                    matches!(
                        o,
                        Output::Send {
                            to: 1,
                            msg: Msg::Replicate { .. }
                        }
                    )
                })
                .count()
        };
        let put = |tag| Input::Client {
            requester: 0,
            op: ClientOp::Put(key, Value::new(tag, 8)),
        };
        let mut out = Vec::new();
        primary.handle(0, put(1), &mut out);
        assert_eq!(replicates(&out), 1, "{out:?}");
        assert!(primary.busy_reason().is_some());
        out.clear();
        primary.handle(1, Input::Left(1), &mut out);
        assert_eq!(replicates(&out), 0, "{out:?}");
        assert_eq!(primary.busy_reason(), None);
        primary.handle(2, put(2), &mut out);
        assert_eq!(replicates(&out), 0, "{out:?}");
        assert_eq!(primary.busy_reason(), None);
    }
}
