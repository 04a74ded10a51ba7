//! Synchronized iterations: the protocol between the coordinating thread and the workers.
//!
//! Workers live for a whole trial and idle between iterations, so a paired run can leave one
//! side's threads parked while the other side measures. One iteration `k` goes through these
//! phases, published in one atomic word (`iteration << 8 | phase`):
//!
//! | phase | workers do | coordinator waits for |
//! |---|---|---|
//! | `Idle` | park until `Warm(k')` with `k' > k` | — |
//! | `Warm(k)` | run operations, count nothing (JMH ramp-up) | every worker to have arrived |
//! | `Measure(k)` | count each operation that *completes* while the phase is `Measure(k)` | the iteration time to elapse, and one operation to complete |
//! | `Drain(k)` | finish the current operation, publish counts, report | every worker to have reported |
//! | `Exit` | return | — |
//!
//! So the window opens only once every thread runs, and an operation counts only if its
//! completion is observed inside the window (JMH's `-si true`). A window closes only after some
//! operation completed in it: a short slice that one long operation covers (a refresh that
//! blocks every indexing thread) would otherwise hold no completion and no throughput to take a
//! logarithm of. JMH's iteration likewise ends only when each thread's operation in flight does;
//! here the window is lengthened to the first completion and its true length is the one divided
//! by, so the score stays completions per second of window. Workers read the phase after every
//! operation with `Acquire`, pairing with the coordinator's `Release` stores; a worker that sees
//! `Drain(k)` publishes its slot before incrementing `reported` (`Release`), which the
//! coordinator reads with `Acquire` before reading the slots.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::run::scenario::Worker;

/// A phase of the iteration protocol (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Between iterations.
    Idle,
    /// Ramp-up: operations run but are not counted.
    Warm,
    /// The measured window.
    Measure,
    /// Ramp-down: workers report.
    Drain,
    /// End of the trial.
    Exit,
}

impl Phase {
    fn code(self) -> u64 {
        self as u64
    }
    fn from_code(c: u64) -> Phase {
        match c {
            0 => Phase::Idle,
            1 => Phase::Warm,
            2 => Phase::Measure,
            3 => Phase::Drain,
            _ => Phase::Exit,
        }
    }
}

/// What one worker reports for one iteration.
#[derive(Debug, Default)]
pub struct Report {
    /// Operations completed inside the window.
    pub ops: u64,
    /// Latencies of those operations (sample mode only), in nanoseconds.
    pub histogram: Option<Histogram<u64>>,
    /// The worker's own check after the iteration.
    pub check: Option<String>,
    /// The message of the worker's panic, if its thread panicked (then `ops` is 0).
    pub panic: Option<String>,
}

/// A worker's mailbox for its per-iteration report.
#[derive(Debug, Default)]
pub struct Slot {
    report: Mutex<Report>,
}

