//! The line protocol: one `value[,unit]` per iteration on standard output, as rebar's runners
//! print `duration,count`; blank lines and lines starting with `#` are ignored. Read line by
//! line as the program prints, so that what it prints beside its values costs no memory.

use super::super::Invocation;
use super::super::supervise::LineSink;
use super::tail;

/// The values of a program's output so far, or the first line that is not one.
#[derive(Debug, Default)]
pub(crate) struct LineValues {
    values: Vec<f64>,
    unit: Option<String>,
    lines: usize,
    error: Option<String>,
}

impl LineSink for LineValues {
    fn line(&mut self, bytes: &[u8]) {
        self.lines += 1;
        if self.error.is_some() {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let line = text.trim();
        if line.is_empty() || line.starts_with('#') {
            return;
        }
        let (v, u) = match line.split_once(',') {
            Some((v, u)) => (v.trim(), u.trim()),
            None => (line, ""),
        };
        let Ok(value) = v.parse::<f64>() else {
            self.error = Some(format!(
                "stdout line {} is not `value[,unit]`: `{}`",
                self.lines,
                tail(line, 80)
            ));
            return;
        };
        match &self.unit {
            Some(prev) if prev != u => {
                self.error = Some(format!(
                    "stdout line {} has unit `{u}`, earlier lines `{prev}`",
                    self.lines
                ));
                return;
            }
            Some(_) => {}
            None => self.unit = Some(u.to_string()),
        }
        self.values.push(value);
    }
}

impl LineValues {
    /// What the program reported, as `benchmark`'s invocation.
    pub(crate) fn finish(self, benchmark: &str) -> Result<Invocation, String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.values.is_empty() {
            return Err("printed no `value[,unit]` line on stdout".into());
        }
        Ok(Invocation {
            benchmark: benchmark.to_string(),
            unit: self.unit.unwrap_or_default(),
            better: None,
            forks: vec![self.values.len()],
            values: self.values,
            runtime: String::new(),
            position: 0,
        })
    }
}

/// Values of the line protocol in `stdout`.
pub fn parse_lines(stdout: &[u8], benchmark: &str) -> Result<Invocation, String> {
    let mut values = LineValues::default();
    for line in stdout.split(|&b| b == b'\n') {
        values.line(line);
    }
    values.finish(benchmark)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_values_units_and_name_bad_lines() {
        let i = parse_lines(b"# warmup\n1.5,ops/s\n\n2.5,ops/s\n", "b").unwrap();
        assert_eq!(i.values, vec![1.5, 2.5]);
        assert_eq!(i.unit, "ops/s");
        assert_eq!(i.mean(), 2.0);
        let e = parse_lines(b"1.0\nfast\n", "b").unwrap_err();
        assert!(e.contains("line 2") && e.contains("fast"), "{e}");
        let e = parse_lines(b"1,s\n2,ms\n", "b").unwrap_err();
        assert!(e.contains("unit `ms`"), "{e}");
        assert!(parse_lines(b"", "b").unwrap_err().contains("no `value"));
    }

    #[test]
    fn a_byte_that_is_not_utf8_loses_only_its_own_line() {
        let i = parse_lines(b"# caf\xe9 warmup\n1.5\n2.5\n", "b").unwrap();
        assert_eq!(i.values, vec![1.5, 2.5]);
        let e = parse_lines(b"1.5\n\xff\xfe\n", "b").unwrap_err();
        assert!(e.contains("line 2") && e.contains('\u{fffd}'), "{e}");
    }
}
