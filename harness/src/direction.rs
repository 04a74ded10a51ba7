//! Which way a metric improves: one concept for a claim (which way the contender should move
//! its metric) and for a comparison (which change is better).
//!
//! Whoever produces a metric says its direction ([`Metric`](crate::Metric)'s `better`); a
//! metric without one (a utilisation, a count that only describes) is never called better or
//! worse. JMH's primary score takes its direction from the mode ([`Mode::better`](crate::Mode)).

use serde::{Deserialize, Serialize};

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Up is good: throughput (`ops/s`, `req/s`, `docs/s`).
    Higher,
    /// Down is good: time per operation, latency, waits, timeouts, failures.
    Lower,
}
