//! divan's table on standard output (divan writes no machine-readable output): a tree of
//! benchmarks, one row each with its fastest, slowest, median and mean time, samples and
//! iterations. A benchmark's id is its path in the tree joined by `::` (`module::function`, and
//! `::arg` for each argument), as `--list` and `--exact` name it. The reader takes the median.

use std::collections::BTreeMap;

use super::super::Invocation;
use super::super::supervise::LineSink;
use crate::direction::Direction;

/// The rows of a divan table read so far: each benchmark's median, in ns, by id.
#[derive(Debug, Default)]
pub(crate) struct DivanTable {
    /// The names of the rows above, by depth, to make each row's path.
    path: Vec<String>,
    /// Whether the header line (`... fastest │ slowest │ median ...`) was seen.
    header: bool,
    medians: BTreeMap<String, f64>,
}

impl LineSink for DivanTable {
    fn line(&mut self, bytes: &[u8]) {
        let line = String::from_utf8_lossy(bytes);
        if !self.header {
            let columns: Vec<&str> = line.split('│').collect();
            self.header = columns.len() >= 3 && columns[2].trim() == "median";
            return;
        }
        // The tree's prefix, three columns per level, the last a branch (`├─ `, `╰─ `), is
        // drawn with the same `│` that parts the columns: it goes before the columns are split.
        let Some(at) = line.find(|c: char| !matches!(c, '│' | '├' | '╰' | '─' | ' '))
        else {
            return;
        };
        let depth = line[..at].chars().count() / 3;
        let columns: Vec<&str> = line[at..].split('│').collect();
        let first = columns[0].trim_end();
        let name = first.split("  ").next().unwrap_or(first).trim().to_string();
        if depth == 0 || name.is_empty() {
            return;
        }
        self.path.truncate(depth - 1);
        self.path.push(name);
        if let Some(median) = columns.get(2).and_then(|m| nanoseconds(m.trim())) {
            self.medians.insert(self.path.join("::"), median);
        }
    }
}

/// `1.5 µs` (divan's spelling of a time) in ns.
fn nanoseconds(text: &str) -> Option<f64> {
    let (value, unit) = text.split_once(' ')?;
    let factor = match unit.trim() {
        "ps" => 1e-3,
        "ns" => 1.0,
        "µs" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    value.trim().parse::<f64>().ok().map(|v| v * factor)
}

impl DivanTable {
    /// The median of benchmark `id`, or of the only one when `id` is `None`.
    pub(crate) fn finish(self, id: Option<&str>) -> Result<Invocation, String> {
        let names = || {
            if self.medians.is_empty() {
                "none (did divan print its table?)".to_string()
            } else {
                self.medians.keys().cloned().collect::<Vec<_>>().join(", ")
            }
        };
        let (name, median) = match id {
            Some(id) => self.medians.get_key_value(id).ok_or_else(|| {
                format!("divan printed no benchmark `{id}`; it printed: {}", names())
            })?,
            None if self.medians.len() == 1 => self.medians.iter().next().expect("one"),
            None => {
                return Err(format!(
                    "divan printed several benchmarks; name one with the claim's `benchmark`: {}",
                    names()
                ));
            }
        };
        Ok(Invocation {
            benchmark: name.clone(),
            unit: "ns".into(),
            better: Some(Direction::Lower),
            values: vec![*median],
            forks: vec![1],
            runtime: "divan".into(),
            position: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "Timer precision: 20 ns
registry_divan      fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ lookup                         │               │               │               │         │
│  ├─ mutex         1.2 µs        │ 3.4 µs        │ 1.5 µs        │ 1.6 µs        │ 100     │ 100
│  ╰─ snapshot      300 ns        │ 900 ns        │ 410.5 ns      │ 420 ns        │ 100     │ 400
╰─ parse                          │               │               │               │         │
   ╰─ simple        2 ms          │ 3 ms          │ 2.5 ms        │ 2.6 ms        │ 100     │ 100
";

    fn table() -> DivanTable {
        let mut t = DivanTable::default();
        for line in TABLE.lines() {
            t.line(line.as_bytes());
        }
        t
    }

    #[test]
    fn a_benchmark_is_read_by_its_path_in_the_tree() {
        let i = table().finish(Some("lookup::snapshot")).unwrap();
        assert_eq!((i.values[0], i.better), (410.5, Some(Direction::Lower)));
        assert_eq!(
            table().finish(Some("parse::simple")).unwrap().values,
            [2.5e6]
        );
        assert_eq!(
            table().finish(Some("lookup::mutex")).unwrap().values,
            [1500.0]
        );
        let e = table().finish(Some("lookup::rwlock")).unwrap_err();
        assert!(
            e.contains("lookup::mutex, lookup::snapshot, parse::simple"),
            "{e}"
        );
        assert!(table().finish(None).unwrap_err().contains("several"));
        assert!(
            DivanTable::default()
                .finish(Some("x"))
                .unwrap_err()
                .contains("none")
        );
    }
}
