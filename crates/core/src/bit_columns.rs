//! Per-bit-column counts of many 64-bit hashes with SIMD byte counters: SimHash's bit counting
//! for a slice of hashes at once.
//!
//! Each hash becomes a 64-byte mask (byte *i* all ones when bit *i* is set) subtracted from 64
//! byte-wide counters, which are flushed into the 64-bit counts every 255 hashes, before a byte
//! can overflow. AVX-512 BW makes the mask in one instruction from the hash itself; AVX2 builds
//! it from a byte shuffle and a compare, 32 bits at a time. The path is chosen at run time;
//! [`crate::simhash::BitCounter`] keeps its own portable scheme when neither is there.

/// Hashes a byte counter can take before it must be flushed.
const FLUSH_EVERY: usize = u8::MAX as usize;

/// Whether [`add_columns`] has a SIMD path on this processor.
pub fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx512::available() || avx2::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Adds to `counts[i]` how many of `hashes` have bit *i* set, with the widest SIMD path this
/// processor has (one bit at a time without one).
pub fn add_columns(hashes: &[u64], counts: &mut [u64; 64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512::available() {
            // SAFETY: the processor has the feature `add_columns` is compiled for.
            return unsafe { avx512::add_columns(hashes, counts) };
        }
        if avx2::available() {
            // SAFETY: as above.
            return unsafe { avx2::add_columns(hashes, counts) };
        }
    }
    scalar_columns(hashes, counts)
}

/// [`add_columns`] one bit at a time: the reference of the SIMD paths.
pub fn scalar_columns(hashes: &[u64], counts: &mut [u64; 64]) {
    for hash in hashes {
        for (i, count) in counts.iter_mut().enumerate() {
            *count += (hash >> i) & 1;
        }
    }
}

/// Adds 64 byte counters (in bit order) to the 64-bit counts.
fn flush(bytes: &[u8; 64], counts: &mut [u64; 64]) {
    for (count, &byte) in counts.iter_mut().zip(bytes) {
        *count += u64::from(byte);
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    //! One masked byte subtraction per hash: the hash is the mask.

    use std::arch::x86_64::*;

    use super::{flush, FLUSH_EVERY};

    /// Whether this processor runs [`add_columns`].
    pub fn available() -> bool {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
    }

    /// [`super::add_columns`] with AVX-512.
    ///
    /// # Safety
    /// The processor must have AVX-512 F and BW ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn add_columns(hashes: &[u64], counts: &mut [u64; 64]) {
        let mut bytes = [0u8; 64];
        for chunk in hashes.chunks(FLUSH_EVERY) {
            let minus_one = _mm512_set1_epi8(-1);
            let mut counters = _mm512_setzero_si512();
            for &hash in chunk {
                // Subtracting -1 in the bytes whose bit is set adds one there.
                counters = _mm512_mask_sub_epi8(counters, hash, counters, minus_one);
            }
            // SAFETY: `bytes` is 64 bytes long; the store is unaligned.
            unsafe { _mm512_storeu_si512(bytes.as_mut_ptr().cast(), counters) };
            flush(&bytes, counts);
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    //! Two 32-byte masks per hash: each half of the hash broadcast, every byte given the hash
    //! byte its bit is in (an in-lane shuffle), then tested against its own bit.

    use std::arch::x86_64::*;

    use super::{flush, FLUSH_EVERY};

    /// Whether this processor runs [`add_columns`].
    pub fn available() -> bool {
        is_x86_feature_detected!("avx2")
    }

    /// [`super::add_columns`] with AVX2.
    ///
    /// # Safety
    /// The processor must have AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub unsafe fn add_columns(hashes: &[u64], counts: &mut [u64; 64]) {
        // Byte `b` of a 32-bit half reads hash byte `b / 8` and tests bit `b % 8` of it.
        let spread = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3,
            3, 3, 3,
        );
        let bit = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
        let mask = |half: u32| {
            let bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(half as i32), spread);
            _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit)
        };
        let mut bytes = [0u8; 64];
        for chunk in hashes.chunks(FLUSH_EVERY) {
            let (mut low, mut high) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            for &hash in chunk {
                // A set bit's byte is -1: subtracting it adds one.
                low = _mm256_sub_epi8(low, mask(hash as u32));
                high = _mm256_sub_epi8(high, mask((hash >> 32) as u32));
            }
            // SAFETY: `bytes` is 64 bytes long; both stores are unaligned and inside it.
            unsafe {
                _mm256_storeu_si256(bytes.as_mut_ptr().cast(), low);
                _mm256_storeu_si256(bytes.as_mut_ptr().add(32).cast(), high);
            }
            flush(&bytes, counts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Hashes with columns biased towards one or zero, so that counts of every size occur.
    fn hashes(max: usize) -> impl Strategy<Value = Vec<u64>> {
        (any::<u64>(), any::<u64>(), 0..max).prop_flat_map(|(ones, zeros, len)| {
            proptest::collection::vec(any::<u64>(), len)
                .prop_map(move |v| v.into_iter().map(|h| (h | ones) & !zeros).collect())
        })
    }

    proptest! {
        #[test]
        fn every_path_counts_every_column(hashes in hashes(1200)) {
            let mut reference = [0u64; 64];
            scalar_columns(&hashes, &mut reference);
            let mut dispatched = [0u64; 64];
            add_columns(&hashes, &mut dispatched);
            prop_assert_eq!(dispatched, reference);
            #[cfg(target_arch = "x86_64")]
            {
                if avx512::available() {
                    let mut counts = [0u64; 64];
                    // SAFETY: the features were checked just above.
                    unsafe { avx512::add_columns(&hashes, &mut counts) };
                    prop_assert_eq!(counts, reference);
                }
                if avx2::available() {
                    let mut counts = [0u64; 64];
                    // SAFETY: the feature was checked just above.
                    unsafe { avx2::add_columns(&hashes, &mut counts) };
                    prop_assert_eq!(counts, reference);
                }
            }
        }
    }

    #[test]
    fn a_column_of_all_ones_survives_many_flushes() {
        let hashes = vec![u64::MAX; 10 * FLUSH_EVERY + 3];
        let mut counts = [0u64; 64];
        add_columns(&hashes, &mut counts);
        assert_eq!(counts, [hashes.len() as u64; 64]);
        #[cfg(target_arch = "x86_64")]
        eprintln!(
            "column counting: AVX-512 {}, AVX2 {}",
            avx512::available(),
            avx2::available()
        );
    }
}
