//! What both strategies share: Lucene's `QueryParserBase`, the part of the classic parser that
//! turns matched tokens into queries (escapes, analysis, wildcard and fuzzy rules, `addClause`).
//!
//! The strategies differ only in how they recognise the grammar; every decision about what a
//! token means lives here, so both produce the same tree by construction.

use std::borrow::Cow;

use super::ast::{BooleanClause, Field, Occur, Query, Text};
use super::error::{Cause, ParseError};
use super::java_text::java_parse_float;
use super::lexer::{Token, TokenKind};
use super::options::{Operator, ParserOptions};

/// The conjunction before a clause (`CONJ_NONE`, `CONJ_AND`, `CONJ_OR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conj {
    /// No `AND`/`OR`.
    None,
    /// `AND` or `&&`.
    And,
    /// `OR` or `||`.
    Or,
}

/// The modifier before a clause (`MOD_NONE`, `MOD_REQ`, `MOD_NOT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mods {
    /// Nothing.
    None,
    /// `+`.
    Req,
    /// `-`, `!` or `NOT`.
    Not,
}

/// Deepest nesting of parenthesised groups accepted.
// Deviation: Lucene has no limit and fails with a StackOverflowError on very deep nesting; we
// refuse beyond this depth with a runtime-class error so no input can overflow our stack.
pub const MAX_DEPTH: usize = 100;

/// The clause list of one `Query` production. It holds a single clause inline, so the common
/// one-clause query (and every one-clause group) allocates no vector.
#[derive(Debug, Default)]
pub enum Clauses<'a> {
    /// No clause yet.
    #[default]
    Empty,
    /// Exactly one clause.
    One(BooleanClause<'a>),
    /// Two or more clauses.
    Many(Vec<BooleanClause<'a>>),
}

impl<'a> Clauses<'a> {
    /// Number of clauses.
    pub fn len(&self) -> usize {
        match self {
            Clauses::Empty => 0,
            Clauses::One(_) => 1,
            Clauses::Many(v) => v.len(),
        }
    }

    /// Whether there is no clause.
    pub fn is_empty(&self) -> bool {
        matches!(self, Clauses::Empty)
    }

    /// The last clause added.
    pub fn last_mut(&mut self) -> Option<&mut BooleanClause<'a>> {
        match self {
            Clauses::Empty => None,
            Clauses::One(c) => Some(c),
            Clauses::Many(v) => v.last_mut(),
        }
    }

    /// Appends a clause.
    pub fn push(&mut self, c: BooleanClause<'a>) {
        match self {
            Clauses::Empty => *self = Clauses::One(c),
            Clauses::One(_) => {
                let Clauses::One(first) = std::mem::take(self) else {
                    return;
                };
                let mut v = Vec::with_capacity(4);
                v.push(first);
                v.push(c);
                *self = Clauses::Many(v);
            }
            Clauses::Many(v) => v.push(c),
        }
    }

    /// The clauses as a vector.
    pub fn into_vec(self) -> Vec<BooleanClause<'a>> {
        match self {
            Clauses::Empty => Vec::new(),
            Clauses::One(c) => vec![c],
            Clauses::Many(v) => v,
        }
    }

    /// The query of the only clause, if there is exactly one.
    pub fn into_single(self) -> Option<Query<'a>> {
        match self {
            Clauses::One(c) => Some(c.query),
            Clauses::Many(mut v) if v.len() == 1 => v.pop().map(|c| c.query),
            _ => None,
        }
    }
}

impl<'a> Extend<BooleanClause<'a>> for Clauses<'a> {
    fn extend<I: IntoIterator<Item = BooleanClause<'a>>>(&mut self, iter: I) {
        for c in iter {
            self.push(c);
        }
    }
}

/// Lucene's `QueryParserBase`, bound to one set of options.
#[derive(Debug, Clone)]
pub struct ParserBase {
    opts: ParserOptions,
}

impl ParserBase {
    /// A base for `opts`.
    pub fn new(opts: ParserOptions) -> Self {
        ParserBase { opts }
    }

    /// The options.
    pub fn options(&self) -> &ParserOptions {
        &self.opts
    }

