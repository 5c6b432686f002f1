//! Bytes → UTF-8 text: byte-order marks, declared charsets (HTTP header,
//! `<meta>`), and a `chardetng` guess for undeclared legacy pages, decoded by
//! `encoding_rs` (malformed sequences become U+FFFD, as in browsers).

use crate::error::ErrorKind;
use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{Encoding, UTF_8};
use std::borrow::Cow;

/// How far into an HTML document a `<meta charset>` is looked for (the
/// limit of the HTML standard's prescan).
const META_PRESCAN: usize = 1024;

/// How much of a file is checked for NUL bytes to tell binary files.
const BINARY_PROBE: usize = 8192;

/// Decodes a fetched web payload. The encoding is the first of: a BOM, the
/// `charset` of the `Content-Type` header, an HTML `<meta>` declaration,
/// UTF-8 if the bytes are valid UTF-8, else the `chardetng` guess.
pub(crate) fn decode_web(bytes: &[u8], content_type: Option<&str>, html: bool) -> String {
    if let Some((encoding, bom)) = Encoding::for_bom(bytes) {
        return decode(encoding, &bytes[bom..]);
    }
    let declared = content_type
        .and_then(charset_param)
        .or_else(|| html.then(|| meta_charset(bytes)).flatten());
    if let Some(encoding) = declared {
        return decode(encoding, bytes);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_string();
    }
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    decode(detector.guess(None, Utf8Detection::Allow), bytes)
}

/// Decodes a local text or HTML file: a BOM decides if present; then a file
/// with NUL bytes in its first 8 KiB is binary; an HTML file may declare its
/// charset in `<meta>`; anything else must be UTF-8 (or is decoded lossily
/// when `lossy`).
pub(crate) fn decode_file(bytes: Vec<u8>, html: bool, lossy: bool) -> Result<String, ErrorKind> {
    if let Some((encoding, bom)) = Encoding::for_bom(&bytes) {
        return Ok(decode(encoding, &bytes[bom..]));
    }
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_PROBE)]).is_some() {
        return Err(ErrorKind::Binary);
    }
    if let Some(encoding) = html.then(|| meta_charset(&bytes)).flatten() {
        if encoding != UTF_8 {
            return Ok(decode(encoding, &bytes));
        }
    }
    // Valid UTF-8 (the usual case) becomes the text without a copy.
    String::from_utf8(bytes).or_else(|err| decode_utf8(err.as_bytes(), lossy).map(Cow::into_owned))
}

/// Reads `bytes` as UTF-8: borrowed when valid; when not, an
/// [`ErrorKind::InvalidUtf8`] naming the first bad byte, or with `lossy` a
/// copy with U+FFFD for each bad sequence. One rule for JSONL lines and text
/// files, so that `lossy` means the same everywhere.
pub fn decode_utf8(bytes: &[u8], lossy: bool) -> Result<Cow<'_, str>, ErrorKind> {
    // SIMD validation first (several times faster); the standard library's on failure only,
    // for where the invalid bytes start.
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return Ok(Cow::Borrowed(text));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Cow::Borrowed(text)),
        Err(_) if lossy => Ok(String::from_utf8_lossy(bytes)),
        Err(err) => Err(ErrorKind::InvalidUtf8 {
            valid_up_to: err.valid_up_to(),
        }),
    }
}

fn decode(encoding: &'static Encoding, bytes: &[u8]) -> String {
    encoding.decode_without_bom_handling(bytes).0.into_owned()
}

/// The encoding named by a `charset=` parameter (of a Content-Type value).
fn charset_param(content_type: &str) -> Option<&'static Encoding> {
    let lower = content_type.to_ascii_lowercase();
    let at = lower.find("charset")?;
    label_after(&content_type.as_bytes()[at + "charset".len()..])
}

/// The encoding declared by `<meta charset=...>` or `<meta http-equiv
/// content="...; charset=...">` in the first 1024 bytes. As the HTML standard
/// says, a declared UTF-16 means UTF-8 (the bytes could not be read otherwise).
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_PRESCAN)];
    let lower = head.to_ascii_lowercase();
    memchr::memmem::find_iter(&lower, b"charset")
        .filter(|&at| lower[..at].windows(5).any(|w| w == b"<meta"))
        .find_map(|at| label_after(&head[at + b"charset".len()..]))
        .map(Encoding::output_encoding)
}

