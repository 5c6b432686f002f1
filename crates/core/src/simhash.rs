//! Charikar's SimHash: weighted bit sums of feature hashes, signed into an f-bit fingerprint.
//!
//! **Tie rule**: bit *i* is 1 when the weighted sum for bit *i* is strictly positive, and 0 when
//! it is zero or negative (seed 000's rule, and the PyPI `simhash` package's "more than half").
//!
//! Bit *i* of the fingerprint (counting from the least significant bit) comes from bit *i* of
//! the feature hashes, so a fingerprint printed in hexadecimal reads like the hashes do.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::bit_columns::{ColumnCounter, Path};
use crate::error::{Error, Result};

/// The width of a fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bits {
    /// f = 64, the classic choice (with k = 3).
    #[serde(rename = "64")]
    B64,
    /// f = 128.
    #[serde(rename = "128")]
    B128,
}

impl Bits {
    /// The width as a number.
    pub fn count(self) -> u32 {
        match self {
            Bits::B64 => 64,
            Bits::B128 => 128,
        }
    }
}

/// A SimHash fingerprint of 64 or 128 bits.
///
/// ```
/// use neardup_core::simhash::Simhash;
/// let a = Simhash::B64(0b1101);
/// let b = Simhash::B64(0b0111);
/// assert_eq!(a.distance(b).unwrap(), 2);
/// assert_eq!(a.to_string(), "000000000000000d");
/// assert_eq!("000000000000000d".parse::<Simhash>().unwrap(), a);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Simhash {
    /// A 64-bit fingerprint.
    B64(u64),
    /// A 128-bit fingerprint.
    B128(u128),
}

impl Simhash {
    /// The fingerprint's width.
    pub fn bits(self) -> Bits {
        match self {
            Simhash::B64(_) => Bits::B64,
            Simhash::B128(_) => Bits::B128,
        }
    }

    /// The fingerprint as a 128-bit integer (64-bit ones zero-extended).
    pub fn as_u128(self) -> u128 {
        match self {
            Simhash::B64(v) => u128::from(v),
            Simhash::B128(v) => v,
        }
    }

    /// Hamming distance: the number of differing bits. Errors when the widths differ.
    pub fn distance(self, other: Simhash) -> Result<u32> {
        match (self, other) {
            (Simhash::B64(a), Simhash::B64(b)) => Ok((a ^ b).count_ones()),
            (Simhash::B128(a), Simhash::B128(b)) => Ok((a ^ b).count_ones()),
            _ => Err(Error::WidthMismatch {
                left: self.bits().count(),
                right: other.bits().count(),
            }),
        }
    }

    /// Similarity `1 - d / f`: 1 for identical fingerprints, about 0.5 for unrelated ones.
    pub fn similarity(self, other: Simhash) -> Result<f64> {
        let d = self.distance(other)?;
        Ok(1.0 - f64::from(d) / f64::from(self.bits().count()))
    }
}

impl fmt::Display for Simhash {
    /// Lower-case hexadecimal, zero-padded to 16 or 32 digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Simhash::B64(v) => write!(f, "{v:016x}"),
            Simhash::B128(v) => write!(f, "{v:032x}"),
        }
    }
}

impl std::str::FromStr for Simhash {
    type Err = Error;

    /// Parses 16 (64-bit) or 32 (128-bit) hexadecimal digits.
    fn from_str(text: &str) -> Result<Self> {
        let invalid = || Error::InvalidFingerprint {
            text: text.chars().take(64).collect(),
        };
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid());
        }
        match text.len() {
            16 => u64::from_str_radix(text, 16)
                .map(Simhash::B64)
                .map_err(|_| invalid()),
            32 => u128::from_str_radix(text, 16)
                .map(Simhash::B128)
                .map_err(|_| invalid()),
            _ => Err(invalid()),
        }
    }
}

impl Serialize for Simhash {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Simhash {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// `SPREAD[b]` has byte *j* equal to bit *j* of `b`: one table lookup turns 8 hash bits into 8
/// byte-wide counters that a single `u64` addition increments together.
static SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            table[b] |= (((b >> j) & 1) as u64) << (8 * j);
            j += 1;
        }
        b += 1;
    }
    table
};

