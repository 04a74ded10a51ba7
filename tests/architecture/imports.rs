//! What the source files of our crates name of each other, read from the text: the paths after
//! `crate::`, `super::` and `self::` inside a crate (which file imports which), and the paths
//! into another crate of ours (how deep they reach). Comments and test modules are left out.
//!
//! A path is parsed as Rust spells it, groups included (`a::{b, c::D}`); a name that a module
//! file re-exports (`pub use x::Name`) is followed to the file that defines it, so importing
//! `crate::Name` depends on the file of `Name`, not on `lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `.rs` files under `dir`, build output and git's folder left out.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name == ".git" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `text` without comment lines and without its test module (what follows `#[cfg(test)]` or
/// `#[cfg(all(test, ...))]` before a `mod`), which may import anything.
pub fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test") {
            match lines.peek().map(|next| next.trim()) {
                // An inline test module runs to the end of the file, by convention.
                Some(next) if next.starts_with("mod ") && next.ends_with('{') => break,
                // A test module in a file of its own is left out with it.
                Some(next) if next.starts_with("mod ") => {
                    lines.next();
                    continue;
                }
                _ => {}
            }
        }
        if !t.starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// The paths that start at each occurrence of `root::` in `code` (`root` as a whole word), each
/// as its segments after `root`, groups flattened: `root::a::{b, c::D}` gives `[a, b]` and
/// `[a, c, D]`. A path ends where something other than a segment, `::` or a group follows.
pub fn paths_after(code: &str, root: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(root) {
        let start = from + at;
        from = start + root.len();
        let before = start.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
            continue;
        }
        if !code[from..].starts_with("::") {
            continue;
        }
        let mut pos = from;
        parse_tree(code, &mut pos, Vec::new(), &mut out);
    }
    out
}

/// Parses `::segment::segment...` or `::{tree, ...}` at `pos`, pushing every full path.
fn parse_tree(code: &str, pos: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        skip_space(code, pos);
        if !code[*pos..].starts_with("::") {
            break;
        }
        *pos += 2;
        skip_space(code, pos);
        let rest = &code[*pos..];
        if rest.starts_with('{') {
            *pos += 1;
            loop {
                skip_space(code, pos);
                if code[*pos..].starts_with('}') {
                    *pos += 1;
                    break;
                }
                let before = *pos;
                // A tree inside a group starts with a segment, not with `::`.
                let name = ident(code, pos);
                if name.is_empty() && !code[*pos..].starts_with('*') {
                    if code[*pos..].starts_with(',') {
                        *pos += 1;
                        continue;
                    }
                    break;
                }
                let mut inner = path.clone();
                if name.is_empty() {
                    *pos += 1;
                    inner.push("*".into());
                } else {
                    inner.push(name);
                }
                let count = out.len();
                parse_tree(code, pos, inner.clone(), out);
                if out.len() == count {
                    out.push(inner);
                }
                skip_alias(code, pos);
                skip_space(code, pos);
                if code[*pos..].starts_with(',') {
                    *pos += 1;
                }
                if *pos == before {
                    break;
                }
            }
            return;
        }
        if rest.starts_with('*') {
            *pos += 1;
            path.push("*".into());
            break;
        }
        let name = ident(code, pos);
        if name.is_empty() {
            break;
        }
        path.push(name);
    }
    if !path.is_empty() {
        out.push(path);
    }
}

fn skip_space(code: &str, pos: &mut usize) {
    while code[*pos..].starts_with(char::is_whitespace) {
        *pos += code[*pos..].chars().next().map_or(1, char::len_utf8);
    }
}

fn ident(code: &str, pos: &mut usize) -> String {
    let start = *pos;
    while code[*pos..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        *pos += 1;
    }
    code[start..*pos].to_string()
}

fn skip_alias(code: &str, pos: &mut usize) {
    let save = *pos;
    skip_space(code, pos);
    if code[*pos..].starts_with("as ") {
        *pos += 3;
        skip_space(code, pos);
        ident(code, pos);
    } else {
        *pos = save;
    }
}

/// Whether a segment names a module: lower snake case.
pub fn is_module(segment: &str) -> bool {
    segment
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
}

/// The paths in `code` that reach into crate `name` more than one module deep, as written
/// (`critsec_harness::run::settings::X`): a crate's surface is what its root and its modules
/// one deep re-export.
pub fn too_deep(code: &str, name: &str) -> Vec<String> {
    paths_after(code, name)
        .into_iter()
        .filter(|p| {
            let modules = p[..p.len().saturating_sub(1)]
                .iter()
                .take_while(|s| is_module(s))
                .count();
            modules >= 2
        })
        .map(|p| format!("{name}::{}", p.join("::")))
        .collect()
}

/// One crate's source files and the files each imports.
pub struct Crate {
    src: PathBuf,
    files: Vec<PathBuf>,
    code: BTreeMap<PathBuf, String>,
}

impl Crate {
    /// The crate whose root module is `src/lib.rs` or `src/main.rs`, test files left out.
    pub fn read(src: &Path) -> Crate {
        let files: Vec<PathBuf> = rust_files(src)
            .into_iter()
            .filter(|f| {
                let rel = f.strip_prefix(src).unwrap();
                !rel.components().any(|c| {
                    let c = c.as_os_str();
                    c == "tests" || c == "tests.rs"
                })
            })
            .collect();
        let code = files
            .iter()
            .map(|f| (f.clone(), code_of(&std::fs::read_to_string(f).unwrap())))
            .collect();
        Crate {
            src: src.to_path_buf(),
            files,
            code,
        }
    }

