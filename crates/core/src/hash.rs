//! Feature hashers: map a feature's bytes to a 64- or 128-bit value.
//!
//! Every hasher here is stable across versions, machines and runs, because its output ends up in
//! stored fingerprints. (Never use `ahash`, `foldhash` or std's `RandomState` for that: their
//! outputs are seeded per process or may change between releases.)

use md5::{Digest as _, Md5};
use serde::{Deserialize, Serialize};
use siphasher::sip128::{Hasher128, SipHasher13};

use crate::xxh3_short;

/// A stable hash of a feature's bytes, at 64 and 128 bits.
pub trait FeatureHasher: Send + Sync {
    /// The 64-bit hash of `bytes`.
    fn hash64(&self, bytes: &[u8]) -> u64;
    /// The 128-bit hash of `bytes`.
    fn hash128(&self, bytes: &[u8]) -> u128;
    /// Writes into `out[j]` the 64-bit hash of `bytes[j..j + width]`, for `j` below
    /// `out.len()` (`bytes` holds at least `out.len() + width - 1` bytes): every window of a
    /// text at once, which a hasher may do faster than one call per window.
    fn hash64_windows(&self, bytes: &[u8], width: usize, out: &mut [u64]) {
        hash_each_window(bytes, width, out, |window| self.hash64(window));
    }
}

/// Writes `hash(window)` into `out[j]` for each `width`-byte window `j` of `bytes`, one at a
/// time: [`FeatureHasher::hash64_windows`]'s portable form.
#[inline(always)]
pub fn hash_each_window(bytes: &[u8], width: usize, out: &mut [u64], hash: impl Fn(&[u8]) -> u64) {
    for (slot, window) in out.iter_mut().zip(bytes.windows(width)) {
        *slot = hash(window);
    }
}

/// XXH3, the default: the fastest of the lot, and its output is frozen by its specification.
#[derive(Debug, Clone, Copy, Default)]
pub struct Xxh3;

impl FeatureHasher for Xxh3 {
    /// Inputs of 4 to 8 bytes (character 4- to 8-shingles of ASCII text) and of 9 to 16 (a
    /// 5-shingle of Chinese text) take XXH3's closed form for their length, inlined
    /// ([`crate::xxh3_short`]); the others the crate's function. Always inlined: the
    /// shingles of a stretch with non-ASCII characters are hashed one by one in a loop.
    #[inline(always)]
    fn hash64(&self, bytes: &[u8]) -> u64 {
        match bytes.len() {
            xxh3_short::MIN_LEN..=xxh3_short::MAX_LEN => xxh3_short::xxh3_64_4to8(bytes),
            xxh3_short::MID_MIN_LEN..=xxh3_short::MID_MAX_LEN => xxh3_short::xxh3_64_9to16(bytes),
            _ => xxhash_rust::xxh3::xxh3_64(bytes),
        }
    }
    #[inline]
    fn hash128(&self, bytes: &[u8]) -> u128 {
        xxhash_rust::xxh3::xxh3_128(bytes)
    }
    /// Windows of 4 to 8 bytes are hashed eight at a time where the processor allows
    /// ([`xxh3_short::xxh3_64_windows`]).
    fn hash64_windows(&self, bytes: &[u8], width: usize, out: &mut [u64]) {
        if (xxh3_short::MIN_LEN..=xxh3_short::MAX_LEN).contains(&width) {
            xxh3_short::xxh3_64_windows(bytes, width, out);
        } else {
            hash_each_window(bytes, width, out, |window| self.hash64(window));
        }
    }
}

/// FNV-1a, 64-bit, over the UTF-8 bytes: the feature hash of the Sohu article (seed 004).
///
/// It has no 128-bit form here; [`FeatureHasher::hash128`] widens the 64-bit value by hashing
/// twice with different offsets, so that a 128-bit profile using it is still well defined.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fnv1a64;