/// Hashes a [`BitCounter`] gathers before it folds them into its bit-sliced counts.
const BLOCK: usize = 16;

/// A carry-save adder over bit-sliced counters: adds the bits of `a`, `b` and `c` column by
/// column, returning the carries (weight 2) and the sums (weight 1).
#[inline(always)]
fn carry_save(a: u64, b: u64, c: u64) -> (u64, u64) {
    let u = a ^ b;
    ((a & b) | (u & c), u ^ c)
}

/// Counts, for each bit position, how many added hashes have that bit set: the hot path for
/// integer weights (TF weighting adds a feature once per occurrence; uniform weighting once per
/// distinct feature).
///
/// This is a *positional population count*, written by hand because it is the core of the
/// product's hot loop. Hashes are gathered in blocks of 16 and folded into bit-sliced counters
/// of weights 1, 2, 4 and 8 with a tree of carry-save adders (Harley and Seal's popcount
/// scheme, applied per bit column): 15 adders of five word operations for 16 hashes. Only the
/// weight-16 carry of a block (one word) is spread into byte-wide counters (8 table lookups
/// and additions), which are flushed to 64-bit counts every 255 blocks. That
/// is about 6 word operations a hash instead of the 8 lookups and 8 additions of the plain
/// spread scheme, or the 64 steps of the naive loop.
/// `WORDS` is 1 for 64-bit and 2 for 128-bit fingerprints.
///
/// ```
/// use neardup_core::simhash::BitCounter;
/// let mut counter = BitCounter::<1>::default();
/// for hash in [0b1101u128, 0b1010, 0b1001] {
///     counter.add(hash);
/// }
/// assert_eq!(counter.total(), 3);
/// assert_eq!(counter.finish(), 0b1001, "bits set in more than half of the hashes");
/// ```
#[derive(Debug, Clone)]
pub struct BitCounter<const WORDS: usize> {
    /// Hashes not yet folded in, `filled` of them.
    block: [[u64; WORDS]; BLOCK],
    filled: usize,
    /// Bit-sliced counts of weight 1, 2, 4 and 8.
    ones: [u64; WORDS],
    twos: [u64; WORDS],
    fours: [u64; WORDS],
    eights: [u64; WORDS],
    /// Byte counters (in [`SPREAD`] layout) of weight 16, `pending` additions since the
    /// last flush into `sixteens`.
    lanes: [[u64; 8]; WORDS],
    pending: u32,
    sixteens: [[u64; 64]; WORDS],
    /// Hashes folded into the bit-sliced counts.
    folded: u64,
    /// The hashes added by [`BitCounter::add_many`] when the processor has a SIMD column
    /// counter (64-bit hashes: the low word only).
    columns: ColumnCounter,
}

impl<const WORDS: usize> Default for BitCounter<WORDS> {
    fn default() -> Self {
        BitCounter {
            block: [[0; WORDS]; BLOCK],
            filled: 0,
            ones: [0; WORDS],
            twos: [0; WORDS],
            fours: [0; WORDS],
            eights: [0; WORDS],
            lanes: [[0; 8]; WORDS],
            pending: 0,
            sixteens: [[0; 64]; WORDS],
            folded: 0,
            columns: ColumnCounter::new(),
        }
    }
}

impl<const WORDS: usize> BitCounter<WORDS> {
    /// Adds one hash (its low `64 * WORDS` bits) with weight 1.
    #[inline]
    pub fn add(&mut self, hash: u128) {
        let slot = &mut self.block[self.filled];
        for (w, word) in slot.iter_mut().enumerate() {
            *word = (hash >> (64 * w)) as u64;
        }
        self.filled += 1;
        if self.filled == BLOCK {
            self.fold_block();
        }
    }

