//! Lucene's classic query lexer (`QueryParserTokenManager`): three lexical states, longest match.
//!
//! JavaCC's rule is that the longest match wins and, on equal length, the token declared first in
//! `QueryParser.jj` wins. The scanners below compute the competing match lengths directly instead of
//! running a DFA. Tokens borrow their image from the input; nothing is allocated unless lexing fails.
//!
//! Reads past the end: the generated token manager asks its `CharStream` for one more character
//! wherever its matcher could still grow (`jjMoveNfa_*`), after the string literals that start
//! an NFA (`*`, `+`, `-`, `T` in ranges), at the start of every token (`BeginToken`, which is how
//! `<EOF>` is found), and once more on its lexical-error path. `jjStopAtPos` literals (`(`, `)`,
//! `:`, `^`, `[`, `{`, `]`, `}`) read nothing further. The lexer calls [`CharStream::read_past_end`]
//! at each of those points that lies at the end of the input, so a stream that signals the end by
//! error value ([`FastCharStream`](super::char_stream::FastCharStream)) raises as many as Lucene's.

use std::marker::PhantomData;

use super::char_stream::{CharStream, EndChecked};
use super::error::ParseError;

/// A token kind, numbered as in Lucene's generated `QueryParserConstants` so that expected-token
/// lists sort the way JavaCC prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum TokenKind {
    /// End of input (JavaCC kind 0).
    Eof = 0,
    /// `AND` or `&&`.
    And = 8,
    /// `OR` or `||`.
    Or = 9,
    /// `NOT` or `!`.
    Not = 10,
    /// `+` directly before a term.
    Plus = 11,
    /// `-` directly before a term.
    Minus = 12,
    /// `+`, `-` or `!` followed by whitespace: read as a term (LUCENE-2566).
    BareOper = 13,
    /// `(`.
    LParen = 14,
    /// `)`.
    RParen = 15,
    /// `:`.
    Colon = 16,
    /// A lone `*`.
    Star = 17,
    /// `^`; switches to the Boost state.
    Carat = 18,
    /// A double-quoted phrase.
    Quoted = 19,
    /// A plain term.
    Term = 20,
    /// `~` and what follows it.
    FuzzySlop = 21,
    /// A term ending in one `*`.
    PrefixTerm = 22,
    /// A term with `*` or `?` inside.
    WildTerm = 23,
    /// `/regexp/`.
    RegexpTerm = 24,
    /// `[`; switches to the Range state.
    RangeInStart = 25,
    /// `{`; switches to the Range state.
    RangeExStart = 26,
    /// A boost number (Boost state only).
    Number = 27,
    /// `TO` inside a range.
    RangeTo = 28,
    /// `]`.
    RangeInEnd = 29,
    /// `}`.
    RangeExEnd = 30,
    /// A quoted range endpoint.
    RangeQuoted = 31,
    /// An unquoted range endpoint.
    RangeGoop = 32,
}

impl TokenKind {
    /// The token's image in JavaCC's `tokenImage` table, as error messages print it.
    pub fn image(self) -> &'static str {
        match self {
            TokenKind::Eof => "<EOF>",
            TokenKind::And => "<AND>",
            TokenKind::Or => "<OR>",
            TokenKind::Not => "<NOT>",
            TokenKind::Plus => "\"+\"",
            TokenKind::Minus => "\"-\"",
            TokenKind::BareOper => "<BAREOPER>",
            TokenKind::LParen => "\"(\"",
            TokenKind::RParen => "\")\"",
            TokenKind::Colon => "\":\"",
            TokenKind::Star => "\"*\"",
            TokenKind::Carat => "\"^\"",
            TokenKind::Quoted => "<QUOTED>",
            TokenKind::Term => "<TERM>",
            TokenKind::FuzzySlop => "<FUZZY_SLOP>",
            TokenKind::PrefixTerm => "<PREFIXTERM>",
            TokenKind::WildTerm => "<WILDTERM>",
            TokenKind::RegexpTerm => "<REGEXPTERM>",
            TokenKind::RangeInStart => "\"[\"",
            TokenKind::RangeExStart => "\"{\"",
            TokenKind::Number => "<NUMBER>",
            TokenKind::RangeTo => "\"TO\"",
            TokenKind::RangeInEnd => "\"]\"",
            TokenKind::RangeExEnd => "\"}\"",
            TokenKind::RangeQuoted => "<RANGE_QUOTED>",
            TokenKind::RangeGoop => "<RANGE_GOOP>",
        }
    }
}

