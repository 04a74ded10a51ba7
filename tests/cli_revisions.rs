//! `critsec ab --rev`: two git revisions as the two sides, end to end on throw-away git
//! repositories made here.
//!
//! - A tiny crate with a criterion bench, committed twice: each revision is checked out, its
//!   bench executable built with `cargo bench --no-run --locked` and kept by commit (a second
//!   run builds nothing), run once per replicate, and read from criterion's own files.
//! - Cross-build rounds of this workspace's own binary: the builds of two commits are copies of
//!   it, placed where the builder keeps builds, so nothing is compiled; the forks of both run
//!   in one round when their protocols agree, a protocol mismatch is refused with both versions
//!   named, and a build that predates the protocol runs as whole processes, which the verdict
//!   says.
//!
//! No test measures time: the verdicts asserted are ones any run must reach (an A/A against a
//! claim of "at least a hundredth as fast", which holds however loaded the machine).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::text;

const CRITSEC: &str = env!("CARGO_BIN_EXE_critsec");

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("critsec-rev-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository with `files` committed as two commits (the second changes `second`), after
/// `prepare` ran in it; the two commit hashes.
fn repo_of(
    repo: &Path,
    files: &[(&str, &str)],
    second: (&str, &str),
    prepare: impl Fn(&Path),
) -> [String; 2] {
    git(repo, &["init", "-q"]);
    for (path, text) in files {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::write(repo.join(".gitignore"), "/target\n").unwrap();
    prepare(repo);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "first"]);
    let first = git(repo, &["rev-parse", "HEAD"]);
    std::fs::write(repo.join(second.0), second.1).unwrap();
    git(repo, &["commit", "-q", "-am", "second"]);
    [first, git(repo, &["rev-parse", "HEAD"])]
}

fn ab(repo: &Path, args: &[&str]) -> Output {
    Command::new(CRITSEC)
        .current_dir(repo)
        .arg("ab")
        .args(args)
        .output()
        .expect("running critsec")
}

fn verdicts(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("a verdict file")).unwrap()
}

const TINY_TOML: &str = r#"[package]
name = "tiny"
version = "0.1.0"
edition = "2021"

[dev-dependencies]
criterion = { version = "0.8", default-features = false, features = ["cargo_bench_support"] }

[[bench]]
name = "tiny_bench"
harness = false
"#;

const TINY_BENCH: &str = r#"use criterion::{Criterion, criterion_group, criterion_main};
fn bench(c: &mut Criterion) {
    c.bench_function("work", |b| b.iter(|| tiny::work(std::hint::black_box(1000))));
}
criterion_group!(benches, bench);
criterion_main!(benches);
"#;

#[test]
fn a_criterion_bench_of_two_commits_is_built_once_and_read_from_criterions_files() {
    let repo = dir("criterion");
    let lib =
        "pub fn work(n: u64) -> u64 { (0..n).fold(0, |a, x| a ^ x.wrapping_mul(0x9E37_79B9)) }\n";
    // Two commits that differ in a comment, each with a lock file of what this machine has:
    // builds are `--locked`, and need nothing fetched.
    let [parent, head] = repo_of(
        &repo,
        &[
            ("Cargo.toml", TINY_TOML),
            ("src/lib.rs", lib),
            ("benches/tiny_bench.rs", TINY_BENCH),
        ],
        ("src/lib.rs", &format!("// a comment only\n{lib}")),
        |repo| {
            let lock = Command::new(env!("CARGO"))
                .args(["generate-lockfile", "--offline"])
                .current_dir(repo)
                .output()
                .unwrap();
            assert!(lock.status.success(), "{}", text(&lock));
        },
    );
    let json = repo.join("v.json");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--rev",
            &parent,
            "--rev",
            &head,
            "--cargo-bench",
            "tiny_bench",
            "--filter",
            "work",
            "--bench-args",
            "--warm-up-time 0.2 --measurement-time 0.3",
            "--min-effect",
            "0.01",
            "--precision",
            "0",
            "--seed",
            "3",
            "--json",
        ];
        let json = json.display().to_string();
        args.push(&json);
        args.extend(extra);
        let o = ab(&repo, &args);
        assert!(o.status.success(), "{}", text(&o));
        o
    };
    let o = run(&[]);
    let out = text(&o);
    assert!(out.contains("built bench tiny_bench"), "{out}");
    let v = verdicts(&json);
    let outcome = &v["outcomes"][0];
    assert_eq!(outcome["verdict"]["Ok"], "Reproduced", "{outcome}");
    assert_eq!(outcome["baseline"]["build"]["commit"], parent.as_str());
    assert_eq!(outcome["contender"]["build"]["commit"], head.as_str());
    assert_eq!(outcome["baseline"]["build"]["profile"], "bench");
    assert_eq!(outcome["baseline"]["unit"], "ns");
    // The second run against the same commits builds nothing.
    let again = text(&run(&[]));
    assert!(
        again.contains("kept bench tiny_bench") && !again.contains("built "),
        "{again}"
    );
    // Worktrees are gone; the builds are kept by commit.
    let worktrees = git(&repo, &["worktree", "list"]);
    assert_eq!(worktrees.lines().count(), 1, "{worktrees}");
    assert!(
        repo.join(format!("target/critsec-rev/bin/{head}/bench-tiny_bench"))
            .exists()
    );
    // A benchmark the executable does not have is an error listing those it has.
    let o = ab(
        &repo,
        &[
            "--rev",
            &parent,
            "--rev",
            &head,
            "--cargo-bench",
            "tiny_bench",
            "--filter",
            "nope",
            "--precision",
            "0",
        ],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("no benchmark `nope`") && out.contains("work"),
        "{out}"
    );
}

