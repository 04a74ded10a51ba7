//! Models: Infinispan 9's non-transactional write algorithm, "the Triangle" (ISPN-6919).
//! Upstream: `TriangleDistributionInterceptor`, `TriangleOrderManager`, `CommandAckCollector` (PRs #4669/#4722, ISPN-7322).
//! Hot-path cost: one key lock held for the local apply and one sequence number; no network wait under the lock; 4 messages per remote put.
//!
//! The primary locks the key, applies, takes the segment's next sequence number, sends the backup
//! write unordered, unlocks and replies to the originator. Backups apply writes of a segment in
//! sequence order (buffering early arrivals) and ack the originator, whose collector completes
//! when it has the primary's result and every backup's ack, or fails after the reply timeout.
//! Gets are local when the originator owns the key, otherwise staggered over the owners. Read
//! guarantee: a get that starts after a put of its key was acknowledged returns that put's version
//! or a later one, whichever owner answers, because the originator acknowledges a put only once
//! every backup has applied it (in segment order) and acked, and the primary applied it first.
//! A write still in flight (not yet acknowledged) may be seen by one get and not by a later one
//! that another owner answers: the guarantee covers acknowledged writes only.
//!
//! Pools (the rule is in `write_protocol.rs`):
//! Triangle: `Get`, `Put` and `BackupWrite` are commands on the pool: upstream's
//! `TrianglePerCacheInboundInvocationHandler` hands a backup write, once its
//! `TriangleOrderAction` says it is its turn, to the remote-commands executor (Infinispan 9.x;
//! the non-blocking executor from Infinispan 11) and handles `BackupAckCommand` on the
//! delivering thread (`command.ack()`), as `GetReply` and `PutReply` are here.
//!
//! Deviation: no `BackupNoopCommand`: in this model nothing can fail between taking a sequence
//! number and sending the backup write, so no gap needs filling (ISPN-12435's marshalling failure
//! has no counterpart here); the verifier checks that no gap appears.

pub mod order;

use std::collections::BTreeMap;

use super::get_plan::GetPlan;
use super::kind::ProtocolKind;
use super::write_protocol::WriteProtocol;
use crate::components::pool::Slot;
use crate::components::timeouts::Deadline;
use crate::message::{Key, Msg, NodeId, OpError, Output, SeqTag, Versioned};
use crate::node::{NodeBase, NodeStats, Origin};
use order::TriangleOrderManager;

#[derive(Debug, Clone)]
struct EarlyWrite {
    origin: NodeId,
    rid: u64,
    key: Key,
    entry: Versioned,
    topology: u32,
}

/// The Triangle strategy (`triangle`): per node, the segments' sequencers and the backup writes
/// that arrived before their turn.
#[derive(Debug)]
pub struct TriangleProtocol {
    order: TriangleOrderManager,
    /// Backup writes that arrived before their turn, per segment, by sequence number.
    buffered: Vec<BTreeMap<u64, EarlyWrite>>,
    buffered_total: usize,
}

impl TriangleProtocol {
    fn deliver(
        &mut self,
        base: &mut NodeBase,
        segment: u16,
        seq: u64,
        w: EarlyWrite,
        out: &mut Vec<Output>,
    ) {
        // The segment order is what keeps backups consistent, so the apply is unconditional: a
        // regression here would be a sequencing bug, and the verifier counts it.
        base.data.apply(w.key, w.entry);
        self.order.deliver(segment, seq, w.topology);
        base.send(w.origin, Msg::BackupAck { rid: w.rid }, out);
    }

    fn drain(&mut self, base: &mut NodeBase, segment: u16, out: &mut Vec<Output>) {
        let topology = base.hash.topology_id();
        loop {
            let Some(map) = self.buffered.get_mut(segment as usize) else {
                return;
            };
            let Some((&seq, w)) = map.first_key_value() else {
                return;
            };
            if !self.order.is_next(segment, seq, w.topology, topology) {
                return;
            }
            let Some(w) = map.remove(&seq) else {
                return;
            };
            self.buffered_total -= 1;
            self.deliver(base, segment, seq, w, out);
        }
    }
}

impl WriteProtocol for TriangleProtocol {
    const KIND: ProtocolKind = ProtocolKind::Triangle;

