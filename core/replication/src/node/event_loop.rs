//! The node machine's event loop: it takes one input at a time, dispatches it to the shared half
//! or to the protocol's logic, and runs the work that input causes (messages a node sends itself,
//! lock grants, queued commands, held messages) until none is left. This is where the `block`
//! policy holds the inbound path and where real slots park commands (see the module header).

use super::machine::NodeMachine;
use super::node_base::{NodeBase, Work};
use super::primary::Origin;
use super::stats::NodeStats;
use crate::components::pool::Slot;
use crate::components::timeouts::Deadline;
use crate::message::{ClientOp, Input, Msg, NodeId, OpError, Output};
use crate::protocol::ProtocolKind;
use crate::protocol::WriteProtocol;

/// The node machine over protocol `P`: the shared half ([`NodeBase`]) plus `P`'s per-node state,
/// and the event loop that feeds them one input at a time. Drivers hold it as a
/// `Box<dyn NodeMachine>` built by
/// [`ProtocolKind::new_node`](crate::protocol::ProtocolKind::new_node).
#[derive(Debug)]
pub struct ProtocolNode<P: WriteProtocol> {
    base: NodeBase,
    protocol: P,
}

impl<P: WriteProtocol> ProtocolNode<P> {
    /// Adds `P`'s state for this node to `base`.
    pub fn new(base: NodeBase) -> Self {
        let protocol = P::new(&base);
        ProtocolNode { base, protocol }
    }

    fn run(&mut self, now: u64, out: &mut Vec<Output>) {
        loop {
            if let Some(w) = self.base.work.pop_front() {
                match w {
                    Work::Msg(from, msg) => self.on_msg(now, from, msg, out),
                    Work::LockGranted(op) => {
                        let Some(slot) = self.base.lock_granted(now, op).map(|o| o.slot) else {
                            continue;
                        };
                        match slot {
                            // Real slots: the lock is the op's from now on, but its command
                            // continues on its own (blocked) thread, not on the one that unlocked.
                            Some(slot)
                                if self.base.real_slots
                                    && self.base.current_slot != Some(slot.id) =>
                            {
                                self.base.granted.insert(slot.id, op);
                                out.push(Output::Resume { slot: slot.id });
                            }
                            _ => self.protocol.on_lock_granted(&mut self.base, now, op, out),
                        }
                    }
                }
                continue;
            }
            if let Some((slot, (from, msg))) = self.base.pool.next_queued() {
                self.run_command(now, slot, from, msg, out);
                continue;
            }
            // A freed slot unblocks the inbound path: the head-of-line command takes it, and the
            // messages behind it are delivered in order until the next command that finds the
            // pool full again.
            if let Some((_, msg)) = self.base.held.front() {
                if P::is_command(msg) && self.base.pool.blocks() {
                    break;
                }
                let Some((from, msg)) = self.base.held.pop_front() else {
                    break;
                };
                if self.base.held.is_empty() {
                    self.end_block(now, out);
                }
                self.deliver(now, from, msg, out);
                continue;
            }
            break;
        }
    }

    /// The inbound path delivers again: counts the blocked time and tells a real transport.
    fn end_block(&mut self, now: u64, out: &mut Vec<Output>) {
        if let Some(since) = self.base.blocked_since.take() {
            self.base.stats.inbound_blocked_us += now.saturating_sub(since);
            if self.base.real_slots {
                out.push(Output::InboundResumed);
            }
        }
    }

    fn on_msg(&mut self, now: u64, from: NodeId, msg: Msg, out: &mut Vec<Output>) {
        // Under `block`, a message from another node waits behind any held one (one inbound
        // path, in order), and a command that finds the pool full blocks the path itself. A
        // message the node sent itself does not come through the transport and is never held.
        if from != self.base.id
            && (!self.base.held.is_empty() || (P::is_command(&msg) && self.base.pool.blocks()))
        {
            if self.base.held.is_empty() {
                self.base.blocked_since = Some(now);
            }
            self.base.stats.blocked_deliveries += 1;
            self.base.held.push_back((from, msg));
            return;
        }
        self.deliver(now, from, msg, out);
    }

