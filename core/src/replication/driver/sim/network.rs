//! The simulated network: per-message latency with jitter, plus the faults the issue asks for
//! (latency spikes, drops repaired by retransmission, a slow node). Delivery is unordered, as
//! for JGroups OOB messages; every protocol here tolerates reordering by design.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::replication::message::NodeId;

/// Link behaviour of the simulated cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkConfig {
    /// One-way latency of every link in µs.
    pub latency_us: u64,
    /// Uniform extra latency in `0..=jitter_us`.
    pub jitter_us: u64,
    /// Per-mille chance that a transmission is lost; the sender retransmits after
    /// `retransmit_us` (UNICAST3), possibly more than once.
    pub drop_per_mille: u32,
    /// Retransmission delay, also used when a receiver's pools reject a message.
    pub retransmit_us: u64,
    /// Per-mille chance that a message is delayed by `spike_us` more (a GC pause, a busy switch).
    pub spike_per_mille: u32,
    /// The extra delay of a spike.
    pub spike_us: u64,
    /// A node whose incoming messages all take `slow_node_extra_us` longer.
    pub slow_node: Option<NodeId>,
    /// The slow node's extra delay.
    pub slow_node_extra_us: u64,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            latency_us: 3_000,
            jitter_us: 300,
            drop_per_mille: 0,
            retransmit_us: 40_000,
            spike_per_mille: 0,
            spike_us: 50_000,
            slow_node: None,
            slow_node_extra_us: 0,
        }
    }
}

/// The network's random stream and fault counters.
#[derive(Debug)]
pub struct Network {
    cfg: NetworkConfig,
    rng: SmallRng,
    /// Transmissions lost and repeated.
    pub drops: u64,
    /// Messages that hit a latency spike.
    pub spikes: u64,
}

impl Network {
    /// A network behaving as `cfg`, with its own random stream.
    pub fn new(cfg: NetworkConfig, seed: u64) -> Self {
        Network {
            cfg,
            rng: SmallRng::seed_from_u64(seed ^ 0x6E65_7477_6F72_6B00),
            drops: 0,
            spikes: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &NetworkConfig {
        &self.cfg
    }

    /// How long a message to `to` takes, including retransmissions.
    pub fn delay(&mut self, to: NodeId) -> u64 {
        let mut d = self.cfg.latency_us;
        if self.cfg.jitter_us > 0 {
            d += self.rng.random_range(0..=self.cfg.jitter_us);
        }
        if self.cfg.drop_per_mille > 0 {
            // A drop costs a retransmission period; the retransmission can be lost too.
            while self.rng.random_range(0..1000) < self.cfg.drop_per_mille.min(900) {
                self.drops += 1;
                d += self.cfg.retransmit_us;
            }
        }
        if self.cfg.spike_per_mille > 0 && self.rng.random_range(0..1000) < self.cfg.spike_per_mille
        {
            self.spikes += 1;
            d += self.cfg.spike_us;
        }
        if self.cfg.slow_node == Some(to) {
            d += self.cfg.slow_node_extra_us;
        }
        d
    }
}
