//! The docs and claim files, checked so that they cannot go stale: every file, folder or module
//! they name exists, each README stays short enough to read, and no README, claim file or Rust
//! file names one of this project's issues (how the code got here is CHANGELOG.md's, which is
//! the one doc left out of these checks: history may name what is gone).

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// Every path of the tree (files, and folders with a trailing `/`), relative to the root, as
/// `/`-separated text; build output and git's own folder left out.
fn tree_paths() -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if name == "target" || name == ".git" {
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() {
                out.push(format!("{rel}/"));
                walk(root, &path, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(root(), root(), &mut out);
    out
}

/// The docs whose paths are checked: the three at the root, and every README beside the code
/// or the results, with the docs a README hands its detail to (`bench-*/*.md`). Left out: the
/// changelog, what `critsec report` writes (`results/REPORT.md`, a run's `STABILITY.md`), the
/// page of old claim-note figures, and test fixtures' notes.
fn docs(tree: &[String]) -> Vec<String> {
    let mut docs: Vec<String> = tree
        .iter()
        .filter(|p| {
            let top_level = !p.contains('/');
            let bench = p.starts_with("bench-") && p.matches('/').count() == 1;
            p.ends_with(".md")
                && (top_level || bench || p.as_str() == "results/README.md")
                && p.as_str() != "CHANGELOG.md"
        })
        .cloned()
        .collect();
    docs.sort();
    docs
}

/// Every README of the tree.
fn readmes(tree: &[String]) -> Vec<String> {
    tree.iter()
        .filter(|p| p.as_str() == "README.md" || p.ends_with("/README.md"))
        .cloned()
        .collect()
}

/// The claim files: each bench crate's `claims.toml`, the net claims, the examples.
fn claim_files(tree: &[String]) -> Vec<String> {
    let files: Vec<String> = tree
        .iter()
        .filter(|p| {
            p.ends_with("/claims.toml")
                || p.ends_with("-claims.toml")
                || (p.starts_with("examples/claims/") && p.ends_with(".toml"))
        })
        .cloned()
        .collect();
    assert!(files.len() >= 6, "only {files:?} found as claim files");
    files
}

/// Files the docs name that critsec writes where it runs, not in the tree.
const WRITTEN_BY_CRITSEC: &[(&str, &str)] = &[
    ("critsec-ab.toml", "the claim `critsec ab` tested"),
    ("FILE.meta.json", "a run's metadata, beside `--json FILE`"),
];

/// What a name in a doc or claim file can resolve to.
struct Names {
    tree: Vec<String>,
    /// Each crate of the workspace: its name with `_` for `-`, and its source folder.
    crates: Vec<(String, PathBuf)>,
}

impl Names {
    fn new() -> Self {
        let tree = tree_paths();
        let crates = tree
            .iter()
            .filter(|p| p.as_str() == "Cargo.toml" || p.ends_with("/Cargo.toml"))
            .filter_map(|manifest| {
                let text = read(manifest);
                let package = text.split("[package]").nth(1)?;
                let name = package
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("name = \""))?
                    .trim_end_matches('"')
                    .replace('-', "_");
                let dir = Path::new(manifest).parent().unwrap_or(Path::new(""));
                Some((name, root().join(dir).join("src")))
            })
            .collect();
        Names { tree, crates }
    }

    /// A file or folder: at that path from the root, as the end of a path in the tree (a bench
    /// README names `benches/x.rs`), relative to the root (`../shared/...`), or in the shared
    /// material every checkout has at `../shared` (a claim's source names `seeds/...`).
    fn path_exists(&self, token: &str) -> bool {
        let in_tree = self
            .tree
            .iter()
            .any(|p| p == token || p.ends_with(&format!("/{token}")));
        in_tree || root().join(token).exists() || root().join("../shared").join(token).exists()
    }

    /// A Rust path from one of our crates (`critsec_replication::driver::sim::CpuConfig`): each
    /// module a file of its crate, and what follows the last module named in its file.
    fn module_exists(&self, token: &str) -> bool {
        let mut segments = token.split("::");
        let first = segments.next().unwrap_or("");
        let Some((_, src)) = self.crates.iter().find(|(name, _)| name == first) else {
            return false;
        };
        let mut dir = src.clone();
        let mut file = ["lib.rs", "main.rs"]
            .iter()
            .map(|f| src.join(f))
            .find(|f| f.exists());
        let mut rest: Vec<&str> = segments.collect();
        while let Some(segment) = rest.first() {
            let as_file = dir.join(format!("{segment}.rs"));
            let as_dir = dir.join(segment).join("mod.rs");
            let next = [as_file, as_dir].into_iter().find(|f| f.exists());
            match next {
                Some(f) => {
                    dir = dir.join(segment);
                    file = Some(f);
                    rest.remove(0);
                }
                None => break,
            }
        }
        let Some(file) = file else { return false };
        let text = std::fs::read_to_string(file).unwrap_or_default();
        rest.iter().all(|item| declares(&text, item))
    }

    fn exists(&self, name: &str) -> bool {
        if WRITTEN_BY_CRITSEC.iter().any(|(n, _)| *n == name) {
            return true;
        }
        if name.contains("::") {
            self.module_exists(name)
        } else {
            self.path_exists(name)
        }
    }
}

/// Whether Rust source declares `item` (`pub struct CpuConfig`, `fn last_look`, `mod cpu`) or
/// brings it in by a `use` (`pub use cpu::CpuConfig;`); a word in a comment does not count.
fn declares(text: &str, item: &str) -> bool {
    let is_word = |w: &str| w.trim() == item;
    let declared = text.lines().any(|line| {
        let mut line = line.trim_start();
        for vis in ["pub(crate) ", "pub(super) ", "pub "] {
            line = line.strip_prefix(vis).unwrap_or(line);
        }
        let kinds = [
            "fn ",
            "async fn ",
            "unsafe fn ",
            "const fn ",
            "struct ",
            "enum ",
            "trait ",
        ];
        let more = ["type ", "const ", "static ", "mod ", "macro_rules! "];
        kinds.iter().chain(&more).any(|k| {
            line.strip_prefix(k).is_some_and(|rest| {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                name == item
            })
        })
    });
    let used = text.split(';').any(|statement| {
        let mut lines = statement.lines().map(str::trim_start);
        let Some(first) = lines.by_ref().find_map(|l| {
            let l = l
                .strip_prefix("pub(crate) ")
                .or(l.strip_prefix("pub "))
                .unwrap_or(l);
            l.strip_prefix("use ")
        }) else {
            return false;
        };
        let statement: String = std::iter::once(first).chain(lines).collect();
        let names = match statement.split_once('{') {
            Some((_, inner)) => inner.trim_end_matches(['}', ' ']).to_string(),
            None => statement.rsplit("::").next().unwrap_or("").to_string(),
        };
        names.split(',').any(|n| {
            let n = n.rsplit("::").next().unwrap_or(n);
            let n = n.split(" as ").last().unwrap_or(n);
            is_word(n)
        })
    });
    declared || used
}

/// Whether a name in backticks is a file or folder (`x.rs`, `core/sync/`) rather than a
/// pattern (`<date>-<machine>/`, `*.svg`), a command or code.
fn pathlike(t: &str) -> bool {
    let ends = [".rs", ".md", ".toml", ".sh", ".py", ".txt", ".json", "/"]
        .iter()
        .any(|ext| t.ends_with(ext));
    let bare_extension = t.starts_with('.') && !t.contains('/');
    let pattern = t.contains(['<', '*', '{', ' ', ':', '=', '$']) || bare_extension;
    ends && !pattern && t != "/"
}

/// Whether a name in backticks is a path of one of our crates (`critsec_harness::claims`).
fn modulelike(t: &str) -> bool {
    let ours = ["critsec_", "bench_"].iter().any(|p| t.starts_with(p));
    ours && t.contains("::")
        && t.split("::")
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// The names a doc gives in backticks: files, folders and our crates' modules.
fn named_in_backticks(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| pathlike(t) || modulelike(t))
        .map(str::to_string)
        .collect()
}

/// The targets of a doc's relative links (`[verdicts.json](results/<run>/verdicts.json)`),
/// resolved from the doc's own folder, without their `#section`.
fn link_targets(doc: &str, text: &str) -> Vec<String> {
    let dir = Path::new(doc).parent().unwrap_or(Path::new(""));
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|t| !t.contains("://") && !t.starts_with('#') && !t.starts_with("mailto:"))
        .map(|t| t.split('#').next().unwrap_or(t))
        .filter(|t| !t.is_empty())
        .map(|t| dir.join(t).to_string_lossy().replace('\\', "/"))
        .collect()
}