impl Slot {
    /// Takes the last published report.
    pub fn take(&self) -> Report {
        std::mem::take(&mut *self.report.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The shared control word plus the arrival and report counters.
#[derive(Debug, Default)]
pub struct Control {
    state: AtomicU64,
    arrived: AtomicUsize,
    reported: AtomicUsize,
    /// Workers that have counted an operation in the current window.
    completed: AtomicUsize,
    idle: Mutex<()>,
    wake: Condvar,
}

impl Control {
    /// A control in `Idle(0)`.
    pub fn new() -> Self {
        Self::default()
    }

    fn load(&self) -> (u64, Phase) {
        let s = self.state.load(Ordering::Acquire);
        (s >> 8, Phase::from_code(s & 0xff))
    }

    fn set(&self, iteration: u64, phase: Phase) {
        // Taking the idle mutex around the store closes the lost-wake-up window with workers
        // that check the state and then wait on the condvar.
        let _g = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        self.state
            .store(iteration << 8 | phase.code(), Ordering::Release);
        self.wake.notify_all();
    }

    /// Starts iteration `k`: resets the counters and releases the workers into ramp-up.
    pub fn start(&self, k: u64) {
        self.arrived.store(0, Ordering::Relaxed);
        self.reported.store(0, Ordering::Relaxed);
        self.completed.store(0, Ordering::Relaxed);
        self.set(k, Phase::Warm);
    }

    /// Opens the measured window of iteration `k`.
    pub fn open_window(&self, k: u64) {
        self.set(k, Phase::Measure);
    }

    /// Closes the window of iteration `k`; workers report as they notice.
    pub fn close_window(&self, k: u64) {
        self.set(k, Phase::Drain);
    }

    /// Returns to idle after every worker reported iteration `k`.
    pub fn finish(&self, k: u64) {
        self.set(k, Phase::Idle);
    }

    /// Tells the workers to return.
    pub fn exit(&self) {
        self.set(u64::MAX >> 8, Phase::Exit);
    }

    /// Waits until `n` workers have arrived in the ramp-up of the current iteration.
    pub fn wait_arrived(&self, n: usize) {
        spin_until(|| self.arrived.load(Ordering::Acquire) >= n);
    }

    /// Waits until some worker has counted an operation in the open window, or has reported
    /// (a worker reports inside the window only when it panicked: then no completion may come).
    pub fn wait_first_completion(&self) {
        spin_until(|| {
            self.completed.load(Ordering::Acquire) > 0 || self.reported.load(Ordering::Acquire) > 0
        });
    }

    /// Waits until `n` workers have reported the current iteration.
    pub fn wait_reported(&self, n: usize) {
        spin_until(|| self.reported.load(Ordering::Acquire) >= n);
    }

    /// Parks a worker until an iteration after `last` starts; `None` means exit.
    fn wait_for_start(&self, last: u64) -> Option<u64> {
        let mut g = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let (k, phase) = self.load();
            match phase {
                Phase::Exit => return None,
                Phase::Warm | Phase::Measure if k > last => return Some(k),
                _ => g = self.wake.wait(g).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

/// Sleeps in short steps until `done` holds; coordinator-side only, so latency here does not
/// touch the measured operations.
fn spin_until(mut done: impl FnMut() -> bool) {
    let mut backoff = 0u32;
    while !done() {
        if backoff < 64 {
            std::hint::spin_loop();
            backoff += 1;
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// The body of one measuring thread for a whole trial.
///
/// A panic in an operation or a check ends this worker's part but not the protocol: the worker
/// reports the panic for the iteration it happened in and for every later one (see
/// [`report_panic`]), so the coordinator's counts complete and the iteration fails with the
/// message instead of waiting for the dead thread forever (JMH's failing `BenchmarkTask` releases
/// its iteration latches the same way). One `catch_unwind` per iteration: nothing per operation.
pub fn worker_loop(control: &Control, slot: &Slot, worker: &mut dyn Worker, sample: bool) {
    let mut last = 0;
    while let Some(k) = control.wait_for_start(last) {
        last = k;
        control.arrived.fetch_add(1, Ordering::AcqRel);
        let measured = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut histogram = sample.then(new_histogram);
            let ops = if let Some(h) = histogram.as_mut() {
                run_iteration_sampled(control, k, worker, h)
            } else {
                run_iteration(control, k, worker)
            };
            let check = worker.check().err().map(|e| e.0);
            Report {
                ops,
                histogram,
                check,
                panic: None,
            }
        }));
        match measured {
            Ok(report) => publish(control, slot, report),
            Err(payload) => {
                let message = panic_message(&*payload);
                publish(control, slot, Report::panicked(&message));
                return report_panic(control, slot, k, &message);
            }
        }
    }
}

/// The part of a worker whose thread panicked (in an operation, a check, or while the worker was
/// built) after iteration `last`: it arrives in every later iteration and reports the panic at
/// once, until the trial exits.
pub fn report_panic(control: &Control, slot: &Slot, mut last: u64, message: &str) {
    while let Some(k) = control.wait_for_start(last) {
        last = k;
        control.arrived.fetch_add(1, Ordering::AcqRel);
        publish(control, slot, Report::panicked(message));
    }
}

fn publish(control: &Control, slot: &Slot, report: Report) {
    *slot.report.lock().unwrap_or_else(|e| e.into_inner()) = report;
    control.reported.fetch_add(1, Ordering::Release);
}

impl Report {
    fn panicked(message: &str) -> Report {
        Report {
            panic: Some(message.to_string()),
            ..Report::default()
        }
    }
}

/// The message a panic was started with (`panic!("...")`), or a placeholder for other payloads.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// A latency histogram from 1 ns to 100 s at 3 significant digits (IspnPerfTest uses 3 too).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("static histogram bounds are valid")
}

#[inline]
fn in_window(control: &Control, k: u64) -> Option<bool> {
    match control.load() {
        (_, Phase::Warm) => Some(false),
        (i, Phase::Measure) if i == k => Some(true),
        _ => None,
    }
}

/// One more operation counted; the first of the window tells the coordinator it may close it.
#[inline]
fn count(control: &Control, counted: u64) -> u64 {
    if counted == 0 {
        control.completed.fetch_add(1, Ordering::Release);
    }
    counted + 1
}

fn run_iteration(control: &Control, k: u64, worker: &mut dyn Worker) -> u64 {
    let mut counted = 0;
    loop {
        black_box(worker.op());
        match in_window(control, k) {
            Some(true) => counted = count(control, counted),
            Some(false) => {}
            None => return counted,
        }
    }
}

fn run_iteration_sampled(
    control: &Control,
    k: u64,
    worker: &mut dyn Worker,
    h: &mut Histogram<u64>,
) -> u64 {
    let mut counted = 0;
    loop {
        let start = Instant::now();
        black_box(worker.op());
        let nanos = start.elapsed().as_nanos() as u64;
        match in_window(control, k) {
            Some(true) => {
                counted = count(control, counted);
                h.saturating_record(nanos.max(1));
            }
            Some(false) => {}
            None => return counted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// An operation gated by the test. It announces `ready` when it starts, which also proves
    /// the previous operation has been accounted, then blocks until the test sends a token.
    struct Gated {
        tokens: mpsc::Receiver<()>,
        ready: mpsc::Sender<()>,
    }

    impl Worker for Gated {
        fn op(&mut self) -> u64 {
            let _ = self.ready.send(());
            let _ = self.tokens.recv();
            1
        }
    }

    /// Completes `n` operations; on return each has been accounted and the worker waits in the next.
    fn run_ops(tokens: &mpsc::Sender<()>, ready: &mpsc::Receiver<()>, n: usize) {
        for _ in 0..n {
            tokens.send(()).unwrap();
            ready.recv().unwrap();
        }
    }

    /// Runs `test` against one [`Gated`] worker on a thread of its own, handing it the control,
    /// the worker's slot, the tokens that complete operations and the worker's readiness. The
    /// trial exits when `test` returns or panics (the tokens are dropped with the closure, so a
    /// worker waiting for one returns), so a failed assertion fails the test instead of hanging it.
    fn with_gated_worker(
        sample: bool,
        test: impl FnOnce(&Control, &Slot, &mpsc::Sender<()>, &mpsc::Receiver<()>),
    ) {
        let control = Control::new();
        let slot = Slot::default();
        let (tok_tx, tok_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut w = Gated {
                    tokens: tok_rx,
                    ready: ready_tx,
                };
                worker_loop(&control, &slot, &mut w, sample);
            });
            let _exit = ExitOnDrop(&control);
            let tokens = tok_tx;
            test(&control, &slot, &tokens, &ready_rx);
        });
    }

    struct ExitOnDrop<'a>(&'a Control);

    impl Drop for ExitOnDrop<'_> {
        fn drop(&mut self) {
            self.0.exit();
        }
    }

    #[test]
    fn only_operations_completed_inside_the_window_count() {
        with_gated_worker(false, |control, slot, tokens, ready| {
            // Iteration 1: 5 ramp-up operations, 7 in the window, 1 completing in the ramp-down.
            control.start(1);
            control.wait_arrived(1);
            ready.recv().unwrap();
            run_ops(tokens, ready, 5);
            control.open_window(1);
            run_ops(tokens, ready, 7);
            control.close_window(1);
            tokens.send(()).unwrap();
            control.wait_reported(1);
            control.finish(1);
            let first = slot.take().ops;

            // Iteration 2: an operation started in the ramp-up but completed in the window counts.
            control.start(2);
            ready.recv().unwrap();
            control.open_window(2);
            run_ops(tokens, ready, 4);
            control.close_window(2);
            tokens.send(()).unwrap();
            control.wait_reported(1);
            let second = slot.take().ops;
            assert_eq!((first, second), (7, 4));
        });
    }

    #[test]
    fn a_worker_that_never_completes_inside_the_window_reports_zero() {
        with_gated_worker(true, |control, slot, tokens, ready| {
            control.start(1);
            ready.recv().unwrap();
            control.open_window(1);
            control.close_window(1);
            tokens.send(()).unwrap();
            control.wait_reported(1);
            let r = slot.take();
            assert_eq!(r.ops, 0);
            assert_eq!(r.histogram.map(|h| h.len()), Some(0));
        });
    }

    #[test]
    fn a_window_closes_only_after_its_first_completion() {
        with_gated_worker(false, |control, slot, tokens, ready| {
            // One operation covers the whole window: the coordinator's wait outlasts it.
            control.start(1);
            control.wait_arrived(1);
            ready.recv().unwrap();
            control.open_window(1);
            let (closed_tx, closed_rx) = mpsc::channel();
            std::thread::scope(|s| {
                s.spawn(move || {
                    control.wait_first_completion();
                    control.close_window(1);
                    closed_tx.send(()).unwrap();
                });
                // Time for a wait that does not wait to close the window early; a correct one
                // cannot, however long this is.
                let early = closed_rx.recv_timeout(Duration::from_millis(20)).is_ok();
                tokens.send(()).unwrap();
                assert!(!early, "the window closed before any operation completed");
            });
            tokens.send(()).unwrap();
            control.wait_reported(1);
            assert_eq!(slot.take().ops, 1);
        });
    }

    struct PanicsAtOnce;

    impl Worker for PanicsAtOnce {
        fn op(&mut self) -> u64 {
            panic!("before any completion")
        }
    }

    #[test]
    fn a_worker_that_panics_before_any_completion_lets_the_window_close() {
        let control = Control::new();
        let slot = Slot::default();
        std::thread::scope(|s| {
            s.spawn(|| worker_loop(&control, &slot, &mut PanicsAtOnce, false));
            control.start(1);
            control.wait_arrived(1);
            control.open_window(1);
            control.wait_first_completion();
            control.close_window(1);
            control.wait_reported(1);
            let r = slot.take();
            control.exit();
            assert_eq!(r.panic.as_deref(), Some("before any completion"));
        });
    }
}
