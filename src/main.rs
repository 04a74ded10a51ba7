//! critsec: run, reproduce and compare server hot-path benchmarks.
//!
//! (Minimal entry point of the `sys-parser` branch: only the `parse` subcommand; the lead merges it
//! into the full CLI.)

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd {
    pub mod parse;
}

#[derive(Parser, Debug)]
#[command(name = "critsec", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse Lucene classic queries and print Lucene's rendering or the error.
    Parse(cmd::parse::ParseArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Parse(args) => cmd::parse::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("critsec: {e:#}");
            ExitCode::from(2)
        }
    }
}
