//! `critsec doctor`: machine facts and environment hazards, before anyone trusts a number.

use std::process::ExitCode;

use critsec_harness::run::environment::{git_commit, hazards, machine};
use critsec_harness::run::settings::available_cores;

/// Prints the machine and the hazards; always exits 0.
pub fn run() -> anyhow::Result<ExitCode> {
    let m = machine();
    println!("host        {}", m.host);
    println!("cpu         {}", m.cpu_model);
    println!("cores       {}", m.cores);
    println!("memory      {} GiB", m.memory_gib);
    println!("os          {}", m.os);
    println!("rustc       {}", m.rustc);
    println!("profile     {}", m.profile);
    println!("git commit  {}", git_commit());
    let hz = hazards(available_cores(), true);
    if hz.is_empty() {
        println!("hazards     none detected");
    } else {
        println!("hazards");
        for h in hz {
            println!("  [{}] {}", h.code, h.message);
        }
    }
    Ok(ExitCode::SUCCESS)
}
