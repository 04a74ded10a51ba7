//! Instructions per parse for callgrind: `N` single-threaded operations of the `parser/parse`
//! scenario on one strategy, class and subset, either the scenario's own operation (`checked`:
//! parse, whole-result check, drop) or parse and drop only (`bare`), to show what the check costs.
//! Run twice with different `N` (multiples of the class's query count, so every query weighs the
//! same) and divide the difference of the totals by the difference of `N` to cancel set-up:
//!
//! ```text
//! cargo build --release -p bench-parser --example parse_cost
//! valgrind --tool=callgrind target/release/examples/parse_cost predictive complex shared checked 3000
//! valgrind --tool=callgrind target/release/examples/parse_cost predictive complex shared checked 6000
//! ```

use std::hint::black_box;

use bench_parser::parse::ParseTrial;
use critsec_harness::{Params, WorkerSource};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (strategy, class, subset, checked, n) = match args.as_slice() {
        [s, c, sub, mode, n] if matches!(mode.as_str(), "checked" | "bare") => {
            match n.parse::<usize>() {
                Ok(n) => (s, c, sub, mode == "checked", n),
                Err(_) => usage(),
            }
        }
        _ => usage(),
    };
    let params = Params::from_pairs([
        ("strategy", strategy.as_str()),
        ("class", class.as_str()),
        ("backtrace", "0"),
        ("subset", subset.as_str()),
    ]);
    let trial = ParseTrial::new(&params).unwrap_or_else(|e| {
        eprintln!("{params}: {e}");
        std::process::exit(2)
    });
    if checked {
        let mut worker = trial.worker("op", 0);
        for _ in 0..n {
            black_box(worker.op());
        }
        worker.check().expect("every parse as verified");
        return;
    }
    let entries = trial.entries();
    match trial.parser() {
        Some(parser) => {
            for i in 0..n {
                drop(black_box(
                    parser.parse(black_box(entries[i % entries.len()].query)),
                ));
            }
        }
        None => {
            for i in 0..n {
                let query = black_box(entries[i % entries.len()].query);
                drop(black_box(tantivy_query_grammar::parse_query(query)));
            }
        }
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: parse_cost <backtracking|predictive|tantivy> <class> <auto|all|shared> <checked|bare> <ops>"
    );
    std::process::exit(2)
}
