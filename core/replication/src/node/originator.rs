//! The originator side of a node: the requests of its own requester threads, as Infinispan's
//! `DistributionInterceptor` sends them and `RpcManager` waits for them. A get reads locally or
//! asks owners (all at once, the primary only, or staggered as `ClusteredGetCommand`s in
//! Infinispan 9: whatever the protocol's [`GetPlan`] says); a put goes
//! to the key's primary and completes on its result plus the backup acks a protocol asks for
//! (Triangle's `CommandAckCollector`), or fails on the reply timeout.

use super::node_base::NodeBase;
use super::primary::Origin;
use crate::components::hashing::Owners;
use crate::components::timeouts::{Deadline, DeadlineKey};
use crate::message::{ClientOp, Key, Msg, OpError, Outcome, Output, PutResult, Value, Versioned};
use crate::protocol::GetPlan;

#[derive(Debug)]
pub(super) enum ClientKind {
    Get {
        owners: Owners,
        next: u8,
        stagger: Option<DeadlineKey>,
    },
    Put {
        result: Option<PutResult>,
        acks_needed: u8,
        acks: u8,
    },
}

#[derive(Debug)]
pub(super) struct ClientState {
    requester: u32,
    op: ClientOp,
    deadline: DeadlineKey,
    kind: ClientKind,
}

impl NodeBase {
    /// Starts a get of `key` for `requester` following `plan`.
    pub(crate) fn start_get(
        &mut self,
        now: u64,
        requester: u32,
        key: Key,
        plan: GetPlan,
        out: &mut Vec<Output>,
    ) {
        let op = ClientOp::Get(key);
        let stagger_us = match plan {
            GetPlan::Local => {
                let entry = self.data.get(key);
                out.push(Output::Reply {
                    requester,
                    op,
                    outcome: Outcome::Got(entry),
                });
                return;
            }
            // `None`: every owner at once; `Some(None)`: the primary only; `Some(Some(d))`: the
            // primary, then the next owner every `d` µs.
            GetPlan::AllOwners => None,
            GetPlan::Primary => Some(None),
            GetPlan::Staggered { stagger_us } => Some(Some(stagger_us)),
        };
        let owners = self.hash.owners(key);
        let rid = self.clients.insert(ClientState {
            requester,
            op,
            deadline: DeadlineKey::NONE,
            kind: ClientKind::Get {
                owners,
                next: 0,
                stagger: None,
            },
        });
        let deadline = self
            .timeouts
            .add(now + self.cfg.reply_timeout_us, Deadline::Client(rid));
        match stagger_us {
            None => {
                for &o in owners.all() {
                    self.send(o, Msg::Get { rid, key }, out);
                }
                if let Some(c) = self.clients.get_mut(rid) {
                    c.deadline = deadline;
                    c.kind = ClientKind::Get {
                        owners,
                        next: owners.all().len() as u8,
                        stagger: None,
                    };
                }
            }
            Some(stagger_us) => {
                let stagger = stagger_us
                    .filter(|_| owners.all().len() > 1)
                    .map(|d| self.timeouts.add(now + d, Deadline::Stagger(rid)));
                if let Some(c) = self.clients.get_mut(rid) {
                    c.deadline = deadline;
                    c.kind = ClientKind::Get {
                        owners,
                        next: 1,
                        stagger,
                    };
                }
                self.send(owners.primary(), Msg::Get { rid, key }, out);
            }
        }
    }

    /// A staggered get's delay passed: ask the next owner too.
    pub(super) fn on_stagger(&mut self, now: u64, rid: u64, out: &mut Vec<Output>) {
        let stagger_us = self.stagger_us();
        let Some(c) = self.clients.get_mut(rid) else {
            return;
        };
        let ClientKind::Get {
            owners,
            next,
            stagger,
        } = &mut c.kind
        else {
            return;
        };
        let key = match c.op {
            ClientOp::Get(k) => k,
            ClientOp::Put(k, _) => k,
        };
        let Some(&target) = owners.all().get(*next as usize) else {
            *stagger = None;
            return;
        };
        *next += 1;
        let more = (*next as usize) < owners.all().len();
        *stagger = None;
        if more {
            let k = self.timeouts.add(now + stagger_us, Deadline::Stagger(rid));
            if let Some(ClientState {
                kind: ClientKind::Get { stagger, .. },
                ..
            }) = self.clients.get_mut(rid)
            {
                *stagger = Some(k);
            }
        }
        self.stats.staggered_gets += 1;
        self.send(target, Msg::Get { rid, key }, out);
    }

    /// Infinispan 9's stagger delay: `remoteTimeout / 10 / numOwners`.
    pub(crate) fn stagger_us(&self) -> u64 {
        (self.cfg.reply_timeout_us / 10 / self.hash.num_owners() as u64).max(1)
    }

