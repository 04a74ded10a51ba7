//! The verdict table of `critsec reproduce`: one row per claim, then one block per claim with
//! the source's figure next to ours.

use std::fmt::Write as _;

use critsec_harness::claims::reproduce::{ClaimOutcome, Replicate, Verdict, blocks_log_ratio};
use critsec_harness::run::coherence::{TAKEN_NS, levels};
use critsec_harness::stats::CONFIDENCE;
use critsec_harness::stats::ratio::log_interval;

use crate::table::{Align, Table, fmt_num};

/// What the replicates were: `5 pairs`, `3 seeds`, or `-`.
pub fn replicates(o: &ClaimOutcome) -> String {
    match (o.replicates.len(), o.replicate_kind.as_str()) {
        (0, _) => "-".into(),
        (n, "seed") => format!("{n} seeds"),
        (n, _) => format!("{n} pairs"),
    }
}

/// The ratio cell: `1.234 [1.100, 1.380]`, or `-` when there is none.
pub fn ratio_cell(o: &ClaimOutcome) -> String {
    match (&o.verdict, &o.interval) {
        (Ok(_), Some(r)) => format!(
            "{} [{}, {}]",
            ratio_text(r.ratio),
            ratio_text(r.low),
            ratio_text(r.high)
        ),
        _ => "-".into(),
    }
}

/// A ratio with three decimals, or three significant digits below 0.01 (where three decimals
/// would print a 1,000x effect as `0.000`).
pub fn ratio_text(x: f64) -> String {
    if x > 0.0 && x < 0.01 && x.is_finite() {
        let decimals = (2 - x.log10().floor() as i32).max(3) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.3}")
    }
}

/// The verdict cell: the label, or `ERROR`.
pub fn verdict_cell(o: &ClaimOutcome) -> &'static str {
    match &o.verdict {
        Ok(v) => v.label(),
        Err(_) => "ERROR",
    }
}

