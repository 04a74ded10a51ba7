//! SVG chart of a ratio with its interval over a parameter axis, one series per strategy, with
//! the points where a series crosses 1 (the two sides swap places) marked.
//!
//! Generic on purpose: any sweep that asks "where does one design overtake another" is this
//! chart (the registry's MDC-puts sweep, a pause sweep). [`ratios_from_entries`] builds the
//! series from JMH entries: at each axis value, each series value's score over the baseline's
//! (same thread count, same other parameters), with an interval from the two 99.9% half-widths by
//! error propagation (`r * sqrt((e1/s1)^2 + (e2/s2)^2)`). That interval is JMH's, over iterations
//! (and forks when there are several), not the replicated verdict interval of `critsec
//! reproduce`; the chart says so under its title. [`ratio_over_parameter`] draws any series.

use crate::plot::{Axis, FONT, PALETTE, PlotError, SERIES_WIDTH, SIZE, compact, draw_err, param};
use critsec_harness::format::jmh::JmhEntry;
use plotters::prelude::*;

/// One point: the ratio at axis value `x` and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioPoint {
    /// The axis parameter's value.
    pub x: f64,
    /// Series score over baseline score.
    pub ratio: f64,
    /// The interval's lower end.
    pub lo: f64,
    /// The interval's upper end.
    pub hi: f64,
}

/// One series: a name (the series parameter's value) and its points, sorted by `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioSeries {
    /// The series parameter's value, e.g. a strategy id.
    pub name: String,
    /// Points sorted by axis value.
    pub points: Vec<RatioPoint>,
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
pub fn crossings(series: &[RatioSeries]) -> Vec<Crossing> {
    let mut out = Vec::new();
    for s in series {
        for w in s.points.windows(2) {
            let (a, b) = (w[0], w[1]);
            if (a.ratio - 1.0) * (b.ratio - 1.0) < 0.0 {
                let t = (1.0 - a.ratio) / (b.ratio - a.ratio);
                let excludes = |p: RatioPoint| p.lo > 1.0 || p.hi < 1.0;
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
) -> Vec<RatioSeries> {
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
            let mut points: Vec<RatioPoint> = chosen
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
                    Some(RatioPoint {
                        x,
                        ratio,
                        lo: (ratio - half).max(0.0),
                        hi: ratio + half,
                    })
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            points.dedup_by(|a, b| a.x == b.x);
            RatioSeries { name, points }
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// Draws `series` (ratio against `axis_label`), a reference line at 1, the intervals as bars and
/// each crossing of 1 as a vertical dashed mark labelled with where it lies. Returns SVG text.
pub fn ratio_over_parameter(
    series: &[RatioSeries],
    axis_label: &str,
    ratio_label: &str,
    title: &str,
    subtitle: &str,
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
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.points.iter())
        .fold((1.0f64, 1.0f64), |(a, b), p| {
            (a.min(p.ratio), b.max(p.hi.min(4.0 * p.ratio)))
        });
    let y = Axis::values(lo.max(1e-3), hi, hi / lo.max(1e-3) > 10.0);
    let found = crossings(series);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let root = root.titled(title, (FONT, 22)).map_err(draw_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(subtitle, (FONT, 13))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(90)
            .build_cartesian_2d(x.coord(), y.coord())
            .map_err(draw_err)?;
        let xf = |v: &f64| compact(*v);
        let yf = |v: &f64| compact(y.value_at(*v));
        chart
            .configure_mesh()
            .x_desc(axis_label)
            .y_desc(if y.log_base.is_some() {
                format!("{ratio_label}, log scale")
            } else {
                ratio_label.to_string()
            })
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()
            .map_err(draw_err)?;
        let one = y.to_drawn(1.0);
        chart
            .draw_series([PathElement::new(
                vec![(x.range.start, one), (x.range.end, one)],
                BLACK.stroke_width(1),
            )])
            .map_err(draw_err)?;
        for (i, s) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let drawn: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|p| (p.x, y.to_drawn(p.ratio)))
                .collect();
            chart
                .draw_series(LineSeries::new(
                    drawn.clone(),
                    color.stroke_width(SERIES_WIDTH),
                ))
                .map_err(draw_err)?
                .label(s.name.clone())
                .legend(move |(lx, ly)| {
                    Rectangle::new([(lx, ly - 5), (lx + 16, ly + 5)], color.filled())
                });
            chart
                .draw_series(drawn.iter().map(|p| Circle::new(*p, 4, color.filled())))
                .map_err(draw_err)?;
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
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .draw()
            .map_err(draw_err)?;
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_harness::format::jmh::read_entries;

    fn point(x: f64, ratio: f64, half: f64) -> RatioPoint {
        RatioPoint {
            x,
            ratio,
            lo: ratio - half,
            hi: ratio + half,
        }
    }

    #[test]
    fn a_crossing_is_found_between_the_points_and_resolved_only_outside_the_noise() {
        let s = vec![
            RatioSeries {
                name: "a".into(),
                points: vec![
                    point(0.0, 0.5, 0.1),
                    point(2.0, 1.5, 0.1),
                    point(4.0, 1.2, 0.5),
                ],
            },
            RatioSeries {
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
        let r: Vec<(f64, f64)> = s[0].points.iter().map(|p| (p.x, p.ratio)).collect();
        assert_eq!(r, [(0.0, 2.0), (4.0, 0.5)]);
        let half = 2.0 * (0.1f64.powi(2) * 2.0).sqrt();
        assert!((s[0].points[0].hi - (2.0 + half)).abs() < 1e-9);
    }
}
