//! criterion bench: single-threaded `get_core` + close per strategy, 10 SolrCloud cores, Solr's
//! five logging-context puts per open. The uncontended cost of each strategy's hot path.
use bench_registry::{build_registry, verify_registry};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use critsec_core::kind::StrategyKind;
use critsec_core::registry::RegistryKind;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("registry/get_close_single_thread");
    for kind in RegistryKind::ALL {
        let (registry, names) = build_registry(*kind, 10, 5).expect("valid parameters");
        let mut next = 0;
        group.bench_function(BenchmarkId::from_parameter(kind), |b| {
            b.iter(|| {
                next = (next + 1) % names.len();
                let handle = registry
                    .get_core(black_box(&names[next]))
                    .expect("no error");
                let handle = handle.expect("loaded");
                assert_eq!(handle.name(), names[next], "got the wrong core");
                black_box(handle.id())
            })
        });
        // Opens == closes: every count is back at the registry's own reference.
        verify_registry(&*registry, names.len(), &[]).expect("verified");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
