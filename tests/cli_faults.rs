//! Faults in the runner: forks that are killed, panic, hang or close their pipe in
//! the middle of an iteration, claim sides (the fake benchmark) that do the same, and output that
//! cannot be written. Each gives a clear error row or message, the other benchmarks and claims go
//! on, and no file is ever left half-written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::text;

fn critsec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(args)
        .output()
        .expect("running critsec")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("critsec-faults-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The benchmarks of a JMH JSON file, by their `fault` parameter; panics unless it parses whole.
fn faults_in(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("the JSON file exists");
    let v: serde_json::Value = serde_json::from_str(&text).expect("whole JSON");
    v.as_array()
        .expect("a JMH array")
        .iter()
        .map(|e| e["params"]["fault"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// `critsec run harness/fault` with the given faults, short iterations, and `extra` flags.
fn run_faults(faults: &str, json: &Path, extra: &[&str]) -> Output {
    let p = format!("fault={faults}");
    let json = json.display().to_string();
    let mut args = vec![
        "run",
        "harness/fault",
        "-p",
        &p,
        "-t",
        "1",
        "--warmup-iterations",
        "0",
        "-i",
        "2",
        "-r",
        "100ms",
        "--json",
        &json,
    ];
    args.extend_from_slice(extra);
    critsec(&args)
}

/// The table row of the benchmark whose `fault` is `fault`, with the line under it (an error
/// row's message).
fn row(out: &str, fault: &str) -> String {
    let needle = format!("fault={fault} ");
    let lines: Vec<&str> = out.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.contains(&needle))
        .unwrap_or_else(|| panic!("no row for {fault} in\n{out}"));
    lines[i..(i + 2).min(lines.len())].join("\n")
}

#[test]
fn a_fork_killed_panicking_or_closing_its_pipe_is_an_error_row_and_the_others_go_on() {
    let d = temp_dir("die");
    let json = d.join("run.json");
    let o = run_faults(
        "none,kill,panic,close-stdout,none",
        &json,
        &["--timeout", "60s"],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("3 of 5 benchmarks failed"), "{out}");
    assert!(row(&out, "kill").contains("signal: 9"), "{out}");
    // A worker's panic ends its fork at once (not at the timeout), its message in the row.
    let panic = row(&out, "panic");
    assert!(
        panic.contains("of the fork panicked at harness/src/selftest.rs")
            && panic.contains("a worker panicked mid-iteration"),
        "{out}"
    );
    assert!(
        row(&out, "close-stdout").contains("closed its output pipe"),
        "{out}"
    );
    // The benchmarks around the faults were measured, and the JSON holds exactly those.
    assert_eq!(faults_in(&json), ["none", "none"], "{out}");
}

#[test]
fn a_hanging_fork_is_killed_after_the_timeout_and_the_others_go_on() {
    let d = temp_dir("hang");
    let json = d.join("run.json");
    let o = run_faults("hang,none", &json, &["--timeout", "2s"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(row(&out, "hang").contains("per-iteration timeout"), "{out}");
    assert_eq!(faults_in(&json), ["none"], "{out}");
}

#[test]
fn a_zero_or_malformed_timeout_is_a_usage_error() {
    for bad in ["0s", "soon"] {
        let o = critsec(&["run", "harness/empty", "--timeout", bad]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    }
}

#[test]
fn an_unwritable_output_path_is_a_clear_error_after_the_table() {
    let d = temp_dir("unwritable");
    let file = d.join("a-file");
    std::fs::write(&file, "x").unwrap();
    // The parent of the output is a regular file: no user, root included, can write there.
    let json = file.join("run.json");
    let o = run_faults("none", &json, &[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        row(&out, "none").contains("ops/s"),
        "the table came first: {out}"
    );
    assert!(out.contains("writing") && out.contains("run.json"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

/// A full disk: a 256 KiB tmpfs mounted by the test (needs root and a `mount` that works, as in
/// a privileged container; otherwise the test says it is skipped). A first run writes its JSON;
/// the filesystem is then filled; a second run's write fails with a clear error, and the first
/// file is still whole.
#[test]
fn a_full_disk_fails_the_write_and_keeps_the_earlier_file_whole() {
    let d = temp_dir("full");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&d)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN)");
        return;
    }
    let json = d.join("run.json");
    let first = run_faults("none", &json, &[]);
    let ok = first.status.success();
    let before = std::fs::read(&json);
    // Fill what is left.
    let mut filler = Vec::new();
    for i in 0.. {
        let chunk = d.join(format!("filler-{i}"));
        if std::fs::write(&chunk, vec![0u8; 16 * 1024]).is_err() {
            break;
        }
        filler.push(chunk);
    }
    let second = run_faults("none", &json, &[]);
    let after = std::fs::read(&json);
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with("filler-") && n != "run.json" && n != "run.meta.json")
        .collect();
    let _ = Command::new("umount").arg(&d).status();
    assert!(ok, "{}", text(&first));
    let out = text(&second);
    assert_eq!(second.status.code(), Some(1), "{out}");
    assert!(out.contains("writing"), "{out}");
    let (before, after) = (before.unwrap(), after.unwrap());
    assert_eq!(
        before, after,
        "the first run's file was replaced by a partial one"
    );
    serde_json::from_slice::<serde_json::Value>(&after).expect("still whole JSON");
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

const FAKE: &str = env!("CARGO_BIN_EXE_critsec-fake-bench");

/// A ratio claim `id` whose contender runs the fake benchmark with `contender` flags.
fn fake_claim(id: &str, contender: &str, extra: &str) -> String {
    let side = |args: &str| {
        let args: Vec<String> = args.split_whitespace().map(|a| format!("{a:?}")).collect();
        format!(
            "{{ command = {{ program = {FAKE:?}, args = [{}], output = \"lines\"{extra} }} }}",
            args.join(", ")
        )
    };
    format!(
        "[[claim]]\nid = {id:?}\ntitle = \"t\"\nsource = \"s\"\nsource_figure = \"f\"\ndirection = \"higher\"\nmin_effect = 1.05\nbaseline = {}\ncontender = {}\n",
        side("--lines --mean 100 --seed 1"),
        side(&format!("--lines --mean 200 --seed 2 {contender}"))
    )
}

#[test]
fn claim_sides_that_die_panic_or_hang_are_errors_and_the_next_claim_is_measured() {
    let d = temp_dir("sides");
    let claims = [
        fake_claim("dies", "--die", ""),
        fake_claim("panics", "--panic", ""),
        fake_claim("hangs", "--hang", ", timeout_s = 2"),
        fake_claim("fine", "", ""),
    ];
    let file = d.join("claims.toml");
    std::fs::write(&file, claims.concat()).unwrap();
    let json = d.join("verdicts.json");
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["reproduce", "--pairs", "2", "--seed", "1", "--claims"])
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("running critsec");
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("verdicts written"))
            .expect("whole JSON");
    let verdict = |i: usize| v["outcomes"][i]["verdict"].clone();
    let err = |i: usize| verdict(i)["Err"].as_str().unwrap_or("").to_string();
    assert!(err(0).contains("signal: 9"), "{out}\n{}", err(0));
    assert!(err(1).contains("panicking on purpose"), "{out}\n{}", err(1));
    assert!(err(2).contains("time limit of 2 s"), "{out}\n{}", err(2));
    assert!(
        verdict(3).get("Ok").is_some(),
        "the last claim has a verdict: {out}"
    );
}

#[test]
fn ctrl_c_during_reproduce_keeps_the_verdicts_completed_so_far() {
    use std::io::BufRead;
    let d = temp_dir("sigint");
    // `done` finishes in milliseconds; `slow` (a side that hangs until its 3 s limit) is next
    // when the signal arrives; `never` must not start.
    let claims = [
        fake_claim("done", "", ""),
        fake_claim("slow", "--hang", ", timeout_s = 3"),
        fake_claim("never", "", ""),
    ];
    let file = d.join("claims.toml");
    std::fs::write(&file, claims.concat()).unwrap();
    let json = d.join("verdicts.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["reproduce", "--pairs", "5", "--seed", "1", "--claims"])
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running critsec");
    // Progress lines go to stderr, one per replicate: wait until `done` has its 5 pairs, the
    // first look, where a 2x ratio with 1% noise is decided (a claim still undecided at a look
    // when the signal lands is reported as interrupted, not with its provisional verdict). Its
    // interval there is wider than the precision goal, so the signal lands in a look taken for
    // precision alone, which must leave the verdict it has.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "reproduce ended before `done` finished: {seen}"
        );
        seen.push_str(&line);
        if line.starts_with("  done: 5 of") {
            break;
        }
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    std::io::copy(&mut stderr, &mut std::io::sink()).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{seen}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("verdicts written"))
            .expect("whole JSON");
    let outcome = |i: usize| v["outcomes"][i].clone();
    assert_eq!(outcome(0)["claim"]["id"], "done", "{v}");
    assert!(outcome(0)["verdict"].get("Ok").is_some(), "{v}");
    assert!(
        outcome(2)["verdict"]["Err"]
            .as_str()
            .is_some_and(|e| e.contains("interrupted")),
        "{v}"
    );
}

/// In this process (`-f 0`) a worker's panic is an error row with its message, the other
/// benchmarks are measured, and a fault that would end `critsec` itself is refused by setup.
#[test]
fn an_in_process_worker_panic_is_an_error_row_and_the_others_go_on() {
    let d = temp_dir("inproc-panic");
    let json = d.join("run.json");
    let o = run_faults("none,panic,kill,none", &json, &["-f", "0"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("2 of 4 benchmarks failed"), "{out}");
    assert!(
        row(&out, "panic").contains("panicked: harness/fault: a worker panicked mid-iteration"),
        "{out}"
    );
    assert!(row(&out, "kill").contains("fires only in a fork"), "{out}");
    assert_eq!(faults_in(&json), ["none", "none"], "{out}");
}

/// In this process a hung trial cannot be killed: after `--timeout` its benchmark is an error
/// row, nothing more is run (its threads would distort it), the table and JSON of what was
/// measured are written whole, and the process exits, taking the hung threads with it.
#[test]
fn a_hanging_in_process_trial_ends_the_run_after_the_timeout_with_its_files_whole() {
    let d = temp_dir("inproc-hang");
    let json = d.join("run.json");
    let o = run_faults("none,hang,none", &json, &["-f", "0", "--timeout", "2s"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        row(&out, "hang").contains("in-process trial gave no result within 2100 ms"),
        "{out}"
    );
    assert!(out.contains("1 of 3 benchmarks failed, 1 not run"), "{out}");
    assert_eq!(faults_in(&json), ["none"], "{out}");
}

/// `critsec run ... | head -1`: the reader goes away after the first line. critsec ends quietly
/// (SIGPIPE, as Unix tools do, or a clean exit), with no panic message, and leaves no partial
/// JSON behind.
#[test]
fn stdout_closed_early_ends_the_run_quietly() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let d = temp_dir("head");
    let json = d.join("run.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["run", "harness/empty", "harness/env", "-t", "1"])
        .args([
            "--warmup-iterations",
            "0",
            "-i",
            "1",
            "-r",
            "100ms",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running critsec");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here: the pipe's read end is closed, like `head -1` exiting.
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!first.is_empty(), "no first line; stderr: {stderr}");
    assert!(
        o.status.success() || o.status.signal() == Some(libc::SIGPIPE),
        "{:?}; stderr: {stderr}",
        o.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    if json.exists() {
        let text = std::fs::read_to_string(&json).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).expect("whole JSON");
    }
}
