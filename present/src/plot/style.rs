//! The one look of every chart in the report: the page and its parts, the fonts, each series'
//! colour, marker and dash, how a marker says "too noisy", and the legend beside the plot area.
//!
//! Series differ in three ways at once (colour, marker shape, dash pattern), so that a chart
//! printed in grey or read by a colour-blind reader still tells them apart; the colours are
//! Okabe and Ito's, ordered so that their greys differ too.
//!
//! What the layout test reads in the SVG, and so what drawing must keep: a data marker's
//! outline is the only `<circle>` with `stroke-width="2"` or closed `<polyline>` (first point =
//! last, four points or more) with `stroke-width="2"`; the plot area is the only `<rect>` with
//! `fill="none"`.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{PlotError, draw_err};

/// The page in pixels.
pub(crate) const SIZE: (u32, u32) = (900, 540);
/// The one font family of every label.
pub(crate) const FONT: &str = "sans-serif";
/// Font sizes as plotters takes them (it writes 1/1.24 of them into the SVG).
pub(crate) const TITLE_FONT: f64 = 22.0;
pub(crate) const SUBTITLE_FONT: f64 = 14.0;
pub(crate) const LABEL_FONT: f64 = 13.0;
pub(crate) const DESC_FONT: f64 = 15.0;
/// The SVG width of a character of a label, as plotters writes a [`LABEL_FONT`] label (a
/// generous average for sans-serif, so that tick labels never touch).
pub(crate) const LABEL_CHAR_PX: f64 = 0.6 * LABEL_FONT / 1.24;
/// The layout: the band under the title for the subtitle, the legend's column right of the
/// plot, the chart's margin and its label areas.
pub(crate) const SUBTITLE_BAND: u32 = 26;
pub(crate) const LEGEND_WIDTH: u32 = 190;
pub(crate) const MARGIN: u32 = 12;
pub(crate) const X_LABEL_AREA: u32 = 50;
pub(crate) const Y_LABEL_AREA: u32 = 78;

/// A data marker's size: half its width.
const MARKER: i32 = 5;

/// Series colours (Okabe and Ito): blue, orange, black, vermilion; their greys (0.299 R +
/// 0.587 G + 0.114 B) are 87, 162, 0 and 119, at least 30 apart.
pub(crate) const COLOURS: [RGBColor; 4] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
    RGBColor(213, 94, 0),
];

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
}

/// A line's dash pattern: (dash, gap) in pixels, or solid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dash {
    Solid,
    Dashed(i32, i32),
}

/// How series `i` is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Look {
    pub(crate) colour: RGBColor,
    pub(crate) marker: Marker,
    pub(crate) dash: Dash,
}

/// The look of series `i`; after four, the looks repeat with the next dash patterns.
pub(crate) fn look(i: usize) -> Look {
    const MARKERS: [Marker; 4] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
    ];
    const DASHES: [Dash; 5] = [
        Dash::Solid,
        Dash::Dashed(9, 5),
        Dash::Dashed(2, 4),
        Dash::Dashed(16, 5),
        Dash::Dashed(5, 3),
    ];
    Look {
        colour: COLOURS[i % COLOURS.len()],
        marker: MARKERS[i % MARKERS.len()],
        dash: DASHES[i % DASHES.len()],
    }
}

/// The outline of `marker` around (0, 0), in pixels, closed (its first point repeated).
fn outline(marker: Marker, r: i32) -> Vec<(i32, i32)> {
    let mut v = match marker {
        Marker::Circle => Vec::new(),
        Marker::Square => vec![(-r, -r), (r, -r), (r, r), (-r, r)],
        Marker::Triangle => vec![(0, -r - 1), (r + 1, r), (-r - 1, r)],
        Marker::Diamond => vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
    };
    if let Some(&first) = v.first() {
        v.push(first);
    }
    v
}

