//! `_id` encoding, byte-exact with Elasticsearch's `Uid.encodeId` / `Uid.decodeId`.
//!
//! The index stores ids as the bytes this module produces, so a 10-digit Rally id is 6 bytes
//! and a 20-character auto id is 15 bytes, exactly as in Elasticsearch's `_id` terms. Three
//! shapes, chosen in this order:
//!
//! | id | encoding |
//! |---|---|
//! | all ASCII digits | `0xFE`, then two digits per byte (high nibble first), `0x0F` ends an odd count |
//! | canonical URL-safe base64 without padding | the decoded bytes, prefixed by `0xFD` when the first byte is `>= 0xFD` |
//! | anything else | `0xFF`, then the UTF-8 bytes |

use super::error::VersionLookupError;

/// Marks a UTF-8 id.
pub const UTF8: u8 = 0xFF;
/// Marks a numeric id.
pub const NUMERIC: u8 = 0xFE;
/// Escapes a base64 id whose first decoded byte collides with a marker.
pub const BASE64_ESCAPE: u8 = 0xFD;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The `_id` codec (Elasticsearch `org.elasticsearch.index.mapper.Uid`).
pub struct Uid;

impl Uid {
    /// Encodes a document id into the bytes indexed as its `_id` term.
    pub fn encode_id(id: &str) -> Result<Vec<u8>, VersionLookupError> {
        if id.is_empty() {
            return Err(VersionLookupError::EmptyId);
        }
        let b = id.as_bytes();
        if b.iter().all(u8::is_ascii_digit) {
            Ok(encode_numeric(b))
        } else if is_url_base64_without_padding(b) {
            Ok(encode_base64(b))
        } else {
            let mut out = Vec::with_capacity(1 + b.len());
            out.push(UTF8);
            out.extend_from_slice(b);
            Ok(out)
        }
    }

    /// Decodes `_id` term bytes back into the id string.
    pub fn decode_id(bytes: &[u8]) -> Result<String, VersionLookupError> {
        let bad = |reason| VersionLookupError::BadEncodedId {
            bytes: bytes.to_vec(),
            reason,
        };
        match bytes.first() {
            None => Err(VersionLookupError::EmptyId),
            Some(&NUMERIC) => decode_numeric(&bytes[1..]).ok_or_else(|| {
                bad("a numeric id is 0xFE followed by digit nibbles, 0x0F ending an odd count")
            }),
            Some(&UTF8) => String::from_utf8(bytes[1..].to_vec())
                .map_err(|_| bad("a UTF-8 id is 0xFF followed by valid UTF-8")),
            Some(&BASE64_ESCAPE) => {
                if bytes.len() < 2 || bytes[1] < BASE64_ESCAPE {
                    // Elasticsearch decodes these anyway; we refuse what encode_id never makes
                    // so that decode and encode are exact inverses.
                    return Err(bad(
                        "0xFD only escapes base64 bytes starting with 0xFD..0xFF",
                    ));
                }
                Ok(base64_encode(&bytes[1..]))
            }
            Some(_) => Ok(base64_encode(bytes)),
        }
    }
}

fn encode_numeric(digits: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + digits.len().div_ceil(2));
    out.push(NUMERIC);
    for pair in digits.chunks(2) {
        let hi = pair[0] - b'0';
        let lo = pair.get(1).map_or(0x0F, |d| d - b'0');
        out.push((hi << 4) | lo);
    }
    out
}

fn decode_numeric(body: &[u8]) -> Option<String> {
    let mut s = String::with_capacity(body.len() * 2);
    for (i, &byte) in body.iter().enumerate() {
        let (hi, lo) = (byte >> 4, byte & 0x0F);
        if hi > 9 {
            return None;
        }
        s.push(char::from(b'0' + hi));
        if lo == 0x0F {
            // The end marker may only close the last byte.
            return (i + 1 == body.len()).then_some(s);
        }
        if lo > 9 {
            return None;
        }
        s.push(char::from(b'0' + lo));
    }
    (!s.is_empty()).then_some(s)
}

/// Elasticsearch accepts only canonical unpadded base64: the unused low bits of the last
/// character must be zero, so `xxx=` and `xxx` can never name the same document twice.
fn is_url_base64_without_padding(b: &[u8]) -> bool {
    let ok_last = match b.len() & 3 {
        0 => true,
        1 => false,
        2 => matches!(b[b.len() - 1], b'A' | b'Q' | b'g' | b'w'),
        _ => matches!(
            b[b.len() - 1],
            b'A' | b'E'
                | b'I'
                | b'M'
                | b'Q'
                | b'U'
                | b'Y'
                | b'c'
                | b'g'
                | b'k'
                | b'o'
                | b's'
                | b'w'
                | b'0'
                | b'4'
                | b'8'
        ),
    };
    ok_last
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

fn encode_base64(b: &[u8]) -> Vec<u8> {
    let decoded = base64_decode(b);
    if decoded.first().is_some_and(|&f| f >= BASE64_ESCAPE) {
        let mut out = Vec::with_capacity(decoded.len() + 1);
        out.push(BASE64_ESCAPE);
        out.extend_from_slice(&decoded);
        out
    } else {
        decoded
    }
}

fn sextet(c: u8) -> u32 {
    u32::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        _ => 63, // '_'; the caller has checked the alphabet.
    })
}