/// The names a doc gives that do not exist.
fn missing_in_doc(names: &Names, doc: &str, text: &str) -> Vec<String> {
    let mut missing: Vec<String> = named_in_backticks(text)
        .into_iter()
        .filter(|t| !names.exists(t))
        .collect();
    missing.extend(
        link_targets(doc, text)
            .into_iter()
            .filter(|t| !root().join(t).exists())
            .map(|t| format!("link {t}")),
    );
    missing
}

/// The code map names files and folders in backticks (`state_access.rs`, `core/sync/`,
/// `harness/src/claims/reproduce/mod.rs`); so do the other docs. Each must exist, at that path
/// from the root or as the end of a path in the tree, and so must every relative link's target
/// and every module path of ours, so a rename or a removal cannot leave a doc behind.
#[test]
fn every_path_the_docs_name_exists() {
    let names = Names::new();
    let docs = docs(&names.tree);
    for doc in [
        "ARCHITECTURE.md",
        "METHODOLOGY.md",
        "README.md",
        "results/README.md",
        "bench-registry/README.md",
        "bench-versionlookup/README.md",
        "bench-replication/README.md",
        "bench-parser/README.md",
    ] {
        assert!(docs.iter().any(|d| d == doc), "{doc} is not checked");
    }
    let mut checked = 0;
    let mut missing = Vec::new();
    for doc in &docs {
        let text = read(doc);
        checked += named_in_backticks(&text).len();
        missing.extend(
            missing_in_doc(&names, doc, &text)
                .into_iter()
                .map(|m| format!("{doc}: {m}")),
        );
    }
    assert!(checked >= 150, "only {checked} paths found in {docs:?}");
    assert!(
        missing.is_empty(),
        "the docs name paths that do not exist: {missing:#?}"
    );
}

