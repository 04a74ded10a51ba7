//! Latency percentiles as grouped bars: one group per percentile, one bar per series, each bar
//! labelled with its value. The axis is always logarithmic, since p99.9 is routinely orders of
//! magnitude above p50; the thread count is fixed like the other parameters (see `select`).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use critsec_harness::format::{JmhEntry, JmhMetric};

use super::axes::{Axis, Ticked, compact};
use super::select::{param, select, series_values, subtitle};
use super::style::{FONT, PALETTE, chart_on, draw_mesh, finish, swatch, titled_page};
use super::{PlotError, draw_err};
use crate::compare::unit_factor;

/// A percentile level parsed from `p50`, `p99.9` (our names) or `50.0` (JMH's keys).
fn level_of(s: &str) -> Option<f64> {
    s.strip_prefix('p')
        .unwrap_or(s)
        .parse::<f64>()
        .ok()
        .filter(|l| (0.0..=100.0).contains(l))
}

fn level_label(level: f64) -> String {
    format!("p{level}")
}

/// The levels JMH writes in `scorePercentiles` that a latency chart shows (0 and 100 are the
/// minimum and maximum, and the far tail beyond 99.99 is noise at benchmark sample sizes).
const SAMPLE_LEVELS: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// The percentiles `(level, value, unit)` of an entry under `prefix`.
fn percentiles(e: &JmhEntry, prefix: &str) -> Vec<(f64, f64, String)> {
    if prefix.is_empty() || prefix == "primary" {
        let m: &JmhMetric = &e.primary_metric;
        return m
            .score_percentiles
            .iter()
            .filter_map(|(k, v)| Some((level_of(k)?, v.0)))
            .filter(|(l, _)| SAMPLE_LEVELS.contains(l))
            .map(|(l, v)| (l, v, m.score_unit.clone()))
            .collect();
    }
    let dotted = format!("{prefix}.");
    e.secondary_metrics
        .iter()
        .filter_map(|(name, m)| {
            let level = level_of(name.strip_prefix(&dotted)?.strip_prefix('p')?)?;
            Some((level, m.score.0, m.score_unit.clone()))
        })
        .collect()
}

