//! SVG charts for `critsec report`: throughput against threads, and latency percentiles; and the
//! page, chart, mesh and legend style every chart of the report shares (also `ratio_plot`'s).
//!
//! Both functions are pure: JMH entries in, SVG text out (plotters' SVG backend, which writes
//! `<text>` elements itself and needs no font files). They plot one benchmark, with one series
//! per value of a parameter (usually `strategy`).
//!
//! Choosing entries: the other parameters of the benchmark are each fixed at their most common
//! value (ties go to the value seen first in the file), and so is the mode; the latency chart
//! also fixes the thread count (most common, ties to the largest). Every fixed choice that had
//! alternatives is printed under the title, so a chart never mixes configurations silently, and
//! so is any series value left without data by those choices. A report that wants one chart per
//! combination filters the entries first and calls once per combination: with one value left,
//! nothing needs choosing.
//!
//! Scales: threads on a log2 axis when they span 8x or more (thread sweeps double); scores on a
//! log axis when they spread more than 10x (a snapshot strategy can be 100x a mutex under
//! contention, which would flatten the others on a linear axis); latency percentiles always on a
//! log axis, since p99.9 is routinely orders of magnitude above p50. Axis ticks are placed at the
//! data's thread counts and at 1-2-5 steps, with the unit in the axis label.

use std::collections::BTreeMap;

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::compare::unit_factor;
use crate::table::fmt_num;
use critsec_harness::format::jmh::{JmhEntry, JmhMetric, benchmark_name};

/// Why a chart could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlotError {
    /// No entry has this benchmark name.
    #[error("no entry for benchmark `{benchmark}`; benchmarks present: {}", available.join(", "))]
    NoEntries {
        /// The benchmark asked for.
        benchmark: String,
        /// The benchmarks the entries have.
        available: Vec<String>,
    },
    /// The benchmark's entries lack the series parameter.
    #[error("benchmark `{benchmark}` has no parameter `{param}`; its parameters: {}", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    NoSeriesParam {
        /// The benchmark.
        benchmark: String,
        /// The series parameter asked for.
        param: String,
        /// The parameters its entries have.
        available: Vec<String>,
    },
    /// No entry has a finite positive score to plot.
    #[error("benchmark `{benchmark}` has no finite score to plot")]
    NoScores {
        /// The benchmark.
        benchmark: String,
    },
    /// No entry has latency percentiles under this prefix.
    #[error("benchmark `{benchmark}` has no percentiles for `{prefix}` (looked for secondary metrics `{prefix}.p50`, `{prefix}.p99`, ...; an empty prefix means the primary metric's scorePercentiles); its secondary metrics: {}", available.join(", "))]
    NoPercentiles {
        /// The benchmark.
        benchmark: String,
        /// The metric prefix asked for.
        prefix: String,
        /// The secondary metrics its entries have.
        available: Vec<String>,
    },
    /// plotters failed to draw (it should not, into a string).
    #[error("drawing failed: {0}")]
    Draw(String),
}

pub(crate) fn draw_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// Colour-blind-safe series colours (Okabe and Ito), in order.
pub(crate) const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// Width of a series line; other lines (mesh, axes, error bars) are thinner, so a series is
/// the only `stroke-width="2"` polyline in the SVG.
pub(crate) const SERIES_WIDTH: u32 = 2;

pub(crate) const SIZE: (u32, u32) = (860, 520);
pub(crate) const FONT: &str = "sans-serif";

/// The chart type of every plot in the report: SVG, ticks where [`Axis`] puts them.
pub(crate) type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;

/// A white SVG page of the report's size in `svg`, with `title` at the top: where every chart
/// is drawn.
pub(crate) fn titled_page<'s>(
    svg: &'s mut String,
    title: &str,
) -> Result<DrawingArea<SVGBackend<'s>, Shift>, PlotError> {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    root.titled(title, (FONT, 22)).map_err(draw_err)
}

