//! The simulated nodes' processors: what a handled message costs, and stop-the-world pauses.
//!
//! Without this model a simulated node handles every input the instant it arrives, so a run is
//! bound only by link latency. Real nodes are not: Bela Ban's 4-core boxes topped out near
//! 40,000 requests/s per node, and his post names GC as a hiccup that turns a lock backlog into
//! timeouts. So each node gets `cores` processors; every input it handles (a message, or one of
//! its requesters starting an operation) occupies one core for `per_input_us` plus
//! `per_byte_ns` per payload byte (marshalling), in arrival order on the first free core; the
//! node's state machine sees the input when that work ends. Every `gc_interval_us` a node
//! pauses all its cores for `gc_pause_us` (each node at its own seeded phase); work due to start
//! inside a pause starts after it, and work that a pause interrupts ends that much later.
//!
//! Deviations, documented for readers of the numbers: the machine's pool slots are taken when
//! the node handles a command, not while it waits for a core, so CPU queueing adds latency but
//! never holds a slot; timers (lock and reply timeouts) fire on time except during a pause,
//! which they wait out, as a JVM timer thread does.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::error::ConfigError;

/// The cost model; `cores = 0` (the default) turns it off: inputs are handled on arrival.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuConfig {
    /// Processors per node (0: no CPU model).
    pub cores: u32,
    /// CPU time of handling one input (transport, dispatch, interceptor stack), in µs.
    pub per_input_us: u64,
    /// Extra CPU time per payload byte carried (marshalling and copying), in ns.
    pub per_byte_ns: u64,
    /// Time between the starts of a node's stop-the-world pauses, in µs (0: no pauses).
    pub gc_interval_us: u64,
    /// Length of each pause, in µs.
    pub gc_pause_us: u64,
}

impl CpuConfig {
    /// Rejects settings that would stop time (a pause as long as its interval never ends) and
    /// pauses without processors to pause.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.gc_interval_us > 0 && self.gc_pause_us > 0 && self.cores == 0 {
            return Err(ConfigError::OutOfRange {
                name: "cores",
                value: 0,
                valid: ">= 1 when GC pauses are set (they pause the CPU model's cores)",
            });
        }
        if self.gc_interval_us > 0 && self.gc_pause_us >= self.gc_interval_us {
            return Err(ConfigError::OutOfRange {
                name: "gc_pause_us",
                value: self.gc_pause_us,
                valid: "< gc_interval_us",
            });
        }
        Ok(())
    }

    /// Whether inputs cost time at all.
    pub fn enabled(&self) -> bool {
        self.cores > 0
    }

    /// The CPU time of an input carrying `payload_bytes`, in µs (at least 1 once enabled, so
    /// that a core is a resource even with zero costs configured).
    pub fn cost_us(&self, payload_bytes: usize) -> u64 {
        (self.per_input_us + (payload_bytes as u64 * self.per_byte_ns) / 1000).max(1)
    }
}

/// What the cores did, summed over all nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuUsage {
    /// Core time spent on inputs, in µs (pauses excluded).
    pub busy_us: u64,
    /// Time inputs waited for a core or for a pause to end, in µs.
    pub wait_us: u64,
    /// Inputs handled through the model.
    pub inputs: u64,
}

impl CpuUsage {
    /// Adds another share of the cluster's usage.
    pub fn add(&mut self, other: &CpuUsage) {
        self.busy_us += other.busy_us;
        self.wait_us += other.wait_us;
        self.inputs += other.inputs;
    }
}

/// Every node's cores and pause schedule, and what they were used for.
#[derive(Debug)]
pub struct Cpus {
    cfg: CpuConfig,
    /// When each core of each node is next free, `node * cores + core`.
    free_at: Vec<u64>,
    /// Each node's pause phase in `0..gc_interval_us`.
    phase: Vec<u64>,
    /// Usage so far.
    pub usage: CpuUsage,
}

