//! `Mdc`: the per-thread logging context that `SolrCore.open()` fills in, with its call depth.
//!
//! Two models, chosen per registry by [`MdcKind`]:
//! - [`MdcKind::Log4j2`] (`log4j2`), what Solr runs: `MDCLoggingContext` over log4j2's
//!   `CopyOnWriteSortedArrayThreadContextMap` (module `mdc_log4j2`). Every put and every remove
//!   allocates a new sorted map; the depth is a `ThreadLocal<Integer>`, boxed.
//! - [`MdcKind::Cheap`] (`cheap`), below: a garbage-free map that never allocates after warm-up,
//!   the lower bound of what the context could cost.
//!
//! The cheap model: a thread-local call depth plus a thread-local map. `set_core` bumps the depth and,
//! only when it was 0, puts the node, core, collection, shard and replica names; `clear` lowers
//! the depth and, once it is back at 1 or less, removes the per-core keys: a fixed set (every key
//! but the node name), whichever core is closing, since with a non-LIFO close order the last core
//! to close need not be the one whose open put the keys. In Solr this runs inside
//! `SolrCores.modifyLock` on every request, which is why its size matters: the number of puts per
//! open is a registry parameter ([`super::RegistryConfig::mdc_puts`]).
//!
//! The map keeps its slots and string buffers once a key has been seen, so after warm-up a put is
//! a short scan plus a `memcpy`, like log4j2's garbage-free map, and never allocates.

use critsec_sync::primitive::thread_local;
use std::cell::RefCell;

/// The key of the node-name entry, which `clear` leaves in place (Solr sets it once per thread).
pub const NODE_KEY: &str = "node_name";

/// Every key an open may put: Solr's five, then padding keys for larger contexts.
pub const MDC_KEYS: [&str; 21] = [
    NODE_KEY,
    "core",
    "collection",
    "shard",
    "replica",
    "extra0",
    "extra1",
    "extra2",
    "extra3",
    "extra4",
    "extra5",
    "extra6",
    "extra7",
    "extra8",
    "extra9",
    "extra10",
    "extra11",
    "extra12",
    "extra13",
    "extra14",
    "extra15",
];

/// The largest number of puts per open the model supports.
pub const MAX_MDC_PUTS: usize = MDC_KEYS.len();

/// The key-value pairs one core puts into the context when it is opened at depth 0.
pub type MdcEntries = Box<[(&'static str, Box<str>)]>;

struct Slot {
    key: &'static str,
    value: String,
    present: bool,
}

#[derive(Default)]
struct Context {
    depth: u32,
    slots: Vec<Slot>,
}

impl Context {
    fn put(&mut self, key: &'static str, value: &str) {
        match self.slots.iter_mut().find(|s| s.key == key) {
            Some(slot) => {
                slot.value.clear();
                slot.value.push_str(value);
                slot.present = true;
            }
            None => self.slots.push(Slot {
                key,
                value: value.to_string(),
                present: true,
            }),
        }
    }

    /// Removes every key but the node name, in one pass over the slots.
    fn remove_per_core_keys(&mut self) {
        for slot in self.slots.iter_mut().filter(|s| s.key != NODE_KEY) {
            slot.present = false;
        }
    }
}

thread_local! {
    static CONTEXT: RefCell<Context> = RefCell::new(Context::default());
}

/// Which logging-context model a registry's cores use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MdcKind {
    /// The garbage-free map: no allocation after warm-up.
    #[default]
    Cheap,
    /// Solr's `MDCLoggingContext` over log4j2's copy-on-write `ThreadContext` map.
    Log4j2,
}

impl critsec_sync::kind::StrategyKind for MdcKind {
    const ALL: &'static [Self] = &[MdcKind::Cheap, MdcKind::Log4j2];

    fn id(self) -> &'static str {
        match self {
            MdcKind::Cheap => "cheap",
            MdcKind::Log4j2 => "log4j2",
        }
    }
}

critsec_sync::strategy_kind_text!(MdcKind);

/// The calling thread's logging context (all functions act on the current thread only).
pub struct Mdc;

