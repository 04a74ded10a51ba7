//! Axes of a ratio chart: the log y axis ([`RatioAxis`]: its range from the points and the
//! intervals that fit, its ticks spaced so that their labels cannot touch), the x axis's range,
//! ticks and the small offset that keeps series apart at one x value ([`XAxis`]); the
//! [`Ticked`] coordinate makes plotters put ticks exactly there; [`compact`] writes the short
//! numbers of tick labels.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

use super::{RatioChart, XValue};
use crate::table::fmt_num;

/// The least room between two tick labels of one axis, in pixels.
pub(crate) const TICK_GAP_PX: f64 = 22.0;

/// The log y axis of a ratio chart: 1, every point, and every interval end that lies within
/// the points' spread again on either side (at least x/÷ 1.25 beyond them). An interval end
/// beyond that is not drawn to scale: its bar stops at the axis's edge with an arrow, and its
/// value is in the table under the chart. So a far too wide interval cannot flatten the others.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioAxis {
    /// The lowest ratio drawn.
    pub low: f64,
    /// The highest ratio drawn.
    pub high: f64,
}

impl RatioAxis {
    /// The axis of `chart`'s points.
    pub fn of(chart: &RatioChart) -> RatioAxis {
        let points: Vec<_> = chart.series.iter().flat_map(|s| &s.points).collect();
        let (a, b) = points
            .iter()
            .map(|p| p.ratio.ln())
            .fold((0f64, 0f64), |(a, b), l| (a.min(l), b.max(l)));
        let reach = (0.5 * (b - a)).max(1.25f64.ln());
        let (mut lo, mut hi) = (a, b);
        for p in &points {
            let (l, h) = (p.low.ln(), p.high.ln());
            if l.is_finite() && l >= a - reach {
                lo = lo.min(l);
            }
            if h.is_finite() && h <= b + reach {
                hi = hi.max(h);
            }
        }
        // At least x/÷ 1.1 either side of the middle, so that a narrow chart still has ticks.
        let least = 1.2f64.ln();
        if hi - lo < least {
            let mid = (hi + lo) / 2.0;
            (lo, hi) = (mid - least / 2.0, mid + least / 2.0);
        }
        // Room for a marker at either end.
        let pad = 0.06 * (hi - lo);
        RatioAxis {
            low: (lo - pad).exp(),
            high: (hi + pad).exp(),
        }
    }

    /// Whether `v` lies on the axis (an interval end that does not is drawn as an arrow).
    pub fn fits(&self, v: f64) -> bool {
        v >= self.low && v <= self.high
    }

    /// The drawn range, in log10 space.
    pub(crate) fn drawn(&self) -> std::ops::Range<f64> {
        self.low.log10()..self.high.log10()
    }

