//! divan bench: `get_core` + close of a pseudo-random core per strategy, swept over thread counts,
//! 10 SolrCloud cores with Solr's five log4j2 logging-context puts per open (the micro-benchmark with
//! realistic work inside the critical section).
use bench_registry::{RegistrySetup, SolrMode, build_registry, verify_registry};
use critsec_registry::{MdcKind, RegistryKind};
use critsec_sync::kind::StrategyKind;
use divan::Bencher;
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};

fn main() {
    divan::main();
}

const CORES: usize = 10;

/// Hands each thread a distinct odd seed.
static SEED: AtomicU32 = AtomicU32::new(0x9e37_79b9);

thread_local! {
    /// Per-thread xorshift state, so choosing a core touches no shared cache line.
    static RNG: Cell<u32> = Cell::new(SEED.fetch_add(0x6d2b_79f5, Ordering::Relaxed) | 1);
}

fn next_index() -> usize {
    RNG.with(|r| {
        let mut x = r.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        r.set(x);
        x as usize % CORES
    })
}

#[divan::bench(args = RegistryKind::ALL, threads = [1, 2, 4, 8])]
fn get_close(bencher: Bencher, kind: RegistryKind) {
    let (registry, names) = build_registry(RegistrySetup {
        kind,
        cores: CORES,
        mode: SolrMode::Cloud,
        mdc: MdcKind::Log4j2,
        mdc_puts: None,
    })
    .expect("valid parameters");
    bencher.bench(|| {
        let name = &names[next_index()];
        let handle = registry.get_core(name).expect("no error").expect("loaded");
        assert_eq!(handle.name(), name, "got the wrong core");
        black_box(handle.id())
    });
    // Opens == closes: every count is back at the registry's own reference.
    verify_registry(&*registry, names.len(), &[]).expect("verified");
}
