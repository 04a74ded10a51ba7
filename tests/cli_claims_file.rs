//! `critsec reproduce --claims FILE` on a reviewer's own benchmarks, end to end with the fake
//! benchmark program (`tests/support/fake_bench.rs`): a known ratio reproduces, identical sides
//! give an interval around 1, a per-process offset widens it, failures and malformed output are
//! errors that name the side.

use std::path::PathBuf;
use std::process::{Command, Output};

const FAKE: &str = env!("CARGO_BIN_EXE_critsec-fake-bench");

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("critsec-claims-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A command side running the fake benchmark with `args`.
fn side(args: &str, output: &str) -> String {
    let args: Vec<String> = args.split_whitespace().map(|a| format!("{a:?}")).collect();
    format!(
        "{{ command = {{ program = {FAKE:?}, args = [{}], output = {output:?} }} }}",
        args.join(", ")
    )
}

fn claim(id: &str, base: &str, cont: &str, extra: &str) -> String {
    format!(
        "[[claim]]\nid = {id:?}\ntitle = \"t\"\nsource = \"s\"\nsource_figure = \"f\"\ndirection = \"higher\"\nmin_effect = 1.05\n{extra}baseline = {base}\ncontender = {cont}\n"
    )
}

/// Runs `reproduce --claims` on `text` (in an environment with `RUST_BACKTRACE=1`, as these
/// machines often have); the output and the verdict file.
fn reproduce(name: &str, text: &str) -> (Output, serde_json::Value) {
    let d = dir(name);
    let file = d.join("claims.toml");
    std::fs::write(&file, text).unwrap();
    let json = d.join("verdicts.json");
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .env("RUST_BACKTRACE", "1")
        .args(["reproduce", "--claims"])
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("running critsec");
    let v = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    (o, v)
}

fn interval(v: &serde_json::Value, i: usize) -> (f64, f64, f64) {
    let r = &v["outcomes"][i]["interval"];
    (
        r["low"].as_f64().unwrap(),
        r["ratio"].as_f64().unwrap(),
        r["high"].as_f64().unwrap(),
    )
}

#[test]
fn a_known_ratio_reproduces_in_both_protocols() {
    let text = claim(
        "lines-2x",
        &side("--lines --mean 100 -i 5 --seed 3", "lines"),
        &side("--lines --mean 200 -i 5 --seed 3", "lines"),
        "benchmark = \"fake\"\n",
    ) + &claim(
        "jmh-2x",
        &side(
            "-f 1 -wi 3 -i 5 --mean 100 --seed 3 -rf json -rff {result}",
            "jmh",
        ),
        &side(
            "-f 1 -wi 3 -i 5 --mean 200 --seed 3 -rf json -rff {result}",
            "jmh",
        ),
        "benchmark = \"org.example.FakeBench.run\"\n",
    );
    let (o, v) = reproduce("known", &text);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for i in 0..2 {
        assert_eq!(v["outcomes"][i]["verdict"]["Ok"], "Reproduced", "{out}");
        let (low, ratio, high) = interval(&v, i);
        assert!(
            low < 2.0 && 2.0 < high && (ratio - 2.0).abs() < 0.05,
            "{low} {ratio} {high}"
        );
        assert_eq!(v["outcomes"][i]["replicates"].as_array().unwrap().len(), 5);
    }
    assert!(
        out.contains("lines-2x") && out.contains("REPRODUCED"),
        "{out}"
    );
}

#[test]
fn identical_sides_cover_one_and_a_process_offset_widens_the_interval() {
    // `-wi` is ignored by the fake program: the two sides differ in text only.
    // Seeded: each process still draws its own offset (critsec tells it its replicate and side).
    let steady = |wi: &str| {
        side(
            &format!("--lines --mean 100 -i 5 --noise-sd 0.01 --seed 7 -wi {wi}"),
            "lines",
        )
    };
    let jumpy = |wi: &str| {
        side(
            &format!("--lines --mean 100 -i 5 --noise-sd 0.01 --offset-sd 0.2 --seed 7 -wi {wi}"),
            "lines",
        )
    };
    let text = claim("same", &steady("1"), &steady("2"), "")
        + &claim("offset", &jumpy("1"), &jumpy("2"), "");
    let (o, v) = reproduce("same", &text);
    assert!(
        o.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (low, _, high) = interval(&v, 0);
    assert!(
        low <= 1.0 && 1.0 <= high,
        "identical sides: [{low}, {high}]"
    );
    let (olow, _, ohigh) = interval(&v, 1);
    assert!(
        olow <= 1.0 && 1.0 <= ohigh,
        "identical sides with offsets: [{olow}, {ohigh}]"
    );
    assert!(
        (ohigh / olow).ln() > 5.0 * (high / low).ln(),
        "a per-process offset must widen the interval: [{low}, {high}] vs [{olow}, {ohigh}]"
    );
}

#[test]
fn a_failing_command_is_an_error_with_its_status_and_stderr() {
    let text = claim(
        "fails",
        &side("--lines --mean 100", "lines"),
        &side("--lines --fail 3", "lines"),
        "",
    );
    let (o, v) = reproduce("fail", &text);
    assert_eq!(o.status.code(), Some(1));
    let e = v["outcomes"][0]["verdict"]["Err"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        e.contains("contender command")
            && e.contains("exit status: 3")
            && e.contains("failing on purpose"),
        "{e}"
    );
}

#[test]
fn malformed_output_is_an_error_naming_the_side() {
    let text = claim(
        "garbage-lines",
        &side("--lines --garbage", "lines"),
        &side("--lines --mean 100", "lines"),
        "",
    ) + &claim(
        "garbage-jmh",
        &side("-rff {result} --garbage", "jmh"),
        &side("-rff {result} --mean 100", "jmh"),
        "",
    ) + &claim(
        "other-unit",
        &side("--lines --mean 100 --unit ops/s", "lines"),
        &side("--lines --mean 100 --unit ms/op", "lines"),
        "",
    );
    let (o, v) = reproduce("garbage", &text);
    assert_eq!(o.status.code(), Some(1));
    let err = |i: usize| {
        v["outcomes"][i]["verdict"]["Err"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        err(0).contains("baseline command") && err(0).contains("not `value[,unit]`"),
        "{}",
        err(0)
    );
    assert!(
        err(1).contains("baseline command") && err(1).contains("JMH result file"),
        "{}",
        err(1)
    );
    assert!(
        err(2).contains("different benchmarks or units"),
        "{}",
        err(2)
    );
}

#[test]
fn a_malformed_claims_file_is_a_usage_error() {
    let d = dir("malformed");
    let file = d.join("claims.toml");
    std::fs::write(
        &file,
        claim(
            "half",
            &side("--lines", "lines"),
            "{ params = { a = \"1\" } }",
            "",
        ),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["reproduce", "--claims"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("claim `half`") && e.contains("both sides are commands"),
        "{e}"
    );
}

#[test]
fn the_readme_example_file_parses() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/claims/reviewer.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["reproduce", "--claims", file, "--list"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("PR-faster-than-main") && out.contains("agent-slows-parsing"),
        "{out}"
    );
}

/// A true A/A (the same command on both sides) is a claim of its own kind (`aa = true`); without
/// it identical sides are refused as a mistake.
#[test]
fn a_true_aa_runs_when_the_claim_says_so() {
    let steady = side("--lines --mean 100 -i 5 --noise-sd 0.01 --seed 7", "lines");
    let (o, v) = reproduce("aa", &claim("same-cmd", &steady, &steady, "aa = true\n"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (low, _, high) = interval(&v, 0);
    assert!(low <= 1.0 && 1.0 <= high, "A/A: [{low}, {high}]");
    // Programs are not our Rust build: its hazards are not printed for them.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !out.contains("[backtrace-env]") && !out.contains("[debug-build]"),
        "{out}"
    );
    let (o, _) = reproduce("not-aa", &claim("same-cmd", &steady, &steady, ""));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("aa = true"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `-r` and `--timeout` set scenario claims' iterations and forks; with a claim on programs they
/// would do nothing, so they are refused, naming the claim.
#[test]
fn flags_that_do_nothing_for_programs_are_refused() {
    let d = dir("flags");
    let file = d.join("claims.toml");
    let steady = side("--lines --mean 100 -i 5", "lines");
    let fast = side("--lines --mean 300 -i 5", "lines");
    std::fs::write(&file, claim("prog", &steady, &fast, "")).unwrap();
    for flag in [["-r", "500ms"], ["--timeout", "30s"]] {
        let err = refused(&file, &flag);
        assert!(err.contains("`prog`") && err.contains("timeout_s"), "{err}");
    }
}

/// `critsec reproduce --claims FILE ARGS...`'s error output, after checking that it exited 2.
fn refused(file: &std::path::Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["reproduce", "--claims"])
        .arg(file)
        .args(args)
        .output()
        .expect("running critsec");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    err
}

/// `--precision` sets how narrow a decided interval should get before its group stops: by
/// default a claim decided at its pilot with an interval wider than x/÷ 1.051 measures on; with
/// `--precision 0` it stops at the pilot; a goal that is not a finite number >= 0 is refused.
#[test]
fn the_precision_goal_is_a_flag_and_zero_stops_at_the_decision() {
    let d = dir("precision");
    let file = d.join("claims.toml");
    // Processes differ by 2% (a JVM's fork-to-fork spread): at 5 pairs and 99.997% the
    // interval of a 3x ratio is about x/÷ 1.3.
    let steady = side("--lines --mean 100 -i 5 --offset-sd 0.02 --seed 1", "lines");
    let fast = side("--lines --mean 300 -i 5 --offset-sd 0.02 --seed 2", "lines");
    std::fs::write(&file, claim("prog", &steady, &fast, "")).unwrap();
    let run = |extra: &[&str]| {
        let json = d.join("verdicts.json");
        let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
            .args(["reproduce", "--pairs", "5", "--seed", "7", "--claims"])
            .arg(&file)
            .arg("--json")
            .arg(&json)
            .args(extra)
            .output()
            .expect("running critsec");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let outcome = v["outcomes"][0].clone();
        assert!(outcome["verdict"]["Ok"] == "Reproduced", "{outcome}");
        (outcome, v["settings"]["precision"].clone())
    };
    let (stopped, goal) = run(&["--precision", "0"]);
    assert_eq!(stopped["looks"], serde_json::json!([5]), "{stopped}");
    assert!(goal.is_null(), "{goal}");
    let (went_on, goal) = run(&[]);
    assert_eq!(goal, serde_json::json!(0.05));
    let looks = went_on["looks"].as_array().expect("looks");
    assert!(looks.len() > 1, "{went_on}");
    assert!(
        went_on["design"]["for_precision"]
            .as_str()
            .is_some_and(|w| w.contains("taken for precision alone")),
        "{went_on}"
    );
    for bad in ["-0.1", "NaN", "inf"] {
        let err = refused(&file, &[&format!("--precision={bad}")]);
        assert!(err.contains("--precision"), "{bad}: {err}");
    }
    // `ab` refuses it before it writes the claim file it would run.
    let out = d.join("ab.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["ab", "--precision=-0.1", "--claims-out"])
        .arg(&out)
        .args(["true", "true"])
        .output()
        .expect("running critsec");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--precision") && !out.exists(), "{err}");
}

/// `critsec ab`'s output, after checking that it succeeded and its table's row `ab` reads
/// REPRODUCED (and `also`).
fn ab_reproduced(o: &Output, also: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("ab ") && l.contains(" REPRODUCED ") && l.contains(also)),
        "{out}"
    );
    out
}

/// `critsec ab` tests two commands without a claim file: it writes the claim it tested (which
/// `reproduce --claims` runs again, to the same verdict) and prints the verdict; a 1.5x effect
/// against the default 1.05 reproduces.
#[test]
fn ab_tests_two_commands_in_one_line_and_writes_its_claim() {
    let d = dir("ab");
    let claim = d.join("ab.toml");
    let fake = |mean: &str| format!("{FAKE} -f 1 -wi 1 -i 3 --mean {mean} --offset-sd 0.01");
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["ab", "--jmh", "org.example.FakeBench.run", "--seed", "3"])
        .arg("--claims-out")
        .arg(&claim)
        .arg("--json")
        .arg(d.join("ab.json"))
        .arg("--")
        .arg(fake("1000000"))
        .arg(fake("1500000"))
        .output()
        .expect("running critsec");
    ab_reproduced(&o, "");
    let text = std::fs::read_to_string(&claim).unwrap();
    assert!(text.contains("-rf json -rff"), "{text}");
    let (again, v) = reproduce("ab-again", &text);
    assert!(again.status.success());
    let first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("ab.json")).unwrap()).unwrap();
    assert_eq!(
        first["outcomes"][0]["verdict"],
        v["outcomes"][0]["verdict"],
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
}

/// JMH's `-f N` runs N processes per invocation: fork k of the baseline is paired with fork k of
/// the contender as a block of the invocations' replicate, so the verdict splits what differs
/// between forks from what differs between invocations (and its blocks are the forks). The
/// verdict file keeps each side's runtime and every iteration, and the block shows the runtime.
#[test]
fn jmh_forks_of_an_invocation_are_its_blocks() {
    let jmh = |mean: &str| {
        side(
            &format!(
                "-f 3 -wi 1 -i 2 --mean {mean} --offset-sd 0.02 --seed 5 -rf json -rff {{result}}"
            ),
            "jmh",
        )
    };
    let text = claim(
        "forked",
        &jmh("1000"),
        &jmh("1500"),
        "benchmark = \"run\"\n",
    );
    let (o, v) = reproduce("forks", &text);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let replicates = v["outcomes"][0]["replicates"].as_array().unwrap();
    assert!(replicates.len() >= 5, "{v}");
    for r in replicates {
        assert_eq!(r["blocks"].as_array().unwrap().len(), 3, "{r}");
    }
    assert!(v["outcomes"][0]["components"].is_object(), "{v}");
    // Provenance: each side's runtime and every iteration of every invocation, fork by fork.
    let program = &v["outcomes"][0]["baseline"]["program"];
    assert_eq!(
        program["runtimes"][0], "JDK none, JMH 1.37, critsec-fake-bench",
        "{program}"
    );
    assert_eq!(
        program["iterations"].as_array().unwrap().len(),
        replicates.len()
    );
    assert_eq!(program["forks"][0], serde_json::json!([2, 2, 2]));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("runtime:   contender: JDK none, JMH 1.37, critsec-fake-bench"),
        "{out}"
    );
}

/// Sides that run one command and read different `@Param` entries of its JMH result share one
/// invocation per replicate (half the JVM starts), and the verdict says that the sides then ran
/// in JMH's order.
#[test]
fn sides_that_differ_only_in_a_param_share_one_invocation() {
    let count = dir("shared-count").join("invocations");
    let command = format!(
        "-p impl=a,b --factor-of b=1.5 -f 2 -i 2 --seed 9 --count {} -rf json -rff {{result}}",
        count.display()
    );
    let with = |value: &str| {
        side(&command, "jmh").replacen(
            "{ command",
            &format!("{{ params = {{ impl = {value:?} }}, command"),
            1,
        )
    };
    let text = claim("shared", &with("a"), &with("b"), "benchmark = \"run\"\n");
    let (o, v) = reproduce("shared", &text);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let outcome = &v["outcomes"][0];
    assert_eq!(outcome["verdict"]["Ok"], "Reproduced", "{outcome}");
    let (_, ratio, _) = interval(&v, 0);
    assert!((ratio - 1.5).abs() < 0.05, "{ratio}");
    let replicates = outcome["replicates"].as_array().unwrap().len();
    let invoked = std::fs::read_to_string(&count).unwrap().lines().count();
    assert_eq!(invoked, replicates, "one invocation per replicate");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!(
            "served both sides (one command; they read different @Param entries of its result), so they ran in JMH's order, not a balanced one: the baseline's forks first in {replicates} of {replicates} replicates"
        )),
        "{out}"
    );
}