    /// The default field, borrowed by the nodes of every tree this base builds.
    pub fn default_field(&self) -> Field<'_> {
        Field::Borrowed(&self.opts.default_field)
    }

    /// The field named by a `TERM :` or `* :` prefix.
    pub fn field_of<'a>(&self, q: &str, tok: Token<'a>) -> Result<Field<'a>, ParseError> {
        if tok.kind == TokenKind::Star {
            Ok(Field::Borrowed("*"))
        } else {
            discard_escape_char(q, tok.image, tok.start)
        }
    }

    /// `addClause`: applies the conjunction to the previous clause, then adds `q` (if any) with
    /// the occur its modifier and conjunction give under the default operator.
    pub fn add_clause<'a>(
        &self,
        clauses: &mut Clauses<'a>,
        conj: Conj,
        mods: Mods,
        q: Option<Query<'a>>,
    ) {
        if let Some(last) = clauses.last_mut() {
            if last.occur != Occur::MustNot {
                if conj == Conj::And {
                    last.occur = Occur::Must;
                }
                if self.opts.default_operator == Operator::And && conj == Conj::Or {
                    last.occur = Occur::Should;
                }
            }
        }
        let Some(q) = q else { return };
        let prohibited = mods == Mods::Not;
        let required = match self.opts.default_operator {
            Operator::Or => mods == Mods::Req || (conj == Conj::And && !prohibited),
            Operator::And => !prohibited && conj != Conj::Or,
        };
        let occur = if prohibited {
            Occur::MustNot
        } else if required {
            Occur::Must
        } else {
            Occur::Should
        };
        clauses.push(BooleanClause { occur, query: q });
    }

    fn operator_occur(&self) -> Occur {
        match self.opts.default_operator {
            Operator::Or => Occur::Should,
            Operator::And => Occur::Must,
        }
    }

    /// `addMultiTermClauses`: splices an analyzed run of bare terms into the clause list.
    pub fn add_multi_term_clauses<'a>(&self, clauses: &mut Clauses<'a>, q: Option<Query<'a>>) {
        match q {
            None => {}
            Some(Query::Boolean(cs))
                if cs.iter().all(|c| matches!(c.query, Query::Term { .. })) =>
            {
                clauses.extend(cs);
            }
            Some(Query::Boolean(cs)) => {
                let occur = self.operator_occur();
                clauses.extend(cs.into_iter().map(|c| BooleanClause {
                    occur,
                    query: c.query,
                }));
            }
            Some(q) => clauses.push(BooleanClause {
                occur: self.operator_occur(),
                query: q,
            }),
        }
    }

    /// `getBooleanQuery`: `None` for no clauses; fails beyond the maximum clause count.
    pub fn boolean_query<'a>(
        &self,
        q: &str,
        pos: usize,
        clauses: Clauses<'a>,
    ) -> Result<Option<Query<'a>>, ParseError> {
        if clauses.is_empty() {
            return Ok(None);
        }
        self.check_clause_count(q, pos, clauses.len())?;
        Ok(Some(Query::Boolean(clauses.into_vec())))
    }

    fn check_clause_count(&self, q: &str, pos: usize, n: usize) -> Result<(), ParseError> {
        if n > self.opts.max_clause_count {
            return Err(ParseError::new(
                q,
                pos,
                Cause::TooManyClauses {
                    max: self.opts.max_clause_count,
                },
            ));
        }
        Ok(())
    }

    /// `getFieldQuery` / `createFieldQuery`: analyzes `text` into nothing, a term, a boolean of
    /// terms (unquoted) or a phrase (quoted, with `slop`). Terms borrow from `text` when it is
    /// borrowed and analysis leaves them unchanged.
    pub fn field_query<'a>(
        &self,
        q: &str,
        pos: usize,
        field: &Field<'a>,
        text: Text<'a>,
        quoted: bool,
        slop: i32,
    ) -> Result<Option<Query<'a>>, ParseError> {
        let analyzer = self.opts.analyzer;
        match analyzer.single_token(&text) {
            Some(false) => {
                return Ok(Some(Query::Term {
                    field: field.clone(),
                    text,
                }));
            }
            Some(true) => {
                return Ok(Some(Query::Term {
                    field: field.clone(),
                    text: analyzer.normalize_text(text),
                }));
            }
            None => {}
        }
        match text {
            Cow::Borrowed(s) => {
                self.analyzed_query(q, pos, field, analyzer.tokens(s), quoted, slop)
            }
            Cow::Owned(s) => {
                let tokens = analyzer.tokens(&s).map(|t| Cow::Owned(t.into_owned()));
                self.analyzed_query(q, pos, field, tokens, quoted, slop)
            }
        }
    }

    /// The query of an analyzed token stream (the second half of `createFieldQuery`).
    fn analyzed_query<'a>(
        &self,
        q: &str,
        pos: usize,
        field: &Field<'a>,
        mut tokens: impl Iterator<Item = Text<'a>>,
        quoted: bool,
        slop: i32,
    ) -> Result<Option<Query<'a>>, ParseError> {
        let Some(first) = tokens.next() else {
            return Ok(None);
        };
        let Some(second) = tokens.next() else {
            return Ok(Some(Query::Term {
                field: field.clone(),
                text: first,
            }));
        };
        if quoted {
            if slop < 0 {
                return Err(ParseError::new(q, pos, Cause::NegativeSlop { slop }));
            }
            let mut terms = vec![first, second];
            terms.extend(tokens);
            Ok(Some(Query::Phrase {
                field: field.clone(),
                terms,
                slop,
            }))
        } else {
            let occur = self.operator_occur();
            let term = |text: Text<'a>| BooleanClause {
                occur,
                query: Query::Term {
                    field: field.clone(),
                    text,
                },
            };
            let mut clauses = vec![term(first), term(second)];
            clauses.extend(tokens.map(term));
            self.check_clause_count(q, pos, clauses.len())?;
            Ok(Some(Query::Boolean(clauses)))
        }
    }

    /// `handleBareTokenQuery` for TERM, STAR, PREFIXTERM, WILDTERM, REGEXPTERM, NUMBER and
    /// BAREOPER tokens, with the optional `~slop` that followed.
    pub fn bare_token_query<'a>(
        &self,
        q: &str,
        field: &Field<'a>,
        term: Token<'a>,
        fuzzy_slop: Option<Token<'_>>,
    ) -> Result<Option<Query<'a>>, ParseError> {
        let image = if term.kind == TokenKind::BareOper {
            &term.image[..1]
        } else {
            term.image
        };
        let pos = term.start;
        // Lucene unescapes first whatever the kind, so a bad escape fails even in a regexp.
        let term_image = discard_escape_char(q, image, pos)?;
        match term.kind {
            TokenKind::Star | TokenKind::WildTerm => {
                self.wildcard_query(q, pos, field, image).map(Some)
            }
            TokenKind::PrefixTerm => {
                let prefix = discard_escape_char(q, &image[..image.len() - 1], pos)?;
                if !self.opts.allow_leading_wildcard && prefix.starts_with('*') {
                    return Err(ParseError::new(
                        q,
                        pos,
                        Cause::LeadingPrefixStar {
                            term: prefix.into_owned(),
                        },
                    ));
                }
                let prefix = self.opts.analyzer.normalize_text(prefix);
                Ok(Some(Query::Prefix {
                    field: field.clone(),
                    prefix,
                }))
            }
            TokenKind::RegexpTerm => {
                // Deviation: Lucene's RegexpQuery constructor parses the pattern and an invalid
                // one (`/a[/`) escapes parse() as an IllegalArgumentException; we do not validate
                // regular expressions, so such queries parse here.
                let pattern = self.opts.analyzer.normalize(&image[1..image.len() - 1]);
                Ok(Some(Query::Regexp {
                    field: field.clone(),
                    pattern,
                }))
            }
            _ => match fuzzy_slop {
                Some(slop) => self.fuzzy_query(q, pos, field, slop, term_image).map(Some),
                None => self.field_query(q, pos, field, term_image, false, 0),
            },
        }
    }

    fn wildcard_query<'a>(
        &self,
        q: &str,
        pos: usize,
        field: &Field<'a>,
        text: &str,
    ) -> Result<Query<'a>, ParseError> {
        if field.as_ref() == "*" && text == "*" {
            return Ok(Query::MatchAll);
        }
        if !self.opts.allow_leading_wildcard && (text.starts_with('*') || text.starts_with('?')) {
            return Err(ParseError::new(
                q,
                pos,
                Cause::LeadingWildcard {
                    term: text.to_string(),
                },
            ));
        }
        Ok(Query::Wildcard {
            field: field.clone(),
            pattern: Cow::Owned(self.analyze_wildcard(text)),
        })
    }

    /// `analyzeWildcard`: normalizes the text between wildcard runs and escape pairs, which are
    /// copied raw (so escapes survive in wildcard patterns, as in Lucene).
    fn analyze_wildcard(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars().peekable();
        let mut chunk = String::new();
        while let Some(c) = chars.next() {
            let escape_pair = c == '\\'
                && chars.peek().is_some_and(|n| {
                    !matches!(n, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
                });
            if escape_pair || c == '*' || c == '?' {
                if !chunk.is_empty() {
                    out.push_str(&self.opts.analyzer.normalize(&chunk));
                    chunk.clear();
                }
                out.push(c);
                if escape_pair {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
            } else {
                chunk.push(c);
            }
        }
        if !chunk.is_empty() {
            out.push_str(&self.opts.analyzer.normalize(&chunk));
        }
        out
    }

    /// `handleBareFuzzy` + `getFuzzyQuery`: similarity checks, normalization, edit distance.
    fn fuzzy_query<'a>(
        &self,
        q: &str,
        pos: usize,
        field: &Field<'a>,
        slop: Token<'_>,
        text: Text<'a>,
    ) -> Result<Query<'a>, ParseError> {
        let raw = &slop.image[1..];
        let fms = java_parse_float(raw).unwrap_or(self.opts.fuzzy_min_sim);
        if fms < 0.0 {
            return Err(ParseError::new(
                q,
                pos,
                Cause::NegativeSimilarity {
                    slop: raw.to_string(),
                },
            ));
        }
        if fms >= 1.0 && fms != (fms as i32) as f32 {
            return Err(ParseError::new(
                q,
                pos,
                Cause::FractionalEdits {
                    slop: raw.to_string(),
                },
            ));
        }
        let text = self.opts.analyzer.normalize_text(text);
        let max_edits = float_to_edits(fms, text.chars().count());
        Ok(Query::Fuzzy {
            field: field.clone(),
            text,
            max_edits,
        })
    }

    /// `handleQuotedTerm`: a phrase with the slop `~N` gives (`(int) Float.parseFloat`), or the
    /// default phrase slop when `N` does not parse.
    pub fn quoted_query<'a>(
        &self,
        q: &str,
        field: &Field<'a>,
        term: Token<'a>,
        fuzzy_slop: Option<Token<'_>>,
    ) -> Result<Option<Query<'a>>, ParseError> {
        let slop = fuzzy_slop
            .and_then(|s| java_parse_float(&s.image[1..]))
            .map_or(self.opts.phrase_slop, |f| f as i32);
        let inner = &term.image[1..term.image.len() - 1];
        let text = discard_escape_char(q, inner, term.start)?;
        self.field_query(q, term.start, field, text, true, slop)
    }

    /// The range part of `Term`: quotes stripped, unquoted `*` open, unescaped, normalized.
    pub fn range_query<'a>(
        &self,
        q: &str,
        field: &Field<'a>,
        start: Token<'_>,
        lower: Token<'a>,
        upper: Token<'a>,
        end: Token<'_>,
    ) -> Result<Option<Query<'a>>, ParseError> {
        // Deviation: Lucene first tries to read both endpoints as locale-dependent SHORT dates;
        // we never do (no conformance row depends on it).
        let endpoint = |t: Token<'a>| -> Result<Option<Text<'a>>, ParseError> {
            let raw = if t.kind == TokenKind::RangeQuoted {
                &t.image[1..t.image.len() - 1]
            } else if t.image == "*" {
                return Ok(None);
            } else {
                t.image
            };
            let text = discard_escape_char(q, raw, t.start)?;
            Ok(Some(self.opts.analyzer.normalize_text(text)))
        };
        let lower = endpoint(lower)?;
        let upper = endpoint(upper)?;
        Ok(Some(Query::Range {
            field: field.clone(),
            lower,
            upper,
            include_lower: start.kind == TokenKind::RangeInStart,
            include_upper: end.kind == TokenKind::RangeInEnd,
        }))
    }
}

