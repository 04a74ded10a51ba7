//! A chart of ratios to a baseline and what the report writes under it: each series' ratios
//! with their 99.9% intervals over replicates on a log axis with 1 drawn ([`draw`]), and a
//! table of the same ratios, the crossings of 1 and the ratios too noisy to read ([`notes`]).
//!
//! Readable by construction: no text is drawn inside the plot area (the legend and its key
//! have a column of their own, a crossing of 1 is a bar on the line with its name in the
//! table), the y axis is bounded by the points and the intervals that fit ([`RatioAxis`]: an
//! interval beyond it is an arrow at the edge, its value in the table), series sit side by
//! side at one x value, and a marker is hollow when its interval is wider than x/÷ 1.10.

use std::fmt::Write as _;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::paired::PLOT_PRECISION;
use crate::plot::axes::{RatioAxis, Ticked, XAxis, compact};
use crate::plot::style::{
    DESC_FONT, FONT, Key, LABEL_CHAR_PX, LABEL_FONT, LEGEND_WIDTH, MARGIN, SIZE, SUBTITLE_BAND,
    SUBTITLE_FONT, TITLE_FONT, X_LABEL_AREA, Y_LABEL_AREA, draw_marker, label, legend, line_on,
    look,
};
use crate::plot::{PlotError, RatioChart, RatioPoint, draw_err};
use crate::table::md_escape;
use crate::verdicts::ratio_text;

/// Where a series' interval moves from above 1 to below, or back.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    /// The series.
    pub series: String,
    /// Index of the series in its chart.
    pub index: usize,
    /// The x values (indices into the chart's) of the last point on one side and the first on
    /// the other: the crossing lies between them.
    pub between: (usize, usize),
    /// Whether the series goes from above 1 to below.
    pub downward: bool,
}

/// Every crossing of 1 in `chart`: consecutive points whose intervals lie wholly on opposite
/// sides of 1, points whose interval holds 1 in between. A series that only touches 1 within
/// its noise has none.
pub fn crossings(chart: &RatioChart) -> Vec<Crossing> {
    let mut out = Vec::new();
    for (index, s) in chart.series.iter().enumerate() {
        let mut last: Option<(usize, bool)> = None;
        for p in &s.points {
            let side = if p.low > 1.0 {
                Some(true)
            } else if p.high < 1.0 {
                Some(false)
            } else {
                None
            };
            let Some(above) = side else { continue };
            if let Some((x, was_above)) = last
                && was_above != above
            {
                out.push(Crossing {
                    series: s.name.clone(),
                    index,
                    between: (x, p.x),
                    downward: was_above,
                });
            }
            last = Some((p.x, above));
        }
    }
    out
}

/// Replicates that would likely bring `p`'s interval within x/÷ [`PLOT_PRECISION`] at its
/// spread and confidence (the t quantile shrinking as they grow); `None` when its spread is
/// unknown or the answer beyond 100,000.
pub fn replicates_to_settle(p: &RatioPoint) -> Option<usize> {
    if !(p.log_sd.is_finite() && p.log_sd > 0.0) {
        return None;
    }
    let goal = PLOT_PRECISION.ln();
    (p.n.max(2) + 1..=100_000).find(|&m| {
        let t = critsec_harness::stats::t_quantile(p.confidence, (m - 1) as f64);
        t * p.log_sd / (m as f64).sqrt() <= goal
    })
}

/// Whether `p`'s interval is wider than x/÷ [`PLOT_PRECISION`].
pub fn too_noisy(p: &RatioPoint) -> bool {
    p.half_width() > PLOT_PRECISION.ln() + 1e-12
}

