//! Parser settings, with Lucene's defaults (`QueryParserBase` and `IndexSearcher`).

use std::fmt;
use std::str::FromStr;

use super::analyzer::Analyzer;

/// How clauses without an operator combine (`QueryParser.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Operator {
    /// `a b` means `a OR b` (Lucene's default).
    #[default]
    Or,
    /// `a b` means `a AND b`.
    And,
}

impl Operator {
    /// The operator's name on the command line.
    pub fn id(self) -> &'static str {
        match self {
            Operator::Or => "or",
            Operator::And => "and",
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Operator {
    type Err = OptionsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "or" => Ok(Operator::Or),
            "and" => Ok(Operator::And),
            _ => Err(OptionsError::UnknownOperator {
                given: s.to_string(),
                valid: "or, and",
            }),
        }
    }
}

/// A setting that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// The analyzer name is not one of the three this crate implements.
    #[error("unknown analyzer `{given}`; valid: {valid}")]
    UnknownAnalyzer {
        /// The name given.
        given: String,
        /// The accepted names.
        valid: &'static str,
    },
    /// The default operator is neither `or` nor `and`.
    #[error("unknown default operator `{given}`; valid: {valid}")]
    UnknownOperator {
        /// The name given.
        given: String,
        /// The accepted names.
        valid: &'static str,
    },
}

/// Everything that changes how a query text is read. Defaults are Lucene's, except that Lucene has
/// no default field or analyzer: we take the ones Lucene's own parser tests use (`field`, `simple`).
#[derive(Debug, Clone, PartialEq)]
pub struct ParserOptions {
    /// Field of clauses without a `field:` prefix (the `QueryParser` constructor argument).
    pub default_field: String,
    /// How clauses without an operator combine (`setDefaultOperator`, default OR).
    pub default_operator: Operator,
    /// The analyzer for terms and phrases (`normalize()` for multi-term queries).
    pub analyzer: Analyzer,
    /// Accept `*` or `?` as the first character of wildcard and prefix terms (default false).
    pub allow_leading_wildcard: bool,
    /// Analyze each bare term alone rather than runs of terms together (default false since 7.0).
    pub split_on_whitespace: bool,
    /// Slop of phrases without `~N` (`setPhraseSlop`, default 0).
    pub phrase_slop: i32,
    /// Most clauses one boolean query may hold (`IndexSearcher.maxClauseCount`, default 1024).
    pub max_clause_count: usize,
    /// Similarity for `term~` without a number (`fuzzyMinSim`, default 2.0 = two edits).
    pub fuzzy_min_sim: f32,
}

impl Default for ParserOptions {
    fn default() -> Self {
        ParserOptions {
            default_field: "field".to_string(),
            default_operator: Operator::Or,
            analyzer: Analyzer::Simple,
            allow_leading_wildcard: false,
            split_on_whitespace: false,
            phrase_slop: 0,
            max_clause_count: 1024,
            fuzzy_min_sim: 2.0,
        }
    }
}