    /// Tick ratios for an axis `height_px` tall. Over 3x or more: the sparsest of the 1-2-5
    /// family (then finer mantissas) that gives four ticks; narrower, where decades are of no
    /// help: even steps of 0.01, 0.02, 0.05, 0.1, ... (0.8, 0.9, 1, 1.1). Either way thinned
    /// so that neighbours are [`TICK_GAP_PX`] apart, 1 always among them.
    pub(crate) fn ticks(&self, height_px: f64) -> Vec<f64> {
        let range = self.drawn();
        let px_per_unit = height_px / (range.end - range.start).max(1e-9);
        let inside = |v: f64| range.contains(&v.log10());
        if self.high / self.low < 3.0 {
            let raw = (self.high - self.low) / 6.0;
            let mag = 10f64.powf(raw.log10().floor());
            for step in [1.0, 2.0, 5.0, 10.0, 20.0].map(|m| m * mag) {
                let first = (self.low / step).ceil() as i64;
                let last = (self.high / step).floor() as i64;
                // Rounded to the step's digits, so that 1 is exactly 1.
                let ticks: Vec<f64> = (first..=last)
                    .map(|i| ((i as f64 * step) / mag).round() * mag)
                    .filter(|v| inside(*v))
                    .collect();
                let spaced = ticks
                    .windows(2)
                    .all(|w| (w[1].log10() - w[0].log10()) * px_per_unit >= TICK_GAP_PX);
                if spaced && ticks.len() >= 2 {
                    return ticks;
                }
            }
        }
        let families: [&[f64]; 4] = [
            &[1.0],
            &[1.0, 2.0, 5.0],
            &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
            &[1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        ];
        let mut best = Vec::new();
        for mantissas in families {
            let mut ticks: Vec<f64> = Vec::new();
            for d in (range.start.floor() as i32 - 1)..=(range.end.ceil() as i32) {
                ticks.extend(
                    mantissas
                        .iter()
                        .map(|m| m * 10f64.powi(d))
                        .filter(|v| inside(*v)),
                );
            }
            ticks.sort_by(f64::total_cmp);
            best = thin(&ticks, px_per_unit);
            if best.len() >= 4 {
                break;
            }
        }
        best
    }
}

/// `ticks` (ascending) with those closer than [`TICK_GAP_PX`] to a kept neighbour dropped,
/// walking out from 1 (or the lowest) so that 1 stays.
fn thin(ticks: &[f64], px_per_unit: f64) -> Vec<f64> {
    let start = ticks
        .iter()
        .position(|t| (t - 1.0).abs() < 1e-9)
        .unwrap_or(0);
    let gap = |a: f64, b: f64| (a.log10() - b.log10()).abs() * px_per_unit;
    let mut kept = vec![];
    if let Some(&first) = ticks.get(start) {
        kept.push(first);
        let mut last = first;
        for &t in &ticks[start + 1..] {
            if gap(t, last) >= TICK_GAP_PX {
                kept.push(t);
                last = t;
            }
        }
        last = first;
        for &t in ticks[..start].iter().rev() {
            if gap(t, last) >= TICK_GAP_PX {
                kept.push(t);
                last = t;
            }
        }
    }
    kept.sort_by(f64::total_cmp);
    kept
}

/// The x axis: its drawn range, its ticks (positions and labels) and the offset of each series.
pub(crate) struct XAxis {
    pub(crate) range: std::ops::Range<f64>,
    pub(crate) ticks: Vec<(f64, String)>,
    /// The least distance between two x values, the unit of the series' offsets.
    gap: f64,
    series: usize,
}

impl XAxis {
    /// The axis of `xs` for `series` series, `width_px` wide: half a step beyond the ends, and
    /// tick labels thinned so that none touches the next (`char_px`: a label character's width).
    pub(crate) fn of(xs: &[XValue], series: usize, width_px: f64, char_px: f64) -> XAxis {
        let mut pos: Vec<f64> = xs.iter().map(|x| x.pos).collect();
        pos.sort_by(f64::total_cmp);
        let gap = pos
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|d| *d > 0.0)
            .fold(f64::INFINITY, f64::min);
        let gap = if gap.is_finite() { gap } else { 1.0 };
        let (first, last) = (
            pos.first().copied().unwrap_or(0.0),
            pos.last().copied().unwrap_or(0.0),
        );
        let pad = (gap / 2.0).max((last - first) * 0.04);
        let range = (first - pad)..(last + pad);
        let px = width_px / (range.end - range.start);
        let mut ticks: Vec<(f64, String)> = Vec::new();
        for x in xs {
            let half = |l: &str| l.chars().count() as f64 * char_px / 2.0;
            let clear = ticks
                .last()
                .is_none_or(|(p, l)| (x.pos - p) * px >= half(l) + half(&x.label) + 8.0);
            if clear {
                ticks.push((x.pos, x.label.clone()));
            }
        }
        XAxis {
            range,
            ticks,
            gap,
            series,
        }
    }

    /// Series `i`'s offset from its x values: the series side by side, within a third of a
    /// step, so that their markers and intervals do not cover each other.
    pub(crate) fn offset(&self, i: usize) -> f64 {
        let k = self.series.max(1) as f64;
        (i as f64 - (k - 1.0) / 2.0) * self.gap * 0.36 / k
    }
}

