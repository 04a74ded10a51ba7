//! critsec-present: everything critsec shows people, computed from what the harness measured or
//! wrote. The CLI uses it; the bench crates and forks never run it.
//!
//! - [`table`]: the one text-table layout, the one Markdown escaping rule, the number format.
//! - [`run_table`]: the JMH-style table of `critsec run`.
//! - [`verdicts`]: the verdict table of `critsec reproduce`.
//! - [`compare`]: Rally-style comparison of two or more JMH JSON files.
//! - [`report`]: `REPORT.md`, the runs' tables of absolute scores over processes
//!   ([`processes`]) beside charts of ratios to a named baseline: [`paired`] turns each plot of
//!   the published set ([`publication`], `results/publication.toml`, measured by
//!   `critsec report --fresh`) into claims measured in interleaved process pairs, [`plot`] says
//!   what a chart shows, [`ratio_plot`] draws it and writes the table under it.

#![deny(missing_docs)]

pub mod calibration;
pub mod compare;
pub mod paired;
pub mod plot;
pub mod processes;
pub mod publication;
pub mod ratio_plot;
pub mod report;
pub mod run_table;
pub mod table;
pub mod verdicts;