/// `critsec ab --results` judges two JMH result files already on disk, fork k against fork k:
/// a 1.5x effect over 5 forks reproduces, the verdict says the sides were not interleaved, and a
/// file of one fork has too few replicates for an interval (an error, exit 1).
#[test]
fn ab_judges_existing_result_files_with_forks_as_replicates() {
    let d = dir("ab-results");
    let write = |name: &str, mean: &str, forks: &str| {
        let path = d.join(name);
        let o = Command::new(FAKE)
            .args(["-f", forks, "-wi", "1", "-i", "3", "--mean", mean])
            .args(["--offset-sd", "0.02", "--seed", "9", "-rf", "json", "-rff"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(o.status.success());
        path
    };
    let (main, pr) = (
        write("main.json", "1000", "5"),
        write("pr.json", "1500", "5"),
    );
    let ab = |base: &PathBuf, cont: &PathBuf| {
        Command::new(env!("CARGO_BIN_EXE_critsec"))
            .args(["ab", "--jmh", "run", "--results", "--"])
            .arg(base)
            .arg(cont)
            .output()
            .unwrap()
    };
    let out = ab_reproduced(&ab(&main, &pr), "5 pairs");
    assert!(out.contains("not interleaved"), "{out}");
    let one = write("one.json", "1500", "1");
    let o = ab(&main, &one);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("-f 2 or more"), "{out}");
}

/// Writes a fake JMH result of 5 forks at `mean` in `modes` (`-bm`) into `d/name`.
fn jmh_file(d: &std::path::Path, name: &str, mean: &str, modes: &str) -> PathBuf {
    let path = d.join(name);
    let o = Command::new(FAKE)
        .args([
            "-f", "5", "-wi", "1", "-i", "3", "--mean", mean, "-bm", modes,
        ])
        .args(["--offset-sd", "0.01", "--seed", "9", "-rf", "json", "-rff"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success());
    path
}

/// `critsec ab --results` on two files with `flags` before them.
fn ab_results(flags: &[&str], base: &PathBuf, cont: &PathBuf) -> Output {
    Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["ab", "--jmh", "run"])
        .args(flags)
        .args(["--results", "--"])
        .arg(base)
        .arg(cont)
        .output()
        .unwrap()
}

/// A time per operation improves downwards: two `avgt` files whose contender is 20% slower are
/// judged against "at most 1/1.05", from the files' mode, and the claim says so; `--higher`
/// contradicting the mode is a usage error; a 20% faster contender reproduces.
#[test]
fn ab_results_take_the_direction_from_the_jmh_mode() {
    let d = dir("ab-avgt");
    let main = jmh_file(&d, "main.json", "100", "avgt");
    let slower = jmh_file(&d, "slower.json", "120", "avgt");
    let faster = jmh_file(&d, "faster.json", "80", "avgt");
    let o = ab_results(&[], &main, &slower);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("at most 0.9524x the baseline's (lower is better)")
            && out
                .lines()
                .any(|l| l.starts_with("ab ") && l.contains("NOT REPRODUCED")),
        "{out}"
    );
    ab_reproduced(&ab_results(&[], &main, &faster), "<= 0.9524");
    let o = ab_results(&["--higher"], &main, &faster);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--higher contradicts") && err.contains("lower is better"),
        "{err}"
    );
}

