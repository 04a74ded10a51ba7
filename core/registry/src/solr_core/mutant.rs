//! Deliberately broken reference counts for [`Core`], compiled only under `cfg(loom)`, so that
//! the loom models of `core/registry/tests/loom_registry.rs` can show they catch a broken
//! protocol. A mutant is chosen per core, before any thread starts, with
//! [`Core::break_ref_count`]; every core is correct unless a model breaks it.

use super::Core;
use crate::Mdc;
use critsec_sync::primitive::Ordering;

/// How a core's reference count is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RefCountMutant {
    /// The protocol as written.
    None = 0,
    /// `try_open` checks the count and then increments it in two steps (Solr's unconditional
    /// `open()` after a look): a close between them takes the count to 0, and the increment
    /// revives the closed core.
    CheckThenIncrement = 1,
    /// `close` reads the count and writes it back one lower in two steps: two closes at once
    /// lose one decrement, so the core never closes (or closes twice).
    LostDecrement = 2,
}

impl Core {
    /// Breaks this core's reference count as `mutant` says (before the model's threads start:
    /// the choice is a plain atomic, invisible to loom).
    pub fn break_ref_count(&self, mutant: RefCountMutant) {
        self.mutant
            .store(mutant as u8, std::sync::atomic::Ordering::Relaxed);
    }

    fn mutant(&self) -> u8 {
        self.mutant.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `try_open` under [`RefCountMutant::CheckThenIncrement`]; `None` runs the real one.
    pub(super) fn mutant_try_open(&self) -> Option<bool> {
        if self.mutant() != RefCountMutant::CheckThenIncrement as u8 {
            return None;
        }
        if self.ref_count.load(Ordering::Acquire) <= 0 {
            return Some(false);
        }
        self.ref_count.fetch_add(1, Ordering::Relaxed);
        Mdc::set_core_with(self.mdc_kind, &self.mdc);
        Some(true)
    }

    /// The decrement of `close`, broken under [`RefCountMutant::LostDecrement`]; returns the
    /// count before it, as `fetch_sub` does.
    pub(super) fn mutant_decrement(&self) -> i64 {
        if self.mutant() != RefCountMutant::LostDecrement as u8 {
            return self.ref_count.fetch_sub(1, Ordering::Release);
        }
        let prev = self.ref_count.load(Ordering::Acquire);
        self.ref_count.store(prev - 1, Ordering::Release);
        prev
    }
}
