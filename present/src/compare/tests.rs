//! Tests of the comparison and its renderings, on our files and real JMH files.
use super::*;
use critsec_harness::format::read_entries;

const BASE: &str = include_str!("../../tests/fixtures/critsec_registry_base.json");
const CONTENDER: &str = include_str!("../../tests/fixtures/critsec_registry_contender.json");
const JMH_SYNC: &str = include_str!("../../tests/fixtures/jmh_solr_cores.json");
const JMH_RW: &str = include_str!("../../tests/fixtures/jmh_solr_cores_rwlock.json");

fn run(label: &str, text: &str) -> Run {
    Run::new(
        label,
        read_entries(text, label).expect("fixture parses"),
        None,
    )
}

/// Our run with what its `.meta.json` says of the directions of the fixtures' secondaries.
fn ours_run(label: &str, text: &str) -> Run {
    let mut r = run(label, text);
    for e in &r.entries {
        let better = r.better.entry(e.benchmark.clone()).or_default();
        for name in e.secondary_metrics.keys() {
            if name.starts_with("lock.") {
                better.insert(name.clone(), Direction::Lower);
            } else if name.starts_with("group.") || name == "threads.median" {
                better.insert(name.clone(), Direction::Higher);
            }
        }
    }
    r
}

fn ours() -> Comparison {
    compare(&[
        ours_run("base.json", BASE),
        ours_run("contender.json", CONTENDER),
    ])
    .unwrap()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn find<'a>(c: &'a Comparison, benchmark: &str, metric: Option<&str>) -> &'a Row {
    c.rows
        .iter()
        .find(|r| r.benchmark_label() == benchmark && r.metric.as_deref() == metric)
        .unwrap_or_else(|| panic!("no row {benchmark} {metric:?}"))
}

fn value(score: f64, error: Option<f64>, raw: &[f64]) -> Value {
    Value {
        score,
        error,
        iterations: raw.len(),
        raw: raw.to_vec(),
        forks: 1,
        fork_means: Vec::new(),
        fork_rho: None,
    }
}

#[test]
fn intervals_decide_without_iterations() {
    let check = |b: (f64, f64), c: (f64, f64), expected: Option<bool>, test: SignificanceTest| {
        let s = significance(&value(b.0, Some(b.1), &[]), &value(c.0, Some(c.1), &[]));
        assert_eq!((s.significant, s.test), (expected, test), "{b:?} vs {c:?}");
    };
    check(
        (100.0, 5.0),
        (120.0, 10.0),
        Some(true),
        SignificanceTest::Intervals,
    ); // [95,105] [110,130]
    check(
        (100.0, 15.0),
        (120.0, 10.0),
        Some(false),
        SignificanceTest::Intervals,
    ); // [85,115] [110,130]
    check(
        (120.0, 1.0),
        (100.0, 1.0),
        Some(true),
        SignificanceTest::Intervals,
    );
    // One iteration on a side (JMH writes "NaN" as its error) and no interval: untestable.
    let s = significance(&value(100.0, None, &[100.0]), &value(120.0, Some(1.0), &[]));
    assert_eq!((s.significant, s.test), (None, SignificanceTest::None));
}

#[test]
fn direction_is_the_modes_the_producers_or_jmhs_profilers() {
    let entry = |mode: &str| {
        let mut e = read_entries(BASE, "base").unwrap().remove(0);
        e.mode = mode.to_string();
        e
    };
    let mut ours = Run::default();
    let e = entry("thrpt");
    ours.better.insert(
        e.benchmark.clone(),
        BTreeMap::from([("lock_timeouts".to_string(), Direction::Lower)]),
    );
    let jmh = Run::default();
    let check = |run: &Run, mode: &str, metric: Option<&str>, expected: Option<Direction>| {
        assert_eq!(
            direction(run, &entry(mode), metric),
            expected,
            "{mode} {metric:?}"
        );
    };
    check(&jmh, "thrpt", None, Some(Direction::Higher));
    check(&jmh, "avgt", None, Some(Direction::Lower));
    check(&jmh, "sample", None, Some(Direction::Lower));
    check(&jmh, "ss", None, Some(Direction::Lower));
    check(&jmh, "sample", Some("·p0.99"), Some(Direction::Lower));
    check(
        &jmh,
        "thrpt",
        Some("·gc.alloc.rate.norm"),
        Some(Direction::Lower),
    );
    check(&jmh, "thrpt", Some("·gc.alloc.rate"), None);
    // Nobody said: neutral, whatever the name suggests.
    check(&jmh, "thrpt", Some("lock_timeouts"), None);
    check(&jmh, "thrpt", Some("latency"), None);
    // The producer said, through the run's meta.
    check(
        &ours,
        "thrpt",
        Some("lock_timeouts"),
        Some(Direction::Lower),
    );
    check(&ours, "thrpt", Some("cpu.utilisation"), None);
}

