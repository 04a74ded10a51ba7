//! Architecture invariants that ARCHITECTURE.md states, checked so that they cannot go stale:
//! the dependency direction between our crates (read from `cargo metadata`), and that the
//! replication machines and simulation never read the wall clock (every file of the system is
//! walked, so a new file is covered the day it is added).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Our crates' dependencies on each other: package name → names of our packages it depends on
/// (normal and build dependencies; dev-dependencies may point anywhere a test needs).
fn our_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|d| ours.contains(d))
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn nothing_points_upward_and_bench_crates_do_not_link_the_presentation_crate() {
    let deps = our_dependencies();
    let of = |name: &str| {
        deps.get(name)
            .unwrap_or_else(|| panic!("no package {name} in the workspace"))
    };
    assert!(
        of("critsec-core").is_empty(),
        "core depends on {:?}",
        of("critsec-core")
    );
    assert!(
        of("critsec-harness").is_empty(),
        "the harness depends on {:?}",
        of("critsec-harness")
    );
    assert_eq!(
        of("critsec-present"),
        &BTreeSet::from(["critsec-harness".to_string()]),
        "the presentation crate sits on the harness alone"
    );
    let benches: Vec<&String> = deps.keys().filter(|n| n.starts_with("bench-")).collect();
    assert_eq!(benches.len(), 4, "{benches:?}");
    for b in benches {
        let allowed = BTreeSet::from(["critsec-core".to_string(), "critsec-harness".to_string()]);
        assert!(
            of(b).is_subset(&allowed),
            "{b} depends on {:?}; a bench crate may use only core and the harness",
            of(b)
        );
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_replication_machines_and_simulation_never_read_the_wall_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("core/src/replication");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    // Built by concatenation so this file does not match itself.
    let forbidden = [
        concat!("Inst", "ant"),
        concat!("System", "Time"),
        concat!("std::", "time"),
    ];
    let mut checked = 0;
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap();
        // The threads driver runs real threads on real time; tests may time their own runs.
        let exempt = rel.components().any(|c| {
            let c = c.as_os_str();
            c == "threads" || c == "tests" || c == "tests.rs"
        });
        if exempt {
            continue;
        }
        let src = std::fs::read_to_string(file).unwrap();
        for f in forbidden {
            assert!(!src.contains(f), "{} mentions {f}", rel.display());
        }
        checked += 1;
    }
    assert!(
        checked >= 15,
        "only {checked} files checked under {}",
        root.display()
    );
}
