//! The verifier: after quiescence, checks the contract of [`WriteProtocol`](super::WriteProtocol)
//! on a whole cluster. Ours: upstream has no such checker (IspnPerfTest counts requests only).
//!
//! Checks, in order: every node is quiescent (no request, op, lock, pool slot, queued key or
//! buffered backup write left); no node applied an older version over a newer one; every owner
//! of every key holds the primary's entry; every acknowledged write survives (the primary holds
//! its version or a later one, and the same value at that version); for Triangle, every backup
//! delivered exactly the sequence numbers its segment's primary handed out (no gap, no excess).

use super::components::data_container::DataContainer;
use super::components::hashing::ConsistentHash;
use super::error::VerifyError;
use super::message::{Key, NodeId, Versioned};
use super::node::NodeMachine;
use super::protocol::ProtocolKind;

/// The newest acknowledged write per key, as the requesters saw it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct AckLog {
    newest: Vec<Versioned>,
    acked: u64,
}

impl AckLog {
    /// An empty log for keys `0..keys`.
    pub fn new(keys: u32) -> Self {
        AckLog {
            newest: vec![Versioned::default(); keys as usize],
            acked: 0,
        }
    }

    /// Records that a put of `key` was acknowledged with `entry` (kept, sharing its bytes, only
    /// if it is the newest so far).
    pub fn record(&mut self, key: Key, entry: &Versioned) {
        self.acked += 1;
        if let Some(slot) = self.newest.get_mut(key as usize) {
            if entry.version > slot.version {
                *slot = entry.clone();
            }
        }
    }

    /// Adds `acked` acknowledged puts, of which `newest` are the newest per key: what a node
    /// process streamed since its last delta ([`Acked`](crate::driver::net::control::Acked)).
    pub fn absorb(&mut self, acked: u64, newest: &[(Key, Versioned)]) {
        for (key, entry) in newest {
            self.record(*key, entry);
        }
        self.acked += acked.saturating_sub(newest.len() as u64);
    }

    /// Merges another requester's log into this one.
    pub fn merge(&mut self, other: &AckLog) {
        self.acked += other.acked;
        for (slot, e) in self.newest.iter_mut().zip(&other.newest) {
            if e.version > slot.version {
                *slot = e.clone();
            }
        }
    }

    /// Acknowledged puts recorded.
    pub fn acked(&self) -> u64 {
        self.acked
    }
}

/// What a successful verification covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Keys whose owners were compared.
    pub keys_checked: u64,
    /// Keys that hold a value.
    pub keys_written: u64,
    /// Acknowledged puts checked against the owners.
    pub acked_writes: u64,
    /// The sum of the primaries' versions over all keys: a check value that any lost or extra
    /// write changes.
    pub version_sum: u64,
    /// Triangle: segments whose sequence numbers were compared (0 for the other protocols).
    pub segments_checked: u64,
    /// Keys whose newest acknowledged write died with their killed primary before it was
    /// replicated: possible only where a put is acknowledged before the backups hold it (key
    /// queue), and counted, not failed, there; always 0 for the other protocols.
    pub lost_with_primary: u64,
}

impl std::fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} keys agree on all owners ({} written, version sum {}), {} acked puts kept, {} segment sequences gap-free",
            self.keys_checked,
            self.keys_written,
            self.version_sum,
            self.acked_writes,
            self.segments_checked
        )?;
        if self.lost_with_primary > 0 {
            write!(
                f,
                "; {} keys lost their newest acked put with their killed primary (acknowledged before replication)",
                self.lost_with_primary
            )?;
        }
        Ok(())
    }
}

/// What the verifier needs of one node, copied out so a threads driver can send it across.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NodeSnapshot {
    /// The protocol.
    pub kind: ProtocolKind,
    /// The node's id.
    pub id: NodeId,
    /// Why it is not quiescent, if it is not.
    pub busy: Option<String>,
    /// The node's data container.
    pub data: DataContainer,
    /// Triangle's sequences (see [`NodeMachine::sequences`]).
    pub sequences: (Vec<u64>, Vec<u64>),
    /// The consistent hash.
    pub hash: ConsistentHash,
}

