//! Architecture invariants that ARCHITECTURE.md states, checked so that they cannot go stale:
//! the dependency direction between our crates (read from `cargo metadata`), that the
//! replication machines and simulation never read the wall clock (every file of the system is
//! walked, so a new file is covered the day it is added). That every file or folder the map
//! names exists is checked with the other docs, in `tests/docs.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "architecture/imports.rs"]
mod imports;

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

#[test]
fn the_replication_machines_and_simulation_never_read_the_wall_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("core/replication/src");
    let files = imports::rust_files(&root);
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

/// Our packages' code names (`critsec_harness`) and source folders, the fuzz targets' crate
/// (its own workspace) included.
fn our_crates() -> Vec<(String, PathBuf)> {
    let meta = metadata();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates: Vec<(String, PathBuf)> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap());
            (
                p["name"].as_str().unwrap().replace('-', "_"),
                manifest.parent().unwrap().to_path_buf(),
            )
        })
        .collect();
    crates.push(("critsec_fuzz".into(), root.join("fuzz")));
    crates
}

/// Files that import each other in a loop are one piece that cannot be read, tested or moved
/// apart: no such circle of more than three files, in any crate (test code left out).
#[test]
fn no_import_circle_spans_more_than_three_files() {
    let mut found = Vec::new();
    let mut crates = 0;
    for (name, dir) in our_crates() {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        crates += 1;
        let krate = imports::Crate::read(&src);
        for circle in imports::circles(&krate.imports()) {
            if circle.len() > 3 {
                let files: Vec<String> = circle.iter().map(|f| krate.name(f)).collect();
                found.push(format!("{name}: {}", files.join(", ")));
            }
        }
    }
    assert!(crates >= 12, "only {crates} crates read");
    assert!(
        found.is_empty(),
        "import circles of more than three files:\n{}",
        found.join("\n")
    );
}

/// A crate's surface is what its root and its modules one deep export: no file reaches deeper
/// into another crate of ours (`critsec_harness::run::settings::X`), so a crate may move what is
/// inside its modules without breaking another.
#[test]
fn no_crate_reaches_more_than_one_module_deep_into_another() {
    let crates = our_crates();
    let mut found = Vec::new();
    let mut files = 0;
    for (own, dir) in &crates {
        for file in imports::rust_files(dir) {
            // A crate nested in another's folder (the fuzz targets) is its own.
            let owner = crates
                .iter()
                .filter(|(_, d)| file.starts_with(d))
                .max_by_key(|(_, d)| d.components().count())
                .map(|(n, _)| n);
            // The checker's own examples are not paths of ours.
            if owner != Some(own)
                || file
                    .parent()
                    .is_some_and(|d| d.ends_with("tests/architecture"))
            {
                continue;
            }
            files += 1;
            let code = imports::code_of(&std::fs::read_to_string(&file).unwrap());
            for (other, _) in crates.iter().filter(|(n, _)| n != own) {
                for path in imports::too_deep(&code, other) {
                    found.push(format!("{}: {path}", file.display()));
                }
            }
        }
    }
    assert!(files >= 100, "only {files} files read");
    found.sort();
    found.dedup();
    assert!(
        found.is_empty(),
        "paths deeper than one module into another crate:\n{}",
        found.join("\n")
    );
}

/// Not a check: prints one crate's import graph, to see what a circle is made of:
/// `CRATE=critsec_harness cargo test --test architecture import_graph -- --ignored --nocapture`.
#[test]
#[ignore = "prints a crate's import graph on request"]
fn import_graph() {
    let name = std::env::var("CRATE").unwrap_or_else(|_| "critsec_harness".into());
    for (n, dir) in our_crates().into_iter().filter(|(n, _)| *n == name) {
        let krate = imports::Crate::read(&dir.join("src"));
        for (file, to) in krate.imports() {
            let to: Vec<String> = to.iter().map(|t| krate.name(t)).collect();
            println!("{n}: {} -> {}", krate.name(&file), to.join(", "));
        }
    }
}
