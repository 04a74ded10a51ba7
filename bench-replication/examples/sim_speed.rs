//! One simulated iteration of each of the claims' slowest configurations, and of the key queue
//! on 1,000 nodes: wall seconds, events
//! and events per wall second. `cargo run -p bench-replication --release --example sim_speed
//! [name-filter] [duration_ms] [threads,...]` (also a short target for `valgrind
//! --tool=callgrind`); threads default to 1 and the machine's cores. The digest is an FNV-1a
//! hash of the whole report's `Debug` text: it is the same for every thread count, and a
//! speed-up that is pure engineering must leave it unchanged.
use std::time::Instant;

use bench_replication::sim_speed::{cases, scale_cases};
use critsec_replication::ProtocolKind;
use critsec_replication::sim::{SimConfig, simulate};

fn main() {
    let mut args = std::env::args().skip(1);
    let filter = args.next().unwrap_or_default();
    let duration_ms: Option<u64> = args
        .next()
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().expect("duration_ms"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = args.next().map_or_else(
        || if cores > 1 { vec![1, cores] } else { vec![1] },
        |t| t.split(',').map(|n| n.parse().expect("threads")).collect(),
    );
    for case in cases()
        .into_iter()
        .chain(scale_cases())
        .filter(|c| c.name.contains(&filter))
    {
        for &threads in &threads {
            let mut cfg = case.cfg.clone();
            cfg.threads = threads;
            if let Some(ms) = duration_ms {
                cfg.duration_us = ms * 1000;
            }
            run(case.name, case.protocol, cfg);
        }
    }
}

fn run(name: &str, protocol: ProtocolKind, cfg: SimConfig) {
    let threads = cfg.threads;
    let t = Instant::now();
    let r = simulate(protocol, cfg).expect("valid config");
    let wall = t.elapsed().as_secs_f64();
    println!(
        "{name} on {threads} thread(s): wall {wall:.2} s, {} events, {:.2} M events/s, {:.0} req/s/node, end {} ms, verify {}, digest {:016x}",
        r.events,
        r.events as f64 / wall / 1e6,
        r.req_per_s_per_node(),
        r.end_us / 1000,
        if r.verify.is_ok() { "ok" } else { "FAILED" },
        digest(&format!("{r:?}")),
    );
}

fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
