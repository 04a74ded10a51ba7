//! End-to-end tests of the `critsec` binary: usage errors, forks' environment, JSON output.

use std::process::{Command, Output};

fn critsec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(args)
        .output()
        .expect("running critsec")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("critsec-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn an_unknown_scenario_is_a_usage_error_with_suggestions() {
    let o = critsec(&["run", "harness/emty"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("no scenario matches `harness/emty`") && e.contains("harness/empty"),
        "{e}"
    );
}

#[test]
fn unknown_parameters_and_values_list_the_valid_ones() {
    let o = critsec(&["run", "harness/env", "-p", "colour=red"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("valid parameters: backtrace"),
        "{}",
        stderr(&o)
    );
    let o = critsec(&["run", "harness/env", "-p", "backtrace=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("valid values: 0, 1"), "{}", stderr(&o));
}

#[test]
fn malformed_durations_and_thread_counts_are_usage_errors() {
    let o = critsec(&["run", "harness/empty", "-r", "fast"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`fast` is not a duration"),
        "{}",
        stderr(&o)
    );
    let o = critsec(&["run", "harness/empty", "-t", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a thread count"), "{}", stderr(&o));
}

#[test]
fn forks_apply_their_environment_and_json_follows_jmh() {
    let dir = temp_dir("env");
    let json = dir.join("env.json");
    let o = critsec(&[
        "run",
        "harness/env",
        "-p",
        "backtrace=0,1",
        "-wi",
        "0",
        "-i",
        "2",
        "-r",
        "30ms",
        "-f",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let entries: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let entries = entries.as_array().unwrap();
    assert_eq!(entries.len(), 2);
    for e in entries {
        let wanted = e["params"]["backtrace"].as_str().unwrap();
        let seen = e["secondaryMetrics"]["env.rust_backtrace"]["score"]
            .as_f64()
            .unwrap();
        assert_eq!(
            seen,
            if wanted == "1" { 1.0 } else { 0.0 },
            "fork with backtrace={wanted} saw {seen}"
        );
        assert_eq!(e["mode"], "thrpt");
        assert_eq!(
            e["primaryMetric"]["rawData"][0].as_array().unwrap().len(),
            2
        );
        assert!(
            e["jvmArgs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a == &format!("RUST_BACKTRACE={wanted}"))
        );
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("env.meta.json")).unwrap()).unwrap();
    assert_eq!(meta["benchmarks"].as_array().unwrap().len(), 2);
    assert!(meta["machine"]["cores"].as_u64().unwrap() >= 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn verify_mode_checks_without_measuring() {
    let o = critsec(&["run", "harness/empty", "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("harness/empty [] t=1  ok: nothing to verify")
    );
}

#[test]
fn list_and_doctor_succeed() {
    let o = critsec(&["list", "harness"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("harness/env") && out.contains("-p backtrace=0 (one of 0, 1)"),
        "{out}"
    );
    let o = critsec(&["doctor"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("cores"));
}

#[test]
fn reproduce_lists_claims_and_rejects_unknown_ones() {
    let o = critsec(&["reproduce", "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("SOLR-16497-micro"));
    let o = critsec(&["reproduce", "NO-SUCH-CLAIM"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn an_interrupted_run_still_writes_whole_json() {
    use std::io::BufRead;
    let dir = temp_dir("interrupt");
    let json = dir.join("int.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args([
            "run",
            "harness",
            "-p",
            "backtrace=0,1",
            "-wi",
            "0",
            "-i",
            "3",
            "-r",
            "200ms",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The run header is printed once the interrupt handler is in place.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut header = String::new();
    stdout.read_line(&mut header).unwrap();
    assert!(header.starts_with("# critsec"), "{header}");
    // When the signal lands after that does not matter: before, during or between benchmarks
    // the run must end with a parseable file that says it was interrupted.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    std::io::copy(&mut stdout, &mut std::io::sink()).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let entries: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(
        entries.as_array().unwrap().len() < 3,
        "the run was cut short"
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("int.meta.json")).unwrap()).unwrap();
    assert_eq!(meta["interrupted"], true);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn report_renders_saved_runs_and_rejects_missing_input() {
    let dir = temp_dir("report");
    let json = dir.join("registry-request_mix.json");
    let o = critsec(&[
        "run",
        "registry/request_mix",
        "-p",
        "strategy=mutex,snapshot",
        "-p",
        "writer_interval_ms=0",
        "-t",
        "1,2",
        "-wi",
        "0",
        "-i",
        "2",
        "-r",
        "20ms",
        "-f",
        "0",
        "--json",
        json.to_str().unwrap(),
    ]);
    // The error row of a failed benchmark is in the table on stdout.
    assert!(
        o.status.success(),
        "{}\n{}",
        stderr(&o),
        String::from_utf8_lossy(&o.stdout)
    );
    let o = critsec(&[
        "report",
        json.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(
        md.contains("| params | threads | mutex | snapshot |"),
        "{md}"
    );
    // Its chart is a ratio measured in pairs, which saved runs alone do not hold: the report
    // says how to measure it, and draws nothing from unpaired runs.
    assert!(
        md.contains("plot 0 of registry-request_mix: not measured in pairs in this folder")
            && md.contains("--pair` measures it"),
        "{md}"
    );
    assert!(!dir.join("registry-request_mix-0.svg").exists());
    let o = critsec(&["report", "--out", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}