/// Draws a marker at `at` (pixels of `area`): filled with the series colour, or white when
/// `hollow` (an interval wider than the precision goal); its outline `width` pixels wide (2 for
/// data, 1 in the legend, which the layout test does not count as data).
pub(crate) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    look: &Look,
    hollow: bool,
    width: u32,
) -> Result<(), PlotError> {
    let fill = if hollow { WHITE } else { look.colour };
    let stroke = look.colour.stroke_width(width);
    let shape: Vec<(i32, i32)> = outline(look.marker, MARKER)
        .into_iter()
        .map(|(x, y)| (at.0 + x, at.1 + y))
        .collect();
    match look.marker {
        Marker::Circle => {
            area.draw(&Circle::new(at, MARKER as u32, fill.filled()))
                .map_err(draw_err)?;
            area.draw(&Circle::new(at, MARKER as u32, stroke))
        }
        _ => {
            area.draw(&Polygon::new(
                shape[..shape.len() - 1].to_vec(),
                fill.filled(),
            ))
            .map_err(draw_err)?;
            area.draw(&PathElement::new(shape, stroke))
        }
    }
    .map_err(draw_err)
}

/// Draws a line through `points` (pixel coordinates of `area`) in `look`'s colour and dash.
pub(crate) fn line_on<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: &[(i32, i32)],
    look: &Look,
) -> Result<(), PlotError> {
    let style = look.colour.stroke_width(2);
    match look.dash {
        Dash::Solid => area.draw(&PathElement::new(points.to_vec(), style)),
        Dash::Dashed(dash, gap) => area.draw(&DashedPathElement::new(
            points.iter().copied(),
            dash,
            gap,
            style,
        )),
    }
    .map_err(draw_err)
}

/// A label's style: `size` points of the report's font, anchored at `h`, `v`.
pub(crate) fn label(size: f64, h: HPos, v: VPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK).pos(Pos::new(h, v))
}

/// What the legend's key explains, when the chart has it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Key {
    pub(crate) hollow: bool,
    pub(crate) arrow: bool,
    pub(crate) crossing: bool,
}

/// Draws the legend at `origin` (pixels of `area`), right of the plot area: `heading`, each
/// series' line, marker and name, then the key of what else the chart shows.
pub(crate) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    origin: (i32, i32),
    heading: &str,
    names: &[String],
    key: Key,
) -> Result<(), PlotError> {
    let (x0, mut y) = origin;
    let text = |s: &str, at: (i32, i32)| {
        area.draw(&Text::new(
            s.to_string(),
            at,
            label(LABEL_FONT, HPos::Left, VPos::Center),
        ))
        .map_err(draw_err)
    };
    text(heading, (x0, y))?;
    y += 26;
    for (i, name) in names.iter().enumerate() {
        let look = look(i);
        line_on(area, &[(x0, y), (x0 + 40, y)], &look)?;
        draw_marker(area, (x0 + 20, y), &look, false, 1)?;
        text(name, (x0 + 48, y))?;
        y += 24;
    }
    y += 12;
    let grey = RGBColor(90, 90, 90);
    if key.hollow {
        let look = Look {
            colour: grey,
            marker: Marker::Circle,
            dash: Dash::Solid,
        };
        draw_marker(area, (x0 + 8, y), &look, true, 1)?;
        text("hollow: interval wider", (x0 + 20, y))?;
        text("than x/÷ 1.10", (x0 + 20, y + 16))?;
        y += 40;
    }
    if key.arrow {
        let tip = vec![(x0 + 8, y - 6), (x0 + 3, y + 4), (x0 + 13, y + 4)];
        area.draw(&Polygon::new(tip, grey.filled()))
            .map_err(draw_err)?;
        text("arrow: interval runs", (x0 + 20, y))?;
        text("off the axis (table)", (x0 + 20, y + 16))?;
        y += 40;
    }
    if key.crossing {
        area.draw(&PathElement::new(
            vec![(x0, y), (x0 + 16, y)],
            grey.stroke_width(3),
        ))
        .map_err(draw_err)?;
        text("bar on 1: a crossing", (x0 + 20, y))?;
        text("of 1 (listed below)", (x0 + 20, y + 16))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_differ_in_grey_marker_and_dash() {
        let grey =
            |c: RGBColor| 0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2);
        let looks: Vec<Look> = (0..4).map(look).collect();
        for (i, a) in looks.iter().enumerate() {
            for b in &looks[..i] {
                assert!(
                    (grey(a.colour) - grey(b.colour)).abs() >= 30.0,
                    "{a:?} {b:?}"
                );
                assert_ne!(a.marker, b.marker);
                assert_ne!(a.dash, b.dash);
            }
        }
        // Past four series the markers repeat, but not with the same dash.
        assert_ne!(look(4).dash, look(0).dash);
    }
}
