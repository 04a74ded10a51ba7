//! A deliberate data race, so that `.ci/tsan` can show ThreadSanitizer sees races in its build
//! (the checker checked): two threads add to one plain counter without a lock. The test is
//! ignored everywhere else, since the race is undefined behaviour by design; `.ci/tsan` runs it
//! alone and fails unless TSan reports it.

use std::cell::UnsafeCell;

struct Unsynchronised(UnsafeCell<u64>);

// SAFETY: none; sharing the cell without a lock is the race this canary exists to show.
unsafe impl Sync for Unsynchronised {}

impl Unsynchronised {
    fn add_one(&self) {
        // SAFETY: none (see the type): an unsynchronised read-modify-write, on purpose.
        unsafe { *self.0.get() += 1 }
    }
}

#[test]
#[ignore = "a deliberate data race: run only by .ci/tsan, which expects ThreadSanitizer to report it"]
fn a_plain_counter_written_by_two_threads() {
    let counter = Unsynchronised(UnsafeCell::new(0));
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| counter.add_one());
        }
    });
}
