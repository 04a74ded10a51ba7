//! `critsec report`: a Markdown report with verdicts, strategy tables and SVG plots, from saved
//! runs or from a fresh publication run (`--fresh`) whose files land in `results/<date>-<host>/`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use critsec_harness::claims::PairedSettings;
use critsec_harness::run::{machine, now_utc};
use critsec_present::publication::{Publication, folder_name};
use critsec_present::report::{run_folder, write_report};

use super::UsageError;
use super::progress::install_interrupt_handler;
use crate::catalog::{catalog, claims};

/// Arguments of `critsec report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Saved runs (JMH JSON written by `critsec run --json`) to report on, or a published run's
    /// folder (its run files, and its `verdicts.json` unless `--verdicts` is given).
    pub runs: Vec<PathBuf>,
    /// A verdict file written by `critsec reproduce --json`.
    #[arg(long, value_name = "FILE")]
    pub verdicts: Option<PathBuf>,
    /// Where `REPORT.md` goes.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Measure first: run the publication set and every claim, saving them in
    /// `<out>/<date>-<cores>core-<cpu>/`, then report on them.
    #[arg(long)]
    pub fresh: bool,
}

/// Writes the report; with `--fresh` measures first.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let publication = Publication::builtin();
    let (runs, verdicts) = if args.fresh {
        if !args.runs.is_empty() || args.verdicts.is_some() {
            return Err(UsageError(
                "--fresh measures its own runs; give no run files or --verdicts with it".into(),
            )
            .into());
        }
        install_interrupt_handler();
        let dir = args.out.join(folder_name(&now_utc()[..10], &machine()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let exe = std::env::current_exe().context("locating this executable for forks")?;
        let seed = PairedSettings::clock_seed();
        let runs = publication.measure(&dir, &Arc::new(catalog()), &claims()?, exe, seed)?;
        (runs, Some(dir.join("verdicts.json")))
    } else {
        if args.runs.is_empty() && args.verdicts.is_none() {
            return Err(UsageError(
                "give run files (critsec run --json), a run folder, --verdicts FILE, or --fresh"
                    .into(),
            )
            .into());
        }
        let mut runs = Vec::new();
        let mut verdicts = args.verdicts.clone();
        for path in &args.runs {
            if path.is_dir() {
                let (folder_runs, folder_verdicts) = run_folder(path, &publication)?;
                runs.extend(folder_runs);
                verdicts = verdicts.or(folder_verdicts);
            } else {
                runs.push(path.clone());
            }
        }
        (runs, verdicts)
    };
    let report = write_report(&args.out, &runs, verdicts.as_deref(), &publication)?;
    eprintln!("critsec: wrote {}", report.display());
    Ok(ExitCode::SUCCESS)
}
