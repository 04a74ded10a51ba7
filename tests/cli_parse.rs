//! End-to-end tests of `critsec parse`: its CLI contract (input, output and exit codes).

use std::io::Write;
use std::process::{Command, Stdio};

fn critsec(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn critsec");
    {
        let mut input = child.stdin.take().expect("stdin");
        input
            .write_all(stdin.unwrap_or("").as_bytes())
            .expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn prints_renderings_and_exits_zero() {
    let (code, out, _) = critsec(&["parse", "a AND b", "title:(dog OR cat)", "term^2"], None);
    assert_eq!(code, 0);
    assert_eq!(out, "+a +b\ntitle:dog title:cat\n(term)^2.0\n");
}

#[test]
fn errors_print_one_line_and_exit_one() {
    let (code, out, _) = critsec(
        &["parse", "--strategy", "backtracking", "a", "foo bar)", "*x"],
        None,
    );
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "a");
    assert!(
        lines[1].starts_with("error[syntax] column 7: Cannot parse 'foo bar)': Encountered"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("error[semantic] column 0: "),
        "{}",
        lines[2]
    );
}

#[test]
fn options_are_applied() {
    let (code, out, _) = critsec(
        &[
            "parse",
            "--default-operator",
            "and",
            "--analyzer",
            "whitespace",
            "--default-field",
            "body",
            "A b",
            "body:X",
        ],
        None,
    );
    assert_eq!(code, 0);
    assert_eq!(out, "+A +b\nX\n");
    let (_, out, _) = critsec(
        &[
            "parse",
            "--allow-leading-wildcard",
            "--phrase-slop",
            "2",
            "*a",
            "\"a b\"",
        ],
        None,
    );
    assert_eq!(out, "*a\n\"a b\"~2\n");
    let (code, out, _) = critsec(
        &[
            "parse",
            "--max-clause-count",
            "1",
            "--split-on-whitespace",
            "a b",
        ],
        None,
    );
    assert_eq!(code, 1);
    assert!(out.starts_with("error[too_many_clauses]"), "{out}");
}

#[test]
fn jsonl_reads_strings_and_writes_objects() {
    let input = "\"a\\nb\"\n\"a AND\"\n\n\"\\\"x y\\\"~2\"\n";
    let (code, out, _) = critsec(&["parse", "--jsonl"], Some(input));
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0], serde_json::json!({"ok": "a b"}));
    assert_eq!(lines[1]["error"]["class"], "syntax");
    assert_eq!(lines[1]["error"]["column"], 5);
    assert!(
        lines[1]["error"]["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("Cannot parse 'a AND': Encountered \"<EOF>\"")
    );
    assert_eq!(lines[2], serde_json::json!({"ok": "\"x y\"~2"}));
}

#[test]
fn usage_errors_exit_two() {
    for args in [
        &["parse", "--strategy", "lalr", "a"][..],
        &["parse", "--analyzer", "standard", "a"],
        &["parse", "--default-operator", "xor", "a"],
        &["parse"],
        &["parse", "--jsonl", "a"],
    ] {
        let (code, _, err) = critsec(args, None);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
    let (code, _, err) = critsec(&["parse", "--jsonl"], Some("not json\n"));
    assert_eq!(code, 2);
    assert!(err.contains("line 1"), "{err}");
}
