//! `critsec doctor`: machine facts and environment hazards, before anyone trusts a number.

use std::process::ExitCode;
use std::time::Duration;

use critsec_harness::run::allowed_cpus;
use critsec_harness::run::{available_cores, parse_duration};
use critsec_harness::run::{cache_line_round_trips, coherence_levels};
use critsec_harness::run::{git_commit, hazards, machine};

use super::UsageError;

/// Arguments of `critsec doctor`.
#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    /// Also time a cache line's round trip between two CPUs for this long (e.g. 30s), in 50 ms
    /// samples: on a VM it may switch between levels as the host moves the virtual CPUs, and
    /// every contended multi-threaded benchmark with it (METHODOLOGY.md, *Cache-line distance
    /// between the CPUs*).
    #[arg(long, value_name = "DUR")]
    pub coherence: Option<String>,
}

/// One sample of the coherence timeline.
const SAMPLE: Duration = Duration::from_millis(50);

/// Prints the machine and the hazards, and the coherence timeline if asked; exits 0 (2 on a
/// bad duration).
pub fn run(args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let probe = args
        .coherence
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| UsageError(format!("--coherence: {e}")))?;
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
    if let Some(length) = probe {
        coherence(length);
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the round trip's levels between the first and the last allowed CPU, and a timeline
/// of one median per second.
fn coherence(length: Duration) {
    let cpus = allowed_cpus();
    let (Some(&first), Some(&last)) = (cpus.first(), cpus.last()) else {
        println!("coherence   not measured: this platform sets no CPU affinity");
        return;
    };
    let samples = (length.as_nanos() / SAMPLE.as_nanos()).max(1) as usize;
    let series = match cache_line_round_trips([first, last], samples, SAMPLE) {
        Ok(s) => s,
        Err(e) => {
            println!("coherence   not measured: {e}");
            return;
        }
    };
    let Some(l) = coherence_levels(&series) else {
        return;
    };
    let head = format!(
        "coherence   a cache line's round trip between CPUs {first} and {last}, {samples} samples of {} ms:",
        SAMPLE.as_millis()
    );
    let each: Vec<String> = (0..l.levels.len())
        .map(|i| {
            format!(
                "{:.0} ns ({:.0}% of the time)",
                l.levels[i].median_ns,
                l.share(i) * 100.0
            )
        })
        .collect();
    let taken = match l.taken {
        0 => String::new(),
        n => format!("; {n} sample(s) found a CPU taken by other work"),
    };
    match each.as_slice() {
        [one] => println!("{head} one level, {one}{taken}"),
        _ => println!(
            "{head} {} levels, {}, {} switch(es){taken}\n            \
             a contended multi-threaded benchmark runs at a different speed at each level, so its slices come from several machines",
            each.len(),
            each.join(", "),
            l.switches
        ),
    }
    let per_second = (1_000 / SAMPLE.as_millis() as usize).max(1);
    let timeline: Vec<String> = series
        .chunks(per_second)
        .map(|c| {
            let mut c = c.to_vec();
            c.sort_by(f64::total_cmp);
            format!("{:.0}", c[c.len() / 2])
        })
        .collect();
    println!("            ns per second: {}", timeline.join(" "));
}
