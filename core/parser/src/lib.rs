//! Lucene's classic query syntax (`org.apache.lucene.queryparser.classic`): lexer, query tree,
//! `Query.toString(field)` renderer, and two parsing strategies that build the same tree.
//!
//! Mirrors `QueryParserTokenManager` ([`lexer`]), `QueryParserBase` ([`parser_base`]), the
//! `org.apache.lucene.search` query classes ([`ast`], [`render`]) and Lucene's test analyzers
//! ([`analyzer`]). The subject of the JDWP story is how the generated parser signals lookahead.
//!
//! Known departures from Lucene (each marked `// Deviation:` where it lives): no locale date
//! parsing of range endpoints, no validation of `/regexp/` syntax, a nesting limit of
//! [`parser_base::MAX_DEPTH`] groups, and lexical-error columns taken from the offending character rather than JavaCC's stream state.
//!
//! Strategies, listed by [`ParserKind`] (their ids, and [`ParserKind::build`] to construct one):
//! - [`BacktrackingParser`] (`backtracking`): JavaCC's shape; lookahead success is the one preallocated error value, and each read past the end of the query a fresh one carrying a captured backtrace (Lucene's `FastCharStream`).
//! - [`PredictiveParser`] (`predictive`): single pass, three-token window, no error values on the success path.

#![deny(missing_docs)]

mod analyzer;
mod ast;
mod backtracking_parser;
mod char_stream;
mod error;
mod expected;
mod kind;
mod lexer;
mod options;
mod parser_base;
mod predictive_parser;
mod query_parser;
mod render;

#[cfg(test)]
mod tests;

pub use analyzer::Analyzer;
pub use ast::{BooleanClause, Field, Occur, Query};
pub use backtracking_parser::{BacktrackingParser, LookaheadSuccess};
pub use char_stream::{CharStream, EndChecked, FastCharStream, ReadPastEof};
pub use error::{Cause, ErrorClass, ParseError};
pub use kind::ParserKind;
pub use options::{Operator, OptionsError, ParserOptions};
pub use predictive_parser::PredictiveParser;
pub use query_parser::{ParseStats, QueryParser};
pub use render::java_float_to_string;