/// One token: its kind, its raw image (escapes not yet removed) and where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// What was matched.
    pub kind: TokenKind,
    /// The matched text, borrowed from the query.
    pub image: &'a str,
    /// Byte offset of the first character in the query.
    pub start: usize,
}

/// The token manager's lexical state; the numbers are JavaCC's, as printed in lexical errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LexState {
    /// After `^`: only a NUMBER is legal, not even whitespace.
    Boost = 0,
    /// Inside `[ ... ]` or `{ ... }`.
    Range = 1,
    /// Everywhere else.
    Default = 2,
}

/// A pull lexer over one query; the parser asks for one token at a time, as JavaCC's parsers do,
/// so a lexical error late in the query is only seen if parsing gets that far. `S` is the
/// character stream: what a read at the end of the input gives.
#[derive(Debug, Clone)]
pub struct Lexer<'a, S: CharStream = EndChecked> {
    input: &'a str,
    pos: usize,
    state: LexState,
    /// Error values the stream raised at the end of the input and this lexer caught.
    caught_past_end: u32,
    stream: PhantomData<S>,
}

/// Length in bytes of the UTF-8 sequence that starts with `b`.
#[inline]
fn char_len(b: u8) -> usize {
    if b < 0x80 {
        1
    } else if b < 0xE0 {
        2
    } else if b < 0xF0 {
        3
    } else {
        4
    }
}

/// Length of the `_WHITESPACE` character at `i` (space, tab, LF, CR, U+3000), or 0.
#[inline]
fn whitespace_at(bytes: &[u8], i: usize) -> usize {
    match bytes.get(i) {
        Some(b' ' | b'\t' | b'\n' | b'\r') => 1,
        Some(0xE3) if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0x80) => 3,
        _ => 0,
    }
}

/// ASCII characters that `_TERM_START_CHAR` excludes (besides whitespace).
#[inline]
const fn is_special(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t'
            | b'\n'
            | b'\r'
            | b'+'
            | b'-'
            | b'!'
            | b'('
            | b')'
            | b':'
            | b'^'
            | b'['
            | b']'
            | b'"'
            | b'{'
            | b'}'
            | b'~'
            | b'*'
            | b'?'
            | b'\\'
            | b'/'
    )
}

/// Byte classes of [`scan_run`]: a `_TERM_CHAR` byte of ASCII (`+` and `-` included).
const TERM: u8 = 0;
/// A byte that ends every run: whitespace and the specials other than `+ - * ? \`.
const STOP: u8 = 1;
/// `*` or `?`: part of a run only when wildcards are allowed.
const WILD: u8 = 2;
/// `\`: escapes the next character.
const ESCAPE: u8 = 3;
/// A byte of a multi-byte UTF-8 sequence: a term char unless it starts U+3000.
const NON_ASCII: u8 = 4;

/// The class of every byte, so the run scan takes one table load per byte.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [TERM; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c >= 0x80 {
            NON_ASCII
        } else if c == b'\\' {
            ESCAPE
        } else if c == b'*' || c == b'?' {
            WILD
        } else if c != b'+' && c != b'-' && is_special(c) {
            STOP
        } else {
            TERM
        };
        b += 1;
    }
    t
};

/// End of the maximal run of `_TERM_CHAR`s (plus `*` and `?` when `wild`) starting at `i`.
/// A backslash with nothing after it ends the run; the next token attempt reports it.
#[inline]
fn scan_run(bytes: &[u8], mut i: usize, wild: bool) -> usize {
    while let Some(&b) = bytes.get(i) {
        match BYTE_CLASS[b as usize] {
            TERM => i += 1,
            WILD if wild => i += 1,
            ESCAPE => match bytes.get(i + 1) {
                Some(&n) => i += 1 + char_len(n),
                None => return i,
            },
            NON_ASCII => {
                if whitespace_at(bytes, i) != 0 {
                    return i;
                }
                i += char_len(b);
            }
            _ => return i,
        }
    }
    i
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `input`, in the DEFAULT state, over a stream that raises nothing.
    pub fn new(input: &'a str) -> Self {
        Lexer::over(input)
    }
}

