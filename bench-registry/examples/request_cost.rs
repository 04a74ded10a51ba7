//! Instructions per request for callgrind: `N` single-threaded get_core + close of 10 SolrCloud
//! cores (5 puts, 4 removes) on strategy and logging-context model given on the command line.
//! Run twice with different `N` and divide the difference of the totals by the difference of `N`
//! to cancel set-up:
//!
//! ```text
//! cargo build --release -p bench-registry --example request_cost
//! valgrind --tool=callgrind target/release/examples/request_cost mutex log4j2 10000
//! valgrind --tool=callgrind target/release/examples/request_cost mutex log4j2 20000
//! ```

use bench_registry::{RegistrySetup, SolrMode, build_registry};
use critsec_registry::{MdcKind, RegistryKind};
use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [kind, mdc, n] => kind
            .parse::<RegistryKind>()
            .ok()
            .zip(mdc.parse::<MdcKind>().ok())
            .zip(n.parse::<usize>().ok()),
        _ => None,
    };
    let Some(((kind, mdc), n)) = parsed else {
        eprintln!("usage: request_cost <strategy> <cheap|log4j2> <requests>");
        std::process::exit(2);
    };
    let (registry, names) = build_registry(RegistrySetup {
        kind,
        cores: 10,
        mode: SolrMode::Cloud,
        mdc,
        mdc_puts: None,
    })
    .expect("valid set-up");
    for i in 0..n {
        let h = registry
            .get_core(&names[i % names.len()])
            .expect("no error")
            .expect("loaded");
        black_box(h.id());
    }
}
