//! The publication set's plots as paired measurements: every point a chart draws is a ratio
//! claim "contender / baseline" of the plot's metric, measured by the claims' engine
//! (`reproduce_claims`: interleaved process pairs in rounds and blocks, pinning, looks, a
//! precision goal; seeds for a deterministic simulation), never two separate runs' scores.
//!
//! A plot becomes claims in code ([`plot_claims`]): for each chart (a thread count, and the
//! plot's `fix`), each x value (threads, the `axis` value, or a latency percentile) and each
//! series value other than the plot's `baseline`, one claim whose `params` fix everything else.
//! Their verdicts mean nothing (`higher`, a bound of 1, a wide band around it, so that they
//! never stop the looks early): their intervals are what is plotted.
//! Claims that share a configuration (the baseline at one x) are measured together by the
//! engine. Each plot's outcomes are saved as `<file>-<k>.pairs.json` ([`pairs_path`], the
//! layout of `critsec reproduce --json`), so that `critsec report RUN-FOLDER` draws the charts
//! again without measuring.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use critsec_harness::claims::{Claim, ClaimKind, Requirements, Side};
use critsec_harness::claims::{ClaimOutcome, PairedSettings, VerdictFile, reproduce_claims};
use critsec_harness::format::write_atomically;
use critsec_harness::run::{Silent, git_commit, hazards, interrupted, machine, now_utc};
use critsec_harness::run::{available_cores, resolve_threads};
use critsec_harness::{Catalog, Direction, Launcher};

use crate::publication::{PlotSpec, Publication, PublicationError, Published};

/// The precision every plotted ratio is measured to: a 99.9% interval within x/÷ 1.10, the
/// smallest difference a reader can see between two points on a log axis.
pub const PLOT_PRECISION: f64 = 1.10;

/// The band around 1 within which a point's claim is AT THE BOUND: the widest a claim may
/// state. A point's verdict must not stop its looks before its interval is narrow: once every
/// claim of a group is decided, the group goes on for precision alone; an undecided one near 1
/// could be judged futile and stop the group at the precision it had. With this band, a point
/// near 1 is decided as soon as its interval lies within x/÷ 2.
const POINT_TOLERANCE: f64 = 2.0;

/// The settings the plots are measured with: quick mode's, whose looks go on while a ratio is
/// wider than [`PLOT_PRECISION`] and the budget lasts; a simulation's points take all of quick
/// mode's 8 seeds in one look (its earlier looks are for decisions, and stop there).
pub fn plot_settings(seed: u64) -> PairedSettings {
    let quick = PairedSettings::quick();
    PairedSettings {
        precision: Some(PLOT_PRECISION.ln()),
        seeds: quick.max_seeds,
        ..quick.with_seed(seed)
    }
}

/// One configuration a run measures: its parameters and its thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    /// Every parameter of the scenario, set.
    pub params: BTreeMap<String, String>,
    /// The thread count, as `-t` resolves it here.
    pub threads: usize,
}

/// The configurations of `run`: its parameter combinations (the scenario's defaults filling in
/// what the run leaves unset) at each of its thread counts, as resolved on this machine.
pub fn configurations(
    publication: &Publication,
    run: &Published,
    catalog: &Catalog,
) -> Result<Vec<Configuration>, PublicationError> {
    let mut combos: Vec<BTreeMap<String, String>> = Vec::new();
    for spec in publication.plan(run, catalog)? {
        if !combos.contains(&spec.params.0) {
            combos.push(spec.params.0);
        }
    }
    let mut threads: Vec<usize> = Vec::new();
    for t in run.threads.split(',') {
        let n = resolve_threads(t).map_err(|e| PublicationError::Plan {
            file: run.file.clone(),
            message: e.to_string(),
        })?;
        if !threads.contains(&n) {
            threads.push(n);
        }
    }
    Ok(threads
        .iter()
        .flat_map(|&t| {
            combos.iter().map(move |p| Configuration {
                params: p.clone(),
                threads: t,
            })
        })
        .collect())
}

