//! The grammar's token sets at its choice points, and JavaCC's "Was expecting one of" list
//! (`generateParseException`) rebuilt from what the grammar tried at the failing token.
//!
//! Both parsers decide with these sets, so they accept the same language and report the same
//! expected tokens. JavaCC lists every token kind some choice point accepted at the failing
//! token (`jj_la1`, printed in token-kind order), then re-runs the syntactic lookaheads that
//! scanned that token (`jj_rescan_token`) and feeds each token they tried into
//! `jj_add_error_token`. A quirk of that method (its duplicate check adds an entry only when an
//! equal one already exists) is why Lucene's messages end in repeats such as `<TERM> ...` and
//! `"*" ...`; we reproduce it.

use super::lexer::TokenKind;

/// Token kinds that may start a clause body after the optional `field:` (JavaCC's FIRST set).
pub const CLAUSE_BODY: &[TokenKind] = &[
    TokenKind::BareOper,
    TokenKind::LParen,
    TokenKind::Star,
    TokenKind::Quoted,
    TokenKind::Term,
    TokenKind::PrefixTerm,
    TokenKind::WildTerm,
    TokenKind::RegexpTerm,
    TokenKind::RangeInStart,
    TokenKind::RangeExStart,
    TokenKind::Number,
];

/// Token kinds that may start a `Query` (modifiers plus [`CLAUSE_BODY`]).
pub const QUERY_START: &[TokenKind] = &[
    TokenKind::Not,
    TokenKind::Plus,
    TokenKind::Minus,
    TokenKind::BareOper,
    TokenKind::LParen,
    TokenKind::Star,
    TokenKind::Quoted,
    TokenKind::Term,
    TokenKind::PrefixTerm,
    TokenKind::WildTerm,
    TokenKind::RegexpTerm,
    TokenKind::RangeInStart,
    TokenKind::RangeExStart,
    TokenKind::Number,
];

/// Token kinds that continue a `Query` (conjunctions plus [`QUERY_START`]), and what can end one.
pub const QUERY_END_TOP: &[TokenKind] = &[
    TokenKind::Eof,
    TokenKind::And,
    TokenKind::Or,
    TokenKind::Not,
    TokenKind::Plus,
    TokenKind::Minus,
    TokenKind::BareOper,
    TokenKind::LParen,
    TokenKind::Star,
    TokenKind::Quoted,
    TokenKind::Term,
    TokenKind::PrefixTerm,
    TokenKind::WildTerm,
    TokenKind::RegexpTerm,
    TokenKind::RangeInStart,
    TokenKind::RangeExStart,
    TokenKind::Number,
];

/// As [`QUERY_END_TOP`] inside parentheses, where `)` ends the query instead of end of input.
pub const QUERY_END_GROUP: &[TokenKind] = &[
    TokenKind::And,
    TokenKind::Or,
    TokenKind::Not,
    TokenKind::Plus,
    TokenKind::Minus,
    TokenKind::BareOper,
    TokenKind::LParen,
    TokenKind::RParen,
    TokenKind::Star,
    TokenKind::Quoted,
    TokenKind::Term,
    TokenKind::PrefixTerm,
    TokenKind::WildTerm,
    TokenKind::RegexpTerm,
    TokenKind::RangeInStart,
    TokenKind::RangeExStart,
    TokenKind::Number,
];

/// What the optional boost/slop after a term or phrase still accepts (JavaCC's `jj_la1` entries
/// at the token after the clause): both when neither was given, the other one when one was.
pub fn term_tail(boost: bool, slop: bool) -> &'static [TokenKind] {
    match (boost, slop) {
        (false, false) => &[TokenKind::Carat, TokenKind::FuzzySlop],
        (true, false) => &[TokenKind::FuzzySlop],
        (false, true) => &[TokenKind::Carat],
        (true, true) => &[],
    }
}

