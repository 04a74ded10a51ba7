//! The parsing strategies by kind: each parser's id and how to build it.

use critsec_sync::kind::StrategyKind;

use crate::backtracking_parser::BacktrackingParser;
use crate::options::ParserOptions;
use crate::predictive_parser::PredictiveParser;
use crate::query_parser::QueryParser;

/// The parsing strategies, as the command line and benchmark parameters name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParserKind {
    /// [`BacktrackingParser`]: JavaCC's shape.
    Backtracking,
    /// [`PredictiveParser`]: ours.
    Predictive,
}

impl StrategyKind for ParserKind {
    const ALL: &'static [Self] = &[ParserKind::Backtracking, ParserKind::Predictive];

    fn id(self) -> &'static str {
        match self {
            ParserKind::Backtracking => "backtracking",
            ParserKind::Predictive => "predictive",
        }
    }
}

impl ParserKind {
    /// A parser of this strategy with `options`.
    pub fn build(self, options: ParserOptions) -> Box<dyn QueryParser> {
        match self {
            ParserKind::Backtracking => Box::new(BacktrackingParser::new(options)),
            ParserKind::Predictive => Box::new(PredictiveParser::new(options)),
        }
    }
}

critsec_sync::strategy_kind_text!(ParserKind);

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_sync::kind::ids;

    #[test]
    fn strategies_are_built_by_id() {
        for &kind in ParserKind::ALL {
            assert_eq!(kind.build(ParserOptions::default()).id(), kind.id());
            assert_eq!(kind.id().parse::<ParserKind>(), Ok(kind));
            assert_eq!(kind.to_string(), kind.id());
        }
        assert_eq!(ids::<ParserKind>(), ["backtracking", "predictive"]);
        let e = "lalr".parse::<ParserKind>().unwrap_err();
        assert_eq!(
            (e.given.as_str(), e.valid.as_str()),
            ("lalr", "backtracking, predictive")
        );
    }
}
