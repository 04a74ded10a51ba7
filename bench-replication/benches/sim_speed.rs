//! divan bench of the simulator itself: one iteration (2 s of virtual time) of each of the
//! claims' two slowest configurations ([`bench_replication::sim_speed::cases`]) on one worker
//! thread and on two; the counter is simulated events, so divan reports events per wall second
//! beside the wall time. Each sample is a whole run (seconds), so the sample count is small:
//! `cargo bench -p bench-replication --bench sim_speed`.
use bench_replication::sim_speed::cases;
use critsec_replication::sim::simulate;
use divan::counter::ItemsCount;

fn main() {
    divan::main();
}

#[divan::bench(
    args = ["lock-forwarding-100x100", "key-queue-100x25"],
    consts = [1, 2],
    sample_count = 3,
    sample_size = 1
)]
fn simulate_2s<const THREADS: usize>(bencher: divan::Bencher, name: &str) {
    let mut case = cases()
        .into_iter()
        .find(|c| c.name == name)
        .expect("a named case");
    case.cfg.threads = THREADS;
    // The run is deterministic: one run outside the timing gives the event count.
    let events = simulate(case.protocol, case.cfg.clone())
        .expect("valid config")
        .events;
    bencher
        .counter(ItemsCount::new(events))
        .bench(|| simulate(case.protocol, case.cfg.clone()).expect("valid config"));
}
