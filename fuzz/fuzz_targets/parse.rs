//! Differential fuzz target for the Lucene classic parser: any bytes, any options.
//!
//! The first byte selects the options (analyzer, default operator, leading wildcards, split on
//! whitespace, a tiny clause limit); the rest is the query as lossy UTF-8. Nothing may panic;
//! both strategies must agree (equal trees, or errors of the same class, column and message);
//! errors must point inside the query; the backtracking parser must read past the end at least
//! once whenever it got to the end (every parse that succeeds met `<EOF>`); and a rendering
//! that Lucene's `toString` prints unambiguously must parse back to the same tree.
//!
//! Run from `fuzz/` on the stable toolchain: `RUSTC_BOOTSTRAP=1 cargo fuzz run parse`
//! (cargo-fuzz passes `-Z` flags to rustc; `RUSTC_BOOTSTRAP=1` lets stable accept them).
#![no_main]

use critsec_parser::{
    Analyzer, BacktrackingParser, BooleanClause, Occur, Operator, ParserOptions, PredictiveParser,
    Query, QueryParser,
};
use libfuzzer_sys::fuzz_target;

/// Whether `toString` prints `q` so that parsing the text gives `q` back. Lucene's rendering
/// is not an inverse in general: it adds no escapes (`a\:b` prints `a:b`), Java prints large and
/// tiny boosts in E notation (which the grammar cannot read back), and under the AND default a
/// SHOULD clause prints without the `OR` that made it one, and a boolean of one SHOULD clause
/// prints as that clause. So only texts of `[a-z0-9]` (plus `*`/`?` in wildcard patterns),
/// plainly printed boosts, booleans of several clauses (or one required or prohibited one) and
/// the OR default are checked.
fn renders_unambiguously(q: &Query, opts: &ParserOptions) -> bool {
    let plain = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    match q {
        Query::Term { field, text } | Query::Fuzzy { field, text, .. } => {
            plain(field) && plain(text)
        }
        Query::Prefix { field, prefix } => plain(field) && plain(prefix),
        Query::Wildcard { field, pattern } => {
            plain(field)
                && !pattern.is_empty()
                && pattern
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'*' || b == b'?')
        }
        Query::Phrase { field, terms, .. } => plain(field) && terms.iter().all(|t| plain(t)),
        Query::Range {
            field,
            lower,
            upper,
            ..
        } => {
            plain(field) && lower.as_deref().is_none_or(plain) && upper.as_deref().is_none_or(plain)
        }
        Query::Regexp { .. } => false,
        Query::MatchAll => true,
        // A boolean of one SHOULD clause (left when the first clause was analyzed away, as in
        // Lucene's `Query` production) prints exactly like its clause.
        Query::Boolean(clauses) => {
            opts.default_operator == Operator::Or
                && !matches!(
                    clauses.as_slice(),
                    [] | [BooleanClause {
                        occur: Occur::Should,
                        ..
                    }]
                )
                && clauses
                    .iter()
                    .all(|c| renders_unambiguously(&c.query, opts))
        }
        Query::Boost { query, boost } => {
            (*boost == 0.0 || (1e-3..1e7).contains(boost)) && renders_unambiguously(query, opts)
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let query = String::from_utf8_lossy(rest);
    let opts = ParserOptions {
        analyzer: Analyzer::ALL[usize::from(sel) % Analyzer::ALL.len()],
        default_operator: if sel & 4 != 0 {
            Operator::And
        } else {
            Operator::Or
        },
        allow_leading_wildcard: sel & 8 != 0,
        split_on_whitespace: sel & 16 != 0,
        max_clause_count: if sel & 32 != 0 { 2 } else { 1024 },
        ..ParserOptions::default()
    };
    let backtracking_parser = BacktrackingParser::new(opts.clone());
    let (backtracking, thrown) = backtracking_parser.parse_with_stats(&query);
    let predictive = PredictiveParser::new(opts.clone());
    let result = predictive.parse(&query);
    match (&backtracking, &result) {
        (Ok(b), Ok(p)) => {
            assert_eq!(b, p, "trees differ for {query:?}");
            assert!(
                thrown.read_past_eof >= 1,
                "{query:?}: parsed without meeting <EOF>"
            );
            if renders_unambiguously(p, &opts) {
                let rendering = p.to_string_field(&opts.default_field);
                match predictive.parse(&rendering) {
                    Ok(again) => assert_eq!(&again, p, "{query:?} renders as {rendering:?}"),
                    Err(e) => panic!("{query:?} renders as {rendering:?}, which fails: {e}"),
                }
            }
        }
        (Err(b), Err(p)) => {
            assert_eq!(b.class(), p.class(), "{query:?}: {b} / {p}");
            assert_eq!(b.column(), p.column(), "{query:?}: {b} / {p}");
            assert_eq!(b.to_string(), p.to_string());
            assert!(
                p.column() <= query.encode_utf16().count(),
                "{query:?}: column {} past the end",
                p.column()
            );
        }
        _ => panic!("strategies disagree on {query:?}: {backtracking:?} vs {result:?}"),
    }
});
