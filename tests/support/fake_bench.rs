//! `critsec-fake-bench`: a stand-in for a reviewer's benchmark, so that claims whose sides are
//! commands can be tried and tested without Java. It takes JMH's own flags (`-f`, `-wi`, `-i`,
//! `-rf json`, `-rff FILE`) and writes JMH's `-rf json` layout, or with `--lines` prints one
//! `value,unit` per iteration. Each process (each fork, with `-f N`) draws its own offset, as
//! separate JVMs differ:
//!
//! value = mean × FAKE_BENCH_FACTOR × exp(offset_sd · z_fork + noise_sd · z_iteration)
//!
//! `-bm M1,M2` writes one entry per JMH mode (`thrpt` alone by default; a time mode's unit is
//! `ns/op` unless `--unit` says otherwise) with the same values, as a run of several modes would.
//! `-p NAME=V1,V2` writes one entry per value, in that order, as JMH runs a `@Param`'s values
//! (each value's forks its own processes), and `--factor-of V=X` multiplies value V's mean by X;
//! `--count FILE` appends a line to FILE per invocation, so a test can count them.
//!
//! `--fail N` exits with status N after a line on stderr; `--garbage` prints what no protocol
//! reads; `--die`, `--panic` and `--hang` print their first value and then kill themselves with
//! SIGKILL, panic, or never finish (the runner's fault tests). Randomness is seeded from `--seed` mixed with `CRITSEC_REPLICATE` and `CRITSEC_SIDE`
//! (which critsec sets for every invocation), so a seeded claim is repeatable and still draws
//! a different offset per process; without `--seed`, from the clock and the process id.

use std::io::Write;

struct Args {
    forks: usize,
    iterations: usize,
    result: Option<String>,
    lines: bool,
    mean: f64,
    offset_sd: f64,
    noise_sd: f64,
    benchmark: String,
    unit: Option<String>,
    /// `-bm`: the modes, one entry each.
    modes: Vec<String>,
    fail: Option<i32>,
    garbage: bool,
    fault: Option<String>,
    seed: Option<u64>,
    /// `-p`: the parameter's name and values.
    param: Option<(String, Vec<String>)>,
    /// `--factor-of`: each value's factor.
    factor_of: Vec<(String, f64)>,
    count: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        forks: 1,
        iterations: 5,
        result: None,
        lines: false,
        mean: 100.0,
        offset_sd: 0.0,
        noise_sd: 0.01,
        benchmark: "org.example.FakeBench.run".into(),
        unit: None,
        modes: vec!["thrpt".into()],
        fail: None,
        garbage: false,
        fault: None,
        seed: None,
        param: None,
        factor_of: Vec::new(),
        count: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| {
            v.parse::<f64>()
                .map_err(|_| format!("{flag}: `{v}` is not a number"))
        };
        match flag.as_str() {
            "-f" => a.forks = num(value()?)? as usize,
            "-wi" => {
                value()?;
            }
            "-i" => a.iterations = num(value()?)? as usize,
            "-rf" => {
                let v = value()?;
                if v != "json" {
                    return Err(format!("-rf {v}: only json is written"));
                }
            }
            "-rff" => a.result = Some(value()?),
            "--lines" => a.lines = true,
            "--mean" => a.mean = num(value()?)?,
            "--offset-sd" => a.offset_sd = num(value()?)?,
            "--noise-sd" => a.noise_sd = num(value()?)?,
            "--benchmark" => a.benchmark = value()?,
            "--unit" => a.unit = Some(value()?),
            "-bm" => a.modes = value()?.split(',').map(str::to_string).collect(),
            "--fail" => a.fail = Some(num(value()?)? as i32),
            "--garbage" => a.garbage = true,
            "--die" | "--panic" | "--hang" => a.fault = Some(flag.clone()),
            "--seed" => a.seed = Some(num(value()?)? as u64),
            "-p" => {
                let v = value()?;
                let (name, values) = v.split_once('=').ok_or(format!("-p {v}: not NAME=V1,V2"))?;
                a.param = Some((
                    name.to_string(),
                    values.split(',').map(str::to_string).collect(),
                ));
            }
            "--factor-of" => {
                let v = value()?;
                let (name, x) = v
                    .split_once('=')
                    .ok_or(format!("--factor-of {v}: not VALUE=X"))?;
                a.factor_of.push((name.to_string(), num(x.to_string())?));
            }
            "--count" => a.count = Some(value()?),
            other => return Err(format!("unknown flag `{other}`")),
        }
    }
    if a.forks == 0 || a.iterations == 0 {
        return Err("-f and -i must be at least 1".into());
    }
    Ok(a)
}

/// A small generator (splitmix64) with standard normal draws (Box–Muller).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.next(), self.next());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

