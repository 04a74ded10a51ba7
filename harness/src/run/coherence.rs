//! How long a contended cache line takes to go from one CPU to another and back, sampled over
//! time: the price every lock, CAS loop and shared counter of a multi-threaded benchmark pays.
//!
//! On a VM that price is set by where the host runs the two virtual CPUs, which the guest can
//! neither see nor pin. On the 2-core VM of METHODOLOGY.md (*Cache-line distance between the
//! CPUs*) it moved between about 28, 66 and 320 ns, in phases of one to several seconds, and a
//! two-thread contended registry benchmark changed speed with it, pinned or not. So a
//! multi-threaded claim's slices are drawn from several machines, and its ratio may differ
//! between them; `critsec doctor --coherence` shows whether a machine does this.

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
pub fn cache_line_round_trips(
    cpus: [usize; 2],
    samples: usize,
    each: Duration,
) -> io::Result<Vec<f64>> {
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

/// A series of round trips read as levels: the modes the host moved the two CPUs between, and
/// how often it moved them.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    /// The levels, fastest first.
    pub levels: Vec<Level>,
    /// Where consecutive levels divide (ns): the geometric mean of their medians.
    pub cuts: Vec<f64>,
    /// Times the series moved from one level to another (a lone sample between two at another
    /// level is a blip, not a move).
    pub switches: usize,
    /// Samples above [`TAKEN_NS`]: a CPU taken by other work, which is no level.
    pub taken: usize,
}

/// One level of a series of round trips.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// The median round trip of its samples, in ns.
    pub median_ns: f64,
    /// Its samples.
    pub samples: usize,
}

impl Levels {
    /// The level (its index) a round trip of `ns` belongs to.
    pub fn of(&self, ns: f64) -> usize {
        level_below(&self.cuts, ns)
    }

    /// Share of the samples that are not taken at level `index`.
    pub fn share(&self, index: usize) -> f64 {
        let all: usize = self.levels.iter().map(|l| l.samples).sum();
        self.levels[index].samples as f64 / all.max(1) as f64
    }
}

/// The index of the level below `cuts` that a round trip of `ns` falls in.
fn level_below(cuts: &[f64], ns: f64) -> usize {
    cuts.iter().filter(|&&cut| ns > cut).count()
}

/// A round trip longer than this is no cache line's (a handover between sockets takes well under
/// a µs): one of the two CPUs was taken by something else for most of the sample.
pub const TAKEN_NS: f64 = 1_000.0;

/// Two levels' medians lie at least this many times apart: on the VM of METHODOLOGY.md the
/// levels were about 28, 66 and 320 ns (two hyperthreads of one core, two cores, and farther),
/// and the 66 ns level's own jitter (55-115 ns) stays within it.
const LEVEL_FACTOR: f64 = 2.0;

/// A gap between consecutive sorted samples wider than this factor may divide two levels.
const GAP_FACTOR: f64 = 1.3;

