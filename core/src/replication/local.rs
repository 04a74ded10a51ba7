//! A synchronous in-thread driver: every message is delivered at once, in FIFO order, on the
//! caller's thread. It measures a protocol's own CPU cost per operation (no channel, no wait)
//! and gives tests a fully predictable cluster. Timers are ignored: nothing ever waits.

use std::collections::VecDeque;

use super::error::ConfigError;
use super::error::VerifyError;
use super::message::{ClientOp, Input, NodeId, Outcome, Output};
use super::node::ClusterConfig;
use super::verifier::{AckLog, VerifyReport, verify};
use super::write_protocol::{NodeMachine, WriteProtocol, build_cluster};

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
    pub fn new(protocol: &dyn WriteProtocol, cfg: &ClusterConfig) -> Result<Self, ConfigError> {
        Ok(LocalCluster {
            nodes: build_cluster(protocol, cfg)?,
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
                    n.handle(now, Input::Message { from: at, msg }, &mut self.out);
                    self.pending.extend(self.out.drain(..).map(|o| (to, o)));
                }
                Output::Reply { op, outcome, .. } => {
                    if let (ClientOp::Put(key, _), Outcome::Put(entry)) = (op, outcome) {
                        self.acks.record(key, entry);
                    }
                    result = Some(outcome);
                }
                Output::Rejected { from, msg } => {
                    // No slot is ever held across a call here, so this cannot happen; deliver
                    // again rather than lose the message.
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
    use crate::replication::ProtocolKind;
    use crate::replication::message::Versioned;

    #[test]
    fn every_protocol_reads_its_writes_from_every_node() {
        for kind in ProtocolKind::ALL {
            let cfg = ClusterConfig {
                nodes: 4,
                keys: 40,
                ..ClusterConfig::default()
            };
            let mut c = LocalCluster::new(kind.protocol(), &cfg).unwrap();
            for key in 0..40u32 {
                let value = (key as u64) << 32 | 5;
                let expected = Versioned { version: 1, value };
                assert_eq!(
                    c.call(1, ClientOp::Put(key, value)),
                    Some(Outcome::Put(expected))
                );
                for n in 0..4 {
                    assert_eq!(
                        c.call(n, ClientOp::Get(key)),
                        Some(Outcome::Got(expected)),
                        "{kind:?}"
                    );
                }
            }
            let r = c.verify().unwrap();
            assert_eq!((r.keys_written, r.acked_writes), (40, 40));
        }
    }
}
