//! Readers of what a side's program reports: JMH's `-rf json` file ([`jmh`]), the line protocol
//! ([`lines`]), criterion's files ([`criterion`]) and divan's table ([`divan`]). Each turns a
//! program's output into an [`Invocation`](super::Invocation) of one benchmark, or an error that
//! says what the output holds instead (the benchmarks it has).

pub mod criterion;
pub mod divan;
pub mod jmh;
pub mod lines;

use std::collections::BTreeMap;

use crate::claims::claim::Claim;
use crate::format::jmh::JmhEntry;

/// Which entry of a result a side reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct EntrySelection<'a> {
    /// The benchmark's name, or the end of it after a `.` (the claim's `benchmark`; a scenario
    /// of ours may be named with its `/`).
    pub benchmark: Option<&'a str>,
    /// The JMH mode the entry must have (the claim's `mode`), for a result that holds one
    /// benchmark in several modes.
    pub mode: Option<&'a str>,
    /// @Param values the entry must have (the claim's and the side's `params`).
    pub params: Option<&'a BTreeMap<String, String>>,
}

impl<'a> EntrySelection<'a> {
    /// The entry of `claim`'s `benchmark` and `mode` with a side's resolved `params` (the
    /// claim's shared ones under the side's own).
    pub fn of(claim: &'a Claim, params: &'a BTreeMap<String, String>) -> Self {
        EntrySelection {
            benchmark: claim.benchmark.as_deref(),
            mode: claim.mode.as_deref(),
            params: Some(params),
        }
    }

    fn matches(&self, e: &JmhEntry) -> bool {
        // A scenario of ours (`parser/parse`) is named `parser.parse` in JMH's layout.
        let named = self
            .benchmark
            .map(|b| b.replace('/', "."))
            .is_none_or(|b| e.benchmark == b || e.benchmark.ends_with(&format!(".{b}")));
        let mode = self.mode.is_none_or(|m| e.mode == m);
        let params = self.params.is_none_or(|want| {
            want.iter().all(|(k, v)| {
                e.params
                    .as_ref()
                    .and_then(|p| p.get(k))
                    .is_some_and(|have| have == v)
            })
        });
        named && mode && params
    }

    /// `benchmark`, `mode` and `params` in words, for errors.
    fn words(&self) -> String {
        let mut w = self
            .benchmark
            .map(|b| format!(" for {b}"))
            .unwrap_or_default();
        if let Some(m) = self.mode {
            w += &format!(" in mode {m}");
        }
        if let Some(p) = self.params.filter(|p| !p.is_empty()) {
            w += &format!(" with {}", pairs_text(p));
        }
        w
    }
}

/// `k=v, k=v` in key order.
fn pairs_text(params: &BTreeMap<String, String>) -> String {
    let kv: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    kv.join(", ")
}

/// The last `n` characters of `text`, on one line's worth of display.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let t = text.trim_end();
    let start = t
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(0);
    t[start..].to_string()
}
