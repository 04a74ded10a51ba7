//! Running one trial: set up, verify, iterate on command, verify again.
//!
//! [`run_trial`] is driven by a callback that receives each [`Event`] and answers with the next
//! [`Command`]. The same function serves a trial in this process (driven over channels) and a
//! trial in a forked child (driven over the child's stdin and stdout), so a paired run can keep
//! two warm trials alive and alternate iterations between them.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::run::control::{Control, Slot, panic_message, report_panic, worker_loop};
use crate::run::cpu::process_cpu_time;
use crate::run::result::{IterationResult, TrialSpec};
use crate::run::scenario::{Iterations, Metric, Scenario, Trial, Window, WorkerSource};
use crate::run::settings::{Mode, available_cores};
use crate::stats::{Summary, median};

/// What the driver asks a running trial to do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Run one iteration of the given length.
    Iteration {
        /// Warmup iterations are run the same way; the flag is passed to external samplers.
        warmup: bool,
        /// Length of the measured window.
        duration_ns: u64,
    },
    /// Verify the final state and stop.
    Finish,
}

/// What a running trial tells its driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// Set up and verified; ready for iterations.
    Ready {
        /// The check value.
        verified: String,
    },
    /// One iteration completed.
    Iteration(IterationResult),
    /// Finished; the final check passed.
    Finished {
        /// The check value after the last iteration.
        verified: String,
    },
    /// Setup, verification or an iteration failed; the trial has stopped.
    Failed {
        /// What went wrong.
        error: String,
    },
}

/// Runs a trial of `scenario` as `spec` says, asking `driver` what to do after each event.
/// Returns once the trial finished or failed; the last event tells which.
pub fn run_trial(
    scenario: &dyn Scenario,
    spec: &TrialSpec,
    driver: &mut dyn FnMut(Event) -> Command,
) {
    let trial = match scenario.setup(&spec.params, &spec.groups) {
        Ok(t) => t,
        Err(e) => {
            driver(Event::Failed {
                error: format!("{}: {e}", spec.scenario),
            });
            return;
        }
    };
    let verified = match trial.verify() {
        Ok(v) => v,
        Err(e) => {
            driver(Event::Failed {
                error: format!("verification before measuring failed: {e}"),
            });
            return;
        }
    };
    let mut command = driver(Event::Ready { verified });
    let trial: &dyn Trial = &*trial;
    let control = Control::new();
    let slots: Vec<(String, Slot)> = spec
        .groups
        .iter()
        .flat_map(|g| (0..g.threads).map(move |_| (g.name.clone(), Slot::default())))
        .collect();
    let mut failed = None;
    std::thread::scope(|scope| {
        // Should this thread panic (a self-timed iteration, a probe or `quiesce`), the
        // workers are told to exit as it unwinds: the scope waits for them before the panic
        // goes on, and parked workers would otherwise keep it waiting forever.
        let _exit = ExitOnDrop(&control);
        let mut workers_started = false;
        let mut iteration = 0u64;
        while let Command::Iteration {
            warmup,
            duration_ns,
        } = command
        {
            iteration += 1;
            let duration = Duration::from_nanos(duration_ns);
            let result = match trial.iterations() {
                Iterations::SelfTimed(runs) => runs
                    .run_iteration(warmup, duration)
                    .map(|s| IterationResult {
                        score: s.score,
                        unit: s.unit,
                        window_ns: duration_ns,
                        ops: 0,
                        thread_ops: Vec::new(),
                        secondary: s.secondary,
                        histogram: None,
                    })
                    .map_err(|e| e.0),
                Iterations::Workers(source) => {
                    if !workers_started {
                        workers_started = true;
                        spawn_workers(scope, source, spec, &control, &slots);
                    }
                    measure(trial, spec, &control, &slots, iteration, duration)
                }
            };
            match result {
                Ok(r) => {
                    // Outside the window: the trial idles from here until the next command.
                    trial.quiesce();
                    command = driver(Event::Iteration(r));
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
    });
    if let Some(error) = failed {
        driver(Event::Failed { error });
        return;
    }
    match trial.verify() {
        Ok(verified) => driver(Event::Finished { verified }),
        Err(e) => driver(Event::Failed {
            error: format!("verification after measuring failed: {e}"),
        }),
    };
}

/// Tells the workers to exit when dropped: at the end of the trial's scope, and on a panic.
struct ExitOnDrop<'a>(&'a Control);

impl Drop for ExitOnDrop<'_> {
    fn drop(&mut self) {
        self.0.exit();
    }
}

fn spawn_workers<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    source: &'env dyn WorkerSource,
    spec: &'env TrialSpec,
    control: &'env Control,
    slots: &'env [(String, Slot)],
) {
    let sample = spec.mode == Mode::SampleTime;
    let mut i = 0;
    for g in &spec.groups {
        for index in 0..g.threads {
            let slot = &slots[i].1;
            i += 1;
            let name = format!("{}-{index}", g.name);
            let group = g.name.as_str();
            std::thread::Builder::new()
                .name(name)
                .spawn_scoped(scope, move || {
                    // The worker is built on its own thread so thread-local state (caches,
                    // logging contexts) belongs to the thread that measures with it.
                    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        source.worker(group, index)
                    }));
                    match built {
                        Ok(mut worker) => worker_loop(control, slot, &mut *worker, sample),
                        Err(payload) => report_panic(control, slot, 0, &panic_message(&*payload)),
                    }
                })
                .expect("spawning a measuring thread");
        }
    }
}

