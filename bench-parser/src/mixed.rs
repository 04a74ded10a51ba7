//! `parser/mixed_load`: threads parsing one-term queries while others parse complex ones.
//!
//! The blog's load test mixed simple and complicated queries, and with the agent loaded the
//! simple ones slowed down too (seconds instead of < 30 ms). This scenario asks the same of our
//! model: group `simple` cycles through the simple class, group `complex` through the complex
//! class, each thread with its own parser, each result checked as in `parser/parse`. The
//! groups' throughputs are the secondary metrics `group.simple` and `group.complex`.

use critsec_harness::{
    CheckFailed, Choice, GroupSpec, Iterations, ParamSpec, Params, Scenario, ScenarioError, Trial,
    Worker, WorkerSource,
};
use critsec_parser::ParserKind;
use critsec_sync::kind::ids;

use crate::parse::{BacktraceEnv, ParseScenario, ParseTrial};

/// The `parser/mixed_load` scenario.
#[derive(Debug, Default)]
pub struct MixedLoadScenario;

/// The groups: the simple group gets the odd thread.
fn split(threads: usize) -> (usize, usize) {
    (threads - threads / 2, threads / 2)
}

impl Scenario for MixedLoadScenario {
    fn name(&self) -> &'static str {
        "parser/mixed_load"
    }

    fn description(&self) -> &'static str {
        "Half the threads (group simple, the odd one included) parse one-term queries, the others \
         (group complex) complex ones, each thread with its own parser and each result checked \
         against its expected rendering. No lock is taken by our parsers; with backtrace=1 every \
         read past the end of a query (two per one-term parse with the backtracking strategy) \
         captures a backtrace under std's global lock, which both groups share. Needs at least \
         two threads."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::choice(
                "strategy",
                &["backtracking"],
                &ids::<ParserKind>(),
                "our parser (both groups)",
            ),
            ParamSpec::choices(
                "backtrace",
                BacktraceEnv::ALL,
                "RUST_BACKTRACE in the fork (1 = the JDWP analogue)",
            ),
        ]
    }

    fn default_threads(&self) -> Vec<String> {
        vec!["2".to_string()]
    }

    fn groups(&self, _params: &Params, threads: usize) -> Vec<GroupSpec> {
        let (simple, complex) = split(threads);
        vec![
            GroupSpec::new("simple", simple),
            GroupSpec::new("complex", complex),
        ]
    }

    fn fork_env(&self, params: &Params) -> Vec<(String, String)> {
        ParseScenario.fork_env(params)
    }

    fn setup(
        &self,
        params: &Params,
        groups: &[GroupSpec],
    ) -> Result<Box<dyn Trial>, ScenarioError> {
        if groups.iter().any(|g| g.threads == 0) {
            return Err(ScenarioError::Setup(
                "parser/mixed_load needs at least 2 threads (one per group)".to_string(),
            ));
        }
        let class = |class: &str| {
            let mut p = params.clone();
            p.0.insert("class".to_string(), class.to_string());
            p.0.insert("subset".to_string(), "all".to_string());
            ParseTrial::new(&p)
        };
        Ok(Box::new(MixedTrial {
            simple: class("simple")?,
            complex: class("complex")?,
        }))
    }
}

/// The two classes' trials; a worker belongs to one of them by its group.
struct MixedTrial {
    simple: ParseTrial,
    complex: ParseTrial,
}

impl Trial for MixedTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        Ok(format!(
            "simple: {}; complex: {}",
            self.simple.verify()?,
            self.complex.verify()?
        ))
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }
}

impl WorkerSource for MixedTrial {
    fn worker(&self, group: &str, index: usize) -> Box<dyn Worker + '_> {
        if group == "simple" {
            self.simple.worker("op", index)
        } else {
            self.complex.worker("op", index)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::backtrace::{Backtrace, BacktraceStatus};

    #[test]
    fn groups_split_the_threads_and_run_their_classes() {
        let s = MixedLoadScenario;
        let on = Backtrace::capture().status() == BacktraceStatus::Captured;
        let p = Params::from_pairs([
            ("strategy", "backtracking"),
            ("backtrace", if on { "1" } else { "0" }),
        ]);
        assert_eq!(split(3), (2, 1));
        assert!(s.setup(&p, &s.groups(&p, 1)).is_err());
        let trial = s.setup(&p, &s.groups(&p, 2)).expect("setup");
        assert!(
            trial
                .verify()
                .expect("verifies")
                .starts_with("simple: 16 simple")
        );
        for group in ["simple", "complex"] {
            let mut w = trial.expect_workers().worker(group, 0);
            for _ in 0..30 {
                w.op();
            }
            w.check().expect("verified results");
        }
    }
}
