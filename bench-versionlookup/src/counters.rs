//! Per-worker counters and the probe that turns them into per-operation secondary metrics.
//!
//! Each worker owns one cache-padded slot and stores its running totals there with `Relaxed`
//! stores after every operation: no other thread writes the slot, and the probe only needs
//! values that are complete once the window has closed and every worker has reported (the
//! harness joins or parks the workers before `Probe::read`, which orders the stores before it).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use critsec_harness::{LockWaitProbe, LockWaits, Metric, Probe, Window};
use critsec_sync::{lock_stats, reset_lock_stats};
use critsec_versionlookup::LookupStats;
use crossbeam_utils::CachePadded;

/// Indexes into a slot.
#[derive(Debug, Clone, Copy)]
pub enum Counter {
    /// Concurrent-map gets.
    MapGets = 0,
    /// Thread-local gets.
    ThreadLocalGets,
    /// Term-dictionary seeks.
    TermSeeks,
    /// Segments skipped by a filter.
    SegmentsSkipped,
    /// Nanoseconds spent in sampled version lookups.
    SampledLookupNs,
    /// Sampled version lookups.
    SampledLookups,
    /// Operations done (for the verify step).
    Ops,
    /// New ids created (for the verify step).
    NewIds,
}

const COUNTERS: usize = 8;

/// One slot per worker thread.
pub struct Slots {
    slots: Vec<CachePadded<[AtomicU64; COUNTERS]>>,
}

impl Slots {
    /// `n` zeroed slots.
    pub fn new(n: usize) -> Self {
        Slots {
            slots: (0..n.max(1))
                .map(|_| CachePadded::new(Default::default()))
                .collect(),
        }
    }

    /// Publishes worker `slot`'s running value of `c`.
    #[inline]
    pub fn store(&self, slot: usize, c: Counter, value: u64) {
        self.slots[slot % self.slots.len()][c as usize].store(value, Ordering::Relaxed);
    }

    /// The current value of `c` in `slot`: a re-created worker continues from it, so totals
    /// never go backwards.
    pub fn load(&self, slot: usize, c: Counter) -> u64 {
        self.slots[slot % self.slots.len()][c as usize].load(Ordering::Relaxed)
    }

    /// A worker's lookup totals as last published in `slot`.
    pub fn load_stats(&self, slot: usize) -> LookupStats {
        LookupStats {
            map_gets: self.load(slot, Counter::MapGets),
            thread_local_gets: self.load(slot, Counter::ThreadLocalGets),
            term_seeks: self.load(slot, Counter::TermSeeks),
            segments_skipped: self.load(slot, Counter::SegmentsSkipped),
            ..LookupStats::default()
        }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Never true: there is always at least one slot.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Publishes a worker's running lookup totals.
    #[inline]
    pub fn store_stats(&self, slot: usize, s: &LookupStats) {
        self.store(slot, Counter::MapGets, s.map_gets);
        self.store(slot, Counter::ThreadLocalGets, s.thread_local_gets);
        self.store(slot, Counter::TermSeeks, s.term_seeks);
        self.store(slot, Counter::SegmentsSkipped, s.segments_skipped);
    }

    /// The sum of `c` over all workers.
    pub fn sum(&self, c: Counter) -> u64 {
        self.slots
            .iter()
            .map(|s| s[c as usize].load(Ordering::Relaxed))
            .sum()
    }

    fn sums(&self) -> [u64; COUNTERS] {
        std::array::from_fn(|i| {
            self.slots
                .iter()
                .map(|s| s[i].load(Ordering::Relaxed))
                .sum()
        })
    }
}

/// Reports per-operation counts (and, for the index scenario, timings and the segment count).
pub struct CountersProbe {
    slots: Arc<Slots>,
    baseline: std::sync::Mutex<[u64; COUNTERS]>,
    threads: usize,
    unit: &'static str,
    extra: Box<dyn Fn() -> Vec<Metric> + Send + Sync>,
    timings: bool,
    locks: LockWaitProbe,
}

impl CountersProbe {
    /// A probe over `slots`; `unit` names the operation (`lookup` or `doc`).
    pub fn new(
        slots: Arc<Slots>,
        threads: usize,
        unit: &'static str,
        timings: bool,
        extra: Box<dyn Fn() -> Vec<Metric> + Send + Sync>,
    ) -> Self {
        CountersProbe {
            slots,
            baseline: std::sync::Mutex::new([0; COUNTERS]),
            threads,
            unit,
            extra,
            timings,
            locks: LockWaitProbe::new("versionlookup.", reset_lock_stats, || {
                lock_stats()
                    .into_iter()
                    .map(|s| LockWaits::new(s.name, s.contended, s.wait_ns))
                    .collect()
            }),
        }
    }
}

impl Probe for CountersProbe {
    fn reset(&self) {
        self.locks.reset();
        if let Ok(mut b) = self.baseline.lock() {
            *b = self.slots.sums();
        }
    }

    fn read(&self, window: Window) -> Vec<Metric> {
        let base = self.baseline.lock().map(|b| *b).unwrap_or([0; COUNTERS]);
        let now = self.slots.sums();
        let d = |c: Counter| now[c as usize].saturating_sub(base[c as usize]) as f64;
        let ops = window.ops.max(1) as f64;
        let per = |c: Counter| d(c) / ops;
        let unit = format!("1/{}", self.unit);
        let mut out = vec![
            Metric::new(
                format!("map_gets_per_{}", self.unit),
                per(Counter::MapGets),
                &unit,
            )
            .lower_is_better(),
            Metric::new(
                format!("thread_local_gets_per_{}", self.unit),
                per(Counter::ThreadLocalGets),
                &unit,
            )
            .lower_is_better(),
            Metric::new(
                format!("gets_per_{}", self.unit),
                per(Counter::MapGets) + per(Counter::ThreadLocalGets),
                &unit,
            )
            .lower_is_better(),
            Metric::new(
                format!("term_seeks_per_{}", self.unit),
                per(Counter::TermSeeks),
                &unit,
            )
            .lower_is_better(),
            Metric::new(
                format!("segments_skipped_per_{}", self.unit),
                per(Counter::SegmentsSkipped),
                &unit,
            ),
        ];
        if self.timings {
            let sampled = d(Counter::SampledLookups).max(1.0);
            let ns_unit = format!("ns/{}", self.unit);
            out.push(
                Metric::new(
                    format!("lookup_ns_per_{}", self.unit),
                    d(Counter::SampledLookupNs) / sampled,
                    &ns_unit,
                )
                .lower_is_better(),
            );
            out.push(
                Metric::new(
                    format!("total_ns_per_{}", self.unit),
                    window.nanos as f64 * self.threads as f64 / ops,
                    &ns_unit,
                )
                .lower_is_better(),
            );
        }
        out.extend(self.locks.read(window));
        out.extend((self.extra)());
        out
    }
}
