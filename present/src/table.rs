//! The one text-table layout every terminal table of critsec uses, the one Markdown escaping
//! rule, and the number format of every table.
//!
//! Columns are padded to their widest cell and separated by two spaces, each left- or
//! right-aligned, trailing space trimmed; a cell may carry an ANSI colour that wraps its padded
//! text. Hand-written rather than a table crate because that is the whole of it (twenty lines),
//! and every critsec table, snapshot and published file already has exactly this layout.

use std::fmt::Write as _;

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Padded on the right (names, labels).
    Left,
    /// Padded on the left (numbers).
    Right,
}

/// An ANSI colour for one cell of a terminal table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// Green: significantly better.
    Green,
    /// Red: significantly worse.
    Red,
}

/// A terminal table: a header row, then body rows, each with optional lines printed below it.
#[derive(Debug, Clone, Default)]
pub struct Table {
    align: Vec<Align>,
    rows: Vec<Vec<(String, Option<Color>)>>,
    below: Vec<Vec<String>>,
}

impl Table {
    /// A table whose columns align as `align` says.
    pub fn new(align: &[Align]) -> Self {
        Table {
            align: align.to_vec(),
            ..Table::default()
        }
    }

    /// Adds a row of plain cells.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.colored_row(cells.into_iter().map(|c| (c.into(), None)))
    }

    /// Adds a row whose cells may carry a colour.
    pub fn colored_row(
        &mut self,
        cells: impl IntoIterator<Item = (String, Option<Color>)>,
    ) -> &mut Self {
        self.rows.push(cells.into_iter().collect());
        self.below.push(Vec::new());
        self
    }

    /// Lines printed under the last row, as they are (e.g. secondary metrics).
    pub fn below(&mut self, lines: Vec<String>) -> &mut Self {
        if let Some(last) = self.below.last_mut() {
            *last = lines;
        }
        self
    }

    /// The table as text; `color` turns cell colours into ANSI codes.
    pub fn render(&self, color: bool) -> String {
        let ncol = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..ncol)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|(s, _)| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for (row, lines) in self.rows.iter().zip(&self.below) {
            let mut line = String::new();
            for (c, (cell, tint)) in row.iter().enumerate() {
                let w = widths[c];
                let padded = match self.align.get(c).copied().unwrap_or(Align::Left) {
                    Align::Left => format!("{cell:<w$}"),
                    Align::Right => format!("{cell:>w$}"),
                };
                match tint.filter(|_| color) {
                    Some(Color::Green) => {
                        let _ = write!(line, "\x1b[32m{padded}\x1b[0m  ");
                    }
                    Some(Color::Red) => {
                        let _ = write!(line, "\x1b[31m{padded}\x1b[0m  ");
                    }
                    None => {
                        let _ = write!(line, "{padded}  ");
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
            for l in lines {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }
}

/// Text made safe for one Markdown table cell: pipes and asterisks escaped, line breaks folded.
pub fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('*', "\\*")
        .replace(['\n', '\r'], " ")
}

/// Formats a number for tables: 4 significant digits, thousands grouped where large.
pub fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "+INF".into()
        } else {
            "-INF".into()
        };
    }
    // Each branch starts where the one below would round up into it (99.9996 is `100.0`).
    let a = v.abs();
    if a >= 9_999.95 {
        let s = format!("{:.0}", v);
        let (sign, digits) = s.strip_prefix('-').map(|d| ("-", d)).unwrap_or(("", &s));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if a >= 99.999_5 {
        format!("{v:.1}")
    } else if a >= 0.999_95 {
        format!("{v:.3}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_colours_wrap_the_padded_cell() {
        let mut t = Table::new(&[Align::Left, Align::Right]);
        t.row(["Name", "Score"]);
        t.colored_row([
            ("a".to_string(), None),
            ("1.5".to_string(), Some(Color::Green)),
        ]);
        t.below(vec!["    :extra 1".into()]);
        assert_eq!(t.render(false), "Name  Score\na       1.5\n    :extra 1\n");
        assert_eq!(
            t.render(true),
            "Name  Score\na     \x1b[32m  1.5\x1b[0m\n    :extra 1\n"
        );
        assert_eq!(md_escape("a|b*c\nd"), "a\\|b\\*c d");
    }

    #[test]
    fn numbers_are_grouped_and_rounded() {
        assert_eq!(fmt_num(7_013_249.176), "7,013,249");
        assert_eq!(fmt_num(-12_345.0), "-12,345");
        assert_eq!(fmt_num(123.456), "123.5");
        assert_eq!(fmt_num(99.99995), "100.0");
        assert_eq!(fmt_num(9_999.96), "10,000");
        assert_eq!(fmt_num(0.99996), "1.000");
        assert_eq!(fmt_num(1.23456), "1.235");
        assert_eq!(fmt_num(0.000123), "0.0001");
        assert_eq!(fmt_num(f64::NAN), "NaN");
    }
}
