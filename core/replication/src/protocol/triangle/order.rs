//! Infinispan 9's `TriangleOrderManager`: one sequencer per segment, giving backup writes a total
//! order per segment and topology.
//!
//! | field | initial | meaning |
//! |---|---|---|
//! | `sender_topology` | -1 | topology of the last number handed out (primary side) |
//! | `sender_seq` | 1 | the next number to hand out |
//! | `receiver_topology` | -1 | topology of the last delivered write (backup side) |
//! | `receiver_seq` | 1 | the number of the next write the backup may apply |
//!
//! Rules (section 3.3 of the research): `next` in the same topology increments; a newer topology
//! resets the sequence to 1; an older one must retry in the next topology. `is_next` treats a
//! write from a topology older than the cache's as ready (it will run and fail as outdated); a
//! newer receiver topology resets the receiver to 1. `deliver` advances only on an exact match.

/// The primary's topology is older than the segment's sender state: retry in the next topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "topology {given} is older than the sequencer's topology {current}: retry in the next topology"
)]
pub struct OutdatedTopology {
    /// The topology the caller used.
    pub given: u32,
    /// The sequencer's topology.
    pub current: i64,
}

#[derive(Debug, Clone, Copy)]
struct TriangleSequencer {
    sender_topology: i64,
    sender_seq: u64,
    receiver_topology: i64,
    receiver_seq: u64,
}

impl Default for TriangleSequencer {
    fn default() -> Self {
        TriangleSequencer {
            sender_topology: -1,
            sender_seq: 1,
            receiver_topology: -1,
            receiver_seq: 1,
        }
    }
}

/// Per-segment sequencers of one node.
#[derive(Debug, Clone)]
pub struct TriangleOrderManager {
    segments: Vec<TriangleSequencer>,
}

impl TriangleOrderManager {
    /// Sequencers for `num_segments` segments.
    pub fn new(num_segments: usize) -> Self {
        TriangleOrderManager {
            segments: vec![TriangleSequencer::default(); num_segments],
        }
    }

    /// The next sequence number for a write to `segment` in topology `topology` (primary side).
    pub fn next(&mut self, segment: u16, topology: u32) -> Result<u64, OutdatedTopology> {
        let Some(s) = self.segments.get_mut(segment as usize) else {
            return Err(OutdatedTopology {
                given: topology,
                current: i64::MAX,
            });
        };
        let t = topology as i64;
        if t == s.sender_topology {
            let seq = s.sender_seq;
            s.sender_seq += 1;
            Ok(seq)
        } else if t > s.sender_topology {
            s.sender_topology = t;
            s.sender_seq = 2;
            Ok(1)
        } else {
            Err(OutdatedTopology {
                given: topology,
                current: s.sender_topology,
            })
        }
    }

    /// Whether the write `(segment, seq, topology)` may be applied now at this backup, whose cache
    /// topology is `cache_topology`.
    pub fn is_next(&mut self, segment: u16, seq: u64, topology: u32, cache_topology: u32) -> bool {
        let Some(s) = self.segments.get_mut(segment as usize) else {
            return false;
        };
        let t = topology as i64;
        if topology < cache_topology {
            return true;
        }
        if t == s.receiver_topology {
            s.receiver_seq == seq
        } else if t > s.receiver_topology {
            s.receiver_topology = t;
            s.receiver_seq = 1;
            seq == 1
        } else {
            true
        }
    }

    /// Records that `(segment, seq, topology)` was applied.
    pub fn deliver(&mut self, segment: u16, seq: u64, topology: u32) {
        if let Some(s) = self.segments.get_mut(segment as usize) {
            if s.receiver_topology == topology as i64 && s.receiver_seq == seq {
                s.receiver_seq += 1;
            }
        }
    }

    /// The last sequence number handed out per segment (0 when none).
    pub fn last_sent(&self) -> Vec<u64> {
        self.segments.iter().map(|s| s.sender_seq - 1).collect()
    }

    /// The last sequence number delivered per segment (0 when none).
    pub fn last_delivered(&self) -> Vec<u64> {
        self.segments.iter().map(|s| s.receiver_seq - 1).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sender_numbers_restart_in_a_newer_topology_and_refuse_older() {
        let mut m = TriangleOrderManager::new(4);
        assert_eq!(m.next(0, 5), Ok(1));
        assert_eq!(m.next(0, 5), Ok(2));
        assert_eq!(m.next(0, 6), Ok(1));
        assert_eq!(m.next(0, 6), Ok(2));
        assert_eq!(
            m.next(0, 5),
            Err(OutdatedTopology {
                given: 5,
                current: 6
            })
        );
        assert_eq!(m.next(1, 5), Ok(1), "segments are independent");
    }

    #[test]
    fn receiver_applies_in_order_and_resets_on_newer_topology() {
        let mut m = TriangleOrderManager::new(2);
        assert!(!m.is_next(0, 2, 1, 1));
        assert!(m.is_next(0, 1, 1, 1));
        m.deliver(0, 1, 1);
        assert!(m.is_next(0, 2, 1, 1));
        m.deliver(0, 3, 1); // not the next one: ignored
        m.deliver(0, 2, 1);
        assert_eq!(m.last_delivered()[0], 2);
        assert!(m.is_next(0, 1, 2, 2), "a newer topology restarts at 1");
        assert!(
            m.is_next(0, 7, 1, 2),
            "a write from an older topology is ready (it will fail)"
        );
    }
}