/// The file of a plot's outcomes: plot `k` of the run saved as `<file>.json`.
pub fn pairs_path(dir: &Path, file: &str, k: usize) -> PathBuf {
    dir.join(format!("{file}-{k}.pairs.json"))
}

/// Where a claim's point lies: its chart's thread count (none for a `threads` plot, whose x is
/// the thread count), its x value as text, and its series value.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    /// The chart's thread count; `None` when the threads are the x axis.
    pub chart: Option<usize>,
    /// The x value: a thread count, an `axis` value, or a percentile level.
    pub x: String,
    /// The contender's series value.
    pub series: String,
}

/// Where `claim`, a point of `plot`, lies; `None` when it is not one of the plot's points
/// (another baseline, another metric, or a configuration the plot does not fix).
pub fn place(plot: &PlotSpec, claim: &Claim) -> Option<Place> {
    let series = plot.series();
    if claim.baseline.params.get(series).map(String::as_str) != plot.baseline() {
        return None;
    }
    if !plot
        .fix()
        .iter()
        .all(|(k, v)| claim.params.get(k) == Some(v))
    {
        return None;
    }
    let contender = claim.contender.params.get(series)?.clone();
    let threads: usize = claim.threads.parse().ok()?;
    let (chart, x) = match plot {
        PlotSpec::Threads { .. } => (None, threads.to_string()),
        PlotSpec::Ratio { axis, .. } | PlotSpec::Sweep { axis, .. } => {
            (Some(threads), claim.params.get(axis)?.clone())
        }
        PlotSpec::Latency { prefix, .. } => {
            let level = claim.metric.strip_prefix(&format!("{prefix}."))?;
            (Some(threads), level.to_string())
        }
        PlotSpec::Table { .. } => return None,
    };
    plot.metrics().contains(&claim.metric).then_some(Place {
        chart,
        x,
        series: contender,
    })
}

/// The claims of plot `k` of `run`, one per point its charts draw, over the run's
/// `configurations`. An error names a parameter the plot leaves free where it takes several
/// values at one point (the chart would mix configurations): the plot must fix it.
pub fn plot_claims(
    run: &Published,
    k: usize,
    plot: &PlotSpec,
    configurations: &[Configuration],
) -> Result<Vec<Claim>, String> {
    let (Some(baseline), series) = (plot.baseline(), plot.series()) else {
        return Ok(Vec::new());
    };
    let stem = format!("{}-{k}", run.file);
    let picked: Vec<&Configuration> = configurations
        .iter()
        .filter(|c| plot.fix().iter().all(|(p, v)| c.params.get(p) == Some(v)))
        .collect();
    let bases: Vec<&Configuration> = picked
        .iter()
        .copied()
        .filter(|c| c.params.get(series).map(String::as_str) == Some(baseline))
        .collect();
    if bases.is_empty() {
        return Err(format!(
            "plot {k} of {}: no configuration has {series} = {baseline}",
            run.file
        ));
    }
    // A point is one (chart, x): more than one baseline configuration there mixes them.
    let point_of = |c: &Configuration| match plot {
        PlotSpec::Threads { .. } => (0, c.threads.to_string()),
        _ => (
            c.threads,
            plot.axis()
                .and_then(|a| c.params.get(a))
                .cloned()
                .unwrap_or_default(),
        ),
    };
    for (i, a) in bases.iter().enumerate() {
        if let Some(b) = bases[..i].iter().find(|b| point_of(b) == point_of(a)) {
            let free: Vec<String> = a
                .params
                .iter()
                .filter(|(p, v)| b.params.get(*p) != Some(*v))
                .map(|(p, v)| format!("{p} ({} and {v})", b.params[p]))
                .collect();
            return Err(format!(
                "plot {k} of {} leaves {} free: its charts would mix configurations; add it to the plot's `fix`",
                run.file,
                free.join(", ")
            ));
        }
    }
    let mut claims = Vec::new();
    for base in &bases {
        let shared: BTreeMap<String, String> = base
            .params
            .iter()
            .filter(|(p, _)| p.as_str() != series)
            .map(|(p, v)| (p.clone(), v.clone()))
            .collect();
        let contenders = picked.iter().filter(|c| {
            c.threads == base.threads
                && c.params.get(series).is_some_and(|v| v != baseline)
                && c.params
                    .iter()
                    .all(|(p, v)| p == series || shared.get(p) == Some(v))
        });
        for c in contenders {
            let value = &c.params[series];
            for metric in plot.metrics() {
                let (_, x) = point_of(base);
                let at = match plot {
                    PlotSpec::Threads { .. } => String::new(),
                    PlotSpec::Latency { .. } => format!("/{metric}"),
                    _ => format!("/{}={x}", plot.axis().unwrap_or_default()),
                };
                let id = format!("{stem}/{}t{at}/{value}", base.threads);
                claims.push(point_claim(
                    id,
                    &run.scenario,
                    &metric,
                    base.threads,
                    &shared,
                    (series, baseline, value),
                    &format!("plot {k} of {} in results/publication.toml", run.file),
                ));
            }
        }
    }
    Ok(claims)
}