/// The per-claim time table: how long each group of claims sharing measurements took.
pub fn time_table(outcomes: &[ClaimOutcome]) -> String {
    let mut table = Table::new(&[Align::Left, Align::Left, Align::Right, Align::Left]);
    table.row(["Claim", "Replicates", "Seconds", "Measured with"]);
    let mut total = 0.0;
    let mut seen: Vec<&[String]> = Vec::new();
    for o in outcomes {
        if !seen.contains(&o.group.as_slice()) {
            seen.push(&o.group);
            total += o.seconds;
        }
        let others: Vec<&str> = o
            .group
            .iter()
            .filter(|id| **id != o.claim.id)
            .map(String::as_str)
            .collect();
        table.row([
            o.claim.id.clone(),
            replicates(o),
            format!("{:.1}", o.seconds),
            if others.is_empty() {
                "-".to_string()
            } else {
                others.join(", ")
            },
        ]);
    }
    format!(
        "{}\nTotal: {total:.0} s of measurement\n",
        table.render(false)
    )
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
        "Replicates",
    ]);
    for o in outcomes {
        table.row([
            o.claim.id.clone(),
            verdict_cell(o).to_string(),
            ratio_cell(o),
            o.claim.expected(),
            o.claim.metric.clone(),
            replicates(o),
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
                if !o.baseline.values.is_empty() {
                    let _ = writeln!(
                        out,
                        "  we saw:    baseline {} {u} -> contender {} {u} ({} {}, {:.0} s)",
                        fmt_num(o.baseline.mean()),
                        fmt_num(o.contender.mean()),
                        v.label(),
                        replicates(o),
                        o.seconds,
                        u = o.baseline.unit
                    );
                }
                if let Some(c) = &o.counts {
                    let rate = |r: &Option<critsec_harness::stats::poisson::RateInterval>| {
                        r.map(|r| {
                            format!(
                                " ({} per 1,000 ops, 99.9% [{}, {}])",
                                fmt_num(r.rate),
                                fmt_num(r.low),
                                fmt_num(r.high)
                            )
                        })
                        .unwrap_or_default()
                    };
                    let _ = writeln!(
                        out,
                        "  counted:   baseline {:?}{} -> contender {:?}{} per replicate",
                        c.baseline,
                        rate(&c.baseline_rate),
                        c.contender,
                        rate(&c.contender_rate)
                    );
                }
                if let Some(vc) = &o.components {
                    let m_star = o
                        .optimal_blocks
                        .map(|m| format!("; m* = {m} blocks per pair"))
                        .unwrap_or_else(|| "; no between-pair variance detected".into());
                    let _ = writeln!(
                        out,
                        "  variance:  within-pair T1² {:.2e}, between-pair T2² {:.2e}, ρ {:.2}, design effect {:.1}{m_star}",
                        vc.within, vc.between, vc.rho, vc.design_effect
                    );
                }
                if let Some(d) = &o.design {
                    let looks: Vec<String> = d
                        .looks
                        .iter()
                        .zip(&d.confidence)
                        .map(|(n, c)| format!("{n} ({})", confidence_text(*c)))
                        .collect();
                    let _ = writeln!(
                        out,
                        "  design:    looks at {}; {:.1} s per replicate over the pilot; {}",
                        looks.join(", "),
                        d.replicate_seconds,
                        d.why
                    );
                    if !d.ended.is_empty() {
                        let _ = writeln!(out, "  ended:     {}", d.ended);
                    }
                }
                if let Some(pinned) = pinned_text(&o.replicates) {
                    let _ = writeln!(out, "  pinned:    {pinned}");
                }
                let confidence = o.interval.as_ref().map_or(CONFIDENCE, |iv| iv.confidence);
                if let Some(coherence) = coherence_text(&o.replicates, confidence) {
                    let _ = writeln!(out, "  coherence: {coherence}");
                }
                for (role, side) in [("baseline", &o.baseline), ("contender", &o.contender)] {
                    if let Some(runtime) = side.program.as_ref().and_then(|p| p.runtime_text()) {
                        let _ = writeln!(out, "  runtime:   {role}: {runtime}");
                    }
                }
                for flag in &o.flags {
                    let _ = writeln!(out, "  flag:      {flag}");
                }
                for far in &o.far_processes {
                    let _ = writeln!(
                        out,
                        "  far:       replicate {}'s {} process ran at {:.2}x the other processes' median (kept in the interval)",
                        far.replicate, far.side, far.factor
                    );
                }
                if let Verdict::NotTestable { reason } = v {
                    let _ = writeln!(out, "  not here:  {reason}");
                }
                if let Verdict::Inconclusive { pairs_needed } = v {
                    match pairs_needed {
                        Some(n) => {
                            let _ = writeln!(
                                out,
                                "  settling:  about {n} replicates at this spread would likely settle it (--pairs {n})"
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

/// Which CPUs the replicates' processes were pinned to, with how many replicates each (none
/// when no replicate was pinned).
fn pinned_text(replicates: &[Replicate]) -> Option<String> {
    let mut per_cpu = std::collections::BTreeMap::<usize, usize>::new();
    for cpu in replicates.iter().filter_map(|r| r.cpu) {
        *per_cpu.entry(cpu).or_default() += 1;
    }
    if per_cpu.is_empty() {
        return None;
    }
    let cpus: Vec<String> = per_cpu
        .iter()
        .map(|(cpu, n)| format!("CPU {cpu} in {n}"))
        .collect();
    let unpinned = replicates.iter().filter(|r| r.cpu.is_none()).count();
    let rest = if unpinned > 0 {
        format!(", {unpinned} not pinned")
    } else {
        String::new()
    };
    Some(format!(
        "single-threaded sides, both processes of a replicate on one CPU after setup: {}{rest}",
        cpus.join(", ")
    ))
}

/// The coherence probe's levels over the claim's blocks and, at each level, the claim's ratio
/// restricted to that level's blocks: each replicate's sides' mean values over its blocks at
/// the level, and their log ratios' interval over the replicates that have such blocks, at the
/// confidence of the claim's last look (descriptive: not corrected for looking at two levels).
/// Whether the claim's threads ran on one machine or two, and whether its ratio differs between
/// them. `None` without probes.
fn coherence_text(replicates: &[Replicate], confidence: f64) -> Option<String> {
    let series: Vec<f64> = replicates
        .iter()
        .flat_map(|r| &r.blocks)
        .filter_map(|b| b.coherence_ns)
        .collect();
    let l = levels(&series)?;
    let slow = |ns: f64| l.cut_ns.is_some_and(|cut| ns > cut);
    let at = |level_slow: bool, ns: f64| {
        let (mut logs, mut blocks) = (Vec::new(), 0);
        for r in replicates {
            let here: Vec<_> = r
                .blocks
                .iter()
                .filter(|b| b.coherence_ns.is_some_and(|ns| slow(ns) == level_slow))
                .collect();
            if here.is_empty() {
                continue;
            }
            blocks += here.len();
            let log = blocks_log_ratio(here.iter().copied());
            if log.is_finite() {
                logs.push(log);
            }
        }
        let iv = log_interval(&logs, confidence);
        let range = if iv.n > 1 {
            format!(" [{}, {}]", ratio_text(iv.low), ratio_text(iv.high))
        } else {
            String::new()
        };
        let of = if iv.n == 1 {
            "1 replicate".to_string()
        } else {
            format!("{} replicates", iv.n)
        };
        format!(
            "{ns:.0} ns in {blocks} blocks of {of}, ratio {}{range}",
            ratio_text(iv.ratio)
        )
    };
    let head = "a cache line's round trip between the CPUs after each block:";
    Some(match l.slow_ns {
        None => format!("{head} {}", at(false, l.fast_ns)),
        Some(slow_ns) => {
            let why = if slow_ns > TAKEN_NS {
                "a CPU was taken by other work right after those blocks"
            } else {
                "the CPUs' distance changed under the run (METHODOLOGY.md, *Cache-line distance between the CPUs*)"
            };
            format!(
                "{head} two levels, {}; {}: {why}",
                at(false, l.fast_ns),
                at(true, slow_ns)
            )
        }
    })
}

/// A look's confidence with two significant digits of what it leaves out: 99.9968%, 99.903%.
fn confidence_text(confidence: f64) -> String {
    let left_out = (1.0 - confidence) * 100.0;
    let digits = ((-left_out.log10() - 1e-9).ceil() as i32 + 1).clamp(1, 10) as usize;
    format!("{:.digits$}%", confidence * 100.0)
}

#[cfg(test)]
mod tests {
    use super::{coherence_text, confidence_text, ratio_text};
    use critsec_harness::claims::reproduce::{BlockValue, Replicate};

    fn replicate(blocks: &[(f64, f64, Option<f64>)]) -> Replicate {
        Replicate {
            seed: None,
            baseline_launched_first: true,
            env_pad: (0, 0),
            cpu: None,
            blocks: blocks
                .iter()
                .map(|&(baseline, contender, coherence_ns)| BlockValue {
                    baseline,
                    contender,
                    baseline_first: true,
                    coherence_ns,
                })
                .collect(),
            log_ratio: 0.0,
        }
    }

    #[test]
    fn the_coherence_line_gives_each_level_its_ratio_over_the_replicates_that_had_it() {
        // Near (60 ns) blocks at ratio 1.2 in three replicates, far (320 ns) ones at 2.5 in
        // two; a replicate's level ratio is of its sides' means over those blocks.
        let near = (100.0, 120.0, Some(60.0));
        let far = (100.0, 250.0, Some(320.0));
        let r = [
            replicate(&[near, near, far]),
            replicate(&[far, near]),
            replicate(&[near, (300.0, 360.0, Some(61.0))]),
        ];
        let text = coherence_text(&r, 0.999).unwrap();
        assert!(
            text.contains(
                "two levels, 60 ns in 5 blocks of 3 replicates, ratio 1.200 [1.200, 1.200]; 320 ns in 2 blocks of 2 replicates, ratio 2.500 [2.500, 2.500]"
            ),
            "{text}"
        );
        assert!(text.contains("the CPUs' distance changed"), "{text}");
        // One level; a spread between replicates widens the interval.
        let one = coherence_text(
            &[
                replicate(&[near, near]),
                replicate(&[(100.0, 110.0, Some(70.0))]),
            ],
            0.999,
        )
        .unwrap();
        assert!(
            one.contains("in 3 blocks of 2 replicates, ratio 1.149 ["),
            "{one}"
        );
        assert!(!one.contains("two levels"), "{one}");
        // A level seen in one replicate has no interval.
        let taken = (100.0, 100.0, Some(6_000.0));
        let busy = coherence_text(&[replicate(&[near, near, taken, near, taken])], 0.999).unwrap();
        assert!(
            busy.contains("6000 ns in 2 blocks of 1 replicate, ratio 1.000:"),
            "{busy}"
        );
        assert!(
            busy.ends_with("a CPU was taken by other work right after those blocks"),
            "{busy}"
        );
        assert_eq!(
            coherence_text(&[replicate(&[(100.0, 120.0, None)])], 0.999),
            None
        );
    }

    #[test]
    fn a_look_s_confidence_keeps_the_digits_that_tell_it_from_99_9() {
        assert_eq!(confidence_text(1.0 - 3.151_634e-5), "99.9968%");
        assert_eq!(confidence_text(1.0 - 9.684_837e-4), "99.903%");
        assert_eq!(confidence_text(0.999), "99.90%");
        assert_eq!(confidence_text(1.0 - 1.202_584e-8), "99.9999988%");
    }

    #[test]
    fn tiny_ratios_keep_three_significant_digits() {
        assert_eq!(ratio_text(1.23456), "1.235");
        assert_eq!(ratio_text(0.036), "0.036");
        assert_eq!(ratio_text(0.00123), "0.00123");
        assert_eq!(ratio_text(0.0000456), "0.0000456");
        assert_eq!(ratio_text(0.0), "0.000");
        assert_eq!(ratio_text(f64::INFINITY), "inf");
    }
}