    pub(super) fn on_get_reply(&mut self, rid: u64, entry: Versioned, out: &mut Vec<Output>) {
        let Some(c) = self.clients.get(rid) else {
            return;
        };
        if !matches!(c.kind, ClientKind::Get { .. }) {
            return;
        }
        if let Some(c) = self.clients.remove(rid) {
            self.timeouts.cancel(c.deadline);
            if let ClientKind::Get {
                stagger: Some(k), ..
            } = c.kind
            {
                self.timeouts.cancel(k);
            }
            out.push(Output::Reply {
                requester: c.requester,
                op: c.op,
                outcome: Outcome::Got(entry),
            });
        }
    }

    /// Starts a client put from this node: registers it (see [`NodeBase::start_put`]), then runs
    /// it here if this node is the key's primary, else sends it to the primary. Every protocol
    /// routes a put this way; they differ in the acks the originator waits for.
    pub(crate) fn route_put(
        &mut self,
        now: u64,
        requester: u32,
        key: Key,
        value: Value,
        acks_needed: u8,
        out: &mut Vec<Output>,
    ) {
        // The originator keeps a reference for the requester's outcome; the primary's copy is the
        // same buffer until a driver marshals it onto another node.
        let rid = self.start_put(now, requester, key, value.clone(), acks_needed);
        let primary = self.hash.primary(key);
        if primary == self.id {
            self.begin_primary_put(now, Origin::Local { rid }, key, value, None);
        } else {
            self.send(primary, Msg::Put { rid, key, value }, out);
        }
    }

    /// Registers a put of `requester`; it completes after the primary's result and `acks_needed`
    /// backup acks (Triangle's `CommandAckCollector`; other protocols need 0 acks).
    pub(crate) fn start_put(
        &mut self,
        now: u64,
        requester: u32,
        key: Key,
        value: Value,
        acks_needed: u8,
    ) -> u64 {
        let rid = self.clients.insert(ClientState {
            requester,
            op: ClientOp::Put(key, value),
            deadline: DeadlineKey::NONE,
            kind: ClientKind::Put {
                result: None,
                acks_needed,
                acks: 0,
            },
        });
        let deadline = self
            .timeouts
            .add(now + self.cfg.reply_timeout_us, Deadline::Client(rid));
        if let Some(c) = self.clients.get_mut(rid) {
            c.deadline = deadline;
        }
        rid
    }

    /// The primary's result for request `rid` arrived.
    pub(crate) fn put_result(&mut self, rid: u64, result: PutResult, out: &mut Vec<Output>) {
        let Some(c) = self.clients.get_mut(rid) else {
            return;
        };
        if let ClientKind::Put { result: r, .. } = &mut c.kind {
            *r = Some(result);
        }
        self.try_complete_put(rid, out);
    }

    /// A backup acked request `rid` (Triangle).
    pub(crate) fn put_ack(&mut self, rid: u64, out: &mut Vec<Output>) {
        let Some(c) = self.clients.get_mut(rid) else {
            return;
        };
        if let ClientKind::Put { acks, .. } = &mut c.kind {
            *acks += 1;
        }
        self.try_complete_put(rid, out);
    }

    pub(super) fn try_complete_put(&mut self, rid: u64, out: &mut Vec<Output>) {
        let Some(c) = self.clients.get(rid) else {
            return;
        };
        let ClientKind::Put {
            result: Some(result),
            acks_needed,
            acks,
        } = c.kind
        else {
            return;
        };
        // A failed write sent no backup writes, so it completes without acks.
        if result.is_ok() && acks < acks_needed {
            return;
        }
        if let Some(c) = self.clients.remove(rid) {
            self.timeouts.cancel(c.deadline);
            let outcome = match (result, &c.op) {
                (Ok(version), ClientOp::Put(_, value)) => Outcome::Put(Versioned {
                    version,
                    value: value.clone(),
                }),
                (Ok(_), ClientOp::Get(_)) => return,
                (Err(e), _) => Outcome::Failed(e),
            };
            out.push(Output::Reply {
                requester: c.requester,
                op: c.op,
                outcome,
            });
        }
    }

    pub(super) fn client_timeout(&mut self, rid: u64, out: &mut Vec<Output>) {
        if let Some(c) = self.clients.remove(rid) {
            if let ClientKind::Get {
                stagger: Some(k), ..
            } = c.kind
            {
                self.timeouts.cancel(k);
            }
            self.stats.reply_timeouts += 1;
            out.push(Output::Reply {
                requester: c.requester,
                op: c.op,
                outcome: Outcome::Failed(OpError::ReplyTimeout),
            });
        }
    }
}