#[test]
fn units_convert_between_time_scales_only() {
    assert_eq!(unit_factor("ops/s", "ops/s"), Some(1.0));
    assert!(close(unit_factor("ops/ms", "ops/s").unwrap(), 1000.0, 1e-9));
    assert!(close(unit_factor("us/op", "ns/op").unwrap(), 1000.0, 1e-9));
    assert!(close(unit_factor("ms", "us").unwrap(), 1000.0, 1e-9));
    assert_eq!(unit_factor("ops/s", "ns/op"), None);
    assert_eq!(unit_factor("B/op", "MB/op"), None);
    assert_eq!(unit_factor("%", "count"), None);
}

#[test]
fn compares_two_critsec_runs() {
    let c = ours();
    assert_eq!(c.runs.len(), 2);
    assert_eq!(c.intersection, 2);
    // snapshot at 2 threads: 9,863,333 -> 12,465,000 ops/s, +26.4%, Welch significant.
    let row = find(
        &c,
        "registry.get_core_micro cores=10,strategy=snapshot (t=2)",
        None,
    );
    assert_eq!(row.unit, "ops/s");
    assert_eq!(row.better, Some(Direction::Higher));
    assert_eq!(row.baseline.iterations, 6);
    let v = row.contenders[0].as_ref().unwrap();
    assert!(
        close(v.diff_pct.unwrap(), 26.3773, 1e-3),
        "{:?}",
        v.diff_pct
    );
    assert_eq!(v.significance.test, SignificanceTest::WelchForks);
    assert_eq!(v.change, Change::Better);
    // mutex at 2 threads: +0.7%, within the noise.
    let row = find(
        &c,
        "registry.get_core_micro cores=10,strategy=mutex (t=2)",
        None,
    );
    assert_eq!(row.contenders[0].as_ref().unwrap().change, Change::Same);
    // Secondary metrics on both sides become rows, with their own direction.
    let waits = find(
        &c,
        "registry.get_core_micro cores=10,strategy=mutex (t=2)",
        Some("lock.registry.cores.waits"),
    );
    assert_eq!(waits.better, Some(Direction::Lower));
    assert_eq!(waits.unit, "waits/op");
    let cpu = find(
        &c,
        "registry.get_core_micro cores=10,strategy=snapshot (t=2)",
        Some("cpu.utilisation"),
    );
    assert_eq!(cpu.better, None);
}

#[test]
fn one_side_only_entries_are_listed_not_dropped() {
    let c = ours();
    let only: Vec<String> = c
        .unmatched
        .iter()
        .map(|u| format!("{} {:?} {:?}", u.benchmark_label(), u.metric, u.present_in))
        .collect();
    assert_eq!(
        only,
        [
            "registry.get_core_micro cores=10,strategy=mutex (t=1) None [\"base.json\"]",
            "registry.get_core_micro cores=10,strategy=snapshot (t=4) None [\"contender.json\"]",
        ]
    );
    assert!(
        c.rows.iter().all(|r| r.threads == 2),
        "no row for one-side entries"
    );
    let text = text(&c, false);
    assert!(
        text.contains("strategy=mutex (t=1) [thrpt]: only in base.json"),
        "{text}"
    );
    assert!(text.contains("strategy=snapshot (t=4) [thrpt]: only in contender.json"));
}

