//! The human table of `critsec run`, JMH style: one row per benchmark with score ± error, then
//! its secondary metrics indented below it. Error rows say why there is no number.

use std::fmt::Write as _;

use critsec_harness::run::{Hazard, Machine};
use critsec_harness::stats::Summary;
use critsec_harness::{BenchmarkResult, Params, RunSettings, Scenario};

use crate::table::{Align, Table, fmt_num};

/// `mean ± error`, or the mean alone when there is no interval.
fn score(s: &Summary) -> String {
    if s.error.is_nan() {
        fmt_num(s.mean)
    } else {
        format!("{} ± {}", fmt_num(s.mean), fmt_num(s.error))
    }
}

/// The run's results as a table.
pub fn table(results: &[BenchmarkResult]) -> String {
    use Align::{Left, Right};
    let mut t = Table::new(&[Left, Left, Left, Right, Right, Right, Left]);
    t.row([
        "Benchmark",
        "Params",
        "Mode",
        "Thr",
        "Cnt",
        "Score ± Error (99.9%)",
        "Units",
    ]);
    for r in results {
        let params = r.spec.params.to_string();
        let mode = r.spec.mode.jmh_name().to_string();
        let threads = r.spec.threads.to_string();
        match &r.error {
            Some(e) => {
                t.row([
                    r.spec.scenario.clone(),
                    params,
                    mode,
                    threads,
                    "0".into(),
                    "ERROR".into(),
                    String::new(),
                ]);
                t.below(vec![format!("    error: {e}")]);
            }
            None => {
                let s = r.primary();
                t.row([
                    r.spec.scenario.clone(),
                    params,
                    mode,
                    threads,
                    s.n.to_string(),
                    score(&s),
                    r.unit(),
                ]);
                let mut lines = Vec::new();
                if let Some(h) = r.merged_histogram() {
                    lines.push(format!(
                        "    latency: p50 {} p90 {} p99 {} p99.9 {} max {} ns",
                        fmt_num(h.value_at_quantile(0.5) as f64),
                        fmt_num(h.value_at_quantile(0.9) as f64),
                        fmt_num(h.value_at_quantile(0.99) as f64),
                        fmt_num(h.value_at_quantile(0.999) as f64),
                        fmt_num(h.max() as f64)
                    ));
                }
                for (name, (unit, raw)) in r.secondary_raw() {
                    let all: Vec<f64> = raw.into_iter().flatten().collect();
                    lines.push(format!("    :{name} {} {unit}", score(&Summary::of(&all))));
                }
                t.below(lines);
            }
        }
    }
    t.render(false)
}

/// Where a run happens, as every header says it: `on HOST (N cores, RUSTC), PROFILE build`.
pub fn machine_words(m: &Machine) -> String {
    format!(
        "on {} ({} cores, {}), {} build",
        m.host, m.cores, m.rustc, m.profile
    )
}

/// The hazard lines of a header, as JMH prints its warnings.
pub fn hazard_lines(hazards: &[Hazard]) -> String {
    let mut out = String::new();
    for h in hazards {
        let _ = writeln!(out, "# WARNING [{}]: {}", h.code, h.message);
    }
    out
}

/// The header of `critsec run`: version, machine, settings and hazards.
pub fn header(version: &str, m: &Machine, settings: &RunSettings, hazards: &[Hazard]) -> String {
    let mut out = format!("# critsec {version} {}\n", machine_words(m));
    let _ = writeln!(
        out,
        "# {} mode; {} warmup x {:?}, {} measurement x {:?}, {} fork(s){}",
        settings.mode,
        settings.warmup_iterations,
        settings.warmup_time,
        settings.measurement_iterations,
        settings.measurement_time,
        settings.forks,
        if settings.forks == 0 {
            " (in process)"
        } else {
            ""
        }
    );
    out.push_str(&hazard_lines(hazards));
    out
}

/// The result of `critsec run --verify`: one line per benchmark, its check value or failure.
pub fn verify_lines(results: &[BenchmarkResult]) -> String {
    let mut out = String::new();
    for r in results {
        let status = match &r.error {
            None => format!(
                "ok: {}",
                r.forks
                    .first()
                    .map(|f| f.verified_after.as_str())
                    .unwrap_or("")
            ),
            Some(e) => format!("FAILED: {e}"),
        };
        let _ = writeln!(out, "{}  {status}", r.label());
    }
    out
}

/// `critsec list`: each scenario with its description, parameters (defaults, accepted values,
/// help), default threads, and its thread groups at 4 threads when it has groups.
pub fn scenario_listing(scenarios: &[&dyn Scenario]) -> String {
    let mut out = String::new();
    for s in scenarios {
        let _ = writeln!(out, "{}", s.name());
        let _ = writeln!(out, "    {}", s.description());
        for p in s.params() {
            let accepted = if p.accepted.is_empty() {
                String::new()
            } else {
                format!(" (one of {})", p.accepted.join(", "))
            };
            let _ = writeln!(
                out,
                "    -p {}={}{}  {}",
                p.name,
                p.defaults.join(","),
                accepted,
                p.help
            );
        }
        let threads = s.default_threads();
        let _ = writeln!(out, "    -t {}", threads.join(","));
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
            let _ = writeln!(out, "    groups at -t 4: {}", g.join(" "));
        }
        out.push('\n');
    }
    out
}
