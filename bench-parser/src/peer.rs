//! tantivy's query grammar as the peer: whether its tree means what ours means.
//!
//! The shared subset of the corpus is the queries whose meaning both grammars agree on (research
//! file, section 8). [`means_the_same`] checks that node by node at setup: same boolean
//! structure and occurs (tantivy's "no operator" is SHOULD under Lucene's default OR), same
//! leaves (terms, phrases with their slop, ranges with their bounds), same boosts. The tree that
//! passes becomes the expected tree every tantivy parse of the benchmark is compared with.

use critsec_parser::{Occur, Query};
use tantivy_query_grammar::{
    Delimiter, Occur as PeerOccur, UserInputAst, UserInputBound, UserInputLeaf, UserInputLiteral,
};

/// Whether tantivy's `peer` means what our `ours` means, `default_field` being the field our
/// parser put on unprefixed terms (tantivy leaves them without a field).
pub fn means_the_same(ours: &Query, peer: &UserInputAst, default_field: &str) -> bool {
    match (ours, peer) {
        (Query::Boolean(clauses), UserInputAst::Clause(peers)) => {
            clauses.len() == peers.len()
                && clauses.iter().zip(peers).all(|(c, (occur, p))| {
                    same_occur(c.occur, *occur) && means_the_same(&c.query, p, default_field)
                })
        }
        (Query::Boost { query, boost }, UserInputAst::Boost(p, b)) => {
            f64::from(*boost) == b.0 && means_the_same(query, p, default_field)
        }
        (_, UserInputAst::Leaf(leaf)) => same_leaf(ours, leaf, default_field),
        _ => false,
    }
}

fn same_occur(ours: Occur, peer: Option<PeerOccur>) -> bool {
    matches!(
        (ours, peer),
        (Occur::Should, None | Some(PeerOccur::Should))
            | (Occur::Must, Some(PeerOccur::Must))
            | (Occur::MustNot, Some(PeerOccur::MustNot))
    )
}

fn same_field(ours: &str, peer: Option<&str>, default_field: &str) -> bool {
    match peer {
        Some(p) => p == ours,
        None => ours == default_field,
    }
}

fn same_leaf(ours: &Query, peer: &UserInputLeaf, default_field: &str) -> bool {
    let literal = |l: &UserInputLiteral, field: &str, phrase: &str, delimiter, slop| {
        same_field(field, l.field_name.as_deref(), default_field)
            && l.phrase == phrase
            && l.delimiter == delimiter
            && l.slop == slop
            && !l.prefix
    };
    match (ours, peer) {
        (Query::Term { field, text }, UserInputLeaf::Literal(l)) => {
            literal(l, field, text, Delimiter::None, 0)
        }
        (Query::Phrase { field, terms, slop }, UserInputLeaf::Literal(l)) => u32::try_from(*slop)
            .is_ok_and(|slop| literal(l, field, &terms.join(" "), Delimiter::DoubleQuotes, slop)),
        (
            Query::Range {
                field,
                lower,
                upper,
                include_lower,
                include_upper,
            },
            UserInputLeaf::Range {
                field: peer_field,
                lower: peer_lower,
                upper: peer_upper,
            },
        ) => {
            let bound = |ours: &Option<_>, inclusive: bool, peer: &UserInputBound| match (
                ours.as_deref(),
                peer,
            ) {
                (None, UserInputBound::Unbounded) => true,
                (Some(t), UserInputBound::Inclusive(p)) => inclusive && t == p,
                (Some(t), UserInputBound::Exclusive(p)) => !inclusive && t == p,
                _ => false,
            };
            same_field(field, peer_field.as_deref(), default_field)
                && bound(lower, *include_lower, peer_lower)
                && bound(upper, *include_upper, peer_upper)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_parser::{PredictiveParser, QueryParser};
    use tantivy_query_grammar::parse_query;

    /// Our tree of `ours` against tantivy's of `peer`.
    fn same(ours: &str, peer: &str) -> bool {
        let p = PredictiveParser::new(crate::corpus::options());
        let tree = p.parse(ours).expect("ours parses");
        let ast = parse_query(peer).expect("tantivy parses");
        means_the_same(&tree, &ast, &p.options().default_field)
    }

    #[test]
    fn agreeing_trees_pass() {
        for q in [
            "title:solr AND body:lucene",
            "(a OR b)^2 c:[x TO *]",
            "\"a b\"~3 -c +d:{1 TO 2]",
        ] {
            assert!(same(q, q), "{q}");
        }
    }

    #[test]
    fn every_difference_fails() {
        // tantivy's AND binds tighter than OR; Lucene has no precedence (`a +b +c`).
        assert!(!same("a OR b AND c", "a OR b AND c"));
        for (ours, peer) in [
            ("\"a b\"~3", "\"a b\"~2"),
            ("a b^2", "a b^3"),
            ("a:[x TO y]", "a:{x TO y]"),
            ("f:a", "g:a"),
            ("a", "f:a"),
            ("+a b", "a b"),
            ("a -b", "a +b"),
            ("a b", "a b c"),
            ("a", "b"),
        ] {
            assert!(!same(ours, peer), "{ours} vs {peer}");
        }
    }
}
