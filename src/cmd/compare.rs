//! `critsec compare BASE.json CONTENDER.json [MORE.json...]`: runs side by side, Rally-style.
//!
//! Reads our JMH-layout files and real JMH `-rf json` files alike; the comparison and its
//! renderings live in `critsec_harness::compare`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use critsec_harness::compare::{Format, Run, compare, render};
use critsec_harness::environment::write_atomically;
use critsec_harness::jmh::read_entries;

use super::UsageError;

/// Arguments of `critsec compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// JMH JSON files (ours from `critsec run --json`, or JMH's `-rf json`): the baseline first,
    /// then one or more contenders.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Output format: text, markdown, csv or json.
    #[arg(long, default_value = "text", value_name = "FORMAT")]
    pub format: String,
    /// Write the output to this file (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Compares the files and prints or writes the result.
pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    if args.files.len() < 2 {
        return Err(UsageError(format!(
            "compare needs a baseline and at least one contender file, got {}",
            args.files.len()
        ))
        .into());
    }
    let format: Format = args
        .format
        .parse()
        .map_err(|e: critsec_harness::compare::CompareError| UsageError(e.to_string()))?;
    let labels = labels(&args.files);
    let mut runs = Vec::with_capacity(args.files.len());
    for (path, label) in args.files.iter().zip(labels) {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let entries = read_entries(&text, &path.display().to_string())?;
        runs.push(Run { label, entries });
    }
    let comparison = compare(&runs)?;
    match &args.out {
        Some(out) => {
            let rendered = render(&comparison, format, false);
            write_atomically(out, rendered.as_bytes())
                .with_context(|| format!("cannot write {}", out.display()))?;
        }
        None => {
            let color = format == Format::Text
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none();
            print!("{}", render(&comparison, format, color));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Column labels: file names, or the paths as given when two files share a name.
fn labels(files: &[PathBuf]) -> Vec<String> {
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| p.display().to_string())
    };
    let names: Vec<String> = files.iter().map(|p| name(p)).collect();
    let unique = names
        .iter()
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        == names.len();
    if unique {
        names
    } else {
        files.iter().map(|p| p.display().to_string()).collect()
    }
}
