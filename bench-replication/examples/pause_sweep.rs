//! The pause sensitivity of the 25-requester claims as a finding: lock timeouts and
//! requests per node per second over the length of a once-a-second stop-the-world pause (0, 2,
//! 5, 10, 20 ms) and requesters per node (25, 100), for lock forwarding and the key queue, on the
//! claims' cloud-zone cluster (100 nodes, 250 µs links, the CPU model, primary-first gets, 2 s
//! windows). Prints CSV: `cargo run -p bench-replication --release --example pause_sweep
//! [seeds]` (default 1 seed, 42). The report plots the same sweep (with 500 ms windows) from the
//! publication run `replication-pause-sweep` in `results/publication.toml`. A second argument
//! lists cluster sizes (`pause_sweep 1 100,200`; default 100); the simulation runs on the
//! machine's cores (the figures are the same on any number).
use bench_replication::sim_speed::claim_config;
use critsec_replication::sim::simulate;
use critsec_replication::{GetPlanChoice, ProtocolKind};

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("seeds"))
        .unwrap_or(1);
    let sizes: Vec<usize> = std::env::args().nth(2).map_or(vec![100], |s| {
        s.split(',').map(|n| n.parse().expect("nodes")).collect()
    });
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "nodes,protocol,requesters,pause_ms,seed,lock_timeouts,requests,req_per_s_node,verified"
    );
    for &nodes in &sizes {
        for protocol in [ProtocolKind::LockForwarding, ProtocolKind::KeyQueue] {
            for requesters in [25, 100] {
                for pause_ms in [0, 2, 5, 10, 20] {
                    for seed in 42..42 + seeds {
                        let mut cfg = claim_config(requesters, 250, 50, pause_ms * 1000);
                        cfg.cluster.nodes = nodes;
                        cfg.cluster.get_plan = GetPlanChoice::PrimaryFirst;
                        cfg.seed = seed;
                        cfg.threads = threads;
                        let r = simulate(protocol, cfg).expect("valid config");
                        let q = &r.requesters;
                        println!(
                            "{nodes},{protocol},{requesters},{pause_ms},{seed},{},{},{:.0},{}",
                            r.stats.lock_timeouts,
                            q.ended(),
                            r.req_per_s_per_node(),
                            r.verify.is_ok()
                        );
                    }
                }
            }
        }
    }
}
