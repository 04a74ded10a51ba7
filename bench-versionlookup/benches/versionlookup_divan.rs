//! divan bench: misses at 30 segments per strategy, swept over threads (shared engine, each
//! thread with its own lookup states).
use bench_versionlookup::setup::{LookupIndex, Pattern};
use critsec_versionlookup::{CacheKind, LookupStats};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

fn main() {
    divan::main();
}

struct Prepared {
    index: LookupIndex,
    probes: Vec<(Vec<u8>, u64)>,
}

fn prepare(kind: CacheKind) -> Prepared {
    let index = LookupIndex::build(kind, 30, 2000).expect("index builds");
    let probes = index.probes(Pattern::Miss, 1024);
    Prepared { index, probes }
}

static PER_SEGMENT: LazyLock<Prepared> = LazyLock::new(|| prepare(CacheKind::PerSegment));
static PER_READER: LazyLock<Prepared> = LazyLock::new(|| prepare(CacheKind::PerReader));
static PRUNED: LazyLock<Prepared> = LazyLock::new(|| prepare(CacheKind::Pruned));
static NEXT: AtomicUsize = AtomicUsize::new(0);

fn one(p: &Prepared) -> u64 {
    // Relaxed: the counter only spreads threads over the probe list.
    let i = NEXT.fetch_add(1, Ordering::Relaxed);
    let (uid, expected) = &p.probes[i % p.probes.len()];
    let mut stats = LookupStats::default();
    let got = p
        .index
        .engine
        .lookup_in_reader(uid, &mut stats)
        .expect("lookup");
    let v = got.map_or(0, |d| d.version);
    assert_eq!(v, *expected);
    v
}

#[divan::bench(threads = [1, 2])]
fn miss_30_segments_per_segment(b: divan::Bencher) {
    let p = &*PER_SEGMENT;
    b.bench(|| one(p));
}

#[divan::bench(threads = [1, 2])]
fn miss_30_segments_per_reader(b: divan::Bencher) {
    let p = &*PER_READER;
    b.bench(|| one(p));
}

#[divan::bench(threads = [1, 2])]
fn miss_30_segments_pruned(b: divan::Bencher) {
    let p = &*PRUNED;
    b.bench(|| one(p));
}
