//! The protocols by kind: every write protocol by its CLI id, and the factory that builds a
//! cluster member's node machine running it.
//!
//! A protocol's kind and its node factory are one concept, so the kind builds the machine
//! ([`ProtocolKind::new_node`]) and no separate factory type exists; [`WriteProtocol`] is the
//! trait the protocols themselves implement.

use super::{KeyQueueProtocol, LockForwardingProtocol, TriangleProtocol, WriteProtocol};
use crate::error::ConfigError;
use crate::message::NodeId;
use crate::node::{ClusterConfig, NodeBase, NodeMachine, ProtocolNode};
use critsec_sync::kind::StrategyKind;

/// The three strategies, by their CLI id: the system's strategy kinds ([`StrategyKind`]);
/// `FromStr` and `Display` use the id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum ProtocolKind {
    /// `lock-forwarding`: sync backup RPC while holding the key lock.
    LockForwarding,
    /// `key-queue`: unlock, then a de-duplicating FIFO of keys replicated by a worker.
    KeyQueue,
    /// `triangle`: per-segment sequence numbers, backups ack the originator.
    Triangle,
}

impl StrategyKind for ProtocolKind {
    const ALL: &'static [Self] = &[
        ProtocolKind::LockForwarding,
        ProtocolKind::KeyQueue,
        ProtocolKind::Triangle,
    ];

    /// The CLI id (the strategy file's stem in kebab-case).
    fn id(self) -> &'static str {
        match self {
            ProtocolKind::LockForwarding => "lock-forwarding",
            ProtocolKind::KeyQueue => "key-queue",
            ProtocolKind::Triangle => "triangle",
        }
    }
}

impl ProtocolKind {
    /// Whether every owner of a key holds a put before it is acknowledged
    /// ([`WriteProtocol::OWNERS_HOLD_ACKED_PUTS`]).
    pub fn owners_hold_acked_puts(self) -> bool {
        match self {
            ProtocolKind::LockForwarding => LockForwardingProtocol::OWNERS_HOLD_ACKED_PUTS,
            ProtocolKind::KeyQueue => KeyQueueProtocol::OWNERS_HOLD_ACKED_PUTS,
            ProtocolKind::Triangle => TriangleProtocol::OWNERS_HOLD_ACKED_PUTS,
        }
    }

    /// The state machine of member `node` of a cluster configured by `cfg`, running this
    /// protocol.
    pub fn new_node(
        self,
        node: NodeId,
        cfg: &ClusterConfig,
    ) -> Result<Box<dyn NodeMachine>, ConfigError> {
        let base = NodeBase::new(node, cfg)?;
        Ok(match self {
            ProtocolKind::LockForwarding => Box::new(machine::<LockForwardingProtocol>(base)?),
            ProtocolKind::KeyQueue => Box::new(machine::<KeyQueueProtocol>(base)?),
            ProtocolKind::Triangle => Box::new(machine::<TriangleProtocol>(base)?),
        })
    }

    /// A machine for every member of a cluster configured by `cfg`.
    pub fn build_cluster(
        self,
        cfg: &ClusterConfig,
    ) -> Result<Vec<Box<dyn NodeMachine>>, ConfigError> {
        cfg.hash()?;
        (0..cfg.nodes)
            .map(|n| self.new_node(n as NodeId, cfg))
            .collect()
    }
}

/// The node machine of `P` over `base`, if `P` can keep the read guarantee under the
/// configured get plan.
fn machine<P: WriteProtocol>(base: NodeBase) -> Result<ProtocolNode<P>, ConfigError> {
    let plan = base.cfg.get_plan;
    if !P::OWNERS_HOLD_ACKED_PUTS && plan.asks_backups() {
        return Err(ConfigError::GetPlanBreaksReads {
            protocol: P::KIND.id(),
            plan: plan.id(),
        });
    }
    Ok(ProtocolNode::new(base))
}

critsec_sync::strategy_kind_text!(ProtocolKind);

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_sync::kind::ids;

    #[test]
    fn ids_are_the_protocol_files_and_parse_back() {
        assert_eq!(
            ids::<ProtocolKind>(),
            ["lock-forwarding", "key-queue", "triangle"]
        );
        for &k in ProtocolKind::ALL {
            assert_eq!(k.to_string().parse::<ProtocolKind>(), Ok(k));
        }
        let e = "paxos".parse::<ProtocolKind>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown strategy `paxos`; valid are lock-forwarding, key-queue, triangle"
        );
    }
}
