//! What a chart of the report shows: ratios to a named baseline, each with its 99.9% interval
//! over replicates (process pairs or seeds), one series per contender, over an x axis of thread
//! counts, a parameter's values or latency percentiles ([`RatioChart`]). `crate::ratio_plot`
//! draws one as SVG and writes the table under it.
//!
//! - `select`: which outcomes of a plot's verdict file a chart draws, and where.
//! - `throughput`: the x axis of a plot against threads, and how a thread count reads.
//! - `latency`: the x axis of a latency plot: its percentiles.
//! - `axes`: the log ratio axis and its ticks, the x axis's positions.
//! - `style`: the one page, series look (colour, marker, dash) and legend of every chart.

pub(crate) mod axes;
mod latency;
mod select;
pub(crate) mod style;
mod throughput;

pub use axes::RatioAxis;
pub use select::charts;
pub use throughput::threads_words;

/// A chart: ratios of each series to the baseline at each x value.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioChart {
    /// The title: scenario, fixed parameters, thread count.
    pub title: String,
    /// What the ratios are of and over what, under the title.
    pub subtitle: String,
    /// The x axis's description.
    pub x_desc: String,
    /// The baseline every ratio divides by.
    pub baseline: String,
    /// The x values, in axis order.
    pub xs: Vec<XValue>,
    /// One series per contender.
    pub series: Vec<RatioSeries>,
    /// Points that have no interval, and why.
    pub missing: Vec<Missing>,
}

/// An x value: its label and its position on the axis (a log for thread counts that span 8x,
/// an index for percentiles).
#[derive(Debug, Clone, PartialEq)]
pub struct XValue {
    /// The value as the parameter or the metric names it.
    pub label: String,
    /// Where it is drawn.
    pub pos: f64,
}

/// A contender's ratios.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioSeries {
    /// The series value, e.g. a strategy.
    pub name: String,
    /// Its points, in x order.
    pub points: Vec<RatioPoint>,
}

/// One ratio with its interval over replicates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioPoint {
    /// Index into [`RatioChart::xs`].
    pub x: usize,
    /// Contender / baseline: the geometric mean over replicates.
    pub ratio: f64,
    /// The interval's lower end.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
    /// Replicates it is over.
    pub n: usize,
    /// The replicates' log-ratio standard deviation.
    pub log_sd: f64,
    /// The interval's confidence.
    pub confidence: f64,
    /// Whether a replicate is a seed (else a process pair).
    pub seeds: bool,
    /// Wall seconds one replicate of its group took.
    pub replicate_seconds: f64,
}

impl RatioPoint {
    /// The interval's log half-width: `ln(x/÷ factor)`.
    pub fn half_width(&self) -> f64 {
        (self.high / self.low).ln() / 2.0
    }
}

/// A point a plot should have but cannot draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    /// The series.
    pub series: String,
    /// The x value's label.
    pub x: String,
    /// Why (a failed check, an interrupted run, a single replicate).
    pub why: String,
}

/// Why a chart could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlotError {
    /// No point has an interval.
    #[error("no ratio with an interval to draw in `{title}`")]
    Empty {
        /// The chart's title.
        title: String,
    },
    /// plotters failed to draw (it should not, into a string).
    #[error("drawing failed: {0}")]
    Draw(String),
}

/// A plotters failure as a [`PlotError::Draw`].
pub(crate) fn draw_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}