    /// The module path of `file`: `a/b.rs` and `a/b/mod.rs` are `[a, b]`, the root `[]`.
    fn module_of(&self, file: &Path) -> Vec<String> {
        let rel = file.strip_prefix(&self.src).unwrap().with_extension("");
        let mut m: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if m.last().is_some_and(|l| l == "mod") {
            m.pop();
        }
        if m.len() == 1 && (m[0] == "lib" || m[0] == "main") {
            m.clear();
        }
        m
    }

    /// The file of module `m`, if it is a file of its own.
    fn file_of(&self, m: &[String]) -> Option<PathBuf> {
        if m.is_empty() {
            return ["lib.rs", "main.rs"]
                .iter()
                .map(|f| self.src.join(f))
                .find(|f| self.code.contains_key(f));
        }
        let base = m.iter().fold(self.src.clone(), |p, s| p.join(s));
        [base.with_extension("rs"), base.join("mod.rs")]
            .into_iter()
            .find(|f| self.code.contains_key(f))
    }

    /// The file that defines what `path` (absolute module segments) names: the file of its
    /// longest module prefix, or, where that file re-exports the next segment, the file the
    /// re-export names (followed up to `depth` times).
    fn resolve(&self, path: &[String], depth: usize) -> Option<PathBuf> {
        let (n, file) = (0..=path.len())
            .rev()
            .find_map(|n| self.file_of(&path[..n]).map(|f| (n, f)))?;
        let Some(name) = path.get(n) else {
            return Some(file);
        };
        if depth == 0 {
            return Some(file);
        }
        let module = self.module_of(&file);
        let code = &self.code[&file];
        for line in code.split(';') {
            let t = line.trim_start();
            if !(t.starts_with("pub use ") || t.starts_with("pub(crate) use ")) {
                continue;
            }
            let stmt = t.split_once("use").map(|x| x.1).unwrap_or("");
            for exported in paths_after(&format!("x::{}", stmt.trim()), "x") {
                if exported.last() == Some(name) {
                    let target = self.absolute(&module, &exported);
                    return self.resolve(&target, depth - 1).or(Some(file));
                }
            }
        }
        Some(file)
    }

    /// `path` as written in module `module` (`crate::`, `super::`, `self::`, or a child module
    /// of `module`), as segments from the crate's root.
    fn absolute(&self, module: &[String], path: &[String]) -> Vec<String> {
        let mut base: Vec<String> = module.to_vec();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
        base.extend(rest.iter().cloned());
        base
    }

    /// Each file's imports of other files of the crate.
    pub fn imports(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let mut graph = BTreeMap::new();
        for file in &self.files {
            let module = self.module_of(file);
            let code = &self.code[file];
            let mut to = BTreeSet::new();
            for root in ["crate", "super", "self"] {
                for path in paths_after(code, root) {
                    let mut written = vec![root.to_string()];
                    written.extend(path);
                    let target = self.absolute(&module, &written);
                    if let Some(f) = self.resolve(&target, 4)
                        && &f != file
                    {
                        to.insert(f);
                    }
                }
            }
            graph.insert(file.clone(), to);
        }
        graph
    }

    /// The file path relative to the crate's `src`, for messages.
    pub fn name(&self, file: &Path) -> String {
        file.strip_prefix(&self.src).unwrap().display().to_string()
    }
}

/// The strongly connected components of `graph` with more than one file: its import circles.
pub fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'g> {
        graph: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on: BTreeSet<&'g PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn paths_are_parsed_as_rust_spells_them() {
    let p = paths_after(
        "use critsec_harness::{run::{Mode, settings::X as Y}, Claim};\nlet a = critsec_harness::run::plan(x);\nnot_critsec_harness::a::b::C",
        "critsec_harness",
    );
    let p: Vec<String> = p.iter().map(|s| s.join("::")).collect();
    assert_eq!(
        p,
        ["run::Mode", "run::settings::X", "Claim", "run::plan"],
        "{p:?}"
    );
    let g = paths_after("use super::{a::*, b};", "super");
    assert_eq!(g, [vec!["a", "*"], vec!["b"]]);
}

#[test]
fn a_path_two_modules_deep_is_found_and_one_deep_is_not() {
    let code = "use critsec_harness::run::settings::parse_duration;\nuse critsec_harness::{run::Mode, claims::{Verdict::Reproduced}};\ncritsec_sync::kind::ids::<K>();\nlet x = critsec_harness::claims::reproduce::verdict(a);";
    assert_eq!(
        too_deep(code, "critsec_harness"),
        [
            "critsec_harness::run::settings::parse_duration",
            "critsec_harness::claims::reproduce::verdict"
        ]
    );
    assert!(too_deep(code, "critsec_sync").is_empty());
}

#[test]
fn a_circle_is_found_and_a_chain_is_not() {
    let p = |s: &str| PathBuf::from(s);
    let graph = BTreeMap::from([
        (p("a"), BTreeSet::from([p("b")])),
        (p("b"), BTreeSet::from([p("c")])),
        (p("c"), BTreeSet::from([p("a"), p("d")])),
        (p("d"), BTreeSet::new()),
    ]);
    assert_eq!(circles(&graph), vec![vec![p("a"), p("b"), p("c")]]);
    let chain = BTreeMap::from([
        (p("a"), BTreeSet::from([p("b")])),
        (p("b"), BTreeSet::new()),
    ]);
    assert!(circles(&chain).is_empty());
}