impl Cpus {
    /// `nodes` nodes' processors, pause phases drawn from `seed`.
    pub fn new(cfg: CpuConfig, nodes: usize, seed: u64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x6370_7573_0000_0000);
        let phase = (0..nodes)
            .map(|_| {
                if cfg.gc_interval_us > 0 {
                    rng.random_range(0..cfg.gc_interval_us)
                } else {
                    0
                }
            })
            .collect();
        Cpus {
            free_at: vec![0; nodes * cfg.cores as usize],
            phase,
            cfg,
            usage: CpuUsage::default(),
        }
    }

    /// The model's settings.
    pub fn config(&self) -> &CpuConfig {
        &self.cfg
    }

    /// An input carrying `payload_bytes` arrives at `node` at `now`: when does its handling end?
    /// Takes the core that frees first (arrival order, since the simulation calls this in
    /// virtual-time order).
    pub fn schedule(&mut self, node: usize, now: u64, payload_bytes: usize) -> u64 {
        let cores = self.cfg.cores as usize;
        let mine = &mut self.free_at[node * cores..(node + 1) * cores];
        let (core, free) = mine
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, t)| t)
            .unwrap_or((0, now));
        let cost = self.cfg.cost_us(payload_bytes);
        let start = self.after_pause(node, now.max(free));
        let end = self.stretch(node, start, cost);
        if let Some(t) = self.free_at.get_mut(node * cores + core) {
            *t = end;
        }
        self.usage.busy_us += cost;
        self.usage.wait_us += start - now;
        self.usage.inputs += 1;
        end
    }

    /// The work queued on `node`'s cores at `t`: how long until its last core to free up is
    /// free (the inputs it has taken and not yet handled, pauses included), in µs.
    pub fn queued_us(&self, node: usize, t: u64) -> u64 {
        let cores = self.cfg.cores as usize;
        self.free_at[node * cores..(node + 1) * cores]
            .iter()
            .map(|&free| free.saturating_sub(t))
            .max()
            .unwrap_or(0)
    }

    /// `t`, or the end of the pause `node` is in at `t`.
    pub fn after_pause(&self, node: usize, t: u64) -> u64 {
        let (interval, pause) = (self.cfg.gc_interval_us, self.cfg.gc_pause_us);
        if interval == 0 || pause == 0 {
            return t;
        }
        let phase = self.phase[node];
        if t < phase {
            return t;
        }
        let into = (t - phase) % interval;
        if into < pause { t - into + pause } else { t }
    }

    /// When work of `cost` µs started at `start` (outside a pause) ends, pauses included.
    fn stretch(&self, node: usize, start: u64, cost: u64) -> u64 {
        let (interval, pause) = (self.cfg.gc_interval_us, self.cfg.gc_pause_us);
        if interval == 0 || pause == 0 {
            return start + cost;
        }
        let (mut t, mut left) = (start, cost);
        loop {
            // The next pause start at or after `t`.
            let phase = self.phase[node];
            let next = if t <= phase {
                phase
            } else {
                phase + (t - phase).div_ceil(interval) * interval
            };
            if t + left <= next {
                return t + left;
            }
            left -= next - t;
            t = next + pause;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpus(cores: u32, gc: (u64, u64)) -> Cpus {
        let mut c = Cpus::new(
            CpuConfig {
                cores,
                per_input_us: 10,
                per_byte_ns: 1000,
                gc_interval_us: gc.0,
                gc_pause_us: gc.1,
            },
            2,
            7,
        );
        c.phase = vec![100, 0];
        c
    }

    #[test]
    fn inputs_queue_for_the_first_free_core() {
        let mut c = cpus(2, (0, 0));
        assert_eq!(c.schedule(0, 0, 0), 10);
        assert_eq!(c.schedule(0, 0, 5), 15, "second core, 5 payload bytes");
        assert_eq!(c.schedule(0, 0, 0), 20, "waits for the first core");
        assert_eq!(c.schedule(1, 0, 0), 10, "another node's cores are its own");
        assert_eq!(c.usage.wait_us, 10);
        assert_eq!(c.usage.busy_us, 45);
        assert_eq!(c.queued_us(0, 0), 20, "the last core to free up");
        assert_eq!(c.queued_us(0, 12), 8);
        assert_eq!(c.queued_us(1, 25), 0, "idle");
    }

    #[test]
    fn pauses_delay_starts_and_stretch_work() {
        // Node 0 pauses during [100, 150), [1100, 1150), ...
        let c = cpus(1, (1000, 50));
        assert_eq!(c.after_pause(0, 99), 99);
        assert_eq!(c.after_pause(0, 100), 150);
        assert_eq!(c.after_pause(0, 1149), 1150);
        assert_eq!(c.after_pause(0, 1150), 1150);
        assert_eq!(c.stretch(0, 95, 10), 155, "5 µs before the pause, 5 after");
        assert_eq!(c.stretch(0, 150, 10), 160);
        assert_eq!(c.stretch(0, 0, 2100), 2250, "three pauses inside");
        let mut c = c;
        assert_eq!(c.schedule(0, 120, 0), 160);
    }

    #[test]
    fn a_pause_as_long_as_its_interval_or_without_cores_is_rejected() {
        let cfg = CpuConfig {
            gc_interval_us: 10,
            gc_pause_us: 10,
            ..CpuConfig::default()
        };
        assert!(cfg.check().is_err());
        let no_cores = CpuConfig {
            gc_interval_us: 10,
            gc_pause_us: 1,
            ..CpuConfig::default()
        };
        assert!(no_cores.check().is_err());
        assert!(CpuConfig::default().check().is_ok());
    }
}
