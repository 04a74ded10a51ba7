//! Which entries a chart plots, and the subtitle that says how they were chosen.
//!
//! The other parameters of the benchmark are each fixed at their most common value (ties go to
//! the value seen first in the file), and so is the mode; the latency chart also fixes the
//! thread count (most common, ties to the largest). Every fixed choice that had alternatives is
//! printed under the title, so a chart never mixes configurations silently, and so is any
//! series value left without data by those choices. A report that wants one chart per
//! combination filters the entries first and calls once per combination: with one value left,
//! nothing needs choosing.

use std::collections::BTreeMap;

use critsec_harness::format::{JmhEntry, benchmark_name};

use super::PlotError;

/// The entries a chart plots, and the choices made to get them.
pub(super) struct Selection<'a> {
    pub(super) entries: Vec<&'a JmhEntry>,
    /// `name=value` choices among several values, for the subtitle.
    pub(super) fixed: Vec<String>,
    /// Series values with entries only at other choices: named in the subtitle, not drawn.
    pub(super) dropped: Vec<String>,
}

/// The most common value; ties go to the first seen.
pub(super) fn most_common<T: Clone + PartialEq>(values: &[T]) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for v in values {
        match counts.iter_mut().find(|(x, _)| x == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v.clone(), 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == best).map(|(v, _)| v)
}

/// The value of parameter `name` of an entry, if it has one.
pub(crate) fn param<'e>(e: &'e JmhEntry, name: &str) -> Option<&'e str> {
    e.params.as_ref()?.get(name).map(String::as_str)
}

/// The entries of `benchmark` to plot, one series per value of `series_param`, with every other
/// parameter and the mode fixed (and the thread count too when `fix_threads`).
pub(super) fn select<'a>(
    entries: &'a [JmhEntry],
    benchmark: &str,
    series_param: &str,
    fix_threads: bool,
) -> Result<Selection<'a>, PlotError> {
    let wanted = benchmark_name(benchmark);
    let mut chosen: Vec<&JmhEntry> = entries
        .iter()
        .filter(|e| e.benchmark == benchmark || e.benchmark == wanted)
        .collect();
    if chosen.is_empty() {
        let mut available: Vec<String> = entries.iter().map(|e| e.benchmark.clone()).collect();
        available.sort();
        available.dedup();
        return Err(PlotError::NoEntries {
            benchmark: benchmark.into(),
            available,
        });
    }
    let names: Vec<String> = {
        let mut n: Vec<String> = chosen
            .iter()
            .flat_map(|e| e.params.iter().flat_map(|p| p.keys().cloned()))
            .collect();
        n.sort();
        n.dedup();
        n
    };
    chosen.retain(|e| param(e, series_param).is_some());
    if chosen.is_empty() {
        return Err(PlotError::NoSeriesParam {
            benchmark: benchmark.into(),
            param: series_param.into(),
            available: names,
        });
    }
    let all_series: Vec<String> = chosen
        .iter()
        .filter_map(|e| param(e, series_param).map(String::from))
        .fold(Vec::new(), |mut acc, v| {
            if !acc.contains(&v) {
                acc.push(v);
            }
            acc
        });
    let mut fixed = Vec::new();
    let mut fix = |chosen: &mut Vec<&JmhEntry>, label: &str, key: &dyn Fn(&JmhEntry) -> String| {
        let values: Vec<String> = chosen.iter().map(|e| key(e)).collect();
        let distinct = values
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        if let Some(v) = most_common(&values)
            && distinct > 1
        {
            fixed.push(format!("{label}={v}"));
            chosen.retain(|e| key(e) == v);
        }
    };
    fix(&mut chosen, "mode", &|e| e.mode.clone());
    for name in names.iter().filter(|n| *n != series_param) {
        let key = |e: &JmhEntry| param(e, name).unwrap_or("-").to_string();
        fix(&mut chosen, name, &key);
    }
    if fix_threads {
        // Ties go to the largest thread count: the most contended configuration is the one a
        // latency chart is usually drawn for.
        let values: Vec<u64> = chosen.iter().map(|e| e.threads).collect();
        let distinct = values
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let mut by_count: BTreeMap<u64, usize> = BTreeMap::new();
        values
            .iter()
            .for_each(|t| *by_count.entry(*t).or_default() += 1);
        let best = by_count.values().max().copied().unwrap_or(0);
        if let Some((&t, _)) = by_count.iter().rev().find(|(_, n)| **n == best)
            && distinct > 1
        {
            fixed.push(format!("threads={t}"));
            chosen.retain(|e| e.threads == t);
        }
    }
    let dropped = all_series
        .into_iter()
        .filter(|v| !chosen.iter().any(|e| param(e, series_param) == Some(v)))
        .collect();
    Ok(Selection {
        entries: chosen,
        fixed,
        dropped,
    })
}

/// Series values in the order they first appear.
pub(super) fn series_values(sel: &Selection<'_>, series_param: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in &sel.entries {
        if let Some(v) = param(e, series_param)
            && !out.iter().any(|x| x == v)
        {
            out.push(v.to_string());
        }
    }
    out
}

/// The line under a chart's title: what a series is, every choice that had alternatives, and
/// the series values those choices left without data.
pub(super) fn subtitle(sel: &Selection<'_>, series_param: &str) -> String {
    let mut parts = vec![format!("one series per {series_param}")];
    if !sel.fixed.is_empty() {
        parts.push(format!(
            "fixed at the most common values: {}",
            sel.fixed.join(", ")
        ));
    }
    if !sel.dropped.is_empty() {
        parts.push(format!(
            "no data there for {series_param}={}",
            sel.dropped.join(", ")
        ));
    }
    parts.join("; ")
}
