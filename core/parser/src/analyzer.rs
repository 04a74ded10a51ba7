//! The three test analyzers of Lucene's parser tests (`MockAnalyzer` configurations).
//!
//! Bare terms and phrases are tokenized; prefix, wildcard, fuzzy, regexp and range text only goes
//! through [`Analyzer::normalize`], which lowercases or not but never splits.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use super::options::OptionsError;

/// `MockTokenizer.DEFAULT_MAX_TOKEN_LENGTH`: longer runs are cut into tokens of this many chars.
const MAX_TOKEN_LENGTH: usize = 255;

/// One of Lucene's test analyzers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Analyzer {
    /// `MockTokenizer.SIMPLE` + lowercasing: runs of letters; digits and punctuation separate.
    #[default]
    Simple,
    /// `MockTokenizer.WHITESPACE`, no lowercasing.
    Whitespace,
    /// `MockTokenizer.WHITESPACE` + lowercasing (`new MockAnalyzer(random())`).
    WhitespaceLowercase,
}

const VALID: &str = "simple, whitespace, whitespace-lowercase";

/// Byte flags of [`Analyzer::single_token`]: a whitespace tokenizer separator.
const SEPARATOR: u8 = 1;
/// An ASCII uppercase letter.
const UPPER: u8 = 2;
/// A byte of a multi-byte UTF-8 sequence.
const NON_ASCII: u8 = 4;
/// Anything but an ASCII letter (the simple tokenizer's fast path takes letters only).
const NOT_LETTER: u8 = 8;

/// The flags of every byte.
static TEXT_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b.is_ascii_uppercase() {
            UPPER
        } else if b.is_ascii_lowercase() {
            0
        } else if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            SEPARATOR | NOT_LETTER
        } else if b >= 0x80 {
            NON_ASCII | NOT_LETTER
        } else {
            NOT_LETTER
        };
        i += 1;
    }
    t
};

impl Analyzer {
    /// Every analyzer.
    pub const ALL: [Analyzer; 3] = [
        Analyzer::Simple,
        Analyzer::Whitespace,
        Analyzer::WhitespaceLowercase,
    ];

    /// The analyzer's id on the command line.
    pub fn id(self) -> &'static str {
        match self {
            Analyzer::Simple => "simple",
            Analyzer::Whitespace => "whitespace",
            Analyzer::WhitespaceLowercase => "whitespace-lowercase",
        }
    }

    fn lowercases(self) -> bool {
        !matches!(self, Analyzer::Whitespace)
    }

    fn is_token_char(self, c: char) -> bool {
        match self {
            Analyzer::Simple => matches!(c,
                'A'..='Z' | 'a'..='z' | '\u{AA}' | '\u{B5}' | '\u{BA}' | '\u{C0}'..='\u{D6}'
                | '\u{D8}'..='\u{F6}' | '\u{F8}'..='\u{2C1}' | '\u{4E00}'..='\u{9FCC}'),
            _ => !matches!(c, ' ' | '\t' | '\r' | '\n'),
        }
    }

    /// The tokens of `text`, as the analyzer's token stream yields them (one position each).
    pub fn tokens(self, text: &str) -> Tokens<'_> {
        Tokens {
            analyzer: self,
            rest: text,
        }
    }

    /// Whether `text` is exactly one token for this analyzer (non-empty, under the length cut, no
    /// separator inside): `None` if not; otherwise whether [`Analyzer::normalize`] may change it.
    /// One branch-free pass over the bytes, so the parser can skip the tokenizer (and the copy)
    /// for the common one-word term.
    #[inline]
    pub fn single_token(self, text: &str) -> Option<bool> {
        let bytes = text.as_bytes();
        if bytes.is_empty() || bytes.len() > MAX_TOKEN_LENGTH {
            return None;
        }
        let seen = bytes
            .iter()
            .fold(0u8, |seen, &b| seen | TEXT_CLASS[b as usize]);
        match self {
            // ASCII letters only: other letters need the tokenizer's char classes.
            Analyzer::Simple if seen & NOT_LETTER == 0 => Some(seen & UPPER != 0),
            Analyzer::Whitespace if seen & SEPARATOR == 0 => Some(false),
            Analyzer::WhitespaceLowercase if seen & SEPARATOR == 0 => {
                Some(seen & (UPPER | NON_ASCII) != 0)
            }
            _ => None,
        }
    }

    /// `Analyzer.normalize()`: lowercasing for the lowercasing analyzers, identity otherwise.
    /// Borrows `text` when that leaves it unchanged (already lowercase, or no lowercasing).
    pub fn normalize(self, text: &str) -> Cow<'_, str> {
        if self.lowercases() {
            lowercase(text)
        } else {
            Cow::Borrowed(text)
        }
    }

    /// [`Analyzer::normalize`] of text that may already be owned: an owned string is reused
    /// when normalizing leaves it unchanged, a borrowed one stays borrowed.
    pub fn normalize_text(self, text: Cow<'_, str>) -> Cow<'_, str> {
        match text {
            Cow::Borrowed(s) => self.normalize(s),
            Cow::Owned(s) => match self.normalize(&s) {
                Cow::Borrowed(_) => Cow::Owned(s),
                Cow::Owned(lower) => Cow::Owned(lower),
            },
        }
    }
}

