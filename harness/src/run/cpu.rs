//! Process CPU time, for the CPU-utilisation secondary metric (the Solr claim is about it).

use std::time::Duration;

/// User plus system CPU time consumed so far by all threads of this process.
pub fn process_cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut u) != 0 {
            return Duration::ZERO;
        }
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_advances_with_work() {
        let before = super::process_cpu_time();
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        std::hint::black_box(x);
        assert!(super::process_cpu_time() > before);
    }
}
