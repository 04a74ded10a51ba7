//! Models: Infinispan <= 8 non-transactional DIST-SYNC writes ("lock forwarding").
//! Upstream: `NonTxDistributionInterceptor` + `NonTransactionalLockingInterceptor` (ISPN 7/8): the primary locks, forwards synchronously, unlocks.
//! Hot-path cost: one key lock held across a synchronous backup RPC round trip; the command holds a pool slot for the whole wait.
//!
//! The primary locks the key, applies the write, sends it to every backup and waits for all
//! replies *while still holding the lock and its pool slot*, then unlocks and replies. A backup
//! write is itself a remote command that needs a pool slot at the backup, so when every slot of
//! a backup is held by a primary write waiting for its own backups, the cluster stalls until lock
//! timeouts free slots: the failure Bela Ban saw in 2014. Gets go to all owners at once and the
//! first reply wins (a local read when the originator owns the key).

use super::kind::{NodeMachine, NodeStats, ProtocolKind, WriteProtocol};
use super::write_protocol::{GetPlan, ProtocolLogic};
use crate::replication::error::ConfigError;
use crate::replication::message::{Key, Msg, NodeId, OpError, Output};
use crate::replication::node::{ClusterConfig, Node, NodeCore};
use crate::replication::parts::pool::Slot;
use crate::replication::parts::timeouts::Deadline;

/// The lock-forwarding strategy (`lock-forwarding`).
#[derive(Debug, Clone, Copy, Default)]
pub struct LockForwardingProtocol;

impl WriteProtocol for LockForwardingProtocol {
    fn kind(&self) -> ProtocolKind {
        ProtocolKind::LockForwarding
    }

    fn new_node(
        &self,
        node: u16,
        cfg: &ClusterConfig,
    ) -> Result<Box<dyn NodeMachine>, ConfigError> {
        Ok(Box::new(Node::new(
            NodeCore::new(node, cfg)?,
            LockForwardingLogic,
        )))
    }
}

#[derive(Debug)]
struct LockForwardingLogic;

impl ProtocolLogic for LockForwardingLogic {
    const KIND: ProtocolKind = ProtocolKind::LockForwarding;

    fn is_command(msg: &Msg) -> bool {
        // The backup write is a synchronous remote command: it needs a pool slot at the backup.
        matches!(
            msg,
            Msg::Get { .. } | Msg::Put { .. } | Msg::BackupWrite { .. }
        )
    }

    fn get_plan(core: &NodeCore, key: Key) -> GetPlan {
        if core.hash.owners(key).contains(core.id) {
            GetPlan::Local
        } else {
            GetPlan::AllOwners
        }
    }

    fn on_command(
        &mut self,
        core: &mut NodeCore,
        _now: u64,
        slot: Slot,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        match msg {
            Msg::BackupWrite {
                rid, key, entry, ..
            } => {
                // Deviation: upstream backups applied whatever arrived; ours apply only a newer
                // version, so a backup write that arrives after its primary gave up waiting (reply
                // timeout) cannot overwrite a later one and the verifier can hold this protocol to
                // the same contract as the others.
                if !core.data.apply_if_newer(key, entry) {
                    core.stats.stale_skipped += 1;
                }
                core.send(from, Msg::BackupReply { rid }, out);
                core.pool.release(slot);
            }
            _ => core.pool.release(slot),
        }
    }

    fn on_lock_granted(&mut self, core: &mut NodeCore, now: u64, op: u64, out: &mut Vec<Output>) {
        let Some(entry) = core.apply_primary(op) else {
            return;
        };
        let Some(key) = core.ops.get(op).map(|o| o.key) else {
            return;
        };
        let owners = core.hash.owners(key);
        let backups = owners.backups();
        if backups.is_empty() {
            core.finish_primary_put(now, op, Ok(entry.version), out);
            return;
        }
        if let Some(o) = core.ops.get_mut(op) {
            o.pending = backups.len() as u8;
        }
        core.arm_op_deadline(now, op, Deadline::Backup(op));
        for &b in backups {
            let seq = Default::default();
            core.send(
                b,
                Msg::BackupWrite {
                    rid: op,
                    origin: core.id,
                    key,
                    entry: entry.clone(),
                    seq,
                },
                out,
            );
        }
    }

    fn on_message(
        &mut self,
        core: &mut NodeCore,
        now: u64,
        _from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        if let Msg::BackupReply { rid: op } = msg {
            let Some(o) = core.ops.get_mut(op) else {
                return;
            };
            o.pending = o.pending.saturating_sub(1);
            if o.pending == 0 {
                let version = o.entry.version;
                core.finish_primary_put(now, op, Ok(version), out);
            }
        }
    }

    fn on_deadline(&mut self, core: &mut NodeCore, now: u64, d: Deadline, out: &mut Vec<Output>) {
        if let Deadline::Backup(op) = d {
            let Some(o) = core.ops.get_mut(op) else {
                return;
            };
            o.deadline = None;
            core.stats.backup_timeouts += 1;
            // The primary has applied; the backup write is still in flight and will be applied
            // when delivered (the transport retransmits), so the owners converge.
            core.finish_primary_put(now, op, Err(OpError::ReplyTimeout), out);
        }
    }

    fn busy_reason(&self) -> Option<String> {
        None
    }

    fn fill_stats(&self, _stats: &mut NodeStats) {}
}
