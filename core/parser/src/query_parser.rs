//! The strategy trait: text in, a Lucene query tree or a Lucene-classed error out.

use super::ast::Query;
use super::error::ParseError;
use super::options::ParserOptions;

/// A classic-syntax query parser.
///
/// Strategies:
/// - [`BacktrackingParser`](crate::BacktrackingParser) (`backtracking`): the shape of Lucene's
///   JavaCC-generated parser, whose
///   syntactic lookahead reports success with a preallocated error value (as JavaCC throws its
///   static `LookaheadSuccess`) and whose char stream reports the end of input with a fresh one
///   carrying a captured backtrace (as `FastCharStream` throws `IOException`); the "before" of
///   the JDWP story.
/// - [`PredictiveParser`](crate::PredictiveParser) (`predictive`): one pass with at most three
///   tokens of lookahead and no
///   error values on the success path; ours.
///
/// Contract: for the same options both return equal trees for every input and errors of the same
/// class at the same column. Callers may not assume anything about the message's expected-token
/// list beyond its first line. A parser holds no per-parse state, so one instance may serve many
/// threads. Trees borrow the parser's default field, and field names and term text from the
/// query text wherever unescaping and analysis left them unchanged (no reference counts are
/// touched and nothing is copied per node); [`Query::into_owned`] detaches a tree from both.
pub trait QueryParser: Send + Sync {
    /// The strategy's id, its [`ParserKind`](crate::ParserKind)'s (the file stem in kebab-case).
    fn id(&self) -> &'static str;

    /// The options the parser was built with.
    fn options(&self) -> &ParserOptions;

    /// Parses one query (Lucene's `QueryParser.parse`). Nothing left after analysis gives the
    /// empty boolean query, which renders as the empty string. The tree may borrow from both the
    /// parser and `query`.
    fn parse<'a>(&'a self, query: &'a str) -> Result<Query<'a>, ParseError>;

    /// [`QueryParser::parse`], also reporting what the parse threw; a strategy that throws
    /// nothing reports zeros. (The benchmark's secondary metrics come from here.)
    fn parse_with_stats<'a>(
        &'a self,
        query: &'a str,
    ) -> (Result<Query<'a>, ParseError>, ParseStats) {
        (self.parse(query), ParseStats::default())
    }
}

/// What one parse threw, and how often it looked ahead, to compare with the instrumented
/// Lucene runs of the research files (counts per parse of both exception kinds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseStats {
    /// `jj_2_*` calls.
    pub calls: u32,
    /// Lookaheads that ended in a `LookaheadSuccess` (the preallocated value, nothing captured),
    /// including those re-run while reporting a syntax error.
    pub successes: u32,
    /// Lookaheads re-run by `jj_rescan_token` while reporting a syntax error.
    pub rescans: u32,
    /// Reads past the end of the query: fresh `IOException("read past eof")` values (each a
    /// backtrace capture), raised by the char stream and caught by the token manager.
    pub read_past_eof: u32,
}
