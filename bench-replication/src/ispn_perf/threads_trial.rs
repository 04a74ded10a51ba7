//! The `threads` driver's trial: a cluster of real threads per node, one harness worker per
//! requester, each checking its replies; the quiescent cluster verified after the last
//! iteration.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use critsec_harness::{
    CheckFailed, Iterations, LockWaitProbe, LockWaits, Metric, Probe, ScenarioError, Trial, Window,
    Worker, WorkerSource,
};
use critsec_replication::threads::{ClusterClient, DriverStats, ThreadCluster};
use critsec_replication::workload::{OpGenerator, RequesterStats, reply_matches};
use critsec_replication::{AckLog, NodeStats, Outcome};

use super::{IspnPerfParams, metrics};

pub(super) struct ThreadsTrial {
    setup: IspnPerfParams,
    cluster: ThreadCluster,
    acks: Mutex<AckLog>,
    /// Per-worker stats, each behind its own (uncontended) lock so the probe can read them.
    slots: Vec<Arc<Mutex<RequesterStats>>>,
    /// Node counters when the probe's window opened.
    baseline: Mutex<NodeStats>,
    /// Real pool-thread counters when the probe's window opened.
    driver_baseline: Mutex<DriverStats>,
    /// Contended waits for the nodes' mutexes (`lock.replication.node.*`) and slot signals.
    locks: LockWaitProbe,
}

impl ThreadsTrial {
    pub(super) fn start(setup: IspnPerfParams) -> Result<ThreadsTrial, ScenarioError> {
        let cluster = ThreadCluster::start(setup.protocol, setup.threads_config())
            .map_err(|e| ScenarioError::Setup(e.to_string()))?;
        let n = setup.cluster.nodes * setup.workload.requesters_per_node as usize;
        let slots: Vec<_> = (0..n.max(1))
            .map(|_| Arc::new(Mutex::new(RequesterStats::default())))
            .collect();
        Ok(ThreadsTrial {
            acks: Mutex::new(AckLog::new(setup.cluster.keys)),
            slots,
            baseline: Mutex::new(NodeStats::default()),
            driver_baseline: Mutex::new(DriverStats::default()),
            locks: LockWaitProbe::new("replication.", critsec_sync::reset_lock_stats, || {
                critsec_sync::lock_stats()
                    .into_iter()
                    .map(|l| LockWaits::new(l.name, l.contended, l.wait_ns))
                    .collect()
            }),
            cluster,
            setup,
        })
    }
}

impl Trial for ThreadsTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        let acks = self
            .acks
            .lock()
            .map_err(|_| "ack log poisoned".to_string())?
            .clone();
        let (report, stats) = self.cluster.verify(&acks, Duration::from_secs(60))?;
        if stats.regressions > 0 {
            return Err(format!("{} version regressions", stats.regressions).into());
        }
        Ok(report.to_string())
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }

    fn probe(&self) -> Option<&dyn Probe> {
        Some(self)
    }
}

impl WorkerSource for ThreadsTrial {
    fn worker(&self, _group: &str, index: usize) -> Box<dyn Worker + '_> {
        let node = (index % self.setup.cluster.nodes) as u16;
        let slot = Arc::clone(&self.slots[index % self.slots.len()]);
        Box::new(ThreadsWorker {
            client: self.cluster.client(node).ok(),
            ops: OpGenerator::requester(
                &self.setup.workload,
                self.setup.cluster.keys,
                self.setup.seed,
                index,
                self.slots.len(),
            ),
            slot,
            trial: self,
            mismatches: 0,
            errors: 0,
        })
    }
}

impl Probe for ThreadsTrial {
    fn reset(&self) {
        for s in &self.slots {
            if let Ok(mut s) = s.lock() {
                *s = RequesterStats::default();
            }
        }
        if let (Ok(stats), Ok(mut b)) = (self.cluster.stats(), self.baseline.lock()) {
            *b = stats;
        }
        if let Ok(mut b) = self.driver_baseline.lock() {
            *b = self.cluster.driver_stats();
        }
        self.locks.reset();
    }

