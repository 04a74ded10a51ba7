//! Throughput (the primary score) against threads: one line per series, with 99.9% error bars.
//!
//! Threads go on a log2 axis when they span 8x or more (thread sweeps double), with a tick at
//! each thread count; scores on a log axis when they spread more than 10x (a snapshot strategy
//! can be 100x a mutex under contention, which would flatten the others on a linear axis), else
//! on a linear axis from 0, ticked at 1-2-5 steps.

use plotters::prelude::*;

use critsec_harness::format::JmhEntry;

use super::axes::{Axis, compact};
use super::select::{most_common, param, select, series_values, subtitle};
use super::style::{PALETTE, chart_on, draw_line, draw_mesh, finish, titled_page};
use super::{PlotError, draw_err};
use crate::compare::unit_factor;
use crate::processes::over_processes;

/// What the primary score of a mode measures, for the y-axis label.
fn mode_words(mode: &str) -> &'static str {
    match mode {
        "thrpt" => "throughput",
        "avgt" => "average time per operation",
        "sample" => "mean sampled time per operation",
        "ss" => "single-shot time",
        _ => "score",
    }
}

/// A point of the throughput chart: threads, score, and the interval half-width if finite.
/// (threads, score, its 99.9% interval over processes).
type Point = (f64, f64, Option<(f64, f64)>);

