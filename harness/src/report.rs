//! `REPORT.md` sections: the verdict table, and per-run tables comparing strategies side by side.
//!
//! Cells read as rebar's `cmp` does: the value with its interval, then in parentheses its ratio
//! to the best value in the row (`1.00` marks the best), and `-` where nothing was measured.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::claim::Direction;
use crate::jmh::JmhEntry;
use crate::output::fmt_num;
use crate::reproduce::ClaimOutcome;

/// The verdicts as a Markdown table, then the source's figure next to ours for each claim.
pub fn verdict_markdown(outcomes: &[ClaimOutcome]) -> String {
    let mut out = String::from(
        "| Claim | Verdict | Ratio [99.9% CI] | Expected | Metric | Pairs | Baseline → contender (ours) | Source figure |\n|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let expected = match o.claim.direction {
            Direction::Higher => format!("≥ {}", o.claim.min_effect),
            Direction::Lower => format!("≤ {}", o.claim.min_effect),
        };
        let (verdict, ratio, ours) = match (&o.verdict, &o.interval) {
            (Ok(v), Some(r)) => (
                format!("**{}**", v.label()),
                format!("{:.3} [{:.3}, {:.3}]", r.ratio, r.low, r.high),
                format!(
                    "{} → {} {}",
                    fmt_num(o.baseline.mean()),
                    fmt_num(o.contender.mean()),
                    o.baseline.unit
                ),
            ),
            (Ok(v), None) => (format!("**{}**", v.label()), "-".into(), "-".into()),
            (Err(e), _) => ("**ERROR**".into(), "-".into(), escape(e)),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
            o.claim.id,
            verdict,
            ratio,
            expected,
            o.claim.metric,
            o.ratios.len(),
            ours,
            escape(&o.claim.source_figure)
        );
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A table per benchmark with one column per value of `series` (e.g. `strategy`): rows are the
/// other parameters and the thread count; cells hold score ± error and the ratio to the row's
/// best (highest for rates, lowest for times).
pub fn series_markdown(entries: &[JmhEntry], series: &str) -> String {
    let mut by_bench: BTreeMap<&str, Vec<&JmhEntry>> = BTreeMap::new();
    for e in entries {
        by_bench.entry(e.benchmark.as_str()).or_default().push(e);
    }
    let mut out = String::new();
    for (bench, es) in by_bench {
        let mut columns: Vec<String> = Vec::new();
        let mut rows: BTreeMap<(String, u64), BTreeMap<String, &JmhEntry>> = BTreeMap::new();
        for e in es {
            let params = e.params.clone().unwrap_or_default();
            let col = params.get(series).cloned().unwrap_or_else(|| "-".into());
            if !columns.contains(&col) {
                columns.push(col.clone());
            }
            let rest: Vec<String> = params
                .iter()
                .filter(|(k, _)| k.as_str() != series)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            rows.entry((rest.join(" "), e.threads))
                .or_default()
                .insert(col, e);
        }
        let unit = rows
            .values()
            .flat_map(|r| r.values())
            .next()
            .map(|e| e.primary_metric.score_unit.clone())
            .unwrap_or_default();
        let higher_better = unit.contains("/s") || unit.starts_with("ops/");
        let _ = writeln!(out, "#### `{bench}` ({unit}, by `{series}`)\n");
        let _ = writeln!(out, "| params | threads | {} |", columns.join(" | "));
        let _ = writeln!(out, "|---|---|{}", "---|".repeat(columns.len()));
        for ((params, threads), cells) in rows {
            let scores: Vec<f64> = cells
                .values()
                .map(|e| e.primary_metric.score.0)
                .filter(|s| s.is_finite() && *s > 0.0)
                .collect();
            let best = if higher_better {
                scores.iter().cloned().fold(f64::MIN, f64::max)
            } else {
                scores.iter().cloned().fold(f64::MAX, f64::min)
            };
            let cells: Vec<String> = columns
                .iter()
                .map(|c| match cells.get(c) {
                    Some(e) => {
                        let s = e.primary_metric.score.0;
                        let err = e.primary_metric.score_error.0;
                        let ratio = if higher_better { best / s } else { s / best };
                        let err = if err.is_finite() {
                            format!(" ± {}", fmt_num(err))
                        } else {
                            String::new()
                        };
                        format!("{}{} ({:.2})", fmt_num(s), err, ratio)
                    }
                    None => "-".into(),
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                if params.is_empty() { "-" } else { &params },
                threads,
                cells.join(" | ")
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{Claim, Side};
    use crate::jmh::read_entries;
    use crate::reproduce::{RatioInterval, SideRecord, Verdict};

    fn entry(strategy: &str, threads: u64, score: f64) -> String {
        format!(
            r#"{{"benchmark":"registry.request_mix","mode":"thrpt","threads":{threads},"params":{{"strategy":"{strategy}","cores":"10"}},
               "primaryMetric":{{"score":{score},"scoreError":1.0,"scoreConfidence":[0,0],"scoreUnit":"ops/s"}}}}"#
        )
    }

    #[test]
    fn series_tables_put_strategies_side_by_side_with_ratios_to_the_best() {
        let json = format!(
            "[{},{},{}]",
            entry("mutex", 2, 100.0),
            entry("snapshot", 2, 400.0),
            entry("mutex", 8, 50.0)
        );
        let entries = read_entries(&json, "t.json").unwrap();
        let md = series_markdown(&entries, "strategy");
        assert!(
            md.contains("| params | threads | mutex | snapshot |"),
            "{md}"
        );
        assert!(
            md.contains("| cores=10 | 2 | 100.0 ± 1.000 (4.00) | 400.0 ± 1.000 (1.00) |"),
            "{md}"
        );
        assert!(
            md.contains("| cores=10 | 8 | 50.000 ± 1.000 (1.00) | - |"),
            "{md}"
        );
    }

    #[test]
    fn verdict_rows_show_ratio_expectation_and_errors() {
        let claim = Claim {
            id: "X-1".into(),
            title: "t".into(),
            source: "s".into(),
            source_figure: "7.0M vs 1.5M | 4.7x".into(),
            scenario: "a/b".into(),
            metric: "primary".into(),
            direction: Direction::Higher,
            min_effect: 1.05,
            threads: "1".into(),
            params: Default::default(),
            baseline: Side::default(),
            contender: Side {
                env: [("K".to_string(), "V".to_string())].into(),
                ..Side::default()
            },
            note: None,
        };
        let side = |v: f64| SideRecord {
            values: vec![v],
            unit: "ops/s".into(),
            ..Default::default()
        };
        let ok = ClaimOutcome {
            claim: claim.clone(),
            baseline: side(100.0),
            contender: side(200.0),
            ratios: vec![2.0, 2.0],
            interval: Some(RatioInterval {
                ratio: 2.0,
                low: 1.5,
                high: 2.5,
                n: 2,
                log_sd: 0.1,
            }),
            verdict: Ok(Verdict::Reproduced),
            seconds: 1.0,
        };
        let failed = ClaimOutcome {
            verdict: Err("check failed: wrong core".into()),
            interval: None,
            ..ok.clone()
        };
        let md = verdict_markdown(&[ok, failed]);
        assert!(md.contains("| `X-1` | **REPRODUCED** | 2.000 [1.500, 2.500] | ≥ 1.05 | primary | 2 | 100.0 → 200.0 ops/s | 7.0M vs 1.5M \\| 4.7x |"), "{md}");
        assert!(md.contains("| `X-1` | **ERROR** | - |"), "{md}");
    }
}