/// `handleBoost`: wraps a non-null query in a boost read by `Float.parseFloat`.
#[inline]
pub fn handle_boost<'a>(q: Option<Query<'a>>, boost: Option<Token<'_>>) -> Option<Query<'a>> {
    let Some(boost) = boost else { return q };
    boosted(q, boost)
}

/// The boosting half of [`handle_boost`], out of line so the common unboosted clause stays small.
fn boosted<'a>(q: Option<Query<'a>>, boost: Token<'_>) -> Option<Query<'a>> {
    match (q, Some(boost)) {
        (Some(q), Some(b)) => {
            let boost = b.image.parse::<f32>().unwrap_or(1.0);
            Some(Query::Boost {
                query: Box::new(q),
                boost,
            })
        }
        (q, _) => q,
    }
}

/// `FuzzyQuery.floatToEdits`.
pub fn float_to_edits(min_sim: f32, term_len: usize) -> u8 {
    if min_sim >= 1.0 {
        min_sim.min(2.0) as u8
    } else if min_sim == 0.0 {
        0
    } else {
        // Double arithmetic on the float, then Java's saturating (int) cast (NaN gives 0).
        (((1.0 - min_sim as f64) * term_len as f64) as i32).clamp(0, 2) as u8
    }
}

/// `discardEscapeChar`: removes backslashes and decodes `\uXXXX` (UTF-16 units, so surrogate
/// pairs combine). Borrows when there is nothing to unescape.
#[inline(always)]
pub fn discard_escape_char<'t>(
    q: &str,
    input: &'t str,
    pos: usize,
) -> Result<Cow<'t, str>, ParseError> {
    // A plain loop: tokens are short, and a memchr call costs more than it saves on them.
    if !input.bytes().any(|b| b == b'\\') {
        return Ok(Cow::Borrowed(input));
    }
    unescape(q, input, pos).map(Cow::Owned)
}

