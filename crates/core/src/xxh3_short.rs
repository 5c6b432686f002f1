//! XXH3-64 (seed 0, default secret) of inputs of 4 to 8 bytes in closed form, one at a time
//! and over every window of a byte string at once: the hash of each character 5-shingle of
//! the default profile, the single costliest step of fingerprinting.
//!
//! For 4 to 8 bytes the specification's hash is: the first and the last four bytes as one
//! 64-bit word (last four low, first four high), XOR-ed with two words of the secret, then the
//! `rrmxmx` avalanche with the length. [`xxh3_64_4to8`] is that, inlined, bit for bit
//! `xxhash_rust::xxh3::xxh3_64` (a property test checks every length); [`xxh3_64_windows`]
//! computes it for every `width`-byte window of a text, eight windows at a time with AVX-512,
//! four at a time with AVX2, whichever the processor has (chosen at run time), with the scalar
//! form otherwise.

use crate::hash::hash_each_window;

/// The shortest input of the closed form.
pub const MIN_LEN: usize = 4;
/// The longest input of the closed form.
pub const MAX_LEN: usize = 8;

/// `read_le64(secret + 8) ^ read_le64(secret + 16)` of XXH3's default secret.
const FLIP: u64 = 0x1cad_21f7_2c81_017c ^ 0xdb97_9083_e96d_d4de;
/// The multiplier of XXH3's `rrmxmx` avalanche.
const RRMXMX: u64 = 0x9fb2_1c65_1e98_df25;

/// XXH3-64 of `bytes`, which must be 4 to 8 bytes long (other lengths give a wrong value, not
/// a panic; callers check the length).
#[inline(always)]
pub fn xxh3_64_4to8(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    let first = read_le32(bytes, 0);
    let last = read_le32(bytes, len.saturating_sub(4));
    finish(u64::from(last) | u64::from(first) << 32, len as u64)
}

/// The 64-bit little-endian word at byte `at` of XXH3's default secret.
const fn secret64(at: usize) -> u64 {
    const SECRET: [u8; 56] = [
        0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad,
        0x1c, 0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3,
        0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc,
        0xff, 0x72, 0x21, 0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e,
    ];
    let mut word = 0u64;
    let mut i = 8;
    while i > 0 {
        i -= 1;
        word = word << 8 | SECRET[at + i] as u64;
    }
    word
}

/// The shortest input of [`xxh3_64_9to16`].
pub const MID_MIN_LEN: usize = 9;
/// The longest input of [`xxh3_64_9to16`].
pub const MID_MAX_LEN: usize = 16;

/// XXH3-64 (seed 0, default secret) of `bytes`, which must be 9 to 16 bytes long (a character
/// 5-shingle of Chinese, Japanese or Korean text is 15): the specification's form for that
/// length, inlined. The first and the last eight bytes, each XOR-ed with two words of the
/// secret, their 128-bit product folded, summed with the length, the byte-swapped first word
/// and the last, then XXH3's avalanche. Other lengths give a wrong value, not a panic.
#[inline(always)]
pub fn xxh3_64_9to16(bytes: &[u8]) -> u64 {
    const FLIP_LO: u64 = secret64(24) ^ secret64(32);
    const FLIP_HI: u64 = secret64(40) ^ secret64(48);
    let word = |chunk: Option<&[u8; 8]>| chunk.map_or(0, |&b| u64::from_le_bytes(b));
    let len = bytes.len();
    let lo = word(bytes.first_chunk()) ^ FLIP_LO;
    let hi = word(bytes.last_chunk()) ^ FLIP_HI;
    let product = u128::from(lo) * u128::from(hi);
    let folded = product as u64 ^ (product >> 64) as u64;
    let mut h = (len as u64)
        .wrapping_add(lo.swap_bytes())
        .wrapping_add(hi)
        .wrapping_add(folded);
    h ^= h >> 37;
    h = h.wrapping_mul(0x1656_6791_9e37_79f9);
    h ^ (h >> 32)
}

