//! A node's data container: the entries it owns, with the version each write got at the primary
//! (Infinispan's `DataContainer`, with the version its entries' metadata carries).

use super::collections::IdMap;
use crate::message::{Key, Value, Versioned};

/// Entries of keys `0..keys`, in a hash map: a node holds only its own keys (2 of 100 nodes own
/// each key), so a 100-node simulation keeps its containers in cache instead of 100 dense arrays.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DataContainer {
    entries: IdMap<Key, Versioned>,
    keys: u32,
    regressions: u64,
    applies: u64,
}

impl DataContainer {
    /// An empty container for keys `0..keys`.
    pub fn new(keys: u32) -> Self {
        DataContainer {
            entries: IdMap::default(),
            keys,
            regressions: 0,
            applies: 0,
        }
    }

    /// The entry of `key` (version 0 when absent or out of range); a clone shares the stored
    /// value's bytes.
    pub fn get(&self, key: Key) -> Versioned {
        self.entries.get(&key).cloned().unwrap_or_default()
    }

    /// The version of `key` (0 when absent), without touching its value.
    pub fn version(&self, key: Key) -> u64 {
        self.entries.get(&key).map_or(0, |e| e.version)
    }

    /// Applies `entry` unconditionally, as a protocol that relies on its own ordering does; an
    /// older version over a newer one is counted as a regression for the verifier.
    pub fn apply(&mut self, key: Key, entry: Versioned) {
        if key >= self.keys {
            return;
        }
        let slot = self.entries.entry(key).or_default();
        if entry.version < slot.version {
            self.regressions += 1;
        }
        self.applies += 1;
        *slot = entry;
    }

    /// Applies `entry` only if it is newer than the current one; returns whether it did.
    pub fn apply_if_newer(&mut self, key: Key, entry: Versioned) -> bool {
        if key >= self.keys || entry.version <= self.version(key) {
            return false;
        }
        self.applies += 1;
        self.entries.insert(key, entry);
        true
    }

    /// Times an older version replaced a newer one (must stay 0).
    pub fn regressions(&self) -> u64 {
        self.regressions
    }

    /// Entries applied so far.
    pub fn applies(&self) -> u64 {
        self.applies
    }

    /// The container with each entry's value replaced by `f` of it, its counts kept: what a
    /// node process reports to its coordinator (fingerprints in place of payloads).
    pub fn map_values(&self, f: impl Fn(&Value) -> Value) -> Self {
        DataContainer {
            entries: self
                .entries
                .iter()
                .map(|(&k, e)| {
                    let value = f(&e.value);
                    (k, Versioned { value, ..*e })
                })
                .collect(),
            ..*self
        }
    }

    /// The number of keys the container can hold.
    pub fn keys(&self) -> u32 {
        self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Value;

    #[test]
    fn regressions_are_counted_and_newer_only_skips_old() {
        let mut d = DataContainer::new(4);
        let e = |version| Versioned {
            version,
            value: Value::new(version * 10, 16),
        };
        d.apply(1, e(2));
        d.apply(1, e(1));
        assert_eq!(d.regressions(), 1);
        assert!(!d.apply_if_newer(2, Versioned::default()));
        assert!(d.apply_if_newer(2, e(3)));
        assert!(!d.apply_if_newer(2, e(3)));
        assert_eq!(d.get(2), e(3));
        assert_eq!(d.get(99), Versioned::default());
    }
}
