//! The protocol-independent half of a node: its data container, key locks, pools, deadlines,
//! request tables and counters, and the loopback of messages a node sends itself.

use std::collections::VecDeque;

use super::config::ClusterConfig;
use super::originator::ClientState;
use super::primary::PrimaryOp;
use super::stats::NodeStats;
use crate::components::collections::{IdMap, Slab};
use crate::components::data_container::DataContainer;
use crate::components::hashing::ConsistentHash;
use crate::components::key_lock::KeyLockTable;
use crate::components::pool::{Pool, Slot};
use crate::components::timeouts::Timeouts;
use crate::error::ConfigError;
use crate::message::{Msg, NodeId, Output};

/// Work a node still has to do within the current input.
#[derive(Debug, Clone)]
pub(super) enum Work {
    Msg(NodeId, Msg),
    LockGranted(u64),
}

/// The protocol-independent half of a node: what every protocol's node shares (data container,
/// key locks, pools, deadlines, client and primary request tables, counters). A protocol reaches
/// it through the `base` argument of the handlers of
/// [`WriteProtocol`](crate::protocol::WriteProtocol).
#[derive(Debug)]
pub struct NodeBase {
    pub(crate) id: NodeId,
    pub(crate) cfg: ClusterConfig,
    pub(crate) hash: ConsistentHash,
    pub(crate) data: DataContainer,
    pub(crate) locks: KeyLockTable,
    pub(crate) pool: Pool<(NodeId, Msg)>,
    pub(crate) timeouts: Timeouts,
    pub(super) clients: Slab<ClientState>,
    pub(crate) ops: Slab<PrimaryOp>,
    pub(super) work: VecDeque<Work>,
    pub(crate) stats: NodeStats,
    /// Real slots (threads driver): admitted commands wait here for their thread's `Input::Run`.
    pub(super) real_slots: bool,
    pub(super) parked: IdMap<u64, (Slot, NodeId, Msg)>,
    /// Real slots: ops whose key lock was granted while their thread was blocked, by slot id.
    pub(super) granted: IdMap<u64, u64>,
    /// Real slots: the slot whose thread feeds the current input, if any.
    pub(super) current_slot: Option<u64>,
    /// `block` policy: messages from other nodes held undelivered, in arrival order, while a
    /// command at their head waits for a pool slot (the blocked transport thread).
    pub(super) held: VecDeque<(NodeId, Msg)>,
    /// When the inbound path last became blocked (µs), while it is.
    pub(super) blocked_since: Option<u64>,
    /// Per node, whether the failure detector reported it gone ([`crate::Input::Left`]).
    pub(crate) gone: Vec<bool>,
}

impl NodeBase {
    /// The state of node `id` in a cluster configured by `cfg`.
    pub fn new(id: NodeId, cfg: &ClusterConfig) -> Result<Self, ConfigError> {
        let hash = cfg.hash()?;
        if id as usize >= cfg.nodes {
            return Err(ConfigError::OutOfRange {
                name: "node id",
                value: id as u64,
                valid: "0..nodes",
            });
        }
        Ok(NodeBase {
            id,
            cfg: cfg.clone(),
            hash,
            data: DataContainer::new(cfg.keys),
            locks: KeyLockTable::default(),
            pool: Pool::new(cfg.pool_size, cfg.oob_pool_size, cfg.rejection),
            timeouts: Timeouts::default(),
            clients: Slab::default(),
            ops: Slab::default(),
            work: VecDeque::new(),
            stats: NodeStats::default(),
            real_slots: false,
            parked: IdMap::default(),
            granted: IdMap::default(),
            current_slot: None,
            held: VecDeque::new(),
            blocked_since: None,
            gone: vec![false; cfg.nodes],
        })
    }

    /// Whether the failure detector reported `node` gone.
    pub(crate) fn is_gone(&self, node: NodeId) -> bool {
        self.gone.get(usize::from(node)).copied().unwrap_or(false)
    }

    /// Sends `msg`; a message to this node itself is looped back within the current input.
    pub(crate) fn send(&mut self, to: NodeId, msg: Msg, out: &mut Vec<Output>) {
        self.stats.messages_sent += 1;
        if matches!(msg, Msg::Get { .. } | Msg::GetReply { .. }) {
            self.stats.get_messages += 1;
        }
        if to == self.id {
            self.work.push_back(Work::Msg(to, msg));
        } else {
            self.stats.payload_bytes_sent += msg.payload_len() as u64;
            out.push(Output::Send { to, msg });
        }
    }

    /// Whether anything is still in progress (for the verifier's quiescence check).
    pub(crate) fn busy_reason(&self) -> Option<String> {
        if !self.clients.is_empty() {
            return Some(format!("{} client requests pending", self.clients.len()));
        }
        if !self.ops.is_empty() {
            return Some(format!("{} primary ops pending", self.ops.len()));
        }
        if self.locks.locked_keys() > 0 {
            return Some(format!("{} keys locked", self.locks.locked_keys()));
        }
        if !self.held.is_empty() {
            return Some(format!("{} inbound messages held", self.held.len()));
        }
        if self.pool.busy() > 0 || self.pool.queued() > 0 {
            return Some(format!(
                "pool busy {} queued {}",
                self.pool.busy(),
                self.pool.queued()
            ));
        }
        None
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// This node's data container.
    pub fn data(&self) -> &DataContainer {
        &self.data
    }

    /// The consistent hash.
    pub fn hash(&self) -> &ConsistentHash {
        &self.hash
    }
}
