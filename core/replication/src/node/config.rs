//! The settings every node of a cluster shares, as an Infinispan cache configuration holds them
//! (`clustering().hash().numOwners()`, `locking().lockAcquisitionTimeout()`,
//! `clustering().remoteTimeout()`, the transport's thread pools), and their validation.

use crate::components::hashing::ConsistentHash;
use crate::components::pool::RejectionPolicy;
use crate::error::ConfigError;
use crate::protocol::GetPlanChoice;

/// Settings every node of a cluster shares.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterConfig {
    /// Cluster members.
    pub nodes: usize,
    /// Owners per key (`numOwners`).
    pub num_owners: usize,
    /// Segments of the consistent hash.
    pub num_segments: usize,
    /// Keys `0..keys`.
    pub keys: u32,
    /// Key lock acquisition timeout (`lockAcquisitionTimeout`; Bela's run used 5 s).
    pub lock_timeout_us: u64,
    /// Reply / ack timeout (`replTimeout`, `remoteTimeout`: 15 s by default in Infinispan 9).
    pub reply_timeout_us: u64,
    /// Remote-command pool slots per node (Infinispan's internal pool: 32 by default); the
    /// threads driver runs this many real pool threads per node.
    pub pool_size: usize,
    /// OOB pool slots per node, used when caller-runs overflows the remote-command pool (JGroups
    /// 3.x stock configs: `oob_thread_pool.max_threads="8"`); the threads driver runs this many
    /// real OOB threads per node under caller-runs.
    pub oob_pool_size: usize,
    /// What a full pool does with the next command.
    pub rejection: RejectionPolicy,
    /// KeyQueue: replication batches a primary's worker keeps in flight.
    pub repl_window: usize,
    /// The plan of remote gets, independent of the put protocol (default: the protocol's own).
    pub get_plan: GetPlanChoice,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: 4,
            num_owners: 2,
            num_segments: 256,
            keys: 20_000,
            lock_timeout_us: 5_000_000,
            reply_timeout_us: 15_000_000,
            pool_size: 32,
            oob_pool_size: 8,
            rejection: RejectionPolicy::CallerRuns,
            repl_window: 64,
            get_plan: GetPlanChoice::Protocol,
        }
    }
}

impl ClusterConfig {
    /// Checks the settings and builds the consistent hash.
    pub fn hash(&self) -> Result<ConsistentHash, ConfigError> {
        if self.keys == 0 {
            return Err(ConfigError::OutOfRange {
                name: "keys",
                value: 0,
                valid: ">= 1",
            });
        }
        if self.pool_size == 0 {
            return Err(ConfigError::OutOfRange {
                name: "pool_size",
                value: 0,
                valid: ">= 1",
            });
        }
        if self.repl_window == 0 {
            return Err(ConfigError::OutOfRange {
                name: "repl_window",
                value: 0,
                valid: ">= 1",
            });
        }
        if self.rejection == RejectionPolicy::CallerRuns && self.oob_pool_size == 0 {
            // Every arriving message would be dropped and retransmitted forever.
            return Err(ConfigError::OutOfRange {
                name: "oob_pool_size",
                value: 0,
                valid: ">= 1 with the caller-runs policy",
            });
        }
        if self.reply_timeout_us == 0 {
            return Err(ConfigError::OutOfRange {
                name: "reply_timeout_us",
                value: 0,
                valid: ">= 1",
            });
        }
        ConsistentHash::new(self.nodes, self.num_owners, self.num_segments)
    }
}