impl Fnv1a64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn with_offset(offset: u64, bytes: &[u8]) -> u64 {
        bytes.iter().fold(offset, |hash, &b| {
            (hash ^ u64::from(b)).wrapping_mul(Self::PRIME)
        })
    }

    /// The 128-bit widening of an FNV variant: the hash from the inverted offset basis above
    /// the hash from the standard one.
    fn widen(with_offset: impl Fn(u64) -> u64) -> u128 {
        (u128::from(with_offset(!Self::OFFSET)) << 64) | u128::from(with_offset(Self::OFFSET))
    }
}

impl FeatureHasher for Fnv1a64 {
    #[inline]
    fn hash64(&self, bytes: &[u8]) -> u64 {
        Self::with_offset(Self::OFFSET, bytes)
    }
    fn hash128(&self, bytes: &[u8]) -> u128 {
        Self::widen(|offset| Self::with_offset(offset, bytes))
    }
}

/// FNV-1a, 64-bit, over the UTF-16 code units of the feature, each XOR-ed in whole (16 bits),
/// exactly as seed 004's Java `fnv1aHash64` does with `str.charAt(i)`: the Sohu article's
/// feature hash bit for bit, Chinese included. (On ASCII it equals [`Fnv1a64`]; on other text
/// it does not, since [`Fnv1a64`] hashes UTF-8 bytes.) Features that are not valid UTF-8 are
/// hashed byte by byte, as [`Fnv1a64`] does.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fnv1a64Utf16;

impl Fnv1a64Utf16 {
    fn with_offset(offset: u64, bytes: &[u8]) -> u64 {
        match std::str::from_utf8(bytes) {
            Ok(text) => text.encode_utf16().fold(offset, |hash, unit| {
                (hash ^ u64::from(unit)).wrapping_mul(Fnv1a64::PRIME)
            }),
            Err(_) => Fnv1a64::with_offset(offset, bytes),
        }
    }
}

impl FeatureHasher for Fnv1a64Utf16 {
    #[inline]
    fn hash64(&self, bytes: &[u8]) -> u64 {
        Self::with_offset(Fnv1a64::OFFSET, bytes)
    }
    fn hash128(&self, bytes: &[u8]) -> u128 {
        Fnv1a64::widen(|offset| Self::with_offset(offset, bytes))
    }
}

/// MD5 read as a big-endian integer, as the PyPI `simhash` package does
/// (`int(md5(x).hexdigest(), 16)`); the 64-bit form is its low 64 bits.
#[derive(Debug, Clone, Copy, Default)]
pub struct Md5Hasher;

impl FeatureHasher for Md5Hasher {
    #[inline]
    fn hash64(&self, bytes: &[u8]) -> u64 {
        self.hash128(bytes) as u64
    }
    #[inline]
    fn hash128(&self, bytes: &[u8]) -> u128 {
        u128::from_be_bytes(Md5::digest(bytes).into())
    }
}

/// SipHash-1-3 with the all-zero key: keyed-hash quality for inputs chosen by an adversary
/// who does not know a key (use a profile of your own with care: the key here is public).
#[derive(Debug, Clone, Copy, Default)]
pub struct SipHash13;

impl FeatureHasher for SipHash13 {
    #[inline]
    fn hash64(&self, bytes: &[u8]) -> u64 {
        self.hash128(bytes) as u64
    }
    #[inline]
    fn hash128(&self, bytes: &[u8]) -> u128 {
        let mut hasher = SipHasher13::new();
        std::hash::Hasher::write(&mut hasher, bytes);
        hasher.finish128().as_u128()
    }
}

/// The feature hash a profile uses, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashAlgorithm {
    /// [`Xxh3`].
    Xxh3,
    /// [`Fnv1a64`].
    Fnv1a64,
    /// [`Fnv1a64Utf16`].
    #[serde(rename = "fnv1a64-utf16")]
    Fnv1a64Utf16,
    /// [`Md5Hasher`].
    Md5,
    /// [`SipHash13`].
    Siphash13,
}

