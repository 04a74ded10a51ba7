//! The report's charts are readable by construction: every chart of a fixture run (synthetic
//! paired outcomes: several series, intervals from narrow to far too wide, crossings of 1, a
//! point at the axis's edge, a missing point) is rendered through `write_report`, and its SVG
//! text is checked: no two text elements' boxes overlap, no text lies in the plot area (the
//! legend and the crossings' names are outside it), every text lies on the page, and every
//! data marker lies inside the plot area, as many markers as the chart has points.
//!
//! A text's box is estimated from its length and font size (0.6 em a character, 1 em tall), a
//! generous width for sans-serif; what identifies the plot area and a data marker is written
//! in `plot/style.rs`. `CRITSEC_LAYOUT_OUT=DIR` keeps the fixture's report and SVGs in DIR.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use critsec_harness::claims::{
    ClaimOutcome, Design, ReplicateKind, SideRecord, Verdict, VerdictFile,
};
use critsec_harness::run::machine;
use critsec_harness::stats::RatioInterval;
use critsec_present::paired::{Configuration, pairs_path, plot_claims, plot_settings};
use critsec_present::plot::charts;
use critsec_present::publication::Publication;
use critsec_present::report::write_report;

/// The fixture's set: a registry sweep (three contenders over a parameter, two thread counts),
/// the same against threads, and a simulation's latency percentiles and a sweep over seeds.
const FIXTURE: &str = r#"
[settings]
warmup_iterations = 1
warmup_ms = 1
measurement_iterations = 1
measurement_ms = 1
forks = 1

[[run]]
file = "registry-crossover"
scenario = "registry/get_core_micro"
threads = "1,2"
series = "strategy"
plots = [
    { kind = "ratio", axis = "mdc_puts", series = "strategy", baseline = "mutex" },
    { kind = "threads", series = "strategy", baseline = "mutex", fix = [["mdc_puts", "4"]] },
]

[[run]]
file = "replication-ispn_perf"
scenario = "replication/ispn_perf"
threads = "1"
series = "protocol"
plots = [
    { kind = "latency", series = "protocol", baseline = "lock-forwarding", prefix = "put", fix = [["gc_pause_ms", "20"]] },
    { kind = "sweep", axis = "gc_pause_ms", series = "protocol", baseline = "lock-forwarding", metric = "req_per_s_node" },
]
"#;

/// Every configuration of the fixture's runs.
fn configurations(run: &str) -> Vec<Configuration> {
    let mut out = Vec::new();
    let config = |pairs: &[(&str, &str)], threads| Configuration {
        params: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        threads,
    };
    if run == "registry-crossover" {
        for threads in [1, 2] {
            for strategy in ["mutex", "rwlock", "jdk-rwlock", "snapshot"] {
                for puts in 0..=8 {
                    let puts = puts.to_string();
                    out.push(config(
                        &[("strategy", strategy), ("mdc_puts", &puts), ("cores", "10")],
                        threads,
                    ));
                }
            }
        }
    } else {
        for protocol in ["lock-forwarding", "key-queue", "triangle"] {
            for pause in ["0", "2", "5", "10", "20"] {
                out.push(config(
                    &[
                        ("protocol", protocol),
                        ("gc_pause_ms", pause),
                        ("seed", "42"),
                    ],
                    1,
                ));
            }
        }
    }
    out
}

/// The synthetic ratio and log half-width of a point: crossings of 1, intervals from narrow
/// to far too wide, extremes that set the axis's ends.
fn synthetic(id: &str, x: f64) -> (f64, f64) {
    let s = |name: &str| id.ends_with(&format!("/{name}"));
    if s("rwlock") {
        // Above 1, crossing to below at 4 puts; one interval far too wide (an arrow).
        let half = if x == 6.0 { 2.5 } else { 0.04 };
        ((0.25 - 0.12 * x).exp(), half)
    } else if s("jdk-rwlock") {
        // Near 1 within its noise, too noisy to read (hollow); at 8 puts the lowest point, whose
        // interval does not fit: the point itself bounds the axis.
        let ratio = if x == 8.0 {
            0.3
        } else {
            1.0 + 0.02 * (x - 4.0)
        };
        (ratio, if x == 8.0 { 3.0 } else { 0.12 })
    } else if s("snapshot") {
        // Below 1, crossing upward; narrow.
        ((0.1 * x - 0.35).exp(), 0.03)
    } else if s("key-queue") {
        (0.05 + 0.01 * x, 0.2)
    } else {
        (0.2 + 0.02 * x, 0.06)
    }
}

