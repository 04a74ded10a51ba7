//! `Query.toString(field)` as Lucene prints it, including Java's `Float.toString` for boosts.

use std::fmt::{self, Write};

use super::ast::{Occur, Query};

impl Query<'_> {
    /// The text Lucene's `toString(field)` gives: `field:` prefixes only where the node's field
    /// differs from `field`.
    pub fn to_string_field(&self, field: &str) -> String {
        let mut out = String::new();
        self.write_field(field, &mut out);
        out
    }

    /// Appends the rendering of [`Query::to_string_field`] to `out`.
    pub fn write_field(&self, field: &str, out: &mut String) {
        let prefix = |out: &mut String, f: &str| {
            if f != field {
                out.push_str(f);
                out.push(':');
            }
        };
        match self {
            Query::Term { field: f, text } => {
                prefix(out, f);
                out.push_str(text);
            }
            Query::Phrase {
                field: f,
                terms,
                slop,
            } => {
                prefix(out, f);
                out.push('"');
                for (i, t) in terms.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(t);
                }
                out.push('"');
                if *slop != 0 {
                    let _ = write!(out, "~{slop}");
                }
            }
            Query::Prefix {
                field: f,
                prefix: p,
            } => {
                prefix(out, f);
                out.push_str(p);
                out.push('*');
            }
            Query::Wildcard { field: f, pattern } => {
                prefix(out, f);
                out.push_str(pattern);
            }
            Query::Fuzzy {
                field: f,
                text,
                max_edits,
            } => {
                prefix(out, f);
                out.push_str(text);
                let _ = write!(out, "~{max_edits}");
            }
            Query::Regexp { field: f, pattern } => {
                prefix(out, f);
                out.push('/');
                out.push_str(pattern);
                out.push('/');
            }
            Query::Range {
                field: f,
                lower,
                upper,
                include_lower,
                include_upper,
            } => {
                prefix(out, f);
                out.push(if *include_lower { '[' } else { '{' });
                push_endpoint(out, lower.as_deref());
                out.push_str(" TO ");
                push_endpoint(out, upper.as_deref());
                out.push(if *include_upper { ']' } else { '}' });
            }
            Query::MatchAll => out.push_str("*:*"),
            Query::Boolean(clauses) => {
                for (i, c) in clauses.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(match c.occur {
                        Occur::Must => "+",
                        Occur::Should => "",
                        Occur::MustNot => "-",
                    });
                    if matches!(c.query, Query::Boolean(_)) {
                        out.push('(');
                        c.query.write_field(field, out);
                        out.push(')');
                    } else {
                        c.query.write_field(field, out);
                    }
                }
            }
            Query::Boost { query, boost } => {
                out.push('(');
                query.write_field(field, out);
                out.push_str(")^");
                out.push_str(&java_float_to_string(*boost));
            }
        }
    }
}

fn push_endpoint(out: &mut String, end: Option<&str>) {
    match end {
        None => out.push('*'),
        Some("*") => out.push_str("\\*"),
        Some(t) => out.push_str(t),
    }
}

/// Lucene's `toString()` without a default field: every field is printed.
impl fmt::Display for Query<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_field(""))
    }
}

/// Java's `Float.toString(f)` (JDK 19+ shortest-digits algorithm, as Rust's): plain decimal with at
/// least one fractional digit for 1e-3 <= |f| < 1e7 (`2.0`, `0.5`), otherwise `1.0E-4` style.
pub fn java_float_to_string(f: f32) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0.0");
    }
    // Rust's `{:e}` prints the shortest digits that round-trip, e.g. `1.5e-4` or `2e0`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-3..7).contains(&exp) {
        let mut out = String::from(sign);
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
        out
    } else {
        let rest = if digits.len() > 1 { &digits[1..] } else { "0" };
        format!("{sign}{}.{rest}E{exp}", &digits[..1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::ast::{BooleanClause, Field};
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
            (0.1, "0.1"),
            (100.0, "100.0"),
        ] {
            assert_eq!(java_float_to_string(f), s, "{f}");
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
}
