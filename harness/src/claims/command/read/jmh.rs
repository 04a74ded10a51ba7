//! JMH's `-rf json` file: the iteration scores of every fork of the one entry a side selects,
//! and which way its primary score improves (from the entry's mode).

use super::super::Invocation;
use super::{EntrySelection, pairs_text};
use crate::format::jmh::{JmhEntry, JmhMetric, read_entries};

/// Values of a JMH result file: the iteration scores of every fork of the entry `select` picks
/// (its score when it lists none).
pub fn parse_jmh(text: &str, select: &EntrySelection, metric: &str) -> Result<Invocation, String> {
    let start = text.trim_start();
    if start.is_empty() {
        return Err("the JMH result file is empty".into());
    }
    if !start.starts_with('[') {
        return Err(format!(
            "the JMH result file is not JSON (it starts `{}`): JMH writes CSV unless told \
             otherwise; add `-rf json` to the command's arguments",
            start
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(40)
                .collect::<String>()
        ));
    }
    let entries = read_entries(text, "the JMH result file").map_err(|e| e.to_string())?;
    if entries.is_empty() {
        return Err(
            "the JMH result is empty ([]): JMH writes that when its fork died or the benchmark \
             threw"
                .into(),
        );
    }
    let chosen: Vec<(usize, &JmhEntry)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| select.matches(e))
        .collect();
    let all = || {
        entries
            .iter()
            .map(entry_words)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (position, entry) = match chosen.as_slice() {
        [one] => *one,
        [] => {
            return Err(format!(
                "the JMH result has no entry{}; it has: {}",
                select.words(),
                all()
            ));
        }
        _ => {
            return Err(format!(
                "the JMH result has {} entries{}; pick one with the claim's `benchmark` and \
                 `mode` and the side's `params` (it has: {})",
                chosen.len(),
                select.words(),
                all()
            ));
        }
    };
    let m: &JmhMetric = if metric == "primary" {
        &entry.primary_metric
    } else {
        entry.secondary_metrics.get(metric).ok_or_else(|| {
            format!(
                "the JMH result has no secondary metric `{metric}`; it has: {}",
                entry
                    .secondary_metrics
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?
    };
    // Every iteration as written, NaN included (whoever uses the values decides what they may
    // be); the score stands in only for a file that lists no iterations.
    let values: Vec<f64> = m.raw_data.iter().flatten().flatten().map(|v| v.0).collect();
    let forks: Vec<usize> = m
        .raw_data
        .iter()
        .flatten()
        .map(Vec::len)
        .filter(|&n| n > 0)
        .collect();
    let (values, forks) = if values.is_empty() {
        (vec![m.score.0], vec![1])
    } else {
        (values, forks)
    };
    Ok(Invocation {
        benchmark: entry.benchmark.clone(),
        unit: m.score_unit.clone(),
        // JMH's layout gives a direction only to the primary score, through the mode.
        better: (metric == "primary").then(|| entry.better()).flatten(),
        values,
        forks,
        runtime: runtime(entry),
        position,
    })
}

/// The runtime a JMH entry reports, in words: `JDK 17.0.9, OpenJDK 64-Bit Server VM 17.0.9+9,
/// JMH 1.37, args -Xmx2g` (what it leaves out, it did not report).
fn runtime(e: &JmhEntry) -> String {
    let mut parts = Vec::new();
    if !e.jdk_version.is_empty() {
        parts.push(format!("JDK {}", e.jdk_version));
    }
    let vm = format!("{} {}", e.vm_name, e.vm_version);
    if !vm.trim().is_empty() {
        parts.push(vm.trim().to_string());
    }
    if !e.jmh_version.is_empty() {
        parts.push(format!("JMH {}", e.jmh_version));
    }
    if !e.jvm_args.is_empty() {
        parts.push(format!("args {}", e.jvm_args.join(" ")));
    }
    if !e.jvm.is_empty() {
        parts.push(e.jvm.clone());
    }
    parts.join(", ")
}

/// An entry's name, mode and @Param values, as errors list them.
fn entry_words(e: &JmhEntry) -> String {
    match &e.params {
        Some(p) if !p.is_empty() => format!("{} {} [{}]", e.benchmark, e.mode, pairs_text(p)),
        _ => format!("{} {}", e.benchmark, e.mode),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::Direction;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn entry(imp: &str, mode: &str, score: f64) -> String {
        format!(
            r#"{{"benchmark":"org.B.run","mode":"{mode}","threads":1,"params":{{"impl":"{imp}","size":"10"}},"primaryMetric":{{"score":{score},"scoreError":0,"scoreConfidence":[0,0],"scoreUnit":"ops/s","rawData":[[{score}]]}}}}"#
        )
    }

    #[test]
    fn params_pick_one_combination_out_of_a_result_with_several() {
        let file = format!(
            "[{},{}]",
            entry("chm", "thrpt", 5.0),
            entry("cow", "thrpt", 7.0)
        );
        let pick = |imp: &str| {
            let params = params(&[("impl", imp)]);
            let select = EntrySelection {
                benchmark: Some("run"),
                params: Some(&params),
                ..EntrySelection::default()
            };
            parse_jmh(&file, &select, "primary")
        };
        assert_eq!(pick("chm").unwrap().values, vec![5.0]);
        assert_eq!(pick("cow").unwrap().values, vec![7.0]);
        let e = pick("skiplist").unwrap_err();
        assert!(
            e.contains("no entry for run with impl=skiplist")
                && e.contains("org.B.run thrpt [impl=cow, size=10]"),
            "{e}"
        );
        let e = parse_jmh(&file, &EntrySelection::default(), "primary").unwrap_err();
        assert!(e.contains("2 entries") && e.contains("`params`"), "{e}");
    }

    #[test]
    fn a_mode_picks_one_of_a_benchmark_run_in_two_and_gives_the_direction() {
        let file = format!(
            "[{},{}]",
            entry("chm", "thrpt", 5.0),
            entry("chm", "avgt", 200.0)
        );
        let e = parse_jmh(&file, &EntrySelection::default(), "primary").unwrap_err();
        assert!(
            e.contains("`mode`")
                && e.contains("org.B.run thrpt [impl=chm, size=10]")
                && e.contains("org.B.run avgt [impl=chm, size=10]"),
            "{e}"
        );
        let pick = |mode: &str| {
            let select = EntrySelection {
                mode: Some(mode),
                ..EntrySelection::default()
            };
            parse_jmh(&file, &select, "primary").unwrap()
        };
        let avgt = pick("avgt");
        assert_eq!(
            (avgt.values[0], avgt.better),
            (200.0, Some(Direction::Lower))
        );
        let thrpt = pick("thrpt");
        assert_eq!(
            (thrpt.values[0], thrpt.better),
            (5.0, Some(Direction::Higher))
        );
        let e = parse_jmh(
            &file,
            &EntrySelection {
                mode: Some("ss"),
                ..EntrySelection::default()
            },
            "primary",
        )
        .unwrap_err();
        assert!(e.contains("no entry in mode ss"), "{e}");
    }

    #[test]
    fn a_csv_result_asks_for_rf_json() {
        let csv = "\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\"\n";
        let e = parse_jmh(csv, &EntrySelection::default(), "primary").unwrap_err();
        assert!(e.contains("-rf json") && e.contains("Benchmark"), "{e}");
    }

    #[test]
    fn jmh_iterations_are_read_as_written_and_the_score_stands_in_only_for_none() {
        let file = |raw: &str| {
            format!(
                r#"[{{"benchmark":"b.run","mode":"thrpt","threads":1,"primaryMetric":{{"score":7,"scoreError":0,"scoreConfidence":[0,0],"scoreUnit":"ops/s"{raw}}}}}]"#
            )
        };
        let values = |raw: &str| {
            parse_jmh(&file(raw), &EntrySelection::default(), "primary")
                .unwrap()
                .values
        };
        let nan = values(r#","rawData":[["NaN","NaN"]]"#);
        assert!(nan.len() == 2 && nan.iter().all(|v| v.is_nan()), "{nan:?}");
        assert_eq!(values(r#","rawData":[[1.5],[2.5]]"#), vec![1.5, 2.5]);
        let forks = parse_jmh(
            &file(r#","rawData":[[1.0,3.0],[],[5.0]]"#),
            &EntrySelection::default(),
            "primary",
        )
        .unwrap();
        assert_eq!(forks.forks, vec![2, 1]);
        assert_eq!(forks.fork_means(), vec![2.0, 5.0]);
        assert_eq!(values(""), vec![7.0]);
    }
}