/// Reads `series` (round trips in ns, in time order) as levels: the sorted samples are divided
/// at every gap wider than [`GAP_FACTOR`]; then a group too small to be a level (fewer than 3
/// samples, or 2% of them) joins its nearer neighbour, and neighbours whose medians lie less
/// than [`LEVEL_FACTOR`] apart join each other, smaller into larger. Samples above [`TAKEN_NS`]
/// are counted, not levelled. `None` when no sample is a level's.
pub fn coherence_levels(series: &[f64]) -> Option<Levels> {
    let mut sorted: Vec<f64> = series
        .iter()
        .copied()
        .filter(|&ns| ns <= TAKEN_NS)
        .collect();
    let taken = series.len() - sorted.len();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    // Groups of the sorted samples, as index ranges.
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = 0;
    for i in 1..=sorted.len() {
        if i == sorted.len() || sorted[i] > sorted[i - 1] * GAP_FACTOR {
            groups.push(start..i);
            start = i;
        }
    }
    let median = |g: &std::ops::Range<usize>| sorted[g.start + g.len() / 2];
    let smallest = 3.max(sorted.len() / 50);
    loop {
        // The smallest group that is too small, or the smaller of the closest pair of
        // neighbours that are too close; it joins the neighbour nearer to it.
        let too_small = (0..groups.len())
            .filter(|&i| groups[i].len() < smallest && groups.len() > 1)
            .min_by_key(|&i| groups[i].len());
        let too_close = (1..groups.len())
            .filter(|&i| median(&groups[i]) < median(&groups[i - 1]) * LEVEL_FACTOR)
            .min_by(|&a, &b| {
                let ratio = |i: usize| median(&groups[i]) / median(&groups[i - 1]);
                ratio(a).total_cmp(&ratio(b))
            })
            .map(|i| {
                if groups[i].len() < groups[i - 1].len() {
                    i
                } else {
                    i - 1
                }
            });
        let Some(i) = too_small.or(too_close) else {
            break;
        };
        let gap_below = (i > 0).then(|| sorted[groups[i].start] / sorted[groups[i - 1].end - 1]);
        let gap_above =
            (i + 1 < groups.len()).then(|| sorted[groups[i + 1].start] / sorted[groups[i].end - 1]);
        let into_below = match (gap_below, gap_above) {
            (Some(below), Some(above)) => below <= above,
            (below, _) => below.is_some(),
        };
        let g = groups.remove(i);
        if into_below {
            groups[i - 1].end = g.end;
        } else {
            groups[i].start = g.start;
        }
    }
    // The cuts between the groups' medians decide where a sample belongs, so a straggler that
    // joined a group by its gap is counted, and the medians taken, by the cuts.
    let cuts: Vec<f64> = groups
        .windows(2)
        .map(|w| (median(&w[0]) * median(&w[1])).sqrt())
        .collect();
    let mut members = vec![Vec::new(); groups.len()];
    for &ns in &sorted {
        members[level_below(&cuts, ns)].push(ns);
    }
    let levels: Vec<Level> = members
        .iter()
        .map(|m| Level {
            median_ns: m[m.len() / 2],
            samples: m.len(),
        })
        .collect();
    let mut read = Levels {
        levels,
        cuts,
        switches: 0,
        taken,
    };
    let mut at: Vec<usize> = series
        .iter()
        .filter(|&&ns| ns <= TAKEN_NS)
        .map(|&ns| read.of(ns))
        .collect();
    for i in 1..at.len().saturating_sub(1) {
        if at[i - 1] == at[i + 1] && at[i] != at[i - 1] {
            at[i] = at[i - 1];
        }
    }
    read.switches = at.windows(2).filter(|w| w[0] != w[1]).count();
    Some(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_series_is_one_level() {
        let series = [60.0, 75.0, 58.0, 110.0, 70.0, 66.0, 80.0];
        let l = coherence_levels(&series).unwrap();
        assert_eq!(l.levels.len(), 1, "{l:?}");
        assert_eq!((l.switches, l.taken), (0, 0));
        assert_eq!(l.levels[0].median_ns, 70.0);
    }

    #[test]
    fn phases_are_levels_and_a_blip_is_not_a_switch() {
        // Near, far, near again: two switches; the lone 330 inside the last near phase is a
        // blip, the lone 60 inside the far phase too.
        let mut series = vec![60.0; 10];
        series.extend([320.0, 330.0, 60.0, 325.0, 318.0, 322.0]);
        series.extend([55.0, 58.0, 330.0, 57.0, 59.0, 61.0]);
        let l = coherence_levels(&series).unwrap();
        assert_eq!(l.switches, 2, "{l:?}");
        assert_eq!(l.levels.len(), 2);
        assert_eq!(
            (l.levels[0].median_ns, l.levels[1].median_ns),
            (60.0, 325.0)
        );
        assert!((l.share(1) - 6.0 / 22.0).abs() < 1e-12, "{l:?}");
        assert!(l.cuts[0] > 61.0 && l.cuts[0] < 318.0, "{l:?}");
        assert_eq!((l.of(61.0), l.of(318.0)), (0, 1));
    }

    #[test]
    fn three_levels_are_three_and_stragglers_join_the_nearer() {
        // The VM's hyperthreads (28 ns), cores (66, jittering to 113) and far (320), with a
        // lone 185 on the way between, and two taken samples.
        let mut series = vec![28.0, 29.0, 27.0, 30.0, 28.0];
        series.extend([64.0, 66.0, 70.0, 91.0, 113.0, 62.0, 67.0, 185.0]);
        series.extend([310.0, 325.0, 320.0, 442.0, 318.0, 6_000.0, 4_500.0]);
        let l = coherence_levels(&series).unwrap();
        let medians: Vec<f64> = l.levels.iter().map(|l| l.median_ns).collect();
        assert_eq!(medians, [28.0, 67.0, 320.0], "{l:?}");
        assert_eq!(
            l.levels.iter().map(|l| l.samples).collect::<Vec<_>>(),
            [5, 7, 6]
        );
        assert_eq!(l.taken, 2);
        assert_eq!((l.of(113.0), l.of(185.0), l.of(30.0)), (1, 2, 0));
        // Every sample taken: no level.
        assert_eq!(coherence_levels(&[6_000.0, 2_000.0]), None);
    }

    #[test]
    fn nothing_to_read_in_an_empty_series() {
        assert_eq!(coherence_levels(&[]), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_round_trip_is_measured_per_sample() {
        let cpus = super::super::affinity::allowed_cpus();
        let pair = [cpus[0], *cpus.last().unwrap()];
        if pair[0] == pair[1] {
            assert!(cache_line_round_trips(pair, 1, Duration::from_millis(1)).is_err());
            return;
        }
        let series = cache_line_round_trips(pair, 3, Duration::from_millis(2)).unwrap();
        assert_eq!(series.len(), 3);
        assert!(
            series.iter().all(|&ns| ns > 0.0 && ns.is_finite()),
            "{series:?}"
        );
    }
}
