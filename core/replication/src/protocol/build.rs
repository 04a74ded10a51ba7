//! Building a cluster member's node machine for a protocol chosen at run time: the factory half
//! of [`ProtocolKind`], which names every protocol and so sits above them and the node machine
//! (upstream, the cache configuration picks the distribution interceptor when the cache starts).

use super::kind::ProtocolKind;
use super::{KeyQueueProtocol, LockForwardingProtocol, TriangleProtocol, WriteProtocol};
use crate::error::ConfigError;
use crate::message::NodeId;
use crate::node::{ClusterConfig, NodeBase, NodeMachine, ProtocolNode};
use critsec_sync::kind::StrategyKind;

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