    fn deliver(&mut self, now: u64, from: NodeId, msg: Msg, out: &mut Vec<Output>) {
        if from != self.base.id && !self.base.pool.can_deliver() {
            out.push(Output::Rejected { from, msg });
            return;
        }
        if P::is_command(&msg) {
            match self.base.pool.admit((from, msg)) {
                Ok((slot, (from, msg))) => self.run_command(now, slot, from, msg, out),
                Err(None) => {}
                Err(Some((from, msg))) => out.push(Output::Rejected { from, msg }),
            }
            return;
        }
        match msg {
            Msg::GetReply { rid, entry } => self.base.on_get_reply(rid, entry, out),
            Msg::PutReply { rid, result } => self.base.put_result(rid, result, out),
            Msg::BackupAck { rid } => self.base.put_ack(rid, out),
            _ => self
                .protocol
                .on_message(&mut self.base, now, from, msg, out),
        }
    }

    fn run_command(&mut self, now: u64, slot: Slot, from: NodeId, msg: Msg, out: &mut Vec<Output>) {
        if self.base.real_slots && self.base.current_slot != Some(slot.id) {
            // The command runs when a thread of its pool takes the slot (`Input::Run`).
            self.base.parked.insert(slot.id, (slot, from, msg));
            out.push(Output::Execute {
                slot: slot.id,
                kind: slot.kind,
            });
            return;
        }
        match msg {
            Msg::Get { rid, key } => {
                let entry = self.base.data.get(key);
                self.base.send(from, Msg::GetReply { rid, entry }, out);
                self.base.pool.release(slot);
            }
            Msg::Put { rid, key, value } => {
                let origin = Origin::Remote { from, rid };
                self.base
                    .begin_primary_put(now, origin, key, value, Some(slot));
            }
            _ => self
                .protocol
                .on_command(&mut self.base, now, slot, from, msg, out),
        }
    }

    fn on_deadline(&mut self, now: u64, d: Deadline, out: &mut Vec<Output>) {
        match d {
            Deadline::Client(rid) => self.base.client_timeout(rid, out),
            Deadline::Stagger(rid) => self.base.on_stagger(now, rid, out),
            Deadline::Lock(op) => {
                let Some(o) = self.base.ops.get_mut(op) else {
                    return;
                };
                o.deadline = None;
                let key = o.key;
                if self.base.locks.cancel_wait(key, op) {
                    self.base.stats.lock_timeouts += 1;
                    self.base
                        .finish_primary_put(now, op, Err(OpError::LockTimeout), out);
                }
            }
            Deadline::Backup(_) | Deadline::Repl(_) => {
                self.protocol.on_deadline(&mut self.base, now, d, out)
            }
        }
    }
}

impl<P: WriteProtocol> NodeMachine for ProtocolNode<P> {
    fn kind(&self) -> ProtocolKind {
        P::KIND
    }

