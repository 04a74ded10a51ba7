//! `Query.toString(field)` as Lucene prints it, including Java's `Float.toString` for boosts.

use std::fmt::{self, Write};

use super::ast::{Occur, Query};

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

/// Writes `n` in decimal, as Java's `Integer.toString` (and Rust's `{}`) do, without the
/// formatting machinery.
fn write_int<W: Write + ?Sized>(out: &mut W, n: i64) -> fmt::Result {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut m = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        out.write_char('-')?;
    }
    out.write_str(std::str::from_utf8(&buf[at..]).expect("ASCII digits"))
}

/// Lucene's `toString()` without a default field: every field is printed.
impl fmt::Display for Query<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_field("", f)
    }
}

/// Java's `Float.toString(f)` (JDK 19+ shortest-digits algorithm, as Rust's): plain decimal with at
/// least one fractional digit for 1e-3 <= |f| < 1e7 (`2.0`, `0.5`), otherwise `1.0E-4` style.
pub fn java_float_to_string(f: f32) -> String {
    let mut out = String::new();
    write_java_float(&mut out, f).expect("writing to a String cannot fail");
    out
}

/// A fixed buffer the shortest digits of an `f32` fit in (`{:e}` gives at most 9 digits, a point,
/// `e`, a sign and 2 exponent digits).
struct Digits {
    buf: [u8; 24],
    len: usize,
}

impl Write for Digits {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes [`java_float_to_string`]'s text to `out` without allocating.
pub fn write_java_float<W: Write + ?Sized>(out: &mut W, f: f32) -> fmt::Result {
    if f.is_nan() {
        return out.write_str("NaN");
    }
    if f.is_infinite() {
        return out.write_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    }
    if f.is_sign_negative() {
        out.write_char('-')?;
    }
    let f = f.abs();
    if f == 0.0 {
        return out.write_str("0.0");
    }
    // Whole numbers below 1e7 (the usual boosts: `2.0`, `10.0`) need no digit generation.
    if f < 1.0e7 && f.fract() == 0.0 {
        write_int(out, f as i64)?;
        return out.write_str(".0");
    }
    // Below 2^14 an `f32` that is exactly a decimal with at most three fractional digits (`1.5`,
    // `0.25`, `2.125`) prints as that decimal: its half-ulp is under 0.0005, so no decimal with
    // fewer digits rounds to it, and it is the closest. `f * 10^d` is exact in `f64`.
    if f < 16384.0 {
        for (digits, scale) in [(1, 10u32), (2, 100), (3, 1000)] {
            let scaled = f64::from(f) * f64::from(scale);
            if scaled.fract() == 0.0 {
                let n = scaled as u32;
                write_int(out, i64::from(n / scale))?;
                out.write_char('.')?;
                let frac = n % scale;
                for z in (1..digits).rev() {
                    if frac < 10u32.pow(z) {
                        out.write_char('0')?;
                    }
                }
                return write_int(out, i64::from(frac));
            }
        }
    }
    // Rust's `{:e}` prints the shortest digits that round-trip, e.g. `1.5e-4` or `2e0`.
    let mut sci = Digits {
        buf: [0; 24],
        len: 0,
    };
    write!(sci, "{f:e}")?;
    let sci = std::str::from_utf8(&sci.buf[..sci.len]).expect("ASCII");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (lead, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The digits are `lead` (one digit) then `frac`; the point goes after digit `exp + 1`.
    if (-3..7).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize; // digits of `frac` before the point
            out.write_str(lead)?;
            if frac.len() <= int_len {
                out.write_str(frac)?;
                for _ in frac.len()..int_len {
                    out.write_char('0')?;
                }
                out.write_str(".0")
            } else {
                out.write_str(&frac[..int_len])?;
                out.write_char('.')?;
                out.write_str(&frac[int_len..])
            }
        } else {
            out.write_str("0.")?;
            for _ in 0..(-exp - 1) {
                out.write_char('0')?;
            }
            out.write_str(lead)?;
            out.write_str(frac)
        }
    } else {
        out.write_str(lead)?;
        out.write_char('.')?;
        out.write_str(if frac.is_empty() { "0" } else { frac })?;
        out.write_char('E')?;
        write_int(out, i64::from(exp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{BooleanClause, Field};
    use std::borrow::Cow;

    #[test]
    fn java_float_formatting() {
        for (f, s) in [
            (2.0f32, "2.0"),
            (0.5, "0.5"),
            (10.0, "10.0"),
            (2.3, "2.3"),
            (0.0, "0.0"),
            (1.0e-4, "1.0E-4"),
            (0.001, "0.001"),
            (1.0e7, "1.0E7"),
            (9999999.0, "9999999.0"),
            (123.456, "123.456"),
            (1.5e10, "1.5E10"),
            (f32::INFINITY, "Infinity"),
            (f32::NEG_INFINITY, "-Infinity"),
            (f32::NAN, "NaN"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (-2.0, "-2.0"),
            (-0.0, "-0.0"),
            (-0.25, "-0.25"),
            (1.5, "1.5"),
            (12.5, "12.5"),
            (1234567.0, "1234567.0"),
            (1234567.5, "1234567.5"),
            (0.0015, "0.0015"),
            (9.0e-4, "9.0E-4"),
            (1.0e-10, "1.0E-10"),
            (f32::MAX, "3.4028235E38"),
            (f32::MIN_POSITIVE, "1.1754944E-38"),
            (0.125, "0.125"),
            (2.05, "2.05"),
            (0.005, "0.005"),
            (16383.875, "16383.875"),
            (16384.5, "16384.5"),
        ] {
            assert_eq!(java_float_to_string(f), s, "{f}");
        }
    }

    /// The fast paths for whole numbers and short exact decimals print what the general
    /// shortest-digits path prints, for every `f32` they can take below 2^14 at steps of 1/8
    /// (all exact) and for a sweep of inexact values.
    #[test]
    fn fast_float_paths_agree_with_the_general_path() {
        let general = |f: f32| {
            let s = format!("{f:e}");
            let (m, e) = s.split_once('e').unwrap();
            let e: i32 = e.parse().unwrap();
            let digits: String = m.chars().filter(|c| *c != '.').collect();
            assert!((-3..7).contains(&e), "{f}");
            if e >= 0 {
                let int_len = e as usize + 1;
                if digits.len() <= int_len {
                    format!("{digits}{}.0", "0".repeat(int_len - digits.len()))
                } else {
                    format!("{}.{}", &digits[..int_len], &digits[int_len..])
                }
            } else {
                format!("0.{}{digits}", "0".repeat((-e - 1) as usize))
            }
        };
        for i in 1..(16384 * 8) {
            let f = i as f32 / 8.0;
            assert_eq!(java_float_to_string(f), general(f), "{f}");
        }
        for i in 1..20000 {
            let f = i as f32 * 0.37 + 0.001;
            assert_eq!(java_float_to_string(f), general(f), "{f}");
        }
    }

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
