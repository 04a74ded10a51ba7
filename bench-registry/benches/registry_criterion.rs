//! criterion bench (placeholder until the registry system lands): one uncontended lock round trip of
//! `core::sync::Mutex`, the primitive every strategy of this system is built from.
use criterion::{Criterion, criterion_group, criterion_main};
use critsec_core::sync::Mutex;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let m = Mutex::new("bench.registry.placeholder", 0u64);
    c.bench_function("registry/sync_mutex_lock_unlock", |b| {
        b.iter(|| {
            let mut g = m.lock();
            *g += 1;
            black_box(*g)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