impl NodeSnapshot {
    /// Copies what the verifier needs out of `node`.
    pub fn of(node: &dyn NodeMachine) -> Self {
        NodeSnapshot {
            kind: node.kind(),
            id: node.base().id(),
            busy: node.busy_reason(),
            data: node.base().data().clone(),
            sequences: node.sequences(),
            hash: node.base().hash().clone(),
        }
    }
}

/// Verifies a quiescent cluster against the acknowledged writes in `acks`.
pub fn verify(nodes: &[Box<dyn NodeMachine>], acks: &AckLog) -> Result<VerifyReport, VerifyError> {
    let snapshots: Vec<_> = nodes.iter().map(|n| NodeSnapshot::of(n.as_ref())).collect();
    verify_snapshots(&snapshots, acks)
}

/// [`verify`] over snapshots, ordered by node id: [`verify_survivors`] with none dead.
pub fn verify_snapshots(
    nodes: &[NodeSnapshot],
    acks: &AckLog,
) -> Result<VerifyReport, VerifyError> {
    if let Some(first) = nodes.first() {
        if nodes.len() != first.hash.nodes()
            || nodes.iter().enumerate().any(|(i, n)| n.id as usize != i)
        {
            return Err(VerifyError::NotQuiescent {
                node: first.id,
                what: format!(
                    "{} snapshots given for a {}-node view, or out of order",
                    nodes.len(),
                    first.hash.nodes()
                ),
            });
        }
    }
    verify_survivors(nodes, &[], acks)
}

/// Whether `found` misses the acknowledged write `acked`: an older version, or the same version
/// with another value.
fn older(found: &Versioned, acked: &Versioned) -> bool {
    found.version < acked.version || (found.version == acked.version && found.value != acked.value)
}