/// A synthetic outcome of `claim` at x value `x`.
fn outcome(claim: &critsec_harness::Claim, x: f64, seeds: bool) -> ClaimOutcome {
    let (ratio, half) = synthetic(&claim.id, x);
    let side = |v: f64| SideRecord {
        values: vec![v],
        unit: "ops/s".into(),
        ..SideRecord::default()
    };
    ClaimOutcome {
        claim: claim.clone(),
        replicate_kind: if seeds {
            ReplicateKind::Seed
        } else {
            ReplicateKind::ProcessPair
        },
        baseline: side(100.0),
        contender: side(100.0 * ratio),
        replicates: Vec::new(),
        interval: Some(RatioInterval {
            ratio,
            low: ratio * (-half).exp(),
            high: ratio * half.exp(),
            n: 8,
            log_sd: half / 4.0,
            confidence: 0.999,
        }),
        components: None,
        optimal_blocks: None,
        counts: None,
        looks: vec![5, 8],
        verdict: Ok(Verdict::Reproduced),
        seconds: 20.0,
        group: vec![claim.id.clone()],
        far_processes: Vec::new(),
        flags: Vec::new(),
        design: Some(Design {
            looks: vec![5, 8],
            confidence: vec![0.99997, 0.999],
            replicate_seconds: 2.5,
            why: String::new(),
            ended: String::new(),
            for_precision: String::new(),
        }),
        coherence: None,
    }
}

/// Writes the fixture run into `dir`: each plot's verdict file, no run files (the charts need
/// none); returns the publication and the run paths.
fn fixture(dir: &Path) -> (Publication, Vec<PathBuf>) {
    let publication = Publication::parse(FIXTURE, "fixture.toml").unwrap();
    let mut runs = Vec::new();
    for run in &publication.runs {
        let configs = configurations(&run.file);
        for (k, plot) in run.plots.iter().enumerate() {
            let claims = plot_claims(run, k, plot, &configs).unwrap();
            let seeds = run.file.starts_with("replication");
            let mut outcomes: Vec<ClaimOutcome> = claims
                .iter()
                .map(|c| {
                    let x = c
                        .params
                        .get("mdc_puts")
                        .or(c.params.get("gc_pause_ms"))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or_else(|| c.threads.parse().unwrap_or(1.0));
                    let x = c
                        .metric
                        .strip_prefix("put.p")
                        .and_then(|l| l.parse::<f64>().ok())
                        .map_or(x, |l| l / 20.0);
                    outcome(c, x, seeds)
                })
                .collect();
            // One point that failed: listed under its chart, never drawn.
            if let Some(o) = outcomes.last_mut() {
                o.verdict = Err("check failed: wrong core".into());
                o.interval = None;
            }
            let file = VerdictFile {
                format: VerdictFile::FORMAT,
                created: "2026-12-06T00:00:00Z".into(),
                machine: machine(),
                git_commit: "fixture".into(),
                hazards: Vec::new(),
                settings: plot_settings(1),
                outcomes,
            };
            std::fs::write(pairs_path(dir, &run.file, k), file.to_json()).unwrap();
        }
        runs.push(dir.join(format!("{}.json", run.file)));
    }
    (publication, runs)
}

/// An axis-aligned box: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bounds(f64, f64, f64, f64);

impl Bounds {
    fn overlaps(&self, o: &Bounds, slack: f64) -> bool {
        self.0 + slack < o.2 && o.0 + slack < self.2 && self.1 + slack < o.3 && o.1 + slack < self.3
    }
    fn inside(&self, o: &Bounds, slack: f64) -> bool {
        self.0 >= o.0 - slack
            && self.2 <= o.2 + slack
            && self.1 >= o.1 - slack
            && self.3 <= o.3 + slack
    }
}

/// The value of attribute `name` in an element's opening tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..].split('"').next()
}