/// The text of a claim file that is prose: its comments, and its `source` and `note` strings.
fn claim_prose(text: &str) -> String {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if let Some(comment) = line.strip_prefix('#') {
                return Some(comment);
            }
            ["source = \"", "note = \""]
                .iter()
                .find_map(|key| line.strip_prefix(key))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files, folders and modules a piece of prose names, with or without backticks: a word
/// with a `/` that ends as a file does (`results/publication.toml`, `examples/pause_sweep.rs`),
/// or a path of our crates (`critsec_replication::driver::sim::CpuConfig`).
fn named_in_prose(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ',' | ';' | '(' | ')'))
        .map(|w| w.trim_end_matches(['.', ':', '\\']))
        .filter(|w| (w.contains('/') && pathlike(w)) || modulelike(w))
        .map(str::to_string)
        .collect()
}

/// A claim file's comments and notes point the reader at files and modules (the layout's
/// definition, a seed story, a README, an example); each must exist.
#[test]
fn every_path_a_claim_file_names_exists() {
    let names = Names::new();
    let mut checked = 0;
    let mut missing = Vec::new();
    for file in claim_files(&names.tree) {
        for name in named_in_prose(&claim_prose(&read(&file))) {
            checked += 1;
            if !names.exists(&name) {
                missing.push(format!("{file}: {name}"));
            }
        }
    }
    assert!(
        checked >= 8,
        "only {checked} paths found in the claim files"
    );
    assert!(
        missing.is_empty(),
        "the claim files name paths that do not exist: {missing:#?}"
    );
}

