//! IspnPerfTest's workload and report: requester threads pick a uniform random key, read with
//! probability `read_pct` and otherwise write a fresh value; latencies go into histograms.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::error::ConfigError;
use super::message::{ClientOp, Key, Outcome, Value, Versioned};

/// What the requesters do.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadConfig {
    /// Requester threads per node (IspnPerfTest's `num_threads`; 25 in 2014, 100 today).
    pub requesters_per_node: u32,
    /// Only the first this-many nodes run requesters (`None`: all nodes).
    pub requester_nodes: Option<usize>,
    /// Percentage of gets (IspnPerfTest: 80).
    pub read_pct: u32,
    /// Value size in bytes (IspnPerfTest's `msg_size`: 1000; at least 8, the tag's size). Every
    /// put allocates a fresh value of this size ([`OpGenerator::next_op`]); the primary stores it
    /// and sends it to the backups, and the threads and local drivers copy the bytes once per
    /// hop between nodes (the simulation shares them and charges time through its cost model).
    pub value_size: u32,
    /// Percentage of writes that go to the hot keys instead of a uniform key.
    pub hot_key_pct: u32,
    /// How many hot keys (keys `0..hot_keys`).
    pub hot_keys: u32,
    /// Stop each requester after this many operations (`None`: run for the whole duration).
    pub ops_per_requester: Option<u64>,
    /// IspnPerfTest's run shape: each node's requesters perform this many requests in all
    /// (split evenly, the first ones taking one more when it does not divide), and the run's
    /// window is the time until the last of them completes or fails, not a fixed duration.
    /// `None`: a window of fixed duration.
    pub requests_per_node: Option<u64>,
}

impl WorkloadConfig {
    /// How many operations requester `r` of a node performs (`None`: no limit).
    pub fn ops_limit(&self, r: u32) -> Option<u64> {
        let fixed = self.requests_per_node.map(|n| {
            let per = u64::from(self.requesters_per_node.max(1));
            n / per + u64::from(u64::from(r) < n % per)
        });
        match (fixed, self.ops_per_requester) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl WorkloadConfig {
    /// Rejects settings a run cannot honour: a value must hold its 8-byte tag.
    pub fn check(&self) -> Result<(), ConfigError> {
        if (self.value_size as usize) < MIN_VALUE_SIZE {
            return Err(ConfigError::OutOfRange {
                name: "value_size",
                value: u64::from(self.value_size),
                valid: ">= 8 (a value's first 8 bytes hold its tag)",
            });
        }
        Ok(())
    }
}

/// The smallest value: its 8-byte tag.
pub const MIN_VALUE_SIZE: usize = 8;

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            requesters_per_node: 25,
            requester_nodes: None,
            read_pct: 80,
            value_size: 1000,
            hot_key_pct: 0,
            hot_keys: 1,
            ops_per_requester: None,
            requests_per_node: None,
        }
    }
}

/// Draws operations for one requester (or, in the simulation, for all of a node's).
#[derive(Debug, Clone)]
pub struct OpGenerator {
    rng: SmallRng,
    keys: u32,
    read_pct: u32,
    hot_key_pct: u32,
    hot_keys: u32,
    value_size: usize,
    counter: u32,
    /// How far the counter moves per put: the number of generators writing side by side, so
    /// that their tags never collide ([`OpGenerator::writer`]).
    counter_step: u32,
    /// Puts carry [`Value::described`] values (the simulation) instead of allocated bytes.
    described: bool,
}

impl OpGenerator {
    /// A generator over keys `0..keys` seeded with `seed`.
    pub fn new(cfg: &WorkloadConfig, keys: u32, seed: u64) -> Self {
        OpGenerator {
            rng: SmallRng::seed_from_u64(seed),
            keys: keys.max(1),
            read_pct: cfg.read_pct.min(100),
            hot_key_pct: cfg.hot_key_pct.min(100),
            hot_keys: cfg.hot_keys.clamp(1, keys.max(1)),
            value_size: cfg.value_size as usize,
            counter: 0,
            counter_step: 1,
            described: false,
        }
    }

    /// The same generator, making puts whose values describe their bytes instead of allocating
    /// them ([`Value::described`]; equal to the allocated ones): for the simulation, which never
    /// touches a value's bytes, so the values and every outcome stay the same.
    pub fn describing_values(mut self) -> Self {
        self.described = true;
        self
    }

