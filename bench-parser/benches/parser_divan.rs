//! divan bench: the `parser/parse` operation on 1 and 2 threads, per strategy on complex queries.
//! With `RUST_BACKTRACE=1` the backtracking strategy stops scaling (std's backtrace lock).
use std::backtrace::{Backtrace, BacktraceStatus};
use std::cell::{Cell, RefCell};
use std::sync::LazyLock;

use bench_parser::parse::{ParseTrial, parse_fingerprint, strategies};
use critsec_core::parser::QueryParser;
use critsec_harness::Params;

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

/// Per-thread parsers (one per case, `None` inside for tantivy) and the next query index.
type Parsers = Vec<Option<Option<Box<dyn QueryParser>>>>;

thread_local! {
    static NEXT: Cell<usize> = const { Cell::new(0) };
    static PARSERS: RefCell<Parsers> = const { RefCell::new(Vec::new()) };
}

#[divan::bench(args = cases(), threads = [1, 2])]
fn parse(bencher: divan::Bencher, case: &str) {
    let index = CASES.iter().position(|c| *c == case).expect("known case");
    let trial = &TRIALS[index];
    // One parser per thread, as one per request handler would be.
    bencher.bench(|| {
        let i = NEXT.with(|n| {
            let i = n.get() % trial.entries().len();
            n.set(i + 1);
            i
        });
        let got = PARSERS.with_borrow_mut(|parsers| {
            if parsers.len() < CASES.len() {
                parsers.resize_with(CASES.len(), || None);
            }
            let parser = parsers[index].get_or_insert_with(|| trial.parser());
            parse_fingerprint(parser.as_deref(), trial.entries()[i].query)
        });
        assert_eq!(
            got,
            trial.expected()[i],
            "{case}: parse differed from the verified result"
        );
        got
    });
}
