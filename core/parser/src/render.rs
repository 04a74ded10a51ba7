//! `Query.toString(field)` as Lucene prints it, including Java's `Float.toString` for boosts.

use std::fmt::{self, Write};

use super::ast::{Occur, Query};
use super::java_text::{write_int, write_java_float};

impl Query<'_> {
    /// The text Lucene's `toString(field)` gives: `field:` prefixes only where the node's field
    /// differs from `field`.
    pub fn to_string_field(&self, field: &str) -> String {
        let mut out = String::new();
        self.write_field(field, &mut out)
            .expect("writing to a String cannot fail");
        out
    }

    /// Whether the rendering of [`Query::to_string_field`] is exactly `expected`, byte for
    /// byte, without building it: each piece is compared with the next bytes of `expected` as it
    /// is rendered, and the first difference stops the rendering.
    pub fn renders_as(&self, field: &str, expected: &str) -> bool {
        let mut rest = Matcher(expected.as_bytes());
        self.write_field(field, &mut rest).is_ok() && rest.0.is_empty()
    }

    /// Writes the rendering of [`Query::to_string_field`] to `out`; an error is `out`'s.
    pub fn write_field<W: Write + ?Sized>(&self, field: &str, out: &mut W) -> fmt::Result {
        let prefix = |out: &mut W, f: &str| {
            if f != field {
                out.write_str(f)?;
                out.write_char(':')?;
            }
            Ok(())
        };
        match self {
            Query::Term { field: f, text } => {
                prefix(out, f)?;
                out.write_str(text)
            }
            Query::Phrase {
                field: f,
                terms,
                slop,
            } => {
                prefix(out, f)?;
                out.write_char('"')?;
                for (i, t) in terms.iter().enumerate() {
                    if i > 0 {
                        out.write_char(' ')?;
                    }
                    out.write_str(t)?;
                }
                out.write_char('"')?;
                if *slop != 0 {
                    out.write_char('~')?;
                    write_int(out, i64::from(*slop))?;
                }
                Ok(())
            }
            Query::Prefix {
                field: f,
                prefix: p,
            } => {
                prefix(out, f)?;
                out.write_str(p)?;
                out.write_char('*')
            }
            Query::Wildcard { field: f, pattern } => {
                prefix(out, f)?;
                out.write_str(pattern)
            }
            Query::Fuzzy {
                field: f,
                text,
                max_edits,
            } => {
                prefix(out, f)?;
                out.write_str(text)?;
                out.write_char('~')?;
                write_int(out, i64::from(*max_edits))
            }
            Query::Regexp { field: f, pattern } => {
                prefix(out, f)?;
                out.write_char('/')?;
                out.write_str(pattern)?;
                out.write_char('/')
            }
            Query::Range {
                field: f,
                lower,
                upper,
                include_lower,
                include_upper,
            } => {
                prefix(out, f)?;
                out.write_char(if *include_lower { '[' } else { '{' })?;
                write_endpoint(out, lower.as_deref())?;
                out.write_str(" TO ")?;
                write_endpoint(out, upper.as_deref())?;
                out.write_char(if *include_upper { ']' } else { '}' })
            }
            Query::MatchAll => out.write_str("*:*"),
            Query::Boolean(clauses) => {
                for (i, c) in clauses.iter().enumerate() {
                    if i > 0 {
                        out.write_char(' ')?;
                    }
                    match c.occur {
                        Occur::Must => out.write_char('+')?,
                        Occur::Should => {}
                        Occur::MustNot => out.write_char('-')?,
                    }
                    if matches!(c.query, Query::Boolean(_)) {
                        out.write_char('(')?;
                        c.query.write_field(field, out)?;
                        out.write_char(')')?;
                    } else {
                        c.query.write_field(field, out)?;
                    }
                }
                Ok(())
            }
            Query::Boost { query, boost } => {
                out.write_char('(')?;
                query.write_field(field, out)?;
                out.write_str(")^")?;
                write_java_float(out, *boost)
            }
        }
    }
}

/// A [`Write`] that checks what is written against the bytes still expected, consuming them;
/// the first difference is an error, which ends the rendering.
struct Matcher<'e>(&'e [u8]);

