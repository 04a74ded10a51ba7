//! criterion bench: one version lookup per strategy and segment count, through the real
//! tantivy term dictionaries (a miss visits every segment; a hit in the oldest segment too).
use bench_versionlookup::setup::{LookupIndex, Pattern};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use critsec_sync::kind::StrategyKind;
use critsec_versionlookup::{CacheKind, LookupStats};
use std::hint::black_box;

const PER_SEGMENT: u64 = 2000;

fn bench(c: &mut Criterion) {
    for pattern in [Pattern::Miss, Pattern::HitOld] {
        let mut group = c.benchmark_group(format!("versionlookup/lookup/{pattern:?}"));
        for segments in [1u64, 10, 30] {
            for &kind in CacheKind::ALL {
                let index = LookupIndex::build(kind, segments, PER_SEGMENT).expect("index builds");
                let probes = index.probes(pattern, 1024);
                let mut stats = LookupStats::default();
                let mut i = 0usize;
                group.bench_function(BenchmarkId::new(kind.id(), segments), |b| {
                    b.iter(|| {
                        let (uid, expected) = &probes[i % probes.len()];
                        i += 1;
                        let got = index
                            .engine
                            .lookup_in_reader(uid, &mut stats)
                            .expect("lookup");
                        assert_eq!(got.map_or(0, |d| d.version), *expected);
                        black_box(got)
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