/// One point of a chart as a claim: `contender / baseline` of `metric`, everything else fixed.
fn point_claim(
    id: String,
    scenario: &str,
    metric: &str,
    threads: usize,
    shared: &BTreeMap<String, String>,
    (series, baseline, contender): (&str, &str, &str),
    source: &str,
) -> Claim {
    let side = |v: &str| Side {
        params: BTreeMap::from([(series.to_string(), v.to_string())]),
        ..Side::default()
    };
    Claim {
        title: format!(
            "A measurement for a plot, not a claim: {contender} / {baseline} of {metric} at {threads} threads"
        ),
        id,
        source: source.to_string(),
        source_figure: "none: a point of a chart".into(),
        scenario: scenario.to_string(),
        benchmark: None,
        mode: None,
        metric: metric.to_string(),
        kind: ClaimKind::Ratio,
        direction: Some(Direction::Higher),
        min_effect: Some(1.0),
        tolerance: Some(POINT_TOLERANCE),
        k: None,
        exposure: None,
        requires: Requirements::default(),
        control: None,
        threads: threads.to_string(),
        params: shared.clone(),
        baseline: side(baseline),
        contender: side(contender),
        note: None,
        aa: false,
    }
}

/// Measures the paired plots of every run of `publication` into `dir`, one verdict file per
/// plot ([`pairs_path`]); returns the files written. Claims of one run are measured in one
/// call, so that plots sharing a configuration (a latency plot of `put` and one of `get`)
/// share its measurements. Progress goes to stderr.
pub fn measure_pairs(
    publication: &Publication,
    dir: &Path,
    catalog: &Arc<Catalog>,
    exe: PathBuf,
    seed: u64,
) -> Result<Vec<PathBuf>, PublicationError> {
    let launcher = Launcher::new(Arc::clone(catalog), Some(exe));
    let settings = plot_settings(seed);
    let mut written = Vec::new();
    for run in &publication.runs {
        if interrupted() {
            return Err(PublicationError::Interrupted);
        }
        let configs = configurations(publication, run, catalog)?;
        let mut claims: Vec<Claim> = Vec::new();
        let mut plot_of: Vec<usize> = Vec::new();
        for (k, plot) in run.plots.iter().enumerate() {
            let of_plot =
                plot_claims(run, k, plot, &configs).map_err(|message| PublicationError::Plan {
                    file: run.file.clone(),
                    message,
                })?;
            plot_of.extend(std::iter::repeat_n(k, of_plot.len()));
            claims.extend(of_plot);
        }
        if claims.is_empty() {
            continue;
        }
        eprintln!(
            "report: measuring the plots of {} in pairs ({} ratios, seed {seed})",
            run.file,
            claims.len()
        );
        let created = now_utc();
        let outcomes = reproduce_claims(&launcher, &claims, &claims, &settings, &mut Silent);
        if interrupted() {
            return Err(PublicationError::Interrupted);
        }
        let max_threads = configs.iter().map(|c| c.threads).max().unwrap_or(1);
        for k in 0..run.plots.len() {
            let ids: Vec<&str> = claims
                .iter()
                .zip(&plot_of)
                .filter(|(_, p)| **p == k)
                .map(|(c, _)| c.id.as_str())
                .collect();
            if ids.is_empty() {
                continue;
            }
            let mine: Vec<ClaimOutcome> = outcomes
                .iter()
                .filter(|o| ids.contains(&o.claim.id.as_str()))
                .cloned()
                .collect();
            eprintln!("report: {}-{k}: {}", run.file, summary(&mine));
            let file = VerdictFile {
                format: VerdictFile::FORMAT,
                created: created.clone(),
                machine: machine(),
                git_commit: git_commit(),
                hazards: hazards(max_threads.max(available_cores()), true),
                settings: settings.clone(),
                outcomes: mine,
            };
            let path = pairs_path(dir, &run.file, k);
            write_atomically(&path, &file.to_json()).map_err(|source| PublicationError::Write {
                path: path.clone(),
                source,
            })?;
            written.push(path);
        }
    }
    Ok(written)
}