/// A linear f64 coordinate whose ticks are exactly the given points (plotters' own
/// `with_key_points` wrapper loses the formatting trait that custom tick labels need).
pub(crate) struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    pub(crate) fn new(range: std::ops::Range<f64>, ticks: Vec<f64>) -> Ticked {
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

/// The x values of an axis parameter's `values`: at their numbers when every value is one,
/// sorted; else in the given order, one step apart.
pub(crate) fn value_axis(values: &[String]) -> Vec<XValue> {
    let numbers: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
    let mut xs: Vec<XValue> = match numbers {
        Some(n) => values
            .iter()
            .zip(n)
            .map(|(v, pos)| XValue {
                label: v.clone(),
                pos,
            })
            .collect(),
        None => values
            .iter()
            .enumerate()
            .map(|(i, v)| XValue {
                label: v.clone(),
                pos: i as f64,
            })
            .collect(),
    };
    xs.sort_by(|a, b| a.pos.total_cmp(&b.pos));
    xs.dedup_by(|a, b| a.pos == b.pos);
    xs
}

/// A short number for ticks: grouped thousands from 10,000, else at most three significant
/// digits without trailing zeros (`1200`, `90`, `1.05`, `0.0123`).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::{RatioPoint, RatioSeries};

    fn chart(points: &[(f64, f64, f64)]) -> RatioChart {
        RatioChart {
            title: "t".into(),
            subtitle: String::new(),
            x_desc: "x".into(),
            baseline: "b".into(),
            xs: value_axis(&["0".into(), "1".into()]),
            series: vec![RatioSeries {
                name: "s".into(),
                points: points
                    .iter()
                    .map(|&(ratio, low, high)| RatioPoint {
                        x: 0,
                        ratio,
                        low,
                        high,
                        n: 8,
                        log_sd: 0.1,
                        confidence: 0.999,
                        seeds: false,
                        replicate_seconds: 1.0,
                    })
                    .collect(),
            }],
            missing: Vec::new(),
        }
    }

    #[test]
    fn the_axis_holds_one_the_points_and_the_intervals_that_fit_but_not_the_far_ones() {
        let axis = RatioAxis::of(&chart(&[
            (0.5, 0.45, 0.55),
            (2.0, 1.8, 2.2),
            (1.0, 0.01, 100.0),
        ]));
        for v in [1.0, 0.45, 2.2] {
            assert!(axis.fits(v), "{v} in {axis:?}");
        }
        assert!(!axis.fits(0.01) && !axis.fits(100.0), "{axis:?}");
        // Points near 1: the axis is narrow, with ticks finer than 1-2-5.
        let narrow = RatioAxis::of(&chart(&[(1.02, 0.98, 1.06)]));
        assert!(narrow.high < 1.15 && narrow.low > 0.85, "{narrow:?}");
        let ticks = narrow.ticks(400.0);
        assert!(ticks.len() >= 4 && ticks.contains(&1.0), "{ticks:?}");
        // Neighbouring ticks never closer than their labels need.
        for axis in [axis, narrow] {
            let t = axis.ticks(400.0);
            let px = 400.0 / (axis.drawn().end - axis.drawn().start);
            for w in t.windows(2) {
                assert!((w[1].log10() - w[0].log10()) * px >= TICK_GAP_PX, "{t:?}");
            }
        }
    }

    #[test]
    fn x_values_are_numbers_when_they_can_be_and_labels_never_crowd() {
        let xs = value_axis(&["10".into(), "2".into(), "0".into()]);
        let labels: Vec<&str> = xs.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["0", "2", "10"]);
        let named = value_axis(&["b".into(), "a".into()]);
        assert_eq!(named[1].pos, 1.0);
        // 0 and 1 of 0..100 on 200 px would overlap: 1 is dropped.
        let dense: Vec<String> = ["0", "1", "50", "100"].map(String::from).to_vec();
        let axis = XAxis::of(&value_axis(&dense), 2, 200.0, 6.0);
        let ticks: Vec<&str> = axis.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(ticks, ["0", "50", "100"]);
        assert!(axis.offset(0) < 0.0 && axis.offset(1) > 0.0);
    }

    #[test]
    fn compact_numbers() {
        assert_eq!(compact(1.05), "1.05");
        assert_eq!(compact(0.0123), "0.0123");
        assert_eq!(compact(12_000.0), "12,000");
        assert_eq!(compact(2.0), "2");
    }
}
