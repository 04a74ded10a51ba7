//! The table of `critsec calibrate`: per A/A claim and design, how often the intervals covered
//! 1, how wide they were, and where the variance of a round's ratio came from.

use critsec_harness::claims::CalibrationRow;

use crate::table::{Align, Table};

/// The calibration table, with a line on how to read it.
pub fn render(rows: &[CalibrationRow]) -> String {
    let mut table = Table::new(&[
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ]);
    table.row([
        "A/A claim",
        "Slice",
        "Slices/side",
        "Covered 1",
        "Half-width x/÷",
        "Round SD",
        "Slice SD (T1)",
        "Process SD (T2)",
        "Seconds/run",
        "Pinned",
    ]);
    for r in rows {
        table.row([
            r.claim.clone(),
            format!("{:.0} ms", r.slice_ms),
            r.slices.to_string(),
            format!("{} of {}", r.covered, r.runs),
            ratio(r.median_half_width.exp()),
            log(r.round_sd),
            log(r.within_sd),
            log(r.between_sd),
            format!("{:.1}", r.seconds),
            if r.pinned { "yes" } else { "no" }.into(),
        ]);
    }
    let mut out = table.render(false);
    out.push_str(
        "Medians over runs. Half-width: of the 99.9% interval of the ratio, in log space as \
         x/÷. Round SD: of the rounds' mean log ratios (what the interval is made of). Slice SD: \
         of one slice pair's log ratio within a round; Process SD: between rounds beyond what \
         the slices explain (Kalibera & Jones' T1 and T2). Finer slices can only shrink the \
         slices' share; only more rounds shrink the processes'. Pinned: each round's processes \
         ran on one CPU after their setup (single-threaded claims only).\n",
    );
    for r in rows.iter().filter(|r| !r.errors.is_empty()) {
        out.push_str(&format!(
            "{} at {:.0} ms: {} failed run(s): {}\n",
            r.claim,
            r.slice_ms,
            r.errors.len(),
            r.errors[0]
        ));
    }
    out
}

fn ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "-".into()
    }
}

fn log(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "-".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_show_coverage_width_and_components() {
        let row = CalibrationRow {
            claim: "parser-aa".into(),
            slice_ms: 20.0,
            slices: 20,
            pinned: true,
            runs: 3,
            covered: 3,
            median_half_width: 0.05,
            round_sd: 0.01,
            within_sd: 0.04,
            between_sd: f64::NAN,
            seconds: 9.5,
            errors: vec![],
        };
        let t = render(&[row]);
        assert!(t.contains("parser-aa"), "{t}");
        assert!(
            t.contains("3 of 3") && t.contains("1.051") && t.contains("20 ms"),
            "{t}"
        );
        assert!(t.contains("0.0400") && t.contains(" - "), "{t}");
        assert!(t.lines().nth(1).unwrap().trim_end().ends_with("yes"), "{t}");
    }
}