impl<'a, S: CharStream> Lexer<'a, S> {
    /// A lexer at the start of `input`, in the DEFAULT state, reading through stream `S`.
    pub fn over(input: &'a str) -> Self {
        Lexer {
            input,
            pos: 0,
            state: LexState::Default,
            caught_past_end: 0,
            stream: PhantomData,
        }
    }

    /// How many error values the stream raised at the end of the input (Lucene's
    /// `IOException("read past eof")`), all caught here.
    pub fn caught_past_end(&self) -> u32 {
        self.caught_past_end
    }

    /// `input_stream.readChar()` (or `BeginToken()`) with no character left, and the token
    /// manager's `catch (IOException e)` around it: the signal only ends the match.
    #[inline(always)]
    fn read_past_end(&mut self) {
        if let Err(eof) = S::read_past_end() {
            self.caught_past_end += 1;
            drop(eof);
        }
    }

    /// The matcher of a term-like token (TERM, keywords, PREFIXTERM, WILDTERM, FUZZY_SLOP, `*`)
    /// that ended at `end` could always take one more character, so it read the next one; a
    /// lone backslash there keeps it alive for one more read (`_ESCAPED_CHAR` needs a character).
    #[inline(always)]
    fn term_matcher_stopped(&mut self, end: usize) {
        let rest = self.input.len() - end;
        if rest == 0 || (rest == 1 && self.input.as_bytes()[end] == b'\\') {
            self.read_past_end();
        }
    }

