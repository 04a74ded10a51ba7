//! `critsec compare` of verdict files (`reproduce --json`): every claim's verdict and interval
//! in each run side by side, how many each run left undecided, and which claims moved between
//! REPRODUCED and NOT REPRODUCED, the one change between runs that says a verdict was not
//! trustworthy.
//!
//! AT THE BOUND moves to neither: an effect equal to its bound within the tolerance is also
//! consistent with both decisions, which a later look may narrow it into.

use std::fmt::Write as _;

use serde::Serialize;

use critsec_harness::claims::{ClaimOutcome, Verdict};

use super::Format;
use crate::table::{Align, Table, md_escape};
use crate::verdicts::{ratio_cell, verdict_cell};

/// Verdict files side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictComparison {
    /// Each run's label, in the order given.
    pub runs: Vec<String>,
    /// One row per claim, in the order the claims first appear.
    pub rows: Vec<VerdictRow>,
    /// Per run: its claims that are INCONCLUSIVE or ERROR.
    pub undecided: Vec<usize>,
    /// Claims REPRODUCED in one run and NOT REPRODUCED in another.
    pub moved: Vec<String>,
}

/// One claim across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictRow {
    /// The claim's id.
    pub claim: String,
    /// Per run: its verdict and interval there, `None` where the run has no such claim.
    pub cells: Vec<Option<VerdictCell>>,
    /// Whether it was REPRODUCED in one run and NOT REPRODUCED in another.
    pub moved: bool,
}

/// A claim's verdict in one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictCell {
    /// `REPRODUCED`, `AT THE BOUND`, ... or `ERROR`.
    pub verdict: String,
    /// `1.234 [1.100, 1.380]`, or `-`.
    pub ratio: String,
}

/// Puts the runs' outcomes (each a label and a verdict file's outcomes) side by side by claim id.
pub fn compare_verdicts(runs: &[(String, Vec<ClaimOutcome>)]) -> VerdictComparison {
    let mut ids: Vec<&str> = Vec::new();
    for (_, outcomes) in runs {
        for o in outcomes {
            if !ids.contains(&o.claim.id.as_str()) {
                ids.push(&o.claim.id);
            }
        }
    }
    let rows: Vec<VerdictRow> = ids
        .iter()
        .map(|&id| {
            let outcomes: Vec<Option<&ClaimOutcome>> = runs
                .iter()
                .map(|(_, outcomes)| outcomes.iter().find(|o| o.claim.id == id))
                .collect();
            let decided = |want: &Verdict| {
                outcomes
                    .iter()
                    .flatten()
                    .any(|o| o.verdict.as_ref() == Ok(want))
            };
            VerdictRow {
                claim: id.to_string(),
                cells: outcomes
                    .iter()
                    .map(|o| {
                        o.map(|o| VerdictCell {
                            verdict: verdict_cell(o).to_string(),
                            ratio: ratio_cell(o),
                        })
                    })
                    .collect(),
                moved: decided(&Verdict::Reproduced) && decided(&Verdict::NotReproduced),
            }
        })
        .collect();
    let undecided = runs
        .iter()
        .map(|(_, outcomes)| {
            outcomes
                .iter()
                .filter(|o| matches!(o.verdict, Err(_) | Ok(Verdict::Inconclusive { .. })))
                .count()
        })
        .collect();
    VerdictComparison {
        runs: runs.iter().map(|(label, _)| label.clone()).collect(),
        moved: rows
            .iter()
            .filter(|r| r.moved)
            .map(|r| r.claim.clone())
            .collect(),
        rows,
        undecided,
    }
}

/// Renders the comparison as a table (text or Markdown) with a summary, or as CSV or JSON.
pub fn render_verdicts(c: &VerdictComparison, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(c).expect("plain data serialises") + "\n",
        Format::Csv => csv(c),
        Format::Text | Format::Markdown => {
            let markdown = format == Format::Markdown;
            let cell = |s: &str| {
                if markdown {
                    md_escape(s)
                } else {
                    s.to_string()
                }
            };
            let mut header = vec!["Claim".to_string()];
            for run in &c.runs {
                header.push(cell(run));
                header.push("Ratio [99.9% CI]".into());
            }
            header.push("Moved".into());
            let rows: Vec<Vec<String>> = c
                .rows
                .iter()
                .map(|r| {
                    let mut row = vec![cell(&r.claim)];
                    for v in &r.cells {
                        match v {
                            Some(v) => row.extend([v.verdict.clone(), v.ratio.clone()]),
                            None => row.extend(["-".to_string(), "-".to_string()]),
                        }
                    }
                    row.push(if r.moved { "MOVED" } else { "" }.into());
                    row
                })
                .collect();
            let mut out = if markdown {
                let mut out = format!(
                    "| {} |\n|{}\n",
                    header.join(" | "),
                    "---|".repeat(header.len())
                );
                for row in &rows {
                    let _ = writeln!(out, "| {} |", row.join(" | "));
                }
                out
            } else {
                let mut table = Table::new(&vec![Align::Left; header.len()]);
                table.row(header);
                for row in rows {
                    table.row(row);
                }
                table.render(false)
            };
            out.push('\n');
            out.push_str(&summary(c));
            out.push('\n');
            out
        }
    }
}