/// Latency percentiles of one benchmark as grouped bars: one group per percentile, one bar per
/// value of `series_param`, on a log axis. `metric_prefix` names secondary metrics
/// `<prefix>.p50`, `<prefix>.p99.9`, ... (e.g. `get`, `put`); an empty prefix (or `primary`) reads
/// the primary metric's `scorePercentiles`, as JMH writes them in sample mode.
pub fn latency_percentiles(
    entries: &[JmhEntry],
    benchmark: &str,
    series_param: &str,
    metric_prefix: &str,
    title: &str,
) -> Result<String, PlotError> {
    let sel = select(entries, benchmark, series_param, true)?;
    let mut unit: Option<String> = None;
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for name in series_values(&sel, series_param) {
        let Some(e) = sel
            .entries
            .iter()
            .find(|e| param(e, series_param) == Some(&name))
        else {
            continue;
        };
        let mut points = Vec::new();
        for (level, v, u) in percentiles(e, metric_prefix) {
            let target = unit.get_or_insert_with(|| u.clone()).clone();
            if let Some(f) = unit_factor(&u, &target)
                && (v * f).is_finite()
            {
                points.push((level, v * f));
            }
        }
        if !points.is_empty() {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            series.push((name, points));
        }
    }
    let Some(unit) = unit.filter(|_| !series.is_empty()) else {
        let mut available: Vec<String> = sel
            .entries
            .iter()
            .flat_map(|e| e.secondary_metrics.keys().cloned())
            .collect();
        available.sort();
        available.dedup();
        return Err(PlotError::NoPercentiles {
            benchmark: benchmark.into(),
            prefix: metric_prefix.into(),
            available,
        });
    };
    let mut levels: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.0))
        .collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    let positive: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.1))
        .filter(|v| *v > 0.0)
        .collect();
    let (vmin, vmax) = positive
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(*v), b.max(*v)));
    let (vmin, vmax) = if positive.is_empty() {
        (1.0, 10.0)
    } else {
        (vmin, vmax)
    };
    let y = Axis::values(vmin, vmax, true);
    let groups = levels.len() as f64;
    let x_ticks: Vec<f64> = (0..levels.len()).map(|i| i as f64 + 0.5).collect();
    let label_of = |v: &f64| {
        let i = (v - 0.5).round();
        if i >= 0.0 && (i as usize) < levels.len() {
            level_label(levels[i as usize])
        } else {
            String::new()
        }
    };
    let threads = sel.entries[0].threads;

    let mut svg = String::new();
    {
        let page = titled_page(&mut svg, title)?;
        let mut sub = subtitle(&sel, series_param);
        if !sel.fixed.iter().any(|f| f.starts_with("threads=")) {
            sub.push_str(&format!("; {threads} threads"));
        }
        let mut chart = chart_on(&page, &sub, Ticked::new(0.0..groups, x_ticks), y.coord())?;
        let yf = |v: &f64| compact(y.value_at(*v));
        let prefix = if metric_prefix.is_empty() || metric_prefix == "primary" {
            String::new()
        } else {
            format!("{metric_prefix} ")
        };
        draw_mesh(&mut chart, |m| {
            m.disable_x_mesh()
                .x_desc("percentile")
                .y_desc(format!("{prefix}latency ({unit}), log scale"))
                .x_label_formatter(&label_of)
                .y_label_formatter(&yf);
        })?;
        let n = series.len() as f64;
        let width = 0.8 / n;
        for (j, (name, points)) in series.iter().enumerate() {
            let color = PALETTE[j % PALETTE.len()];
            let bars: Vec<(f64, f64, f64)> = points
                .iter()
                .filter_map(|(level, v)| {
                    let i = levels.iter().position(|l| l == level)? as f64;
                    let x0 = i + 0.1 + j as f64 * width;
                    Some((x0, *v, y.to_drawn(*v).max(y.range.start)))
                })
                .collect();
            chart
                .draw_series(bars.iter().map(|&(x0, _, top)| {
                    Rectangle::new([(x0, y.range.start), (x0 + width, top)], color.filled())
                }))
                .map_err(draw_err)?
                .label(format!("{series_param}={name}"))
                .legend(swatch(color));
            chart
                .draw_series(bars.iter().map(|&(x0, v, top)| {
                    EmptyElement::at((x0 + width / 2.0, top))
                        + Text::new(
                            compact(v),
                            (0, -4),
                            (FONT, 10)
                                .into_font()
                                .color(&RGBColor(60, 60, 60))
                                .pos(Pos::new(HPos::Center, VPos::Bottom)),
                        )
                }))
                .map_err(draw_err)?;
        }
        finish(&mut chart, &page, SeriesLabelPosition::UpperLeft)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::testutil::{count, entry, metric};
    use critsec_harness::format::JmhNumber;

    fn cluster() -> Vec<JmhEntry> {
        let mut out = Vec::new();
        for (protocol, k) in [
            ("lock-forwarding", 40.0),
            ("key-queue", 3.0),
            ("triangle", 2.0),
        ] {
            for t in [4u64, 8, 8] {
                let sec: Vec<(String, f64)> =
                    [("p50", 1.0), ("p90", 3.0), ("p99", 20.0), ("p99.9", 90.0)]
                        .iter()
                        .flat_map(|(l, m)| {
                            [
                                (format!("get.{l}"), m * k * 10.0),
                                (format!("put.{l}"), m * k * 30.0),
                            ]
                        })
                        .collect();
                let sec: Vec<(&str, f64, &str)> =
                    sec.iter().map(|(n, v)| (n.as_str(), *v, "us")).collect();
                out.push(entry(
                    "replication.ispn_perf",
                    t,
                    &[("protocol", protocol)],
                    metric(1000.0, 10.0, "req/s"),
                    &sec,
                ));
            }
        }
        out
    }

    #[test]
    fn latency_chart_groups_percentiles_by_series() {
        let svg = latency_percentiles(
            &cluster(),
            "replication.ispn_perf",
            "protocol",
            "put",
            "PUT latency",
        )
        .unwrap();
        assert!(svg.contains("put latency (us), log scale"));
        assert!(svg.contains(">\npercentile\n<"));
        for p in ["p50", "p90", "p99", "p99.9"] {
            assert!(svg.contains(&format!(">\n{p}\n<")), "x label {p}");
        }
        for s in ["lock-forwarding", "key-queue", "triangle"] {
            assert!(svg.contains(&format!(">\nprotocol={s}\n<")), "legend {s}");
        }
        // Four bars per series plus its legend swatch, in the series colour.
        assert_eq!(count(&svg, "fill=\"#0072B2\""), 5, "{svg}");
        assert_eq!(count(&svg, "fill=\"#D55E00\""), 5);
        // Threads 8 is the most common count: it is chosen and stated.
        assert!(svg.contains("threads=8"));
        // Bar values are printed: lock-forwarding's p99.9 is 90 * 40 * 30 = 108,000 us.
        assert!(svg.contains(">\n108,000\n<"));
    }

    #[test]
    fn latency_chart_reads_sample_mode_percentiles() {
        let entries: Vec<JmhEntry> = [("a", 1.0), ("b", 50.0)]
            .iter()
            .map(|(s, k)| {
                let mut m = metric(2.0 * k, 0.1, "us/op");
                for (l, v) in [
                    ("0.0", 0.5),
                    ("50.0", 1.0),
                    ("90.0", 2.0),
                    ("99.0", 9.0),
                    ("99.9", 40.0),
                    ("100.0", 900.0),
                ] {
                    m.score_percentiles.insert(l.into(), JmhNumber(v * k));
                }
                let mut e = entry("b.B.get", 2, &[("impl", s)], m, &[]);
                e.mode = "sample".into();
                e
            })
            .collect();
        let svg = latency_percentiles(&entries, "b.B.get", "impl", "", "sampled").unwrap();
        assert!(svg.contains("latency (us/op), log scale"));
        assert!(svg.contains(">\np99.9\n<") && !svg.contains(">\np100\n<"));
        assert!(svg.contains(">\nimpl=a\n<") && svg.contains(">\nimpl=b\n<"));
    }

    #[test]
    fn a_narrow_log_axis_still_has_ticks() {
        let entries: Vec<JmhEntry> = ["a", "b"]
            .iter()
            .map(|s| {
                let sec = [("get.p50", 3000.0, "us"), ("get.p99", 3100.0, "us")];
                entry(
                    "x.y",
                    1,
                    &[("strategy", s)],
                    metric(1.0, 0.0, "ops/s"),
                    &sec,
                )
            })
            .collect();
        let svg = latency_percentiles(&entries, "x.y", "strategy", "get", "t").unwrap();
        assert!(
            svg.contains(">\n2000\n<") && svg.contains(">\n5000\n<"),
            "{svg}"
        );
    }
}