    /// Requester `index` of `requesters` in a driver that gives each requester a generator of
    /// its own (the threads and net drivers): its own stream, drawn from `seed` and its index,
    /// and tags no other requester writes, so a reply carrying another requester's value to the
    /// same key can never pass for the put's own.
    pub fn requester(
        cfg: &WorkloadConfig,
        keys: u32,
        seed: u64,
        index: usize,
        requesters: usize,
    ) -> Self {
        let writers = u32::try_from(requesters).unwrap_or(u32::MAX);
        OpGenerator::new(cfg, keys, seed ^ (index as u64 + 1)).writer(index as u32, writers)
    }

    /// The same generator as writer `index` of `writers` drawing side by side: its puts' tags
    /// count `index + writers`, `index + 2 * writers`, ..., so no two writers write the same
    /// value.
    pub fn writer(mut self, index: u32, writers: u32) -> Self {
        self.counter = index;
        self.counter_step = writers.max(1);
        self
    }

    /// The next operation. A put's value is a fresh `value_size`-byte buffer (one allocation, as
    /// IspnPerfTest's `new byte[msg_size]`) whose tag is `key << 32 | counter`, so a get can check
    /// that what it read was written for that key.
    pub fn next_op(&mut self) -> ClientOp {
        if self.rng.random_range(0..100) < self.read_pct {
            return ClientOp::Get(self.rng.random_range(0..self.keys));
        }
        let key = if self.hot_key_pct > 0 && self.rng.random_range(0..100) < self.hot_key_pct {
            self.rng.random_range(0..self.hot_keys)
        } else {
            self.rng.random_range(0..self.keys)
        };
        self.counter = self.counter.wrapping_add(self.counter_step);
        let tag = value_tag(key, self.counter);
        let value = if self.described {
            Value::described(tag, self.value_size)
        } else {
            Value::new(tag, self.value_size)
        };
        ClientOp::Put(key, value)
    }

    /// A random number in `0..n`, for drivers that need jitter from the same stream.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.rng.random_range(0..n)
        }
    }
}

/// The value tag a put of `key` writes.
pub fn value_tag(key: Key, counter: u32) -> u64 {
    ((key as u64) << 32) | counter as u64
}

/// Whether a get's result is plausible for `key`: absent, or a `value_size`-byte value written
/// for that key.
pub fn get_result_valid(key: Key, entry: &Versioned, value_size: usize) -> bool {
    entry.version == 0
        || ((entry.value.tag() >> 32) as u32 == key && entry.value.len() == value_size)
}

/// Whether `outcome` answers `op`: a get's result is plausible for its key
/// ([`get_result_valid`]), a put is acknowledged with a version and the value it wrote, and a
/// failure answers anything.
pub fn reply_matches(op: &ClientOp, outcome: &Outcome, value_size: usize) -> bool {
    match (op, outcome) {
        (ClientOp::Get(k), Outcome::Got(e)) => get_result_valid(*k, e, value_size),
        (ClientOp::Put(_, v), Outcome::Put(e)) => e.value == *v && e.version > 0,
        (_, Outcome::Failed(_)) => true,
        _ => false,
    }
}

/// A log-linear latency histogram in µs (32 sub-buckets per power of two: about 3% precision).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: vec![0; 64 * 32],
            total: 0,
            max: 0,
        }
    }
}

const SUB_BITS: u32 = 5;

fn bucket(v: u64) -> usize {
    if v < (1 << SUB_BITS) {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let sub = (v >> (e - SUB_BITS)) & ((1 << SUB_BITS) - 1);
    (((e - SUB_BITS + 1) << SUB_BITS) as u64 + sub) as usize
}

fn bucket_high(b: usize) -> u64 {
    let b = b as u64;
    if b < (1 << SUB_BITS) {
        return b;
    }
    let e = (b >> SUB_BITS) + SUB_BITS as u64 - 1;
    let sub = b & ((1 << SUB_BITS) - 1);
    ((1u64 << SUB_BITS | sub) << (e - SUB_BITS as u64)) + (1 << (e - SUB_BITS as u64)) - 1
}

impl LatencyHistogram {
    /// Records one latency in µs.
    pub fn record(&mut self, us: u64) {
        let b = bucket(us).min(self.counts.len() - 1);
        self.counts[b] += 1;
        self.total += 1;
        self.max = self.max.max(us);
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    /// Recorded values.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest value recorded.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `q`-quantile (0..=1) in µs: the upper edge of its bucket, capped at the maximum.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_high(b).min(self.max);
            }
        }
        self.max
    }
}

/// What the requesters of a run observed.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RequesterStats {
    /// Latencies of successful gets (µs).
    pub gets: LatencyHistogram,
    /// Latencies of acknowledged puts (µs).
    pub puts: LatencyHistogram,
    /// Operations that failed with a lock timeout.
    pub failed_lock: u64,
    /// Operations that failed with a reply timeout.
    pub failed_reply: u64,
    /// Gets whose result was not a value written for their key (or not `value_size` bytes).
    pub bad_reads: u64,
}

