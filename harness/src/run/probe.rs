//! Ready-made probes: contended lock waits per operation.
//!
//! The harness knows no lock implementation. A bench crate hands [`LockWaitProbe`] two plain
//! functions, one resetting its locks' counters and one reading them, and gets the JFR-style
//! secondary metrics `lock.<name>.waits` (contended acquisitions per operation) and
//! `lock.<name>.wait_ns` (nanoseconds spent waiting per operation).

use crate::run::scenario::{Metric, Probe, Window};

/// Contended-wait counters of one named lock, as a lock library reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockWaits {
    /// The lock's name.
    pub name: String,
    /// Acquisitions that had to wait.
    pub contended: u64,
    /// Total nanoseconds waited.
    pub wait_ns: u64,
}

impl LockWaits {
    /// The counters of the lock `name`.
    pub fn new(name: &str, contended: u64, wait_ns: u64) -> Self {
        LockWaits {
            name: name.to_string(),
            contended,
            wait_ns,
        }
    }
}

/// A [`Probe`] over a lock library's global counters.
pub struct LockWaitProbe {
    reset: fn(),
    read: fn() -> Vec<LockWaits>,
    /// Only locks whose name starts with this prefix are reported.
    prefix: &'static str,
}

impl LockWaitProbe {
    /// A probe reporting locks whose names start with `prefix` (e.g. `registry.`).
    pub fn new(prefix: &'static str, reset: fn(), read: fn() -> Vec<LockWaits>) -> Self {
        LockWaitProbe {
            reset,
            read,
            prefix,
        }
    }
}

impl Probe for LockWaitProbe {
    fn reset(&self) {
        (self.reset)();
    }

    fn read(&self, window: Window) -> Vec<Metric> {
        let ops = window.ops.max(1) as f64;
        let mut out = Vec::new();
        for l in (self.read)()
            .into_iter()
            .filter(|l| l.name.starts_with(self.prefix))
        {
            out.push(
                Metric::new(
                    format!("lock.{}.waits", l.name),
                    l.contended as f64 / ops,
                    "waits/op",
                )
                .lower_is_better(),
            );
            out.push(
                Metric::new(
                    format!("lock.{}.wait_ns", l.name),
                    l.wait_ns as f64 / ops,
                    "ns/op",
                )
                .lower_is_better(),
            );
        }
        out
    }
}
