//! Maps keyed by core name, in insertion order like Solr's `LinkedHashMap`, with the cheap hash
//! the lookup inside the registry's critical section uses.

use indexmap::IndexMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a over the name's bytes. Core names are short and chosen by the operator, so a tiny
/// non-keyed hash is enough, and it keeps the lookup inside the critical section close to Java's
/// `String.hashCode` rather than paying SipHash's setup on every request.
#[derive(Default, Clone, Copy)]
pub(crate) struct NameHasher(u64);

impl Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// A map keyed by core name, in insertion order like Solr's `LinkedHashMap`.
pub(crate) type NameMap<V> = IndexMap<Box<str>, V, BuildHasherDefault<NameHasher>>;