    fn handle(&mut self, now: u64, input: Input, out: &mut Vec<Output>) {
        match input {
            Input::Client { requester, op } => match op {
                ClientOp::Get(key) => {
                    let plan = self
                        .base
                        .cfg
                        .get_plan
                        .resolve(P::get_plan(&self.base, key), self.base.stagger_us());
                    self.base.start_get(now, requester, key, plan, out);
                }
                ClientOp::Put(key, value) => {
                    let acks = P::put_acks(&self.base, key);
                    self.base.route_put(now, requester, key, value, acks, out);
                }
            },
            // With no work queued (always, between inputs) the message is the next work item:
            // handled at once rather than through the queue.
            Input::Message { from, msg } if self.base.work.is_empty() => {
                self.on_msg(now, from, msg, out)
            }
            Input::Message { from, msg } => self.base.work.push_back(Work::Msg(from, msg)),
            Input::Timer => {
                self.base.timeouts.fired();
                while let Some(d) = self.base.timeouts.pop_expired(now) {
                    self.on_deadline(now, d, out);
                    self.run(now, out);
                }
            }
            Input::Run { slot } => {
                if let Some((slot, from, msg)) = self.base.parked.remove(&slot) {
                    self.base.current_slot = Some(slot.id);
                    self.run_command(now, slot, from, msg, out);
                }
            }
            Input::Resume { slot } => {
                if let Some(op) = self.base.granted.remove(&slot) {
                    self.base.current_slot = Some(slot);
                    self.protocol.on_lock_granted(&mut self.base, now, op, out);
                }
            }
            Input::Left(node) => {
                if let Some(gone) = self.base.gone.get_mut(usize::from(node)) {
                    *gone = true;
                    self.protocol.on_member_left(&mut self.base, now, node, out);
                }
            }
        }
        self.run(now, out);
        self.base.current_slot = None;
        if let Some(at) = self.base.timeouts.rearm() {
            out.push(Output::SetTimer { at });
        }
        if self.base.real_slots {
            out.extend(
                self.base
                    .pool
                    .take_released()
                    .map(|slot| Output::SlotFreed { slot }),
            );
        }
    }

    fn use_real_slots(&mut self) {
        self.base.real_slots = true;
        self.base.pool.track_releases();
    }

    fn base(&self) -> &NodeBase {
        &self.base
    }

    fn inbound_blocked(&self) -> bool {
        !self.base.held.is_empty()
    }

    fn busy_reason(&self) -> Option<String> {
        self.base
            .busy_reason()
            .or_else(|| self.protocol.busy_reason())
    }

    fn stats(&self) -> NodeStats {
        let mut s = self.base.stats.clone();
        s.pool_rejections = self.base.pool.rejections();
        s.pool_max_busy = self.base.pool.max_busy() as u64;
        s.pool_max_queue = self.base.pool.max_queue() as u64;
        s.regressions = self.base.data.regressions();
        self.protocol.fill_stats(&mut s);
        s
    }

