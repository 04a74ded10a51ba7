//! criterion bench: single-threaded `get_core` + close per strategy and logging-context model,
//! 10 SolrCloud cores, Solr's five puts per open (and, with log4j2, four removes per close). The
//! uncontended cost of one request; the JVM's on this machine is about 337 ns with log4j2.
use bench_registry::{RegistrySetup, SolrMode, build_registry, verify_registry};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use critsec_registry::{MdcKind, RegistryKind};
use critsec_sync::kind::StrategyKind;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("registry/get_close_single_thread");
    for (kind, mdc) in RegistryKind::ALL
        .iter()
        .flat_map(|k| MdcKind::ALL.iter().map(move |m| (*k, *m)))
    {
        let (registry, names) = build_registry(RegistrySetup {
            kind,
            cores: 10,
            mode: SolrMode::Cloud,
            mdc,
            mdc_puts: None,
        })
        .expect("valid parameters");
        let mut next = 0;
        group.bench_function(BenchmarkId::new(kind.id(), mdc), |b| {
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