    /// Adds 64-bit hashes with weight 1 each (their upper words zero): what [`BitCounter::add`]
    /// does for each, with the processor's SIMD column counter when it has one
    /// ([`crate::bit_columns`]).
    #[inline]
    pub fn add_many(&mut self, hashes: &[u64]) {
        if self.columns.path() != Path::Portable {
            self.columns.add(hashes);
        } else {
            hashes.iter().for_each(|&hash| self.add(u128::from(hash)));
        }
    }

    /// Room to write 64-bit hashes in place (upper words zero), taken by
    /// [`BitCounter::commit`]: [`BitCounter::add_many`] without a copy into the SIMD column
    /// counter's buffer. `None` when the processor has no SIMD column counter.
    #[inline]
    pub fn spare(&mut self) -> Option<&mut [u64]> {
        if self.columns.path() == Path::Portable {
            return None;
        }
        Some(self.columns.spare())
    }

    /// Adds the first `n` hashes written into [`BitCounter::spare`].
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.columns.commit(n);
    }

    /// Folds a full block into the bit-sliced counts with the carry-save adder tree.
    fn fold_block(&mut self) {
        for w in 0..WORDS {
            let x = |i: usize| self.block[i][w];
            let (twos_a, ones) = carry_save(self.ones[w], x(0), x(1));
            let (twos_b, ones) = carry_save(ones, x(2), x(3));
            let (fours_a, twos) = carry_save(self.twos[w], twos_a, twos_b);
            let (twos_a, ones) = carry_save(ones, x(4), x(5));
            let (twos_b, ones) = carry_save(ones, x(6), x(7));
            let (fours_b, twos) = carry_save(twos, twos_a, twos_b);
            let (eights_a, fours) = carry_save(self.fours[w], fours_a, fours_b);
            let (twos_a, ones) = carry_save(ones, x(8), x(9));
            let (twos_b, ones) = carry_save(ones, x(10), x(11));
            let (fours_a, twos) = carry_save(twos, twos_a, twos_b);
            let (twos_a, ones) = carry_save(ones, x(12), x(13));
            let (twos_b, ones) = carry_save(ones, x(14), x(15));
            let (fours_b, twos) = carry_save(twos, twos_a, twos_b);
            let (eights_b, fours) = carry_save(fours, fours_a, fours_b);
            let (sixteens, eights) = carry_save(self.eights[w], eights_a, eights_b);
            self.ones[w] = ones;
            self.twos[w] = twos;
            self.fours[w] = fours;
            self.eights[w] = eights;
            for (j, lane) in self.lanes[w].iter_mut().enumerate() {
                *lane += SPREAD[((sixteens >> (8 * j)) & 0xff) as usize];
            }
        }
        self.filled = 0;
        self.folded += BLOCK as u64;
        self.pending += 1;
        if self.pending == u32::from(u8::MAX) {
            self.flush_lanes();
        }
    }

    /// Moves the byte counters into the 64-bit counts before a byte can overflow.
    fn flush_lanes(&mut self) {
        for (lanes, sixteens) in self.lanes.iter_mut().zip(self.sixteens.iter_mut()) {
            for (j, lane) in lanes.iter_mut().enumerate() {
                for (byte, count) in lane.to_le_bytes().iter().zip(&mut sixteens[8 * j..]) {
                    *count += u64::from(*byte);
                }
                *lane = 0;
            }
        }
        self.pending = 0;
    }

    /// How many hashes were added.
    pub fn total(&self) -> u64 {
        self.folded + self.filled as u64 + self.columns.total()
    }

    /// The fingerprint: bit *i* set when more than half of the hashes have bit *i* set (the
    /// sum of +1/-1 is strictly positive).
    ///
    /// Each part is read only when hashes went into it: a document whose hashes all went to
    /// the SIMD column counter (64-bit profiles, see [`BitCounter::spare`]) skips the
    /// bit-sliced counts, and the majority test runs per word, not through a 128-bit shift per
    /// bit (it was 3–4% of `neardup fingerprint` on documents of a few KB).
    pub fn finish(mut self) -> u128 {
        let total = self.total();
        let mut counts = [[0u64; 64]; WORDS];
        if self.folded > 0 || self.filled > 0 {
            self.sliced_counts(&mut counts);
        }
        if self.columns.total() > 0 {
            // The column counter holds 64-bit hashes: the low word's counts only.
            for (count, column) in counts[0].iter_mut().zip(self.columns.counts()) {
                *count += column;
            }
        }
        counts.iter().enumerate().fold(0u128, |bits, (w, counts)| {
            bits | u128::from(majority(counts, total)) << (64 * w)
        })
    }

    /// Adds the counts held by the bit-sliced counters (and the block not yet folded) to
    /// `counts`.
    fn sliced_counts(&mut self, counts: &mut [[u64; 64]; WORDS]) {
        if self.filled > 0 {
            // Zero hashes set no bit: the last block, padded with them, counts as it is.
            self.block[self.filled..].fill([0; WORDS]);
            self.fold_block();
        }
        self.flush_lanes();
        for (w, counts) in counts.iter_mut().enumerate() {
            for (i, count) in counts.iter_mut().enumerate() {
                let bit = |word: u64| (word >> i) & 1;
                *count += 16 * self.sixteens[w][i]
                    + 8 * bit(self.eights[w])
                    + 4 * bit(self.fours[w])
                    + 2 * bit(self.twos[w])
                    + bit(self.ones[w]);
            }
        }
    }
}

