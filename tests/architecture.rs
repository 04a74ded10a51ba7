//! Architecture invariants that ARCHITECTURE.md states, checked so that they cannot go stale:
//! the dependency direction between our crates (read from `cargo metadata`), that the
//! replication machines and simulation never read the wall clock (every file of the system is
//! walked, so a new file is covered the day it is added). That every file or folder the map
//! names exists is checked with the other docs, in `tests/docs.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `cargo metadata` of the workspace (our packages only).
fn metadata() -> serde_json::Value {
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
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Our crates' dependencies on each other: package name → names of our packages it depends on
/// (normal and build dependencies; dev-dependencies may point anywhere a test needs).
fn our_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let meta = metadata();
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

/// The four system crates under `core/`, each measured by the bench crate of the same name.
const SYSTEMS: [&str; 4] = ["registry", "versionlookup", "replication", "parser"];

#[test]
fn nothing_points_upward_and_each_system_stands_alone() {
    let deps = our_dependencies();
    let of = |name: &str| {
        deps.get(name)
            .unwrap_or_else(|| panic!("no package {name} in the workspace"))
    };
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    assert!(
        of("critsec-sync").is_empty(),
        "the lock layer depends on {:?}",
        of("critsec-sync")
    );
    assert!(
        of("critsec-harness").is_empty(),
        "the harness depends on {:?}",
        of("critsec-harness")
    );
    assert_eq!(
        of("critsec-present"),
        &set(&["critsec-harness"]),
        "the presentation crate sits on the harness alone"
    );
    for system in SYSTEMS {
        let crate_name = format!("critsec-{system}");
        assert_eq!(
            of(&crate_name),
            &set(&["critsec-sync"]),
            "{crate_name} may share only the lock layer; no system crate depends on another"
        );
        let bench = format!("bench-{system}");
        assert_eq!(
            of(&bench),
            &set(&["critsec-sync", &crate_name, "critsec-harness"]),
            "{bench} measures {crate_name} through the harness, and links no other system and \
             not the presentation crate"
        );
    }
    let benches = deps.keys().filter(|n| n.starts_with("bench-")).count();
    let systems = deps
        .keys()
        .filter(|n| {
            n.starts_with("critsec-")
                && !["critsec-sync", "critsec-harness", "critsec-present"].contains(&n.as_str())
        })
        .count();
    assert_eq!((benches, systems), (4, 4), "{:?}", deps.keys());
}

/// tantivy is the version lookup's index and nothing else's: no other crate of ours builds it,
/// not even for tests (the loom and fuzz builds rely on that).
#[test]
fn only_the_version_lookup_builds_tantivy() {
    let meta = metadata();
    let users: BTreeSet<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["name"] == "tantivy")
        })
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(users, BTreeSet::from(["critsec-versionlookup"]));
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("core/replication/src");
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
        // The threads driver runs real threads on real time, and so does the net driver, whose
        // nodes run on it (timeouts of joins and replies); tests may time their own runs.
        let exempt = rel.components().any(|c| {
            let c = c.as_os_str();
            c == "threads" || c == "net" || c == "tests" || c == "tests.rs"
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
