//! Allocations per request of the log4j2 logging context: objects in its young generation, and
//! calls to the process allocator, counted by a counting global allocator (in its own test
//! binary, so no other test pays for it).
//!
//! In the JVM one SolrCloud request (5 puts on open, 4 removes on close) creates 9 maps and 5
//! strings, each a pointer bump in the thread's allocation buffer. The model must create the same
//! objects, one per object: not fewer (a put or remove that reused a map would no longer be
//! copy-on-write), not more (a map or string built in two steps would bump twice where the JVM
//! bumps once); and, like the JVM, it must not call the process allocator for them. The
//! allocator count is the difference between the log4j2 and the cheap context on the same
//! strategy, so what the strategy itself allocates (the JDK lock's `HoldCounter`) cancels.
#![cfg(not(loom))]

use critsec_registry::{CoreDescriptor, Mdc, MdcKind, RegistryConfig, RegistryKind};
use critsec_sync::kind::StrategyKind;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Allocations made on this thread while counting.
    static COUNT: Cell<Option<u64>> = const { Cell::new(None) };
}

struct Counting;

// SAFETY: every call is forwarded to `System` unchanged; the counter is a const-initialised
// thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get().map(|n| n + 1)));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    COUNT.with(|c| c.set(Some(0)));
    f();
    COUNT.with(|c| c.replace(None)).expect("counting")
}

/// Process allocations and young-generation objects of one steady-state request (get_core +
/// close) on a registry of `kind`.
fn per_request(
    kind: RegistryKind,
    mdc: MdcKind,
    descriptor: &CoreDescriptor,
    node: bool,
) -> (u64, u64) {
    let cloud = descriptor.cloud.is_some();
    let puts = RegistryConfig::solr_mdc_puts(node, cloud);
    let mut config = RegistryConfig::new(node.then(|| "node1:8983_solr".into()), puts).unwrap();
    config.mdc = mdc;
    let registry = kind.build(config);
    registry.create(descriptor.clone()).unwrap();
    let request = || drop(registry.get_core(&descriptor.name).unwrap().unwrap());
    // Warm-up: the thread-locals' first use and anything a first request sets up.
    request();
    let measured = || {
        let before = Mdc::log4j2_objects();
        let n = allocations(request);
        (n, Mdc::log4j2_objects() - before)
    };
    let n = measured();
    assert_eq!(measured(), n, "{kind}/{mdc}: not steady");
    n
}

/// Per strategy: (process allocations log4j2 makes beyond the cheap context, log4j2's objects).
fn log4j2_extra(descriptor: CoreDescriptor, node: bool) -> Vec<(RegistryKind, u64, u64)> {
    RegistryKind::ALL
        .iter()
        .map(|&kind| {
            let (log4j2, objects) = per_request(kind, MdcKind::Log4j2, &descriptor, node);
            let (cheap, none) = per_request(kind, MdcKind::Cheap, &descriptor, node);
            assert_eq!(none, 0, "{kind}: the cheap context made log4j2 objects");
            (kind, log4j2 - cheap, objects)
        })
        .collect()
}

#[test]
fn each_map_and_each_string_is_one_object_and_no_call_to_the_allocator() {
    // SolrCloud: 5 puts (5 strings, 5 maps) and 4 removes (4 maps).
    let cloud = CoreDescriptor::cloud("c1", "coll", "shard1", "core_node1");
    for (kind, extra, objects) in log4j2_extra(cloud, true) {
        assert_eq!((extra, objects), (0, 14), "{kind}: cloud request");
    }
    // Standalone: 1 put (1 string, 1 map) and 4 removes (4 maps).
    for (kind, extra, objects) in log4j2_extra(CoreDescriptor::new("c1"), false) {
        assert_eq!((extra, objects), (0, 6), "{kind}: standalone request");
    }
}
