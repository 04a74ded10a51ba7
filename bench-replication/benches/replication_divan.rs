//! divan bench (placeholder until the replication system lands): the same lock round trip, swept over threads.
use critsec_core::sync::Mutex;

fn main() {
    divan::main();
}

static LOCK: std::sync::LazyLock<Mutex<u64>> =
    std::sync::LazyLock::new(|| Mutex::new("bench.replication.placeholder_divan", 0));

#[divan::bench(threads = [1, 2])]
fn sync_mutex_lock_unlock() -> u64 {
    let mut g = LOCK.lock();
    *g += 1;
    *g
}
