//! divan bench: the `parser/parse` operation on 1 and 2 threads, per strategy on complex queries.
//! With `RUST_BACKTRACE=1` the backtracking strategy stops scaling (std's backtrace lock).
use std::backtrace::{Backtrace, BacktraceStatus};
use std::cell::{Cell, RefCell};
use std::sync::LazyLock;

use bench_parser::parse::{ParseTrial, strategies};
use critsec_harness::{Params, Worker, WorkerSource};

fn main() {
    divan::main();
}

/// The cases, `strategy/class`: every strategy of the scenario on complex, then medium queries.
static CASES: LazyLock<Vec<String>> = LazyLock::new(|| {
    ["complex", "medium"]
        .into_iter()
        .flat_map(|class| {
            strategies()
                .into_iter()
                .map(move |s| format!("{s}/{class}"))
        })
        .collect()
});

fn cases() -> Vec<String> {
    CASES.clone()
}

/// Verified trials, built once per case.
static TRIALS: LazyLock<Vec<ParseTrial>> = LazyLock::new(|| {
    let backtrace = if Backtrace::capture().status() == BacktraceStatus::Captured {
        "1"
    } else {
        "0"
    };
    CASES
        .iter()
        .map(|case| {
            let (strategy, class) = case.split_once('/').expect("strategy/class");
            let params = Params::from_pairs([
                ("strategy", strategy),
                ("class", class),
                ("backtrace", backtrace),
                ("subset", "auto"),
            ]);
            ParseTrial::new(&params).unwrap_or_else(|e| panic!("{params}: {e}"))
        })
        .collect()
});

/// Per-thread workers of the scenario (one per case, each with its own parser).
type Workers = Vec<Option<Box<dyn Worker>>>;

thread_local! {
    static OPS: Cell<u64> = const { Cell::new(0) };
    static WORKERS: RefCell<Workers> = const { RefCell::new(Vec::new()) };
}

#[divan::bench(args = cases(), threads = [1, 2])]
fn parse(bencher: divan::Bencher, case: &str) {
    let index = CASES.iter().position(|c| *c == case).expect("known case");
    let trial: &'static ParseTrial = &TRIALS[index];
    // One worker (and parser) per thread, as one per request handler would be; each op checks
    // the whole result, and every 1,024th op here asks the worker whether one differed.
    bencher.bench(|| {
        WORKERS.with_borrow_mut(|workers| {
            if workers.len() < CASES.len() {
                workers.resize_with(CASES.len(), || None);
            }
            let worker = workers[index].get_or_insert_with(|| trial.worker("op", 0));
            let got = worker.op();
            if OPS.replace(OPS.get() + 1) % 1024 == 1023 {
                worker.check().unwrap_or_else(|e| panic!("{case}: {e}"));
            }
            got
        })
    });
}