/// A repository whose two commits have critsec builds kept already: copies of this binary, or
/// of `contender` for the second commit. The commits.
fn cross_build_repo(name: &str, contender: Option<&str>) -> (PathBuf, [String; 2]) {
    let repo = dir(name);
    let commits = repo_of(&repo, &[("README", "a\n")], ("README", "b\n"), |_| {});
    for (i, commit) in commits.iter().enumerate() {
        let kept = repo.join(format!("target/critsec-rev/bin/{commit}"));
        std::fs::create_dir_all(&kept).unwrap();
        let exe = kept.join("critsec");
        match (i, contender) {
            (1, Some(script)) => {
                std::fs::write(&exe, script.replace("CRITSEC", CRITSEC)).unwrap();
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            _ => {
                std::fs::copy(CRITSEC, &exe).unwrap();
            }
        }
    }
    (repo, commits)
}

/// A contender build whose answer to the fork-protocol probe is the shell command `answer`.
fn contender_answering_the_probe_with(answer: &str) -> String {
    format!(
        "#!/bin/sh\nif [ \"$1\" = __critsec-fork-protocol ]; then {answer}; fi\nexec CRITSEC \"$@\"\n"
    )
}

/// `ab` over two kept builds of `harness/empty`: its output, verdict file and printed text.
fn scenario_ab(repo: &Path, commits: &[String; 2]) -> (Output, serde_json::Value, String) {
    let json = repo.join("v.json");
    let o = ab(
        repo,
        &[
            "--rev",
            &commits[0],
            "--rev",
            &commits[1],
            "--scenario",
            "harness/empty",
            "--min-effect",
            "0.01",
            "--precision",
            "0",
            "--seed",
            "3",
            "--json",
            &json.display().to_string(),
        ],
    );
    let v = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let out = text(&o);
    (o, v, out)
}

#[test]
fn two_builds_of_critsec_run_as_process_pairs_in_one_round() {
    let (repo, commits) = cross_build_repo("pairs", None);
    let (o, v, out) = scenario_ab(&repo, &commits);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("kept critsec of") && out.contains("fork protocol 1"),
        "{out}"
    );
    let outcome = &v["outcomes"][0];
    assert_eq!(outcome["verdict"]["Ok"], "Reproduced", "{outcome}");
    assert_eq!(outcome["replicate_kind"], "process-pair");
    assert_eq!(outcome["baseline"]["build"]["commit"], commits[0].as_str());
    assert_eq!(outcome["contender"]["build"]["dirty"], false);
    // Rounds, not whole processes: blocks inside each replicate.
    assert!(
        outcome["replicates"][0]["blocks"].as_array().unwrap().len() > 1,
        "{outcome}"
    );
    // The claim names the commits: reproduce --claims repeats it on the same builds.
    let claim = std::fs::read_to_string(repo.join("critsec-ab.toml")).unwrap();
    assert!(
        claim.contains(&commits[0]) && claim.contains(&commits[1]),
        "{claim}"
    );
}

#[test]
fn builds_whose_fork_protocols_differ_are_refused_naming_both() {
    let script = contender_answering_the_probe_with("echo 'critsec fork protocol 999'; exit 0");
    let (repo, commits) = cross_build_repo("mismatch", Some(&script));
    let (o, v, out) = scenario_ab(&repo, &commits);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let error = v["outcomes"][0]["verdict"]["Err"]
        .as_str()
        .unwrap_or_default();
    assert!(
        error.contains("fork protocol 1") && error.contains("999"),
        "{v}"
    );
}

#[test]
fn a_build_that_predates_the_protocol_runs_as_whole_processes_and_says_so() {
    let script = contender_answering_the_probe_with("echo 'unknown subcommand' >&2; exit 2");
    let (repo, commits) = cross_build_repo("old", Some(&script));
    let (o, v, out) = scenario_ab(&repo, &commits);
    assert!(o.status.success(), "{out}");
    let outcome = &v["outcomes"][0];
    assert_eq!(outcome["verdict"]["Ok"], "Reproduced", "{outcome}");
    let flags = outcome["flags"].to_string();
    assert!(
        flags.contains("predates it") && flags.contains("whole processes"),
        "{flags}"
    );
}

#[test]
fn a_revision_that_names_no_commit_is_a_usage_error() {
    let (repo, _) = cross_build_repo("nocommit", None);
    let o = ab(
        &repo,
        &["--rev", "no-such-branch", "--scenario", "harness/empty"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`no-such-branch` names no commit"),
        "{}",
        text(&o)
    );
}
