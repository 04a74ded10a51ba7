//! Lucene's classic query syntax (`org.apache.lucene.queryparser.classic`): lexer, query tree,
//! `Query.toString(field)` renderer, and two parsing strategies that build the same tree.
//!
//! Files, one concept each: `lexer.rs` (`QueryParserTokenManager`) over `char_stream.rs`
//! (`FastCharStream`); `grammar.rs` (the token sets at the grammar's choice points and JavaCC's
//! expected-token list); `parser_base.rs` (`QueryParserBase`: what matched tokens mean);
//! `ast.rs` and `render.rs` (the `org.apache.lucene.search` query classes and their
//! `toString`); `java_text.rs` (Java's number text both ways); `analyzer.rs` (Lucene's test
//! analyzers); `error.rs` (`ParseException`/`TokenMgrError` classes); `query_parser.rs` (the
//! strategy trait) and `kind.rs` (its kind enum). The subject of the JDWP story is how the
//! generated parser signals lookahead.
//!
//! Known departures from Lucene (each marked `// Deviation:` where it lives): no locale date
//! parsing of range endpoints, no validation of `/regexp/` syntax, a nesting limit of 100
//! groups, and lexical-error columns taken from the offending character rather than JavaCC's
//! stream state.
//!
//! Strategies, listed by [`ParserKind`] (their ids, and [`ParserKind::build`] to construct one):
//! - [`BacktrackingParser`] (`backtracking`): JavaCC's shape; lookahead success is the one
//!   preallocated error value, and each read past the end of the query a fresh one carrying a
//!   captured backtrace (Lucene's `FastCharStream`).
//! - [`PredictiveParser`] (`predictive`): single pass, three-token window, no error values on
//!   the success path.

#![deny(missing_docs)]

mod analyzer;
mod ast;
mod backtracking_parser;
mod char_stream;
mod error;
mod grammar;
mod java_text;
mod kind;
mod lexer;
mod options;
mod parser_base;
mod predictive_parser;
mod query_parser;
mod render;
mod strategies;

#[cfg(test)]
mod tests;

pub use analyzer::Analyzer;
pub use ast::{BooleanClause, Field, Occur, Query};
pub use backtracking_parser::{BacktrackingParser, LookaheadSuccess};
pub use char_stream::{CharStream, EndChecked, FastCharStream, ReadPastEof};
pub use error::{Cause, ErrorClass, ParseError};
pub use java_text::java_float_to_string;
pub use kind::ParserKind;
pub use options::{Operator, OptionsError, ParserOptions};
pub use predictive_parser::PredictiveParser;
pub use query_parser::{ParseStats, QueryParser};
