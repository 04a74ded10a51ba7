//! The barrier the simulation's worker threads meet at between windows of virtual time.
//!
//! A window of a 100-node run on 250 µs links is about half a millisecond of work, and a run has
//! thousands of them, so `std::sync::Barrier`'s sleep and wake-up (tens of µs each) would cost a
//! good part of what the second thread gains. Waiters spin briefly, then yield the core: the
//! simulation may share a 2-core machine with another run, and a waiter that kept its core would
//! starve the thread it waits for.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many times a waiter checks before yielding its core.
const SPINS: u32 = 2_000;

/// A reusable barrier for a fixed number of threads.
#[derive(Debug)]
pub struct WindowBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl WindowBarrier {
    /// A barrier for `threads` threads.
    pub fn new(threads: usize) -> Self {
        WindowBarrier {
            threads,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Waits until all threads have called `wait`; what each wrote before is visible to all
    /// after.
    pub fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// No thread passes the barrier of round `r` before every thread has done round `r`'s
    /// work.
    #[test]
    fn no_thread_passes_before_all_arrive() {
        const THREADS: usize = 3;
        const ROUNDS: u64 = 200;
        let barrier = WindowBarrier::new(THREADS);
        let done = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| {
                    for round in 0..ROUNDS {
                        done.fetch_add(1, Ordering::SeqCst);
                        barrier.wait();
                        let seen = done.load(Ordering::SeqCst);
                        assert!(
                            seen >= (round + 1) * THREADS as u64,
                            "round {round}: {seen}"
                        );
                        barrier.wait();
                    }
                });
            }
        });
        assert_eq!(done.load(Ordering::SeqCst), ROUNDS * THREADS as u64);
    }
}