/// A plot's measurement in one line: its ratios, how many reached the precision, and the wall
/// time of its groups.
pub fn summary(outcomes: &[ClaimOutcome]) -> String {
    let precise = outcomes
        .iter()
        .filter(|o| {
            o.interval
                .is_some_and(|r| (r.high / r.low).ln() / 2.0 <= PLOT_PRECISION.ln())
        })
        .count();
    let mut seconds = BTreeMap::new();
    for o in outcomes {
        seconds.insert(o.group.clone(), o.seconds);
    }
    let total: f64 = seconds.values().sum();
    format!(
        "{} ratios, {precise} within x/÷ {PLOT_PRECISION:.2}, {} groups, {:.0} s",
        outcomes.len(),
        seconds.len(),
        total
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configs(strategies: &[&str], puts: &[&str], threads: &[usize]) -> Vec<Configuration> {
        let mut out = Vec::new();
        for &t in threads {
            for s in strategies {
                for p in puts {
                    out.push(Configuration {
                        params: BTreeMap::from([
                            ("strategy".into(), s.to_string()),
                            ("mdc_puts".into(), p.to_string()),
                            ("cores".into(), "10".into()),
                        ]),
                        threads: t,
                    });
                }
            }
        }
        out
    }

    fn run(plots: &str) -> Published {
        let text = format!(
            "[settings]\nwarmup_iterations=1\nwarmup_ms=1\nmeasurement_iterations=1\nmeasurement_ms=1\nforks=1\n[[run]]\nfile='x'\nscenario='registry/get_core_micro'\nthreads='1,2'\nseries='strategy'\nplots=[{plots}]\n"
        );
        Publication::parse(&text, "t.toml").unwrap().runs.remove(0)
    }

    #[test]
    fn a_ratio_plot_is_one_claim_per_chart_x_and_contender_everything_else_fixed() {
        let r = run("{kind='ratio', axis='mdc_puts', series='strategy', baseline='mutex'}");
        let c = configs(&["mutex", "rwlock", "snapshot"], &["0", "4"], &[1, 2]);
        let claims = plot_claims(&r, 0, &r.plots[0], &c).unwrap();
        // 2 thread counts x 2 puts x 2 contenders.
        assert_eq!(claims.len(), 8);
        let first = &claims[0];
        assert_eq!(first.id, "x-0/1t/mdc_puts=0/rwlock");
        assert_eq!(first.threads, "1");
        assert_eq!(first.params["mdc_puts"], "0");
        assert_eq!(first.params["cores"], "10");
        assert!(!first.params.contains_key("strategy"));
        assert_eq!(first.baseline.params["strategy"], "mutex");
        assert_eq!(first.contender.params["strategy"], "rwlock");
        assert_eq!(first.min_effect, Some(1.0));
        // A point near 1 is decided once within x/÷ 2, and goes on only for precision.
        assert_eq!(first.tolerance, Some(2.0));
        // Every id is distinct, and each claim lies where the report will draw it.
        let mut ids: Vec<&str> = claims.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), claims.len());
        let p = place(&r.plots[0], &claims[7]).unwrap();
        assert_eq!(
            p,
            Place {
                chart: Some(2),
                x: "4".into(),
                series: "snapshot".into()
            }
        );
        // The claims are valid claims: a claims file of them reads back as they are.
        let text = Claim::file_text(&claims);
        assert_eq!(Claim::parse_file(&text, "plots.toml").unwrap(), claims);
    }

    #[test]
    fn threads_and_latency_plots_put_their_x_in_the_threads_and_the_metric() {
        let r = run(
            "{kind='threads', series='strategy', baseline='mutex', fix=[['mdc_puts','4']]}, {kind='latency', series='strategy', baseline='mutex', prefix='put', levels=['p50','p99'], fix=[['mdc_puts','4']]}",
        );
        let c = configs(&["mutex", "snapshot"], &["0", "4"], &[1, 8]);
        let threads = plot_claims(&r, 0, &r.plots[0], &c).unwrap();
        assert_eq!(threads.len(), 2);
        let p = place(&r.plots[0], &threads[1]).unwrap();
        assert_eq!((p.chart, p.x.as_str()), (None, "8"));
        let latency = plot_claims(&r, 1, &r.plots[1], &c).unwrap();
        let metrics: Vec<&str> = latency.iter().map(|c| c.metric.as_str()).collect();
        assert_eq!(metrics, ["put.p50", "put.p99", "put.p50", "put.p99"]);
        let p = place(&r.plots[1], &latency[1]).unwrap();
        assert_eq!((p.chart, p.x.as_str()), (Some(1), "p99"));
        // A claim of one plot is no point of another.
        assert_eq!(place(&r.plots[0], &latency[0]), None);
    }

    #[test]
    fn the_plots_aim_at_x_1_10_and_a_simulation_takes_its_seeds_in_one_look() {
        let s = plot_settings(7);
        assert_eq!(s.seed, 7);
        assert!((s.precision.unwrap() - 1.1f64.ln()).abs() < 1e-12);
        assert_eq!(s.seed_looks(), [PairedSettings::quick().max_seeds]);
        assert_eq!(s.looks(), PairedSettings::quick().looks());
    }

    #[test]
    fn a_parameter_left_free_where_it_varies_is_an_error_naming_it() {
        let r = run("{kind='threads', series='strategy', baseline='mutex'}");
        let c = configs(&["mutex", "snapshot"], &["0", "4"], &[1]);
        let e = plot_claims(&r, 0, &r.plots[0], &c).unwrap_err();
        assert!(
            e.contains("mdc_puts (0 and 4)") && e.contains("`fix`"),
            "{e}"
        );
        let none = run("{kind='threads', series='strategy', baseline='nope'}");
        let e = plot_claims(&none, 0, &none.plots[0], &c).unwrap_err();
        assert!(e.contains("strategy = nope"), "{e}");
    }

    #[test]
    fn every_plot_of_the_shipped_set_names_a_baseline_or_is_a_table() {
        for run in Publication::builtin().runs {
            for plot in &run.plots {
                let table = matches!(plot, PlotSpec::Table { .. });
                assert_eq!(plot.baseline().is_none(), table, "{}", run.file);
            }
        }
    }
}
