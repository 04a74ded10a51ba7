//! criterion's own files: each benchmark it ran leaves `<id>/new/benchmark.json` (its full id)
//! and `<id>/new/sample.json` (the iteration counts and total times of its samples) under
//! `CRITERION_HOME`. The time per iteration is the sample's total time over its iterations:
//! what criterion's linear regression estimates, without its model.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::super::Invocation;
use crate::direction::Direction;

#[derive(Deserialize)]
struct Benchmark {
    full_id: String,
}

#[derive(Deserialize)]
struct Sample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

/// The time per iteration (ns) of benchmark `id` (criterion's full id, `group/function/value`)
/// among those criterion left under `home`; the only one there when `id` is `None`.
pub fn read_criterion(home: &Path, id: Option<&str>) -> Result<Invocation, String> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for file in benchmark_files(home) {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let b: Benchmark = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not criterion's benchmark.json ({e})", file.display()))?;
        found.push((b.full_id, file.with_file_name("sample.json")));
    }
    found.sort();
    let names = || {
        let ids: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        if ids.is_empty() {
            "none (did it run criterion with this filter?)".to_string()
        } else {
            ids.join(", ")
        }
    };
    let (full_id, sample) = match id {
        Some(id) => found.iter().find(|(n, _)| n == id).ok_or_else(|| {
            format!(
                "criterion measured no benchmark `{id}`; it measured: {}",
                names()
            )
        })?,
        None => match found.as_slice() {
            [one] => one,
            _ => {
                return Err(format!(
                    "criterion measured several benchmarks; name one with the claim's `benchmark`: {}",
                    names()
                ));
            }
        },
    };
    let text = std::fs::read_to_string(sample).map_err(|e| format!("{}: {e}", sample.display()))?;
    let s: Sample = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not criterion's sample.json ({e})", sample.display()))?;
    let (iters, time): (f64, f64) = (s.iters.iter().sum(), s.times.iter().sum());
    if s.iters.len() != s.times.len() || iters.is_nan() || iters <= 0.0 || !time.is_finite() {
        return Err(format!(
            "{}: a sample of {} iteration counts and {} times, {iters} iterations in all",
            sample.display(),
            s.iters.len(),
            s.times.len()
        ));
    }
    Ok(Invocation {
        benchmark: full_id.clone(),
        unit: "ns".into(),
        better: Some(Direction::Lower),
        values: vec![time / iters],
        forks: vec![1],
        runtime: "criterion".into(),
        position: 0,
    })
}

/// Every `new/benchmark.json` under `dir`: criterion keeps the last run in `new/` and the one
/// before in `base/`.
fn benchmark_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "benchmark.json")
                && path
                    .parent()
                    .and_then(|p| p.file_name())
                    .is_some_and(|n| n == "new")
            {
                out.push(path);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(home: &Path, dir: &str, id: &str, iters: &str, times: &str) {
        let d = home.join(dir).join("new");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("benchmark.json"), format!(r#"{{"group_id":"g","function_id":null,"value_str":null,"throughput":null,"full_id":"{id}","directory_name":"{dir}","title":"{id}"}}"#)).unwrap();
        std::fs::write(
            d.join("sample.json"),
            format!(r#"{{"sampling_mode":"Linear","iters":{iters},"times":{times}}}"#),
        )
        .unwrap();
    }

    #[test]
    fn the_time_per_iteration_is_the_total_time_over_the_iterations() {
        let home = std::env::temp_dir().join(format!("critsec-criterion-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        write(
            &home,
            "lookup/snapshot",
            "lookup/snapshot",
            "[10.0, 20.0, 30.0]",
            "[100.0, 210.0, 290.0]",
        );
        write(&home, "lookup/mutex", "lookup/mutex", "[1.0]", "[50.0]");
        let i = read_criterion(&home, Some("lookup/snapshot")).unwrap();
        assert_eq!(
            (i.values[0], i.unit.as_str(), i.better),
            (10.0, "ns", Some(Direction::Lower))
        );
        let e = read_criterion(&home, Some("lookup/rwlock")).unwrap_err();
        assert!(
            e.contains("no benchmark `lookup/rwlock`")
                && e.contains("lookup/mutex, lookup/snapshot"),
            "{e}"
        );
        assert!(read_criterion(&home, None).unwrap_err().contains("several"));
        let empty = home.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(
            read_criterion(&empty, Some("x"))
                .unwrap_err()
                .contains("none")
        );
        std::fs::remove_dir_all(&home).unwrap();
    }
}