/// Decodes canonical URL-safe base64 that `is_url_base64_without_padding` accepted.
fn base64_decode(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() * 3 / 4);
    for chunk in b.chunks(4) {
        let mut acc = 0u32;
        for &c in chunk {
            acc = (acc << 6) | sextet(c);
        }
        match chunk.len() {
            4 => out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]),
            3 => out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
            _ => out.push((acc >> 4) as u8),
        }
    }
    out
}

/// URL-safe base64 without padding (Java's `Base64.getUrlEncoder().withoutPadding()`).
pub(crate) fn base64_encode(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let n = chunk.len();
        let acc = chunk.iter().fold(0u32, |a, &x| (a << 8) | u32::from(x)) << (8 * (3 - n));
        for i in 0..=n {
            s.push(char::from(ALPHABET[((acc >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numeric_ids_pack_two_digits_per_byte() {
        assert_eq!(
            Uid::encode_id("0000000042").unwrap(),
            [0xFE, 0x00, 0x00, 0x00, 0x00, 0x42]
        );
        assert_eq!(Uid::encode_id("123").unwrap(), [0xFE, 0x12, 0x3F]);
        assert_eq!(Uid::decode_id(&[0xFE, 0x12, 0x3F]).unwrap(), "123");
    }

    #[test]
    fn base64_ids_store_their_decoded_bytes() {
        // "AAAA" decodes to three zero bytes; 20 base64 characters decode to 15 bytes.
        assert_eq!(Uid::encode_id("AAAA").unwrap(), [0, 0, 0]);
        assert_eq!(Uid::encode_id("AAAAAAAAAAAAAAAAAAAA").unwrap().len(), 15);
        // "_w" decodes to 0xFF, which collides with the UTF-8 marker and is escaped.
        assert_eq!(Uid::encode_id("_w").unwrap(), [0xFD, 0xFF]);
        assert_eq!(Uid::decode_id(&[0xFD, 0xFF]).unwrap(), "_w");
    }

    #[test]
    fn non_canonical_base64_falls_back_to_utf8() {
        // "AB" has non-zero unused bits, so it is not canonical base64.
        assert_eq!(Uid::encode_id("AB").unwrap(), [0xFF, b'A', b'B']);
        assert_eq!(Uid::encode_id("a").unwrap(), [0xFF, b'a']);
        assert_eq!(Uid::encode_id("héllo").unwrap()[0], 0xFF);
    }

    #[test]
    fn empty_and_malformed_inputs_are_errors() {
        assert!(matches!(
            Uid::encode_id(""),
            Err(VersionLookupError::EmptyId)
        ));
        assert!(Uid::decode_id(&[]).is_err());
        assert!(Uid::decode_id(&[0xFE, 0xA1]).is_err());
        assert!(Uid::decode_id(&[0xFE, 0x1F, 0x22]).is_err());
        assert!(Uid::decode_id(&[0xFF, 0xC3]).is_err());
        assert!(Uid::decode_id(&[0xFD, 0x01]).is_err());
    }

    proptest! {
        #[test]
        fn any_id_round_trips(id in "\\PC{1,24}") {
            let enc = Uid::encode_id(&id).unwrap();
            prop_assert_eq!(Uid::decode_id(&enc).unwrap(), id);
        }

        #[test]
        fn numeric_ids_round_trip(id in "[0-9]{1,20}") {
            let enc = Uid::encode_id(&id).unwrap();
            prop_assert_eq!(enc[0], NUMERIC);
            prop_assert_eq!(enc.len(), 1 + id.len().div_ceil(2));
            prop_assert_eq!(Uid::decode_id(&enc).unwrap(), id);
        }

        #[test]
        fn random_bytes_round_trip_through_base64(bytes in proptest::collection::vec(any::<u8>(), 1..24)) {
            let id = base64_encode(&bytes);
            prop_assume!(!id.bytes().all(|c| c.is_ascii_digit()));
            let enc = Uid::encode_id(&id).unwrap();
            let body = if bytes[0] >= BASE64_ESCAPE { &enc[1..] } else { &enc[..] };
            prop_assert_eq!(body, &bytes[..]);
            prop_assert_eq!(Uid::decode_id(&enc).unwrap(), id);
        }

        #[test]
        fn encodings_are_injective(a in "[0-9A-Za-z_-]{1,8}", b in "[0-9A-Za-z_-]{1,8}") {
            prop_assume!(a != b);
            prop_assert_ne!(Uid::encode_id(&a).unwrap(), Uid::encode_id(&b).unwrap());
        }
    }
}
