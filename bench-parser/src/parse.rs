//! `parser/parse`: one query parse per operation, round-robin over a corpus class.
//!
//! Strategies: `backtracking` and `predictive` (ours, `critsec_parser`) and `tantivy`
//! (`tantivy_query_grammar::parse_query`, the peer, on the shared subset only). The `backtrace`
//! parameter sets `RUST_BACKTRACE`/`RUST_LIB_BACKTRACE` in the fork: our analogue of starting the
//! JVM with a JDWP agent, which makes every fresh exception expensive (in the backtracking parser,
//! each read past the end of the query; its `LookaheadSuccess` is preallocated and stays cheap).
//! Every result is checked whole: ours against the tree verified at setup to render as the corpus
//! expects (and by its rendering itself on each worker's first parse of each query), tantivy's
//! against the tree verified to mean the same.

use std::backtrace::{Backtrace, BacktraceStatus};
use std::sync::atomic::{AtomicU64, Ordering};

use critsec_harness::{
    CheckFailed, Choice, GroupSpec, Iterations, Metric, ParamSpec, Params, Probe, Scenario,
    ScenarioError, Trial, Window, Worker, WorkerSource,
};
use critsec_parser::{
    self as parser, BacktrackingParser, ParseError, ParseStats, ParserKind, Query, QueryParser,
};
use critsec_sync::kind::ids;
use tantivy_query_grammar::UserInputAst;

use crate::corpus::{self, Class, Entry, Expect};
use crate::peer;

/// The `parser/parse` scenario.
#[derive(Debug, Default)]
pub struct ParseScenario;

/// The id of the peer, tantivy's query grammar, as a `strategy` value.
const TANTIVY: &str = "tantivy";

/// The `strategy` parameter's values: our parsers' ids from `ParserKind`, then the peer.
pub fn strategies() -> Vec<&'static str> {
    let mut all = ids::<ParserKind>();
    all.push(TANTIVY);
    all
}

impl Scenario for ParseScenario {
    fn name(&self) -> &'static str {
        "parser/parse"
    }

    fn description(&self) -> &'static str {
        "Parses one query per operation, cycling through the queries of one corpus class, and \
         checks each whole result: ours compared with the tree verified to render as expected \
         (rendered and compared too on each worker's first parse of a query; errors by class), \
         tantivy's tree compared with the one verified to mean the same. No lock \
         is taken by our parsers; with backtrace=1 the backtracking strategy captures a \
         backtrace per read past the end of the query (Lucene's IOException), which serialises \
         threads on std's backtrace lock. tantivy runs only the shared subset (subset=auto picks \
         it), our strategies the whole class unless subset=shared."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::choice(
                "strategy",
                &strategies(),
                &strategies(),
                "parser: ours (backtracking, predictive) or tantivy's grammar",
            ),
            ParamSpec::choices("class", Class::ALL, "query class of the corpus"),
            ParamSpec::choices(
                "backtrace",
                BacktraceEnv::ALL,
                "RUST_BACKTRACE in the fork (1 = the JDWP analogue)",
            ),
            ParamSpec::choices(
                "subset",
                &[Subset::Auto],
                "queries run: auto = shared for tantivy, all for ours",
            ),
        ]
    }

    fn default_threads(&self) -> Vec<String> {
        vec!["1".to_string(), "2".to_string()]
    }

    fn fork_env(&self, params: &Params) -> Vec<(String, String)> {
        let on = params.get("backtrace").unwrap_or("0");
        vec![
            ("RUST_BACKTRACE".to_string(), on.to_string()),
            ("RUST_LIB_BACKTRACE".to_string(), on.to_string()),
        ]
    }

    fn setup(
        &self,
        params: &Params,
        _groups: &[GroupSpec],
    ) -> Result<Box<dyn Trial>, ScenarioError> {
        Ok(Box::new(ParseTrial::new(params)?))
    }
}

/// Which parser a trial runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Ours(ParserKind),
    Tantivy,
}

/// One trial: the class's queries, what each parse must give, and the throws counted.
#[derive(Debug)]
pub struct ParseTrial {
    strategy: Strategy,
    class: Class,
    backtrace: bool,
    entries: Vec<Entry>,
    /// The field our renderings omit (the parser's default field).
    field: String,
    /// For ours: the tree each query must give (`None`: it fails), verified to render as the
    /// corpus expects. Comparing a parse with it (`==`) checks everything the rendering shows
    /// and more (a rendering is a function of the tree; boosts compare as floats, and the
    /// NUMBER token has no sign, so a boost is never -0.0) at half the cost of rendering.
    our_trees: Vec<Option<Query<'static>>>,
    /// For tantivy: the tree each shared query must give, verified to mean what ours means.
    peer_trees: Vec<UserInputAst>,
    throws: ThrowProbe,
}

