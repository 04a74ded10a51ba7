//! What a running command shows on stderr: a bar of iterations for `run`, a line per replicate
//! for `reproduce`, `ab` and `calibrate`, and the interrupt handler they share.

use std::io::{IsTerminal, Write as _};

use critsec_harness::claims::PairObserver;
use critsec_harness::run::{Observer, RunSettings, interrupted};
use critsec_harness::{BenchmarkResult, IterationResult, TrialSpec};
use indicatif::{ProgressBar, ProgressStyle};

/// Progress on stderr: a bar when stderr is a terminal, nothing otherwise.
pub struct IterationBar {
    bar: Option<ProgressBar>,
    per_benchmark: u64,
}

impl IterationBar {
    /// A progress reporter for `benchmarks` benchmarks of `settings`.
    pub fn new(benchmarks: usize, settings: &RunSettings) -> Self {
        let per_benchmark = u64::from(settings.forks.max(1))
            * u64::from(settings.warmup_iterations + settings.measurement_iterations);
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(benchmarks as u64 * per_benchmark);
            b.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} iterations  {msg}")
                    .expect("static template"),
            );
            b
        });
        IterationBar { bar, per_benchmark }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Observer for IterationBar {
    fn benchmark_started(&mut self, index: usize, total: usize, spec: &TrialSpec) {
        if let Some(b) = &self.bar {
            b.set_position(index as u64 * self.per_benchmark);
            b.set_message(format!(
                "[{}/{}] {} [{}] t={}",
                index + 1,
                total,
                spec.scenario,
                spec.params,
                spec.threads
            ));
        }
    }
    fn iteration_done(&mut self, _: u32, _: u32, _: bool, _: &IterationResult) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }
    fn benchmark_done(&mut self, r: &BenchmarkResult) {
        if let (Some(b), Some(e)) = (&self.bar, &r.error) {
            b.println(format!("{}: ERROR: {e}", r.label()));
        }
    }
}

/// Installs the Ctrl-C handler: the first interrupt stops at the next iteration boundary and
/// keeps what completed; a second one exits at once.
pub fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if interrupted() {
            std::process::exit(130);
        }
        critsec_harness::run::request_interrupt();
        eprintln!(
            "\ncritsec: interrupted; finishing with the results completed so far (Ctrl-C again to abort)"
        );
    });
}

/// Progress of replicates on stderr: one line rewritten in place on a terminal, a line per
/// replicate otherwise.
pub struct ReplicateLines {
    tty: bool,
}

impl ReplicateLines {
    /// Lines for this process's stderr.
    pub fn new() -> Self {
        ReplicateLines {
            tty: std::io::stderr().is_terminal(),
        }
    }

    /// Clears the line rewritten in place.
    pub fn finish(&self) {
        if self.tty {
            eprint!("\r\x1b[2K");
        }
    }
}

impl PairObserver for ReplicateLines {
    fn replicate_done(&mut self, claims: &[String], done: u32, planned: u32) {
        let line = format!("  {}: {done} of at most {planned}", claims.join(", "));
        if self.tty {
            eprint!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
    }
}
