//! SVG charts over a numeric parameter sweep, one series per strategy (or protocol): a ratio
//! with its interval and the points where a series crosses 1 (the two sides swap places) marked
//! ([`ratio_over_parameter`]), or a metric's own value with its interval
//! ([`values_over_parameter`]).
//!
//! Generic on purpose: any sweep that asks "where does one design overtake another" is the ratio
//! chart (the registry's MDC-puts sweep), and any that asks "how does this metric move with the
//! parameter" the value chart (the replication pause sweep). [`ratios_from_entries`] builds the
//! series from JMH entries: at each axis value, each series value's score over the baseline's
//! (same thread count, same other parameters), with an interval from the two 99.9% half-widths by
//! error propagation (`r * sqrt((e1/s1)^2 + (e2/s2)^2)`); [`values_from_entries`] takes a metric's
//! score and 99.9% half-width as they are. Those intervals are JMH's, over iterations (and forks
//! when there are several), not the replicated verdict interval of `critsec reproduce`; the
//! charts say so under their titles.

use crate::plot::axes::{Axis, compact};
use crate::plot::select::param;
use crate::plot::style::{FONT, PALETTE, chart_on, draw_line, draw_mesh, finish, titled_page};
use crate::plot::{PlotError, draw_err};
use critsec_harness::format::JmhEntry;
use plotters::prelude::*;

/// One point: the value (a ratio, or a metric's score) at axis value `x` and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPoint {
    /// The axis parameter's value.
    pub x: f64,
    /// Series score over baseline score, or the metric's score.
    pub value: f64,
    /// The interval's lower end.
    pub lo: f64,
    /// The interval's upper end.
    pub hi: f64,
}

/// One series: a name (the series parameter's value) and its points, sorted by `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSeries {
    /// The series parameter's value, e.g. a strategy id.
    pub name: String,
    /// Points sorted by axis value.
    pub points: Vec<SweepPoint>,
}

/// Where a series crosses 1 between two neighbouring axis values.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    /// The series.
    pub series: String,
    /// The axis values on either side.
    pub between: (f64, f64),
    /// The axis value where the straight line between the two points meets 1.
    pub at: f64,
    /// Whether both points' intervals exclude 1 (a crossing the noise cannot explain).
    pub resolved: bool,
}

/// Every crossing of 1 in `series`: neighbouring points whose ratios lie on opposite sides.
pub fn crossings(series: &[SweepSeries]) -> Vec<Crossing> {
    let mut out = Vec::new();
    for s in series {
        for w in s.points.windows(2) {
            let (a, b) = (w[0], w[1]);
            if (a.value - 1.0) * (b.value - 1.0) < 0.0 {
                let t = (1.0 - a.value) / (b.value - a.value);
                let excludes = |p: SweepPoint| p.lo > 1.0 || p.hi < 1.0;
                out.push(Crossing {
                    series: s.name.clone(),
                    between: (a.x, b.x),
                    at: a.x + t * (b.x - a.x),
                    resolved: excludes(a) && excludes(b),
                });
            }
        }
    }
    out
}

