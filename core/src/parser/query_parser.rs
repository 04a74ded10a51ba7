//! The strategy trait: text in, a Lucene query tree or a Lucene-classed error out.

use super::ast::Query;
use super::backtracking_parser::BacktrackingParser;
use super::error::ParseError;
use super::options::{OptionsError, ParserOptions};
use super::predictive_parser::PredictiveParser;

/// A classic-syntax query parser.
///
/// Strategies:
/// - [`BacktrackingParser`] (`backtracking`): the shape of Lucene's JavaCC-generated parser, whose
///   syntactic lookahead reports success with an error value carrying a captured backtrace (as
///   JavaCC throws `LookaheadSuccess`); the "before" of the JDWP story.
/// - [`PredictiveParser`] (`predictive`): one pass with at most three tokens of lookahead and no
///   error values on the success path; ours.
///
/// Contract: for the same options both return equal trees for every input and errors of the same
/// class at the same column. Callers may not assume anything about the message's expected-token
/// list beyond its first line. A parser holds no per-parse state, so one instance may serve many
/// threads. Trees borrow the parser's default field, and field names and term text from the
/// query text wherever unescaping and analysis left them unchanged (no reference counts are
/// touched and nothing is copied per node); [`Query::into_owned`] detaches a tree from both.
pub trait QueryParser: Send + Sync {
    /// The strategy's id: its file stem in kebab-case.
    fn id(&self) -> &'static str;

    /// The options the parser was built with.
    fn options(&self) -> &ParserOptions;

    /// Parses one query (Lucene's `QueryParser.parse`). Nothing left after analysis gives the
    /// empty boolean query, which renders as the empty string. The tree may borrow from both the
    /// parser and `query`.
    fn parse<'a>(&'a self, query: &'a str) -> Result<Query<'a>, ParseError>;
}

/// The ids of all strategies.
pub const STRATEGIES: [&str; 2] = ["backtracking", "predictive"];

/// Builds the strategy named `id` with `options`.
pub fn parser_for(id: &str, options: ParserOptions) -> Result<Box<dyn QueryParser>, OptionsError> {
    match id {
        "backtracking" => Ok(Box::new(BacktrackingParser::new(options))),
        "predictive" => Ok(Box::new(PredictiveParser::new(options))),
        _ => Err(OptionsError::UnknownStrategy {
            given: id.to_string(),
            valid: "backtracking, predictive",
        }),
    }
}
