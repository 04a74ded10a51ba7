//! Models: Lucene's classic query grammar, recognised in one pass by recursive descent.
//! Follows: the productions of `QueryParser.jj` (Lucene 9/10), with every JavaCC lookahead
//! replaced by a peek at a three-token window. Hot path: no locks, no error values, tokens borrow
//! the input; allocations are the tree's own (clause vectors, boxes, and strings only where
//! unescaping or analysis changed the text) and nothing else: a one-term query allocates nothing.

use std::borrow::Cow;

use super::ast::{Field, Query};
use super::error::{Cause, ParseError};
use super::grammar::{
    self, LookaheadMark, QUERY_END_GROUP, QUERY_END_TOP, QUERY_START, RANGE_END, RANGE_ENDPOINT,
    allowed_post_multi_term, boost_tail, clause_body_expected, continues_query, javacc_expected,
    term_tail,
};
use super::kind::ParserKind;
use super::lexer::{Lexer, Token, TokenKind};
use super::options::ParserOptions;
use super::parser_base::{self, Clauses, Conj, MAX_DEPTH, Mods, ParserBase, handle_boost};
use super::query_parser::QueryParser;
use critsec_sync::kind::StrategyKind;

/// The predictive strategy (`predictive`).
#[derive(Debug, Clone)]
pub struct PredictiveParser {
    base: ParserBase,
}

impl PredictiveParser {
    /// A parser with `options`.
    pub fn new(options: ParserOptions) -> Self {
        PredictiveParser {
            base: ParserBase::new(options),
        }
    }
}

impl QueryParser for PredictiveParser {
    fn id(&self) -> &'static str {
        ParserKind::Predictive.id()
    }

    fn options(&self) -> &ParserOptions {
        self.base.options()
    }

    fn parse<'a>(&'a self, query: &'a str) -> Result<Query<'a>, ParseError> {
        let mut run = Run {
            base: &self.base,
            q: query,
            lexer: Lexer::new(query),
            window: [Token {
                kind: TokenKind::Eof,
                image: "",
                start: 0,
            }; WINDOW],
            head: 0,
            buffered: 0,
            depth: 0,
            consumed: 0,
            marks: [None; 3],
            tail: &[],
        };
        let q = run.query(&self.base.default_field())?;
        let t = run.peek(0)?;
        if t.kind != TokenKind::Eof {
            return Err(run.unexpected(t, QUERY_END_TOP, run.tail));
        }
        Ok(q.unwrap_or_else(Query::empty))
    }
}

/// Ring size of the token window (a power of two; at most three tokens are ever buffered).
const WINDOW: usize = 4;

/// One parse: the lexer and a window of up to three tokens read but not consumed, plus what a
/// syntax error message needs (where the lookaheads ran, what the last clause still accepted).
struct Run<'a> {
    base: &'a ParserBase,
    q: &'a str,
    lexer: Lexer<'a>,
    window: [Token<'a>; WINDOW],
    head: usize,
    buffered: usize,
    depth: usize,
    /// Tokens consumed so far (JavaCC's `jj_gen`).
    consumed: usize,
    /// Where JavaCC's three syntactic lookaheads would last have run.
    marks: [Option<LookaheadMark>; 3],
    /// What the optional parts after the last clause still accepted.
    tail: &'static [TokenKind],
}

