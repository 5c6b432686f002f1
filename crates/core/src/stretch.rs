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

/// Position of the first byte at or after `from` with the high bit set: 64 bytes at a time
/// with AVX-512 BW when the processor has it (chosen at run time), eight at a time otherwise.
pub(crate) fn find_non_ascii(bytes: &[u8], from: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // SAFETY: the processor has the features (checked just above).
        return match unsafe { avx512::find_non_ascii(bytes, from) } {
            Ok(found) => Some(found),
            Err(rest) => find_non_ascii_words(bytes, rest),
        };
    }
    find_non_ascii_words(bytes, from)
}

/// [`find_non_ascii`] eight bytes at a time: the portable path.
fn find_non_ascii_words(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
        let high = word & 0x8080_8080_8080_8080;
        if high != 0 {
            return Some(i + (high.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes
        .get(i..)?
        .iter()
        .position(|&b| b >= 0x80)
        .map(|p| i + p)
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    //! One load and one mask move (the bytes' high bits) per 64 bytes.

    use std::arch::x86_64::*;

    /// Whether this processor runs [`find_non_ascii`].
    pub(super) fn available() -> bool {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
    }

    /// The first byte at or after `from` with the high bit set among the whole 64-byte
    /// blocks from `from` on, or where the bytes left (fewer than 64) start.
    ///
    /// # Safety
    /// The processor must have AVX-512 F and BW ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn find_non_ascii(bytes: &[u8], from: usize) -> Result<usize, usize> {
        let mut i = from;
        while i + 64 <= bytes.len() {
            // SAFETY: the caller guarantees the features; the load reads `bytes[i..i + 64]`,
            // inside `bytes` (checked by the loop condition), unaligned.
            let high =
                unsafe { _mm512_movepi8_mask(_mm512_loadu_si512(bytes.as_ptr().add(i).cast())) };
            if high != 0 {
                return Ok(i + high.trailing_zeros() as usize);
            }
            i += 64;
        }
        Err(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretches(text: &str) -> Vec<(&str, bool)> {
        let mut out = Vec::new();
        for_each_stretch(text, |s, ascii| out.push((s, ascii)));
        out
    }

    proptest::proptest! {
        /// Every path finds the first non-ASCII byte from any start, past blocks of 64 and 8.
        #[test]
        fn non_ascii_bytes_are_found_on_every_path(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![20 => 0u8..0x80, 1 => 0x80u8..], 0..300),
            from in 0usize..310,
        ) {
            let expected = bytes.get(from..).and_then(|rest| {
                rest.iter().position(|&b| b >= 0x80).map(|p| from + p)
            });
            proptest::prop_assert_eq!(find_non_ascii_words(&bytes, from), expected);
            proptest::prop_assert_eq!(find_non_ascii(&bytes, from), expected);
        }
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
