//! Fuzz target for the Lucene classic parser: any bytes, any options.
//!
//! The first byte selects the options (analyzer, default operator, leading wildcards, split on
//! whitespace, a tiny clause limit); the rest is the query as lossy UTF-8. Both strategies must
//! not panic, must agree (equal trees, or errors of the same class, column and message), errors
//! must point inside the query, and a rendering must itself parse without panicking.
//! Run with `cargo +nightly fuzz run parse` from the repository root.
#![no_main]

use critsec_core::parser::{Analyzer, BacktrackingParser, Operator, ParserOptions, PredictiveParser, QueryParser};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let query = String::from_utf8_lossy(rest);
    let opts = ParserOptions {
        analyzer: Analyzer::ALL[usize::from(sel) % Analyzer::ALL.len()],
        default_operator: if sel & 4 != 0 { Operator::And } else { Operator::Or },
        allow_leading_wildcard: sel & 8 != 0,
        split_on_whitespace: sel & 16 != 0,
        max_clause_count: if sel & 32 != 0 { 2 } else { 1024 },
        ..ParserOptions::default()
    };
    let backtracking_parser = BacktrackingParser::new(opts.clone());
    let backtracking = backtracking_parser.parse(&query);
    let predictive = PredictiveParser::new(opts.clone());
    let result = predictive.parse(&query);
    match (&backtracking, &result) {
        (Ok(b), Ok(p)) => {
            assert_eq!(b, p, "trees differ for {query:?}");
            let rendering = p.to_string_field(&opts.default_field);
            let _ = predictive.parse(&rendering);
        }
        (Err(b), Err(p)) => {
            assert_eq!(b.class(), p.class(), "{query:?}: {b} / {p}");
            assert_eq!(b.column(), p.column(), "{query:?}: {b} / {p}");
            assert_eq!(b.to_string(), p.to_string());
            assert!(p.column() <= query.encode_utf16().count(), "{query:?}: column {} past the end", p.column());
        }
        _ => panic!("strategies disagree on {query:?}: {backtracking:?} vs {result:?}"),
    }
});
