//! Java's number text: `Float.parseFloat` (boosts and fuzzy similarities as the classic parser
//! reads them), `Float.toString` (boosts as `Query.toString` prints them) and `Integer.toString`.
//! Kept together because the round trip between them is what Lucene's output depends on.

use std::fmt::{self, Write};

/// Java's `Float.parseFloat`: surrounding control characters and spaces trimmed, optional sign,
/// `NaN`, `Infinity`, decimal with optional exponent, hex floats (`0x1p0`), and an optional
/// `f`/`F`/`d`/`D` suffix. `None` where Java throws `NumberFormatException`.
pub fn java_parse_float(s: &str) -> Option<f32> {
    let t = s.trim_matches(|c: char| c <= ' ');
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let value = match body {
        "NaN" => Some(f32::NAN),
        "Infinity" => Some(f32::INFINITY),
        _ => {
            let body = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
            if body.starts_with("0x") || body.starts_with("0X") {
                parse_hex_float(&body[2..])
            } else if is_java_decimal(body) {
                body.parse::<f32>().ok()
            } else {
                None
            }
        }
    }?;
    Some(if neg { -value } else { value })
}

fn is_java_decimal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == b.len()
}

fn parse_hex_float(s: &str) -> Option<f32> {
    let (mant, exp) = s.split_once(['p', 'P'])?;
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    if exp_digits.is_empty() || !exp_digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut value = 0f64;
    for c in int_part.chars() {
        value = value * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        value += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    let e: i32 = exp.parse().unwrap_or(if exp.starts_with('-') {
        i32::MIN
    } else {
        i32::MAX
    });
    Some((value * 2f64.powi(e.clamp(-2000, 2000))) as f32)
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

/// Writes `n` in decimal, as Java's `Integer.toString` (and Rust's `{}`) do, without the
/// formatting machinery.
pub(crate) fn write_int<W: Write + ?Sized>(out: &mut W, n: i64) -> fmt::Result {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_float_parsing_quirks() {
        assert_eq!(java_parse_float("2"), Some(2.0));
        assert_eq!(java_parse_float("1d"), Some(1.0));
        assert_eq!(java_parse_float("2f"), Some(2.0));
        assert_eq!(java_parse_float("0x1p0"), Some(1.0));
        assert_eq!(java_parse_float("0x1.8p1"), Some(3.0));
        assert!(java_parse_float("NaN").is_some_and(f32::is_nan));
        assert_eq!(java_parse_float("Infinity"), Some(f32::INFINITY));
        assert_eq!(java_parse_float("1e-1"), Some(0.1));
        assert_eq!(java_parse_float(".5"), Some(0.5));
        assert_eq!(java_parse_float("5."), Some(5.0));
        for bad in [
            "", "abc", "2b", "1e", "inf", "nan", ".", "-", "1.2.3", "0x1",
        ] {
            assert_eq!(java_parse_float(bad), None, "{bad}");
        }
    }

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
}