fn measure(
    trial: &dyn Trial,
    spec: &TrialSpec,
    control: &Control,
    slots: &[(String, Slot)],
    k: u64,
    duration: Duration,
) -> Result<IterationResult, String> {
    let n = slots.len();
    control.start(k);
    control.wait_arrived(n);
    if let Some(p) = trial.probe() {
        p.reset();
    }
    let cpu_start = process_cpu_time();
    let start = Instant::now();
    control.open_window(k);
    std::thread::sleep(duration);
    control.wait_first_completion();
    control.close_window(k);
    let window = start.elapsed();
    let cpu = process_cpu_time().saturating_sub(cpu_start);
    control.wait_reported(n);
    control.finish(k);

    let mut thread_ops = Vec::with_capacity(n);
    let mut merged = spec
        .mode
        .eq(&Mode::SampleTime)
        .then(crate::run::control::new_histogram);
    for (i, (group, slot)) in slots.iter().enumerate() {
        let r = slot.take();
        if let Some(msg) = r.panic {
            return Err(format!("thread {i} of group `{group}` panicked: {msg}"));
        }
        if let Some(msg) = r.check {
            return Err(format!(
                "check failed in thread {i} of group `{group}`: {msg}"
            ));
        }
        if let (Some(m), Some(h)) = (merged.as_mut(), r.histogram.as_ref()) {
            m.add(h).map_err(|e| format!("merging histograms: {e}"))?;
        }
        thread_ops.push((group.clone(), r.ops));
    }
    let ops: u64 = thread_ops.iter().map(|(_, o)| o).sum();
    if ops == 0 {
        return Err(format!(
            "no operation completed inside the {window:?} window; lengthen the iteration (-r)"
        ));
    }
    let window_ns = window.as_nanos() as u64;
    let secs = window.as_secs_f64();
    let score = match spec.mode {
        Mode::Throughput => ops as f64 / secs,
        Mode::AverageTime => window_ns as f64 * n as f64 / ops as f64,
        Mode::SampleTime => merged.as_ref().map(|h| h.mean()).unwrap_or(f64::NAN),
    };
    let mut secondary = vec![Metric::new(
        "cpu.utilisation",
        100.0 * cpu.as_secs_f64() / (secs * available_cores() as f64),
        "%",
    )];
    if spec.groups.len() > 1 {
        for g in &spec.groups {
            let group_ops: u64 = thread_ops
                .iter()
                .filter(|(name, _)| *name == g.name)
                .map(|(_, o)| o)
                .sum();
            secondary.push(
                Metric::new(
                    format!("group.{}", g.name),
                    group_ops as f64 / secs,
                    "ops/s",
                )
                .higher_is_better(),
            );
        }
    }
    if n > 1 {
        let per_thread: Vec<f64> = thread_ops.iter().map(|(_, o)| *o as f64 / secs).collect();
        secondary
            .push(Metric::new("threads.median", median(&per_thread), "ops/s").higher_is_better());
        secondary.push(Metric::new(
            "threads.stddev",
            Summary::of(&per_thread).stddev,
            "ops/s",
        ));
    }
    if let Some(p) = trial.probe() {
        secondary.extend(p.read(Window {
            nanos: window_ns,
            ops,
        }));
    }
    let histogram = merged.map(|h| {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    });
    Ok(IterationResult {
        score,
        unit: spec.mode.unit().to_string(),
        window_ns,
        ops,
        thread_ops,
        secondary,
        histogram,
    })
}