/// A README says what is and points to the rest; past this it has become a notebook.
const README_CHARS: usize = 12_000;

#[test]
fn every_readme_fits_in_12000_characters() {
    let tree = tree_paths();
    let readmes = readmes(&tree);
    assert!(readmes.len() >= 6, "only {readmes:?} found");
    let long: Vec<String> = readmes
        .iter()
        .map(|r| (r, read(r).chars().count()))
        .filter(|(_, n)| *n > README_CHARS)
        .map(|(r, n)| format!("{r}: {n} characters"))
        .collect();
    assert!(
        long.is_empty(),
        "READMEs over {README_CHARS} characters: {long:?}"
    );
}

/// The paragraphs of a Markdown text, without code blocks and tables: runs of lines between
/// blank lines, each list item a paragraph of its own.
fn paragraphs(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut in_code = false;
    fn flush(current: &mut String, out: &mut Vec<String>) {
        if !current.trim().is_empty() {
            out.push(std::mem::take(current));
        }
        current.clear();
    }
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            flush(&mut current, &mut out);
            continue;
        }
        let item = trimmed.starts_with("- ")
            || trimmed.starts_with("* ")
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if in_code || trimmed.is_empty() || trimmed.starts_with('|') || item {
            flush(&mut current, &mut out);
        }
        if in_code || trimmed.is_empty() || trimmed.starts_with('|') {
            continue;
        }
        if !current.is_empty() {
            current.push('\n');
        }
        current.push_str(line);
    }
    flush(&mut current, &mut out);
    out
}

/// ARCHITECTURE.md is a map: short enough to read at one sitting, in paragraphs a reader can
/// take in at a glance.
#[test]

fn the_architecture_map_fits_in_15000_characters_in_short_paragraphs() {
    let map = read("ARCHITECTURE.md");
    let chars = map.chars().count();
    assert!(chars <= 15_000, "ARCHITECTURE.md has {chars} characters");
    let long: Vec<String> = paragraphs(&map)
        .into_iter()
        .filter(|p| p.chars().count() > 800)
        .map(|p| p.chars().take(80).collect())
        .collect();
    assert!(
        long.is_empty(),
        "ARCHITECTURE.md paragraphs over 800 characters, beginning: {long:#?}"
    );
}

/// Numbers written with `#` that are not ours: each names its upstream project.
const UPSTREAM: &[(&str, &str)] = &[
    ("1155", "apache/solr PR #1155, SOLR-16497's read-write lock"),
    (
        "14070",
        "elastic/elasticsearch PR #14070, the per-segment lookup cache",
    ),
    (
        "19856",
        "elastic/elasticsearch PR #19856, the per-reader lookup cache",
    ),
    ("4669", "infinispan PR #4669, the Triangle"),
    ("4722", "infinispan PR #4722, the Triangle"),
];

/// Text before a `#<digits>` that makes it something other than an issue: `critsec compare`
/// labels same-named files `run.json (#1)`, `run.json (#2)`.
const NOT_AN_ISSUE_BEFORE: &[&str] = &[".json ("];

