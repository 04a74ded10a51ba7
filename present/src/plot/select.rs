//! Which outcomes of a plot's verdict file a chart draws, and where: each outcome's claim says
//! its chart (thread count), its x value and its series (`crate::paired::place`), so a saved
//! file is drawn again without the measurements' settings; an outcome without an interval is
//! listed under the chart as missing, never drawn.

use critsec_harness::claims::ClaimOutcome;

use super::latency::percentile_axis;
use super::throughput::{thread_axis, threads_words};
use super::{Missing, RatioChart, RatioPoint, RatioSeries, XValue};
use crate::paired::{Place, place};
use crate::plot::axes::value_axis;
use crate::publication::{PlotSpec, Published};

/// The charts of `plot` (of `run`) from its outcomes, in thread order.
pub fn charts(run: &Published, plot: &PlotSpec, outcomes: &[ClaimOutcome]) -> Vec<RatioChart> {
    let placed: Vec<(Place, &ClaimOutcome)> = outcomes
        .iter()
        .filter_map(|o| place(plot, &o.claim).map(|p| (p, o)))
        .collect();
    let mut keys: Vec<Option<usize>> = placed.iter().map(|(p, _)| p.chart).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .map(|key| {
            let here: Vec<&(Place, &ClaimOutcome)> =
                placed.iter().filter(|(p, _)| p.chart == key).collect();
            chart(run, plot, key, &here)
        })
        .collect()
}

/// One chart: the outcomes `here` at thread count `key` (none: threads are the x axis).
fn chart(
    run: &Published,
    plot: &PlotSpec,
    key: Option<usize>,
    here: &[&(Place, &ClaimOutcome)],
) -> RatioChart {
    let mut labels: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (p, _) in here {
        if !labels.contains(&p.x) {
            labels.push(p.x.clone());
        }
        if !names.contains(&p.series) {
            names.push(p.series.clone());
        }
    }
    let (xs, x_desc): (Vec<XValue>, String) = match plot {
        PlotSpec::Threads { .. } => {
            let mut counts: Vec<usize> = labels.iter().filter_map(|l| l.parse().ok()).collect();
            counts.sort_unstable();
            thread_axis(&counts)
        }
        PlotSpec::Latency { prefix, .. } => (
            percentile_axis(&labels),
            format!("percentile of {prefix} latency"),
        ),
        _ => (
            value_axis(&labels),
            plot.axis().unwrap_or_default().to_string(),
        ),
    };
    let mut missing = Vec::new();
    let series = names
        .iter()
        .map(|name| {
            let mut points: Vec<RatioPoint> = Vec::new();
            for (p, o) in here.iter().filter(|(p, _)| &p.series == name) {
                let Some(x) = xs.iter().position(|x| x.label == p.x) else {
                    continue;
                };
                match point(o, x) {
                    Ok(point) => points.push(point),
                    Err(why) => missing.push(Missing {
                        series: name.clone(),
                        x: p.x.clone(),
                        why,
                    }),
                }
            }
            points.sort_by(|a, b| xs[a.x].pos.total_cmp(&xs[b.x].pos));
            RatioSeries {
                name: name.clone(),
                points,
            }
        })
        .collect::<Vec<_>>();
    let fix: Vec<String> = plot.fix().iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut title = run.scenario.clone();
    if !fix.is_empty() {
        title.push_str(&format!(" ({})", fix.join(", ")));
    }
    if let Some(t) = key {
        title.push_str(&format!(", {}", threads_words(t)));
    }
    let baseline = plot.baseline().unwrap_or_default().to_string();
    RatioChart {
        subtitle: subtitle(plot, &baseline, here, &series),
        title,
        x_desc,
        baseline,
        xs,
        series,
        missing,
    }
}

/// A point from an outcome, or why it has none.
fn point(o: &ClaimOutcome, x: usize) -> Result<RatioPoint, String> {
    if let Err(e) = &o.verdict {
        return Err(e.clone());
    }
    match o.interval {
        Some(r) if r.n >= 2 && r.low > 0.0 && r.high.is_finite() && r.ratio > 0.0 => {
            Ok(RatioPoint {
                x,
                ratio: r.ratio,
                low: r.low,
                high: r.high,
                n: r.n,
                log_sd: r.log_sd,
                confidence: r.confidence,
                seeds: o.replicate_kind == "seed",
                replicate_seconds: o.design.as_ref().map_or(f64::NAN, |d| d.replicate_seconds),
            })
        }
        Some(r) => Err(format!(
            "no usable interval over {} replicate(s) (a side's value not positive?)",
            r.n
        )),
        None => Err("no interval".into()),
    }
}

/// The line under the title: what each ratio is of, and over how many replicates.
fn subtitle(
    plot: &PlotSpec,
    baseline: &str,
    here: &[&(Place, &ClaimOutcome)],
    series: &[RatioSeries],
) -> String {
    let param = plot.series();
    let unit = here
        .first()
        .map(|(_, o)| o.baseline.unit.clone())
        .filter(|u| !u.is_empty())
        .map(|u| format!(" ({u})"))
        .unwrap_or_default();
    let what = match plot {
        PlotSpec::Latency { prefix, .. } => format!("{prefix} latency"),
        PlotSpec::Sweep { metric, .. } => format!("{metric}{unit}"),
        _ => format!("score{unit}"),
    };
    let ns: Vec<usize> = series.iter().flat_map(|s| &s.points).map(|p| p.n).collect();
    let seeds = series.iter().flat_map(|s| &s.points).any(|p| p.seeds);
    let word = if seeds { "seeds" } else { "process pairs" };
    let over = match (ns.iter().min(), ns.iter().max()) {
        (Some(a), Some(b)) if a == b => format!("{a} {word}"),
        (Some(a), Some(b)) => format!("{a}-{b} {word}"),
        _ => word.to_string(),
    };
    format!("each {param}'s {what} over {baseline}'s; 99.9% intervals over {over}")
}