/// A chart over `x` and `y` on `page`, captioned `subtitle`, with the report's margins.
pub(crate) fn chart_on<'a, 'b>(
    page: &'a DrawingArea<SVGBackend<'b>, Shift>,
    subtitle: &str,
    x: Ticked,
    y: Ticked,
) -> Result<Chart<'a, 'b>, PlotError> {
    ChartBuilder::on(page)
        .caption(subtitle, (FONT, 13))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(90)
        .build_cartesian_2d(x, y)
        .map_err(draw_err)
}

/// Draws the grid and axes in the report's style; `axes` sets what differs per chart (the
/// axis descriptions and tick labels).
pub(crate) fn draw_mesh<'a, 'b, 'm>(
    chart: &'m mut Chart<'a, 'b>,
    axes: impl FnOnce(&mut MeshStyle<'a, 'm, Ticked, Ticked, SVGBackend<'b>>),
) -> Result<(), PlotError> {
    let mut mesh = chart.configure_mesh();
    axes(&mut mesh);
    mesh.label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(draw_err)
}

/// A series' swatch in the legend: a small filled box of its colour.
pub(crate) fn swatch(color: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], color.filled())
}

/// Draws one series: its line (labelled in the legend) and a dot at each point.
pub(crate) fn draw_line(
    chart: &mut Chart<'_, '_>,
    drawn: &[(f64, f64)],
    color: RGBColor,
    label: String,
) -> Result<(), PlotError> {
    chart
        .draw_series(LineSeries::new(
            drawn.iter().copied(),
            color.stroke_width(SERIES_WIDTH),
        ))
        .map_err(draw_err)?
        .label(label)
        .legend(swatch(color));
    chart
        .draw_series(drawn.iter().map(|p| Circle::new(*p, 4, color.filled())))
        .map_err(draw_err)?;
    Ok(())
}

/// Draws the legend of the labelled series at `at`, then presents `page`.
pub(crate) fn finish<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    page: &DrawingArea<SVGBackend<'b>, Shift>,
    at: SeriesLabelPosition,
) -> Result<(), PlotError> {
    chart
        .configure_series_labels()
        .position(at)
        .label_font((FONT, 13))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .draw()
        .map_err(draw_err)?;
    page.present().map_err(draw_err)
}

/// The entries a chart plots, and the choices made to get them.
struct Selection<'a> {
    entries: Vec<&'a JmhEntry>,
    /// `name=value` choices among several values, for the subtitle.
    fixed: Vec<String>,
    /// Series values with entries only at other choices: named in the subtitle, not drawn.
    dropped: Vec<String>,
}

/// The most common value; ties go to the first seen.
fn most_common<T: Clone + PartialEq>(values: &[T]) -> Option<T> {
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

pub(crate) fn param<'e>(e: &'e JmhEntry, name: &str) -> Option<&'e str> {
    e.params.as_ref()?.get(name).map(String::as_str)
}

