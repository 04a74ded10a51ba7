//! Mutation test of the parse scenario's check: a parser that renders one clause
//! wrong (the first clause of every boolean query loses its `+`/`-`, as a parser that dropped
//! the operator would give) must fail `check_expect`, the corpus check `ParseTrial::verify` runs
//! over both strategies. A check that passes it checks nothing.

use super::*;
use critsec_parser::{BooleanClause, Occur, PredictiveParser};

/// The first clause of the outermost boolean query with an operator, made optional.
fn break_one_clause(q: &mut Query) -> bool {
    match q {
        Query::Boolean(clauses) => {
            if let Some(BooleanClause { occur, .. }) =
                clauses.iter_mut().find(|c| c.occur != Occur::Should)
            {
                *occur = Occur::Should;
                return true;
            }
            clauses.iter_mut().any(|c| break_one_clause(&mut c.query))
        }
        Query::Boost { query, .. } => break_one_clause(query),
        _ => false,
    }
}

#[test]
fn a_parser_rendering_one_clause_wrong_fails_the_corpus_check() {
    let opts = corpus::options();
    let parser = PredictiveParser::new(opts.clone());
    let (mut broken, mut caught) = (0, 0);
    for &class in Class::ALL {
        for e in corpus::entries(class, false) {
            let mut r = parser.parse(e.query);
            check_expect(&e, &r, &opts.default_field).expect("the real parser passes");
            if let Ok(q) = &mut r
                && break_one_clause(q)
            {
                broken += 1;
                caught += usize::from(check_expect(&e, &r, &opts.default_field).is_err());
            }
        }
    }
    assert!(
        broken > 10,
        "only {broken} queries have an operator to break"
    );
    assert_eq!(
        caught, broken,
        "a rendering with one clause wrong passed the check"
    );
}
