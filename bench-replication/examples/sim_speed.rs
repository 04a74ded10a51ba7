//! One simulated iteration of each of the claims' slowest configurations: wall seconds, events
//! and events per wall second. `cargo run -p bench-replication --release --example sim_speed
//! [name-filter] [duration_ms]` (also a short target for `valgrind --tool=callgrind`). The
//! digest is an FNV-1a hash of the whole report's `Debug` text: a speed-up that is pure
//! engineering must leave it unchanged.
use std::time::Instant;

use bench_replication::sim_speed::cases;
use critsec_replication::driver::sim::simulate;

fn main() {
    let mut args = std::env::args().skip(1);
    let filter = args.next().unwrap_or_default();
    let duration_ms: Option<u64> = args.next().map(|d| d.parse().expect("duration_ms"));
    for case in cases().into_iter().filter(|c| c.name.contains(&filter)) {
        let mut cfg = case.cfg;
        if let Some(ms) = duration_ms {
            cfg.duration_us = ms * 1000;
        }
        let t = Instant::now();
        let r = simulate(case.protocol, cfg).expect("valid config");
        let wall = t.elapsed().as_secs_f64();
        println!(
            "{}: wall {wall:.2} s, {} events, {:.2} M events/s, {:.0} req/s/node, end {} ms, verify {}, digest {:016x}",
            case.name,
            r.events,
            r.events as f64 / wall / 1e6,
            r.req_per_s_per_node(),
            r.end_us / 1000,
            if r.verify.is_ok() { "ok" } else { "FAILED" },
            digest(&format!("{r:?}")),
        );
    }
}

fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
