//! critsec: run, reproduce and compare server hot-path benchmarks.
//!
//! This binary is flag definitions and glue: scenarios live in the `bench-*` crates, the runner
//! and statistics in `critsec-harness`, the systems in the crates under `core/`. Exit codes:
//! 0 success, 1 a run or check failed, 2 bad usage.

mod catalog;
mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// critsec: find out whether a hot-path change really makes a server faster.
#[derive(Parser, Debug)]
#[command(name = "critsec", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List scenarios with their parameters, thread groups and defaults.
    List(cmd::list::ListArgs),
    /// Run scenarios JMH-style and print (and optionally save) the results.
    Run(cmd::run::RunArgs),
    /// Reproduce claims: paired A/B runs with a ratio, its 99.9% interval and a verdict.
    Reproduce(cmd::reproduce::ReproduceArgs),
    /// A/B test two commands (a reviewer's two JMH jars, two builds of any benchmark) without a
    /// claim file: writes the claim it tests and prints its verdict.
    Ab(cmd::ab::AbArgs),
    /// Run the A/A claims many times at several slice lengths: this machine's noise, and
    /// whether the intervals cover 1 as often as they say.
    Calibrate(cmd::calibrate::CalibrateArgs),
    /// Parse Lucene classic queries and print Lucene's rendering or the error.
    Parse(cmd::parse::ParseArgs),
    /// Compare runs side by side: baseline first, then one or more contenders (JMH JSON files).
    Compare(cmd::compare::CompareArgs),
    /// Write results/REPORT.md: verdicts, strategy tables and plots (`--fresh` measures first).
    Report(cmd::report::ReportArgs),
    /// Print the machine facts and the environment hazards that distort measurements.
    Doctor(cmd::doctor::DoctorArgs),
    /// One node process of a `replication/ispn_perf` run with `driver=net` (started by the
    /// coordinator, or by hand on each host of a cluster).
    #[command(hide = true)]
    Node(cmd::node::NodeArgs),
}

fn main() -> ExitCode {
    // A fork (or a probe of its protocol) re-executes this binary with a hidden first
    // argument; it must not see clap.
    if let Some(code) = critsec_harness::run::as_fork(catalog::catalog) {
        return ExitCode::from(code as u8);
    }
    restore_default_sigpipe();
    let cli = Cli::parse_from(cmd::jmh_style_args(std::env::args()));
    let result = match cli.command {
        Command::List(args) => cmd::list::run(&args),
        Command::Run(args) => cmd::run::run(&args),
        Command::Reproduce(args) => cmd::reproduce::run(&args),
        Command::Ab(args) => cmd::ab::run(&args),
        Command::Calibrate(args) => cmd::calibrate::run(&args),
        Command::Parse(args) => cmd::parse::run(&args),
        Command::Compare(args) => cmd::compare::run(&args),
        Command::Report(args) => cmd::report::run(&args),
        Command::Doctor(args) => cmd::doctor::run(&args),
        Command::Node(args) => cmd::node::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("critsec: {e:#}");
            ExitCode::from(cmd::exit_code_of(&e))
        }
    }
}

/// Like other Unix tools, exit quietly when the reader of our output goes away
/// (`critsec list | head`), instead of panicking on a broken pipe.
fn restore_default_sigpipe() {
    // SAFETY: setting SIGPIPE's disposition to the default before any thread starts has no
    // preconditions; it only restores what Rust's runtime changed at start-up.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
