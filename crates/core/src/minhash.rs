//! MinHash signatures (Broder) and Jaccard estimates.
//!
//! Each of the `num_perm` hash functions is `h_i(x) = high 32 bits of (a_i * x + b_i) mod 2^64`
//! (multiply-shift hashing) applied to the feature's 64-bit hash, with `a_i` odd; the
//! parameters come from a SplitMix64 stream started at the profile's seed, so a signature is the
//! same on every machine and run. The inner loop over permutations is branch-free and
//! vectorises.

use serde::{Deserialize, Serialize};

/// MinHash settings of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinHashOptions {
    /// Number of hash functions (signature length).
    pub num_perm: usize,
    /// Seed of the hash-function parameters.
    pub seed: u64,
}

impl Default for MinHashOptions {
    fn default() -> Self {
        MinHashOptions {
            num_perm: 128,
            seed: 1,
        }
    }
}

/// Computes MinHash signatures under fixed parameters.
///
/// ```
/// use neardup_core::minhash::{MinHasher, MinHashOptions, estimate_jaccard};
/// let hasher = MinHasher::new(MinHashOptions { num_perm: 256, seed: 7 });
/// let a = hasher.signature((0..100u64).map(|i| i * 7919));
/// let b = hasher.signature((50..150u64).map(|i| i * 7919));
/// let estimate = estimate_jaccard(&a, &b);
/// assert!((estimate - 50.0 / 150.0).abs() < 0.1);
/// ```
#[derive(Debug, Clone)]
pub struct MinHasher {
    multipliers: Vec<u64>,
    increments: Vec<u64>,
}

impl MinHasher {
    /// Derives the `num_perm` hash functions from `seed`.
    pub fn new(options: MinHashOptions) -> Self {
        let mut state = options.seed;
        let mut next = move || {
            // SplitMix64.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut multipliers = Vec::with_capacity(options.num_perm);
        let mut increments = Vec::with_capacity(options.num_perm);
        for _ in 0..options.num_perm {
            multipliers.push(next() | 1);
            increments.push(next());
        }
        MinHasher {
            multipliers,
            increments,
        }
    }

    /// Number of hash functions.
    pub fn num_perm(&self) -> usize {
        self.multipliers.len()
    }

    /// An all-maximum signature, the identity of [`MinHasher::update`].
    pub fn empty_signature(&self) -> Vec<u32> {
        vec![u32::MAX; self.num_perm()]
    }

    /// Folds one feature hash into `signature`.
    ///
    /// The loop is compiled for AVX-512 (eight 64-bit multiplies an instruction), AVX2 and the
    /// baseline, and chosen at run time: the baseline has no vector 64-bit multiply, and this
    /// loop is most of a MinHash profile's time.
    #[inline]
    pub fn update(&self, signature: &mut [u32], feature_hash: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512dq") {
                // SAFETY: the CPU has the features the function is compiled for.
                return unsafe { self.update_avx512(signature, feature_hash) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: as above.
                return unsafe { self.update_avx2(signature, feature_hash) };
            }
        }
        self.update_portable(signature, feature_hash);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn update_avx512(&self, signature: &mut [u32], feature_hash: u64) {
        self.update_portable(signature, feature_hash);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn update_avx2(&self, signature: &mut [u32], feature_hash: u64) {
        self.update_portable(signature, feature_hash);
    }

    /// The loop itself, inlined into each compiled variant.
    #[inline(always)]
    fn update_portable(&self, signature: &mut [u32], feature_hash: u64) {
        for ((slot, &a), &b) in signature
            .iter_mut()
            .zip(&self.multipliers)
            .zip(&self.increments)
        {
            let h = (a.wrapping_mul(feature_hash).wrapping_add(b) >> 32) as u32;
            *slot = (*slot).min(h);
        }
    }

    /// The signature of a set of feature hashes (duplicates do not matter).
    pub fn signature(&self, feature_hashes: impl IntoIterator<Item = u64>) -> Vec<u32> {
        let mut signature = self.empty_signature();
        for hash in feature_hashes {
            self.update(&mut signature, hash);
        }
        signature
    }
}

/// The fraction of equal positions: an unbiased estimate of the Jaccard resemblance of the two
/// feature sets. Signatures of different lengths compare over the shorter length; empty → 0.
pub fn estimate_jaccard(a: &[u32], b: &[u32]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    let equal = a.iter().zip(b).filter(|(x, y)| x == y).count();
    equal as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_deterministic_and_estimate_jaccard() {
        let hasher = MinHasher::new(MinHashOptions {
            num_perm: 512,
            seed: 42,
        });
        let set_a: Vec<u64> = (0..1000)
            .map(|i| xxhash_rust::xxh3::xxh3_64(&[i as u8, (i >> 8) as u8]))
            .collect();
        let set_b: Vec<u64> = set_a[200..]
            .iter()
            .copied()
            .chain((0..200).map(|i| i * 31 + 7))
            .collect();
        let a = hasher.signature(set_a.iter().copied());
        let b = hasher.signature(set_b.iter().copied());
        assert_eq!(a, hasher.signature(set_a.iter().copied()));
        // True Jaccard: 800 shared of 1200.
        let estimate = estimate_jaccard(&a, &b);
        assert!((estimate - 800.0 / 1200.0).abs() < 0.06, "{estimate}");
        assert_eq!(estimate_jaccard(&a, &a), 1.0);
        assert_eq!(estimate_jaccard(&[], &a), 0.0);
    }

    #[test]
    fn every_compiled_variant_gives_the_portable_signature() {
        for num_perm in [1, 7, 128, 200] {
            let hasher = MinHasher::new(MinHashOptions { num_perm, seed: 3 });
            let hashes: Vec<u64> = (0..500u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 40))
                .collect();
            let mut portable = hasher.empty_signature();
            for &h in &hashes {
                hasher.update_portable(&mut portable, h);
            }
            // `signature` goes through the run-time choice (AVX-512 or AVX2 where present).
            assert_eq!(hasher.signature(hashes.iter().copied()), portable);
        }
    }
}