/// The four bytes at `at` as a little-endian number (zeros past the end).
#[inline(always)]
fn read_le32(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// The keyed `rrmxmx` avalanche of the packed input word.
#[inline(always)]
fn finish(input: u64, len: u64) -> u64 {
    let mut h = input ^ FLIP;
    h ^= h.rotate_left(49) ^ h.rotate_left(24);
    h = h.wrapping_mul(RRMXMX);
    h ^= (h >> 35).wrapping_add(len);
    h = h.wrapping_mul(RRMXMX);
    h ^ (h >> 28)
}

/// Writes into `out[j]` the XXH3-64 of `bytes[j..j + width]`, for `j` below `out.len()`.
/// `width` must be 4 to 8 and `bytes` at least `out.len() + width - 1` long; otherwise `out` is
/// left as it is past the last whole window.
pub fn xxh3_64_windows(bytes: &[u8], width: usize, out: &mut [u64]) {
    if !(MIN_LEN..=MAX_LEN).contains(&width) {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // SAFETY: the processor has the features `windows` is compiled for (checked above).
        let done = unsafe { avx512::windows(bytes, width, out) };
        return scalar_windows(&bytes[done..], width, &mut out[done..]);
    }
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: as above.
        let done = unsafe { avx2::windows(bytes, width, out) };
        return scalar_windows(&bytes[done..], width, &mut out[done..]);
    }
    scalar_windows(bytes, width, out)
}

/// [`xxh3_64_windows`] one window at a time: the portable path and the reference of the others.
pub fn scalar_windows(bytes: &[u8], width: usize, out: &mut [u64]) {
    hash_each_window(bytes, width, out, xxh3_64_4to8);
}