/// `--lower --min-effect 1.05` claims "at most 0.9524": a contender 4% slower on a lower-is-
/// better metric does not reproduce it, whatever the files' mode says nothing of (a secondary
/// metric has no direction in JMH's layout, so the flag decides).
#[test]
fn ab_lower_claims_at_most_the_inverse() {
    let d = dir("ab-lower");
    let main = jmh_file(&d, "main.json", "100", "thrpt");
    let slower = jmh_file(&d, "slower.json", "104", "thrpt");
    let o = ab_results(&["--lower", "--metric", "primary"], &main, &slower);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a thrpt file contradicts --lower: {err}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args([
            "ab",
            "--lines",
            "--lower",
            "--min-effect",
            "1.05",
            "--seed",
            "3",
        ])
        .arg("--claims-out")
        .arg(d.join("ab.toml"))
        .arg("--")
        .arg(format!("{FAKE} --lines -i 5 --mean 100 --seed 3"))
        .arg(format!("{FAKE} --lines -i 5 --mean 104 --seed 3"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("at most 0.9524x")
            && out
                .lines()
                .any(|l| l.starts_with("ab ") && l.contains("NOT REPRODUCED")),
        "{out}"
    );
}

/// One benchmark run in two modes (`-bm thrpt,avgt`) is judged in the mode the side selects;
/// without one, the error lists both entries with their modes and names `mode`.
#[test]
fn ab_selects_a_mode_of_a_benchmark_run_in_two() {
    let d = dir("ab-modes");
    let main = jmh_file(&d, "main.json", "100", "thrpt,avgt");
    let pr = jmh_file(&d, "pr.json", "150", "thrpt,avgt");
    let o = ab_results(&[], &main, &pr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("`mode`")
            && out.contains("org.example.FakeBench.run thrpt")
            && out.contains("org.example.FakeBench.run avgt"),
        "{out}"
    );
    ab_reproduced(&ab_results(&["--mode", "thrpt"], &main, &pr), ">= 1.05");
    let o = ab_results(&["--mode", "avgt"], &main, &pr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success()
            && out
                .lines()
                .any(|l| l.starts_with("ab ") && l.contains("NOT REPRODUCED")),
        "{out}"
    );
}

/// A command side whose JMH run is in a time mode, under a claim that says higher is better, is
/// an error naming the mode's direction (not a verdict read the wrong way); a path that merely
/// contains "-rf" is no result flag.
#[test]
fn ab_commands_in_a_time_mode_must_say_lower() {
    let d = dir("ab-cmd-avgt");
    let fake = format!("{FAKE} -f 1 -i 3 -bm avgt --mean 100 --seed 3");
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["ab", "--jmh", "run", "--seed", "3", "--claims-out"])
        .arg(d.join("ab.toml"))
        .args([
            "--",
            &format!("{fake} --benchmark org.pr-rfid.B.run"),
            &fake,
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("where lower is better") && out.contains("--lower"),
        "{out}"
    );
}

/// `critsec run` takes JMH's result flags, so two builds of critsec are two JMH-style sides:
/// `ab --jmh SCENARIO` over two copies of the binary reads each one's `-rf json -rff FILE`, and
/// an A/A of the same build reproduces a claim it must hold however loaded the machine ("at least a hundredth as fast").
#[test]
fn two_builds_of_critsec_are_jmh_sides() {
    let d = dir("ab-two-builds");
    let copy = |name: &str| {
        let path = d.join(name);
        std::fs::copy(env!("CARGO_BIN_EXE_critsec"), &path).unwrap();
        path
    };
    let (old, new) = (copy("critsec-old"), copy("critsec-new"));
    let side = |bin: &PathBuf| {
        format!(
            "{} run harness/empty -f 1 -wi 0 -i 2 -w 20ms -r 20ms",
            bin.display()
        )
    };
    let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["ab", "--jmh", "harness/empty", "--min-effect", "0.01"])
        .args(["--precision", "0", "--seed", "3", "--claims-out"])
        .arg(d.join("ab.toml"))
        .arg("--")
        .arg(side(&old))
        .arg(side(&new))
        .output()
        .unwrap();
    let out = ab_reproduced(&o, ">= 0.01");
    assert!(out.contains("critsec-old run harness/empty"), "{out}");
    // The flags themselves: -rf json -rff FILE writes what --json writes; other formats are refused.
    let file = d.join("r.json");
    let run = Command::new(&new)
        .args([
            "run",
            "harness/empty",
            "-f",
            "0",
            "-i",
            "1",
            "-r",
            "10ms",
            "-rf",
            "json",
            "-rff",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v[0]["benchmark"], "harness.empty");
    let csv = Command::new(&new)
        .args(["run", "harness/empty", "-rf", "csv"])
        .output()
        .unwrap();
    assert_eq!(csv.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&csv.stderr).contains("-rf json"));
}