    fn token(&mut self, kind: TokenKind, start: usize, end: usize) -> Token<'a> {
        self.pos = end;
        Token {
            kind,
            image: &self.input[start..end],
            start,
        }
    }

    /// The lexical error after a matcher that was still alive at the end of the input (it read
    /// past the end) without a match; JavaCC's error path then reads once more, and meets the
    /// end again, before raising `TokenMgrError`.
    #[cold]
    fn nfa_ran_out(&mut self, token_start: usize) -> ParseError {
        self.read_past_end();
        self.read_past_end();
        ParseError::lexical(
            self.input,
            self.input.len(),
            None,
            token_start,
            self.state as u8,
        )
    }

    /// The lexical error at a character no token starts with; the error path's one-character
    /// peek meets the end when that character is the last.
    #[cold]
    fn error_at_char(&mut self, at: usize, token_start: usize) -> ParseError {
        let c = self.input[at..].chars().next();
        if c.is_some_and(|c| at + c.len_utf8() == self.input.len()) {
            self.read_past_end();
        }
        ParseError::lexical(self.input, at, c, token_start, self.state as u8)
    }

    /// Lexes the next token into `out`, so the caller's buffer is written field by field instead
    /// of receiving a packed `Result` (whose copy stalls store forwarding on the hot path).
    #[inline(never)]
    pub fn next_into(&mut self, out: &mut Token<'a>) -> Result<(), ParseError> {
        *out = self.next_token()?;
        Ok(())
    }

    /// The next token, or the lexical error JavaCC's token manager would raise here.
    #[inline]
    pub fn next_token(&mut self) -> Result<Token<'a>, ParseError> {
        match self.state {
            LexState::Default => self.next_default(),
            LexState::Boost => self.next_boost(),
            LexState::Range => self.next_range(),
        }
    }

    fn next_default(&mut self) -> Result<Token<'a>, ParseError> {
        let bytes = self.input.as_bytes();
        let mut p = self.pos;
        loop {
            let w = whitespace_at(bytes, p);
            if w == 0 {
                break;
            }
            p += w;
        }
        let Some(&b) = bytes.get(p) else {
            self.read_past_end();
            return Ok(self.token(TokenKind::Eof, p, p));
        };
        let single = |lexer: &mut Self, kind| Ok(lexer.token(kind, p, p + 1));
        match b {
            b'+' | b'-' | b'!' => {
                let w = whitespace_at(bytes, p + 1);
                if w != 0 {
                    Ok(self.token(TokenKind::BareOper, p, p + 1 + w))
                } else {
                    // `jjStartNfaWithStates_2` (`+`, `-`) and the NFA (`!`) read one more.
                    if p + 1 == bytes.len() {
                        self.read_past_end();
                    }
                    let kind = match b {
                        b'+' => TokenKind::Plus,
                        b'-' => TokenKind::Minus,
                        _ => TokenKind::Not,
                    };
                    single(self, kind)
                }
            }
            b'(' => single(self, TokenKind::LParen),
            b')' => single(self, TokenKind::RParen),
            b':' => single(self, TokenKind::Colon),
            b'^' => {
                self.state = LexState::Boost;
                single(self, TokenKind::Carat)
            }
            b'[' => {
                self.state = LexState::Range;
                single(self, TokenKind::RangeInStart)
            }
            b'{' => {
                self.state = LexState::Range;
                single(self, TokenKind::RangeExStart)
            }
            b'"' => {
                let mut i = p + 1;
                loop {
                    match bytes.get(i) {
                        None => return Err(self.nfa_ran_out(p)),
                        Some(b'"') => return Ok(self.token(TokenKind::Quoted, p, i + 1)),
                        Some(b'\\') => match bytes.get(i + 1) {
                            None => return Err(self.nfa_ran_out(p)),
                            Some(&n) => i += 1 + char_len(n),
                        },
                        Some(&c) => i += char_len(c),
                    }
                }
            }
            b'~' => {
                let end = scan_run(bytes, p + 1, false);
                self.term_matcher_stopped(end);
                Ok(self.token(TokenKind::FuzzySlop, p, end))
            }
            b'/' => {
                // `"/" (~["/"] | "\\/")* "/"`: a slash right after a backslash may end the
                // regexp or continue it; any other slash ends it. The longest candidate wins.
                let mut i = p + 1;
                let mut last_end = None;
                let mut closed = false;
                while let Some(&c) = bytes.get(i) {
                    if c == b'/' {
                        last_end = Some(i + 1);
                        if i > p + 1 && bytes[i - 1] == b'\\' {
                            i += 1;
                            continue;
                        }
                        closed = true;
                        break;
                    }
                    i += char_len(c);
                }
                match last_end {
                    Some(end) => {
                        // After `\/` the regexp could go on, so its matcher read to the end.
                        if !closed {
                            self.read_past_end();
                        }
                        Ok(self.token(TokenKind::RegexpTerm, p, end))
                    }
                    None => Err(self.nfa_ran_out(p)),
                }
            }
            b'*' | b'?' => {
                let end = scan_run(bytes, p + 1, true);
                self.term_matcher_stopped(end);
                if b == b'*' && end == p + 1 {
                    single(self, TokenKind::Star)
                } else {
                    Ok(self.token(TokenKind::WildTerm, p, end))
                }
            }
            b']' | b'}' => Err(self.error_at_char(p, p)),
            b'\\' if p + 1 == bytes.len() => Err(self.nfa_ran_out(p)),
            _ => {
                // A `_TERM_START_CHAR` (or an escape): TERM, PREFIXTERM, WILDTERM or a keyword.
                let t_end = scan_run(bytes, p, false);
                let w_end = scan_run(bytes, t_end, true);
                self.term_matcher_stopped(w_end);
                if w_end == t_end {
                    // Keywords are two or three bytes long: compare only those.
                    let kind = if matches!(t_end - p, 2 | 3) {
                        match &bytes[p..t_end] {
                            b"AND" | b"&&" => TokenKind::And,
                            b"OR" | b"||" => TokenKind::Or,
                            b"NOT" => TokenKind::Not,
                            _ => TokenKind::Term,
                        }
                    } else {
                        TokenKind::Term
                    };
                    Ok(self.token(kind, p, t_end))
                } else if bytes[t_end] == b'*' && w_end == t_end + 1 {
                    Ok(self.token(TokenKind::PrefixTerm, p, w_end))
                } else {
                    Ok(self.token(TokenKind::WildTerm, p, w_end))
                }
            }
        }
    }

    fn next_boost(&mut self) -> Result<Token<'a>, ParseError> {
        let bytes = self.input.as_bytes();
        let p = self.pos;
        let Some(&b) = bytes.get(p) else {
            self.read_past_end();
            return Ok(self.token(TokenKind::Eof, p, p));
        };
        if !b.is_ascii_digit() {
            return Err(self.error_at_char(p, p));
        }
        let digits = |mut i: usize| {
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let mut end = digits(p);
        if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
            end = digits(end + 1);
        }
        // `jjMoveNfa_0` reads on after every digit, and after a `.` that still needs one.
        if end == bytes.len() || (end + 1 == bytes.len() && bytes[end] == b'.') {
            self.read_past_end();
        }
        self.state = LexState::Default;
        Ok(self.token(TokenKind::Number, p, end))
    }

    fn next_range(&mut self) -> Result<Token<'a>, ParseError> {
        let bytes = self.input.as_bytes();
        let mut p = self.pos;
        loop {
            let Some(&b) = bytes.get(p) else {
                self.read_past_end();
                return Ok(self.token(TokenKind::Eof, p, p));
            };
            match b {
                b' ' => {
                    p += 1;
                    continue;
                }
                b']' | b'}' => {
                    self.state = LexState::Default;
                    let kind = if b == b']' {
                        TokenKind::RangeInEnd
                    } else {
                        TokenKind::RangeExEnd
                    };
                    return Ok(self.token(kind, p, p + 1));
                }
                _ => {}
            }
            // RANGE_GOOP excludes only space, `]` and `}`: tabs and U+3000 can be part of it.
            let mut goop_end = p;
            while let Some(&c) = bytes.get(goop_end) {
                if c == b' ' || c == b']' || c == b'}' {
                    break;
                }
                goop_end += char_len(c);
            }
            // `jjMoveNfa_1` runs RANGE_GOOP and RANGE_QUOTED side by side and reads until both
            // are dead; GOOP dies only at a space, `]`, `}` or the end.
            let (quoted, quoted_ran_out) = if b == b'"' {
                range_quoted_end(bytes, p)
            } else {
                (None, false)
            };
            if goop_end == bytes.len() || quoted_ran_out {
                self.read_past_end();
            }
            let w = whitespace_at(bytes, p);
            if w != 0 && goop_end == p + w {
                // SKIP and RANGE_GOOP match the same length; SKIP is declared first.
                p += w;
                continue;
            }
            if let Some(q_end) = quoted {
                if q_end >= goop_end {
                    return Ok(self.token(TokenKind::RangeQuoted, p, q_end));
                }
            }
            let kind = if &self.input[p..goop_end] == "TO" {
                TokenKind::RangeTo
            } else {
                TokenKind::RangeGoop
            };
            return Ok(self.token(kind, p, goop_end));
        }
    }
}