/// Lowercases `text` code point by code point, borrowing it when no character changes (the
/// common case for query text, which then costs a scan and no allocation).
fn lowercase(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    // Bytewise: an ASCII uppercase letter, or any non-ASCII byte, may need a copy.
    let mut first = 0;
    while first < bytes.len() && bytes[first].wrapping_sub(b'A') >= 26 && bytes[first] < 0x80 {
        first += 1;
    }
    if first == bytes.len() {
        return Cow::Borrowed(text);
    }
    if text[first..].is_ascii() {
        let mut out = text.to_string();
        out[first..].make_ascii_lowercase();
        return Cow::Owned(out);
    }
    let Some((i, _)) = text[first..]
        .char_indices()
        .find(|&(_, c)| java_lower(c) != c)
    else {
        return Cow::Borrowed(text);
    };
    let split = first + i;
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..split]);
    out.extend(text[split..].chars().map(java_lower));
    Cow::Owned(out)
}

/// Java's `Character.toLowerCase(int)`: the simple one-to-one mapping (Rust's is the full one).
#[inline]
fn java_lower(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    if c == '\u{130}' {
        return 'i';
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

impl fmt::Display for Analyzer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Analyzer {
    type Err = OptionsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "simple" => Ok(Analyzer::Simple),
            "whitespace" => Ok(Analyzer::Whitespace),
            "whitespace-lowercase" | "whitespace_lowercase" => Ok(Analyzer::WhitespaceLowercase),
            _ => Err(OptionsError::UnknownAnalyzer {
                given: s.to_string(),
                valid: VALID,
            }),
        }
    }
}

/// The token stream of one text; each token borrows from the text unless lowercasing changed it.
#[derive(Debug, Clone)]
pub struct Tokens<'t> {
    analyzer: Analyzer,
    rest: &'t str,
}

impl<'t> Iterator for Tokens<'t> {
    type Item = Cow<'t, str>;

