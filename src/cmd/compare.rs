//! `critsec compare BASE.json CONTENDER.json [MORE.json...]`: runs side by side, Rally-style,
//! or verdict files (`reproduce --json`) claim by claim.
//!
//! Reads our JMH-layout files and real JMH `-rf json` files alike; the comparison and its
//! renderings live in `critsec_present::compare`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use critsec_harness::claims::VerdictFile;
use critsec_harness::format::RunMeta;
use critsec_harness::format::read_entries;
use critsec_harness::format::write_atomically;
use critsec_present::compare::{Format, Run, compare, compare_verdicts, render, render_verdicts};

use super::UsageError;

/// Arguments of `critsec compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// JMH JSON files (ours from `critsec run --json`, or JMH's `-rf json`): the baseline first,
    /// then one or more contenders. Or verdict files (`critsec reproduce --json`): each claim's
    /// verdict in every run, and which moved between REPRODUCED and NOT REPRODUCED.
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
        .map_err(|e: critsec_present::compare::CompareError| UsageError(e.to_string()))?;
    let labels = labels(&args.files);
    let first = std::fs::read_to_string(&args.files[0])
        .with_context(|| format!("cannot read {}", args.files[0].display()))?;
    if VerdictFile::parse(&first, "").is_ok() {
        let mut runs = Vec::with_capacity(args.files.len());
        for (path, label) in args.files.iter().zip(labels) {
            let file = VerdictFile::read(path).map_err(|e| {
                UsageError(format!(
                    "{e} (the first file is a verdict file: compare takes verdict files or runs, not both)"
                ))
            })?;
            runs.push((label, file.outcomes));
        }
        return output(args, format, |_| {
            render_verdicts(&compare_verdicts(&runs), format)
        });
    }
    let mut runs = Vec::with_capacity(args.files.len());
    for (path, label) in args.files.iter().zip(labels) {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let entries = read_entries(&text, &path.display().to_string()).map_err(|e| {
            let error = anyhow::Error::new(e);
            if path.to_string_lossy().ends_with(".meta.json") {
                // The sibling metadata file of a run is an easy file to pass by mistake.
                error.context(format!(
                    "{} is a run's metadata; compare reads the JMH JSON file next to it",
                    path.display()
                ))
            } else {
                error
            }
        })?;
        let meta = read_meta(path);
        runs.push(Run::new(label, entries, meta.as_ref()));
    }
    let comparison = compare(&runs)?;
    output(args, format, |color| render(&comparison, format, color))
}

/// Writes what `rendered` gives to `--out`, or prints it (coloured on a terminal, for text).
fn output(
    args: &CompareArgs,
    format: Format,
    rendered: impl Fn(bool) -> String,
) -> anyhow::Result<ExitCode> {
    match &args.out {
        Some(out) => write_atomically(out, rendered(false).as_bytes())
            .with_context(|| format!("cannot write {}", out.display()))?,
        None => {
            let color = format == Format::Text
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none();
            print!("{}", rendered(color));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Column labels: the shortest path suffixes that tell the files apart (usually file names).
fn labels(files: &[PathBuf]) -> Vec<String> {
    let suffix = |p: &Path, n: usize| {
        let parts: Vec<String> = p
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        parts[parts.len().saturating_sub(n)..].join("/")
    };
    let deepest = files
        .iter()
        .map(|p| p.components().count())
        .max()
        .unwrap_or(1);
    for n in 1..=deepest {
        let labels: Vec<String> = files.iter().map(|p| suffix(p, n)).collect();
        let distinct: std::collections::BTreeSet<&String> = labels.iter().collect();
        if distinct.len() == labels.len() {
            return labels;
        }
    }
    // The same path given twice: number the repeats.
    files
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{} (#{})", p.display(), i + 1))
        .collect()
}

/// The `.meta.json` beside a run of ours, which says which way its secondary metrics improve;
/// `None` for a real JMH file. One that cannot be read is said on stderr, not fatal: the
/// comparison goes on with those metrics neutral.
fn read_meta(json: &Path) -> Option<RunMeta> {
    RunMeta::read_beside(json).unwrap_or_else(|e| {
        eprintln!("note: {e}; its secondary metrics compare as neutral");
        None
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn labels_are_the_shortest_distinct_suffixes() {
        let check = |files: &[&str], expected: &[&str]| {
            let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
            assert_eq!(super::labels(&files), expected);
        };
        check(&["a/base.json", "b/pr.json"], &["base.json", "pr.json"]);
        check(
            &["x/a/run.json", "x/b/run.json"],
            &["a/run.json", "b/run.json"],
        );
        check(
            &["run.json", "run.json"],
            &["run.json (#1)", "run.json (#2)"],
        );
    }
}
