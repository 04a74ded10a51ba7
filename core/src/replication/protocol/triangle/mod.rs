//! Models: Infinispan 9's non-transactional write algorithm, "the Triangle" (ISPN-6919).
//! Upstream: `TriangleDistributionInterceptor`, `TriangleOrderManager`, `CommandAckCollector` (PRs #4669/#4722, ISPN-7322).
//! Hot-path cost: one key lock held for the local apply and one sequence number; no network wait under the lock; 4 messages per remote put.
//!
//! The primary locks the key, applies, takes the segment's next sequence number, sends the backup
//! write unordered, unlocks and replies to the originator. Backups apply writes of a segment in
//! sequence order (buffering early arrivals) and ack the originator, whose collector completes
//! when it has the primary's result and every backup's ack, or fails after the reply timeout.
//! Gets are local when the originator owns the key, otherwise staggered over the owners.
//!
//! Deviation: no `BackupNoopCommand`: in this model nothing can fail between taking a sequence
//! number and sending the backup write, so no gap needs filling (ISPN-12435's marshalling failure
//! has no counterpart here); the verifier checks that no gap appears.

pub mod order;

use std::collections::BTreeMap;

use super::kind::{NodeMachine, NodeStats, ProtocolKind, WriteProtocol};
use super::write_protocol::{GetPlan, ProtocolLogic};
use crate::replication::error::ConfigError;
use crate::replication::message::{Key, Msg, NodeId, OpError, Output, SeqTag, Versioned};
use crate::replication::node::{ClusterConfig, Node, NodeCore, Origin};
use crate::replication::parts::timeouts::Deadline;
use order::TriangleOrderManager;

/// The Triangle strategy (`triangle`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TriangleProtocol;

impl WriteProtocol for TriangleProtocol {
    fn kind(&self) -> ProtocolKind {
        ProtocolKind::Triangle
    }

    fn new_node(
        &self,
        node: u16,
        cfg: &ClusterConfig,
    ) -> Result<Box<dyn NodeMachine>, ConfigError> {
        let core = NodeCore::new(node, cfg)?;
        let segments = core.hash.num_segments();
        let logic = TriangleLogic {
            order: TriangleOrderManager::new(segments),
            buffered: (0..segments).map(|_| BTreeMap::new()).collect(),
            buffered_total: 0,
        };
        Ok(Box::new(Node::new(core, logic)))
    }
}

#[derive(Debug, Clone)]
struct EarlyWrite {
    origin: NodeId,
    rid: u64,
    key: Key,
    entry: Versioned,
    topology: u32,
}

#[derive(Debug)]
struct TriangleLogic {
    order: TriangleOrderManager,
    /// Backup writes that arrived before their turn, per segment, by sequence number.
    buffered: Vec<BTreeMap<u64, EarlyWrite>>,
    buffered_total: usize,
}

impl TriangleLogic {
    fn deliver(
        &mut self,
        core: &mut NodeCore,
        segment: u16,
        seq: u64,
        w: EarlyWrite,
        out: &mut Vec<Output>,
    ) {
        // The segment order is what keeps backups consistent, so the apply is unconditional: a
        // regression here would be a sequencing bug, and the verifier counts it.
        core.data.apply(w.key, w.entry);
        self.order.deliver(segment, seq, w.topology);
        core.send(w.origin, Msg::BackupAck { rid: w.rid }, out);
    }

    fn drain(&mut self, core: &mut NodeCore, segment: u16, out: &mut Vec<Output>) {
        let topology = core.hash.topology_id();
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
            self.deliver(core, segment, seq, w, out);
        }
    }
}

impl ProtocolLogic for TriangleLogic {
    const KIND: ProtocolKind = ProtocolKind::Triangle;

    fn get_plan(core: &NodeCore, key: Key) -> GetPlan {
        if core.hash.owners(key).contains(core.id) {
            GetPlan::Local
        } else {
            GetPlan::Staggered {
                stagger_us: core.stagger_us(),
            }
        }
    }

    fn put_acks(core: &NodeCore, key: Key) -> u8 {
        // The originator completes after the primary's result and one ack per backup.
        core.hash.owners(key).backups().len() as u8
    }

    fn on_lock_granted(&mut self, core: &mut NodeCore, now: u64, op: u64, out: &mut Vec<Output>) {
        let Some(entry) = core.apply_primary(op) else {
            return;
        };
        let Some((key, origin)) = core.ops.get(op).map(|o| (o.key, o.origin)) else {
            return;
        };
        let (origin, rid) = match origin {
            Origin::Remote { from, rid } => (from, rid),
            Origin::Local { rid } => (core.id, rid),
        };
        let segment = core.hash.segment(key);
        let topology = core.hash.topology_id();
        let seq = match self.order.next(segment, topology) {
            Ok(seq) => seq,
            Err(_) => {
                // Unreachable with a fixed view; upstream retries the command in the next topology.
                core.finish_primary_put(now, op, Err(OpError::ReplyTimeout), out);
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
        for &b in core.hash.owners(key).backups() {
            core.send(
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
        core.finish_primary_put(now, op, Ok(version), out);
    }

    fn on_message(
        &mut self,
        core: &mut NodeCore,
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
                .is_next(seq.segment, seq.seq, seq.topology, core.hash.topology_id())
            {
                self.deliver(core, seq.segment, seq.seq, w, out);
                self.drain(core, seq.segment, out);
            } else if let Some(map) = self.buffered.get_mut(seq.segment as usize) {
                core.stats.reordered_backups += 1;
                if map.insert(seq.seq, w).is_none() {
                    self.buffered_total += 1;
                }
            }
        }
    }

    fn on_deadline(
        &mut self,
        _core: &mut NodeCore,
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