/// Whether one of our results is the corpus expectation: the whole rendering, byte for byte
/// (compared while it is rendered, so checking allocates and copies nothing), or the error class.
fn is_expected(expect: Expect, r: &Result<Query, ParseError>, field: &str) -> bool {
    match (expect, r) {
        (Expect::Renders(s), Ok(q)) => q.renders_as(field, s),
        (Expect::Fails(c), Err(err)) => err.class() == c,
        _ => false,
    }
}

/// Checks one of our results against the corpus expectation, saying what differed.
fn check_expect(e: &Entry, r: &Result<Query, ParseError>, field: &str) -> Result<(), String> {
    if is_expected(e.expect, r, field) {
        return Ok(());
    }
    Err(format!(
        "query {:?}: expected {:?}, got {:?}",
        e.query,
        e.expect,
        r.as_ref()
            .map(|q| q.to_string_field(field))
            .map_err(|e| e.to_string())
    ))
}

/// Exceptions thrown by our parsers, per parse (the secondary metrics `throws.*`): workers
/// count into their own fields and add them here after each iteration, outside the window.
#[derive(Debug, Default)]
struct ThrowProbe {
    parses: AtomicU64,
    lookahead_successes: AtomicU64,
    reads_past_eof: AtomicU64,
}

impl Probe for ThrowProbe {
    fn reset(&self) {
        for a in [
            &self.parses,
            &self.lookahead_successes,
            &self.reads_past_eof,
        ] {
            a.store(0, Ordering::Relaxed);
        }
    }

    fn read(&self, _window: Window) -> Vec<Metric> {
        let parses = self.parses.load(Ordering::Relaxed).max(1) as f64;
        let per_parse = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64 / parses;
        vec![
            Metric::new(
                "throws.lookahead_success",
                per_parse(&self.lookahead_successes),
                "/parse",
            )
            .lower_is_better(),
            Metric::new(
                "throws.read_past_eof",
                per_parse(&self.reads_past_eof),
                "/parse",
            )
            .lower_is_better(),
        ]
    }
}

/// `RUST_BACKTRACE` in the fork: `0`, or `1` (the JDWP analogue: every throw captures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BacktraceEnv {
    /// `RUST_BACKTRACE=0`.
    Off,
    /// `RUST_BACKTRACE=1`.
    On,
}

impl Choice for BacktraceEnv {
    const ALL: &'static [Self] = &[BacktraceEnv::Off, BacktraceEnv::On];
    fn id(self) -> &'static str {
        match self {
            BacktraceEnv::Off => "0",
            BacktraceEnv::On => "1",
        }
    }
}

/// Which queries of the class run: the subset tantivy's grammar shares with ours, or all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subset {
    /// `shared` for tantivy, `all` for ours.
    Auto,
    All,
    Shared,
}

impl Choice for Subset {
    const ALL: &'static [Self] = &[Subset::Auto, Subset::All, Subset::Shared];
    fn id(self) -> &'static str {
        match self {
            Subset::Auto => "auto",
            Subset::All => "all",
            Subset::Shared => "shared",
        }
    }
}

impl ParseTrial {
    /// Builds and verifies a trial for `params` (the scenario's parameters).
    pub fn new(params: &Params) -> Result<Self, ScenarioError> {
        let strategy = match params.get("strategy")? {
            TANTIVY => Strategy::Tantivy,
            other => Strategy::Ours(other.parse().map_err(|_| {
                ScenarioError::bad(
                    "strategy",
                    other,
                    format!("valid: {}", strategies().join(", ")),
                )
            })?),
        };
        let class = params.choice("class")?;
        let backtrace = params.choice::<BacktraceEnv>("backtrace")? == BacktraceEnv::On;
        let subset = match params.get("subset") {
            Ok(_) => params.choice("subset")?,
            Err(_) => Subset::Auto,
        };
        let shared_only = match (subset, strategy) {
            (Subset::Auto, Strategy::Tantivy) | (Subset::Shared, _) => true,
            (Subset::Auto, _) | (Subset::All, Strategy::Ours(_)) => false,
            (Subset::All, Strategy::Tantivy) => {
                return Err(ScenarioError::bad(
                    "subset",
                    "all",
                    "tantivy only runs the shared subset; use auto or shared",
                ));
            }
        };
        let entries = corpus::entries(class, shared_only);
        if entries.is_empty() {
            return Err(ScenarioError::Setup(format!(
                "class {} has no queries",
                class.id()
            )));
        }
        let mut trial = ParseTrial {
            strategy,
            class,
            backtrace,
            entries,
            field: corpus::options().default_field,
            our_trees: Vec::new(),
            peer_trees: Vec::new(),
            throws: ThrowProbe::default(),
        };
        let (our_trees, peer_trees, _) = trial.check_all().map_err(ScenarioError::Setup)?;
        trial.our_trees = our_trees;
        trial.peer_trees = peer_trees;
        Ok(trial)
    }