/// End of the longest `RANGE_QUOTED` match at `p` (`"\"" (~["\""] | "\\\"")+ "\""`), if any,
/// and whether its matcher was still alive at the end of the input.
fn range_quoted_end(bytes: &[u8], p: usize) -> (Option<usize>, bool) {
    let mut i = p + 1;
    let mut last = None;
    while let Some(&c) = bytes.get(i) {
        if c == b'"' {
            if i > p + 1 {
                last = Some(i + 1);
                if bytes[i - 1] == b'\\' {
                    i += 1;
                    continue;
                }
            }
            return (last, false);
        }
        i += char_len(c);
    }
    (last, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(q: &str) -> Vec<(TokenKind, String)> {
        let mut lx = Lexer::new(q);
        let mut out = Vec::new();
        loop {
            let t = lx.next_token().expect("lexes");
            if t.kind == TokenKind::Eof {
                return out;
            }
            out.push((t.kind, t.image.to_string()));
        }
    }

    fn first_error(q: &str) -> ParseError {
        let mut lx = Lexer::new(q);
        loop {
            match lx.next_token() {
                Ok(t) if t.kind == TokenKind::Eof => panic!("{q:?} lexed without error"),
                Ok(_) => {}
                Err(e) => return e,
            }
        }
    }

    use TokenKind::*;

    #[test]
    fn keywords_tie_break_and_longest_match() {
        assert_eq!(
            kinds("AND ANDY && &&b"),
            vec![
                (And, "AND".into()),
                (Term, "ANDY".into()),
                (And, "&&".into()),
                (Term, "&&b".into())
            ]
        );
        assert_eq!(
            kinds("a!b"),
            vec![(Term, "a".into()), (Not, "!".into()), (Term, "b".into())]
        );
        assert_eq!(kinds("a - b")[1], (BareOper, "- ".into()));
        assert_eq!(
            kinds("NOT:a")[..2],
            [(Not, "NOT".into()), (Colon, ":".into())]
        );
    }

    #[test]
    fn star_prefix_and_wild_terms() {
        assert_eq!(
            kinds("* a* a*b* *a ? te?m"),
            vec![
                (Star, "*".into()),
                (PrefixTerm, "a*".into()),
                (WildTerm, "a*b*".into()),
                (WildTerm, "*a".into()),
                (WildTerm, "?".into()),
                (WildTerm, "te?m".into())
            ]
        );
    }

    #[test]
    fn fuzzy_slop_takes_term_chars() {
        assert_eq!(
            kinds("a~0.5 b~ c~2b"),
            vec![
                (Term, "a".into()),
                (FuzzySlop, "~0.5".into()),
                (Term, "b".into()),
                (FuzzySlop, "~".into()),
                (Term, "c".into()),
                (FuzzySlop, "~2b".into())
            ]
        );
    }

    #[test]
    fn boost_state() {
        assert_eq!(
            kinds("a^2.5.1"),
            vec![
                (Term, "a".into()),
                (Carat, "^".into()),
                (Number, "2.5".into()),
                (Term, ".1".into())
            ]
        );
        assert_eq!(first_error("a^ 2").column(), 2);
        assert_eq!(first_error("a^.5").column(), 2);
    }

    #[test]
    fn range_state() {
        assert_eq!(
            kinds("[a TO \"b c\"}"),
            vec![
                (RangeInStart, "[".into()),
                (RangeGoop, "a".into()),
                (RangeTo, "TO".into()),
                (RangeQuoted, "\"b c\"".into()),
                (RangeExEnd, "}".into())
            ]
        );
        assert_eq!(kinds("[\"\" TO b]")[1], (RangeGoop, "\"\"".into()));
        assert_eq!(kinds("[a\tTO\tb]")[1], (RangeGoop, "a\tTO\tb".into()));
        assert_eq!(
            kinds("[TO TO TO]")[1..4],
            [
                (RangeTo, "TO".into()),
                (RangeTo, "TO".into()),
                (RangeTo, "TO".into())
            ]
        );
    }

    #[test]
    fn regexps_and_quotes() {
        assert_eq!(kinds("/a\\/b/"), vec![(RegexpTerm, "/a\\/b/".into())]);
        assert_eq!(
            kinds("/a\\/b"),
            vec![(RegexpTerm, "/a\\/".into()), (Term, "b".into())]
        );
        assert_eq!(kinds("\"a \\\"b\""), vec![(Quoted, "\"a \\\"b\"".into())]);
        let e = first_error("CI/CD");
        assert_eq!(e.column(), 5);
        assert!(
            e.to_string()
                .contains("column 6.  Encountered: <EOF> after prefix \"/CD\""),
            "{e}"
        );
        first_error("\"abc");
        first_error("a\\");
        first_error("[a TO b]]");
    }

    #[test]
    fn escapes_and_ideographic_space() {
        assert_eq!(
            kinds("a\\ b\u{3000}c"),
            vec![(Term, "a\\ b".into()), (Term, "c".into())]
        );
        assert_eq!(kinds("\\u0041"), vec![(Term, "\\u0041".into())]);
    }
}