/// The word whose bit *i* says whether `counts[i]` is more than half of `total`.
#[inline]
fn majority(counts: &[u64; 64], total: u64) -> u64 {
    counts.iter().enumerate().fold(0u64, |word, (i, &count)| {
        word | u64::from(2 * count > total) << i
    })
}

/// Weighted bit sums with real weights (TF-IDF, keyword scores): `sums[i] += w` when bit *i* of
/// the hash is set, `-= w` otherwise.
#[derive(Debug, Clone)]
pub struct WeightedSums {
    sums: Vec<f64>,
}

impl WeightedSums {
    /// Sums for `bits`-wide hashes, all zero.
    pub fn new(bits: Bits) -> Self {
        WeightedSums {
            sums: vec![0.0; bits.count() as usize],
        }
    }

    /// Adds `hash` with `weight`.
    #[inline]
    pub fn add(&mut self, hash: u128, weight: f64) {
        for (i, sum) in self.sums.iter_mut().enumerate() {
            *sum += if (hash >> i) & 1 == 1 {
                weight
            } else {
                -weight
            };
        }
    }

    /// The sums, bit 0 first.
    pub fn sums(&self) -> &[f64] {
        &self.sums
    }

    /// The fingerprint: bit *i* set when `sums[i] > 0`.
    pub fn finish(&self) -> u128 {
        sign_bits(&self.sums)
    }
}