/// What the optional boost after a group or range still accepts.
pub fn boost_tail(boost: bool) -> &'static [TokenKind] {
    if boost { &[] } else { &[TokenKind::Carat] }
}

/// The kinds accepted where a clause body was expected: modifiers too when the `Modifiers`
/// choice was made at this very token (no modifier and no `field:` consumed since).
pub fn clause_body_expected(modifier_or_field: bool) -> &'static [TokenKind] {
    if modifier_or_field {
        CLAUSE_BODY
    } else {
        QUERY_START
    }
}

/// Range endpoint kinds.
pub const RANGE_ENDPOINT: &[TokenKind] = &[
    TokenKind::RangeTo,
    TokenKind::RangeQuoted,
    TokenKind::RangeGoop,
];

/// Range closing kinds.
pub const RANGE_END: &[TokenKind] = &[TokenKind::RangeInEnd, TokenKind::RangeExEnd];

/// Whether `kind` may start a clause of the `Query` loop (`jj_ntk` switch of the loop).
#[inline]
pub fn continues_query(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::And
            | TokenKind::Or
            | TokenKind::Not
            | TokenKind::Plus
            | TokenKind::Minus
            | TokenKind::BareOper
            | TokenKind::LParen
            | TokenKind::Star
            | TokenKind::Quoted
            | TokenKind::Term
            | TokenKind::PrefixTerm
            | TokenKind::WildTerm
            | TokenKind::RegexpTerm
            | TokenKind::RangeInStart
            | TokenKind::RangeExStart
            | TokenKind::Number
    )
}

/// Whether `kind` may start a `Query` (modifiers or a clause body).
#[inline]
pub fn starts_query(kind: TokenKind) -> bool {
    continues_query(kind) && !matches!(kind, TokenKind::And | TokenKind::Or)
}

/// Whether `kind` may start a clause body.
#[inline]
pub fn starts_clause_body(kind: TokenKind) -> bool {
    starts_query(kind) && !matches!(kind, TokenKind::Not | TokenKind::Plus | TokenKind::Minus)
}

/// `allowedPostMultiTerm`: a bare term followed by one of these is not part of a MultiTerm run.
#[inline]
pub fn allowed_post_multi_term(kind: TokenKind) -> bool {
    !matches!(
        kind,
        TokenKind::Colon
            | TokenKind::Star
            | TokenKind::FuzzySlop
            | TokenKind::Carat
            | TokenKind::And
            | TokenKind::Or
    )
}

/// Where one of the three lookaheads (`jj_2_1`, `jj_2_2`: MultiTerm; `jj_2_3`: field prefix)
/// last ran: JavaCC's `JJCalls` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookaheadMark {
    /// Index of the token the scan started at (tokens consumed before it).
    pub at: usize,
    /// One past the last token whose scan used the lookahead budget (JavaCC's `gen`).
    pub reach: usize,
    /// Kinds of the tokens at `at`, `at + 1`, `at + 2`, as far as the scan looked (`Eof` beyond).
    pub kinds: [TokenKind; 3],
}

impl LookaheadMark {
    /// The mark of a MultiTerm lookahead (`jj_3R_MultiTerm`) over `kinds`.
    pub fn multi_term(at: usize, kinds: [TokenKind; 3]) -> Self {
        let success = kinds[0] == TokenKind::Term
            && kinds[1] == TokenKind::Term
            && allowed_post_multi_term(kinds[2]);
        LookaheadMark {
            at,
            reach: at + if success { 2 } else { 1 },
            kinds,
        }
    }

    /// The mark of a field-prefix lookahead (`TERM :` or `* :`) over `kinds`.
    pub fn field_prefix(at: usize, kinds: [TokenKind; 3]) -> Self {
        let two = matches!(kinds[0], TokenKind::Term | TokenKind::Star);
        LookaheadMark {
            at,
            reach: at + if two { 2 } else { 1 },
            kinds,
        }
    }
}

