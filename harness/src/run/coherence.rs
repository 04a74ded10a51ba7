//! How long a contended cache line takes to go from one CPU to another and back, sampled over
//! time: the price every lock, CAS loop and shared counter of a multi-threaded benchmark pays.
//!
//! On a VM that price is set by where the host runs the two virtual CPUs, which the guest can
//! neither see nor pin. On the 2-core VM of METHODOLOGY.md (*Cache-line distance between the
//! CPUs*) it switched between about 60 ns and about 320 ns, in phases of one to several seconds,
//! and a two-thread contended registry benchmark switched speed with it, pinned or not. So a
//! multi-threaded claim's slices are drawn from two machines, and its ratio may differ between
//! them; `critsec doctor --coherence` shows whether a machine does this.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::affinity::pin_this_thread;

/// The line, alone on its cache line (and the adjacent-line prefetcher's pair).
#[repr(align(128))]
struct Line(AtomicU64);

/// Round trips timed between two clock reads: enough to make the clock's cost negligible.
const BATCH: u64 = 1_000;

/// Ping-pongs one cache line between a thread pinned to `cpus[0]` and one pinned to `cpus[1]`
/// for `samples` consecutive periods of `each`, and returns each period's mean round trip in
/// ns (the line's trip there and back). Both threads are its own, so the caller's affinity is
/// untouched.
pub fn round_trips(cpus: [usize; 2], samples: usize, each: Duration) -> io::Result<Vec<f64>> {
    if cpus[0] == cpus[1] {
        // Two spinning threads on one CPU would time the scheduler's slices, not the line.
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a round trip needs two CPUs, not CPU {} twice", cpus[0]),
        ));
    }
    let line = Line(AtomicU64::new(0));
    let (stop, partner_gone) = (AtomicBool::new(false), AtomicBool::new(false));
    std::thread::scope(|s| {
        // The partner answers every odd value with the next even one.
        let partner = std::thread::Builder::new()
            .name("coherence-pong".into())
            .spawn_scoped(s, || -> io::Result<()> {
                if let Err(e) = pin_this_thread(cpus[1]) {
                    partner_gone.store(true, Ordering::Relaxed);
                    return Err(e);
                }
                let mut expect = 1;
                while !stop.load(Ordering::Relaxed) {
                    if line.0.load(Ordering::Acquire) == expect {
                        line.0.store(expect + 1, Ordering::Release);
                        expect += 2;
                    } else {
                        std::hint::spin_loop();
                    }
                }
                Ok(())
            })?;
        let ping = std::thread::Builder::new()
            .name("coherence-ping".into())
            .spawn_scoped(s, || -> io::Result<Vec<f64>> {
                pin_this_thread(cpus[0])?;
                let mut out = Vec::with_capacity(samples);
                let mut value = 0;
                for _ in 0..samples {
                    let start = Instant::now();
                    let mut trips = 0;
                    while start.elapsed() < each {
                        for _ in 0..BATCH {
                            line.0.store(value + 1, Ordering::Release);
                            while line.0.load(Ordering::Acquire) != value + 2 {
                                if partner_gone.load(Ordering::Relaxed) {
                                    return Err(io::Error::other("the coherence partner stopped"));
                                }
                                std::hint::spin_loop();
                            }
                            value += 2;
                        }
                        trips += BATCH;
                    }
                    out.push(start.elapsed().as_nanos() as f64 / trips as f64);
                }
                Ok(out)
            });
        let pinged = match ping {
            Ok(ping) => ping
                .join()
                .map_err(|_| io::Error::other("the coherence ping thread panicked"))?,
            Err(e) => Err(e),
        };
        stop.store(true, Ordering::Relaxed);
        partner
            .join()
            .map_err(|_| io::Error::other("the coherence partner thread panicked"))??;
        pinged
    })
}

/// A series of round trips read as levels: whether it sits at one level or switches between a
/// fast and a slow one, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    /// Median round trip (ns) of the fast samples.
    pub fast_ns: f64,
    /// Median round trip (ns) of the slow samples; `None` when the series has one level.
    pub slow_ns: Option<f64>,
    /// Share of the samples at the slow level.
    pub slow_share: f64,
    /// Times the series moved from one level to the other.
    pub switches: usize,
    /// Where the levels divide (ns): a sample above it is slow. `None` with one level.
    pub cut_ns: Option<f64>,
}