fn num(tag: &str, name: &str) -> f64 {
    attr(tag, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no number {name} in {tag}"))
}

/// Every `<text>` element: its content and its estimated box.
fn texts(svg: &str) -> Vec<(String, Bounds)> {
    let mut out = Vec::new();
    for chunk in svg.split("<text").skip(1) {
        let (tag, rest) = chunk.split_once('>').unwrap();
        let content = rest.split("</text>").next().unwrap().trim();
        let content = content
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
            .replace("&quot;", "\"");
        let (x, y, size) = (num(tag, "x"), num(tag, "y"), num(tag, "font-size"));
        let w = content.chars().count() as f64 * 0.6 * size;
        let left = match attr(tag, "text-anchor") {
            Some("middle") => x - w / 2.0,
            Some("end") => x - w,
            _ => x,
        };
        let top = match attr(tag, "dy") {
            Some("0.76em") => y,
            Some("0.5ex") => y - size / 2.0,
            _ => y - size,
        };
        let mut b = Bounds(left, top, left + w, top + size);
        if let Some(t) = attr(tag, "transform") {
            // rotate(270, cx, cy): (px, py) -> (cx + (py - cy), cy - (px - cx)).
            assert!(t.starts_with("rotate(270"), "{t}");
            let r = |px: f64, py: f64| (x + (py - y), y - (px - x));
            let (a, c) = (r(b.0, b.1), r(b.2, b.3));
            b = Bounds(a.0.min(c.0), a.1.min(c.1), a.0.max(c.0), a.1.max(c.1));
        }
        out.push((content, b));
    }
    out
}

/// The plot area: the only `<rect>` with `fill="none"`.
fn plot_area(svg: &str) -> Bounds {
    let frames: Vec<Bounds> = svg
        .split("<rect")
        .skip(1)
        .map(|c| c.split_once("/>").unwrap().0)
        .filter(|tag| attr(tag, "fill") == Some("none"))
        .map(|tag| {
            let (x, y) = (num(tag, "x"), num(tag, "y"));
            Bounds(x, y, x + num(tag, "width"), y + num(tag, "height"))
        })
        .collect();
    assert_eq!(frames.len(), 1, "one plot area");
    frames[0]
}

/// Every data marker's box: a `<circle>` or a closed `<polyline>` of four points or more, drawn
/// with `stroke-width="2"`.
fn markers(svg: &str) -> Vec<Bounds> {
    let mut out = Vec::new();
    for chunk in svg.split("<circle").skip(1) {
        let tag = chunk.split_once("/>").unwrap().0;
        if attr(tag, "stroke-width") == Some("2") {
            let (x, y, r) = (num(tag, "cx"), num(tag, "cy"), num(tag, "r"));
            out.push(Bounds(x - r, y - r, x + r, y + r));
        }
    }
    for chunk in svg.split("<polyline").skip(1) {
        let tag = chunk.split_once("/>").unwrap().0;
        let points: Vec<(f64, f64)> = attr(tag, "points")
            .unwrap()
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        if attr(tag, "stroke-width") == Some("2")
            && points.len() >= 4
            && points[0] == points[points.len() - 1]
        {
            let xs = points.iter().map(|p| p.0);
            let ys = points.iter().map(|p| p.1);
            out.push(Bounds(
                xs.clone().fold(f64::INFINITY, f64::min),
                ys.clone().fold(f64::INFINITY, f64::min),
                xs.fold(f64::NEG_INFINITY, f64::max),
                ys.fold(f64::NEG_INFINITY, f64::max),
            ));
        }
    }
    out
}

/// What is wrong with a chart's layout, in words (empty: nothing).
fn layout_faults(svg: &str, points: usize) -> Vec<String> {
    let mut faults = Vec::new();
    let page = Bounds(0.0, 0.0, num(svg, "width"), num(svg, "height"));
    let area = plot_area(svg);
    let texts = texts(svg);
    for (i, (a, ba)) in texts.iter().enumerate() {
        if !ba.inside(&page, 0.5) {
            faults.push(format!("text {a:?} {ba:?} runs off the page"));
        }
        if ba.overlaps(&area, 1.0) {
            faults.push(format!(
                "text {a:?} {ba:?} is inside the plot area {area:?}"
            ));
        }
        for (b, bb) in &texts[..i] {
            if ba.overlaps(bb, 0.5) {
                faults.push(format!("text {a:?} {ba:?} overlaps {b:?} {bb:?}"));
            }
        }
    }
    let found = markers(svg);
    if found.len() != points {
        faults.push(format!("{} data markers for {points} points", found.len()));
    }
    for m in &found {
        if !m.inside(&area, 0.5) {
            faults.push(format!("marker {m:?} outside the plot area {area:?}"));
        }
    }
    faults
}

#[test]
fn every_chart_of_a_fixture_run_keeps_text_apart_and_points_inside_the_axes() {
    let dir = match std::env::var_os("CRITSEC_LAYOUT_OUT") {
        Some(d) => PathBuf::from(d),
        None => std::env::temp_dir().join(format!("critsec-layout-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).unwrap();
    let (publication, runs) = fixture(&dir);
    let report = write_report(&dir, &runs, None, &publication).unwrap();
    let md = std::fs::read_to_string(&report).unwrap();
    let mut checked = 0;
    let mut faults = BTreeMap::new();
    for run in &publication.runs {
        for (k, plot) in run.plots.iter().enumerate() {
            let file = VerdictFile::read(&pairs_path(&dir, &run.file, k)).unwrap();
            let drawn = charts(run, plot, &file.outcomes);
            for (i, chart) in drawn.iter().enumerate() {
                let name = if drawn.len() == 1 {
                    format!("{}-{k}.svg", run.file)
                } else {
                    format!("{}-{k}-{i}.svg", run.file)
                };
                assert!(
                    md.contains(&format!("]({name})")),
                    "{name} not in the report"
                );
                let svg = std::fs::read_to_string(dir.join(&name)).unwrap();
                let points = chart.series.iter().map(|s| s.points.len()).sum();
                let found = layout_faults(&svg, points);
                if !found.is_empty() {
                    faults.insert(name, found);
                }
                checked += 1;
            }
        }
    }
    assert_eq!(
        checked, 5,
        "two crossover charts, one of threads, one of latency, one sweep"
    );
    assert!(faults.is_empty(), "layout faults: {faults:#?}");
    // What the fixture was built to show is there: crossings, arrows, hollow markers, titles.
    assert!(
        md.contains("Crossing of 1: rwlock / mutex goes from above 1"),
        "{md}"
    );
    assert!(
        md.contains("Crossing of 1: snapshot / mutex goes from below 1"),
        "{md}"
    );
    assert!(md.contains("Too noisy: jdk-rwlock at mdc_puts = 0 (x/÷ 1.13 over 8 pairs: about 9 pairs would settle it, 2 s more); 1 ("), "{md}");
    assert!(md.contains("‡"), "an interval beyond the axis: {md}");
    assert!(
        md.contains("Not drawn: snapshot at mdc_puts = 8: check failed"),
        "{md}"
    );
    assert!(md.contains("![registry/get_core_micro, 1 thread]"), "{md}");
    assert!(md.contains("![registry/get_core_micro, 2 threads]"), "{md}");
    if std::env::var_os("CRITSEC_LAYOUT_OUT").is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The checks find what they are for: text over text, text in the plot area, a marker outside
/// it, a marker missing.
#[test]
fn the_layout_checks_catch_overlaps_and_stray_markers() {
    let svg = |body: &str| {
        format!(
            "<svg width=\"900\" height=\"540\" viewBox=\"0 0 900 540\">\n<rect x=\"100\" y=\"100\" width=\"500\" height=\"300\" opacity=\"1\" fill=\"none\" stroke=\"grey\"/>\n{body}</svg>"
        )
    };
    let text = |x: i32, y: i32, s: &str| {
        format!(
            "<text x=\"{x}\" y=\"{y}\" dy=\"0.76em\" text-anchor=\"start\" font-family=\"sans-serif\" font-size=\"10\" opacity=\"1\" fill=\"black\">\n{s}\n</text>\n"
        )
    };
    let marker = |x: i32, y: i32| {
        format!(
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"5\" opacity=\"1\" fill=\"none\" stroke=\"blue\" stroke-width=\"2\"/>\n"
        )
    };
    let good = svg(&(text(10, 10, "title") + &text(10, 30, "sub") + &marker(200, 200)));
    assert!(
        layout_faults(&good, 1).is_empty(),
        "{:?}",
        layout_faults(&good, 1)
    );
    let over = svg(&(text(10, 10, "title") + &text(20, 12, "sub") + &marker(200, 200)));
    assert!(layout_faults(&over, 1)[0].contains("overlaps"));
    let inside = svg(&(text(150, 150, "legend") + &marker(200, 200)));
    assert!(layout_faults(&inside, 1)[0].contains("inside the plot area"));
    let stray = svg(&marker(98, 200));
    assert!(layout_faults(&stray, 1)[0].contains("outside the plot area"));
    assert!(layout_faults(&stray, 2)[0].contains("1 data markers for 2 points"));
    // A rotated label's box turns with it.
    let rotated = "<text x=\"50\" y=\"250\" dy=\"0.76em\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"10\" opacity=\"1\" fill=\"black\" transform=\"rotate(270, 50, 250)\">\nratio to mutex (log scale)\n</text>\n";
    let b = texts(rotated)[0].1;
    assert!(b.2 - b.0 <= 11.0 && b.3 - b.1 > 100.0, "{b:?}");
}
