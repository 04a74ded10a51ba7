//! The machine, the environment hazards that distort measurements, and run metadata.
//!
//! Like JMH's warnings, hazards are detected and printed in every run header and stored with the
//! results: a debug build, an inherited `RUST_BACKTRACE`, more threads than cores, a CPU
//! frequency governor that is not `performance`, or other load on the machine.

use serde::{Deserialize, Serialize};

use crate::run::settings::available_cores;

/// The compiler this binary was built with.
pub const RUSTC_VERSION: &str = env!("CRITSEC_RUSTC_VERSION");

/// One thing about the environment that can distort the numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hazard {
    /// Short id, e.g. `debug-build`.
    pub code: String,
    /// What it is and what it does to the numbers.
    pub message: String,
}

/// Facts about the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Host name.
    pub host: String,
    /// CPU model name.
    pub cpu_model: String,
    /// CPUs available to this process.
    pub cores: usize,
    /// Total memory in GiB.
    pub memory_gib: f64,
    /// Kernel and architecture.
    pub os: String,
    /// Compiler.
    pub rustc: String,
    /// `release` or `debug`.
    pub profile: String,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Reads the machine facts (Linux `/proc` and `/sys`; "unknown" elsewhere).
pub fn machine() -> Machine {
    let cpu_model = read("/proc/cpuinfo")
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let memory_gib = read("/proc/meminfo")
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| (kb / 1024.0 / 1024.0 * 10.0).round() / 10.0)
        .unwrap_or(f64::NAN);
    let os = format!(
        "{} {} {}",
        std::env::consts::OS,
        read("/proc/sys/kernel/osrelease").unwrap_or_default(),
        std::env::consts::ARCH
    );
    Machine {
        host: read("/proc/sys/kernel/hostname")
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "unknown".into()),
        cpu_model,
        cores: available_cores(),
        memory_gib,
        os,
        rustc: RUSTC_VERSION.to_string(),
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .to_string(),
    }
}

/// Detects hazards; `max_threads` is the largest thread count the run will use, `forked` whether
/// trials run in forks that control the environment.
pub fn hazards(max_threads: usize, forked: bool) -> Vec<Hazard> {
    let mut out = Vec::new();
    let mut add = |code: &str, message: String| {
        out.push(Hazard {
            code: code.into(),
            message,
        })
    };
    if cfg!(debug_assertions) {
        add("debug-build", "this is a debug build: numbers are meaningless; build with --release (cargo run --release)".into());
    }
    for var in ["RUST_BACKTRACE", "RUST_LIB_BACKTRACE"] {
        if let Ok(v) = std::env::var(var) {
            let what = if forked {
                "forks override it (0 unless a scenario or claim sets it)"
            } else {
                "in-process trials (-f 0) inherit it: every backtrace capture costs ~100x more"
            };
            add(
                "backtrace-env",
                format!("{var}={v} is set in this environment; {what}"),
            );
        }
    }
    let cores = available_cores();
    if max_threads > cores {
        add(
            "oversubscribed",
            format!(
                "up to {max_threads} threads on {cores} cores: threads time-share the CPUs (intended where a scenario oversubscribes)"
            ),
        );
    }
    if let Some(g) = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
        && g != "performance"
    {
        add(
            "cpu-governor",
            format!(
                "CPU frequency governor is `{g}`, not `performance`: clock speed may vary during the run"
            ),
        );
    }
    if let Some(load) = read("/proc/loadavg").and_then(|l| {
        l.split_whitespace()
            .next()
            .and_then(|x| x.parse::<f64>().ok())
    }) && load > 0.5
    {
        add(
            "machine-load",
            format!(
                "1-minute load average is {load:.2} before the run: other work competes for the CPUs"
            ),
        );
    }
    out
}

/// The current git commit of the working directory, with `-dirty` if it has changes.
pub fn git_commit() -> String {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) => {
            let dirty = run(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{c}-dirty") } else { c }
        }
        None => "unknown".into(),
    }
}

/// Seconds since the Unix epoch formatted as UTC `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_timestamp(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Now, as [`utc_timestamp`].
pub fn now_utc() -> String {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc_timestamp(unix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_civil_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_796_048_999), "2026-11-30T14:29:59Z");
    }

    #[test]
    fn oversubscription_is_a_hazard() {
        let hz = hazards(available_cores() * 4, true);
        assert!(hz.iter().any(|h| h.code == "oversubscribed"));
        assert!(!hazards(1, true).iter().any(|h| h.code == "oversubscribed"));
    }
}
