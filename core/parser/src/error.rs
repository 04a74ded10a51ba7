//! Parse errors in Lucene's four classes (plus the one runtime exception that escapes `parse()`),
//! with a 0-based column and the message text Lucene's `ParseException` / `TokenMgrError` carry.

use std::fmt;

use super::lexer::TokenKind;

/// Which Lucene exception a failure corresponds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorClass {
    /// `TokenMgrError`: the token manager found no token (unterminated quote, lone `\`, ...).
    Lexical,
    /// JavaCC `ParseException` with a current token: the grammar did not accept a token.
    Syntax,
    /// `ParseException` thrown by `QueryParserBase` (leading wildcard, fuzzy value, escapes).
    Semantic,
    /// `IndexSearcher.TooManyClauses`, rewrapped by `parse()`.
    TooManyClauses,
    /// An unchecked exception that escapes `parse()` (only `"a b"~-1`).
    Runtime,
}

impl ErrorClass {
    /// Every class, in declaration order.
    pub const ALL: [ErrorClass; 5] = [
        ErrorClass::Lexical,
        ErrorClass::Syntax,
        ErrorClass::Semantic,
        ErrorClass::TooManyClauses,
        ErrorClass::Runtime,
    ];

    /// The class's name as the CLI and the conformance table spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Lexical => "lexical",
            ErrorClass::Syntax => "syntax",
            ErrorClass::Semantic => "semantic",
            ErrorClass::TooManyClauses => "too_many_clauses",
            ErrorClass::Runtime => "runtime",
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What went wrong, holding the offending value; `Display` gives Lucene's message for it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Cause {
    /// No token matches at `column` (or the input ended inside a token).
    #[error("{}", lexical_message(*.column, *.encountered, .prefix, *.state))]
    Lexical {
        /// The column JavaCC prints: the char stream's end column after the failed match, one
        /// more when it met the end of input.
        column: usize,
        /// The character JavaCC reports; `None` when it reports `<EOF>` (also when the bad
        /// character is the query's last: JavaCC peeks past it and meets the end).
        encountered: Option<char>,
        /// The partial token JavaCC reports (`GetImage()`, only when more than two characters).
        prefix: String,
        /// JavaCC's lexical state number (0 Boost, 1 Range, 2 DEFAULT).
        state: u8,
    },
    /// The token at `column` is not one the grammar accepts there.
    #[error("{}", syntax_message(*.column, *.found, .image, .expected))]
    Syntax {
        /// 0-based UTF-16 offset of the unexpected token.
        column: usize,
        /// Its kind.
        found: TokenKind,
        /// Its raw image.
        image: String,
        /// The kinds JavaCC lists as expected, in its order (repeats included).
        expected: Vec<TokenKind>,
    },
    /// A wildcard term starts with `*` or `?` and leading wildcards are not allowed.
    #[error("'*' or '?' not allowed as first character in WildcardQuery")]
    LeadingWildcard {
        /// The wildcard pattern.
        term: String,
    },
    /// A prefix term starts with `*` and leading wildcards are not allowed.
    #[error("'*' not allowed as first character in PrefixQuery")]
    LeadingPrefixStar {
        /// The prefix.
        term: String,
    },
    /// `term~x` with `x < 0`; valid are 0, values in (0, 1) and integers >= 1.
    #[error("Minimum similarity for a FuzzyQuery has to be between 0.0f and 1.0f !")]
    NegativeSimilarity {
        /// The text after `~`.
        slop: String,
    },
    /// `term~x` with a non-integral `x >= 1`; valid are 0, values in (0, 1) and integers >= 1.
    #[error("Fractional edit distances are not allowed!")]
    FractionalEdits {
        /// The text after `~`.
        slop: String,
    },
    /// `\u` followed by fewer than four hex digits.
    #[error("Truncated Unicode escape sequence.")]
    TruncatedUnicode {
        /// The text being unescaped.
        text: String,
    },
    /// `\u` followed by a character that is not a hex digit (valid: `0-9a-fA-F`).
    #[error("Non-hex character in Unicode escape sequence: {ch}")]
    NonHex {
        /// The bad character.
        ch: char,
    },
    /// A term, field or endpoint ends in a lone backslash.
    #[error("Term can not end with escape character.")]
    TrailingEscape {
        /// The text being unescaped.
        text: String,
    },
    /// A boolean query got more clauses than the configured maximum.
    #[error("too many boolean clauses")]
    TooManyClauses {
        /// The configured maximum clause count.
        max: usize,
    },
    /// Parentheses nested deeper than the parser accepts (Lucene would overflow its stack).
    #[error("Query nested deeper than {max} groups")]
    TooDeep {
        /// The deepest nesting accepted.
        max: usize,
    },
    /// A phrase with a negative slop: PhraseQuery's `IllegalArgumentException` (valid: slop >= 0).
    #[error("Slop must be >= 0, got {slop}")]
    NegativeSlop {
        /// The slop.
        slop: i32,
    },
}