impl RequesterStats {
    /// Records a completed operation and its latency; a get's result is checked against the
    /// configured `value_size`.
    pub fn record(&mut self, op: &ClientOp, outcome: &Outcome, latency_us: u64, value_size: usize) {
        match (op, outcome) {
            (ClientOp::Get(key), Outcome::Got(entry)) => {
                if !get_result_valid(*key, entry, value_size) {
                    self.bad_reads += 1;
                }
                self.gets.record(latency_us);
            }
            (_, Outcome::Put(_)) => self.puts.record(latency_us),
            (_, Outcome::Failed(super::message::OpError::LockTimeout)) => self.failed_lock += 1,
            (_, Outcome::Failed(super::message::OpError::ReplyTimeout)) => self.failed_reply += 1,
            (ClientOp::Put(..), Outcome::Got(_)) => self.bad_reads += 1,
        }
    }

    /// Successful operations.
    pub fn ok_ops(&self) -> u64 {
        self.gets.count() + self.puts.count()
    }

    /// Operations that ended, answered or failed (a lock or reply timeout).
    pub fn ended(&self) -> u64 {
        self.ok_ops() + self.failed_lock + self.failed_reply
    }

    /// Adds another requester's stats.
    pub fn merge(&mut self, o: &RequesterStats) {
        self.gets.merge(&o.gets);
        self.puts.merge(&o.puts);
        self.failed_lock += o.failed_lock;
        self.failed_reply += o.failed_reply;
        self.bad_reads += o.bad_reads;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_within_a_bucket() {
        let mut h = LatencyHistogram::default();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let p50 = h.quantile(0.5);
        assert!((4_800..=5_200).contains(&p50), "{p50}");
        assert_eq!(h.quantile(1.0), 10_000);
        assert!(h.quantile(0.999) >= 9_900);
        for v in [0u64, 1, 31, 32, 33, 1000, 123_456] {
            assert!(bucket_high(bucket(v)) >= v, "{v}");
        }
    }

    /// The threads and net drivers' requesters: before they counted tags from 0 each, so two
    /// requesters' puts to one key wrote equal values, and an ack carrying the other's value
    /// matched.
    #[test]
    fn requesters_of_a_cluster_never_write_the_same_value() {
        let cfg = WorkloadConfig {
            read_pct: 0,
            ..WorkloadConfig::default()
        };
        let requesters = 6;
        let mut seen = std::collections::HashSet::new();
        for index in 0..requesters {
            let mut g = OpGenerator::requester(&cfg, 3, 11, index, requesters);
            for _ in 0..500 {
                let ClientOp::Put(_, v) = g.next_op() else {
                    panic!("read_pct 0 draws puts only")
                };
                assert!(
                    seen.insert(v.tag()),
                    "requester {index} repeated tag {:x}",
                    v.tag()
                );
            }
        }
    }

    #[test]
    fn generator_honours_the_read_share_and_tags_values_with_their_key() {
        let cfg = WorkloadConfig {
            read_pct: 80,
            ..WorkloadConfig::default()
        };
        let mut g = OpGenerator::new(&cfg, 100, 7);
        let mut reads = 0;
        for _ in 0..10_000 {
            match g.next_op() {
                ClientOp::Get(k) => {
                    assert!(k < 100);
                    reads += 1;
                }
                ClientOp::Put(k, v) => {
                    assert_eq!((v.tag() >> 32) as u32, k);
                    assert_eq!(v.len(), 1000);
                    assert!(v.bytes()[8..].iter().all(|&b| b == 0));
                }
            }
        }
        assert!((7_500..8_500).contains(&reads), "{reads}");
    }

    #[test]
    fn a_get_result_must_have_its_key_tag_and_the_configured_size() {
        let entry = |tag, size| Versioned {
            version: 1,
            value: Value::new(tag, size),
        };
        assert!(get_result_valid(3, &entry(value_tag(3, 1), 100), 100));
        assert!(!get_result_valid(3, &entry(value_tag(4, 1), 100), 100));
        assert!(!get_result_valid(3, &entry(value_tag(3, 1), 99), 100));
        assert!(get_result_valid(3, &Versioned::default(), 100), "absent");
    }

    #[test]
    fn a_value_smaller_than_its_tag_is_a_config_error() {
        let cfg = |value_size| WorkloadConfig {
            value_size,
            ..WorkloadConfig::default()
        };
        assert!(cfg(8).check().is_ok());
        let err = cfg(7).check().unwrap_err();
        assert!(err.to_string().contains(">= 8"), "{err}");
    }
}