impl HashAlgorithm {
    /// The hasher behind this name.
    pub fn hasher(self) -> &'static dyn FeatureHasher {
        match self {
            HashAlgorithm::Xxh3 => &Xxh3,
            HashAlgorithm::Fnv1a64 => &Fnv1a64,
            HashAlgorithm::Fnv1a64Utf16 => &Fnv1a64Utf16,
            HashAlgorithm::Md5 => &Md5Hasher,
            HashAlgorithm::Siphash13 => &SipHash13,
        }
    }
}

/// A direct-mapped memo of the hashes of short features (up to 15 bytes), for hashers that
/// cost far more than a table lookup (MD5: about 150 ns a call). Character 4-grams and short
/// words recur constantly in real text, so most look-ups hit. Memoising a pure function
/// cannot change any result.
#[derive(Debug, Clone)]
pub struct HashMemo {
    slots: Vec<MemoSlot>,
    /// 64-bit values of features of up to 7 bytes, in 16-byte slots: half the size of
    /// `slots`, so that it stays in a core's L2 cache (character 4-grams of ASCII text all go
    /// here).
    short: Vec<ShortSlot>,
    owner: Option<u8>,
}

#[derive(Debug, Clone, Copy, Default)]
struct ShortSlot {
    /// The feature's bytes with its length plus one in the top byte; 0 marks an empty slot.
    key: u64,
    value: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct MemoSlot {
    /// The feature's bytes with its length plus one in the top byte; 0 marks an empty slot.
    key: u128,
    value: u128,
}

/// The bytes of `bytes` (at most 8) as a little-endian integer, zero-padded: read with two
/// overlapping loads of the widest size that fits, not a copy into a buffer (a copy of variable
/// length followed by a wide load stalls store-to-load forwarding: it was the memo's hot spot).
/// The overlapping bytes of the two loads are equal, so OR-ing them is exact.
#[inline(always)]
fn pack_le64(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let word = |at: usize| u64::from(u32::from_le_bytes(load(bytes, at)));
    let half = |at: usize| u64::from(u16::from_le_bytes(load(bytes, at)));
    match n {
        0 => 0,
        1 => u64::from(bytes[0]),
        2..=3 => half(0) | half(n - 2) << (8 * (n - 2)),
        4..=7 => word(0) | word(n - 4) << (8 * (n - 4)),
        _ => u64::from_le_bytes(load(bytes, 0)),
    }
}

/// [`pack_le64`] for up to 16 bytes.
#[inline(always)]
fn pack_le128(bytes: &[u8]) -> u128 {
    let n = bytes.len();
    if n <= 8 {
        return u128::from(pack_le64(bytes));
    }
    let low = u128::from(u64::from_le_bytes(load(bytes, 0)));
    let high = u128::from(u64::from_le_bytes(load(bytes, n - 8)));
    low | high << (8 * (n - 8))
}

/// The `N` bytes of `bytes` at `at` (the callers stay in bounds; zeros otherwise).
#[inline(always)]
fn load<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; N])
}

impl Default for HashMemo {
    fn default() -> Self {
        HashMemo::new()
    }
}

impl HashMemo {
    const SLOTS_LOG2: u32 = 16;
    /// The longest feature of the compact table.
    const SHORT: usize = 7;
    /// The longest feature memoised at all.
    const LONG: usize = 15;

    /// An empty memo: 1 MiB for features of up to 7 bytes and 2 MiB for longer ones, each
    /// table allocated on first use.
    pub fn new() -> Self {
        HashMemo {
            slots: Vec::new(),
            short: Vec::new(),
            owner: None,
        }
    }

    /// The memo, emptied first if it holds the values of another hash function than `owner`
    /// (an id the caller gives each hasher and width).
    pub fn owned_by(&mut self, owner: u8) -> &mut Self {
        if self.owner != Some(owner) {
            self.slots.fill(MemoSlot::default());
            self.short.fill(ShortSlot::default());
            self.owner = Some(owner);
        }
        self
    }

