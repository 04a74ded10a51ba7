//! Models: Infinispan <= 8 non-transactional DIST-SYNC writes ("lock forwarding").
//! Upstream: `NonTxDistributionInterceptor` + `NonTransactionalLockingInterceptor` (ISPN 7/8): the primary locks, forwards synchronously, unlocks.
//! Hot-path cost: one key lock held across a synchronous backup RPC round trip; the command holds a pool slot for the whole wait.
//!
//! The primary locks the key, applies the write, sends it to every backup and waits for all
//! replies *while still holding the lock and its pool slot*, then unlocks and replies. A backup
//! write is itself a remote command that needs a pool slot at the backup, so when every slot of
//! a backup is held by a primary write waiting for its own backups, the cluster stalls until lock
//! timeouts free slots: the failure Bela Ban saw in 2014. Gets go to all owners at once and the
//! first reply wins (a local read when the originator owns the key). Read guarantee: a get that
//! starts after a put of its key was acknowledged returns that put's version or a later one,
//! whichever owner answers first, because the primary acknowledges a put only after every
//! backup replied that it applied it; a put whose backup reply timed out fails (it is not
//! acknowledged), so it promises nothing, though its backup write still lands.
//!
//! Pools (the rule is in `write_protocol.rs`):
//! Lock forwarding: `Get` (`ClusteredGetCommand`), `Put` (`PutKeyValueCommand` at the primary)
//! and `BackupWrite` (the primary's synchronous backup RPC) are commands on the pool; `GetReply`,
//! `PutReply` and `BackupReply` are responses on the delivering thread.

use super::get_plan::GetPlan;
use super::kind::ProtocolKind;
use super::write_protocol::WriteProtocol;
use crate::components::pool::Slot;
use crate::components::timeouts::Deadline;
use crate::message::{Key, Msg, NodeId, OpError, Output};
use crate::node::{NodeBase, NodeStats};

/// The lock-forwarding strategy (`lock-forwarding`): it keeps no per-node state of its own.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockForwardingProtocol;

impl WriteProtocol for LockForwardingProtocol {
    const KIND: ProtocolKind = ProtocolKind::LockForwarding;

    fn new(_base: &NodeBase) -> Self {
        LockForwardingProtocol
    }

    fn is_command(msg: &Msg) -> bool {
        // The backup write is a synchronous remote command: it needs a pool slot at the backup.
        matches!(
            msg,
            Msg::Get { .. } | Msg::Put { .. } | Msg::BackupWrite { .. }
        )
    }

    fn get_plan(base: &NodeBase, key: Key) -> GetPlan {
        if base.hash.owners(key).contains(base.id) {
            GetPlan::Local
        } else {
            GetPlan::AllOwners
        }
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
        match msg {
            Msg::BackupWrite {
                rid, key, entry, ..
            } => {
                // Deviation: upstream backups applied whatever arrived; ours apply only a newer
                // version, so a backup write that arrives after its primary gave up waiting (reply
                // timeout) cannot overwrite a later one and the verifier can hold this protocol to
                // the same contract as the others.
                if !base.data.apply_if_newer(key, entry) {
                    base.stats.stale_skipped += 1;
                }
                base.send(from, Msg::BackupReply { rid }, out);
                base.pool.release(slot);
            }
            _ => base.pool.release(slot),
        }
    }

    fn on_lock_granted(&mut self, base: &mut NodeBase, now: u64, op: u64, out: &mut Vec<Output>) {
        let Some(entry) = base.apply_primary(op) else {
            return;
        };
        let Some(key) = base.ops.get(op).map(|o| o.key) else {
            return;
        };
        let owners = base.hash.owners(key);
        let backups = owners.backups();
        if backups.is_empty() {
            base.finish_primary_put(now, op, Ok(entry.version), out);
            return;
        }
        if let Some(o) = base.ops.get_mut(op) {
            o.pending = backups.len() as u8;
        }
        base.arm_op_deadline(now, op, Deadline::Backup(op));
        for &b in backups {
            let seq = Default::default();
            base.send(
                b,
                Msg::BackupWrite {
                    rid: op,
                    origin: base.id,
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
        base: &mut NodeBase,
        now: u64,
        _from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        if let Msg::BackupReply { rid: op } = msg {
            let Some(o) = base.ops.get_mut(op) else {
                return;
            };
            o.pending = o.pending.saturating_sub(1);
            if o.pending == 0 {
                let version = o.entry.version;
                base.finish_primary_put(now, op, Ok(version), out);
            }
        }
    }

    fn on_deadline(&mut self, base: &mut NodeBase, now: u64, d: Deadline, out: &mut Vec<Output>) {
        if let Deadline::Backup(op) = d {
            let Some(o) = base.ops.get_mut(op) else {
                return;
            };
            o.deadline = None;
            base.stats.backup_timeouts += 1;
            // The primary has applied; the backup write is still in flight and will be applied
            // when delivered (the transport retransmits), so the owners converge.
            base.finish_primary_put(now, op, Err(OpError::ReplyTimeout), out);
        }
    }

    fn busy_reason(&self) -> Option<String> {
        None
    }

    fn fill_stats(&self, _stats: &mut NodeStats) {}
}