/// Throughput (the primary score) against threads for one benchmark, one line per value of
/// `series_param`, with 99.9% error bars over processes where a point has two forks or more
/// ([`over_processes`]). Returns the SVG text.
/// In `avgt` or `sample` mode the primary score is a time per operation, and the y axis says so.
pub fn throughput_vs_threads(
    entries: &[JmhEntry],
    benchmark: &str,
    series_param: &str,
    title: &str,
) -> Result<String, PlotError> {
    let sel = select(entries, benchmark, series_param, false)?;
    let unit = most_common(
        &sel.entries
            .iter()
            .map(|e| e.primary_metric.score_unit.clone())
            .collect::<Vec<_>>(),
    )
    .unwrap_or_default();
    let mode = sel.entries[0].mode.clone();
    // (series, [(threads, score, error)]) in the unit chosen above.
    let series: Vec<(String, Vec<Point>)> = series_values(&sel, series_param)
        .into_iter()
        .map(|name| {
            let mut points: Vec<Point> = Vec::new();
            for e in sel
                .entries
                .iter()
                .filter(|e| param(e, series_param) == Some(&name))
            {
                let m = &e.primary_metric;
                let Some(f) = unit_factor(&m.score_unit, &unit) else {
                    continue;
                };
                let score = m.score.0 * f;
                let t = e.threads as f64;
                if score.is_finite() && !points.iter().any(|p| p.0 == t) {
                    let bounds = over_processes(m).map(|p| (p.low * f, p.high * f));
                    points.push((t, score, bounds));
                }
            }
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (name, points)
        })
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let all: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.1))
        .collect();
    let positive: Vec<f64> = all.iter().copied().filter(|v| *v > 0.0).collect();
    if all.is_empty() {
        return Err(PlotError::NoScores {
            benchmark: benchmark.into(),
        });
    }
    let threads: Vec<f64> = {
        let mut t: Vec<f64> = series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|x| x.0))
            .collect();
        t.sort_by(f64::total_cmp);
        t.dedup();
        t
    };
    let (tmin, tmax) = (threads[0], threads[threads.len() - 1]);
    let x_log = tmin >= 1.0 && tmax / tmin >= 8.0;
    let x = if x_log {
        Axis {
            log_base: Some(2.0),
            range: (tmin.log2() - 0.3)..(tmax.log2() + 0.3),
            ticks: threads.iter().map(|t| t.log2()).collect(),
        }
    } else {
        let pad = ((tmax - tmin) * 0.05).max(0.5);
        Axis {
            log_base: None,
            range: (tmin - pad).max(0.0)..(tmax + pad),
            ticks: {
                // At most about a dozen labels: every k-th thread count, always the last.
                let k = threads.len().div_ceil(12);
                let mut t: Vec<f64> = threads.iter().copied().step_by(k).collect();
                if t.last() != threads.last() {
                    t.extend(threads.last());
                }
                t
            },
        }
    };
    let (vmin, vmax) = positive
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(*v), b.max(*v)));
    let y_log = positive.len() == all.len() && vmax / vmin > 10.0;
    // An interval over few processes can be many times its score (t(0.9995, 1) = 637); let
    // such a bar run off the top rather than squash every line against the x axis.
    let top = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.2.map_or(x.1, |b| b.1.min(2.0 * x.1))))
        .fold(vmax, f64::max);
    let y = Axis::values(vmin, top, y_log);
    // The legend goes in the upper corner over the lower half of the data.
    let mid = (x.range.start + x.range.end) / 2.0;
    let side_max = |left: bool| {
        series
            .iter()
            .flat_map(|(_, p)| p.iter())
            .filter(|p| (x.to_drawn(p.0) < mid) == left)
            .map(|p| y.to_drawn(p.1))
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let legend_at = if side_max(true) <= side_max(false) {
        SeriesLabelPosition::UpperLeft
    } else {
        SeriesLabelPosition::UpperRight
    };

    let mut svg = String::new();
    {
        let page = titled_page(&mut svg, title)?;
        let mut chart = chart_on(&page, &subtitle(&sel, series_param), x.coord(), y.coord())?;
        let x_desc = if x_log {
            "threads (log2 scale)".to_string()
        } else {
            "threads".to_string()
        };
        let y_desc = format!(
            "{} ({unit}){}",
            mode_words(&mode),
            if y_log { ", log scale" } else { "" }
        );
        let xf = |v: &f64| compact(x.value_at(*v).round());
        let yf = |v: &f64| compact(y.value_at(*v));
        draw_mesh(&mut chart, |m| {
            m.x_desc(x_desc)
                .y_desc(y_desc)
                .x_label_formatter(&xf)
                .y_label_formatter(&yf);
        })?;
        for (i, (name, points)) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let drawn: Vec<(f64, f64)> = points
                .iter()
                .map(|p| (x.to_drawn(p.0), y.to_drawn(p.1)))
                .collect();
            draw_line(&mut chart, &drawn, color, format!("{series_param}={name}"))?;
            // Error bars: the 99.9% interval over processes (positive by construction), clipped
            // to the axis.
            let bars = points.iter().filter_map(|p| {
                let (low, high) = p.2?;
                let lo = y.to_drawn(low.max(y.value_at(y.range.start)));
                let hi = y.to_drawn(high.min(y.value_at(y.range.end)));
                Some((x.to_drawn(p.0), lo, hi))
            });
            for (bx, lo, hi) in bars {
                let style = color.stroke_width(1);
                chart
                    .draw_series([
                        EmptyElement::at((bx, lo)) + PathElement::new(vec![(-4, 0), (4, 0)], style),
                        EmptyElement::at((bx, hi)) + PathElement::new(vec![(-4, 0), (4, 0)], style),
                    ])
                    .map_err(draw_err)?;
                chart
                    .draw_series([PathElement::new(vec![(bx, lo), (bx, hi)], style)])
                    .map_err(draw_err)?;
            }
        }
        finish(&mut chart, &page, legend_at)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::testutil::{count, entry, metric, sweep};

    #[test]
    fn throughput_chart_has_labels_legend_and_one_line_per_series() {
        let svg = throughput_vs_threads(
            &sweep(),
            "registry/get_core_micro",
            "strategy",
            "Registry lookups",
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(svg.contains(">\nRegistry lookups\n<") || svg.contains("Registry lookups"));
        assert!(svg.contains("threads (log2 scale)"));
        assert!(svg.contains("throughput (ops/s), log scale"));
        for s in ["strategy=mutex", "strategy=rwlock", "strategy=snapshot"] {
            assert_eq!(count(&svg, &format!(">\n{s}\n<")), 1, "legend entry {s}");
        }
        assert!(svg.contains("fixed at the most common values: cores=10"));
        let mut more = sweep();
        more.push(entry(
            "registry.get_core_micro",
            1,
            &[("strategy", "striped"), ("cores", "1000")],
            metric(1.0, 0.1, "ops/s"),
            &[],
        ));
        let svg2 =
            throughput_vs_threads(&more, "registry.get_core_micro", "strategy", "t").unwrap();
        assert!(
            svg2.contains("no data there for strategy=striped"),
            "{svg2}"
        );
        // Exactly one thick polyline per series; tick labels at each thread count.
        assert_eq!(count(&svg, "stroke-width=\"2\" points="), 3, "{svg}");
        for t in ["1", "2", "4", "8", "16"] {
            assert!(svg.contains(&format!(">\n{t}\n<")), "x tick {t}");
        }
        // Five points and five error bars per series.
        assert_eq!(count(&svg, "<circle"), 15);
    }

    #[test]
    fn narrow_ranges_stay_linear() {
        let entries: Vec<JmhEntry> = [("a", 10.0), ("b", 12.0)]
            .iter()
            .flat_map(|(s, v)| {
                [1u64, 2].map(|t| {
                    entry(
                        "x.y",
                        t,
                        &[("strategy", s)],
                        metric(v * t as f64, f64::NAN, "ops/s"),
                        &[],
                    )
                })
            })
            .collect();
        let svg = throughput_vs_threads(&entries, "x.y", "strategy", "t").unwrap();
        assert!(svg.contains("throughput (ops/s)"));
        assert!(!svg.contains("log scale") && !svg.contains("log2"));
        assert_eq!(count(&svg, "stroke-width=\"2\" points="), 2);
    }
}
