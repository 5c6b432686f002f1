//! Synthetic fingerprint sets for tests, benchmarks and the comparison scripts.
//!
//! Deterministic for a given seed (SplitMix64), so every benchmark figure can be reproduced.

use crate::fingerprint::Fingerprint;

/// SplitMix64: a small, fast, seedable generator (not for cryptography).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniformly random fingerprint.
    pub fn fingerprint<F: Fingerprint>(&mut self) -> F {
        let high = u128::from(self.next_u64()) << 64;
        F::from_u128(high | u128::from(self.next_u64()))
    }

    /// `fp` with `flips` distinct random bits inverted.
    pub fn flip<F: Fingerprint>(&mut self, fp: F, flips: u32) -> F {
        let mut chosen = F::ZERO;
        while chosen.ones() < flips.min(F::BITS) {
            chosen = chosen.or(F::bit(self.below(u64::from(F::BITS)) as u32));
        }
        fp.xor(chosen)
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// `n` uniformly random fingerprints.
pub fn random<F: Fingerprint>(n: usize, seed: u64) -> Vec<F> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.fingerprint()).collect()
}

/// The benchmark set: `n` fingerprints, of which 10% are near-copies of random ones (0–3 bits
/// flipped, uniformly) and 1% exact duplicates of earlier ones; the rest random; shuffled.
pub fn planted<F: Fingerprint>(n: usize, seed: u64) -> Vec<F> {
    planted_with(n, seed, n / 10, 3, n / 100)
}

/// `n` fingerprints: `near` near-copies of random base ones with `0..=max_flips` bits flipped,
/// `dups` exact duplicates of earlier ones, the rest random; shuffled.
pub fn planted_with<F: Fingerprint>(
    n: usize,
    seed: u64,
    near: usize,
    max_flips: u32,
    dups: usize,
) -> Vec<F> {
    let mut rng = Rng::new(seed);
    let base = n.saturating_sub(near + dups).max(1).min(n);
    let mut fps: Vec<F> = (0..base).map(|_| rng.fingerprint()).collect();
    while fps.len() < n && fps.len() < base + near {
        let source = fps[rng.below(base as u64) as usize];
        let flips = rng.below(u64::from(max_flips) + 1) as u32;
        fps.push(rng.flip(source, flips));
    }
    while fps.len() < n {
        let source = fps[rng.below(fps.len() as u64) as usize];
        fps.push(source);
    }
    rng.shuffle(&mut fps);
    fps
}

/// `n` random fingerprints of which a share `skew` have their top `block_bits` bits equal (one
/// block value holding that share of the set): the data that makes naive buckets degrade.
pub fn skewed<F: Fingerprint>(n: usize, seed: u64, skew: f64, block_bits: u32) -> Vec<F> {
    let mut rng = Rng::new(seed);
    let block_bits = block_bits.min(F::BITS);
    let low = F::BITS - block_bits;
    let keep_low = (0..low).fold(F::ZERO, |m, i| m.or(F::bit(i)));
    let common = rng
        .fingerprint::<F>()
        .xor(rng.fingerprint::<F>().and(keep_low));
    let common_high = common.xor(common.and(keep_low));
    let shared = (n as f64 * skew) as usize;
    let mut fps: Vec<F> = (0..n)
        .map(|i| {
            let fp = rng.fingerprint::<F>();
            if i < shared {
                fp.and(keep_low).or(common_high)
            } else {
                fp
            }
        })
        .collect();
    rng.shuffle(&mut fps);
    fps
}