    fn sequences(&self) -> (Vec<u64>, Vec<u64>) {
        self.protocol.sequences()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProtocolKind;
    use crate::components::pool::RejectionPolicy;
    use crate::message::SlotKind;
    use crate::message::Value;
    use crate::node::ClusterConfig;

    fn step(m: &mut dyn NodeMachine, input: Input) -> Vec<Output> {
        let mut out = Vec::new();
        m.handle(0, input, &mut out);
        out.retain(|o| !matches!(o, Output::SetTimer { .. }));
        out
    }

    /// `block`: a command at a full pool holds the inbound path, a reply behind it is held too
    /// (the stall), and the backup timeout that frees the slot resumes deliveries in order.
    #[test]
    fn block_holds_replies_behind_a_command_until_a_timeout_frees_a_slot() {
        let cfg = ClusterConfig {
            nodes: 2,
            keys: 16,
            pool_size: 1,
            rejection: RejectionPolicy::Block,
            reply_timeout_us: 1_000,
            ..ClusterConfig::default()
        };
        let hash = cfg.hash().unwrap();
        let key = (0..16).find(|&k| hash.primary(k) == 0).unwrap();
        let mut m = ProtocolKind::LockForwarding.new_node(0, &cfg).unwrap();
        let at = |m: &mut dyn NodeMachine, now, input| {
            let mut out = Vec::new();
            m.handle(now, input, &mut out);
            out.retain(|o| !matches!(o, Output::SetTimer { .. }));
            out
        };
        let put = |rid| Input::Message {
            from: 1,
            msg: Msg::Put {
                rid,
                key,
                value: Value::new(rid, 8),
            },
        };
        // Put 1 takes the only slot and waits for its backup reply.
        let out = at(m.as_mut(), 0, put(1));
        let [
            Output::Send {
                msg: Msg::BackupWrite { rid: op1, .. },
                ..
            },
        ] = out[..]
        else {
            panic!("{out:?}")
        };
        // Put 2 finds the pool full: the inbound path blocks.
        assert_eq!(at(m.as_mut(), 10, put(2)), vec![]);
        assert!(m.inbound_blocked());
        // The reply put 1 waits for is held behind put 2: nothing happens.
        let reply = Input::Message {
            from: 1,
            msg: Msg::BackupReply { rid: op1 },
        };
        assert_eq!(at(m.as_mut(), 20, reply), vec![]);
        assert!(m.inbound_blocked());
        assert_eq!(m.stats().blocked_deliveries, 2);
        // The backup timeout fails put 1 and frees its slot: put 2 runs, then the (now stale)
        // reply is delivered and the path is open again.
        let out = at(m.as_mut(), 1_000, Input::Timer);
        assert!(
            out.iter().any(|o| matches!(
                o,
                Output::Send {
                    msg: Msg::PutReply {
                        rid: 1,
                        result: Err(_)
                    },
                    ..
                }
            )),
            "{out:?}"
        );
        assert!(
            out.iter().any(|o| matches!(
                o,
                Output::Send {
                    msg: Msg::BackupWrite { .. },
                    ..
                }
            )),
            "put 2 replicates: {out:?}"
        );
        assert!(!m.inbound_blocked());
        let s = m.stats();
        assert_eq!((s.inbound_blocked_us, s.backup_timeouts), (990, 1));
    }

    /// Real-slot mode at the machine level (what the threads driver relies on): an admitted
    /// command waits for `Run`; a lock granted by another input is announced with `Resume` and
    /// continued only on `Resume`; released slots are announced.
    #[test]
    fn real_slots_park_commands_and_hand_lock_grants_to_their_slot() {
        let (cfg, key) = crate::tests::two_nodes_and_a_key_of_node_0();
        let mut m = ProtocolKind::LockForwarding.new_node(0, &cfg).unwrap();
        m.use_real_slots();
        let put = |rid| Input::Message {
            from: 1,
            msg: Msg::Put {
                rid,
                key,
                value: Value::new(rid, 8),
            },
        };
        let [Output::Execute { slot: a, kind }] = step(m.as_mut(), put(1))[..] else {
            panic!("the first put is parked");
        };
        assert_eq!(kind, SlotKind::Pool);
        let [Output::Execute { slot: b, .. }] = step(m.as_mut(), put(2))[..] else {
            panic!("the second put is parked");
        };
        // `a` gets the lock at once and replicates while holding it.
        let out = step(m.as_mut(), Input::Run { slot: a });
        assert!(
            matches!(
                out[..],
                [Output::Send {
                    to: 1,
                    msg: Msg::BackupWrite { .. }
                }]
            ),
            "{out:?}"
        );
        // `b` queues for the lock: nothing happens, its thread blocks.
        assert_eq!(step(m.as_mut(), Input::Run { slot: b }), vec![]);
        // The backup reply ends `a`: its slot is freed and `b` is told it holds the lock, but
        // `b`'s replication has not started on this (delivering) input.
        let Output::Send {
            msg: Msg::BackupWrite { rid: op_a, .. },
            ..
        } = out[0]
        else {
            unreachable!()
        };
        let out = step(
            m.as_mut(),
            Input::Message {
                from: 1,
                msg: Msg::BackupReply { rid: op_a },
            },
        );
        assert!(out.contains(&Output::Resume { slot: b }), "{out:?}");
        assert!(out.contains(&Output::SlotFreed { slot: a }), "{out:?}");
        assert!(
            !out.iter().any(|o| matches!(
                o,
                Output::Send {
                    msg: Msg::BackupWrite { .. },
                    ..
                }
            )),
            "{out:?}"
        );
        // `b`'s thread continues it.
        let out = step(m.as_mut(), Input::Resume { slot: b });
        assert!(
            matches!(
                out[..],
                [Output::Send {
                    to: 1,
                    msg: Msg::BackupWrite { .. }
                }]
            ),
            "{out:?}"
        );
        assert!(m.busy_reason().is_some());
        assert_eq!(m.stats().lock_timeouts, 0);
    }
}