impl Mdc {
    /// `MDCLoggingContext.setCore` in the model `kind`.
    #[inline]
    pub fn set_core_with(kind: MdcKind, entries: &[(&'static str, Box<str>)]) {
        match kind {
            MdcKind::Cheap => Mdc::set_core(entries),
            MdcKind::Log4j2 => super::mdc_log4j2::set_core(entries),
        }
    }

    /// `MDCLoggingContext.clear` in the model `kind`.
    #[inline]
    pub fn clear_with(kind: MdcKind) {
        match kind {
            MdcKind::Cheap => Mdc::clear(),
            MdcKind::Log4j2 => super::mdc_log4j2::clear(),
        }
    }

    /// The call depth of model `kind`.
    pub fn depth_of(kind: MdcKind) -> u32 {
        match kind {
            MdcKind::Cheap => Mdc::depth(),
            MdcKind::Log4j2 => super::mdc_log4j2::depth(),
        }
    }

    /// Empties the calling thread's context in both models (depth 0, no keys): for a benchmark
    /// thread that deliberately never closed, before it runs anything else.
    pub fn reset_thread() {
        CONTEXT.with(|c| *c.borrow_mut() = Context::default());
        super::mdc_log4j2::reset_thread();
    }

    /// The current call depth, whichever model the thread used: every caller of the registry
    /// checks balance with this, and a thread uses one model at a time.
    pub fn any_depth() -> u32 {
        Mdc::depth().max(super::mdc_log4j2::depth())
    }

    /// Objects (maps and strings) the log4j2 model has allocated on the calling thread so far,
    /// each one pointer bump in the thread's young generation.
    pub fn log4j2_objects() -> u64 {
        super::mdc_log4j2::objects_allocated()
    }

    /// The value under `key` in model `kind` (log4j2's values carry Solr's prefixes, `x:`...).
    pub fn get_of(kind: MdcKind, key: &str) -> Option<String> {
        match kind {
            MdcKind::Cheap => Mdc::get(key),
            MdcKind::Log4j2 => super::mdc_log4j2::get(key),
        }
    }

    /// `MDCLoggingContext.setCore`, cheap model: one level deeper; at depth 0 also put every entry.
    pub fn set_core(entries: &[(&'static str, Box<str>)]) {
        CONTEXT.with(|c| {
            let mut c = c.borrow_mut();
            let depth = c.depth;
            c.depth = depth + 1;
            if depth == 0 {
                for (key, value) in entries {
                    c.put(key, value);
                }
            }
        });
    }

    /// `MDCLoggingContext.clear`, cheap model: one level up; at depth 1 or less also remove the per-core keys,
    /// all of them, not only those of the core being closed.
    ///
    /// Deviation: Solr's fixed set is collection, core, replica and shard; ours is every key but
    /// [`NODE_KEY`], which adds the padding keys that stand for a larger per-core context.
    pub fn clear() {
        CONTEXT.with(|c| {
            let mut c = c.borrow_mut();
            if c.depth <= 1 {
                c.depth = 0;
                c.remove_per_core_keys();
            } else {
                c.depth -= 1;
            }
        });
    }

    /// The current call depth.
    pub fn depth() -> u32 {
        CONTEXT.with(|c| c.borrow().depth)
    }

    /// The value under `key`, if present.
    pub fn get(key: &str) -> Option<String> {
        CONTEXT.with(|c| {
            c.borrow()
                .slots
                .iter()
                .find(|s| s.key == key && s.present)
                .map(|s| s.value.clone())
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn entries(core: &str) -> MdcEntries {
        vec![
            (NODE_KEY, "node1".into()),
            ("core", core.into()),
            ("shard", "shard1".into()),
        ]
        .into_boxed_slice()
    }

    #[test]
    fn only_the_outermost_open_puts_and_only_the_last_clear_removes() {
        let (a, b) = (entries("a"), entries("b"));
        Mdc::set_core(&a);
        Mdc::set_core(&b);
        assert_eq!(Mdc::depth(), 2);
        assert_eq!(
            Mdc::get("core").as_deref(),
            Some("a"),
            "a nested open keeps the outer core"
        );
        Mdc::clear();
        assert_eq!(Mdc::get("core").as_deref(), Some("a"));
        Mdc::clear();
        assert_eq!(Mdc::depth(), 0);
        assert_eq!(Mdc::get("core"), None);
        assert_eq!(
            Mdc::get(NODE_KEY).as_deref(),
            Some("node1"),
            "the node name stays"
        );
        // An unbalanced clear at depth 0 stays at 0, as in Solr.
        Mdc::clear();
        assert_eq!(Mdc::depth(), 0);
    }
}
