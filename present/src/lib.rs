//! critsec-present: everything critsec shows people, computed from what the harness measured or
//! wrote. The CLI uses it; the bench crates and forks never run it.
//!
//! - [`table`]: the one text-table layout, the one Markdown escaping rule, the number format.
//! - [`run_table`]: the JMH-style table of `critsec run`.
//! - [`verdicts`]: the verdict table of `critsec reproduce`.
//! - [`compare`]: Rally-style comparison of two or more JMH JSON files.
//! - [`report`] and [`plot`]: `REPORT.md` with its SVG plots, their intervals over processes
//!   ([`processes`]), [`ratio_plot`]: the charts over a
//!   parameter sweep; [`publication`]: the published
//!   set of runs (`results/publication.toml`), measured by `critsec report --fresh`.

#![deny(missing_docs)]

pub mod calibration;
pub mod compare;
pub mod plot;
pub mod processes;
pub mod publication;
pub mod ratio_plot;
pub mod report;
pub mod run_table;
pub mod table;
pub mod verdicts;
