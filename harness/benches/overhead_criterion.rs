//! criterion's figure for an empty closure, to set beside `critsec run harness/empty`
//! (our harness's per-operation overhead: one dyn call plus one phase load per operation).
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    c.bench_function("empty_closure", |b| b.iter(|| black_box(0u64)));
}

criterion_group!(benches, bench);
criterion_main!(benches);
