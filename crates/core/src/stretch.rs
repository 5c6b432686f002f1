//! Splitting text into pure-ASCII and mixed stretches at boundaries that no Unicode text rule
//! crosses, so that the ASCII parts can take fast paths.
//!
//! A boundary is placed only between an ASCII white-space byte and a following ASCII byte. No
//! rule this crate applies reaches across such a point:
//! - UAX #29 word boundaries: white space before an ASCII character is always a word break
//!   (WB3d only joins white space to white space, and the look-ahead/look-behind rules WB6,
//!   WB7, WB11 and WB12 reach over one MidLetter/MidNum character, never over white space);
//! - Unicode normalisation: an ASCII character never composes with what precedes it, and the
//!   white space before it has nothing after it to compose with;
//! - the final-sigma rule of lower-casing: white space is neither cased nor case-ignorable, so
//!   the context scan stops there.
//!
//! Running a per-stretch algorithm on each stretch in order therefore gives exactly what it
//! gives on the whole text (a property test checks this for word segmentation).

/// Calls `visit(stretch, is_ascii)` for consecutive stretches covering `text`, in order.
pub(crate) fn for_each_stretch<'t>(text: &'t str, mut visit: impl FnMut(&'t str, bool)) {
    let bytes = text.as_bytes();
    let is_boundary = |i: usize| bytes[i - 1].is_ascii_whitespace() && bytes[i] < 0x80;
    let mut start = 0;
    while let Some(non_ascii) = find_non_ascii(bytes, start) {
        let mut low = non_ascii;
        while low > start && !is_boundary(low) {
            low -= 1;
        }
        if low > start {
            visit(&text[start..low], true);
        }
        let mut high = non_ascii + 1;
        while high < bytes.len() && !is_boundary(high) {
            high += 1;
        }
        visit(&text[low..high], false);
        start = high;
    }
    if start < bytes.len() {
        visit(&text[start..], true);
    }
}

/// Position of the first byte at or after `from` with the high bit set, eight bytes at a time.
pub(crate) fn find_non_ascii(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
        let high = word & 0x8080_8080_8080_8080;
        if high != 0 {
            return Some(i + (high.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes[i..].iter().position(|&b| b >= 0x80).map(|p| i + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretches(text: &str) -> Vec<(&str, bool)> {
        let mut out = Vec::new();
        for_each_stretch(text, |s, ascii| out.push((s, ascii)));
        out
    }

    #[test]
    fn ascii_parts_are_split_off_at_safe_boundaries() {
        assert_eq!(
            stretches("one two café three four"),
            [("one two ", true), ("café ", false), ("three four", true)]
        );
        assert_eq!(stretches("ΑΣa b"), [("ΑΣa ", false), ("b", true)]);
        assert_eq!(stretches("plain"), [("plain", true)]);
        assert_eq!(stretches("é"), [("é", false)]);
        assert!(stretches("").is_empty());
    }
}
