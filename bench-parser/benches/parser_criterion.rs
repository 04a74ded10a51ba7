//! criterion bench: one verified parse per iteration, per query class and strategy (the
//! `parser/parse` scenario's own worker operation: parse, compare the whole result, drop).
//! `RUST_BACKTRACE` is whatever the process started with; run it twice (`RUST_BACKTRACE=0` and
//! `=1`) to see the JDWP effect.
use std::backtrace::{Backtrace, BacktraceStatus};

use bench_parser::corpus::Class;
use bench_parser::parse::ParseTrial;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use critsec_harness::{Choice, Params, WorkerSource};

fn bench(c: &mut Criterion) {
    let backtrace = if Backtrace::capture().status() == BacktraceStatus::Captured {
        "1"
    } else {
        "0"
    };
    for &class in Class::ALL {
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
            let mut worker = trial.worker("op", 0);
            group.bench_function(format!("{strategy}/{subset}"), |b| b.iter(|| worker.op()));
            worker.check().unwrap_or_else(|e| panic!("{params}: {e}"));
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
