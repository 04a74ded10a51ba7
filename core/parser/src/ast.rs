//! The query tree: the Lucene query types the classic parser builds (`org.apache.lucene.search`).
//!
//! Both parsing strategies build this tree; `render.rs` prints it as `Query.toString(field)` does.

use std::borrow::Cow;

/// A field name, borrowed from the parser's default field or from the query text (owned only
/// when the name had escapes), so building a node costs no allocation and no atomic.
pub type Field<'a> = Cow<'a, str>;

/// Term text, prefix, pattern or range endpoint: borrowed from the query text when unescaping
/// and analysis left it unchanged (the common case), owned otherwise.
pub type Text<'a> = Cow<'a, str>;

/// How a clause takes part in a boolean query (`BooleanClause.Occur`; FILTER is never produced).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Occur {
    /// `+`: must match.
    Must,
    /// No prefix: may match.
    Should,
    /// `-`: must not match.
    MustNot,
}

/// One clause of a [`Query::Boolean`].
#[derive(Debug, Clone, PartialEq)]
pub struct BooleanClause<'a> {
    /// How the clause takes part.
    pub occur: Occur,
    /// The clause's query.
    pub query: Query<'a>,
}

/// A parsed query, one variant per Lucene query class.
#[derive(Debug, Clone, PartialEq)]
pub enum Query<'a> {
    /// `TermQuery`: one analyzed term.
    Term {
        /// The field.
        field: Field<'a>,
        /// The term text.
        text: Text<'a>,
    },
    /// `PhraseQuery`: terms at consecutive positions, with a slop.
    Phrase {
        /// The field.
        field: Field<'a>,
        /// The terms, one per position.
        terms: Vec<Text<'a>>,
        /// Allowed position moves; 0 is an exact phrase.
        slop: i32,
    },
    /// `PrefixQuery`: terms starting with `prefix`.
    Prefix {
        /// The field.
        field: Field<'a>,
        /// The prefix, without the trailing `*`.
        prefix: Text<'a>,
    },
    /// `WildcardQuery`: `*` and `?` pattern (escapes kept, as Lucene keeps them).
    Wildcard {
        /// The field.
        field: Field<'a>,
        /// The pattern.
        pattern: Text<'a>,
    },
    /// `FuzzyQuery`: terms within `max_edits` Levenshtein edits (prefix length 0).
    Fuzzy {
        /// The field.
        field: Field<'a>,
        /// The term text.
        text: Text<'a>,
        /// 0, 1 or 2.
        max_edits: u8,
    },
    /// `RegexpQuery`.
    Regexp {
        /// The field.
        field: Field<'a>,
        /// The pattern between the slashes.
        pattern: Text<'a>,
    },
    /// `TermRangeQuery`; `None` is an open end.
    Range {
        /// The field.
        field: Field<'a>,
        /// The lower bound, `None` for `*`.
        lower: Option<Text<'a>>,
        /// The upper bound, `None` for `*`.
        upper: Option<Text<'a>>,
        /// `[` rather than `{`.
        include_lower: bool,
        /// `]` rather than `}`.
        include_upper: bool,
    },
    /// `MatchAllDocsQuery` (`*:*`).
    MatchAll,
    /// `BooleanQuery`; empty when everything was analyzed away.
    Boolean(Vec<BooleanClause<'a>>),
    /// `BoostQuery`.
    Boost {
        /// The boosted query.
        query: Box<Query<'a>>,
        /// The boost as Java's `Float.parseFloat` read it.
        boost: f32,
    },
}

impl<'a> Query<'a> {
    /// The empty boolean query `parse()` returns when nothing is left after analysis.
    pub fn empty() -> Query<'a> {
        Query::Boolean(Vec::new())
    }

    /// The same tree owning all its strings, free of the parser and the query text.
    pub fn into_owned(self) -> Query<'static> {
        let own = |f: Text<'a>| -> Text<'static> { Cow::Owned(f.into_owned()) };
        match self {
            Query::Term { field, text } => Query::Term {
                field: own(field),
                text: own(text),
            },
            Query::Phrase { field, terms, slop } => Query::Phrase {
                field: own(field),
                terms: terms.into_iter().map(own).collect(),
                slop,
            },
            Query::Prefix { field, prefix } => Query::Prefix {
                field: own(field),
                prefix: own(prefix),
            },
            Query::Wildcard { field, pattern } => Query::Wildcard {
                field: own(field),
                pattern: own(pattern),
            },
            Query::Fuzzy {
                field,
                text,
                max_edits,
            } => Query::Fuzzy {
                field: own(field),
                text: own(text),
                max_edits,
            },
            Query::Regexp { field, pattern } => Query::Regexp {
                field: own(field),
                pattern: own(pattern),
            },
            Query::Range {
                field,
                lower,
                upper,
                include_lower,
                include_upper,
            } => Query::Range {
                field: own(field),
                lower: lower.map(own),
                upper: upper.map(own),
                include_lower,
                include_upper,
            },
            Query::MatchAll => Query::MatchAll,
            Query::Boolean(clauses) => Query::Boolean(
                clauses
                    .into_iter()
                    .map(|c| BooleanClause {
                        occur: c.occur,
                        query: c.query.into_owned(),
                    })
                    .collect(),
            ),
            Query::Boost { query, boost } => Query::Boost {
                query: Box::new(query.into_owned()),
                boost,
            },
        }
    }

    /// Number of nodes in the tree (clauses count their query only): a cheap fingerprint that
    /// benchmarks compare against the verified tree instead of re-rendering every result.
    pub fn node_count(&self) -> usize {
        match self {
            Query::Boolean(clauses) => {
                1 + clauses.iter().map(|c| c.query.node_count()).sum::<usize>()
            }
            Query::Boost { query, .. } => 1 + query.node_count(),
            Query::Phrase { terms, .. } => 1 + terms.len(),
            _ => 1,
        }
    }
}