fn main() {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("critsec-fake-bench: {e}");
            std::process::exit(2);
        }
    };
    if let Some(path) = &a.count {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "invoked"));
        if let Err(e) = appended {
            eprintln!("critsec-fake-bench: appending to {path}: {e}");
            std::process::exit(1);
        }
    }
    if let Some(code) = a.fail {
        eprintln!("critsec-fake-bench: failing on purpose with status {code}");
        std::process::exit(code);
    }
    if a.garbage {
        println!("Benchmark finished, no numbers here");
        if let Some(path) = &a.result {
            let _ = std::fs::write(path, "{\"not\": \"jmh\"}");
        }
        return;
    }
    let seed = a.seed.map(|s| {
        let replicate: u64 = std::env::var("CRITSEC_REPLICATE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let side = u64::from(std::env::var("CRITSEC_SIDE").is_ok_and(|v| v == "contender"));
        s ^ replicate.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (side << 63)
    });
    let seed = seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        t ^ ((std::process::id() as u64) << 32)
    });
    let mut rng = Rng(seed);
    let factor: f64 = std::env::var("FAKE_BENCH_FACTOR")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    // One entry per `-p` value (one without `-p`); each fork is a process of its own (a JVM, in
    // JMH), with its own offset.
    let values: Vec<Option<String>> = match &a.param {
        Some((_, values)) => values.iter().cloned().map(Some).collect(),
        None => vec![None],
    };
    let entries: Vec<(Option<String>, Vec<Vec<f64>>)> = values
        .into_iter()
        .map(|value| {
            let own = a
                .factor_of
                .iter()
                .find(|(v, _)| Some(v) == value.as_ref())
                .map_or(1.0, |(_, x)| *x);
            let forks = (0..a.forks)
                .map(|_| {
                    let offset = a.offset_sd * rng.normal();
                    (0..a.iterations)
                        .map(|_| a.mean * factor * own * (offset + a.noise_sd * rng.normal()).exp())
                        .collect()
                })
                .collect();
            (value, forks)
        })
        .collect();
    let forks = &entries[0].1;
    if let Some(fault) = &a.fault {
        // Mid-run: one value is out, the rest never comes.
        println!("{},{}", forks[0][0], a.unit_of("thrpt"));
        let _ = std::io::stdout().flush();
        match fault.as_str() {
            // SAFETY: kill(2) on our own pid with a constant signal.
            "--die" => unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            },
            "--panic" => panic!("critsec-fake-bench: panicking on purpose"),
            _ => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
        }
    }
    if a.lines {
        let mut out = std::io::stdout().lock();
        for v in forks.iter().flatten() {
            let _ = writeln!(out, "{v},{}", a.unit_of("thrpt"));
        }
        return;
    }
    let entry: Vec<serde_json::Value> = entries
        .iter()
        .flat_map(|(value, forks)| {
            a.modes
                .iter()
                .map(|mode| jmh_entry(&a, mode, value.as_deref(), forks))
        })
        .collect();
    let text = serde_json::to_string_pretty(&entry).expect("json");
    match &a.result {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("critsec-fake-bench: writing {path}: {e}");
                std::process::exit(1);
            }
        }
        None => println!("{text}"),
    }
}

impl Args {
    /// The unit a `mode` entry reports: `--unit`, or JMH's default for the mode.
    fn unit_of(&self, mode: &str) -> String {
        self.unit
            .clone()
            .unwrap_or_else(|| if mode == "thrpt" { "ops/s" } else { "ns/op" }.to_string())
    }
}

/// One entry of JMH's JSON layout in `mode`: `value` of the `-p` parameter (none without `-p`).
fn jmh_entry(a: &Args, mode: &str, value: Option<&str>, forks: &[Vec<f64>]) -> serde_json::Value {
    let all: Vec<f64> = forks.iter().flatten().copied().collect();
    let n = all.len() as f64;
    let mean = all.iter().sum::<f64>() / n;
    let mut entry = serde_json::json!({
        "jmhVersion": "1.37",
        "benchmark": a.benchmark,
        "mode": mode,
        "threads": 1,
        "forks": a.forks,
        "jvm": "critsec-fake-bench",
        "jvmArgs": [],
        "jdkVersion": "none",
        "warmupIterations": 0,
        "measurementIterations": a.iterations,
        "primaryMetric": {
            "score": mean,
            "scoreError": "NaN",
            "scoreConfidence": [mean, mean],
            "scorePercentiles": {},
            "scoreUnit": a.unit_of(mode),
            "rawData": forks,
        },
        "secondaryMetrics": {},
    });
    if let (Some((name, _)), Some(value)) = (&a.param, value) {
        entry["params"] = serde_json::json!({ name.as_str(): value });
    }
    entry
}