/// The places in `text` that name one of this project's issues: `issue 14`, `issues 13-16`,
/// `(#31)`, `before #28`: any `#<digits>` but an upstream project's, and any `issue` followed
/// by a number.
fn issue_numbers(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut found = Vec::new();
    let context = |i: usize| {
        let start = text[..i].char_indices().rev().nth(30).map_or(0, |(j, _)| j);
        let end = text[i..]
            .char_indices()
            .nth(20)
            .map_or(text.len(), |(j, _)| i + j);
        text[start..end].replace('\n', " ")
    };
    for (i, _) in text.match_indices('#') {
        let digits: String = text[i + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let next = text[i + 1 + digits.len()..].chars().next();
        if digits.is_empty() || next.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // not a number: `#[derive]`, `{:#018x}`, `#0072B2`
        }
        let before = lower[..i].trim_end();
        let said_issue = before.ends_with("issue") || before.ends_with("issues");
        let upstream = UPSTREAM.iter().any(|(n, _)| *n == digits);
        let not_an_issue = NOT_AN_ISSUE_BEFORE.iter().any(|b| text[..i].ends_with(b));
        if said_issue || !(upstream || not_an_issue) {
            found.push(context(i));
        }
    }
    for word in ["issue ", "issues "] {
        for (i, _) in lower.match_indices(word) {
            let starts_word = lower[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let number = lower[i + word.len()..].starts_with(|c: char| c.is_ascii_digit());
            if starts_word && number {
                found.push(context(i));
            }
        }
    }
    found
}

/// No README, claim file or Rust file names one of this project's issues: they say what is,
/// and CHANGELOG.md says which issue brought it. Upstream references stay (`PR #1155`), as
/// each names its project.
#[test]
fn no_readme_claim_file_or_rust_file_names_an_issue() {
    let tree = tree_paths();
    let mut files = readmes(&tree);
    files.extend(claim_files(&tree));
    // This file is left out: its own examples must name issues.
    let rust = tree
        .iter()
        .filter(|p| p.ends_with(".rs") && *p != "tests/docs.rs");
    files.extend(rust.cloned());
    assert!(files.len() >= 200, "only {} files to check", files.len());
    let mut named = Vec::new();
    for file in &files {
        let found = issue_numbers(&read(file));
        named.extend(found.into_iter().map(|c| format!("{file}: …{c}…")));
    }
    assert!(
        named.is_empty(),
        "issue numbers outside CHANGELOG.md: {named:#?}"
    );
}

/// The checks themselves, on text made to fail them.
#[test]
fn the_checks_catch_what_they_are_for() {
    for text in [
        "the net driver (issue #31)",
        "before issue 14",
        "issues 13-16",
        "after #28, one thread",
        "critsec (#31): the simulation",
        "Issue #4's target",
    ] {
        assert!(!issue_numbers(text).is_empty(), "{text:?} passed");
    }
    for text in [
        "apache/solr PR #1155",
        "Elasticsearch #19856",
        "(before #19856)",
        "PRs #4669/#4722",
        "run.json (#2)",
        "format!(\"{:#018x}\")",
        "fill=\"#0072B2\"",
        "an issue of 4 bytes",
        "issue #1155",
    ] {
        let found = issue_numbers(text);
        assert_eq!(
            found.is_empty(),
            text != "issue #1155",
            "{text:?}: {found:?}"
        );
    }
    let names = Names::new();
    for name in [
        "critsec_harness::claims::claim",
        "critsec_replication::ProtocolKind",
        "harness/src/claims/claim.rs",
        "benches/sim_speed.rs",
        "seeds/lucene-queryparser-under-jdwp.txt",
        "core/sync/",
    ] {
        assert!(names.exists(name), "{name} should exist");
    }
    for name in [
        "critsec_harness::claim",
        "critsec_replication::NoSuchKind",
        "harness/src/claims/nothing.rs",
        "core/nothing/",
    ] {
        assert!(!names.exists(name), "{name} should not exist");
    }
    let prose = claim_prose(
        "# see critsec_harness::claim and `a/b.rs`\nnote = \"in results/x.toml.\"\nmin_effect = 1.05 # c/d.rs\n",
    );
    assert_eq!(
        named_in_prose(&prose),
        ["critsec_harness::claim", "a/b.rs", "results/x.toml"]
    );
    assert_eq!(
        link_targets(
            "results/README.md",
            "[v](2026-x/verdicts.json) [w](https://x/y) [s](#set-up)"
        ),
        ["results/2026-x/verdicts.json"]
    );
    let text =
        "Para one\nstill one.\n\n- item\n  more of it\n- other\n\n| a | b |\n\n```\ncode\n```\n";
    assert_eq!(
        paragraphs(text),
        ["Para one\nstill one.", "- item\n  more of it", "- other"]
    );
}
