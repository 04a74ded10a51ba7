//! The verdict table of `critsec reproduce`: one row per claim, then one block per claim with
//! the source's figure next to ours.

use std::fmt::Write as _;

use critsec_harness::claims::{ClaimOutcome, Coherence, CoherenceLevel, Replicate, Verdict};

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
    if x.is_finite() && x != 0.0 && !(1e-6..1e6).contains(&x) {
        // An interval over two or three replicates at a tiny α can span 1e-70 to 1e70.
        format!("{x:.2e}")
    } else if x > 0.0 && x < 0.01 && x.is_finite() {
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
                    let rate = |r: &Option<critsec_harness::stats::RateInterval>| {
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
                    if !d.for_precision.is_empty() {
                        let _ = writeln!(out, "  precision: {}", d.for_precision);
                    }
                }
                if let Some(pinned) = pinned_text(&o.replicates) {
                    let _ = writeln!(out, "  pinned:    {pinned}");
                }
                if let Some(coherence) = &o.coherence {
                    let _ = writeln!(out, "  coherence: {}", coherence_text(coherence));
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
                if let (Verdict::AtTheBound, Some(b)) = (v, o.claim.bound()) {
                    let _ = writeln!(
                        out,
                        "  at bound:  the interval straddles {} inside its band [{}, {}] (x/÷ {}): the effect equals the claimed bound, within the claim's tolerance",
                        b.min_effect,
                        ratio_text(b.min_effect / b.tolerance),
                        ratio_text(b.min_effect * b.tolerance),
                        b.tolerance
                    );
                }
                if let Verdict::Inconclusive { pairs_needed } = v {
                    match pairs_needed {
                        Some(n) => {
                            let cost = o
                                .design
                                .as_ref()
                                .map(|d| d.replicate_seconds)
                                .filter(|&s| s > 0.0)
                                .map(|s| {
                                    let total = duration_text(*n as f64 * s);
                                    format!("about {total} here at {s:.1} s a replicate; ")
                                })
                                .unwrap_or_default();
                            let _ = writeln!(
                                out,
                                "  settling:  about {n} replicates at this spread would likely settle it ({cost}--pairs {n})"
                            );
                        }
                        None => out.push_str("  settling:  the estimate sits on the claimed bound, which has no band; more pairs will not settle it\n"),
                    }
                }
                let builds = [&o.baseline.build, &o.contender.build];
                if let [Some(a), Some(b)] = builds {
                    let built = |b: &critsec_harness::run::Build| {
                        format!(
                            "{} ({}{}, {})",
                            b.revision,
                            &b.commit[..b.commit.len().min(12)],
                            if b.dirty { ", uncommitted changes" } else { "" },
                            b.profile
                        )
                    };
                    let _ = writeln!(
                        out,
                        "  builds:    baseline {}, contender {}",
                        built(a),
                        built(b)
                    );
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

/// The coherence probes' levels over the claim's blocks, each with the claim's ratio over its
/// blocks and, where there are several, its verdict at each ([`Coherence`]): whether the
/// claim's threads ran on one machine or several, and what each said.
fn coherence_text(c: &Coherence) -> String {
    let level = |l: &CoherenceLevel| {
        let iv = &l.interval;
        let range = if iv.n > 1 && !l.rare {
            format!(" [{}, {}]", ratio_text(iv.low), ratio_text(iv.high))
        } else {
            String::new()
        };
        let of = if iv.n == 1 {
            "1 replicate".to_string()
        } else {
            format!("{} replicates", iv.n)
        };
        let judged = match (&l.verdict, c.by_level()) {
            (Some(v), _) => format!(" at {}: {}", confidence_text(iv.confidence), v.label()),
            (None, true) if l.rare => ", too rare to judge (under a tenth of the blocks)".into(),
            (None, true) => ", not judged: seen in one replicate".into(),
            (None, false) => String::new(),
        };
        format!(
            "{:.0} ns in {} blocks of {of}, ratio {}{range}{judged}",
            l.round_trip_ns,
            l.blocks,
            ratio_text(iv.ratio)
        )
    };
    let head = "a cache line's round trip between the CPUs after each block:";
    let taken = match c.taken {
        0 => String::new(),
        1 => "; 1 probe found a CPU taken by other work (its block counts at the level before it)"
            .into(),
        n => format!(
            "; {n} probes found a CPU taken by other work (each block counts at the level before it)"
        ),
    };
    match c.levels.as_slice() {
        [] => format!("{head} every probe found a CPU taken by other work"),
        [one] => format!("{head} {}{taken}", level(one)),
        levels => {
            let each: Vec<String> = levels.iter().map(level).collect();
            format!(
                "{head} {} levels, {}{taken}: the CPUs' distance changed under the run, so each level is also judged on its own (METHODOLOGY.md, *Verdicts per CPU distance*)",
                each.len(),
                each.join("; ")
            )
        }
    }
}

/// A look's confidence with two significant digits of what it leaves out: 99.9968%, 99.903%.
/// A wall time for a reader: seconds, minutes, hours or days, whichever reads best.
fn duration_text(seconds: f64) -> String {
    match seconds {
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 90.0 * 60.0 => format!("{:.0} min", s / 60.0),
        s if s < 48.0 * 3600.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.0} days", s / 86_400.0),
    }
}

fn confidence_text(confidence: f64) -> String {
    let left_out = (1.0 - confidence) * 100.0;
    let digits = ((-left_out.log10() - 1e-9).ceil() as i32 + 1).clamp(1, 10) as usize;
    format!("{:.digits$}%", confidence * 100.0)
}

#[cfg(test)]
mod tests {
    use super::{coherence_text, confidence_text, duration_text, ratio_text};
    use critsec_harness::claims::{Coherence, CoherenceLevel, Verdict};
    use critsec_harness::stats::log_interval;

    fn level(ns: f64, blocks: usize, logs: &[f64], verdict: Option<Verdict>) -> CoherenceLevel {
        CoherenceLevel {
            round_trip_ns: ns,
            blocks,
            interval: log_interval(logs, 0.9995),
            verdict,
            rare: false,
        }
    }

    #[test]
    fn the_coherence_line_gives_each_level_its_ratio_and_verdict() {
        let near = level(
            66.0,
            40,
            &[0.18, 0.2, 0.22, 0.19, 0.21],
            Some(Verdict::Reproduced),
        );
        let far = level(316.0, 4, &[-0.1], None);
        let text = coherence_text(&Coherence {
            levels: vec![near.clone(), far.clone()],
            taken: 2,
        });
        assert!(
            text.contains("2 levels, 66 ns in 40 blocks of 5 replicates, ratio 1.221 ["),
            "{text}"
        );
        assert!(text.contains("] at 99.950%: REPRODUCED; 316 ns"), "{text}");
        assert!(
            text.contains(
                "316 ns in 4 blocks of 1 replicate, ratio 0.905, not judged: seen in one replicate"
            ),
            "{text}"
        );
        assert!(
            text.contains("each level is also judged on its own"),
            "{text}"
        );
        // One level: no verdict of its own; one replicate: no interval.
        let one = coherence_text(&Coherence {
            levels: vec![level(70.0, 1, &[0.1], None)],
            taken: 0,
        });
        assert!(
            one.ends_with(" 70 ns in 1 blocks of 1 replicate, ratio 1.105"),
            "{one}"
        );
        assert!(
            text.contains("; 2 probes found a CPU taken by other work (each block counts at the level before it): the CPUs' distance"),
            "{text}"
        );
        // A rare level: its ratio, no interval.
        let rare = CoherenceLevel {
            rare: true,
            ..level(28.0, 2, &[0.3, 0.1], None)
        };
        let three = coherence_text(&Coherence {
            levels: vec![rare, near.clone(), far.clone()],
            taken: 0,
        });
        assert!(
            three.contains("3 levels, 28 ns in 2 blocks of 2 replicates, ratio 1.221, too rare to judge (under a tenth of the blocks); 66 ns"),
            "{three}"
        );
        let busy = coherence_text(&Coherence {
            levels: Vec::new(),
            taken: 3,
        });
        assert!(
            busy.ends_with("every probe found a CPU taken by other work"),
            "{busy}"
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
        assert_eq!(ratio_text(2.15e-22), "2.15e-22");
        assert_eq!(ratio_text(8.47e21), "8.47e21");
    }

    /// The time a decision would take reads in the unit a reviewer plans with: ES-19856 once
    /// needed 572,777 replicates of 3.4 s.
    #[test]
    fn a_settling_time_reads_in_seconds_minutes_hours_or_days() {
        assert_eq!(duration_text(45.0), "45 s");
        assert_eq!(duration_text(148.5), "2 min");
        assert_eq!(duration_text(3.0 * 3600.0), "3.0 h");
        assert_eq!(duration_text(572_777.0 * 3.4), "23 days");
    }
}