    /// The queries of this trial.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// A parser of this trial's strategy (`None` for tantivy, which needs none).
    pub fn parser(&self) -> Option<Box<dyn QueryParser>> {
        match self.strategy {
            Strategy::Ours(kind) => Some(kind.build(corpus::options())),
            Strategy::Tantivy => None,
        }
    }

    /// Parses every query with both of our strategies (and tantivy when it is the subject),
    /// checks the expectations, and returns our verified trees, tantivy's (when it is the
    /// subject) and a summary.
    #[allow(clippy::type_complexity)]
    fn check_all(
        &self,
    ) -> Result<(Vec<Option<Query<'static>>>, Vec<UserInputAst>, String), String> {
        let opts = corpus::options();
        let backtracking = BacktrackingParser::new(opts.clone());
        let predictive = parser::PredictiveParser::new(opts.clone());
        let mut our_trees = Vec::new();
        let mut peer_trees = Vec::new();
        let (mut ok, mut failed) = (0, 0);
        let mut thrown = ParseStats::default();
        for e in &self.entries {
            let (b, stats) = backtracking.parse_with_stats(e.query);
            let p = predictive.parse(e.query);
            check_expect(e, &b, &opts.default_field).map_err(|m| format!("backtracking: {m}"))?;
            check_expect(e, &p, &opts.default_field).map_err(|m| format!("predictive: {m}"))?;
            match (&b, &p) {
                (Ok(x), Ok(y)) if x != y => {
                    return Err(format!(
                        "query {:?}: strategies built different trees",
                        e.query
                    ));
                }
                (Ok(_), _) => ok += 1,
                _ => failed += 1,
            }
            thrown.successes += stats.successes;
            thrown.read_past_eof += stats.read_past_eof;
            our_trees.push(p.as_ref().ok().map(|q| q.clone().into_owned()));
            if self.strategy == Strategy::Tantivy {
                let tree = p
                    .as_ref()
                    .map_err(|err| format!("query {:?} in shared subset fails: {err}", e.query))?;
                let peer = tantivy_query_grammar::parse_query(e.query)
                    .map_err(|_| format!("tantivy rejects shared query {:?}", e.query))?;
                if !peer::means_the_same(tree, &peer, &opts.default_field) {
                    return Err(format!(
                        "query {:?}: tantivy's tree {peer:?} does not mean {:?}",
                        e.query,
                        tree.to_string_field(&opts.default_field)
                    ));
                }
                peer_trees.push(peer);
            }
        }
        let summary = format!(
            "{} {} queries verified ({ok} ok, {failed} errors as expected; renderings{}), backtracking throws per pass: {} LookaheadSuccess, {} read past eof",
            self.entries.len(),
            self.class.id(),
            if self.strategy == Strategy::Tantivy {
                " and tantivy trees"
            } else {
                ""
            },
            thrown.successes,
            thrown.read_past_eof,
        );
        Ok((our_trees, peer_trees, summary))
    }
}

impl Trial for ParseTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        // A fork whose environment does not match the parameter would measure the wrong thing.
        let status = Backtrace::capture().status();
        let captured = status == BacktraceStatus::Captured;
        if captured != self.backtrace {
            return Err(format!(
                "backtrace={} but Backtrace::capture() is {status:?}: the fork's RUST_BACKTRACE / RUST_LIB_BACKTRACE do not match",
                u8::from(self.backtrace)
            ).into());
        }
        let (our_trees, peer_trees, summary) = self.check_all()?;
        if our_trees != self.our_trees {
            return Err("our trees changed since setup".into());
        }
        if peer_trees != self.peer_trees {
            return Err("tantivy's trees changed since setup".into());
        }
        Ok(summary)
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }

    fn probe(&self) -> Option<&dyn Probe> {
        match self.strategy {
            Strategy::Ours(_) => Some(&self.throws),
            Strategy::Tantivy => None,
        }
    }
}