/// The in-lane byte shuffle (of a 16-byte load repeated in every 128-bit lane) that packs
/// windows `2k` and `2k + 1` into lane `k` for `width`: output byte `b` of window `j` is input
/// byte `j + width - 4 + b` (the last four bytes, low half) or `j + b - 4` (the first four,
/// high half).
#[cfg(target_arch = "x86_64")]
fn shuffle(width: usize) -> [u8; 64] {
    let mut indices = [0u8; 64];
    for (i, index) in indices.iter_mut().enumerate() {
        let (window, byte) = ((i / 8) % 2, i % 8);
        *index = if byte < 4 {
            window + width - 4 + byte
        } else {
            window + byte - 4
        } as u8
            + 2 * (i / 16) as u8;
    }
    indices
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    //! Eight windows per step: a 16-byte load, broadcast to the four 128-bit lanes of a 512-bit
    //! register, one in-lane byte shuffle that builds the eight packed input words (lane `k`
    //! holds windows `2k` and `2k + 1`, which need bytes 0 to 14 of the load at most), then
    //! the avalanche on eight 64-bit lanes (`vpmullq` is AVX-512 DQ). The last windows of a
    //! run take a masked load and a masked store (AVX-512 VL and BW), not the scalar path.

    use std::arch::x86_64::*;

    use super::{shuffle, FLIP, RRMXMX};

    /// Whether this processor runs [`windows`].
    pub fn available() -> bool {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512vl")
    }

    /// The hashes of the eight windows of `width` bytes that start in the first eight bytes of
    /// `chunk` (`shuffle` packs them for `width`, `len` holds `width` in every lane).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    fn eight(chunk: __m128i, shuffle: __m512i, len: __m512i) -> __m512i {
        let multiplier = _mm512_set1_epi64(RRMXMX as i64);
        let packed = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(chunk), shuffle);
        let mut h = _mm512_xor_si512(packed, _mm512_set1_epi64(FLIP as i64));
        h = _mm512_ternarylogic_epi64(
            h,
            _mm512_rol_epi64::<49>(h),
            _mm512_rol_epi64::<24>(h),
            0x96,
        );
        h = _mm512_mullo_epi64(h, multiplier);
        h = _mm512_xor_si512(h, _mm512_add_epi64(_mm512_srli_epi64::<35>(h), len));
        h = _mm512_mullo_epi64(h, multiplier);
        _mm512_xor_si512(h, _mm512_srli_epi64::<28>(h))
    }

    /// Hashes every whole window of `bytes` that `out` has room for, eight at a time: whole
    /// 16-byte loads while they stay inside `bytes`, then masked loads and stores for the last
    /// (fewer than eight) windows, so no window is left to the scalar path. Returns how many it
    /// wrote: `out.len()`, or fewer when `bytes` holds fewer whole windows.
    ///
    /// # Safety
    /// The processor must have AVX-512 F, BW, DQ and VL ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
    pub unsafe fn windows(bytes: &[u8], width: usize, out: &mut [u64]) -> usize {
        let count = out.len().min((bytes.len() + 1).saturating_sub(width));
        let indices = shuffle(width);
        // SAFETY (whole block): the caller guarantees the features. A whole load reads
        // `bytes[at..at + 16]` with `at + 16 <= bytes.len()`, a whole store writes
        // `out[at..at + 8]` with `at + 8 <= count <= out.len()`; a masked load reads only
        // `bytes[at..bytes.len()]` and a masked store writes only `out[at..count]` (masked-off
        // bytes are neither read nor written, and do not fault). All are unaligned accesses.
        // Window `at + k` (k < 8, width <= 8) needs bytes `at + k .. at + k + width`, inside
        // the 16 bytes loaded and, when stored, inside `bytes`: its garbage lanes are never
        // stored.
        unsafe {
            let shuffle = _mm512_loadu_si512(indices.as_ptr().cast());
            let len = _mm512_set1_epi64(width as i64);
            let mut at = 0;
            while at + 16 <= bytes.len() && at + 8 <= count {
                let chunk = _mm_loadu_si128(bytes.as_ptr().add(at).cast());
                _mm512_storeu_si512(out.as_mut_ptr().add(at).cast(), eight(chunk, shuffle, len));
                at += 8;
            }
            while at < count {
                let load = u16::MAX >> (16 - (bytes.len() - at).min(16));
                let chunk = _mm_maskz_loadu_epi8(load, bytes.as_ptr().add(at).cast());
                let store = u8::MAX >> (8 - (count - at).min(8));
                _mm512_mask_storeu_epi64(
                    out.as_mut_ptr().add(at).cast(),
                    store,
                    eight(chunk, shuffle, len),
                );
                at += 8;
            }
            count
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub mod avx2 {
    //! Four windows per step: the 16-byte load in both 128-bit lanes of a 256-bit register,
    //! the same in-lane shuffle as the AVX-512 path (its first two lanes), then the avalanche
    //! on four 64-bit lanes. AVX2 has no 64-bit multiply: each is three 32-bit ones
    //! (`vpmuludq`), and the rotations are shift pairs.

    use std::arch::x86_64::*;

    use super::{shuffle, FLIP, RRMXMX};

    /// Whether this processor runs [`windows`].
    pub fn available() -> bool {
        is_x86_feature_detected!("avx2")
    }

    /// The low 64 bits of `a * b` in each lane, `b_high` being `b >> 32`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn multiply(a: __m256i, b: __m256i, b_high: __m256i) -> __m256i {
        let cross = _mm256_add_epi64(
            _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), b),
            _mm256_mul_epu32(a, b_high),
        );
        _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64::<32>(cross))
    }

    /// `h` rotated left by `L` bits in each lane (`R` = 64 - `L`).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn rotate_left<const L: i32, const R: i32>(h: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_slli_epi64::<L>(h), _mm256_srli_epi64::<R>(h))
    }

    /// Hashes the first windows of `bytes` four at a time while a 16-byte load stays inside
    /// `bytes` and `out` has room; returns how many it wrote (a multiple of 4).
    ///
    /// # Safety
    /// The processor must have AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub unsafe fn windows(bytes: &[u8], width: usize, out: &mut [u64]) -> usize {
        let indices = shuffle(width);
        // SAFETY (whole block): the caller guarantees the feature. Every load reads
        // `indices[..32]` or `bytes[at..at + 16]` with `at + 16 <= bytes.len()`, and every
        // store writes `out[at..at + 4]` with `at + 4 <= out.len()`; all are unaligned.
        unsafe {
            let shuffle = _mm256_loadu_si256(indices.as_ptr().cast());
            let flip = _mm256_set1_epi64x(FLIP as i64);
            let multiplier = _mm256_set1_epi64x(RRMXMX as i64);
            let multiplier_high = _mm256_set1_epi64x((RRMXMX >> 32) as i64);
            let len = _mm256_set1_epi64x(width as i64);
            let mut at = 0;
            while at + 16 <= bytes.len() && at + 4 <= out.len() {
                let chunk = _mm_loadu_si128(bytes.as_ptr().add(at).cast());
                let packed = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(chunk), shuffle);
                let mut h = _mm256_xor_si256(packed, flip);
                h = _mm256_xor_si256(
                    h,
                    _mm256_xor_si256(rotate_left::<49, 15>(h), rotate_left::<24, 40>(h)),
                );
                h = multiply(h, multiplier, multiplier_high);
                h = _mm256_xor_si256(h, _mm256_add_epi64(_mm256_srli_epi64::<35>(h), len));
                h = multiply(h, multiplier, multiplier_high);
                h = _mm256_xor_si256(h, _mm256_srli_epi64::<28>(h));
                _mm256_storeu_si256(out.as_mut_ptr().add(at).cast(), h);
                at += 4;
            }
            at
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn closed_form_is_xxh3(bytes in proptest::collection::vec(any::<u8>(), MIN_LEN..=MAX_LEN)) {
            prop_assert_eq!(xxh3_64_4to8(&bytes), xxhash_rust::xxh3::xxh3_64(&bytes));
        }

        #[test]
        fn mid_closed_form_is_xxh3(
            bytes in proptest::collection::vec(any::<u8>(), MID_MIN_LEN..=MID_MAX_LEN),
        ) {
            prop_assert_eq!(xxh3_64_9to16(&bytes), xxhash_rust::xxh3::xxh3_64(&bytes));
        }

        #[test]
        fn every_path_hashes_every_window(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            width in MIN_LEN..=MAX_LEN,
        ) {
            let windows = (bytes.len() + 1).saturating_sub(width);
            let reference: Vec<u64> =
                bytes.windows(width).map(xxhash_rust::xxh3::xxh3_64).collect();
            let mut scalar = vec![0; windows];
            scalar_windows(&bytes, width, &mut scalar);
            prop_assert_eq!(&scalar, &reference);
            let mut dispatched = vec![0; windows];
            xxh3_64_windows(&bytes, width, &mut dispatched);
            prop_assert_eq!(&dispatched, &reference);
            #[cfg(target_arch = "x86_64")]
            if avx512::available() {
                let mut wide = vec![0; windows];
                // SAFETY: the features were checked just above.
                let done = unsafe { avx512::windows(&bytes, width, &mut wide) };
                prop_assert_eq!(done, windows, "every window, the last ones masked");
                prop_assert_eq!(&wide, &reference);
            }
            #[cfg(target_arch = "x86_64")]
            if avx2::available() {
                let mut wide = vec![0; windows];
                // SAFETY: the feature was checked just above.
                let done = unsafe { avx2::windows(&bytes, width, &mut wide) };
                prop_assert_eq!(done % 4, 0);
                prop_assert_eq!(&wide[..done], &reference[..done]);
            }
        }
    }

    #[test]
    fn the_simd_paths_run_here_when_the_processor_has_them() {
        // Says which path the property tests above exercised on this machine.
        #[cfg(target_arch = "x86_64")]
        eprintln!(
            "window hashing: AVX-512 {}, AVX2 {}",
            avx512::available(),
            avx2::available()
        );
        let text = b"the quick brown fox jumps over the lazy dog, again and again";
        let mut out = vec![0; text.len() - 4];
        xxh3_64_windows(text, 5, &mut out);
        assert_eq!(out[0], xxhash_rust::xxh3::xxh3_64(b"the q"));
        assert_eq!(out[out.len() - 1], xxhash_rust::xxh3::xxh3_64(b"again"));
        #[cfg(target_arch = "x86_64")]
        if avx2::available() {
            let mut four_at_a_time = vec![0; out.len()];
            // SAFETY: the feature was checked just above.
            let done = unsafe { avx2::windows(text, 5, &mut four_at_a_time) };
            assert!(done >= out.len() - 16, "{done} of {} windows", out.len());
            assert_eq!(four_at_a_time[..done], out[..done]);
        }
    }
}
