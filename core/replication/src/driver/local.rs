//! A synchronous in-thread driver: every message is delivered at once, in FIFO order, on the
//! caller's thread. It measures a protocol's own CPU cost per operation (no channel, no wait)
//! and gives tests a fully predictable cluster. Timers are ignored: nothing ever waits. No
//! upstream counterpart: it replaces JGroups' transport with a FIFO on one thread.
//!
//! A message between two nodes is delivered as its
//! [`marshalled`](crate::message::Msg::marshalled) copy: its value bytes are copied
//! into a fresh buffer, standing in for the transport's marshal + unmarshal (one copy, where a
//! real transport makes two), so a put's cost includes the copies its hops make.

use std::collections::VecDeque;

use crate::error::ConfigError;
use crate::error::VerifyError;
use crate::message::{ClientOp, Input, NodeId, Outcome, Output};
use crate::node::ClusterConfig;
use crate::node::NodeMachine;
use crate::protocol::ProtocolKind;
use crate::verifier::{AckLog, VerifyReport, verify};

/// A cluster whose nodes all run on the calling thread.
pub struct LocalCluster {
    nodes: Vec<Box<dyn NodeMachine>>,
    pending: VecDeque<(NodeId, Output)>,
    out: Vec<Output>,
    acks: AckLog,
    now: u64,
}

impl std::fmt::Debug for LocalCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCluster")
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl LocalCluster {
    /// A cluster running `protocol`.
    pub fn new(protocol: ProtocolKind, cfg: &ClusterConfig) -> Result<Self, ConfigError> {
        Ok(LocalCluster {
            nodes: protocol.build_cluster(cfg)?,
            pending: VecDeque::new(),
            out: Vec::new(),
            acks: AckLog::new(cfg.keys),
            now: 0,
        })
    }

    /// Runs `op` from a requester of `node` until the cluster is idle again; returns its outcome
    /// (`None` if the op never completed, which a correct protocol never does here).
    pub fn call(&mut self, node: NodeId, op: ClientOp) -> Option<Outcome> {
        self.now += 1;
        let now = self.now;
        let first = self.nodes.get_mut(node as usize)?;
        first.handle(now, Input::Client { requester: 0, op }, &mut self.out);
        self.pending.extend(self.out.drain(..).map(|o| (node, o)));
        let mut result = None;
        while let Some((at, o)) = self.pending.pop_front() {
            match o {
                Output::Send { to, msg } => {
                    let Some(n) = self.nodes.get_mut(to as usize) else {
                        continue;
                    };
                    // Machines loop their own messages back, so `to != at`: a hop between nodes.
                    let msg = if to == at { msg } else { msg.marshalled() };
                    n.handle(now, Input::Message { from: at, msg }, &mut self.out);
                    self.pending.extend(self.out.drain(..).map(|o| (to, o)));
                }
                Output::Reply { op, outcome, .. } => {
                    if let (ClientOp::Put(key, _), Outcome::Put(entry)) = (&op, &outcome) {
                        self.acks.record(*key, entry);
                    }
                    result = Some(outcome);
                }
                Output::Rejected { from, msg } => {
                    // No slot is ever held across a call here, so this cannot happen; deliver
                    // again rather than lose the message (already this node's copy).
                    self.pending.push_back((from, Output::Send { to: at, msg }));
                }
                // Real-slot outputs: this driver never switches its machines to real slots.
                Output::SetTimer { .. }
                | Output::Execute { .. }
                | Output::Resume { .. }
                | Output::SlotFreed { .. }
                | Output::InboundResumed => {}
            }
        }
        result
    }

    /// Verifies the (always quiescent between calls) cluster against the acks it saw.
    pub fn verify(&self) -> Result<VerifyReport, VerifyError> {
        verify(&self.nodes, &self.acks)
    }

    /// The nodes.
    pub fn nodes(&self) -> &[Box<dyn NodeMachine>] {
        &self.nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProtocolKind;
    use crate::message::{Value, Versioned};
    use critsec_sync::kind::StrategyKind;

    #[test]
    fn every_protocol_reads_its_writes_from_every_node() {
        for &kind in ProtocolKind::ALL {
            let cfg = ClusterConfig {
                nodes: 4,
                keys: 40,
                ..ClusterConfig::default()
            };
            let mut c = LocalCluster::new(kind, &cfg).unwrap();
            for key in 0..40u32 {
                let value = Value::new((key as u64) << 32 | 5, 32);
                let expected = Versioned { version: 1, value };
                assert_eq!(
                    c.call(1, ClientOp::Put(key, expected.value.clone())),
                    Some(Outcome::Put(expected.clone()))
                );
                for n in 0..4 {
                    assert_eq!(
                        c.call(n, ClientOp::Get(key)),
                        Some(Outcome::Got(expected.clone())),
                        "{kind:?}"
                    );
                }
            }
            let r = c.verify().unwrap();
            assert_eq!((r.keys_written, r.acked_writes), (40, 40));
        }
    }

    /// A put's bytes reach both owners intact, each in its own buffer: every hop between nodes
    /// copied them, none shares the originator's or another owner's allocation.
    #[test]
    fn each_owner_stores_its_own_copy_of_the_put_bytes() {
        for &kind in ProtocolKind::ALL {
            let cfg = ClusterConfig {
                nodes: 3,
                keys: 30,
                ..ClusterConfig::default()
            };
            let mut c = LocalCluster::new(kind, &cfg).unwrap();
            let hash = cfg.hash().unwrap();
            // A key node 2 does not own, so the put crosses the network to both owners.
            let key = (0..30).find(|&k| !hash.owners(k).contains(2)).unwrap();
            let value = Value::new(u64::from(key) << 32 | 1, 1000);
            let Some(Outcome::Put(acked)) = c.call(2, ClientOp::Put(key, value.clone())) else {
                panic!("{kind:?}: the put failed");
            };
            assert!(
                acked.value.shares_buffer(&value),
                "the originator's own reference"
            );
            let owners = hash.owners(key);
            let stored: Vec<_> = owners
                .all()
                .iter()
                .map(|&n| c.nodes()[n as usize].base().data().get(key))
                .collect();
            for (i, e) in stored.iter().enumerate() {
                assert_eq!((e.version, &e.value), (1, &value), "{kind:?}");
                assert!(!e.value.shares_buffer(&value), "{kind:?}: owner {i} shares");
                for other in &stored[..i] {
                    assert!(!e.value.shares_buffer(&other.value), "{kind:?}");
                }
            }
            // A remote get's reply is a copy too.
            let Some(Outcome::Got(read)) = c.call(2, ClientOp::Get(key)) else {
                panic!("{kind:?}: the get failed");
            };
            assert_eq!(read.value, value);
            assert!(stored.iter().all(|e| !e.value.shares_buffer(&read.value)));
            c.verify().unwrap();
        }
    }
}
