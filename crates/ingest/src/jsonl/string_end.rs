//! The kernel of the JSON string scan: where a run of plain string bytes ends, at the first
//! `"`, `\` or control character (U+0000–U+001F, which JSON forbids raw in a string).
//!
//! `memchr::memchr2` finds `"` and `\` but not the control range, so the scan is a small
//! hand-written kernel: 64 bytes a step with AVX-512 BW, 32 with AVX2, 8 (SWAR) otherwise,
//! chosen at run time; [`string_end_reference`] is the byte-by-byte rule every path is tested
//! against.

/// The position of the first byte at or after `from` that is `"`, `\` or below 0x20, or
/// `bytes.len()` when there is none.
pub(crate) fn string_end(bytes: &[u8], from: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if simd::avx512_available() {
            // SAFETY: the processor has AVX-512 F and BW (checked just above).
            let rest = match unsafe { simd::string_end_avx512(bytes, from) } {
                Ok(found) => return found,
                Err(rest) => rest,
            };
            return string_end_words(bytes, rest);
        }
        if simd::avx2_available() {
            // SAFETY: the processor has AVX2 (checked just above).
            let rest = match unsafe { simd::string_end_avx2(bytes, from) } {
                Ok(found) => return found,
                Err(rest) => rest,
            };
            return string_end_words(bytes, rest);
        }
    }
    string_end_words(bytes, from)
}

/// Whether a byte ends a plain run of a JSON string.
#[inline]
fn is_string_end(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// [`string_end`] one byte at a time: the rule the other paths are tested against.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn string_end_reference(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| is_string_end(b))
        .map_or(bytes.len(), |p| from + p)
}

/// [`string_end`] eight bytes at a time (SWAR): the portable path.
///
/// Per byte `x` of a word, `(x - k) & !x & 0x80` is set when `x < k` (for `k` up to 0x80) and
/// zero-tests `x ^ c` for equality with `c`; a borrow can set a false flag only in a byte above
/// a true one, so the lowest flag is exact.
pub(crate) fn string_end_words(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, k: u64| x.wrapping_sub(k * ONES) & !x & HIGH;
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let found = below(x ^ (u64::from(b'"') * ONES), 1)
            | below(x ^ (u64::from(b'\\') * ONES), 1)
            | below(x, 0x20);
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    string_end_reference(bytes, i)
}

#[cfg(target_arch = "x86_64")]
mod simd {
    //! One load, three compares and a mask per 64 (AVX-512 BW) or 32 (AVX2) bytes.

    use std::arch::x86_64::*;

    /// Whether this processor runs [`string_end_avx512`].
    pub(super) fn avx512_available() -> bool {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
    }

    /// Whether this processor runs [`string_end_avx2`].
    pub(super) fn avx2_available() -> bool {
        is_x86_feature_detected!("avx2")
    }

    /// The first string end at or after `from` among the whole 64-byte blocks from `from` on,
    /// or where the bytes left (fewer than 64) start.
    ///
    /// # Safety
    /// The processor must have AVX-512 F and BW ([`avx512_available`]).
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn string_end_avx512(bytes: &[u8], from: usize) -> Result<usize, usize> {
        let quote = _mm512_set1_epi8(b'"' as i8);
        let backslash = _mm512_set1_epi8(b'\\' as i8);
        let space = _mm512_set1_epi8(0x20);
        let mut i = from;
        while i + 64 <= bytes.len() {
            // SAFETY: the caller guarantees the features; the load reads `bytes[i..i + 64]`,
            // inside `bytes` (checked by the loop condition), unaligned.
            let v = unsafe { _mm512_loadu_si512(bytes.as_ptr().add(i).cast()) };
            let found = _mm512_cmpeq_epi8_mask(v, quote)
                | _mm512_cmpeq_epi8_mask(v, backslash)
                | _mm512_cmplt_epu8_mask(v, space);
            if found != 0 {
                return Ok(i + found.trailing_zeros() as usize);
            }
            i += 64;
        }
        Err(i)
    }

    /// The first string end at or after `from` among the whole 32-byte blocks from `from` on,
    /// or where the bytes left (fewer than 32) start.
    ///
    /// # Safety
    /// The processor must have AVX2 ([`avx2_available`]).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn string_end_avx2(bytes: &[u8], from: usize) -> Result<usize, usize> {
        let quote = _mm256_set1_epi8(b'"' as i8);
        let backslash = _mm256_set1_epi8(b'\\' as i8);
        let control_max = _mm256_set1_epi8(0x1f);
        let mut i = from;
        while i + 32 <= bytes.len() {
            // SAFETY: the caller guarantees the feature; the load reads `bytes[i..i + 32]`,
            // inside `bytes` (checked by the loop condition), unaligned.
            let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(i).cast()) };
            // `x <= 0x1f` (unsigned) as `min(x, 0x1f) == x`.
            let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, control_max), v);
            let found = _mm256_or_si256(
                _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
                control,
            );
            let mask = _mm256_movemask_epi8(found) as u32;
            if mask != 0 {
                return Ok(i + mask.trailing_zeros() as usize);
            }
            i += 32;
        }
        Err(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bytes drawn mostly from plain text, with the ends and their neighbours (0x1f, 0x20,
    /// 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff) often enough to fall in every lane.
    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            8 => b'a'..=b'z',
            1 => prop::sample::select(vec![
                b'"', b'\\', 0, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff, b'\n',
            ]),
            1 => any::<u8>(),
        ];
        prop::collection::vec(byte, 0..300)
    }

    proptest! {
        #[test]
        fn every_path_finds_what_the_reference_finds(bytes in bytes(), from in 0usize..300) {
            let from = from.min(bytes.len());
            let expected = string_end_reference(&bytes, from);
            prop_assert_eq!(string_end_words(&bytes, from), expected);
            prop_assert_eq!(string_end(&bytes, from), expected);
            #[cfg(target_arch = "x86_64")]
            {
                if simd::avx512_available() {
                    // SAFETY: the features were checked just above.
                    let rest = unsafe { simd::string_end_avx512(&bytes, from) };
                    let found = rest.unwrap_or_else(|rest| string_end_reference(&bytes, rest));
                    prop_assert_eq!(found, expected);
                }
                if simd::avx2_available() {
                    // SAFETY: the feature was checked just above.
                    let rest = unsafe { simd::string_end_avx2(&bytes, from) };
                    let found = rest.unwrap_or_else(|rest| string_end_reference(&bytes, rest));
                    prop_assert_eq!(found, expected);
                }
            }
        }
    }

    #[test]
    fn one_end_in_every_lane_of_every_path() {
        for end in [b'"', b'\\', 0u8, 0x1f] {
            for len in 1..=130 {
                for at in 0..len {
                    let mut bytes = vec![b'x'; len];
                    bytes[at] = end;
                    assert_eq!(string_end(&bytes, 0), at);
                    assert_eq!(string_end_words(&bytes, 0), at);
                }
                assert_eq!(string_end(&vec![0x20; len], 0), len);
            }
        }
    }
}