    /// The memoised 64-bit `compute(feature)`; short features use the compact table.
    #[inline]
    pub fn get_or_compute64(&mut self, feature: &[u8], compute: impl FnOnce(&[u8]) -> u64) -> u64 {
        self.get64(feature).unwrap_or_else(|| {
            let value = compute(feature);
            self.insert64(feature, value);
            value
        })
    }

    /// The memoised `compute(feature)`. Features longer than 15 bytes are computed directly.
    #[inline]
    pub fn get_or_compute(&mut self, feature: &[u8], compute: impl FnOnce(&[u8]) -> u128) -> u128 {
        self.get(feature).unwrap_or_else(|| {
            let value = compute(feature);
            self.insert(feature, value);
            value
        })
    }

    /// The memoised 64-bit value of `feature`, if it is there.
    #[inline]
    pub fn get64(&self, feature: &[u8]) -> Option<u64> {
        if feature.len() > Self::SHORT {
            return self.get(feature).map(|value| value as u64);
        }
        let (index, key) = Self::short_slot(feature);
        let slot = self.short.get(index)?;
        (slot.key == key).then_some(slot.value)
    }

    /// Memoises the 64-bit `value` of `feature` (nothing for features longer than 15 bytes).
    #[inline]
    pub fn insert64(&mut self, feature: &[u8], value: u64) {
        if feature.len() > Self::SHORT {
            return self.insert(feature, u128::from(value));
        }
        if self.short.is_empty() {
            self.short = vec![ShortSlot::default(); 1 << Self::SLOTS_LOG2];
        }
        let (index, key) = Self::short_slot(feature);
        self.short[index] = ShortSlot { key, value };
    }

    /// The memoised value of `feature`, if it is there.
    #[inline]
    pub fn get(&self, feature: &[u8]) -> Option<u128> {
        if feature.len() > Self::LONG {
            return None;
        }
        let (index, key) = Self::slot(feature);
        let slot = self.slots.get(index)?;
        (slot.key == key).then_some(slot.value)
    }

    /// Memoises `value` of `feature` (nothing for features longer than 15 bytes).
    #[inline]
    pub fn insert(&mut self, feature: &[u8], value: u128) {
        if feature.len() > Self::LONG {
            return;
        }
        if self.slots.is_empty() {
            self.slots = vec![MemoSlot::default(); 1 << Self::SLOTS_LOG2];
        }
        let (index, key) = Self::slot(feature);
        self.slots[index] = MemoSlot { key, value };
    }

