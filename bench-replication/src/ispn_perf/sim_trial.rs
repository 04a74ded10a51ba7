//! The `sim` driver's trial: each iteration one seeded simulation in virtual time, verified
//! before its score counts.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use critsec_harness::{CheckFailed, ExternalSample, Iterations, Metric, SelfTimed, Trial};
use critsec_replication::sim::{SimReport, simulate};

use super::{IspnPerfParams, metrics};

pub(super) struct SimTrial {
    setup: IspnPerfParams,
    iteration: AtomicU64,
    last: Mutex<Option<String>>,
}

impl SimTrial {
    pub(super) fn new(setup: IspnPerfParams) -> Self {
        SimTrial {
            setup,
            iteration: AtomicU64::new(0),
            last: Mutex::new(None),
        }
    }

    /// Iteration `n` (seed + n), for `duration_us`.
    fn run(&self, n: u64, duration_us: u64) -> Result<SimReport, CheckFailed> {
        let cfg = self
            .setup
            .sim_config(self.setup.seed.wrapping_add(n), duration_us);
        let r = simulate(self.setup.protocol, cfg).map_err(|e| CheckFailed(e.to_string()))?;
        match &r.verify {
            Ok(v) => {
                if r.requesters.bad_reads > 0 {
                    return Err(CheckFailed(format!(
                        "{} gets returned a value of another key",
                        r.requesters.bad_reads
                    )));
                }
                if let Ok(mut last) = self.last.lock() {
                    *last = Some(v.to_string());
                }
                Ok(r)
            }
            Err(e) => Err(CheckFailed(format!("verification failed: {e}"))),
        }
    }
}

impl Trial for SimTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        let last = self.last.lock().map(|l| l.clone()).unwrap_or(None);
        match last {
            Some(v) => Ok(v),
            // Before the first iteration: a short run of its configuration and seed must
            // verify (the iteration itself still runs that seed).
            None => self
                .run(
                    self.iteration.load(Ordering::Relaxed),
                    (self.setup.duration_ms * 100).clamp(1_000, 100_000),
                )
                .map(|r| r.verify.map(|v| v.to_string()).unwrap_or_default()),
        }
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::SelfTimed(self)
    }
}

impl SelfTimed for SimTrial {
    fn run_iteration(
        &self,
        _warmup: bool,
        _budget: Duration,
    ) -> Result<ExternalSample, CheckFailed> {
        // Relaxed: only hands out distinct seeds; iterations run one at a time anyway.
        let n = self.iteration.fetch_add(1, Ordering::Relaxed);
        self.run(n, self.setup.duration_ms * 1000)
            .map(|r| ExternalSample {
                score: r.req_per_s_per_node(),
                unit: "req/s/node".to_string(),
                // The node counters cover the whole run, drain included: bytes are divided
                // by the virtual time until quiescence, not by the window.
                secondary: {
                    // Every message until the drain, of every request until the drain.
                    let requests = r.requesters.ended() + r.drained_ops;
                    let mut m = metrics(
                        r.req_per_s_cluster(),
                        r.nodes,
                        &r.requesters,
                        &r.stats,
                        r.end_us.max(r.window_us) as f64 / 1e6,
                        r.stats.messages_sent as f64 / requests.max(1) as f64,
                    );
                    m.push(Metric::new(
                        "cpu_utilisation",
                        r.cpu_utilisation(),
                        "fraction",
                    ));
                    m.push(
                        Metric::new("cpu_wait_mean_us", r.cpu_wait_mean_us(), "us")
                            .lower_is_better(),
                    );
                    // The get plan's traffic: get requests and replies sent over the run
                    // per get completed over the run.
                    m.push(
                        Metric::new(
                            "messages_per_get",
                            r.stats.get_messages as f64 / r.gets_checked.max(1) as f64,
                            "msgs",
                        )
                        .lower_is_better(),
                    );
                    m.push(Metric::new("window_ms", r.window_us as f64 / 1e3, "ms"));
                    m
                },
            })
    }
}