/// The copying half of [`discard_escape_char`], for text that holds a backslash.
fn unescape(q: &str, input: &str, pos: usize) -> Result<String, ParseError> {
    let mut out: Vec<u16> = Vec::with_capacity(input.len());
    let mut last_was_escape = false;
    let mut multiplier = 0u32;
    let mut code_point = 0u32;
    let mut buf = [0u16; 2];
    for c in input.chars() {
        if multiplier > 0 {
            let Some(d) = c.to_digit(16) else {
                return Err(ParseError::new(q, pos, Cause::NonHex { ch: c }));
            };
            code_point += d * multiplier;
            multiplier >>= 4;
            if multiplier == 0 {
                out.push(code_point as u16);
                code_point = 0;
            }
        } else if last_was_escape {
            if c == 'u' {
                multiplier = 16 * 16 * 16;
            } else {
                out.extend_from_slice(c.encode_utf16(&mut buf));
            }
            last_was_escape = false;
        } else if c == '\\' {
            last_was_escape = true;
        } else {
            out.extend_from_slice(c.encode_utf16(&mut buf));
        }
    }
    if multiplier > 0 {
        return Err(ParseError::new(
            q,
            pos,
            Cause::TruncatedUnicode {
                text: input.to_string(),
            },
        ));
    }
    if last_was_escape {
        return Err(ParseError::new(
            q,
            pos,
            Cause::TrailingEscape {
                text: input.to_string(),
            },
        ));
    }
    // Deviation: a lone surrogate (Java strings may hold one) becomes U+FFFD.
    Ok(String::from_utf16_lossy(&out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_from_similarity() {
        assert_eq!(float_to_edits(0.7, 4), 1);
        assert_eq!(float_to_edits(0.8, 4), 0);
        assert_eq!(float_to_edits(0.5, 4), 2);
        assert_eq!(float_to_edits(f32::NAN, 4), 0);
        assert_eq!(float_to_edits(3.0, 1), 2);
        assert_eq!(float_to_edits(0.1, 4), 2);
    }

    #[test]
    fn escapes() {
        let d = |s| discard_escape_char("q", s, 0).map(|c| c.into_owned());
        assert_eq!(d("a\\+b").unwrap(), "a+b");
        assert_eq!(d("\\u0041\\u00e9").unwrap(), "Aé");
        assert_eq!(d("\\uD83D\\uDE00").unwrap(), "\u{1F600}");
        assert_eq!(
            d("XY\\u005").unwrap_err().cause(),
            &Cause::TruncatedUnicode {
                text: "XY\\u005".into()
            }
        );
        assert_eq!(
            d("XY\\u005G").unwrap_err().cause(),
            &Cause::NonHex { ch: 'G' }
        );
        assert!(matches!(
            d("a\\").unwrap_err().cause(),
            Cause::TrailingEscape { .. }
        ));
    }
}