/// A claim whose truth sits on its bound (200 against 100, claimed ">= 2") is AT THE BOUND once
/// its interval lies inside the band of its tolerance (x/÷ 1.05 by default), and says so; with
/// a tolerance of its own too narrow for its replicates it stays INCONCLUSIVE.
#[test]
fn a_claim_on_its_bound_is_at_the_bound() {
    let fake = |mean: &str| {
        side(
            &format!("--lines -i 5 --mean {mean} --noise-sd 0.001 --offset-sd 0.005 --seed 4"),
            "lines",
        )
    };
    let at = |extra: &str| {
        claim(
            "on-the-bound",
            &fake("100"),
            &fake("200"),
            &format!("benchmark = \"fake\"\n{extra}"),
        )
        .replace("min_effect = 1.05", "min_effect = 2.0")
    };
    let (o, v) = reproduce("at-the-bound", &at(""));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert_eq!(v["outcomes"][0]["verdict"]["Ok"], "AtTheBound", "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("on-the-bound ") && l.contains("AT THE BOUND"))
            && out.contains("at bound:  the interval straddles 2 inside its band [1.905, 2.100]"),
        "{out}"
    );
    let (o, v) = reproduce("at-a-narrow-bound", &at("tolerance = 1.0001\n"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        v["outcomes"][0]["verdict"]["Ok"]["Inconclusive"].is_object(),
        "{out}"
    );
}

/// Each replicate's pinned CPU in the verdict file, per claim.
fn cpus(v: &serde_json::Value, i: usize) -> Vec<Option<u64>> {
    v["outcomes"][i]["replicates"]
        .as_array()
        .expect("replicates")
        .iter()
        .map(|r| r["cpu"].as_u64())
        .collect()
}

/// A group whose arms are all single-threaded runs each round's processes on one CPU after
/// their setup, and the verdict file says which; a group with a two-thread arm is never pinned
/// (a pinned single thread against free threads would bias the ratio), nor is anything with
/// `--no-pin`.
#[test]
fn single_threaded_groups_are_pinned_one_cpu_per_round_and_others_never() {
    let allowed = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|l| l.trim().to_string())
        });
    let Some(allowed) = allowed.filter(|a| a.contains(['-', ','])) else {
        eprintln!("skipped: this machine lets us use one CPU, so nothing is pinned");
        return;
    };
    let scenario = |id: &str, base_threads: &str, cont_threads: &str| {
        format!(
            "[[claim]]\nid = {id:?}\ntitle = \"t\"\nsource = \"s\"\nsource_figure = \"f\"\nscenario = \"harness/empty\"\nmetric = \"primary\"\ndirection = \"higher\"\nmin_effect = 1.05\n{}baseline = {{ threads = {base_threads:?} }}\ncontender = {{ threads = {cont_threads:?} }}\n",
            if base_threads == cont_threads {
                "aa = true\n"
            } else {
                ""
            }
        )
    };
    let text = scenario("one-thread", "1", "1") + &scenario("two-threads", "1", "2");
    let run = |name: &str, extra: &[&str]| {
        let d = dir(name);
        let file = d.join("claims.toml");
        std::fs::write(&file, &text).unwrap();
        let json = d.join("verdicts.json");
        let o = Command::new(env!("CARGO_BIN_EXE_critsec"))
            .args([
                "reproduce",
                "-r",
                "5ms",
                "--pairs",
                "2",
                "--seed",
                "3",
                "--claims",
            ])
            .arg(&file)
            .arg("--json")
            .arg(&json)
            .args(extra)
            .output()
            .expect("running critsec");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (String::from_utf8_lossy(&o.stdout).into_owned(), v)
    };
    let (out, v) = run("pin", &[]);
    let one = cpus(&v, 0);
    assert!(
        !one.is_empty() && one.iter().all(Option::is_some),
        "{allowed}: {one:?}"
    );
    assert!(cpus(&v, 1).iter().all(Option::is_none), "{:?}", cpus(&v, 1));
    assert!(out.contains("pinned:    single-threaded sides"), "{out}");
    let (out, v) = run("no-pin", &["--no-pin"]);
    assert!(cpus(&v, 0).iter().all(Option::is_none), "{:?}", cpus(&v, 0));
    assert!(!out.contains("pinned:"), "{out}");
}