#[test]
fn a_metric_missing_on_one_side_is_listed() {
    let mut base = run("a.json", BASE);
    base.entries[0].secondary_metrics.remove("cpu.utilisation");
    let c = compare(&[base, run("b.json", CONTENDER)]).unwrap();
    let u = c
        .unmatched
        .iter()
        .find(|u| u.metric.as_deref() == Some("cpu.utilisation"))
        .expect("listed");
    assert_eq!(
        (u.present_in.clone(), u.missing_from.clone()),
        (vec!["b.json".to_string()], vec!["a.json".to_string()])
    );
}

#[test]
fn geometric_mean_is_over_the_intersection() {
    let c = ours();
    // Ratios of the two entries in both files: mutex t=2 4,146,667 / 4,116,667 and
    // snapshot t=2 12,465,000 / 9,863,333; the one-side entries do not count.
    let r1: f64 = 4_146_666.666_667 / 4_116_666.666_667;
    let r2: f64 = 12_465_000.0 / 9_863_333.333_333;
    let g = &c.geomeans[0];
    assert_eq!((g.entries, g.skipped, g.oriented), (2, 0, false));
    assert_eq!(g.better, Some(Direction::Higher));
    assert!(
        close(g.ratio.unwrap(), (r1 * r2).sqrt(), 1e-6),
        "{:?}",
        g.ratio
    );
    assert!(text(&c, false).contains(
        "over the 2 entries present in all files: contender.json 1.128x (higher is better)"
    ));
}

#[test]
fn mixed_directions_orient_the_ratios() {
    // thrpt doubles (better) and avgt halves (better): oriented, both ratios are 2.
    let file = |thrpt: f64, avgt: f64| {
        format!(
            r#"[{{"benchmark":"b.B.t","mode":"thrpt","threads":1,"primaryMetric":{{"score":{thrpt},
            "scoreError":"NaN","scoreConfidence":["NaN","NaN"],"scoreUnit":"ops/s"}}}},
            {{"benchmark":"b.B.a","mode":"avgt","threads":1,"primaryMetric":{{"score":{avgt},
            "scoreError":"NaN","scoreConfidence":["NaN","NaN"],"scoreUnit":"ns/op"}}}}]"#
        )
    };
    let c = compare(&[run("a", &file(100.0, 40.0)), run("b", &file(200.0, 20.0))]).unwrap();
    let g = &c.geomeans[0];
    assert!(g.oriented && g.better == Some(Direction::Higher));
    assert!(close(g.ratio.unwrap(), 2.0, 1e-12));
    assert!(text(&c, false).contains("b 2.000x (directions mixed"));
}

#[test]
fn compares_real_jmh_files() {
    let c = compare(&[run("sync.json", JMH_SYNC), run("rwlock.json", JMH_RW)]).unwrap();
    let name = "org.apache.solr.core.SolrCoresBenchTest.getCoreFromAnyList (t=12)";
    let p = find(&c, name, None);
    let v = p.contenders[0].as_ref().unwrap();
    assert_eq!(v.significance.test, SignificanceTest::Welch);
    assert_eq!(v.change, Change::Better);
    assert!(close(v.diff_pct.unwrap(), 41.787, 1e-2), "{:?}", v.diff_pct);
    // JMH < 1.37 spells profiler metrics with a middle dot; gc.count has "NaN" as its error
    // and one value, so it is untestable.
    let count = find(&c, name, Some("·gc.count"));
    let v = count.contenders[0].as_ref().unwrap();
    assert_eq!(
        (v.significance.test, v.change),
        (SignificanceTest::None, Change::Unknown)
    );
    assert_eq!(count.baseline.error, None);
    assert_eq!(
        find(&c, name, Some("·gc.alloc.rate.norm")).better,
        Some(Direction::Lower)
    );
    assert!(c.unmatched.is_empty());
    assert_eq!(c.runs[0].jmh_versions, ["1.32"]);
}