/// The sign step: bit *i* is 1 when `sums[i]` (bit 0 first) is strictly positive, 0 when it is
/// zero or negative. At most 128 sums are read.
pub fn sign_bits(sums: &[f64]) -> u128 {
    sums.iter()
        .take(128)
        .enumerate()
        .filter(|(_, &s)| s > 0.0)
        .fold(0u128, |bits, (i, _)| bits | (1u128 << i))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 000's 4-bit example, TF weights and the given hash table: 1101 and 0111, distance 2.
    #[test]
    fn seed_000_tf_example() {
        let table = [
            ("the", 0b1101),
            ("quick", 0b1010),
            ("brown", 0b1001),
            ("fox", 0b1111),
            ("jumps", 0b0110),
            ("over", 0b1011),
            ("lazy", 0b1100),
            ("dog", 0b0101),
            ("fast", 0b0011),
            ("a", 0b0111),
        ];
        let hash = |w: &str| table.iter().find(|(t, _)| *t == w).unwrap().1 as u128;
        // Four-bit fingerprints: only the low 4 bits of each sum matter.
        let fingerprint = |text: &str| {
            let mut sums = WeightedSums::new(Bits::B64);
            for word in text.split(' ') {
                sums.add(hash(word), 1.0);
            }
            (
                sums.finish() & 0b1111,
                sums.sums()[..4].iter().rev().copied().collect::<Vec<_>>(),
            )
        };
        let (d1, s1) = fingerprint("the quick brown fox jumps over the lazy dog");
        let (d2, s2) = fingerprint("the fast brown fox jumps over a lazy dog");
        // The seed's totals are misprinted: its own rows add up to [5, 3, -1, 3] (it prints
        // +2 for the 4th bit) and [1, 3, 1, 5] (it prints [0, 3, 1, 4]). The true fingerprints
        // of its hash table are 1101 and 1111, at distance 1.
        assert_eq!(s1, [5.0, 3.0, -1.0, 3.0]);
        assert_eq!(s2, [1.0, 3.0, 1.0, 5.0]);
        assert_eq!((d1, d2), (0b1101, 0b1111));
        // The seed's steps 5 and 6 from its printed sums: 1101 and 0111 (the zero sum gives a
        // 0 bit), distance 2.
        let seed_d1 = sign_bits(&[2.0, -1.0, 3.0, 5.0]);
        let seed_d2 = sign_bits(&[4.0, 1.0, 3.0, 0.0]);
        assert_eq!((seed_d1, seed_d2), (0b1101, 0b0111));
        let distance = Simhash::B64(seed_d1 as u64).distance(Simhash::B64(seed_d2 as u64));
        assert_eq!(distance.unwrap(), 2);
        // The unit-weight counter agrees (TF = one add per occurrence).
        let mut counter = BitCounter::<1>::default();
        for word in "the quick brown fox jumps over the lazy dog".split(' ') {
            counter.add(hash(word));
        }
        assert_eq!(counter.finish() & 0b1111, 0b1101);
    }

    /// Seed 001's 6-bit weighted example: sums [15, -7, -1, 3, 5, 15] → 100111.
    #[test]
    fn seed_001_weighted_example() {
        let keywords = [
            (0b100101, 5.0), // 美国
            (0b101011, 2.0), // 51区
            (0b100111, 3.0), // 飞碟
            (0b101111, 1.0), // 灰色
            (0b111011, 4.0), // 外星人
        ];
        let mut sums = WeightedSums::new(Bits::B64);
        for (hash, weight) in keywords {
            sums.add(hash, weight);
        }
        let first_six: Vec<f64> = sums.sums()[..6].iter().rev().copied().collect();
        assert_eq!(first_six, [15.0, -7.0, -1.0, 3.0, 5.0, 15.0]);
        assert_eq!(sums.finish() & 0b111111, 0b100111);
    }

    #[test]
    fn bit_counter_matches_weighted_sums_across_blocks_and_flushes() {
        // Sizes around a block (16), a lane flush (255 blocks) and none at all; hashes biased
        // towards set bits on some columns so that the counts sit near one half.
        for n in [
            0,
            1,
            15,
            16,
            17,
            255,
            1000,
            16 * 255 - 1,
            16 * 255,
            16 * 255 + 1,
            9000,
        ] {
            let mut counter = BitCounter::<2>::default();
            let mut sums = WeightedSums::new(Bits::B128);
            let mut x = 0x9e3779b97f4a7c15u128;
            for _ in 0..n {
                x = x
                    .wrapping_mul(0x2545f4914f6cdd1d_2545f4914f6cdd1d)
                    .wrapping_add(12345);
                let hash = x | (x >> 7) & 0x0f0f_0000_ffff_0000_0000_00ff_00ff_0000;
                counter.add(hash);
                sums.add(hash, 1.0);
            }
            assert_eq!(counter.total(), n);
            assert_eq!(counter.finish(), sums.finish(), "{n} hashes");
        }
    }

    #[test]
    fn distance_rejects_mixed_widths_and_bad_hex() {
        assert!(Simhash::B64(0).distance(Simhash::B128(0)).is_err());
        assert!("xyz".parse::<Simhash>().is_err());
        assert!("0123".parse::<Simhash>().is_err());
        let wide: Simhash = "0000000000000000ffffffffffffffff".parse().unwrap();
        assert_eq!(wide.distance(Simhash::B128(0)).unwrap(), 64);
        assert_eq!(wide.similarity(Simhash::B128(0)).unwrap(), 0.5);
    }
}
