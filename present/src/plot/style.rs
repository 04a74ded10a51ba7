//! The one look of every chart in the report, `ratio_plot`'s included: the page and its title,
//! the chart's margins, the grid and axes, series colours and line widths, the legend. A chart
//! draws with these and sets only what differs (axis descriptions, tick labels, its series), so
//! the report's charts cannot drift apart.

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::prelude::*;

use super::axes::Ticked;
use super::{PlotError, draw_err};

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
const SERIES_WIDTH: u32 = 2;

/// The page in pixels, and the one font family of every label.
const SIZE: (u32, u32) = (860, 520);
pub(crate) const FONT: &str = "sans-serif";

/// The chart type of every plot in the report: SVG, ticks where [`Axis`](super::axes::Axis) puts
/// them.
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