impl<'a> Run<'a> {
    /// The `i`-th token not yet consumed (0-based), read from the lexer only when first needed,
    /// so lexical errors surface exactly where JavaCC's `getToken` would meet them.
    #[inline(always)]
    fn peek(&mut self, i: usize) -> Result<Token<'a>, ParseError> {
        while self.buffered <= i {
            self.lexer
                .next_into(&mut self.window[(self.head + self.buffered) % WINDOW])?;
            self.buffered += 1;
        }
        Ok(self.window[(self.head + i) % WINDOW])
    }

    /// The kind of the `i`-th token not yet consumed.
    #[inline(always)]
    fn kind(&mut self, i: usize) -> Result<TokenKind, ParseError> {
        if i < self.buffered {
            return Ok(self.window[(self.head + i) % WINDOW].kind);
        }
        Ok(self.peek(i)?.kind)
    }

    #[inline(always)]
    fn next(&mut self) -> Result<Token<'a>, ParseError> {
        let t = self.peek(0)?;
        self.head = (self.head + 1) % WINDOW;
        self.buffered -= 1;
        self.consumed += 1;
        Ok(t)
    }

    /// A syntax error at the next token `t`, which none of `accepted` (nor `tail`) matched.
    #[cold]
    fn unexpected(&self, t: Token<'_>, accepted: &[TokenKind], tail: &[TokenKind]) -> ParseError {
        let mut all = accepted.to_vec();
        all.extend_from_slice(tail);
        let expected = javacc_expected(&all, &self.marks, self.consumed);
        ParseError::syntax(self.q, t.start, t.kind, t.image, expected)
    }

    fn expect(&mut self, kind: TokenKind) -> Result<Token<'a>, ParseError> {
        let t = self.peek(0)?;
        if t.kind != kind {
            return Err(self.unexpected(t, &[kind], &[]));
        }
        self.next()
    }

    /// `LOOKAHEAD(2) MultiTerm`: two bare terms, the second not followed by `: * ~ ^ AND OR`.
    /// `index` says which of JavaCC's lookaheads this is (0 at the start of a query, 1 in its loop).
    #[inline(always)]
    fn multi_term_ahead(&mut self, index: usize) -> Result<bool, ParseError> {
        let mut kinds = [self.kind(0)?, TokenKind::Eof, TokenKind::Eof];
        if kinds[0] == TokenKind::Term {
            kinds[1] = self.kind(1)?;
            if kinds[1] == TokenKind::Term {
                kinds[2] = self.kind(2)?;
            }
        }
        let mark = LookaheadMark::multi_term(self.consumed, kinds);
        self.marks[index] = Some(mark);
        Ok(mark.reach == self.consumed + 2)
    }

    fn query(&mut self, field: &Field<'a>) -> Result<Option<Query<'a>>, ParseError> {
        let start = self.peek(0)?.start;
        let mut clauses = Clauses::Empty;
        let mut first_is_plain = false;
        if self.multi_term_ahead(0)? {
            self.multi_term(field, &mut clauses)?;
        } else {
            let t = self.peek(0)?;
            if !grammar::starts_query(t.kind) {
                return Err(self.unexpected(t, QUERY_START, &[]));
            }
            let mods = self.modifiers()?;
            let q = self.clause(field, mods != Mods::None)?;
            first_is_plain = mods == Mods::None && q.is_some();
            if first_is_plain && !continues_query(self.kind(0)?) {
                // A lone plain clause is the query itself (the `clauses.size() == 1 &&
                // firstQuery != null` return below), so skip building the clause list.
                return Ok(q);
            }
            self.base.add_clause(&mut clauses, Conj::None, mods, q);
        }
        while continues_query(self.kind(0)?) {
            if self.multi_term_ahead(1)? {
                self.multi_term(field, &mut clauses)?;
            } else {
                let conj = match self.kind(0)? {
                    TokenKind::And => {
                        self.next()?;
                        Conj::And
                    }
                    TokenKind::Or => {
                        self.next()?;
                        Conj::Or
                    }
                    _ => Conj::None,
                };
                let mods = self.modifiers()?;
                let q = self.clause(field, mods != Mods::None)?;
                self.base.add_clause(&mut clauses, conj, mods, q);
            }
        }
        if clauses.len() == 1 && first_is_plain {
            return Ok(clauses.into_single());
        }
        self.base.boolean_query(self.q, start, clauses)
    }

    fn modifiers(&mut self) -> Result<Mods, ParseError> {
        let mods = match self.kind(0)? {
            TokenKind::Plus => Mods::Req,
            TokenKind::Minus | TokenKind::Not => Mods::Not,
            _ => return Ok(Mods::None),
        };
        self.next()?;
        Ok(mods)
    }

    fn multi_term(
        &mut self,
        field: &Field<'a>,
        clauses: &mut Clauses<'a>,
    ) -> Result<(), ParseError> {
        let first = self.next()?;
        let split = self.base.options().split_on_whitespace;
        if split {
            let text = parser_base::discard_escape_char(self.q, first.image, first.start)?;
            let q = self
                .base
                .field_query(self.q, first.start, field, text, false, 0)?;
            self.base.add_clause(clauses, Conj::None, Mods::None, q);
        }
        let mut end = first.start + first.image.len();
        while self.kind(0)? == TokenKind::Term && allowed_post_multi_term(self.kind(1)?) {
            let t = self.next()?;
            end = t.start + t.image.len();
            if split {
                let text = parser_base::discard_escape_char(self.q, t.image, t.start)?;
                let q = self
                    .base
                    .field_query(self.q, t.start, field, text, false, 0)?;
                self.base.add_clause(clauses, Conj::None, Mods::None, q);
            }
        }
        if !split {
            // Lucene joins the run's images with single spaces before unescaping and analysis.
            // Only lexer whitespace separates the terms, and every analyzer here splits on it
            // too, so without escapes and U+3000 (which the whitespace analyzers keep inside
            // a token) the run's raw text analyzes the same and needs no copy.
            let raw = &self.q[first.start..end];
            let text = if raw.contains(['\\', '\u{3000}']) {
                let mut run = String::with_capacity(raw.len());
                let mut lexer = Lexer::new(raw);
                while let Ok(t) = lexer.next_token() {
                    if t.kind == TokenKind::Eof {
                        break;
                    }
                    if !run.is_empty() {
                        run.push(' ');
                    }
                    run.push_str(t.image);
                }
                let unescaped = match parser_base::discard_escape_char(self.q, &run, first.start)? {
                    Cow::Owned(s) => Some(s),
                    Cow::Borrowed(_) => None,
                };
                Cow::Owned(unescaped.unwrap_or(run))
            } else {
                Cow::Borrowed(raw)
            };
            let q = self
                .base
                .field_query(self.q, first.start, field, text, false, 0)?;
            self.base.add_multi_term_clauses(clauses, q);
        }
        self.tail = &[];
        Ok(())
    }

    /// `Clause`; `modifier` says whether a modifier was consumed just before it.
    fn clause(
        &mut self,
        field: &Field<'a>,
        modifier: bool,
    ) -> Result<Option<Query<'a>>, ParseError> {
        let own_field;
        let mut field = field;
        let mut kinds = [self.kind(0)?, TokenKind::Eof, TokenKind::Eof];
        if matches!(kinds[0], TokenKind::Term | TokenKind::Star) {
            kinds[1] = self.kind(1)?;
        }
        self.marks[2] = Some(LookaheadMark::field_prefix(self.consumed, kinds));
        let prefixed = kinds[1] == TokenKind::Colon;
        // The kind after the body's first token, when that token is a bare term (already read
        // by the field lookahead unless a prefix was consumed).
        let mut after_term = kinds[1];
        if prefixed {
            let name = self.next()?;
            self.next()?;
            own_field = self.base.field_of(self.q, name)?;
            field = &own_field;
            if self.kind(0)? == TokenKind::Term {
                after_term = self.kind(1)?;
            }
        }
        let t = self.peek(0)?;
        if t.kind == TokenKind::Term
            && !matches!(after_term, TokenKind::Carat | TokenKind::FuzzySlop)
        {
            // The commonest clause body, a bare term without boost or slop: what
            // `handleBareTokenQuery` does for it, without the general term path. Peeking the
            // next token here is what the boost/slop check of that path does first anyway.
            self.next()?;
            self.tail = term_tail(false, false);
            let text = parser_base::discard_escape_char(self.q, t.image, t.start)?;
            return self
                .base
                .field_query(self.q, t.start, field, text, false, 0);
        }
        match t.kind {
            TokenKind::LParen => {
                self.next()?;
                if self.depth == MAX_DEPTH {
                    return Err(ParseError::new(
                        self.q,
                        t.start,
                        Cause::TooDeep { max: MAX_DEPTH },
                    ));
                }
                self.depth += 1;
                let q = self.query(field)?;
                self.depth -= 1;
                let close = self.peek(0)?;
                if close.kind != TokenKind::RParen {
                    return Err(self.unexpected(close, QUERY_END_GROUP, self.tail));
                }
                self.next()?;
                let boost = self.optional_boost()?;
                self.tail = boost_tail(boost.is_some());
                Ok(handle_boost(q, boost))
            }
            k if grammar::starts_clause_body(k) => self.term(field),
            _ => Err(self.unexpected(t, clause_body_expected(modifier || prefixed), &[])),
        }
    }

    fn optional_boost(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        if self.kind(0)? != TokenKind::Carat {
            return Ok(None);
        }
        self.next()?;
        self.expect(TokenKind::Number).map(Some)
    }

    /// `[ ^N [~S] | ~S [^N] ]` after a term or phrase: (boost, slop).
    #[allow(clippy::type_complexity)]
    #[inline]
    fn boost_and_slop(&mut self) -> Result<(Option<Token<'a>>, Option<Token<'a>>), ParseError> {
        match self.kind(0)? {
            TokenKind::Carat => {
                let boost = self.optional_boost()?;
                let slop = if self.kind(0)? == TokenKind::FuzzySlop {
                    Some(self.next()?)
                } else {
                    None
                };
                Ok((boost, slop))
            }
            TokenKind::FuzzySlop => {
                let slop = Some(self.next()?);
                let boost = self.optional_boost()?;
                Ok((boost, slop))
            }
            _ => Ok((None, None)),
        }
    }

    fn term(&mut self, field: &Field<'a>) -> Result<Option<Query<'a>>, ParseError> {
        let t = self.next()?;
        match t.kind {
            TokenKind::RangeInStart | TokenKind::RangeExStart => {
                let lower = self.range_endpoint()?;
                self.expect(TokenKind::RangeTo)?;
                let upper = self.range_endpoint()?;
                let end = self.peek(0)?;
                if !matches!(end.kind, TokenKind::RangeInEnd | TokenKind::RangeExEnd) {
                    return Err(self.unexpected(end, RANGE_END, &[]));
                }
                self.next()?;
                let boost = self.optional_boost()?;
                self.tail = boost_tail(boost.is_some());
                let q = self.base.range_query(self.q, field, t, lower, upper, end)?;
                Ok(handle_boost(q, boost))
            }
            TokenKind::Quoted => {
                let (boost, slop) = self.boost_and_slop()?;
                self.tail = term_tail(boost.is_some(), slop.is_some());
                let q = self.base.quoted_query(self.q, field, t, slop)?;
                Ok(handle_boost(q, boost))
            }
            _ => {
                let (boost, slop) = self.boost_and_slop()?;
                self.tail = term_tail(boost.is_some(), slop.is_some());
                let q = self.base.bare_token_query(self.q, field, t, slop)?;
                Ok(handle_boost(q, boost))
            }
        }
    }

    fn range_endpoint(&mut self) -> Result<Token<'a>, ParseError> {
        let t = self.peek(0)?;
        if !matches!(
            t.kind,
            TokenKind::RangeGoop | TokenKind::RangeQuoted | TokenKind::RangeTo
        ) {
            return Err(self.unexpected(t, RANGE_ENDPOINT, &[]));
        }
        self.next()
    }
}