/// The chart as SVG text.
pub fn draw(chart: &RatioChart) -> Result<String, PlotError> {
    if chart.series.iter().all(|s| s.points.is_empty()) {
        return Err(PlotError::Empty {
            title: chart.title.clone(),
        });
    }
    let axis = RatioAxis::of(chart);
    let found = crossings(chart);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let page = root
            .titled(&chart.title, (FONT, TITLE_FONT))
            .map_err(draw_err)?;
        let (band, body) = page.split_vertically(SUBTITLE_BAND);
        let (band_w, _) = band.dim_in_pixel();
        band.draw(&Text::new(
            chart.subtitle.clone(),
            (band_w as i32 / 2, 2),
            label(SUBTITLE_FONT, HPos::Center, VPos::Top),
        ))
        .map_err(draw_err)?;
        let (body_w, _) = body.dim_in_pixel();
        let (left, right) = body.split_horizontally(body_w - LEGEND_WIDTH);
        let (w, h) = left.dim_in_pixel();
        let plot_w = f64::from(w - 2 * MARGIN - Y_LABEL_AREA);
        let plot_h = f64::from(h - 2 * MARGIN - X_LABEL_AREA);
        let x = XAxis::of(&chart.xs, chart.series.len(), plot_w, LABEL_CHAR_PX);
        let y_ticks: Vec<f64> = axis.ticks(plot_h).iter().map(|t| t.log10()).collect();
        let x_ticks: Vec<f64> = x.ticks.iter().map(|(p, _)| *p).collect();
        let mut c = ChartBuilder::on(&left)
            .margin(MARGIN)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(
                Ticked::new(x.range.clone(), x_ticks),
                Ticked::new(axis.drawn(), y_ticks),
            )
            .map_err(draw_err)?;
        let x_label = |v: &f64| {
            x.ticks
                .iter()
                .find(|(p, _)| (p - v).abs() < 1e-9)
                .map(|(_, l)| l.clone())
                .unwrap_or_default()
        };
        let y_label = |v: &f64| compact(10f64.powf(*v));
        c.configure_mesh()
            .x_desc(chart.x_desc.clone())
            .y_desc(format!("ratio to {} (log scale)", chart.baseline))
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style((FONT, LABEL_FONT))
            .axis_desc_style((FONT, DESC_FONT))
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(228, 228, 228))
            .draw()
            .map_err(draw_err)?;
        let at = |px: f64, v: f64| c.backend_coord(&(px, v.log10()));
        let (x0, x1) = (x.range.start, x.range.end);
        let (y0, y1) = (axis.low, axis.high);
        let frame = RGBColor(120, 120, 120);
        root.draw(&Rectangle::new(
            [at(x0, y1), at(x1, y0)],
            frame.stroke_width(1),
        ))
        .map_err(draw_err)?;
        root.draw(&PathElement::new(
            vec![at(x0, 1.0), at(x1, 1.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(draw_err)?;
        let mut key = Key {
            crossing: !found.is_empty(),
            ..Key::default()
        };
        for (i, s) in chart.series.iter().enumerate() {
            let look = look(i);
            let off = x.offset(i);
            let pos = |p: &RatioPoint| chart.xs[p.x].pos + off;
            let line: Vec<(i32, i32)> = s.points.iter().map(|p| at(pos(p), p.ratio)).collect();
            if line.len() > 1 {
                line_on(&root, &line, &look)?;
            }
            for p in &s.points {
                let (px, _) = at(pos(p), 1.0);
                let (lo, hi) = (p.low.max(y0), p.high.min(y1));
                let (top, bottom) = (at(pos(p), hi).1, at(pos(p), lo).1);
                let style = look.colour.stroke_width(1);
                root.draw(&PathElement::new(vec![(px, top), (px, bottom)], style))
                    .map_err(draw_err)?;
                for (end, fits, dir) in
                    [(top, axis.fits(p.high), -1), (bottom, axis.fits(p.low), 1)]
                {
                    if fits {
                        root.draw(&PathElement::new(vec![(px - 4, end), (px + 4, end)], style))
                            .map_err(draw_err)?;
                    } else {
                        // An arrowhead whose tip is on the axis's edge, pointing out.
                        key.arrow = true;
                        let tip = vec![(px, end), (px - 5, end - 9 * dir), (px + 5, end - 9 * dir)];
                        root.draw(&Polygon::new(tip, look.colour.filled()))
                            .map_err(draw_err)?;
                    }
                }
            }
            for p in &s.points {
                let noisy = too_noisy(p);
                key.hollow |= noisy;
                draw_marker(&root, at(pos(p), p.ratio), &look, noisy, 2)?;
            }
        }
        for cr in &found {
            // A bar along 1 over the x interval the crossing lies in, below the line by the
            // series' rank so that two series' bars never cover each other.
            let look = look(cr.index);
            let off = x.offset(cr.index);
            let drop = 5 + 5 * cr.index as i32;
            let (a, _) = at(chart.xs[cr.between.0].pos + off, 1.0);
            let (b, y) = at(chart.xs[cr.between.1].pos + off, 1.0);
            let y = y + drop;
            let style = look.colour.stroke_width(3);
            root.draw(&PathElement::new(vec![(a, y), (b, y)], style))
                .map_err(draw_err)?;
            for end in [a, b] {
                root.draw(&PathElement::new(
                    vec![(end, y - 4), (end, y + 4)],
                    look.colour.stroke_width(1),
                ))
                .map_err(draw_err)?;
            }
        }
        let (lx, ly) = right.get_base_pixel();
        let names: Vec<String> = chart.series.iter().map(|s| s.name.clone()).collect();
        legend(
            &root,
            (lx + 8, ly + MARGIN as i32 + 10),
            &format!("ratio to {}:", chart.baseline),
            &names,
            key,
        )?;
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

/// How long `seconds` reads: `40 s`, `3.5 min`, `1.2 h`.
fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        "time unknown".into()
    } else if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.1} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// What the report writes under a chart: a table of its ratios (a row per x value, a column
/// per series: ratio [interval] (replicates)), the crossings of 1, the ratios too noisy to
/// read with what would settle them, and the points that could not be drawn.
pub fn notes(chart: &RatioChart) -> String {
    let axis = RatioAxis::of(chart);
    let mut md = String::new();
    let heads: Vec<String> = chart
        .series
        .iter()
        .map(|s| format!("{} / {}", md_escape(&s.name), md_escape(&chart.baseline)))
        .collect();
    let _ = writeln!(
        md,
        "| {} | {} |",
        md_escape(&chart.x_desc),
        heads.join(" | ")
    );
    let _ = writeln!(md, "|---|{}", "---|".repeat(heads.len()));
    for (xi, xv) in chart.xs.iter().enumerate() {
        let cells: Vec<String> = chart
            .series
            .iter()
            .map(|s| match s.points.iter().find(|p| p.x == xi) {
                Some(p) => {
                    let mut marks = String::new();
                    if too_noisy(p) {
                        marks.push_str(" †");
                    }
                    if !(axis.fits(p.low) && axis.fits(p.high)) {
                        marks.push_str(" ‡");
                    }
                    format!(
                        "{} [{}, {}] ({}){marks}",
                        ratio_text(p.ratio),
                        ratio_text(p.low),
                        ratio_text(p.high),
                        p.n
                    )
                }
                None => "-".into(),
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", md_escape(&xv.label), cells.join(" | "));
    }
    let seeds = chart.series.iter().flat_map(|s| &s.points).any(|p| p.seeds);
    let _ = writeln!(
        md,
        "\n(n): {}; †: interval wider than x/÷ {PLOT_PRECISION:.2}; ‡: interval beyond the chart's axis (an arrow there).\n",
        if seeds { "seeds" } else { "process pairs" }
    );
    let found = crossings(chart);
    if found.is_empty() {
        md.push_str("- Crossings of 1: none.\n");
    }
    for c in &found {
        let (a, b) = (&chart.xs[c.between.0].label, &chart.xs[c.between.1].label);
        let _ = writeln!(
            md,
            "- Crossing of 1: {} / {} goes from {} 1 at {} = {a} to {} 1 at {b}, so crosses it between them.",
            md_escape(&c.series),
            md_escape(&chart.baseline),
            if c.downward { "above" } else { "below" },
            md_escape(&chart.x_desc),
            if c.downward { "below" } else { "above" },
        );
    }
    for s in &chart.series {
        let noisy: Vec<String> = s
            .points
            .iter()
            .filter(|p| too_noisy(p))
            .map(|p| {
                let word = if p.seeds { "seeds" } else { "pairs" };
                let settle = match replicates_to_settle(p) {
                    Some(m) => format!(
                        "about {m} {word} would settle it, {} more",
                        duration((m - p.n) as f64 * p.replicate_seconds)
                    ),
                    None => "its spread is unknown".into(),
                };
                format!(
                    "{} (x/÷ {:.2} over {} {word}: {settle})",
                    md_escape(&chart.xs[p.x].label),
                    p.half_width().exp(),
                    p.n
                )
            })
            .collect();
        if !noisy.is_empty() {
            let _ = writeln!(
                md,
                "- Too noisy: {} at {} = {}.",
                md_escape(&s.name),
                md_escape(&chart.x_desc),
                noisy.join("; ")
            );
        }
    }
    for m in &chart.missing {
        let _ = writeln!(
            md,
            "- Not drawn: {} at {} = {}: {}.",
            md_escape(&m.series),
            md_escape(&chart.x_desc),
            md_escape(&m.x),
            md_escape(&m.why)
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::{RatioSeries, XValue};

    fn p(x: usize, ratio: f64, half: f64) -> RatioPoint {
        RatioPoint {
            x,
            ratio,
            low: ratio / half,
            high: ratio * half,
            n: 8,
            log_sd: 0.05,
            confidence: 0.999,
            seeds: false,
            replicate_seconds: 3.0,
        }
    }

    fn chart(series: Vec<(&str, Vec<RatioPoint>)>) -> RatioChart {
        RatioChart {
            title: "registry/get_core_micro, 1 thread".into(),
            subtitle: "sub".into(),
            x_desc: "mdc_puts".into(),
            baseline: "mutex".into(),
            xs: (0..5)
                .map(|i| XValue {
                    label: i.to_string(),
                    pos: i as f64,
                })
                .collect(),
            series: series
                .into_iter()
                .map(|(n, points)| RatioSeries {
                    name: n.into(),
                    points,
                })
                .collect(),
            missing: Vec::new(),
        }
    }

    #[test]
    fn a_crossing_is_where_the_interval_changes_side_and_is_listed_once() {
        let c = chart(vec![
            // Above, holding 1, holding 1, below: one crossing between 0 and 3.
            (
                "a",
                vec![
                    p(0, 1.5, 1.05),
                    p(1, 1.02, 1.05),
                    p(2, 0.98, 1.05),
                    p(3, 0.7, 1.05),
                ],
            ),
            // Wobbling about 1 within its noise: none.
            ("b", vec![p(0, 1.03, 1.1), p(1, 0.97, 1.1)]),
            // Below, then above: one, upward.
            ("c", vec![p(0, 0.5, 1.05), p(4, 2.0, 1.05)]),
        ]);
        let found = crossings(&c);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].between, found[0].downward), ((0, 3), true));
        assert_eq!((found[1].between, found[1].downward), ((0, 4), false));
        let md = notes(&c);
        assert!(
            md.contains("a / mutex goes from above 1 at mdc_puts = 0 to below 1 at 3"),
            "{md}"
        );
        assert_eq!(md.matches("Crossing of 1").count(), 2, "{md}");
    }

    #[test]
    fn a_wide_interval_is_too_noisy_with_what_would_settle_it() {
        let wide = RatioPoint {
            log_sd: 0.2,
            ..p(1, 1.1, 1.5)
        };
        let c = chart(vec![("a", vec![p(0, 1.2, 1.05), wide])]);
        let md = notes(&c);
        assert!(md.contains("| 1 | 1.100 [0.733, 1.650] (8) †"), "{md}");
        let m = replicates_to_settle(&wide).unwrap();
        // t ≈ 3.3 at many replicates: (3.3 · 0.2 / ln 1.1)² ≈ 48.
        assert!((40..70).contains(&m), "{m}");
        assert!(
            md.contains(&format!(
                "Too noisy: a at mdc_puts = 1 (x/÷ 1.50 over 8 pairs: about {m} pairs would settle it, "
            )),
            "{md}"
        );
        assert_eq!(md.matches("Too noisy").count(), 1, "{md}");
        // A narrow one needs nothing more, and one without a spread has no estimate.
        assert!(!too_noisy(&p(0, 1.0, 1.09)));
        assert_eq!(
            replicates_to_settle(&RatioPoint {
                log_sd: f64::NAN,
                ..wide
            }),
            None
        );
    }

    #[test]
    fn an_empty_chart_is_an_error_value() {
        let e = draw(&chart(vec![("a", Vec::new())])).unwrap_err();
        assert!(matches!(e, PlotError::Empty { .. }));
    }
}