impl Cause {
    /// The Lucene exception class of this cause.
    pub fn class(&self) -> ErrorClass {
        match self {
            Cause::Lexical { .. } => ErrorClass::Lexical,
            Cause::Syntax { .. } => ErrorClass::Syntax,
            Cause::TooManyClauses { .. } => ErrorClass::TooManyClauses,
            Cause::NegativeSlop { .. } | Cause::TooDeep { .. } => ErrorClass::Runtime,
            _ => ErrorClass::Semantic,
        }
    }
}

/// A failed parse: the query, where it failed and why. `Display` prints Lucene's message,
/// `Cannot parse '<query>': <cause>` (the runtime class prints the bare cause, as Java does).
///
/// Boxed, so that the parsers' `Result`s stay one pointer wide on the success path.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    inner: Box<Inner>,
}

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    query: String,
    column: usize,
    cause: Cause,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.inner.cause.class() == ErrorClass::Runtime {
            write!(f, "{}", self.inner.cause)
        } else {
            write!(
                f,
                "Cannot parse '{}': {}",
                self.inner.query, self.inner.cause
            )
        }
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.inner.cause)
    }
}

/// The 0-based UTF-16 column of byte offset `byte` in `query` (Java counts `char`s, which are
/// UTF-16 units; for text in the Basic Multilingual Plane this is the character count).
pub fn column_of(query: &str, byte: usize) -> usize {
    query.get(..byte).map_or(0, |s| s.encode_utf16().count())
}

impl ParseError {
    /// An error of `cause` at byte offset `byte` of `query`.
    #[cold]
    pub fn new(query: &str, byte: usize, cause: Cause) -> Self {
        ParseError {
            inner: Box::new(Inner {
                query: query.to_string(),
                column: column_of(query, byte),
                cause,
            }),
        }
    }

    /// A lexical error at byte `at` (end of input when `encountered` is `None`) inside the token
    /// that starts at byte `token_start`.
    #[cold]
    pub fn lexical(
        query: &str,
        at: usize,
        encountered: Option<char>,
        token_start: usize,
        state: u8,
    ) -> Self {
        let column = column_of(query, at);
        let end = column_of(query, query.len());
        // JavaCC's token manager reports what its char stream saw, not the offending character:
        // at end of input the partial token (if its NFA read more than two characters) and
        // the end column plus one; for a bad last character, the same `<EOF>` report, because
        // it peeks one character further; otherwise the character and its end column.
        let (javacc_column, shown, prefix) = match encountered {
            None => {
                let partial = query.get(token_start..).unwrap_or_default();
                (
                    end + 1,
                    None,
                    if partial.chars().count() > 2 {
                        partial
                    } else {
                        ""
                    },
                )
            }
            Some(c) if at + c.len_utf8() == query.len() => (end + 1, None, ""),
            Some(c) => (column + c.len_utf16(), Some(c), ""),
        };
        ParseError {
            inner: Box::new(Inner {
                query: query.to_string(),
                column,
                cause: Cause::Lexical {
                    column: javacc_column,
                    encountered: shown,
                    prefix: prefix.to_string(),
                    state,
                },
            }),
        }
    }

    /// A syntax error: `found` (starting at byte `start`) where the `expected` kinds (in the
    /// order JavaCC prints them, see [`super::expected`]) were acceptable.
    #[cold]
    pub fn syntax(
        query: &str,
        start: usize,
        found: TokenKind,
        image: &str,
        expected: Vec<TokenKind>,
    ) -> Self {
        let column = column_of(query, start);
        ParseError {
            inner: Box::new(Inner {
                query: query.to_string(),
                column,
                cause: Cause::Syntax {
                    column,
                    found,
                    image: image.to_string(),
                    expected,
                },
            }),
        }
    }