    fn read(&self, window: Window) -> Vec<Metric> {
        let mut req = RequesterStats::default();
        for s in &self.slots {
            if let Ok(s) = s.lock() {
                req.merge(&s);
            }
        }
        let now = self.cluster.stats().unwrap_or_default();
        let base = self.baseline.lock().map(|b| b.clone()).unwrap_or_default();
        let delta = now.since(&base);
        let seconds = window.nanos.max(1) as f64 / 1e9;
        let per_s = window.ops as f64 / seconds;
        // The load runs on across windows, so a window's messages and its requests match in
        // the long run: a request straddling one edge is matched by one at the other.
        let per_request = delta.messages_sent as f64 / req.ended().max(1) as f64;
        let mut m = metrics(
            per_s,
            self.setup.cluster.nodes,
            &req,
            &delta,
            seconds,
            per_request,
        );
        // What the real pool threads did in the window (threads driver only).
        let d = self.cluster.driver_stats();
        let db = self
            .driver_baseline
            .lock()
            .map(|b| b.clone())
            .unwrap_or_default();
        let since = |now: u64, then: u64| now.saturating_sub(then) as f64;
        m.push(
            Metric::new(
                "blocked_waits",
                since(d.blocked_waits, db.blocked_waits),
                "count",
            )
            .lower_is_better(),
        );
        m.push(Metric::new(
            "lock_resumes",
            since(d.resumes, db.resumes),
            "count",
        ));
        m.push(Metric::new(
            "oob_commands",
            since(d.oob_commands, db.oob_commands),
            "count",
        ));
        m.push(
            Metric::new(
                "transport_blocks",
                since(d.transport_blocks, db.transport_blocks),
                "count",
            )
            .lower_is_better(),
        );
        m.push(Metric::new(
            "pool_threads_busy_max",
            d.max_busy_pool_threads as f64,
            "threads",
        ));
        m.push(Metric::new(
            "oob_threads_busy_max",
            d.max_busy_oob_threads as f64,
            "threads",
        ));
        m.extend(self.locks.read(window));
        m
    }
}

struct ThreadsWorker<'t> {
    client: Option<ClusterClient>,
    ops: OpGenerator,
    slot: Arc<Mutex<RequesterStats>>,
    trial: &'t ThreadsTrial,
    mismatches: u64,
    errors: u64,
}

impl Worker for ThreadsWorker<'_> {
    fn op(&mut self) -> u64 {
        let Some(client) = self.client.as_mut() else {
            self.errors += 1;
            return 0;
        };
        let op = self.ops.next_op();
        let value_size = self.trial.setup.workload.value_size as usize;
        // The requester keeps a reference to its value to check the echo (no copy).
        let expected = op.clone();
        let start = std::time::Instant::now();
        match client.call(op) {
            Ok(outcome) => {
                let us = start.elapsed().as_micros() as u64;
                let op = expected;
                if !reply_matches(&op, &outcome, value_size) {
                    self.mismatches += 1;
                }
                if let Ok(mut s) = self.slot.lock() {
                    s.record(&op, &outcome, us, value_size);
                }
                match outcome {
                    Outcome::Got(e) | Outcome::Put(e) => e.version,
                    Outcome::Failed(_) => 0,
                }
            }
            Err(_) => {
                self.errors += 1;
                0
            }
        }
    }

    fn check(&mut self) -> Result<(), CheckFailed> {
        if let Some(c) = self.client.as_mut() {
            if let Ok(mut acks) = self.trial.acks.lock() {
                acks.merge(&c.take_acks());
            }
        }
        if self.mismatches > 0 || self.errors > 0 {
            return Err(format!(
                "{} replies did not match their request, {} calls got no reply",
                self.mismatches, self.errors
            )
            .into());
        }
        Ok(())
    }
}

impl Drop for ThreadsWorker<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.client.as_mut() {
            if let Ok(mut acks) = self.trial.acks.lock() {
                acks.merge(&c.take_acks());
            }
        }
    }
}
