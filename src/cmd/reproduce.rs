//! `critsec reproduce [CLAIM]...`: test each claim with a paired A/B run and print verdicts.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use critsec_harness::environment::{git_commit, hazards, machine, now_utc, write_atomically};
use critsec_harness::output::fmt_num;
use critsec_harness::reproduce::{
    ClaimOutcome, PairObserver, PairedSettings, reproduce_claim, validate_claim,
};
use critsec_harness::runner::{Launcher, close_matches, interrupted};
use critsec_harness::settings::{available_cores, parse_duration};
use critsec_harness::{Claim, Direction};
use serde::Serialize;

use super::UsageError;
use super::run::install_interrupt_handler;
use crate::catalog::{catalog, claims};

/// Arguments of `critsec reproduce`.
#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// Claims to reproduce: substrings of their ids (all when none is given).
    pub claims: Vec<String>,
    /// Short iterations, the default: the whole claim set takes a few minutes on 2 cores.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// JMH-like durations: 5 warmups and 20–40 pairs of 2 s per claim.
    #[arg(long)]
    pub full: bool,
    /// Override the iteration time of both sides, e.g. 500ms.
    #[arg(short = 'r', value_name = "DUR")]
    pub iteration_time: Option<String>,
    /// Override the minimum number of pairs.
    #[arg(long = "pairs", value_name = "N")]
    pub pairs: Option<u32>,
    /// Write the verdicts as JSON here (atomically).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// List the claims and exit.
    #[arg(long)]
    pub list: bool,
}

/// The verdict file: the outcomes plus where and how they were measured.
#[derive(Serialize)]
pub struct VerdictFile<'a> {
    /// When the run started (UTC).
    pub created: String,
    /// The machine.
    pub machine: critsec_harness::environment::Machine,
    /// Git commit.
    pub git_commit: String,
    /// Hazards detected before the run.
    pub hazards: Vec<critsec_harness::environment::Hazard>,
    /// The pairing settings.
    pub settings: &'a PairedSettings,
    /// One outcome per claim.
    pub outcomes: &'a [ClaimOutcome],
}

struct Progress {
    tty: bool,
}

impl PairObserver for Progress {
    fn pair_done(&mut self, claim: &Claim, ratios: &[f64]) {
        if self.tty {
            let last = ratios.last().copied().unwrap_or(f64::NAN);
            eprint!(
                "\r\x1b[2K  {}: pair {} ratio {:.3}",
                claim.id,
                ratios.len(),
                last
            );
            let _ = std::io::stderr().flush();
        }
    }
}

fn expected(c: &Claim) -> String {
    match c.direction {
        Direction::Higher => format!(">= {}", c.min_effect),
        Direction::Lower => format!("<= {}", c.min_effect),
    }
}

