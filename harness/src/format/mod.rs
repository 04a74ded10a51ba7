//! The on-disk formats of a run, in one place (as rebar's `format/`): JMH's `-rf json` layout
//! ([`jmh`]) and a run's sibling metadata file ([`meta`]). Every file is written whole or not at
//! all ([`write_atomically`]). The formats of claims live with them: the claims file in
//! `claims/claim.rs`, the verdict file in `claims/reproduce/verdict_file.rs`.

use std::io::Write as _;
use std::path::Path;

pub(crate) mod jmh;
pub(crate) mod meta;

pub use jmh::{
    JMH_MODES, JmhEntry, JmhKey, JmhMetric, JmhNumber, benchmark_name, read_entries, to_entry,
};
pub use meta::{MetaReadError, RunMeta, write_run};

/// Writes `contents` to `path` atomically: a temporary file in the same directory, flushed, then
/// renamed over the target, so a reader (or an interrupted run) never sees a truncated file.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(contents)?;
        f.sync_all()
    });
    // A failed write (a full disk) or rename leaves no temporary file behind.
    written
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// The metadata file's path next to a JMH JSON file: `run.json` → `run.meta.json`.
pub fn meta_path(json: &Path) -> std::path::PathBuf {
    let stem = json
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".into());
    json.with_file_name(format!("{stem}.meta.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_files() {
        let dir = std::env::temp_dir().join(format!("critsec-aw-{}", std::process::id()));
        let path = dir.join("r.json");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        assert_eq!(meta_path(&path), dir.join("r.meta.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
