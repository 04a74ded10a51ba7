//! The simulated network: per-message latency with jitter, plus faults (latency spikes, drops,
//! a slow node). Delivery is unordered, as for JGroups OOB messages; every protocol here
//! tolerates reordering by design.
//!
//! Losses (a drop on the link, or a message a receiver's full pool rejected) are repaired as
//! JGroups 3.6.0's `UNICAST3` repairs them ([`retransmission`]): per connection, on the
//! receiver's retransmission task every `xmit_interval_us`, every missing message of the
//! connection asked for in one request and resent together, not on a timer per message.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::driver::retransmission::{self, LinkFaults, XMIT_INTERVAL_US};
use crate::message::NodeId;

/// Link behaviour of the simulated cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkConfig {
    /// One-way latency of every link in µs.
    pub latency_us: u64,
    /// Uniform extra latency in `0..=jitter_us`.
    pub jitter_us: u64,
    /// Per-mille chance that a transmission is lost (repaired as a rejected message is,
    /// possibly more than once).
    pub drop_per_mille: u32,
    /// The period of every node's retransmission task (`UNICAST3.xmit_interval`; JGroups 3.6.0's
    /// default and Infinispan 7.0's stacks: 500 ms): a lost or rejected message is asked for
    /// on the second run after its loss, or the first if it was asked for before.
    pub xmit_interval_us: u64,
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
            xmit_interval_us: XMIT_INTERVAL_US,
            spike_per_mille: 0,
            spike_us: 50_000,
            slow_node: None,
            slow_node_extra_us: 0,
        }
    }
}

/// One node's side of the network: the random stream its transmissions draw their delays and
/// faults from (the messages it sends, and the resends it asks for), and their fault counters.
/// A stream per node, not one for the cluster, so that what a node draws does not depend on
/// the order in which other nodes were simulated.
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
    /// A node's side of a network behaving as `cfg`, drawing from the stream `seed` names.
    pub fn new(cfg: NetworkConfig, seed: u64) -> Self {
        Network {
            cfg,
            rng: SmallRng::seed_from_u64(seed),
            drops: 0,
            spikes: 0,
        }
    }

    /// How long a message sent to `to` at `now` takes, including its repairs.
    pub fn delay(&mut self, now: u64, to: NodeId) -> u64 {
        let faults = self.faults();
        let (at, losses) = retransmission::sent_arrival(&mut self.rng, now, &faults);
        self.drops += losses;
        at - now + self.hazards(to)
    }

    /// How long after `tick` the messages arrive that `to`'s retransmission task asks `from` for
    /// at `tick`: the request crosses to `from` and the resend back, a lost crossing asked for
    /// again at the task's next run, as the threads driver repairs them. Each crossing can meet
    /// a spike and the slow node's extra delay.
    pub fn resent_delay(&mut self, tick: u64, from: NodeId, to: NodeId) -> u64 {
        let faults = self.faults();
        let (at, losses) = retransmission::resent_arrival(&mut self.rng, tick, &faults);
        self.drops += losses;
        at - tick + self.hazards(from) + self.hazards(to)
    }

    /// The extra delay of a crossing to `to`: a latency spike, and the slow node's delay.
    fn hazards(&mut self, to: NodeId) -> u64 {
        let mut d = 0;
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

    /// The link as the loss repair sees it.
    fn faults(&self) -> LinkFaults {
        LinkFaults {
            latency_us: self.cfg.latency_us,
            jitter_us: self.cfg.jitter_us,
            drop_per_mille: self.cfg.drop_per_mille,
            xmit_interval_us: self.cfg.xmit_interval_us,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulation repairs a rejected message's request and resend as the threads driver
    /// does: both draw from `retransmission::resent_arrival`, losses and all.
    #[test]
    fn a_rejected_message_is_resent_as_the_threads_driver_resends_it() {
        let cfg = NetworkConfig {
            latency_us: 250,
            jitter_us: 40,
            drop_per_mille: 300,
            xmit_interval_us: 1_000,
            ..NetworkConfig::default()
        };
        let mut net = Network::new(cfg, 11);
        let mut same = net.rng.clone();
        let faults = net.faults();
        for tick in (1..100).map(|i| i * 1_000) {
            let (at, losses) = retransmission::resent_arrival(&mut same, tick, &faults);
            let drops = net.drops;
            assert_eq!(net.resent_delay(tick, 1, 2), at - tick, "tick {tick}");
            assert_eq!(net.drops - drops, losses);
        }
        assert!(net.drops > 10, "a third of the crossings are lost");
    }
}
