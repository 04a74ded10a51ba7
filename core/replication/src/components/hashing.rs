//! Consistent hashing as Infinispan's `ConsistentHash` does it: key -> segment -> owners.
//!
//! A key hashes to one of `num_segments` segments; each segment has a primary owner and
//! `num_owners - 1` backups, the next members of the view. The topology id names this view; a
//! Triangle sequence number is only meaningful within one topology.

use crate::error::ConfigError;
use crate::message::{Key, NodeId};

/// The most owners a segment may have (the model keeps owner lists inline, without allocating).
pub const MAX_OWNERS: usize = 4;

/// A fixed consistent hash over a cluster view.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConsistentHash {
    nodes: usize,
    num_owners: usize,
    num_segments: usize,
    topology_id: u32,
}

impl ConsistentHash {
    /// A hash of `nodes` members with `num_owners` owners per segment and `num_segments` segments.
    pub fn new(nodes: usize, num_owners: usize, num_segments: usize) -> Result<Self, ConfigError> {
        if nodes == 0 || nodes > NodeId::MAX as usize {
            return Err(ConfigError::OutOfRange {
                name: "nodes",
                value: nodes as u64,
                valid: "1..=65535",
            });
        }
        if num_owners == 0 || num_owners > nodes || num_owners > MAX_OWNERS {
            return Err(ConfigError::BadOwners {
                num_owners,
                nodes: nodes.min(MAX_OWNERS),
            });
        }
        if num_segments == 0 || num_segments > u16::MAX as usize {
            return Err(ConfigError::OutOfRange {
                name: "num_segments",
                value: num_segments as u64,
                valid: "1..=65535",
            });
        }
        Ok(ConsistentHash {
            nodes,
            num_owners,
            num_segments,
            topology_id: 1,
        })
    }

    /// The number of members.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Owners per segment (Infinispan's `numOwners`).
    pub fn num_owners(&self) -> usize {
        self.num_owners
    }

    /// The number of segments.
    pub fn num_segments(&self) -> usize {
        self.num_segments
    }

    /// The id of this view; Triangle sequence numbers restart when it grows.
    pub fn topology_id(&self) -> u32 {
        self.topology_id
    }

    /// The segment of `key`: a 32-bit finaliser spreads consecutive keys over the segments.
    pub fn segment(&self, key: Key) -> u16 {
        let mut h = key.wrapping_mul(0x9E37_79B9);
        h ^= h >> 16;
        h = h.wrapping_mul(0x85EB_CA6B);
        h ^= h >> 13;
        (h as usize % self.num_segments) as u16
    }

    /// The primary owner of `segment`; segments are dealt round-robin over the members.
    pub fn primary_of_segment(&self, segment: u16) -> NodeId {
        (segment as usize % self.nodes) as NodeId
    }

    /// The owners of `key`, primary first, then the backups (the next members of the view).
    pub fn owners(&self, key: Key) -> Owners {
        self.owners_of_segment(self.segment(key))
    }

    /// The owners of `segment`, primary first.
    pub fn owners_of_segment(&self, segment: u16) -> Owners {
        let primary = self.primary_of_segment(segment) as usize;
        let mut list = [0; MAX_OWNERS];
        for (i, slot) in list.iter_mut().take(self.num_owners).enumerate() {
            *slot = ((primary + i) % self.nodes) as NodeId;
        }
        Owners {
            list,
            len: self.num_owners as u8,
        }
    }

    /// The primary owner of `key`.
    pub fn primary(&self, key: Key) -> NodeId {
        self.primary_of_segment(self.segment(key))
    }
}

/// The owners of one key, primary first, stored inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owners {
    list: [NodeId; MAX_OWNERS],
    len: u8,
}

impl Owners {
    /// All owners, primary first.
    pub fn all(&self) -> &[NodeId] {
        &self.list[..self.len as usize]
    }

    /// The primary owner.
    pub fn primary(&self) -> NodeId {
        self.list[0]
    }

    /// The backup owners.
    pub fn backups(&self) -> &[NodeId] {
        &self.list[1..self.len as usize]
    }

    /// Whether `node` owns the key.
    pub fn contains(&self, node: NodeId) -> bool {
        self.all().contains(&node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_distinct_and_primary_first() {
        let ch = ConsistentHash::new(5, 3, 256).unwrap();
        for key in 0..1000 {
            let o = ch.owners(key);
            assert_eq!(o.all().len(), 3);
            assert_eq!(o.primary(), ch.primary(key));
            let mut v = o.all().to_vec();
            v.sort();
            v.dedup();
            assert_eq!(v.len(), 3);
        }
    }

    #[test]
    fn keys_spread_over_all_primaries() {
        let ch = ConsistentHash::new(100, 2, 256).unwrap();
        let mut seen = vec![0u32; 100];
        for key in 0..20_000 {
            seen[ch.primary(key) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    }

    #[test]
    fn bad_owner_counts_are_rejected() {
        assert!(matches!(
            ConsistentHash::new(2, 3, 256),
            Err(ConfigError::BadOwners { .. })
        ));
        assert!(matches!(
            ConsistentHash::new(2, 0, 256),
            Err(ConfigError::BadOwners { .. })
        ));
        assert!(ConsistentHash::new(0, 1, 256).is_err());
    }
}
