//! Run settings, named and defaulted as JMH names them (`-wi`, `-i`, `-w`, `-r`, `-f`, `-t`).

use crate::direction::Direction;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What the primary score measures (JMH `@BenchmarkMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// Operations per second, summed over all threads (`thrpt`).
    Throughput,
    /// Nanoseconds per operation per thread (`avgt`).
    AverageTime,
    /// Every operation timed into an HdrHistogram; percentiles reported (`sample`).
    SampleTime,
}

impl Mode {
    /// JMH's short name.
    pub fn jmh_name(self) -> &'static str {
        match self {
            Mode::Throughput => "thrpt",
            Mode::AverageTime => "avgt",
            Mode::SampleTime => "sample",
        }
    }

    /// The unit of the primary score.
    pub fn unit(self) -> &'static str {
        match self {
            Mode::Throughput => "ops/s",
            Mode::AverageTime | Mode::SampleTime => "ns/op",
        }
    }

    /// Parses `thrpt`, `avgt` or `sample` (or the long names).
    pub fn parse(s: &str) -> Result<Mode, SettingsError> {
        match s {
            "thrpt" | "throughput" | "Throughput" => Ok(Mode::Throughput),
            "avgt" | "average" | "AverageTime" => Ok(Mode::AverageTime),
            "sample" | "SampleTime" => Ok(Mode::SampleTime),
            _ => Err(SettingsError::Mode(s.to_string())),
        }
    }

    /// Which way the primary score improves: throughput up, time per operation down.
    pub fn better(self) -> Direction {
        match self {
            Mode::Throughput => Direction::Higher,
            Mode::AverageTime | Mode::SampleTime => Direction::Lower,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.jmh_name())
    }
}

/// Iteration and fork settings of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Benchmark mode.
    pub mode: Mode,
    /// Warmup iterations per fork (JMH `-wi`).
    pub warmup_iterations: u32,
    /// Length of each warmup iteration (JMH `-w`).
    pub warmup_time: Duration,
    /// Measurement iterations per fork (JMH `-i`).
    pub measurement_iterations: u32,
    /// Length of each measurement iteration (JMH `-r`).
    pub measurement_time: Duration,
    /// Forked child processes per trial; 0 runs in this process (JMH `-f`).
    pub forks: u32,
}

impl RunSettings {
    /// What `critsec run --verify` runs (rebar's `--verify`): no warmup, one short iteration in a
    /// fork, so the fork's controlled environment is what gets checked before and after.
    pub fn verify() -> Self {
        RunSettings {
            warmup_iterations: 0,
            measurement_iterations: 1,
            measurement_time: Duration::from_millis(20),
            forks: 1,
            ..RunSettings::default()
        }
    }
}

impl Default for RunSettings {
    /// Shorter than JMH's 5×10 s: these defaults finish a scenario in seconds and still give a
    /// confidence interval; use `-wi 5 -i 10 -w 10s -r 10s -f 5` for JMH-like rigour.
    fn default() -> Self {
        RunSettings {
            mode: Mode::Throughput,
            warmup_iterations: 2,
            warmup_time: Duration::from_secs(1),
            measurement_iterations: 5,
            measurement_time: Duration::from_secs(1),
            forks: 1,
        }
    }
}

/// A bad setting on the command line or in a file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    /// An unparseable duration.
    #[error("`{0}` is not a duration; use a number with a unit: 500ms, 2s, 1m, 100us")]
    Duration(String),
    /// An unknown mode.
    #[error("`{0}` is not a mode; valid modes are thrpt, avgt, sample")]
    Mode(String),
    /// An unparseable thread count.
    #[error(
        "`{0}` is not a thread count; use a positive number, `max` (all cores) or `Nx` (N times the cores)"
    )]
    Threads(String),
}

/// Parses `500ms`, `2s`, `1.5s`, `1m`, `100us`, `250ns`; a bare number means seconds (as JMH).
pub fn parse_duration(s: &str) -> Result<Duration, SettingsError> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| SettingsError::Duration(s.to_string()))?;
    let secs = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "ns" => value / 1e9,
        "m" | "min" => value * 60.0,
        _ => return Err(SettingsError::Duration(s.to_string())),
    };
    // Beyond about 584 billion years a `Duration` overflows: an error, never a panic (found by
    // the `settings` fuzz target).
    Duration::try_from_secs_f64(secs).map_err(|_| SettingsError::Duration(s.to_string()))
}

/// Formats a duration the way JMH prints iteration times (`10 s`, `500 ms`).
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns % 1_000_000_000 == 0 {
        format!("{} s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{} ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{} us", ns / 1_000)
    } else {
        format!("{ns} ns")
    }
}

/// The number of CPUs this process may use.
pub fn available_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Resolves a thread-count spec: a number, `max` (all cores, JMH's `Threads.MAX`) or `Nx`.
pub fn resolve_threads(spec: &str) -> Result<usize, SettingsError> {
    let cores = available_cores();
    let s = spec.trim();
    let n = if s == "max" {
        cores
    } else if let Some(mult) = s.strip_suffix('x') {
        // An overflowing multiple is an error, never a panic (the `settings` fuzz target's
        // second finding).
        mult.parse::<usize>()
            .ok()
            .and_then(|m| m.checked_mul(cores))
            .ok_or_else(|| SettingsError::Threads(spec.to_string()))?
    } else {
        s.parse::<usize>()
            .map_err(|_| SettingsError::Threads(spec.to_string()))?
    };
    if n == 0 {
        return Err(SettingsError::Threads(spec.to_string()));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_too_long_for_duration_is_an_error_not_a_panic() {
        // The `settings` fuzz target's finding: 33 digits of seconds.
        let s = "777777555467777555469777779777777";
        assert_eq!(parse_duration(s), Err(SettingsError::Duration(s.into())));
        assert!(parse_duration("1e3").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn a_thread_multiple_that_overflows_is_an_error_not_a_panic() {
        // The fuzz target's input, on this 2-core machine: (usize::MAX / 2 + 1) x 2 cores.
        let s = format!("{}x", usize::MAX / available_cores() + 1);
        assert_eq!(resolve_threads(&s), Err(SettingsError::Threads(s.clone())));
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("100us").unwrap(), Duration::from_micros(100));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        for bad in ["", "ms", "1h", "-1s", "1..2s", "fast"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(format_duration(Duration::from_secs(10)), "10 s");
        assert_eq!(format_duration(Duration::from_millis(200)), "200 ms");
    }

    #[test]
    fn thread_specs_resolve_against_the_core_count() {
        let cores = available_cores();
        assert_eq!(resolve_threads("3").unwrap(), 3);
        assert_eq!(resolve_threads("max").unwrap(), cores);
        assert_eq!(resolve_threads("4x").unwrap(), 4 * cores);
        for bad in ["0", "x", "many", "-2", "0x"] {
            assert!(resolve_threads(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn modes_round_trip_their_jmh_names() {
        for m in [Mode::Throughput, Mode::AverageTime, Mode::SampleTime] {
            assert_eq!(Mode::parse(m.jmh_name()).unwrap(), m);
        }
        assert!(Mode::parse("fastest").is_err());
    }
}
