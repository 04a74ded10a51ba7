//! A driver for counting, with callgrind, what lock statistics add while a lock is held.
//!
//! Two threads each take one `sync::Mutex` `ITERATIONS` times and run `critical_section` under
//! it. Run it with statistics on and off and compare the instruction counts of the functions
//! that run while the lock is held:
//!
//! ```text
//! cargo build --release -p critsec-sync --example lock_stats_callgrind
//! valgrind --tool=callgrind --callgrind-out-file=on.out  target/release/examples/lock_stats_callgrind on
//! valgrind --tool=callgrind --callgrind-out-file=off.out target/release/examples/lock_stats_callgrind off
//! callgrind_annotate on.out | grep -E 'critical_section|lock_contended|record_wait|PROGRAM'
//! ```
//!
//! It prints the contended acquisitions it saw (with statistics on), so the comparison is known
//! to include contended acquisitions, the only ones statistics touch.

use critsec_sync::{Mutex, lock_stats, set_lock_stats_enabled};
use std::hint::black_box;
use std::sync::Arc;

const ITERATIONS: u64 = 200_000;

/// The work done while the lock is held.
#[inline(never)]
fn critical_section(v: &mut u64) {
    for i in 0..8 {
        *v = black_box(v.wrapping_mul(31).wrapping_add(i));
    }
}

fn main() {
    let on = match std::env::args().nth(1).as_deref() {
        Some("on") => true,
        Some("off") => false,
        _ => {
            eprintln!("usage: lock_stats_callgrind on|off");
            std::process::exit(2);
        }
    };
    set_lock_stats_enabled(on);
    let m = Arc::new(Mutex::new("callgrind.driver", 0u64));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                for _ in 0..ITERATIONS {
                    critical_section(&mut m.lock());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("driver thread");
    }
    let contended = lock_stats()
        .into_iter()
        .find(|s| s.name == "callgrind.driver")
        .map_or(0, |s| s.contended);
    println!(
        "stats {}: {contended} contended acquisitions recorded",
        if on { "on" } else { "off" }
    );
}