#[test]
fn jmh_against_ours_lists_both_sides() {
    let c = compare(&[run("jmh.json", JMH_SYNC), run("ours.json", BASE)]).unwrap();
    assert!(c.rows.is_empty());
    assert_eq!(c.unmatched.len(), 4);
    assert_eq!(c.intersection, 0);
    assert!(text(&c, false).contains("no entry is present in all files"));
}

#[test]
fn jmh_without_raw_data_and_in_sample_mode() {
    // -Djmh.json.rawData=false leaves empty arrays; sample mode has histograms instead.
    let entry = |score: f64, error: &str, raw: &str| {
        format!(
            r#"{{"jmhVersion":"1.21","benchmark":"b.B.get","mode":"sample","threads":1,"forks":1,
            "primaryMetric":{{"score":{score},"scoreError":{error},"scoreConfidence":[0,0],
            "scoreUnit":"us/op",{raw}}},"secondaryMetrics":{{}}}}"#
        )
    };
    let no_raw = |score, error| format!("[{}]", entry(score, error, r#""rawData":[[]]"#));
    let c = compare(&[
        run("a", &no_raw(10.0, "0.5")),
        run("b", &no_raw(12.0, "0.5")),
    ])
    .unwrap();
    let v = c.rows[0].contenders[0].as_ref().unwrap();
    assert_eq!(
        (v.significance.test, v.change),
        (SignificanceTest::Intervals, Change::Worse)
    );
    let c = compare(&[
        run("a", &no_raw(10.0, "\"NaN\"")),
        run("b", &no_raw(12.0, "0.5")),
    ])
    .unwrap();
    assert_eq!(
        c.rows[0].contenders[0].as_ref().unwrap().change,
        Change::Unknown
    );
    // Histograms: iterations with means 10, 10.5, 11 against 20, 20.5, 21 (t = 24.5, df = 4).
    let hist = |a: f64| {
        let (b, c) = (a + 0.5, a + 1.0);
        format!(
            "[{}]",
            entry(
                a + 0.5,
                "1.0",
                &format!(r#""rawDataHistogram":[[[[{a},2]],[[{b},3]],[[{c},1],[{c},4]]]]"#)
            )
        )
    };
    let c = compare(&[run("a", &hist(10.0)), run("b", &hist(20.0))]).unwrap();
    let row = &c.rows[0];
    assert_eq!(row.baseline.raw, [10.0, 10.5, 11.0]);
    let v = row.contenders[0].as_ref().unwrap();
    assert_eq!(v.significance.test, SignificanceTest::Welch);
    assert_eq!(v.change, Change::Worse);
}

#[test]
fn units_are_converted_before_comparing() {
    let entry = |score: f64, unit: &str| {
        format!(
            r#"[{{"benchmark":"b.B.m","mode":"thrpt","threads":1,"primaryMetric":{{"score":{score},
            "scoreError":"NaN","scoreConfidence":["NaN","NaN"],"scoreUnit":"{unit}"}}}}]"#
        )
    };
    let c = compare(&[
        run("a", &entry(2000.0, "ops/s")),
        run("b", &entry(3.0, "ops/ms")),
    ])
    .unwrap();
    let v = c.rows[0].contenders[0].as_ref().unwrap();
    assert!(close(v.value.score, 3000.0, 1e-9) && close(v.diff_pct.unwrap(), 50.0, 1e-9));
    let c = compare(&[
        run("a", &entry(2000.0, "ops/s")),
        run("b", &entry(3.0, "B/op")),
    ])
    .unwrap();
    let v = c.rows[0].contenders[0].as_ref().unwrap();
    assert!(!v.comparable && v.diff.is_none());
    assert!(text(&c, false).contains("units differ"));
}