fn select<'a>(
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
fn series_values(sel: &Selection<'_>, series_param: &str) -> Vec<String> {
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

/// An axis: whether values are drawn as logarithms, the drawn range and the tick positions
/// (both in drawn space, i.e. already `log10`/`log2` when logarithmic).
pub(crate) struct Axis {
    pub(crate) log_base: Option<f64>,
    pub(crate) range: std::ops::Range<f64>,
    pub(crate) ticks: Vec<f64>,
}

impl Axis {
    pub(crate) fn to_drawn(&self, v: f64) -> f64 {
        match self.log_base {
            Some(b) => v.max(f64::MIN_POSITIVE).log(b),
            None => v,
        }
    }

    pub(crate) fn value_at(&self, v: f64) -> f64 {
        match self.log_base {
            Some(b) => b.powf(v),
            None => v,
        }
    }

    pub(crate) fn coord(&self) -> Ticked {
        Ticked::new(self.range.clone(), self.ticks.clone())
    }

    /// A value axis over `[lo, hi]`: log10 when `log`, else linear from 0; ticks at 1-2-5
    /// steps. The top quarter is left empty so the legend does not cover data.
    pub(crate) fn values(lo: f64, hi: f64, log: bool) -> Axis {
        if log {
            let (a, b) = (lo.log10(), hi.log10());
            let span = (b - a).max(0.5);
            let range = (a - 0.05 * span)..(b + 0.3 * span);
            let mut ticks = Vec::new();
            for dense in [true, false] {
                ticks.clear();
                for d in range.start.floor() as i32..=range.end.ceil() as i32 {
                    for m in [1.0, 2.0, 5.0] {
                        let t = (m * 10f64.powi(d)).log10();
                        if (dense || m == 1.0) && range.contains(&t) {
                            ticks.push(t);
                        }
                    }
                }
                if ticks.len() <= 10 {
                    break;
                }
            }
            let mut range = range;
            if ticks.len() < 2 {
                // A narrow range between two 1-2-5 values: widen it to the values around it.
                let steps = |d: i32| [1.0, 2.0, 5.0].map(|m| (m * 10f64.powi(d)).log10());
                let around: Vec<f64> = (range.start.floor() as i32 - 1..=range.end.ceil() as i32)
                    .flat_map(steps)
                    .collect();
                let below = around
                    .iter()
                    .copied()
                    .filter(|t| *t <= range.start)
                    .fold(f64::NEG_INFINITY, f64::max);
                let above = around
                    .iter()
                    .copied()
                    .filter(|t| *t >= range.end)
                    .fold(f64::INFINITY, f64::min);
                range = below..above;
                ticks = around
                    .into_iter()
                    .filter(|t| range.contains(t) || *t == above)
                    .collect();
            }
            Axis {
                log_base: Some(10.0),
                range,
                ticks,
            }
        } else {
            let top = if hi > 0.0 { hi * 1.3 } else { 1.0 };
            let step = nice_step(top / 6.0);
            let ticks = (0..=((top / step).ceil() as usize))
                .map(|i| i as f64 * step)
                .collect();
            Axis {
                log_base: None,
                range: 0.0..(top / step).ceil() * step,
                ticks,
            }
        }
    }
}

/// A linear f64 coordinate whose ticks are exactly the given points (plotters' own
/// `with_key_points` wrapper loses the formatting trait that custom tick labels need).
pub(crate) struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(range: std::ops::Range<f64>, ticks: Vec<f64>) -> Ticked {
        Ticked {
            inner: range.into(),
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// The 1-2-5 step at or above `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// A short number for ticks and bar labels: grouped thousands from 10,000, else at most three
/// significant digits without trailing zeros (`1200`, `90`, `5.25`, `0.0123`).
pub(crate) fn compact(v: f64) -> String {
    if !v.is_finite() || v.abs() >= 1e4 {
        return fmt_num(v);
    }
    if v == 0.0 {
        return "0".into();
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn subtitle(sel: &Selection<'_>, series_param: &str) -> String {
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
type Point = (f64, f64, Option<f64>);

/// Throughput (the primary score) against threads for one benchmark, one line per value of
/// `series_param`, with 99.9% error bars where `scoreError` is finite. Returns the SVG text.
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
                    let err = Some(m.score_error.0 * f).filter(|x| x.is_finite() && *x > 0.0);
                    points.push((t, score, err));
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
    // An interval from few iterations can be many times its score (t(0.9995, 2) = 31.6); let
    // such a bar run off the top rather than squash every line against the x axis.
    let top = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.1 + x.2.unwrap_or(0.0).min(x.1)))
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
            // Error bars: the 99.9% interval, clipped to the axis (a log axis has no zero).
            let bars = points.iter().filter_map(|p| {
                let e = p.2?;
                let lo = y.to_drawn((p.1 - e).max(y.value_at(y.range.start)));
                let hi = y.to_drawn((p.1 + e).min(y.value_at(y.range.end)));
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
    use std::collections::BTreeMap;

    use super::*;
    use critsec_harness::format::jmh::JmhNumber;

    fn metric(score: f64, error: f64, unit: &str) -> JmhMetric {
        JmhMetric {
            score: JmhNumber(score),
            score_error: JmhNumber(error),
            score_confidence: [JmhNumber(score - error), JmhNumber(score + error)],
            score_percentiles: BTreeMap::new(),
            score_unit: unit.into(),
            raw_data: None,
            raw_data_histogram: None,
        }
    }

    fn entry(
        benchmark: &str,
        threads: u64,
        params: &[(&str, &str)],
        primary: JmhMetric,
        secondary: &[(&str, f64, &str)],
    ) -> JmhEntry {
        JmhEntry {
            jmh_version: "1.37-critsec".into(),
            benchmark: benchmark.into(),
            mode: "thrpt".into(),
            threads,
            forks: 1,
            jvm: String::new(),
            jvm_args: Vec::new(),
            jdk_version: String::new(),
            vm_name: String::new(),
            vm_version: String::new(),
            warmup_iterations: 1,
            warmup_time: "1 s".into(),
            warmup_batch_size: 1,
            measurement_iterations: 3,
            measurement_time: "1 s".into(),
            measurement_batch_size: 1,
            params: Some(
                params
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            primary_metric: primary,
            secondary_metrics: secondary
                .iter()
                .map(|(n, v, u)| (n.to_string(), metric(*v, f64::NAN, u)))
                .collect(),
        }
    }

    /// A thread sweep of three strategies; the snapshot scales, the mutex collapses (>10x apart).
    fn sweep() -> Vec<JmhEntry> {
        let mut out = Vec::new();
        for (strategy, base, scale) in [
            ("mutex", 4.0e6, 0.6),
            ("rwlock", 5.0e6, 0.9),
            ("snapshot", 9.0e6, 1.9),
        ] {
            for (i, t) in [1u64, 2, 4, 8, 16].into_iter().enumerate() {
                let score = base * f64::powi(scale, i as i32);
                let p = [("strategy", strategy), ("cores", "10")];
                out.push(entry(
                    "registry.get_core_micro",
                    t,
                    &p,
                    metric(score, score * 0.05, "ops/s"),
                    &[],
                ));
            }
        }
        // A second core count at one point: the chart must fix `cores` at 10 and say so.
        out.push(entry(
            "registry.get_core_micro",
            4,
            &[("strategy", "mutex"), ("cores", "1000")],
            metric(1.0, 0.1, "ops/s"),
            &[],
        ));
        out
    }

    fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

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

    #[test]
    fn bad_input_is_an_error_value() {
        let e = throughput_vs_threads(&sweep(), "nope", "strategy", "t").unwrap_err();
        assert_eq!(
            e,
            PlotError::NoEntries {
                benchmark: "nope".into(),
                available: vec!["registry.get_core_micro".into()]
            }
        );
        let e = throughput_vs_threads(&sweep(), "registry.get_core_micro", "impl", "t")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no parameter `impl`; its parameters: cores, strategy"),
            "{e}"
        );
        let e = throughput_vs_threads(&[], "x", "strategy", "t").unwrap_err();
        assert!(matches!(e, PlotError::NoEntries { .. }));
        let e = latency_percentiles(&sweep(), "registry.get_core_micro", "strategy", "get", "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no percentiles for `get`"), "{e}");
        let mut plain = entry("x.y", 1, &[], metric(1.0, 0.0, "ops/s"), &[]);
        plain.params = None;
        let e = throughput_vs_threads(&[plain], "x.y", "strategy", "t")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("its parameters: none"), "{e}");
        let nan = entry(
            "x.y",
            1,
            &[("strategy", "a")],
            metric(f64::NAN, 0.0, "ops/s"),
            &[],
        );
        let e = throughput_vs_threads(&[nan], "x.y", "strategy", "t").unwrap_err();
        assert!(matches!(e, PlotError::NoScores { .. }));
    }

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