/// The expected kinds JavaCC prints for a syntax error at token index `error_at`: `accepted`
/// (the kinds the choice points there accepted) in kind order, then the rescan repeats.
pub fn javacc_expected(
    accepted: &[TokenKind],
    marks: &[Option<LookaheadMark>; 3],
    error_at: usize,
) -> Vec<TokenKind> {
    let mut entries = accepted.to_vec();
    entries.sort();
    entries.dedup();
    let base_len = entries.len();
    // `jj_lasttokens` / `jj_endpos`; only length-1 sequences can ever be added (the base entries
    // all have length 1), so the first slot is all we keep.
    let mut first = TokenKind::Eof;
    let mut endpos = 0usize;
    let mut add = |entries: &mut Vec<TokenKind>, kind: TokenKind, pos: usize| {
        if pos == endpos + 1 {
            if endpos == 0 {
                first = kind;
            }
            endpos += 1;
        } else if endpos != 0 {
            if endpos == 1 && entries[..base_len].contains(&first) {
                entries.push(first);
            }
            if pos != 0 {
                endpos = pos;
                if pos == 1 {
                    first = kind;
                }
            }
        }
    };
    for (index, mark) in marks.iter().enumerate() {
        let Some(m) = mark.filter(|m| m.reach > error_at) else {
            continue;
        };
        // `jj_scan_token` in rescan mode: report the kind tried at token `at + j` with its
        // distance from the last consumed token, then say whether it matched.
        let mut scan = |entries: &mut Vec<TokenKind>, j: usize, kind: TokenKind| {
            let p = m.at + j;
            if p + 1 >= error_at {
                add(entries, kind, p + 1 - error_at);
            }
            m.kinds[j] == kind
        };
        if index < 2 {
            if scan(&mut entries, 0, TokenKind::Term)
                && m.kinds[1] == TokenKind::Term
                && allowed_post_multi_term(m.kinds[2])
            {
                scan(&mut entries, 1, TokenKind::Term);
            }
        } else {
            let term =
                scan(&mut entries, 0, TokenKind::Term) && scan(&mut entries, 1, TokenKind::Colon);
            if !term && scan(&mut entries, 0, TokenKind::Star) {
                scan(&mut entries, 1, TokenKind::Colon);
            }
        }
    }
    add(&mut entries, TokenKind::Eof, 0);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::{CLAUSE_BODY, QUERY_START};
    use TokenKind::*;

    #[test]
    fn rescan_of_a_failed_field_prefix_repeats_term_and_star() {
        // `treeish OR` fails at EOF (index 2) after the field-prefix lookahead ran there.
        let mut accepted = CLAUSE_BODY.to_vec();
        accepted.extend([Not, Plus, Minus]);
        let marks = [
            Some(LookaheadMark::multi_term(0, [Term, Or, Eof])),
            Some(LookaheadMark::multi_term(1, [Or, Eof, Eof])),
            Some(LookaheadMark::field_prefix(2, [Eof, Eof, Eof])),
        ];
        let got = javacc_expected(&accepted, &marks, 2);
        let mut want = QUERY_START.to_vec();
        want.sort();
        want.extend([Term, Star]);
        assert_eq!(got, want);
    }

    #[test]
    fn rescan_of_a_failed_multi_term_repeats_term() {
        let marks = [
            Some(LookaheadMark::multi_term(0, [And, Eof, Eof])),
            None,
            None,
        ];
        let got = javacc_expected(QUERY_START, &marks, 0);
        assert_eq!(got.last(), Some(&Term));
        assert_eq!(got.len(), QUERY_START.len() + 1);
    }

    #[test]
    fn expired_lookaheads_add_nothing() {
        let marks = [
            None,
            None,
            Some(LookaheadMark::field_prefix(0, [Term, Colon, Eof])),
        ];
        assert_eq!(
            javacc_expected(CLAUSE_BODY, &marks, 2).len(),
            CLAUSE_BODY.len()
        );
    }
}