#[test]
fn three_runs_sit_side_by_side() {
    let c = compare(&[
        run("base.json", BASE),
        run("contender.json", CONTENDER),
        run("again.json", CONTENDER),
    ])
    .unwrap();
    assert_eq!(c.geomeans.len(), 2);
    let t = text(&c, false);
    let header = t
        .lines()
        .find(|l| l.starts_with("Metric"))
        .expect("table header");
    for col in ["Baseline", "contender.json", "again.json", "Diff %", "Unit"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(t.contains("Contender 2: again.json"));
    // The t=4 entry is in both contenders but not in the baseline.
    assert!(
        t.contains("in contender.json, again.json; missing from base.json"),
        "{t}"
    );
}

#[test]
fn colour_only_when_asked() {
    let c = ours();
    assert!(!text(&c, false).contains('\x1b'));
    let coloured = text(&c, true);
    assert!(coloured.contains("\x1b[32m"), "an improvement is green");
}

#[test]
fn too_few_runs_and_unknown_formats_are_errors() {
    assert_eq!(
        compare(&[run("a", BASE)]).unwrap_err(),
        CompareError::TooFewRuns { given: 1 }
    );
    let e = "html".parse::<Format>().unwrap_err().to_string();
    assert!(e.contains("text, markdown, csv, json"), "{e}");
    assert_eq!("md".parse::<Format>(), Ok(Format::Markdown));
}

#[test]
fn malformed_files_say_where() {
    let truncated = &JMH_SYNC[..JMH_SYNC.len() / 2];
    let e = read_entries(truncated, "sync.json").unwrap_err();
    assert_eq!(e.origin, "sync.json");
    assert!(e.line > 1);
    assert!(e.to_string().contains("expected a JMH"));
    let e = read_entries(r#"[{"benchmark":"x","mode":"thrpt"}]"#, "m.json").unwrap_err();
    assert!(e.to_string().contains("missing field `threads`"), "{e}");
}

#[test]
fn markdown_rendering() {
    insta::assert_snapshot!(markdown(&ours()));
}

#[test]
fn csv_rendering() {
    insta::assert_snapshot!(csv(&ours()));
}

#[test]
fn json_rendering() {
    insta::assert_snapshot!(json(&ours()));
}

#[test]
fn text_rendering() {
    insta::assert_snapshot!(text(&ours(), false));
}

/// A JMH entry whose forks' iteration scores are `forks`.
fn forked(forks: &[&[f64]]) -> String {
    let e: serde_json::Value = serde_json::from_str::<Vec<serde_json::Value>>(JMH_SYNC)
        .unwrap()
        .remove(0);
    let mut e = e;
    let all: Vec<f64> = forks.iter().flat_map(|f| f.iter().copied()).collect();
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    e["forks"] = forks.len().into();
    e["primaryMetric"]["score"] = mean.into();
    e["primaryMetric"]["rawData"] = serde_json::to_value(forks).unwrap();
    e["secondaryMetrics"] = serde_json::json!({});
    serde_json::to_string(&vec![e]).unwrap()
}

#[test]
fn forks_are_the_unit_and_disagreeing_forks_are_flagged() {
    // Every fork steady (±0.1%), but the forks differ from each other by 5-10%: pooling
    // 15 iterations calls a 10% difference significant; over 3 forks a side it is not.
    let bimodal = forked(&[
        &[10.0, 10.01, 9.99, 10.0, 10.0],
        &[10.5, 10.51, 10.49, 10.5, 10.5],
        &[11.0, 11.01, 10.99, 11.0, 11.0],
    ]);
    let steady = forked(&[
        &[11.0, 11.01, 10.99, 11.0, 11.0],
        &[11.5, 11.51, 11.49, 11.5, 11.5],
        &[12.0, 12.01, 11.99, 12.0, 12.0],
    ]);
    let c = compare(&[run("a.json", &bimodal), run("b.json", &steady)]).unwrap();
    let row = &c.rows[0];
    assert_eq!(row.baseline.forks, 3);
    assert!(row.baseline.forks_disagree(), "{:?}", row.baseline.fork_rho);
    let v = row.contenders[0].as_ref().unwrap();
    assert_eq!(v.significance.test, SignificanceTest::WelchForks);
    assert_eq!(v.significance.significant, Some(false));
    // Pooled iterations would have called it significant.
    let pooled = welch(&row.baseline.raw, &v.value.raw, CONFIDENCE).unwrap();
    assert_eq!(pooled.significant, Some(true));
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("forks disagree in a.json")),
        "{:?}",
        c.notes
    );
    assert!(v.value.forks_disagree());
}

