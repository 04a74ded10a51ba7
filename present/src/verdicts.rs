//! The verdict table of `critsec reproduce`: one row per claim, then one block per claim with
//! the source's figure next to ours.

use std::fmt::Write as _;

use critsec_harness::claims::claim::{Claim, Direction};
use critsec_harness::claims::reproduce::{ClaimOutcome, Verdict};

use crate::table::{Align, Table, fmt_num};

/// The claimed effect as the table prints it (`>= 1.05`).
pub fn expected(c: &Claim) -> String {
    match c.direction {
        Direction::Higher => format!(">= {}", c.min_effect),
        Direction::Lower => format!("<= {}", c.min_effect),
    }
}

/// The verdict table, then one block per claim with the source's figure next to ours.
pub fn render(outcomes: &[ClaimOutcome]) -> String {
    let mut table = Table::new(&[Align::Left; 6]);
    table.row([
        "Claim",
        "Verdict",
        "Ratio [99.9% CI]",
        "Expected",
        "Metric",
        "Pairs",
    ]);
    for o in outcomes {
        let (verdict, ratio) = match (&o.verdict, &o.interval) {
            (Ok(v), Some(r)) => (
                v.label().to_string(),
                format!("{:.3} [{:.3}, {:.3}]", r.ratio, r.low, r.high),
            ),
            (Ok(v), None) => (v.label().to_string(), "-".into()),
            (Err(_), _) => ("ERROR".into(), "-".into()),
        };
        table.row([
            o.claim.id.clone(),
            verdict,
            ratio,
            expected(&o.claim),
            o.claim.metric.clone(),
            o.ratios.len().to_string(),
        ]);
    }
    let mut out = table.render(false);
    out.push('\n');
    for o in outcomes {
        let _ = writeln!(out, "{}: {}", o.claim.id, o.claim.title);
        let _ = writeln!(out, "  source:    {}", o.claim.source);
        let _ = writeln!(out, "  they saw:  {}", o.claim.source_figure);
        match &o.verdict {
            Ok(v) => {
                let _ = writeln!(
                    out,
                    "  we saw:    baseline {} {u} -> contender {} {u} ({} {} pairs, {:.0} s)",
                    fmt_num(o.baseline.mean()),
                    fmt_num(o.contender.mean()),
                    v.label(),
                    o.ratios.len(),
                    o.seconds,
                    u = o.baseline.unit
                );
                if let Verdict::Inconclusive { pairs_needed } = v {
                    match pairs_needed {
                        Some(n) => {
                            let _ = writeln!(
                                out,
                                "  settling:  about {n} pairs at this spread would likely settle it (--pairs {n})"
                            );
                        }
                        None => out.push_str("  settling:  the estimate sits on the claimed bound; more pairs will not settle it\n"),
                    }
                }
                let _ = writeln!(
                    out,
                    "  baseline:  {}\n  contender: {}",
                    o.baseline.label, o.contender.label
                );
            }
            Err(e) => {
                let _ = writeln!(out, "  error:     {e}");
            }
        }
        if let Some(note) = &o.claim.note {
            let _ = writeln!(out, "  note:      {note}");
        }
        out.push('\n');
    }
    out
}