/// The verdict table, then one block per claim with the source's figure next to ours.
pub fn render(outcomes: &[ClaimOutcome]) -> String {
    let mut rows = vec![[
        "Claim".to_string(),
        "Verdict".into(),
        "Ratio [99.9% CI]".into(),
        "Expected".into(),
        "Metric".into(),
        "Pairs".into(),
    ]];
    for o in outcomes {
        let (verdict, ratio) = match (&o.verdict, &o.interval) {
            (Ok(v), Some(r)) => (
                v.label().to_string(),
                format!("{:.3} [{:.3}, {:.3}]", r.ratio, r.low, r.high),
            ),
            (Ok(v), None) => (v.label().to_string(), "-".into()),
            (Err(_), _) => ("ERROR".into(), "-".into()),
        };
        rows.push([
            o.claim.id.clone(),
            verdict,
            ratio,
            expected(&o.claim),
            o.claim.metric.clone(),
            o.ratios.len().to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out.push('\n');
    for o in outcomes {
        out.push_str(&format!("{}: {}\n", o.claim.id, o.claim.title));
        out.push_str(&format!("  source:    {}\n", o.claim.source));
        out.push_str(&format!("  they saw:  {}\n", o.claim.source_figure));
        match &o.verdict {
            Ok(v) => {
                out.push_str(&format!(
                    "  we saw:    baseline {} {u} -> contender {} {u} ({} {} pairs, {:.0} s)\n",
                    fmt_num(o.baseline.mean()),
                    fmt_num(o.contender.mean()),
                    v.label(),
                    o.ratios.len(),
                    o.seconds,
                    u = o.baseline.unit
                ));
                if let critsec_harness::reproduce::Verdict::Inconclusive { pairs_needed } = v {
                    match pairs_needed {
                        Some(n) => out.push_str(&format!("  settling:  about {n} pairs at this spread would likely settle it (--pairs {n})\n")),
                        None => out.push_str("  settling:  the estimate sits on the claimed bound; more pairs will not settle it\n"),
                    }
                }
                out.push_str(&format!(
                    "  baseline:  {}\n  contender: {}\n",
                    o.baseline.label, o.contender.label
                ));
            }
            Err(e) => out.push_str(&format!("  error:     {e}\n")),
        }
        if let Some(note) = &o.claim.note {
            out.push_str(&format!("  note:      {note}\n"));
        }
        out.push('\n');
    }
    out
}

/// Reproduces the selected claims; exit 1 if any claim failed to run or verify.
pub fn run(args: &ReproduceArgs) -> anyhow::Result<ExitCode> {
    let all = claims()?;
    let catalog = Arc::new(catalog());
    let selected: Vec<&Claim> = all
        .iter()
        .filter(|c| args.claims.is_empty() || args.claims.iter().any(|p| c.id.contains(p.as_str())))
        .collect();
    if selected.is_empty() {
        let close = close_matches(&args.claims.join(" "), all.iter().map(|c| c.id.as_str()));
        let hint = if close.is_empty() {
            String::new()
        } else {
            format!("; did you mean: {}?", close.join(", "))
        };
        return Err(UsageError(format!(
            "no claim matches `{}`{hint}",
            args.claims.join(" ")
        ))
        .into());
    }
    for c in &selected {
        validate_claim(&catalog, c).map_err(|e| anyhow::anyhow!(e))?;
    }
    if args.list {
        for c in selected {
            println!(
                "{:<34} {}\n{:<34} source: {}\n",
                c.id, c.title, "", c.source
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut settings = if args.full {
        PairedSettings::full()
    } else {
        PairedSettings::quick()
    };
    if let Some(r) = &args.iteration_time {
        settings.iteration_time = parse_duration(r)?;
    }
    if let Some(p) = args.pairs {
        if p < 2 {
            return Err(UsageError(
                "--pairs must be at least 2: an interval needs two pairs".into(),
            )
            .into());
        }
        settings.min_pairs = p;
        settings.max_pairs = settings.max_pairs.max(p);
    }
    let m = machine();
    println!(
        "# critsec reproduce: {} claim(s), {} mode, on {} ({} cores, {}), {} build",
        selected.len(),
        if args.full { "full" } else { "quick" },
        m.host,
        m.cores,
        m.rustc,
        m.profile
    );
    let hz = hazards(available_cores() * 4, settings.forked);
    for h in &hz {
        println!("# WARNING [{}]: {}", h.code, h.message);
    }
    install_interrupt_handler();
    let created = now_utc();
    let exe = std::env::current_exe().context("locating this executable for forks")?;
    let launcher = Launcher::new(catalog, Some(exe));
    let tty = std::io::stderr().is_terminal();
    let mut outcomes = Vec::new();
    for (i, c) in selected.iter().enumerate() {
        if interrupted() {
            break;
        }
        eprintln!("[{}/{}] {} ...", i + 1, selected.len(), c.id);
        let o = reproduce_claim(&launcher, c, &settings, &mut Progress { tty });
        if tty {
            eprint!("\r\x1b[2K");
        }
        match &o.verdict {
            Ok(v) => eprintln!(
                "  {} ({} pairs, {:.1} s)",
                v.label(),
                o.ratios.len(),
                o.seconds
            ),
            Err(e) => eprintln!("  ERROR: {e}"),
        }
        outcomes.push(o);
    }
    println!();
    print!("{}", render(&outcomes));
    if let Some(path) = &args.json {
        let file = VerdictFile {
            created,
            machine: m,
            git_commit: git_commit(),
            hazards: hz,
            settings: &settings,
            outcomes: &outcomes,
        };
        write_atomically(path, &serde_json::to_vec_pretty(&file)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("critsec: wrote {}", path.display());
    }
    let failed = outcomes.iter().filter(|o| o.verdict.is_err()).count();
    if failed > 0 || interrupted() {
        eprintln!(
            "critsec: {failed} claim(s) could not be measured{}",
            if interrupted() { "; interrupted" } else { "" }
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