    /// Slot index and key of a feature of up to [`HashMemo::SHORT`] bytes in the compact
    /// table: its bytes with its length plus one in the top byte (0 marks an empty slot).
    #[inline(always)]
    fn short_slot(feature: &[u8]) -> (usize, u64) {
        let key = pack_le64(feature) | (feature.len() as u64 + 1) << 56;
        let index = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - Self::SLOTS_LOG2)) as usize;
        (index, key)
    }

    /// Slot index and key of a feature of up to [`HashMemo::LONG`] bytes in the wide table.
    #[inline(always)]
    fn slot(feature: &[u8]) -> (usize, u128) {
        let key = pack_le128(feature) | (feature.len() as u128 + 1) << 120;
        let mixed = ((key as u64) ^ ((key >> 64) as u64).rotate_left(29))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        ((mixed >> (64 - Self::SLOTS_LOG2)) as usize, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_reference_vectors() {
        // Test vectors from the FNV reference implementation.
        assert_eq!(Fnv1a64.hash64(b""), 0xcbf29ce484222325);
        assert_eq!(Fnv1a64.hash64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(Fnv1a64.hash64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn fnv1a64_utf16_is_seed_004s_java_hash() {
        // Expected values from a transcription of the seed's Java code (BigInteger arithmetic
        // masked to 64 bits, one `charAt` code unit at a time) in Python.
        assert_eq!(Fnv1a64Utf16.hash64(b"foobar"), Fnv1a64.hash64(b"foobar"));
        assert_eq!(Fnv1a64Utf16.hash64("美国".as_bytes()), JAVA_MEIGUO);
        assert_eq!(Fnv1a64Utf16.hash64("😀".as_bytes()), JAVA_EMOJI);
        assert_ne!(Fnv1a64.hash64("美国".as_bytes()), JAVA_MEIGUO);
    }

    /// `fnv1aHash64("美国")` and `fnv1aHash64("😀")` (a surrogate pair: two code units).
    const JAVA_MEIGUO: u64 = 0xcb59c7085a701784;
    const JAVA_EMOJI: u64 = 0xe5e45a0a241b88d8;

    #[test]
    fn md5_is_read_big_endian() {
        // md5("") = d41d8cd98f00b204e9800998ecf8427e
        assert_eq!(Md5Hasher.hash128(b""), 0xd41d8cd98f00b204e9800998ecf8427e);
        assert_eq!(Md5Hasher.hash64(b""), 0xe9800998ecf8427e);
    }

    #[test]
    fn xxh3_is_stable() {
        // Pinned values: a change here would silently invalidate every stored fingerprint.
        assert_eq!(Xxh3.hash64(b""), 0x2d06800538d394c2);
        assert_eq!(Xxh3.hash128(b""), 0x99aa06d3014798d86001c324468d497f);
        assert_eq!(Xxh3.hash64(b"neardup"), 0x7a9c10a417354e44);
    }

    #[test]
    fn memo_returns_what_it_memoises() {
        let mut memo = HashMemo::new();
        for round in 0..2 {
            for i in 0..100_000u32 {
                let feature = i.to_string();
                let value = memo.get_or_compute(feature.as_bytes(), |f| Md5Hasher.hash128(f));
                assert_eq!(
                    value,
                    Md5Hasher.hash128(feature.as_bytes()),
                    "round {round}"
                );
            }
        }
        for i in 0..100_000u32 {
            let feature = (i % 5000).to_string();
            let value = memo.get_or_compute64(feature.as_bytes(), |f| Md5Hasher.hash64(f));
            assert_eq!(value, Md5Hasher.hash64(feature.as_bytes()));
        }
        assert_ne!(
            memo.get_or_compute64(b"ab", |f| Md5Hasher.hash64(f)),
            memo.get_or_compute64(b"ab\0", |f| Md5Hasher.hash64(f))
        );
        let long = b"a feature longer than fifteen bytes";
        assert_eq!(
            memo.get_or_compute(long, |f| Md5Hasher.hash128(f)),
            Md5Hasher.hash128(long)
        );
        // Keys that differ only in length (trailing zero bytes) are told apart.
        let a = memo.get_or_compute(b"ab", |f| Md5Hasher.hash128(f));
        let b = memo.get_or_compute(b"ab\0", |f| Md5Hasher.hash128(f));
        assert_ne!(a, b);
    }

    #[test]
    fn packing_equals_a_zero_padded_copy() {
        let source: Vec<u8> = (1..=16).map(|b| b * 15).collect();
        for n in 0..=16 {
            let mut padded = [0u8; 16];
            padded[..n].copy_from_slice(&source[..n]);
            assert_eq!(
                pack_le128(&source[..n]),
                u128::from_le_bytes(padded),
                "{n} bytes"
            );
            if n <= 8 {
                assert_eq!(
                    u128::from(pack_le64(&source[..n])),
                    u128::from_le_bytes(padded)
                );
            }
        }
    }

    #[test]
    fn siphash13_is_stable() {
        assert_eq!(SipHash13.hash64(b"abc"), 0x64b4eeb45bb5ba18);
        assert_ne!(SipHash13.hash64(b"abc"), SipHash13.hash64(b"abd"));
    }
}
