//! Document id workloads: Rally's conflicting ids, random UUIDs and time-based auto ids.
//!
//! [`RallyIds`] follows esrally's `GenerateActionMetaData` / `build_conflicting_ids`
//! (`esrally/track/params.py`): each client owns a disjoint range of `"%010d"` ids in shuffled
//! order, and with probability `conflict_probability` a document reuses an id the client has
//! already sent (uniformly, or biased toward recent ones by `recency`).

use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

use super::uid::base64_encode;

/// The next action of a Rally client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RallyAction {
    /// Position of the id in the client's sequence: the `n`-th distinct id it sent.
    pub position: u64,
    /// Whether this document reuses an id sent before (a version conflict in Rally's terms).
    pub conflict: bool,
}

/// Rally-style conflicting ids for one client.
#[derive(Debug, Clone)]
pub struct RallyIds {
    offset: u64,
    range: u64,
    multiplier: u64,
    conflict_probability: f64,
    recency: f64,
    id_up_to: u64,
    rng: SmallRng,
}

impl RallyIds {
    /// Ids per client; the client `c` owns `[c * RANGE, (c + 1) * RANGE)`.
    pub const RANGE: u64 = 100_000_000;

    /// A generator for `client` with `conflict_probability` in `[0, 1]` and `recency` in
    /// `[0, 1]` (0 = uniform over used ids, as in the geonames `index-update` op).
    pub fn new(client: u64, conflict_probability: f64, recency: f64, seed: u64) -> Self {
        let range = Self::RANGE;
        // Deviation: Rally shuffles a materialised list of ids; a range of 10^8 ids is too big to
        // shuffle per trial, so we walk it through an affine permutation `i -> (a*i + b) mod n`
        // with `a` coprime to `n` (10^8 = 2^8 * 5^8, so any `a` not divisible by 2 or 5).
        let mut rng = SmallRng::seed_from_u64(seed ^ client.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let multiplier = loop {
            let a = rng.random_range(1_000_000..range);
            if a % 2 != 0 && a % 5 != 0 {
                break a;
            }
        };
        RallyIds {
            offset: client * range,
            range,
            multiplier,
            conflict_probability: conflict_probability.clamp(0.0, 1.0),
            recency: recency.clamp(0.0, 1.0),
            id_up_to: 0,
            rng,
        }
    }

    /// The id at `position` of this client's shuffled sequence, formatted as `"%010d"`.
    pub fn id_at(&self, position: u64) -> String {
        format!("{:010}", self.numeric_id_at(position))
    }

    /// The numeric value of the id at `position`.
    pub fn numeric_id_at(&self, position: u64) -> u64 {
        let p = position % self.range;
        let shuffled = ((u128::from(p) * u128::from(self.multiplier) + 12_345)
            % u128::from(self.range)) as u64;
        self.offset + shuffled
    }

    /// How many distinct ids have been sent.
    pub fn id_up_to(&self) -> u64 {
        self.id_up_to
    }

    /// Marks the first `n` ids as sent (they were loaded before the run).
    pub fn skip_to(&mut self, n: u64) {
        self.id_up_to = n;
    }

    /// The next action: a new id, or a conflict on one sent before.
    pub fn next_action(&mut self) -> RallyAction {
        if self.conflict_probability > 0.0
            && self.id_up_to > 0
            && self.rng.random::<f64>() <= self.conflict_probability
        {
            let last = self.id_up_to - 1;
            let position = if self.recency == 0.0 {
                self.rng.random_range(0..=last)
            } else {
                // Rally draws an exponential variate with a slope of 30 * recency, capped at 1,
                // and counts back from the most recent id: small draws pick recent ids.
                let u: f64 = self.rng.random::<f64>();
                let x = (-(1.0 - u).ln() / (30.0 * self.recency)).min(1.0);
                ((last as f64) * (1.0 - x)).round() as u64
            };
            RallyAction {
                position,
                conflict: true,
            }
        } else {
            let position = self.id_up_to;
            self.id_up_to += 1;
            RallyAction {
                position,
                conflict: false,
            }
        }
    }
}

/// A random UUID-like id: 16 random bytes as 22 URL-safe base64 characters
/// (Elasticsearch `UUIDs.randomBase64UUID`).
pub fn random_uuid_id(rng: &mut impl RngCore) -> String {
    let mut b = [0u8; 16];
    rng.fill_bytes(&mut b);
    // Version 4, variant 2 bits, as in Java's `UUID.randomUUID`.
    b[6] = (b[6] & 0x0F) | 0x40;
    b[8] = (b[8] & 0x3F) | 0x80;
    base64_encode(&b)
}

/// Time-based auto ids: 15 bytes (6 timestamp, 6 node id, 3 sequence) as 20 base64 characters
/// (Elasticsearch `TimeBasedUUIDGenerator`, classic layout).
#[derive(Debug, Clone)]
pub struct AutoIds {
    node: [u8; 6],
    sequence: u32,
    last_timestamp: u64,
}

impl AutoIds {
    /// A generator for one node; `node` plays the MAC address.
    pub fn new(node: [u8; 6]) -> Self {
        AutoIds {
            node,
            sequence: 0,
            last_timestamp: 0,
        }
    }