/// Parses `= "label"` (spaces and quotes optional) into an encoding.
fn label_after(rest: &[u8]) -> Option<&'static Encoding> {
    let rest = rest
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    let rest = rest
        .strip_prefix(b"\"")
        .or_else(|| rest.strip_prefix(b"'"))
        .unwrap_or(rest);
    let end = rest
        .iter()
        .position(|&b| matches!(b, b'"' | b'\'' | b';' | b'>' | b'/') || b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    Encoding::for_label(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Validating with SIMD first changes nothing: the same borrowed text, or the same
        /// first bad byte, as the standard library's check alone (valid text of every length,
        /// and text with one byte broken).
        #[test]
        fn utf8_decoding_agrees_with_the_standard_library(
            text in "(.|[a-z ]{1,40}){0,120}",
            broken in proptest::option::of((proptest::num::usize::ANY, 0x80u8..)),
        ) {
            let mut bytes = text.into_bytes();
            if let (Some((at, byte)), false) = (broken, bytes.is_empty()) {
                let at = at % bytes.len();
                bytes[at] = byte;
            }
            match (decode_utf8(&bytes, false), std::str::from_utf8(&bytes)) {
                (Ok(Cow::Borrowed(text)), Ok(expected)) => proptest::prop_assert_eq!(text, expected),
                (Err(ErrorKind::InvalidUtf8 { valid_up_to }), Err(err)) => {
                    proptest::prop_assert_eq!(valid_up_to, err.valid_up_to())
                }
                (got, expected) => proptest::prop_assert!(false, "{:?} against {:?}", got, expected),
            }
        }
    }

    #[test]
    fn web_decoding_order() {
        // Header charset.
        assert_eq!(
            decode_web(b"caf\xe9", Some("text/plain; charset=ISO-8859-1"), false),
            "café"
        );
        // <meta charset>.
        let page = b"<html><head><meta charset=\"windows-1251\"></head>\xcf\xf0\xe8\xe2\xe5\xf2";
        assert!(decode_web(page, Some("text/html"), true).ends_with("Привет"));
        // <meta http-equiv>.
        let page =
            b"<meta http-equiv=Content-Type content='text/html; charset=koi8-r'>\xf0\xd2\xc9";
        assert!(decode_web(page, None, true).ends_with("При"));
        // BOM wins.
        assert_eq!(
            decode_web(b"\xef\xbb\xbfhi", Some("text/plain; charset=latin1"), false),
            "hi"
        );
        // Valid UTF-8 without a declaration.
        assert_eq!(decode_web("naïve".as_bytes(), None, true), "naïve");
        // Undeclared legacy bytes: chardetng guesses.
        let guessed = decode_web(
            b"Der B\xe4r und die M\xf6we gr\xfc\xdfen die \xc4rzte \xfcberall.",
            None,
            false,
        );
        assert_eq!(guessed, "Der Bär und die Möwe grüßen die Ärzte überall.");
    }

    #[test]
    fn file_decoding() {
        assert_eq!(
            decode_file(b"plain".to_vec(), false, false).unwrap(),
            "plain"
        );
        assert!(matches!(
            decode_file(b"a\0b".to_vec(), false, false),
            Err(ErrorKind::Binary)
        ));
        assert!(matches!(
            decode_file(b"ab\xff".to_vec(), false, false),
            Err(ErrorKind::InvalidUtf8 { valid_up_to: 2 })
        ));
        assert_eq!(
            decode_file(b"ab\xff".to_vec(), false, true).unwrap(),
            "ab\u{fffd}"
        );
        let utf16 = b"\xff\xfeh\0i\0";
        assert_eq!(decode_file(utf16.to_vec(), false, false).unwrap(), "hi");
        let latin = b"<meta charset=latin1><p>caf\xe9";
        assert!(decode_file(latin.to_vec(), true, false)
            .unwrap()
            .ends_with("café"));
    }
}
