//! Axes: an [`Axis`] is linear or logarithmic, with its drawn range and tick positions; the
//! [`Ticked`] coordinate makes plotters put its ticks exactly there; [`compact`] writes the
//! short numbers of tick and bar labels. Which scale an axis gets is each chart's decision.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

use crate::table::fmt_num;

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
    pub(super) fn new(range: std::ops::Range<f64>, ticks: Vec<f64>) -> Ticked {
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