    fn next(&mut self) -> Option<Cow<'t, str>> {
        let a = self.analyzer;
        let (start, end) = if a == Analyzer::Simple {
            let start = self.rest.find(|c| a.is_token_char(c))?;
            let mut end = self.rest.len();
            for (count, (i, c)) in self.rest[start..].char_indices().enumerate() {
                if !a.is_token_char(c) || count == MAX_TOKEN_LENGTH {
                    end = start + i;
                    break;
                }
            }
            (start, end)
        } else {
            // The separators are ASCII, so a byte scan finds them in UTF-8 text.
            let bytes = self.rest.as_bytes();
            let is_sep = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
            let start = bytes.iter().position(|b| !is_sep(b))?;
            let mut end = bytes[start..]
                .iter()
                .position(is_sep)
                .map_or(bytes.len(), |n| start + n);
            if end - start > MAX_TOKEN_LENGTH {
                if let Some((i, _)) = self.rest[start..end].char_indices().nth(MAX_TOKEN_LENGTH) {
                    end = start + i;
                }
            }
            (start, end)
        };
        let rest = self.rest;
        let token = &rest[start..end];
        self.rest = &rest[end..];
        Some(if a.lowercases() {
            lowercase(token)
        } else {
            Cow::Borrowed(token)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(a: Analyzer, s: &str) -> Vec<String> {
        a.tokens(s).map(Cow::into_owned).collect()
    }

    #[test]
    fn single_tokens_are_what_the_tokenizer_gives_alone() {
        let texts = [
            "xyz",
            "XyZ",
            "a1",
            "a-b",
            "",
            " ",
            "a b",
            "a\tb",
            "äö",
            "Äb",
            "a\u{3000}b",
            "ab.",
        ];
        let long = "a".repeat(MAX_TOKEN_LENGTH + 1);
        let edge = "b".repeat(MAX_TOKEN_LENGTH);
        for a in Analyzer::ALL {
            for t in texts.iter().copied().chain([long.as_str(), edge.as_str()]) {
                if let Some(changes) = a.single_token(t) {
                    assert_eq!(toks(a, t), [a.normalize(t).into_owned()], "{a} {t:?}");
                    if !changes {
                        assert!(matches!(a.normalize(t), Cow::Borrowed(_)), "{a} {t:?}");
                    }
                }
            }
            assert_eq!(a.single_token("xyz"), Some(false));
            assert!(a.single_token(&edge).is_some());
            assert_eq!(a.single_token(&long), None);
            assert_eq!(a.single_token("a b"), None);
        }
        assert_eq!(Analyzer::Simple.single_token("a1"), None);
        assert_eq!(Analyzer::Simple.single_token("Ab"), Some(true));
        assert_eq!(Analyzer::Whitespace.single_token("A1"), Some(false));
        assert_eq!(Analyzer::WhitespaceLowercase.single_token("äö"), Some(true));
    }

    proptest::proptest! {
        /// Where the single-token shortcut applies it gives what the tokenizer gives.
        #[test]
        fn single_token_shortcut_matches_the_tokenizer(t in "[a-zA-Z0-9 \t\u{e4}\u{c4}\u{130}\u{3000}.-]{0,12}") {
            for a in Analyzer::ALL {
                if let Some(changes) = a.single_token(&t) {
                    proptest::prop_assert_eq!(toks(a, &t), [a.normalize(&t).into_owned()]);
                    if !changes {
                        proptest::prop_assert!(matches!(a.normalize(&t), Cow::Borrowed(_)));
                    }
                }
            }
        }
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        let a = Analyzer::WhitespaceLowercase;
        assert!(matches!(a.normalize("xyz"), Cow::Borrowed("xyz")));
        assert!(matches!(a.normalize("äöü"), Cow::Borrowed("äöü")));
        assert_eq!(a.normalize("abC"), "abc");
        assert_eq!(a.normalize("aÄb\u{130}"), "aäbi");
        assert_eq!(a.normalize("xİY"), "xiy");
        assert!(matches!(
            Analyzer::Whitespace.normalize("AB"),
            Cow::Borrowed("AB")
        ));
        let owned = a.normalize_text(Cow::Owned("ab".to_string()));
        assert!(matches!(owned, Cow::Owned(ref s) if s == "ab"));
        assert!(matches!(
            a.tokens("ab Cd").next(),
            Some(Cow::Borrowed("ab"))
        ));
        assert_eq!(a.tokens("ab Cd").nth(1).as_deref(), Some("cd"));
    }

    #[test]
    fn simple_keeps_letters_only() {
        assert_eq!(
            toks(Analyzer::Simple, "Term1 a-b 3 ÄÖ"),
            ["term", "a", "b", "äö"]
        );
        assert!(toks(Analyzer::Simple, "123 ,.").is_empty());
        assert_eq!(Analyzer::Simple.normalize("Te?M1"), "te?m1");
    }

    #[test]
    fn whitespace_variants() {
        assert_eq!(toks(Analyzer::Whitespace, " A\tb-C\n"), ["A", "b-C"]);
        assert_eq!(
            toks(Analyzer::WhitespaceLowercase, "A\u{3000}B"),
            ["a\u{3000}b"]
        );
        assert_eq!(Analyzer::Whitespace.normalize("AB"), "AB");
    }

    #[test]
    fn long_runs_are_cut() {
        let long = "a".repeat(300);
        let t = toks(Analyzer::Simple, &long);
        assert_eq!(t.iter().map(String::len).collect::<Vec<_>>(), [255, 45]);
    }

    #[test]
    fn ids_round_trip() {
        for a in Analyzer::ALL {
            assert_eq!(a.id().parse::<Analyzer>(), Ok(a));
        }
        assert!("standard".parse::<Analyzer>().is_err());
    }
}