/// `undecided: 5 in a.json, 7 in b.json; moved between REPRODUCED and NOT REPRODUCED: none`.
fn summary(c: &VerdictComparison) -> String {
    let undecided: Vec<String> = c
        .runs
        .iter()
        .zip(&c.undecided)
        .map(|(run, n)| format!("{n} in {run}"))
        .collect();
    let moved = if c.moved.is_empty() {
        "none".to_string()
    } else {
        c.moved.join(", ")
    };
    format!(
        "undecided (INCONCLUSIVE or ERROR): {}; moved between REPRODUCED and NOT REPRODUCED: {moved}",
        undecided.join(", ")
    )
}

/// One line per (claim, run): `claim,run,verdict,ratio,moved`.
fn csv(c: &VerdictComparison) -> String {
    let field = super::render::csv_field;
    let mut out = String::from("claim,run,verdict,ratio,moved\n");
    for r in &c.rows {
        for (run, v) in c.runs.iter().zip(&r.cells) {
            let (verdict, ratio) = v
                .as_ref()
                .map_or(("", ""), |v| (v.verdict.as_str(), v.ratio.as_str()));
            let _ = writeln!(
                out,
                "{},{},{},{},{}",
                field(&r.claim),
                field(run),
                field(verdict),
                field(ratio),
                r.moved
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outcomes of `claims`, each an id and its verdict.
    fn outcomes(claims: &[(&str, Result<Verdict, String>)]) -> Vec<ClaimOutcome> {
        let claim = |id: &str| {
            critsec_harness::claims::Claim::parse_file(
                &format!("[[claim]]\nid='{id}'\ntitle='t'\nsource='s'\nsource_figure='f'\nscenario='a/b'\ndirection='higher'\nmin_effect=1.05\nbaseline={{}}\ncontender={{env={{K='V'}}}}\n"),
                "x.toml",
            )
            .unwrap()
            .remove(0)
        };
        claims
            .iter()
            .map(|(id, verdict)| ClaimOutcome {
                replicate_kind: "process-pair".into(),
                verdict: verdict.clone(),
                ..ClaimOutcome::new(&claim(id))
            })
            .collect()
    }

    #[test]
    fn a_claim_decided_both_ways_has_moved_and_one_at_the_bound_has_not() {
        let a = outcomes(&[
            ("flip", Ok(Verdict::Reproduced)),
            ("bound", Ok(Verdict::Reproduced)),
            ("open", Ok(Verdict::Inconclusive { pairs_needed: None })),
            ("broken", Err("a check failed".into())),
        ]);
        let b = outcomes(&[
            ("flip", Ok(Verdict::NotReproduced)),
            ("bound", Ok(Verdict::AtTheBound)),
            ("open", Ok(Verdict::NotReproduced)),
            ("new", Ok(Verdict::Reproduced)),
        ]);
        let c = compare_verdicts(&[("a".into(), a), ("b".into(), b)]);
        assert_eq!(c.moved, ["flip"]);
        assert_eq!(c.undecided, [2, 0]);
        let ids: Vec<&str> = c.rows.iter().map(|r| r.claim.as_str()).collect();
        assert_eq!(ids, ["flip", "bound", "open", "broken", "new"]);
        assert_eq!(c.rows[1].cells[1].as_ref().unwrap().verdict, "AT THE BOUND");
        assert!(c.rows[4].cells[0].is_none());

        let text = render_verdicts(&c, Format::Text);
        assert!(text.contains("MOVED"), "{text}");
        assert!(
            text.ends_with(
                "undecided (INCONCLUSIVE or ERROR): 2 in a, 0 in b; moved between REPRODUCED and NOT REPRODUCED: flip\n"
            ),
            "{text}"
        );
        let csv = render_verdicts(&c, Format::Csv);
        assert!(csv.contains("\nbound,b,AT THE BOUND,"), "{csv}");
        assert_eq!(csv.lines().count(), 1 + 5 * 2);
    }
}
