//! `critsec report`: a Markdown report with verdicts, strategy tables and charts of paired
//! ratios, from saved runs, from a fresh publication run (`--fresh`) whose files land in
//! `results/<date>-<host>/`, or from a run folder whose charts `--pair` measures first.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use critsec_harness::claims::PairedSettings;
use critsec_harness::run::{machine, now_utc};
use critsec_present::paired::measure_pairs;
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
    /// Measure first: run the publication set, its plots' paired ratios and every claim,
    /// saving them in `<out>/<date>-<cores>core-<cpu>-<commit>/`, then report on them.
    #[arg(long)]
    pub fresh: bool,
    /// Measure the publication set's plots in pairs into the one run folder given (its
    /// `<file>-<k>.pairs.json`, replacing any there), then report; runs and claims are not
    /// measured.
    #[arg(long, conflicts_with = "fresh")]
    pub pair: bool,
    /// A publication set of your own instead of `results/publication.toml` (its layout).
    #[arg(long, value_name = "FILE")]
    pub publication: Option<PathBuf>,
}

/// Writes the report; with `--fresh` measures first.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let publication = match &args.publication {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Publication::parse(&text, &path.display().to_string())?
        }
        None => Publication::builtin(),
    };
    if args.pair {
        let [dir] = args.runs.as_slice() else {
            return Err(
                UsageError("--pair measures into one run folder: give it alone".into()).into(),
            );
        };
        if !dir.is_dir() {
            return Err(UsageError(format!("--pair: {} is not a folder", dir.display())).into());
        }
        install_interrupt_handler();
        let exe = std::env::current_exe().context("locating this executable for forks")?;
        let seed = PairedSettings::clock_seed();
        measure_pairs(&publication, dir, &Arc::new(catalog()), exe, seed)?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_harness::claims::validate_claim;
    use critsec_present::paired::{configurations, place, plot_claims};

    /// Every plot of the shipped set becomes valid claims against the real scenarios, one per
    /// point, each lying where its chart draws it: no plot leaves a varying parameter free.
    #[test]
    fn every_shipped_plot_becomes_valid_claims_against_the_scenarios() {
        let publication = Publication::builtin();
        let catalog = catalog();
        let mut total = 0;
        for run in &publication.runs {
            let configs = configurations(&publication, run, &catalog).unwrap();
            for (k, plot) in run.plots.iter().enumerate() {
                let claims = plot_claims(run, k, plot, &configs)
                    .unwrap_or_else(|e| panic!("{}: {e}", run.file));
                assert_eq!(claims.is_empty(), plot.baseline().is_none(), "{}", run.file);
                for c in &claims {
                    validate_claim(&catalog, c).unwrap_or_else(|e| panic!("{}: {e}", c.id));
                    assert!(place(plot, c).is_some(), "{}", c.id);
                }
                total += claims.len();
            }
        }
        assert!(total > 100, "{total} points in all");
    }
}
