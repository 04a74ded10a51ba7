//! Small allocation-light containers the state machines use on every event: a generation-checked
//! slab (request ids that go stale when their request completes) and a hasher for integer keys.
//! No upstream counterpart: the JDK's collections serve there.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A slab whose ids carry a generation, so a late reply to a finished request finds nothing.
///
/// Id layout: `generation << 32 | index`. Freed slots are reused LIFO.
#[derive(Debug)]
pub struct Slab<T> {
    slots: Vec<(u32, Option<T>)>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value` and returns its id.
    pub fn insert(&mut self, value: T) -> u64 {
        self.len += 1;
        if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.0 = slot.0.wrapping_add(1);
            slot.1 = Some(value);
            ((slot.0 as u64) << 32) | i as u64
        } else {
            self.slots.push((0, Some(value)));
            (self.slots.len() - 1) as u64
        }
    }

    fn locate(&self, id: u64) -> Option<usize> {
        let i = (id & 0xFFFF_FFFF) as usize;
        match self.slots.get(i) {
            Some((generation, Some(_))) if *generation == (id >> 32) as u32 => Some(i),
            _ => None,
        }
    }

    /// The value under `id`, if it is still live.
    pub fn get(&self, id: u64) -> Option<&T> {
        self.locate(id).and_then(|i| self.slots[i].1.as_ref())
    }

    /// The value under `id` mutably, if it is still live.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        self.locate(id).and_then(|i| self.slots[i].1.as_mut())
    }

    /// Removes and returns the value under `id`, if it is still live.
    pub fn remove(&mut self, id: u64) -> Option<T> {
        let i = self.locate(id)?;
        self.free.push(i as u32);
        self.len -= 1;
        self.slots[i].1.take()
    }

    /// The ids of the live values, in slot order.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, (_, v))| v.is_some())
            .map(|(i, (generation, _))| ((*generation as u64) << 32) | i as u64)
    }

    /// The number of live values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value is live.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A multiply-shift hasher for the integer keys of the lock table (SipHash costs more than the
/// protocol step it would serve; the keys are not attacker-controlled).
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517C_C1B7_2722_0A95);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

/// A `HashMap` keyed by integers, hashed with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_ids_find_nothing_after_reuse() {
        let mut s = Slab::default();
        let a = s.insert("a");
        assert_eq!(s.remove(a), Some("a"));
        let b = s.insert("b");
        assert_ne!(a, b);
        assert_eq!(s.get(a), None);
        assert_eq!(s.get(b), Some(&"b"));
        assert_eq!(s.len(), 1);
    }
}