impl Write for Matcher<'_> {
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let s = s.as_bytes();
        let Some((head, tail)) = self.0.split_at_checked(s.len()) else {
            return Err(fmt::Error);
        };
        // Pieces are short (a field, a term, an operator): a byte loop the compiler keeps
        // inline beats a call to `memcmp`.
        if head.iter().zip(s).any(|(a, b)| a != b) {
            return Err(fmt::Error);
        }
        self.0 = tail;
        Ok(())
    }

    #[inline]
    fn write_char(&mut self, c: char) -> fmt::Result {
        match self.0.split_first() {
            // Every character the renderer writes on its own is ASCII.
            Some((&b, tail)) if c.is_ascii() => {
                if b != c as u8 {
                    return Err(fmt::Error);
                }
                self.0 = tail;
                Ok(())
            }
            _ => self.write_str(c.encode_utf8(&mut [0; 4])),
        }
    }
}

fn write_endpoint<W: Write + ?Sized>(out: &mut W, end: Option<&str>) -> fmt::Result {
    match end {
        None => out.write_char('*'),
        Some("*") => out.write_str("\\*"),
        Some(t) => out.write_str(t),
    }
}

/// Lucene's `toString()` without a default field: every field is printed.
impl fmt::Display for Query<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_field("", f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{BooleanClause, Field};
    use std::borrow::Cow;

    #[test]
    fn boolean_nesting_and_prefixes() {
        let f: Field<'static> = Cow::Borrowed("field");
        let t = |fld: &Field<'static>, s: &str| Query::Term {
            field: fld.clone(),
            text: Cow::Owned(s.to_string()),
        };
        let inner = Query::Boolean(vec![
            BooleanClause {
                occur: Occur::Should,
                query: t(&f, "a"),
            },
            BooleanClause {
                occur: Occur::Should,
                query: t(&Cow::Borrowed("g"), "b"),
            },
        ]);
        let q = Query::Boolean(vec![
            BooleanClause {
                occur: Occur::Must,
                query: inner.clone(),
            },
            BooleanClause {
                occur: Occur::MustNot,
                query: Query::Boost {
                    query: Box::new(inner),
                    boost: 2.0,
                },
            },
        ]);
        assert_eq!(q.to_string_field("field"), "+(a g:b) -(a g:b)^2.0");
        assert_eq!(q.to_string(), "+(field:a g:b) -(field:a g:b)^2.0");
        let r = Query::Range {
            field: f.clone(),
            lower: Some("*".into()),
            upper: None,
            include_lower: true,
            include_upper: false,
        };
        assert_eq!(r.to_string_field("field"), "[\\* TO *}");
    }

    /// `renders_as` accepts exactly the rendering: no prefix of it, no longer text, and no text
    /// one byte away from it.
    #[test]
    fn renders_as_is_exact() {
        let q = Query::Boolean(vec![
            BooleanClause {
                occur: Occur::Must,
                query: Query::Phrase {
                    field: Cow::Borrowed("title"),
                    terms: vec![Cow::Borrowed("a"), Cow::Borrowed("b")],
                    slop: 12,
                },
            },
            BooleanClause {
                occur: Occur::MustNot,
                query: Query::Boost {
                    query: Box::new(Query::Fuzzy {
                        field: Cow::Borrowed("field"),
                        text: Cow::Borrowed("é"),
                        max_edits: 2,
                    }),
                    boost: 1.5,
                },
            },
        ]);
        let full = q.to_string_field("field");
        assert_eq!(full, "+title:\"a b\"~12 -(é~2)^1.5");
        assert!(q.renders_as("field", &full));
        assert!(!q.renders_as("other", &full));
        assert!(!q.renders_as("field", &format!("{full} ")));
        for (i, _) in full.char_indices() {
            assert!(!q.renders_as("field", &full[..i]), "prefix {i}");
        }
        for i in 0..full.len() {
            let mut bytes = full.clone().into_bytes();
            bytes[i] ^= 1;
            if let Ok(changed) = String::from_utf8(bytes) {
                assert!(!q.renders_as("field", &changed), "{changed:?}");
            }
        }
    }
}
