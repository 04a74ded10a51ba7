//! `critsec list [PATTERN]`: scenarios with their parameters, groups and defaults.

use std::process::ExitCode;

use critsec_harness::runner::{close_matches, matches};
use critsec_harness::{Params, Scenario};

use super::UsageError;
use crate::catalog::catalog;

/// Arguments of `critsec list`.
#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// Show only scenarios whose name contains this.
    pattern: Option<String>,
}

/// Prints the matching scenarios.
pub fn run(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let catalog = catalog();
    let patterns: Vec<String> = args.pattern.iter().cloned().collect();
    let selected: Vec<&dyn Scenario> = catalog
        .scenarios()
        .iter()
        .map(|s| &**s)
        .filter(|s| matches(s.name(), &patterns))
        .collect();
    if selected.is_empty() {
        let close = close_matches(
            args.pattern.as_deref().unwrap_or(""),
            catalog.scenarios().iter().map(|s| s.name()),
        );
        let hint = if close.is_empty() {
            String::new()
        } else {
            format!("; did you mean: {}?", close.join(", "))
        };
        return Err(UsageError(format!(
            "no scenario matches `{}`{hint}",
            args.pattern.as_deref().unwrap_or("")
        ))
        .into());
    }
    for s in selected {
        println!("{}", s.name());
        println!("    {}", s.description());
        for p in s.params() {
            let accepted = if p.accepted.is_empty() {
                String::new()
            } else {
                format!(" (one of {})", p.accepted.join(", "))
            };
            println!(
                "    -p {}={}{}  {}",
                p.name,
                p.defaults.join(","),
                accepted,
                p.help
            );
        }
        let threads = s.default_threads();
        println!("    -t {}", threads.join(","));
        let defaults = Params(
            s.params()
                .into_iter()
                .map(|p| {
                    (
                        p.name.to_string(),
                        p.defaults.first().cloned().unwrap_or_default(),
                    )
                })
                .collect(),
        );
        let groups = s.groups(&defaults, 4);
        if groups.len() > 1 || groups[0].name != "op" {
            let g: Vec<String> = groups
                .iter()
                .map(|g| format!("{}:{}", g.name, g.threads))
                .collect();
            println!("    groups at -t 4: {}", g.join(" "));
        }
        println!();
    }
    Ok(ExitCode::SUCCESS)
}