/// The verifier over the snapshots of every live node of a cluster whose `dead` nodes'
/// processes were killed (the net driver's fault runs; none for [`verify_snapshots`]), with no
/// view change. Every live node is quiescent and regression-free; for every key, its live
/// owners agree (with its primary, when that lives) and hold its newest acknowledged write, so
/// no acknowledged write was lost while one owner of each key lives; and for Triangle, every
/// live backup delivered exactly the sequence numbers its live primary handed out. A key with no
/// live owner is an error too: its writes are gone. Under a protocol that acknowledges a put
/// before its backups hold it (key queue), a key whose primary was killed may have lost its
/// newest acknowledged write, or left its live backups at different points of its replication:
/// such keys are counted ([`VerifyReport::lost_with_primary`]), the others checked in full.
pub fn verify_survivors(
    nodes: &[NodeSnapshot],
    dead: &[NodeId],
    acks: &AckLog,
) -> Result<VerifyReport, VerifyError> {
    let mut report = VerifyReport {
        keys_checked: 0,
        keys_written: 0,
        acked_writes: acks.acked,
        version_sum: 0,
        segments_checked: 0,
        lost_with_primary: 0,
    };
    // A check over nothing proves nothing: with every node dead (or none given) no write
    // survives to be compared.
    let Some(first) = nodes.first() else {
        return Err(VerifyError::NoSurvivors {
            dead: dead.to_vec(),
            acked: acks.acked,
        });
    };
    for n in nodes {
        if let Some(what) = n.busy.clone() {
            return Err(VerifyError::NotQuiescent { node: n.id, what });
        }
        let count = n.data.regressions();
        if count > 0 {
            return Err(VerifyError::VersionRegression { node: n.id, count });
        }
    }
    let hash = first.hash.clone();
    let mut by_id: Vec<Option<&NodeSnapshot>> = vec![None; hash.nodes()];
    for n in nodes {
        if let Some(slot) = by_id.get_mut(usize::from(n.id)) {
            *slot = Some(n);
        }
    }
    let missing = (0..hash.nodes() as NodeId)
        .find(|&i| by_id[usize::from(i)].is_none() && !dead.contains(&i));
    if let Some(node) = missing {
        return Err(VerifyError::NotQuiescent {
            node,
            what: "neither reported nor dead".into(),
        });
    }
    for key in 0..first.data.keys() {
        let owners = hash.owners(key);
        let live: Vec<(NodeId, Versioned)> = owners
            .all()
            .iter()
            .filter_map(|&o| by_id[usize::from(o)].map(|n| (o, n.data.get(key))))
            .collect();
        let acked = acks.newest.get(key as usize).cloned().unwrap_or_default();
        // A key with no live owner lost its writes to the kill itself, under any protocol: it
        // fails below.
        if !first.kind.owners_hold_acked_puts()
            && dead.contains(&owners.primary())
            && let Some((_, e)) = live.first()
        {
            let kept = live.iter().all(|(_, other)| other == e) && !older(e, &acked);
            if !kept {
                report.lost_with_primary += 1;
                continue;
            }
        }
        let Some((a, ea)) = live.first().cloned() else {
            return Err(VerifyError::AckedWriteLost {
                key,
                acked,
                found: Versioned::default(),
            });
        };
        for (b, eb) in &live[1..] {
            if *eb != ea {
                return Err(VerifyError::OwnersDisagree {
                    key,
                    a,
                    ea,
                    b: *b,
                    eb: eb.clone(),
                });
            }
        }
        if older(&ea, &acked) {
            return Err(VerifyError::AckedWriteLost {
                key,
                acked,
                found: ea,
            });
        }
        report.keys_checked += 1;
        report.keys_written += (ea.version > 0) as u64;
        report.version_sum += ea.version;
    }
    if first.kind == ProtocolKind::Triangle {
        for segment in 0..hash.num_segments() as u16 {
            let owners = hash.owners_of_segment(segment);
            let primary = owners.primary();
            let Some(p) = by_id[usize::from(primary)] else {
                continue;
            };
            let sent = p
                .sequences
                .0
                .get(usize::from(segment))
                .copied()
                .unwrap_or(0);
            for &backup in owners.backups() {
                let Some(b) = by_id[usize::from(backup)] else {
                    continue;
                };
                let delivered = b
                    .sequences
                    .1
                    .get(usize::from(segment))
                    .copied()
                    .unwrap_or(0);
                if delivered != sent {
                    return Err(VerifyError::SequenceGap {
                        segment,
                        primary,
                        sent,
                        backup,
                        delivered,
                    });
                }
            }
            report.segments_checked += 1;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClusterConfig;
    use crate::message::Value;

    /// Two owners of key 0 (a 2-node, 2-owner view of `kind`) holding `a` and `b` at version 1.
    fn owners_holding(kind: ProtocolKind, a: Value, b: Value) -> (Vec<NodeSnapshot>, AckLog) {
        let cfg = ClusterConfig {
            nodes: 2,
            keys: 4,
            ..ClusterConfig::default()
        };
        let hash = cfg.hash().unwrap();
        let snapshots = [a, b]
            .into_iter()
            .enumerate()
            .map(|(id, value)| {
                let mut data = DataContainer::new(cfg.keys);
                data.apply(0, Versioned { version: 1, value });
                NodeSnapshot {
                    kind,
                    id: id as NodeId,
                    busy: None,
                    data,
                    sequences: (Vec::new(), Vec::new()),
                    hash: hash.clone(),
                }
            })
            .collect();
        (snapshots, AckLog::new(cfg.keys))
    }

    #[test]
    fn owners_agree_on_equal_bytes_in_separate_buffers() {
        let v = Value::new(5, 100);
        let (snaps, acks) = owners_holding(ProtocolKind::KeyQueue, v.clone(), v.marshalled());
        let r = verify_snapshots(&snaps, &acks).unwrap();
        assert_eq!((r.keys_written, r.version_sum), (1, 1));
    }

    #[test]
    fn owners_whose_payload_bytes_differ_disagree_though_version_and_tag_match() {
        let v = Value::new(5, 100);
        let mut bytes = v.bytes().to_vec();
        bytes[99] ^= 0xff;
        let (snaps, acks) = owners_holding(ProtocolKind::KeyQueue, v, Value::from_bytes(&bytes));
        match verify_snapshots(&snaps, &acks) {
            Err(VerifyError::OwnersDisagree { key: 0, ea, eb, .. }) => {
                assert_eq!((ea.version, ea.value.tag()), (eb.version, eb.value.tag()));
            }
            other => panic!("{other:?}"),
        }
    }

    /// After node 1 of 2 died, node 0 alone owns key 0: the write acknowledged at version 1
    /// survives there; one acknowledged at version 2 that only the dead node held is lost; and
    /// with both owners dead every key is.
    #[test]
    fn survivors_keep_every_acknowledged_write_or_the_loss_is_named() {
        let v = Value::new(5, 100);
        let (snaps, mut acks) = owners_holding(ProtocolKind::LockForwarding, v.clone(), v.clone());
        let survivor = &snaps[..1];
        acks.record(
            0,
            &Versioned {
                version: 1,
                value: v.clone(),
            },
        );
        let r = verify_survivors(survivor, &[1], &acks).unwrap();
        assert_eq!((r.keys_checked, r.keys_written), (4, 1));
        let newer = Versioned {
            version: 2,
            value: Value::new(6, 100),
        };
        acks.record(0, &newer);
        match verify_survivors(survivor, &[1], &acks) {
            Err(VerifyError::AckedWriteLost {
                key: 0,
                acked,
                found,
            }) => {
                assert_eq!((acked.version, found.version), (2, 1));
            }
            other => panic!("{other:?}"),
        }
        assert!(verify_survivors(&snaps[1..], &[0], &AckLog::new(4)).is_ok());
        // With every node dead nothing survives to be checked: a failure, not a pass.
        assert_eq!(
            verify_survivors(&[], &[0, 1], &acks)
                .unwrap_err()
                .to_string(),
            "no node survived (nodes [0, 1] were killed): 2 acknowledged puts cannot be checked"
        );
        // Node 1 neither reported nor dead.
        assert!(matches!(
            verify_survivors(survivor, &[], &AckLog::new(4)),
            Err(VerifyError::NotQuiescent { node: 1, .. })
        ));
    }

    /// Key queue acknowledges a put before its backups hold it: when key 0's primary is killed,
    /// a newest acknowledged write its backup lacks is counted as lost with the primary, not
    /// failed; the same loss under lock forwarding fails, and under key queue with the backup
    /// killed (the primary lives) too.
    #[test]
    fn a_write_acknowledged_before_replication_may_die_with_its_primary_and_is_counted() {
        let v = Value::new(5, 100);
        let newer = Versioned {
            version: 2,
            value: Value::new(6, 100),
        };
        for kind in [ProtocolKind::KeyQueue, ProtocolKind::LockForwarding] {
            let (snaps, mut acks) = owners_holding(kind, v.clone(), v.clone());
            acks.record(0, &newer);
            let primary = snaps[0].hash.owners(0).primary();
            let backup = 1 - primary;
            let survivor = &snaps[usize::from(backup)..=usize::from(backup)];
            let result = verify_survivors(survivor, &[primary], &acks);
            match kind {
                ProtocolKind::KeyQueue => {
                    let r = result.unwrap();
                    assert_eq!((r.lost_with_primary, r.keys_checked), (1, 3), "{r:?}");
                    assert!(r.to_string().contains("1 keys lost their newest acked put"));
                }
                _ => assert!(matches!(
                    result,
                    Err(VerifyError::AckedWriteLost { key: 0, .. })
                )),
            }
        }
        let (snaps, mut acks) = owners_holding(ProtocolKind::KeyQueue, v.clone(), v);
        acks.record(0, &newer);
        let primary = snaps[0].hash.owners(0).primary();
        let alive = &snaps[usize::from(primary)..=usize::from(primary)];
        assert!(matches!(
            verify_survivors(alive, &[1 - primary], &acks),
            Err(VerifyError::AckedWriteLost { key: 0, .. })
        ));
        // With both owners of a key killed (a third node lives), its writes are lost to the
        // kill, not to key queue's early acknowledgement: an error under key queue too.
        let cfg = ClusterConfig {
            nodes: 3,
            keys: 16,
            ..ClusterConfig::default()
        };
        let hash = cfg.hash().unwrap();
        let key = (0..16)
            .find(|&k| !hash.owners(k).all().contains(&2))
            .unwrap();
        let survivor = NodeSnapshot {
            kind: ProtocolKind::KeyQueue,
            id: 2,
            busy: None,
            data: DataContainer::new(cfg.keys),
            sequences: (Vec::new(), Vec::new()),
            hash,
        };
        let mut acks = AckLog::new(cfg.keys);
        acks.record(key, &newer);
        assert!(matches!(
            verify_survivors(&[survivor], &[0, 1], &acks),
            Err(VerifyError::AckedWriteLost { .. })
        ));
    }
}
