//! `parser/parse`: one query parse per operation, round-robin over a corpus class.
//!
//! Strategies: `backtracking` and `predictive` (ours, `critsec_core::parser`) and `tantivy`
//! (`tantivy_query_grammar::parse_query`, the peer, on the shared subset only). The `backtrace`
//! parameter sets `RUST_BACKTRACE`/`RUST_LIB_BACKTRACE` in the fork: our analogue of starting the
//! JVM with a JDWP agent, which makes every `LookaheadSuccess` expensive.

use std::backtrace::{Backtrace, BacktraceStatus};

use critsec_core::kind::ids;
use critsec_core::parser::{
    self, BacktrackingParser, ErrorClass, ParseError, ParserKind, Query, QueryParser,
};
use critsec_harness::{GroupSpec, ParamSpec, Params, Scenario, ScenarioError, Trial, Worker};
use tantivy_query_grammar::{UserInputAst, UserInputLeaf};

use crate::corpus::{self, Class, Entry, Expect};

/// The `parser/parse` scenario.
#[derive(Debug, Default)]
pub struct ParseScenario;

/// The id of the peer, tantivy's query grammar, as a `strategy` value.
const TANTIVY: &str = "tantivy";

/// The `strategy` parameter's values: our parsers' ids from the catalog, then the peer.
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
         checks each result against the verified one (node count, or error class). No lock is \
         taken by our parsers; with backtrace=1 the backtracking strategy captures a backtrace per \
         successful lookahead, which serialises threads on std's backtrace lock. tantivy runs \
         only the shared subset (subset=auto picks it), our strategies the whole class unless \
         subset=shared."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::choice(
                "strategy",
                &strategies(),
                &strategies(),
                "parser: ours (backtracking, predictive) or tantivy's grammar",
            ),
            ParamSpec::choice(
                "class",
                &["simple", "medium", "complex", "long"],
                &["simple", "medium", "complex", "long"],
                "query class of the corpus",
            ),
            ParamSpec::choice(
                "backtrace",
                &["0", "1"],
                &["0", "1"],
                "RUST_BACKTRACE in the fork (1 = the JDWP analogue)",
            ),
            ParamSpec::choice(
                "subset",
                &["auto"],
                &["auto", "all", "shared"],
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

/// One trial: the class's queries and the fingerprint each parse must give.
#[derive(Debug)]
pub struct ParseTrial {
    strategy: Strategy,
    class: Class,
    backtrace: bool,
    entries: Vec<Entry>,
    expected: Vec<u64>,
}

/// Cheap fingerprint of one of our results: the tree's node count, or the error class.
fn fingerprint(r: &Result<Query, ParseError>) -> u64 {
    match r {
        Ok(q) => q.node_count() as u64,
        Err(e) => {
            (1 << 32)
                | ErrorClass::ALL
                    .iter()
                    .position(|c| *c == e.class())
                    .unwrap_or(99) as u64
        }
    }
}

/// Leaf queries of one of our trees (what tantivy's AST must also hold).
fn lucene_leaves(q: &Query) -> u64 {
    match q {
        Query::Boolean(clauses) => clauses.iter().map(|c| lucene_leaves(&c.query)).sum(),
        Query::Boost { query, .. } => lucene_leaves(query),
        _ => 1,
    }
}

/// Leaves of tantivy's AST.
fn tantivy_leaves(ast: &UserInputAst) -> u64 {
    match ast {
        UserInputAst::Clause(clauses) => clauses.iter().map(|(_, a)| tantivy_leaves(a)).sum(),
        UserInputAst::Boost(inner, _) => tantivy_leaves(inner),
        UserInputAst::Leaf(leaf) => match **leaf {
            UserInputLeaf::Set { ref elements, .. } => elements.len() as u64,
            _ => 1,
        },
    }
}

fn tantivy_fingerprint(q: &str) -> u64 {
    match tantivy_query_grammar::parse_query(q) {
        Ok(ast) => tantivy_leaves(&ast),
        Err(_) => u64::MAX,
    }
}

/// Checks one of our results against the corpus expectation.
fn check_expect(e: &Entry, r: &Result<Query, ParseError>, field: &str) -> Result<(), String> {
    match (e.expect, r) {
        (Expect::Renders(s), Ok(q)) if q.to_string_field(field) == s => Ok(()),
        (Expect::Fails(c), Err(err)) if err.class() == c => Ok(()),
        (want, got) => Err(format!(
            "query {:?}: expected {want:?}, got {:?}",
            e.query,
            got.as_ref()
                .map(|q| q.to_string_field(field))
                .map_err(|e| e.to_string())
        )),
    }
}

/// The fingerprint of parsing `q` with `parser` (ours), or with tantivy's grammar when `None`.
pub fn parse_fingerprint(parser: Option<&dyn QueryParser>, q: &str) -> u64 {
    match parser {
        Some(p) => fingerprint(&p.parse(q)),
        None => tantivy_fingerprint(q),
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
        let class_id = params.get("class")?;
        let class = Class::from_id(class_id).ok_or_else(|| {
            ScenarioError::bad("class", class_id, "valid: simple, medium, complex, long")
        })?;
        let backtrace = match params.get("backtrace")? {
            "0" => false,
            "1" => true,
            other => return Err(ScenarioError::bad("backtrace", other, "valid: 0, 1")),
        };
        let shared_only = match (params.get("subset").unwrap_or("auto"), strategy) {
            ("auto", Strategy::Tantivy) | ("shared", _) => true,
            ("auto", _) | ("all", Strategy::Ours(_)) => false,
            ("all", Strategy::Tantivy) => {
                return Err(ScenarioError::bad(
                    "subset",
                    "all",
                    "tantivy only runs the shared subset; use auto or shared",
                ));
            }
            (other, _) => {
                return Err(ScenarioError::bad(
                    "subset",
                    other,
                    "valid: auto, all, shared",
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
            expected: Vec::new(),
        };
        trial.expected = trial.check_all().map_err(ScenarioError::Setup)?.0;
        Ok(trial)
    }

    /// The queries of this trial.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The verified fingerprint of each query, in [`ParseTrial::entries`] order.
    pub fn expected(&self) -> &[u64] {
        &self.expected
    }

    /// A parser of this trial's strategy (`None` for tantivy, which needs none).
    pub fn parser(&self) -> Option<Box<dyn QueryParser>> {
        match self.strategy {
            Strategy::Ours(kind) => Some(kind.build(corpus::options())),
            Strategy::Tantivy => None,
        }
    }

    /// Parses every query with both of our strategies (and tantivy when it is the subject),
    /// checks the expectations, and returns the subject's fingerprints and a summary.
    fn check_all(&self) -> Result<(Vec<u64>, String), String> {
        let opts = corpus::options();
        let backtracking = BacktrackingParser::new(opts.clone());
        let predictive = parser::PredictiveParser::new(opts.clone());
        let mut fingerprints = Vec::with_capacity(self.entries.len());
        let (mut ok, mut failed, mut successes) = (0, 0, 0);
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
            successes += stats.successes;
            fingerprints.push(match self.strategy {
                Strategy::Ours(ParserKind::Backtracking) => fingerprint(&b),
                Strategy::Ours(ParserKind::Predictive) => fingerprint(&p),
                Strategy::Tantivy => {
                    let tree = p.as_ref().map_err(|err| {
                        format!("query {:?} in shared subset fails: {err}", e.query)
                    })?;
                    let got = tantivy_fingerprint(e.query);
                    if got != lucene_leaves(tree) {
                        return Err(format!(
                            "query {:?}: tantivy gives {got} leaves (u64::MAX = error), Lucene {}",
                            e.query,
                            lucene_leaves(tree)
                        ));
                    }
                    got
                }
            });
        }
        let summary = format!(
            "{} {} queries verified ({ok} ok, {failed} errors as expected), {successes} lookahead successes per pass, fingerprint sum {}",
            self.entries.len(),
            self.class.id(),
            fingerprints.iter().fold(0u64, |a, f| a.wrapping_add(*f))
        );
        Ok((fingerprints, summary))
    }
}

impl Trial for ParseTrial {
    fn verify(&self) -> Result<String, String> {
        // A fork whose environment does not match the parameter would measure the wrong thing.
        let status = Backtrace::capture().status();
        let captured = status == BacktraceStatus::Captured;
        if captured != self.backtrace {
            return Err(format!(
                "backtrace={} but Backtrace::capture() is {status:?}: the fork's RUST_BACKTRACE / RUST_LIB_BACKTRACE do not match",
                u8::from(self.backtrace)
            ));
        }
        let (fingerprints, summary) = self.check_all()?;
        if fingerprints != self.expected {
            return Err("fingerprints changed since setup".to_string());
        }
        Ok(summary)
    }

    fn worker(&self, _group: &str, index: usize) -> Box<dyn Worker + '_> {
        // Each worker owns its parser, as each request handler would.
        let parser = self.parser();
        Box::new(ParseWorker {
            trial: self,
            parser,
            next: index % self.entries.len(),
            mismatches: 0,
            ops: 0,
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
}

impl Worker for ParseWorker<'_> {
    fn op(&mut self) -> u64 {
        let i = self.next;
        self.next = if i + 1 == self.trial.entries.len() {
            0
        } else {
            i + 1
        };
        let q = self.trial.entries[i].query;
        let got = parse_fingerprint(self.parser.as_deref(), q);
        self.ops += 1;
        if got != self.trial.expected[i] {
            self.mismatches += 1;
        }
        got
    }

    fn check(&mut self) -> Result<(), String> {
        if self.trial.strategy != Strategy::Tantivy && self.parser.is_none() {
            return Err("worker has no parser".to_string());
        }
        if self.mismatches > 0 {
            return Err(format!(
                "{} of {} parses differed from the verified result",
                self.mismatches, self.ops
            ));
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
            for class in Class::ALL {
                let p = params(strategy, class.id(), "auto");
                let groups = s.groups(&p, 2);
                let trial = s.setup(&p, &groups).unwrap_or_else(|e| panic!("{p}: {e}"));
                let summary = trial.verify().unwrap_or_else(|e| panic!("{p}: {e}"));
                assert!(summary.contains("verified"), "{summary}");
                for index in 0..2 {
                    let mut w = trial.worker("op", index);
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

    #[test]
    fn a_wrong_fingerprint_is_reported() {
        let trial = ParseTrial::new(&params("predictive", "medium", "auto")).expect("setup");
        let broken = ParseTrial {
            expected: trial.expected.iter().map(|f| f + 1).collect(),
            ..trial
        };
        let mut w = broken.worker("op", 0);
        w.op();
        assert!(w.check().is_err());
        drop(w);
        assert!(broken.verify().is_err());
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