    /// The next id for `timestamp_ms`. Timestamps never go backwards, as in Elasticsearch,
    /// and the 3-byte sequence disambiguates ids within one millisecond.
    pub fn next_id(&mut self, timestamp_ms: u64) -> String {
        self.sequence = (self.sequence + 1) & 0xFF_FFFF;
        let mut ts = timestamp_ms.max(self.last_timestamp);
        if self.sequence == 0 {
            ts += 1;
        }
        self.last_timestamp = ts;
        let mut b = [0u8; 15];
        b[..6].copy_from_slice(&ts.to_be_bytes()[2..]);
        b[6..12].copy_from_slice(&self.node);
        b[12..].copy_from_slice(&self.sequence.to_be_bytes()[1..]);
        base64_encode(&b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uid::Uid;
    use std::collections::HashSet;

    #[test]
    fn rally_ids_are_ten_digits_and_disjoint_per_client() {
        let a = RallyIds::new(0, 0.0, 0.0, 7);
        let b = RallyIds::new(1, 0.0, 0.0, 7);
        let ids_a: HashSet<_> = (0..10_000).map(|p| a.id_at(p)).collect();
        let ids_b: HashSet<_> = (0..10_000).map(|p| b.id_at(p)).collect();
        assert_eq!(ids_a.len(), 10_000, "the permutation must not repeat ids");
        assert!(ids_a.is_disjoint(&ids_b));
        assert!(
            ids_a
                .iter()
                .all(|id| id.len() == 10 && id.bytes().all(|c| c.is_ascii_digit()))
        );
        assert_eq!(Uid::encode_id(&a.id_at(3)).unwrap().len(), 6);
    }

    #[test]
    fn conflicts_follow_the_probability_and_reuse_sent_ids() {
        let mut g = RallyIds::new(0, 0.25, 0.0, 42);
        let mut conflicts = 0;
        for _ in 0..20_000 {
            let before = g.id_up_to();
            let a = g.next_action();
            if a.conflict {
                conflicts += 1;
                assert!(a.position < before);
            } else {
                assert_eq!(a.position, before);
            }
        }
        // 25% of 20 000 is 5 000; the bound is many standard deviations wide.
        assert!((4_400..5_600).contains(&conflicts), "{conflicts}");
    }

    #[test]
    fn recency_biases_conflicts_toward_recent_ids() {
        let mut g = RallyIds::new(0, 1.0, 1.0, 3);
        g.skip_to(10_000);
        let recent = (0..1000)
            .filter(|_| g.next_action().position >= 9_000)
            .count();
        assert!(recent > 900, "{recent}");
    }

    #[test]
    fn auto_and_uuid_ids_take_the_base64_encoding() {
        let mut auto = AutoIds::new([1, 2, 3, 4, 5, 6]);
        let a1 = auto.next_id(1_700_000_000_000);
        let a2 = auto.next_id(1_700_000_000_000);
        assert_eq!(a1.len(), 20);
        assert_ne!(a1, a2);
        assert_eq!(Uid::encode_id(&a1).unwrap().len(), 15);
        let mut rng = SmallRng::seed_from_u64(1);
        let u = random_uuid_id(&mut rng);
        assert_eq!(u.len(), 22);
        let enc = Uid::encode_id(&u).unwrap();
        assert!(enc.len() == 16 || enc.len() == 17);
    }
}