/// A round trip longer than this is no cache line's (a handover between sockets takes well under
/// a µs): one of the two CPUs was taken by something else for most of the sample.
pub const TAKEN_NS: f64 = 1_000.0;

/// Two samples are at different levels when one is more than this many times the other: the
/// fast level's own jitter (55-115 ns on the VM of METHODOLOGY.md) stays within it.
const LEVEL_FACTOR: f64 = 2.5;

/// Splits `series` (round trips in ns) at the geometric mean of its 5th and 95th percentiles if
/// those lie more than [`LEVEL_FACTOR`] apart, else reads it as one level. A sample alone at a
/// level between two neighbours at the other (a clock interrupt, a migration) counts as its
/// neighbours' level, so that switches are phases, not blips.
pub fn levels(series: &[f64]) -> Option<Levels> {
    if series.is_empty() {
        return None;
    }
    let mut sorted = series.to_vec();
    sorted.sort_by(f64::total_cmp);
    let quantile = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (low, high) = (quantile(0.05), quantile(0.95));
    if high < low * LEVEL_FACTOR {
        return Some(Levels {
            fast_ns: median(&mut sorted),
            slow_ns: None,
            slow_share: 0.0,
            switches: 0,
            cut_ns: None,
        });
    }
    let cut = (low * high).sqrt();
    let mut slow: Vec<bool> = series.iter().map(|&x| x > cut).collect();
    for i in 1..slow.len().saturating_sub(1) {
        if slow[i - 1] == slow[i + 1] && slow[i] != slow[i - 1] {
            slow[i] = slow[i - 1];
        }
    }
    let (mut fast_v, mut slow_v): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for (&x, &s) in series.iter().zip(&slow) {
        if s { &mut slow_v } else { &mut fast_v }.push(x);
    }
    let switches = slow.windows(2).filter(|w| w[0] != w[1]).count();
    Some(Levels {
        fast_ns: if fast_v.is_empty() {
            low
        } else {
            median(&mut fast_v)
        },
        slow_ns: (!slow_v.is_empty()).then(|| median(&mut slow_v)),
        slow_share: slow_v.len() as f64 / series.len() as f64,
        switches,
        cut_ns: Some(cut),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_series_is_one_level() {
        let series = [60.0, 75.0, 58.0, 110.0, 70.0, 66.0, 80.0];
        let l = levels(&series).unwrap();
        assert_eq!(l.slow_ns, None);
        assert_eq!((l.switches, l.slow_share), (0, 0.0));
        assert_eq!(l.fast_ns, 70.0);
    }

    #[test]
    fn two_phases_are_two_levels_and_a_blip_is_not_a_switch() {
        // Fast, slow, fast again: two switches; the lone 330 inside the last fast phase is a
        // blip, the lone 60 inside the slow phase too.
        let mut series = vec![60.0; 10];
        series.extend([320.0, 330.0, 60.0, 325.0, 318.0, 322.0]);
        series.extend([55.0, 58.0, 330.0, 57.0, 59.0, 61.0]);
        let l = levels(&series).unwrap();
        assert_eq!(l.switches, 2, "{l:?}");
        assert_eq!(l.slow_ns, Some(322.0));
        assert_eq!(l.fast_ns, 60.0);
        assert!((l.slow_share - 6.0 / 22.0).abs() < 1e-12, "{l:?}");
        let cut = l.cut_ns.unwrap();
        assert!(cut > 61.0 && cut < 318.0, "{l:?}");
    }

    #[test]
    fn nothing_to_read_in_an_empty_series() {
        assert_eq!(levels(&[]), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_round_trip_is_measured_per_sample() {
        let cpus = super::super::affinity::allowed_cpus();
        let pair = [cpus[0], *cpus.last().unwrap()];
        if pair[0] == pair[1] {
            assert!(round_trips(pair, 1, Duration::from_millis(1)).is_err());
            return;
        }
        let series = round_trips(pair, 3, Duration::from_millis(2)).unwrap();
        assert_eq!(series.len(), 3);
        assert!(
            series.iter().all(|&ns| ns > 0.0 && ns.is_finite()),
            "{series:?}"
        );
    }
}
