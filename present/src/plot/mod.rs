//! SVG charts for `critsec report`: throughput against threads ([`throughput_vs_threads`]) and
//! latency percentiles ([`latency_percentiles`]), and the pieces every chart of the report
//! shares, `ratio_plot`'s included.
//!
//! Both functions are pure: JMH entries in, SVG text out (plotters' SVG backend, which writes
//! `<text>` elements itself and needs no font files). They plot one benchmark, with one series
//! per value of a parameter (usually `strategy`), and say under the title which entries they
//! chose; a chart that cannot be drawn is a [`PlotError`] value.
//!
//! - `style`: the one page, chart, mesh, series and legend style.
//! - `select`: which entries a chart plots, and the subtitle naming every choice made.
//! - `axes`: linear and log axes, their ticks and tick labels.
//! - `throughput`: throughput against threads.
//! - `latency`: latency percentiles as grouped bars.

pub(crate) mod axes;
mod latency;
pub(crate) mod select;
pub(crate) mod style;
#[cfg(test)]
mod testutil;
mod throughput;

pub use latency::latency_percentiles;
pub use throughput::throughput_vs_threads;

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

/// A plotters failure as a [`PlotError::Draw`].
pub(crate) fn draw_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use testutil::{entry, metric, sweep};

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
}