impl WorkerSource for ParseTrial {
    fn worker(&self, _group: &str, index: usize) -> Box<dyn Worker + '_> {
        // Each worker owns its parser, as each request handler would.
        let parser = self.parser();
        Box::new(ParseWorker {
            trial: self,
            parser,
            next: index % self.entries.len(),
            mismatches: 0,
            ops: 0,
            thrown: ParseStats::default(),
            counted: 0,
        })
    }
}

/// One thread's state: its own parser and its position in the class.
struct ParseWorker<'t> {
    trial: &'t ParseTrial,
    parser: Option<Box<dyn QueryParser>>,
    next: usize,
    mismatches: u64,
    ops: u64,
    /// Throws since the last [`Worker::check`], and the parses they came from.
    thrown: ParseStats,
    counted: u64,
}

impl Worker for ParseWorker<'_> {
    fn op(&mut self) -> u64 {
        let i = self.next;
        self.next = if i + 1 == self.trial.entries.len() {
            0
        } else {
            i + 1
        };
        let entry = &self.trial.entries[i];
        self.ops += 1;
        let (right, size) = match self.parser.as_deref() {
            Some(p) => {
                let (r, stats) = p.parse_with_stats(entry.query);
                self.thrown.successes += stats.successes;
                self.thrown.read_past_eof += stats.read_past_eof;
                self.counted += 1;
                // The tree verified at setup (equal trees render equally) on every parse, and
                // the rendering itself too on this worker's first parse of each query.
                let first_pass = self.ops <= self.trial.entries.len() as u64;
                let right = match (&r, &self.trial.our_trees[i]) {
                    (Ok(q), Some(tree)) => {
                        q == tree
                            && (!first_pass || is_expected(entry.expect, &r, &self.trial.field))
                    }
                    (Err(_), None) => is_expected(entry.expect, &r, &self.trial.field),
                    _ => false,
                };
                (right, usize::from(r.is_ok()))
            }
            None => match tantivy_query_grammar::parse_query(entry.query) {
                Ok(ast) => (ast == self.trial.peer_trees[i], 1),
                Err(_) => (false, 0),
            },
        };
        if !right {
            self.mismatches += 1;
        }
        size as u64
    }

    fn check(&mut self) -> Result<(), CheckFailed> {
        let t = &self.trial.throws;
        t.parses.fetch_add(self.counted, Ordering::Relaxed);
        t.lookahead_successes
            .fetch_add(u64::from(self.thrown.successes), Ordering::Relaxed);
        t.reads_past_eof
            .fetch_add(u64::from(self.thrown.read_past_eof), Ordering::Relaxed);
        (self.thrown, self.counted) = (ParseStats::default(), 0);
        if self.trial.strategy != Strategy::Tantivy && self.parser.is_none() {
            return Err("worker has no parser".into());
        }
        if self.mismatches > 0 {
            return Err(format!(
                "{} of {} parses differed from the verified result",
                self.mismatches, self.ops
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(strategy: &str, class: &str, subset: &str) -> Params {
        // Whatever the test runner's environment, pick the backtrace value it really gives.
        let on = Backtrace::capture().status() == BacktraceStatus::Captured;
        Params::from_pairs([
            ("strategy", strategy),
            ("class", class),
            ("backtrace", if on { "1" } else { "0" }),
            ("subset", subset),
        ])
    }

    #[test]
    fn every_default_combination_sets_up_verifies_and_runs() {
        let s = ParseScenario;
        for strategy in strategies() {
            for &class in Class::ALL {
                let p = params(strategy, class.id(), "auto");
                let groups = s.groups(&p, 2);
                let trial = s.setup(&p, &groups).unwrap_or_else(|e| panic!("{p}: {e}"));
                let summary = trial.verify().unwrap_or_else(|e| panic!("{p}: {e}"));
                assert!(summary.contains("verified"), "{summary}");
                for index in 0..2 {
                    let mut w = trial.expect_workers().worker("op", index);
                    for _ in 0..40 {
                        w.op();
                    }
                    w.check().unwrap_or_else(|e| panic!("{p}: {e}"));
                }
                trial.verify().unwrap_or_else(|e| panic!("{p}: {e}"));
            }
        }
    }

    #[test]
    fn shared_subset_runs_for_ours_and_all_is_refused_for_tantivy() {
        let s = ParseScenario;
        let ours = ParseTrial::new(&params("predictive", "complex", "shared")).expect("setup");
        let peer = ParseTrial::new(&params("tantivy", "complex", "auto")).expect("setup");
        assert_eq!(ours.entries, peer.entries);
        assert!(ours.entries.len() < corpus::entries(Class::Complex, false).len());
        assert!(s.setup(&params("tantivy", "complex", "all"), &[]).is_err());
        assert!(s.setup(&params("predictive", "huge", "auto"), &[]).is_err());
    }

    /// One character off in one expected rendering, or one swapped tree (ours or tantivy's),
    /// fails the worker's check and `verify`.
    #[test]
    fn a_wrong_rendering_or_tree_is_reported() {
        let trial = ParseTrial::new(&params("predictive", "medium", "auto")).expect("setup");
        let mut entries = trial.entries.clone();
        let Expect::Renders(right) = entries[0].expect else {
            panic!("first medium query renders")
        };
        let wrong: &'static str = Box::leak(format!("{right} ").into_boxed_str());
        entries[0].expect = Expect::Renders(wrong);
        let broken = ParseTrial { entries, ..trial };
        let mut w = broken.worker("op", 0);
        w.op();
        assert!(w.check().is_err());
        drop(w);
        assert!(broken.verify().is_err());

        // Every parse is compared with the verified tree: with the renderings right and two of
        // our trees swapped, a parse of either query fails.
        let trial = ParseTrial::new(&params("predictive", "medium", "auto")).expect("setup");
        let mut trees = trial.our_trees.clone();
        trees.swap(0, 1);
        let swapped = ParseTrial {
            our_trees: trees,
            ..trial
        };
        let mut w = swapped.worker("op", 2);
        for _ in 2..swapped.entries.len() {
            w.op();
        }
        w.check().expect("the other queries' trees");
        w.op();
        assert!(w.check().is_err());
        drop(w);
        assert!(swapped.verify().is_err());

        let peer = ParseTrial::new(&params("tantivy", "medium", "auto")).expect("setup");
        let mut w = peer.worker("op", 0);
        for _ in 0..peer.entries.len() {
            w.op();
        }
        w.check().expect("verified trees");
        drop(w);
        let mut trees = peer.peer_trees.clone();
        trees.swap(0, 1);
        let swapped = ParseTrial {
            peer_trees: trees,
            ..peer
        };
        let mut w = swapped.worker("op", 0);
        w.op();
        assert!(w.check().is_err());
        drop(w);
        assert!(swapped.verify().is_err());
    }

    /// The secondary metrics give Lucene's throws per parse: `xyz`-like queries 0
    /// `LookaheadSuccess` and 2 reads past the end; the predictive parser throws nothing.
    #[test]
    fn throws_per_parse_are_secondary_metrics() {
        let window = Window { nanos: 1, ops: 1 };
        for (strategy, expected) in [("backtracking", [0.0, 2.0]), ("predictive", [0.0, 0.0])] {
            let trial = ParseTrial::new(&params(strategy, "simple", "auto")).expect("setup");
            let probe = trial.probe().expect("ours have a probe");
            probe.reset();
            let mut w = trial.worker("op", 0);
            for _ in 0..50 {
                w.op();
            }
            w.check().expect("verified");
            let got: Vec<f64> = probe.read(window).iter().map(|m| m.value).collect();
            assert_eq!(got, expected, "{strategy}");
        }
        let complex = ParseTrial::new(&params("backtracking", "complex", "auto")).expect("setup");
        let probe = complex.probe().expect("probe");
        probe.reset();
        let mut w = complex.worker("op", 0);
        for _ in 0..complex.entries.len() {
            w.op();
        }
        w.check().expect("verified");
        let got = probe.read(window);
        assert!(got[0].value > 1.0 && got[1].value >= 1.0, "{got:?}");
    }

    #[test]
    fn backtrace_parameter_must_match_the_environment() {
        let on = Backtrace::capture().status() == BacktraceStatus::Captured;
        let mut p = params("backtracking", "simple", "auto");
        p.0.insert(
            "backtrace".to_string(),
            if on { "0" } else { "1" }.to_string(),
        );
        let trial = ParseScenario.setup(&p, &[]).expect("setup");
        assert!(trial.verify().is_err());
        let env = ParseScenario.fork_env(&p);
        assert!(env.iter().any(|(k, _)| k == "RUST_BACKTRACE"));
        assert!(env.iter().any(|(k, _)| k == "RUST_LIB_BACKTRACE"));
    }

    #[test]
    fn corpus_classes_have_their_shape() {
        for e in corpus::CORPUS {
            if e.class == Class::Complex {
                assert!(e.query.len() >= 100, "{:?} is short", e.query);
            }
        }
        assert!(
            corpus::entries(Class::Long, true)
                .iter()
                .all(|e| e.query.len() > 200)
        );
        assert!(
            corpus::entries(Class::Simple, false)
                .iter()
                .all(|e| !e.query.contains(' '))
        );
    }
}

#[cfg(test)]
mod mutants;