    /// The exception class.
    pub fn class(&self) -> ErrorClass {
        self.inner.cause.class()
    }

    /// 0-based UTF-16 column where the error was detected: the offending token or character,
    /// the query length at end of input, or the start of the term a semantic check rejected.
    pub fn column(&self) -> usize {
        self.inner.column
    }

    /// The cause, with the offending value.
    pub fn cause(&self) -> &Cause {
        &self.inner.cause
    }

    /// The query that failed.
    pub fn query(&self) -> &str {
        &self.inner.query
    }
}

/// JavaCC's `addEscapes`: backslash escapes for control characters and quotes, `\uXXXX` for the
/// rest outside printable ASCII.
pub fn java_add_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for unit in s.encode_utf16() {
        match unit {
            0x08 => out.push_str("\\b"),
            0x09 => out.push_str("\\t"),
            0x0A => out.push_str("\\n"),
            0x0C => out.push_str("\\f"),
            0x0D => out.push_str("\\r"),
            0x22 => out.push_str("\\\""),
            0x27 => out.push_str("\\'"),
            0x5C => out.push_str("\\\\"),
            0x20..=0x7E => out.push(unit as u8 as char),
            _ => out.push_str(&format!("\\u{unit:04x}")),
        }
    }
    out
}

// Deviation: the JSON/`column()` position of a lexical error is the offending character's offset
// (the query length at end of input); the message keeps JavaCC's own column and report, whose
// rules (end column, peeking past a bad last character, prefix only beyond two characters) we
// reconstructed from JavaCC's token manager and one message seen in the wild (`CI/CD`).
fn lexical_message(column: usize, encountered: Option<char>, prefix: &str, state: u8) -> String {
    let mut m = format!("Lexical error at line 1, column {column}.  Encountered: ");
    match encountered {
        None => m.push_str("<EOF>"),
        Some(c) => m.push_str(&format!(
            "'{}' ({})",
            java_add_escapes(&c.to_string()),
            c as u32
        )),
    }
    if !prefix.is_empty() {
        m.push_str(&format!(" after prefix \"{}\"", java_add_escapes(prefix)));
    }
    // JavaCC omits its state 0, which in Lucene's grammar is Boost, not DEFAULT (2).
    if state != 0 {
        m.push_str(&format!(" (in lexical state {state})"));
    }
    m
}

fn syntax_message(column: usize, found: TokenKind, image: &str, expected: &[TokenKind]) -> String {
    let mut m = String::from("Encountered \"");
    if found == TokenKind::Eof {
        m.push_str("<EOF>");
    } else {
        m.push_str(&format!(
            " {} \"{} \"",
            found.image(),
            java_add_escapes(image)
        ));
    }
    m.push_str(&format!("\" at line 1, column {column}.\n"));
    m.push_str(if expected.len() == 1 {
        "Was expecting:\n    "
    } else {
        "Was expecting one of:\n    "
    });
    for k in expected {
        m.push_str(k.image());
        m.push(' ');
        if *k != TokenKind::Eof {
            m.push_str("...");
        }
        m.push_str("\n    ");
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_message_has_javacc_shape() {
        let e = ParseError::syntax(
            "foo bar)",
            7,
            TokenKind::RParen,
            ")",
            vec![TokenKind::Eof, TokenKind::And],
        );
        assert_eq!(e.column(), 7);
        assert_eq!(e.class(), ErrorClass::Syntax);
        let m = e.to_string();
        assert!(
            m.starts_with("Cannot parse 'foo bar)': Encountered \" \")\" \") \"\" at line 1, column 7.\nWas expecting one of:\n    <EOF> \n    <AND> ...\n"),
            "{m}"
        );
    }

    #[test]
    fn runtime_class_prints_bare_cause() {
        let e = ParseError::new("\"a b\"~-1", 5, Cause::NegativeSlop { slop: -1 });
        assert_eq!(e.to_string(), "Slop must be >= 0, got -1");
        assert_eq!(e.class(), ErrorClass::Runtime);
    }

    #[test]
    fn columns_count_utf16_units() {
        assert_eq!(column_of("a\u{1F600}b", 5), 3);
        assert_eq!(column_of("été", 3), 2);
    }
}
