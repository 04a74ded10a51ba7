//! criterion bench: single-threaded `get_core` + close per strategy, 10 SolrCloud cores, Solr's
//! five logging-context puts per open. The uncontended cost of each strategy's hot path.
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use critsec_core::registry::{CoreDescriptor, RegistryConfig, STRATEGIES, new_registry};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("registry/get_close_single_thread");
    let names: Vec<String> = (0..10).map(|i| format!("core{i}")).collect();
    for strategy in STRATEGIES {
        let registry = new_registry(strategy, RegistryConfig::default()).expect("known strategy");
        for (i, name) in names.iter().enumerate() {
            let d =
                CoreDescriptor::cloud(name, "collection1", format!("shard{i}"), format!("n{i}"));
            registry.create(d).expect("create");
        }
        let mut next = 0;
        group.bench_function(BenchmarkId::from_parameter(strategy), |b| {
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
        for name in &names {
            let core = registry
                .get_loaded_core_without_increment(name)
                .expect("loaded");
            assert_eq!(core.ref_count(), 1, "{strategy}: opens != closes on {name}");
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