/// Ratios of every `series_param` value to `baseline` over the numeric parameter `axis`, for
/// entries of `benchmark` at `threads` threads. Entries whose other parameters differ from the
/// baseline's at the same axis value are not paired (the caller fixes them first).
pub fn ratios_from_entries(
    entries: &[JmhEntry],
    benchmark: &str,
    axis: &str,
    series_param: &str,
    baseline: &str,
    threads: u64,
) -> Vec<SweepSeries> {
    let chosen: Vec<&JmhEntry> = entries
        .iter()
        .filter(|e| e.benchmark.ends_with(benchmark) && e.threads == threads)
        .collect();
    let score = |e: &JmhEntry| (e.primary_metric.score.0, e.primary_metric.score_error.0);
    let others = |e: &JmhEntry| -> Vec<(String, String)> {
        e.params
            .iter()
            .flat_map(|p| p.iter())
            .filter(|(k, _)| *k != axis && *k != series_param)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let mut names: Vec<String> = Vec::new();
    for e in &chosen {
        if let Some(v) = param(e, series_param)
            && v != baseline
            && !names.iter().any(|n| n == v)
        {
            names.push(v.to_string());
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut points: Vec<SweepPoint> = chosen
                .iter()
                .filter(|e| param(e, series_param) == Some(name.as_str()))
                .filter_map(|e| {
                    let x: f64 = param(e, axis)?.parse().ok()?;
                    let base = chosen.iter().find(|b| {
                        param(b, series_param) == Some(baseline)
                            && param(b, axis) == param(e, axis)
                            && others(b) == others(e)
                    })?;
                    let ((s1, e1), (s0, e0)) = (score(e), score(base));
                    if !(s1 > 0.0 && s0 > 0.0) {
                        return None;
                    }
                    let ratio = s1 / s0;
                    let rel = |s: f64, err: f64| if err.is_finite() { err / s } else { 0.0 };
                    let half = ratio * (rel(s1, e1).powi(2) + rel(s0, e0).powi(2)).sqrt();
                    Some(SweepPoint {
                        x,
                        value: ratio,
                        lo: (ratio - half).max(0.0),
                        hi: ratio + half,
                    })
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            points.dedup_by(|a, b| a.x == b.x);
            SweepSeries { name, points }
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// The value of `metric` (`primary`, or a secondary metric's name) of every `series_param` value
/// over the numeric parameter `axis`, for entries of `benchmark` at `threads` threads, with the
/// metric's 99.9% half-width as the interval. An axis value with several entries of one series
/// (other parameters differing) keeps the first; the caller fixes them first.
pub fn values_from_entries(
    entries: &[JmhEntry],
    benchmark: &str,
    axis: &str,
    series_param: &str,
    metric: &str,
    threads: u64,
) -> Vec<SweepSeries> {
    let mut out: Vec<SweepSeries> = Vec::new();
    for e in entries
        .iter()
        .filter(|e| e.benchmark.ends_with(benchmark) && e.threads == threads)
    {
        let m = if metric == "primary" {
            Some(&e.primary_metric)
        } else {
            e.secondary_metrics.get(metric)
        };
        let (Some(m), Some(name), Some(x)) = (
            m,
            param(e, series_param),
            param(e, axis).and_then(|v| v.parse::<f64>().ok()),
        ) else {
            continue;
        };
        let (value, err) = (m.score.0, m.score_error.0);
        if !value.is_finite() {
            continue;
        }
        let half = if err.is_finite() { err } else { 0.0 };
        let point = SweepPoint {
            x,
            value,
            lo: (value - half).max(0.0),
            hi: value + half,
        };
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => out.push(SweepSeries {
                name: name.to_string(),
                points: vec![point],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        s.points.dedup_by(|a, b| a.x == b.x);
    }
    out
}

/// Draws `series` (ratio against `axis_label`), a reference line at 1, the intervals as bars and
/// each crossing of 1 as a vertical dashed mark labelled with where it lies. Returns SVG text.
pub fn ratio_over_parameter(
    series: &[SweepSeries],
    axis_label: &str,
    ratio_label: &str,
    title: &str,
    subtitle: &str,
) -> Result<String, PlotError> {
    over_parameter(series, axis_label, ratio_label, title, subtitle, true)
}

/// Draws `series` (a metric's value labelled `value_label` against `axis_label`) with the
/// intervals as bars: on a log axis when all values are positive and spread over 10x, else on a
/// linear axis from 0 (counts that are 0 somewhere). Returns SVG text.
pub fn values_over_parameter(
    series: &[SweepSeries],
    axis_label: &str,
    value_label: &str,
    title: &str,
    subtitle: &str,
) -> Result<String, PlotError> {
    over_parameter(series, axis_label, value_label, title, subtitle, false)
}

/// The chart of both: `ratio` adds the line at 1 and the crossings, and keeps 1 in range.
fn over_parameter(
    series: &[SweepSeries],
    axis_label: &str,
    value_label: &str,
    title: &str,
    subtitle: &str,
    ratio: bool,
) -> Result<String, PlotError> {
    let xs: Vec<f64> = {
        let mut v: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.x))
            .collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    if xs.is_empty() {
        return Err(PlotError::NoScores {
            benchmark: title.to_string(),
        });
    }
    let (xmin, xmax) = (xs[0], xs[xs.len() - 1]);
    let pad = ((xmax - xmin) * 0.05).max(0.5);
    let x = Axis {
        log_base: None,
        range: (xmin - pad)..(xmax + pad),
        ticks: xs.clone(),
    };
    let start = if ratio {
        (1.0, 1.0)
    } else {
        (f64::INFINITY, f64::NEG_INFINITY)
    };
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.points.iter())
        .fold(start, |(a, b), p| {
            (a.min(p.value), b.max(p.hi.min(4.0 * p.value)))
        });
    let y = if ratio {
        Axis::values(lo.max(1e-3), hi, hi / lo.max(1e-3) > 10.0)
    } else {
        Axis::values(lo, hi.max(lo), lo > 0.0 && hi / lo > 10.0)
    };
    let found = if ratio { crossings(series) } else { Vec::new() };
    let mut svg = String::new();
    {
        let page = titled_page(&mut svg, title)?;
        let mut chart = chart_on(&page, subtitle, x.coord(), y.coord())?;
        let xf = |v: &f64| compact(*v);
        let yf = |v: &f64| compact(y.value_at(*v));
        let y_desc = if y.log_base.is_some() {
            format!("{value_label}, log scale")
        } else {
            value_label.to_string()
        };
        draw_mesh(&mut chart, |m| {
            m.x_desc(axis_label)
                .y_desc(y_desc)
                .x_label_formatter(&xf)
                .y_label_formatter(&yf);
        })?;
        let one = y.to_drawn(1.0);
        if ratio {
            chart
                .draw_series([PathElement::new(
                    vec![(x.range.start, one), (x.range.end, one)],
                    BLACK.stroke_width(1),
                )])
                .map_err(draw_err)?;
        }
        for (i, s) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let drawn: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|p| (p.x, y.to_drawn(p.value)))
                .collect();
            draw_line(&mut chart, &drawn, color, s.name.clone())?;
            let (ylo, yhi) = (y.value_at(y.range.start), y.value_at(y.range.end));
            for p in &s.points {
                let (a, b) = (y.to_drawn(p.lo.max(ylo)), y.to_drawn(p.hi.min(yhi)));
                chart
                    .draw_series([PathElement::new(
                        vec![(p.x, a), (p.x, b)],
                        color.stroke_width(1),
                    )])
                    .map_err(draw_err)?;
            }
            for c in found.iter().filter(|c| c.series == s.name) {
                let style = color
                    .mix(if c.resolved { 0.9 } else { 0.4 })
                    .stroke_width(1);
                let dashes = (0..20).map(|k| {
                    let t = |j: f64| y.range.start + (y.range.end - y.range.start) * j / 20.0;
                    PathElement::new(vec![(c.at, t(k as f64)), (c.at, t(k as f64 + 0.5))], style)
                });
                chart.draw_series(dashes).map_err(draw_err)?;
                chart
                    .draw_series([Text::new(
                        format!("{} = 1 at {}", s.name, compact(c.at)),
                        (c.at, one),
                        (FONT, 12).into_font().color(&color),
                    )])
                    .map_err(draw_err)?;
            }
        }
        finish(&mut chart, &page, SeriesLabelPosition::UpperRight)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_harness::format::read_entries;

    fn point(x: f64, value: f64, half: f64) -> SweepPoint {
        SweepPoint {
            x,
            value,
            lo: value - half,
            hi: value + half,
        }
    }

    #[test]
    fn a_crossing_is_found_between_the_points_and_resolved_only_outside_the_noise() {
        let s = vec![
            SweepSeries {
                name: "a".into(),
                points: vec![
                    point(0.0, 0.5, 0.1),
                    point(2.0, 1.5, 0.1),
                    point(4.0, 1.2, 0.5),
                ],
            },
            SweepSeries {
                name: "b".into(),
                points: vec![point(0.0, 1.1, 0.2), point(2.0, 0.9, 0.05)],
            },
        ];
        let c = crossings(&s);
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(c[0].series, "a");
        assert_eq!(c[0].between, (0.0, 2.0));
        assert!((c[0].at - 1.0).abs() < 1e-9);
        assert!(c[0].resolved);
        assert_eq!(c[1].series, "b");
        assert!(!c[1].resolved, "b's first interval contains 1");
        let svg = ratio_over_parameter(&s, "puts", "ratio", "t", "sub").unwrap();
        assert!(svg.contains("a = 1 at 1"), "the crossing is labelled");
        assert!(svg.starts_with("<svg"));
    }

    fn entry(strategy: &str, puts: &str, threads: u64, score: f64) -> String {
        format!(
            r#"{{"benchmark":"critsec.registry.get_core_micro","mode":"thrpt","threads":{threads},"forks":1,"params":{{"strategy":"{strategy}","mdc_puts":"{puts}","cores":"10"}},"primaryMetric":{{"score":{score},"scoreError":{err},"scoreConfidence":[0,0],"scoreUnit":"ops/s","rawData":[[{score}]]}},"secondaryMetrics":{{}}}}"#,
            err = score / 10.0
        )
    }

    #[test]
    fn ratios_pair_each_series_with_the_baseline_at_the_same_point() {
        let text = format!(
            "[{}]",
            [
                entry("mutex", "0", 2, 100.0),
                entry("snapshot", "0", 2, 200.0),
                entry("mutex", "4", 2, 50.0),
                entry("snapshot", "4", 2, 25.0),
                entry("snapshot", "8", 2, 25.0), // no baseline: not paired
                entry("snapshot", "0", 8, 1.0),  // other thread count
            ]
            .join(",")
        );
        let entries = read_entries(&text, "test").unwrap();
        let s = ratios_from_entries(
            &entries,
            "get_core_micro",
            "mdc_puts",
            "strategy",
            "mutex",
            2,
        );
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, "snapshot");
        let r: Vec<(f64, f64)> = s[0].points.iter().map(|p| (p.x, p.value)).collect();
        assert_eq!(r, [(0.0, 2.0), (4.0, 0.5)]);
        let half = 2.0 * (0.1f64.powi(2) * 2.0).sqrt();
        assert!((s[0].points[0].hi - (2.0 + half)).abs() < 1e-9);
    }

    #[test]
    fn values_take_the_named_metric_per_series_at_one_thread_count() {
        let e = |protocol: &str, pause: &str, threads: u64, timeouts: f64| {
            format!(
                r#"{{"benchmark":"critsec.replication.ispn_perf","mode":"thrpt","threads":{threads},"forks":1,"params":{{"protocol":"{protocol}","gc_pause_ms":"{pause}"}},"primaryMetric":{{"score":1,"scoreError":0,"scoreConfidence":[0,0],"scoreUnit":"req/s/node","rawData":[[1]]}},"secondaryMetrics":{{"lock_timeouts":{{"score":{timeouts},"scoreError":2,"scoreConfidence":[0,0],"scoreUnit":"count","rawData":[[{timeouts}]]}}}}}}"#
            )
        };
        let text = format!(
            "[{}]",
            [
                e("lock-forwarding", "5", 1, 23.0),
                e("lock-forwarding", "0", 1, 0.0),
                e("key-queue", "0", 1, 0.0),
                e("key-queue", "0", 2, 9.0), // other thread count
            ]
            .join(",")
        );
        let entries = read_entries(&text, "test").unwrap();
        let s = values_from_entries(
            &entries,
            "ispn_perf",
            "gc_pause_ms",
            "protocol",
            "lock_timeouts",
            1,
        );
        type Point = (f64, f64, f64);
        let got: Vec<(&str, Vec<Point>)> = s
            .iter()
            .map(|s| {
                let p = s.points.iter().map(|p| (p.x, p.value, p.hi)).collect();
                (s.name.as_str(), p)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("lock-forwarding", vec![(0.0, 0.0, 2.0), (5.0, 23.0, 25.0)]),
                ("key-queue", vec![(0.0, 0.0, 2.0)]),
            ]
        );
        let svg =
            values_over_parameter(&s, "gc_pause_ms", "lock_timeouts (count)", "t", "sub").unwrap();
        assert!(svg.contains("lock_timeouts (count)") && !svg.contains("log scale"));
        assert!(!svg.contains("= 1 at"), "no crossings on a value chart");
    }
}
