//! `critsec list [PATTERN]`: scenarios with their parameters, groups and defaults.

use std::process::ExitCode;

use critsec_harness::Scenario;
use critsec_harness::run::{did_you_mean, matches};
use critsec_present::run_table::scenario_listing;

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
        let hint = did_you_mean(
            args.pattern.as_deref().unwrap_or(""),
            catalog.scenarios().iter().map(|s| s.name()),
        );
        return Err(UsageError(format!(
            "no scenario matches `{}`{hint}",
            args.pattern.as_deref().unwrap_or("")
        ))
        .into());
    }
    print!("{}", scenario_listing(&selected));
    Ok(ExitCode::SUCCESS)
}
