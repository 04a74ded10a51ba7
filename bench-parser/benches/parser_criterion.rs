//! criterion bench: one verified parse per iteration, per query class and strategy (the same
//! operation as the `parser/parse` scenario). `RUST_BACKTRACE` is whatever the process started with;
//! run it twice (`RUST_BACKTRACE=0` and `=1`) to see the JDWP effect.
use std::backtrace::{Backtrace, BacktraceStatus};
use std::hint::black_box;

use bench_parser::corpus::Class;
use bench_parser::parse::{ParseTrial, parse_fingerprint};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use critsec_harness::Params;

fn bench(c: &mut Criterion) {
    let backtrace = if Backtrace::capture().status() == BacktraceStatus::Captured {
        "1"
    } else {
        "0"
    };
    for class in Class::ALL {
        let mut group =
            c.benchmark_group(format!("parser/parse/{}/backtrace={backtrace}", class.id()));
        group.throughput(Throughput::Elements(1));
        for (strategy, subset) in [
            ("backtracking", "all"),
            ("predictive", "all"),
            ("predictive", "shared"),
            ("tantivy", "shared"),
        ] {
            let params = Params::from_pairs([
                ("strategy", strategy),
                ("class", class.id()),
                ("backtrace", backtrace),
                ("subset", subset),
            ]);
            let trial = ParseTrial::new(&params).unwrap_or_else(|e| panic!("{params}: {e}"));
            let parser = trial.parser();
            let (entries, expected) = (trial.entries(), trial.expected());
            let mut i = 0;
            let mut mismatches = 0u64;
            group.bench_function(format!("{strategy}/{subset}"), |b| {
                b.iter(|| {
                    let got = parse_fingerprint(parser.as_deref(), black_box(entries[i].query));
                    mismatches += u64::from(got != expected[i]);
                    i = (i + 1) % entries.len();
                    got
                })
            });
            assert_eq!(
                mismatches, 0,
                "{params}: parses differed from the verified result"
            );
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
