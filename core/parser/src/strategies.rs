//! One parser of each kind: the one place that names every parsing strategy's type, so that the
//! kind enum stays a leaf the parsers can name themselves by.

use crate::backtracking_parser::BacktrackingParser;
use crate::kind::ParserKind;
use crate::options::ParserOptions;
use crate::predictive_parser::PredictiveParser;
use crate::query_parser::QueryParser;

impl ParserKind {
    /// A parser of this strategy with `options`.
    pub fn build(self, options: ParserOptions) -> Box<dyn QueryParser> {
        match self {
            ParserKind::Backtracking => Box::new(BacktrackingParser::new(options)),
            ParserKind::Predictive => Box::new(PredictiveParser::new(options)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_sync::kind::StrategyKind;
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
