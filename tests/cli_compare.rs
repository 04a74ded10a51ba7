//! End-to-end tests of `critsec compare`: exit codes, rows, formats, files and errors.

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    format!(
        "{}/present/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn critsec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("critsec runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory for one test's files, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("critsec-cli-compare-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn compares_two_critsec_runs_as_a_table() {
    let base = fixture("critsec_registry_base.json");
    let contender = fixture("critsec_registry_contender.json");
    let o = critsec(&["compare", &base, &contender]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Metric"), "{out}");
    assert!(out.contains("Diff %"));
    assert!(out.contains("registry.get_core_micro cores=10,strategy=snapshot (t=2)"));
    assert!(out.contains("+26.38% * better"), "{out}");
    assert!(out.contains("only in critsec_registry_base.json"));
    assert!(out.contains("only in critsec_registry_contender.json"));
    assert!(out.contains("Geometric mean"));
    assert!(
        !out.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
}

#[test]
fn compares_real_jmh_files() {
    let o = critsec(&[
        "compare",
        &fixture("jmh_solr_cores.json"),
        &fixture("jmh_solr_cores_rwlock.json"),
        "--format",
        "markdown",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("| score (thrpt) | org.apache.solr.core.SolrCoresBenchTest.getCoreFromAnyList (t=12) | 1,659,233 ± 38,724 | 2,352,587 ± 71,896 |"), "{out}");
    assert!(out.contains("·gc.alloc.rate.norm"));
}

#[test]
fn three_files_and_csv_and_json_to_a_file() {
    let base = fixture("critsec_registry_base.json");
    let contender = fixture("critsec_registry_contender.json");
    let o = critsec(&["compare", &base, &contender, &contender, "--format", "csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("status,metric,benchmark"), "{out}");
    // The same file twice: the labels number the repeats.
    assert!(
        out.contains("critsec_registry_contender.json (#3)"),
        "{out}"
    );

    let dir = Scratch::new("out");
    let path = dir.path("cmp.json");
    let o = critsec(&["compare", &base, &contender, "--format", "json", "--out"])
        .status
        .code();
    assert_eq!(o, Some(2), "--out needs a value");
    let o = critsec(&[
        "compare",
        &base,
        &contender,
        "--format",
        "json",
        "--out",
        path.to_str().expect("utf-8 temp path"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("written")).expect("json");
    assert_eq!(json["runs"].as_array().map(Vec::len), Some(2));
    assert_eq!(json["intersection"], 2);
}

#[test]
fn fewer_than_two_files_or_a_bad_format_is_a_usage_error() {
    let base = fixture("critsec_registry_base.json");
    let o = critsec(&["compare", &base]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("at least one contender"),
        "{}",
        stderr(&o)
    );
    assert_eq!(critsec(&["compare"]).status.code(), Some(2));
    let o = critsec(&["compare", &base, &base, "--format", "html"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("valid formats: text, markdown, csv, json"));
}

#[test]
fn missing_and_malformed_files_say_which_and_where() {
    let base = fixture("critsec_registry_base.json");
    let o = critsec(&["compare", &base, "/nonexistent/run.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("cannot read /nonexistent/run.json"),
        "{}",
        stderr(&o)
    );

    let dir = Scratch::new("malformed");
    let bad = dir.path("bad.json");
    std::fs::write(
        &bad,
        "[\n  {\"benchmark\": \"x\", \"mode\": \"thrpt\", \"threads\": \"four\"}\n]\n",
    )
    .expect("write");
    let o = critsec(&["compare", &base, bad.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("bad.json: line 2, column"), "{err}");
    assert!(err.contains("expected a JMH `-rf json` array"), "{err}");

    let meta = dir.path("run.meta.json");
    std::fs::write(&meta, "{\"critsec_version\": \"0.1.0\"}\n").expect("write");
    let o = critsec(&["compare", &base, meta.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "run.meta.json is a run's metadata; compare reads the JMH JSON file next to it"
        ),
        "{}",
        stderr(&o)
    );
}

/// Two published verdict files compare claim by claim; a verdict file and a run do not mix.
#[test]
fn verdict_files_compare_claim_by_claim_and_do_not_mix_with_runs() {
    let published = |folder: &str| {
        format!(
            "{}/results/{folder}/verdicts.json",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    let (a, b) = (
        published("2026-12-03-2core-amd-epyc-7dc8ed2591c6"),
        published("2026-12-06-2core-amd-epyc-398a9790929b"),
    );
    let o = critsec(&["compare", &a, &b]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("ES-19856-gets"), "{out}");
    assert!(
        out.contains("moved between REPRODUCED and NOT REPRODUCED: "),
        "{out}"
    );
    let o = critsec(&["compare", &a, &b, "--format", "csv"]);
    assert!(
        stdout(&o).starts_with("claim,run,verdict,ratio,moved\n"),
        "{}",
        stdout(&o)
    );
    let o = critsec(&["compare", &a, &fixture("critsec_registry_base.json")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("compare takes verdict files or runs, not both"),
        "{}",
        stderr(&o)
    );
}