/// Guards against matching on joined text: entries whose parameters join to the same `k=v,k=v`
/// text would be matched as one benchmark, giving one row and a geometric mean of 2.0 between
/// different benchmarks.
#[test]
fn regression_13_entries_with_different_params_are_not_matched() {
    let file = |params: &str, score: f64| {
        format!(
            r#"[{{"benchmark":"b.B.m","mode":"thrpt","threads":1,"params":{params},"primaryMetric":{{"score":{score},
            "scoreError":"NaN","scoreConfidence":["NaN","NaN"],"scoreUnit":"ops/s"}}}}]"#
        )
    };
    let c = compare(&[
        run("a.json", &file(r#"{"a":"1,b=2"}"#, 100.0)),
        run("b.json", &file(r#"{"a":"1","b":"2"}"#, 200.0)),
    ])
    .unwrap();
    assert!(c.rows.is_empty(), "{:?}", c.rows);
    assert_eq!(c.intersection, 0);
    assert_eq!(c.geomeans[0].ratio, None);
    let only: Vec<&[String]> = c.unmatched.iter().map(|u| &u.present_in[..]).collect();
    assert_eq!(only, [["a.json".to_string()], ["b.json".to_string()]]);
}

/// Guards against a `NaN` score falling through to a verdict: a baseline whose score is `NaN`
/// (JMH writes it when one iteration is `NaN`) against a contender twice as fast gives a `NaN`
/// diff while Welch's test on the finite iterations is significant, and the cell must not fall
/// through to "worse".
#[test]
fn regression_14_a_nan_score_is_unknown_never_better_or_worse() {
    let entry = |name: &str, score: &str, raw: &str| {
        format!(
            r#"{{"benchmark":"b.B.{name}","mode":"thrpt","threads":1,"primaryMetric":{{"score":{score},
            "scoreError":"NaN","scoreConfidence":["NaN","NaN"],"scoreUnit":"ops/s","rawData":[{raw}]}}}}"#
        )
    };
    let base = format!(
        "[{},{}]",
        entry("nan", r#""NaN""#, r#"[100, "NaN", 101, 99]"#),
        entry("ok", "100", "[100, 101, 99]")
    );
    let contender = format!(
        "[{},{}]",
        entry("nan", "200", "[200, 201, 199, 200]"),
        entry("ok", "200", "[200, 201, 199]")
    );
    let line = |c: &Comparison| {
        let t = text(c, false);
        t.lines()
            .find(|l| l.contains("b.B.nan"))
            .unwrap()
            .to_string()
    };
    let c = compare(&[run("a.json", &base), run("b.json", &contender)]).unwrap();
    let v = find(&c, "b.B.nan (t=1)", None).contenders[0]
        .as_ref()
        .unwrap();
    assert_eq!(
        (v.change, v.diff, v.diff_pct),
        (Change::NotFinite, None, None)
    );
    let l = line(&c);
    assert!(l.contains("unknown: baseline score is NaN"), "{l}");
    assert!(!l.contains("worse") && !l.contains("better"), "{l}");
    assert!(csv(&c).contains(",not-finite,"));
    assert!(json(&c).contains("\"change\": \"not-finite\""));
    // The other way round: a NaN contender is neither better nor worse either.
    let swapped = compare(&[run("b.json", &contender), run("a.json", &base)]).unwrap();
    let w = find(&swapped, "b.B.nan (t=1)", None).contenders[0]
        .as_ref()
        .unwrap();
    assert_eq!(w.change, Change::NotFinite);
    assert!(line(&swapped).contains("unknown: contender score is NaN"));
    // The geometric mean leaves the entry out and says why.
    let g = &c.geomeans[0];
    assert_eq!((g.entries, g.skipped, g.not_finite), (1, 1, 1));
    assert!(close(g.ratio.unwrap(), 2.0, 1e-12));
    let t = text(&c, false);
    assert!(
        t.contains("b.json 2.000x (higher is better) (1 skipped: a score is NaN or infinite)"),
        "{t}"
    );
}