    fn new(base: &NodeBase) -> Self {
        let segments = base.hash.num_segments();
        TriangleProtocol {
            order: TriangleOrderManager::new(segments),
            buffered: (0..segments).map(|_| BTreeMap::new()).collect(),
            buffered_total: 0,
        }
    }

    fn get_plan(base: &NodeBase, key: Key) -> GetPlan {
        if base.hash.owners(key).contains(base.id) {
            GetPlan::Local
        } else {
            GetPlan::Staggered {
                stagger_us: base.stagger_us(),
            }
        }
    }

    fn is_command(msg: &Msg) -> bool {
        // A backup write runs on the remote-command pool (module doc, "Pools"); the backup's ack
        // to the originator is handled on the delivering thread.
        matches!(
            msg,
            Msg::Get { .. } | Msg::Put { .. } | Msg::BackupWrite { .. }
        )
    }

    fn on_command(
        &mut self,
        base: &mut NodeBase,
        now: u64,
        slot: Slot,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        // Ordering never waits on the slot: a write that is early is buffered (as upstream's
        // `TriangleOrderAction` keeps a task that is not ready off the pool's threads) and the
        // slot freed at once.
        self.on_message(base, now, from, msg, out);
        base.pool.release(slot);
    }

    fn put_acks(base: &NodeBase, key: Key) -> u8 {
        // The originator completes after the primary's result and one ack per backup.
        base.hash.owners(key).backups().len() as u8
    }

    fn on_lock_granted(&mut self, base: &mut NodeBase, now: u64, op: u64, out: &mut Vec<Output>) {
        let Some(entry) = base.apply_primary(op) else {
            return;
        };
        let Some((key, origin)) = base.ops.get(op).map(|o| (o.key, o.origin)) else {
            return;
        };
        let (origin, rid) = match origin {
            Origin::Remote { from, rid } => (from, rid),
            Origin::Local { rid } => (base.id, rid),
        };
        let segment = base.hash.segment(key);
        let topology = base.hash.topology_id();
        let seq = match self.order.next(segment, topology) {
            Ok(seq) => seq,
            Err(_) => {
                // Unreachable with a fixed view; upstream retries the command in the next topology.
                base.finish_primary_put(now, op, Err(OpError::ReplyTimeout), out);
                return;
            }
        };
        let tag = SeqTag {
            segment,
            topology,
            seq,
        };
        let version = entry.version;
        // Each backup gets the entry: a reference-count bump here; a driver that moves the
        // message to another node deep-copies it there.
        for &b in base.hash.owners(key).backups() {
            base.send(
                b,
                Msg::BackupWrite {
                    rid,
                    origin,
                    key,
                    entry: entry.clone(),
                    seq: tag,
                },
                out,
            );
        }
        base.finish_primary_put(now, op, Ok(version), out);
    }

    fn on_message(
        &mut self,
        base: &mut NodeBase,
        _now: u64,
        _from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        if let Msg::BackupWrite {
            rid,
            origin,
            key,
            entry,
            seq,
        } = msg
        {
            let w = EarlyWrite {
                origin,
                rid,
                key,
                entry,
                topology: seq.topology,
            };
            if self
                .order
                .is_next(seq.segment, seq.seq, seq.topology, base.hash.topology_id())
            {
                self.deliver(base, seq.segment, seq.seq, w, out);
                self.drain(base, seq.segment, out);
            } else if let Some(map) = self.buffered.get_mut(seq.segment as usize) {
                base.stats.reordered_backups += 1;
                if map.insert(seq.seq, w).is_none() {
                    self.buffered_total += 1;
                }
            }
        }
    }

    fn on_deadline(
        &mut self,
        _base: &mut NodeBase,
        _now: u64,
        _d: Deadline,
        _out: &mut Vec<Output>,
    ) {
    }

    fn busy_reason(&self) -> Option<String> {
        (self.buffered_total > 0).then(|| {
            format!(
                "{} backup writes buffered waiting for their turn",
                self.buffered_total
            )
        })
    }

    fn fill_stats(&self, _stats: &mut NodeStats) {}

    fn sequences(&self) -> (Vec<u64>, Vec<u64>) {
        (self.order.last_sent(), self.order.last_delivered())
    }
}
