//! MD5 of sixteen short messages at once, one per SIMD lane.
//!
//! The `python-simhash` profile hashes every distinct character 4-gram with MD5, as the PyPI
//! package does; the memo of [`crate::hash::HashMemo`] catches repeats, and what is left is
//! about a quarter of the profile's time in MD5 of 4–15-byte messages. MD5 is a chain of 32-bit
//! additions, rotations and bitwise operations, so sixteen independent messages map onto the
//! sixteen 32-bit lanes of an AVX-512 register (eight with AVX2, four with SSE) as one
//! instruction stream. No crate offers a multi-buffer MD5 for Rust, so this one is written
//! here: the rounds are plain loops over lanes that the compiler vectorises, compiled once per
//! instruction set and chosen at run time. Every output is checked against the `md-5` crate.

/// Messages hashed together.
pub(crate) const LANES: usize = 16;

/// The longest message: it and its padding must fit one 64-byte block with room to spare,
/// and the memo only holds features of up to 15 bytes.
pub(crate) const MAX_MESSAGE: usize = 15;

/// A message of at most [`MAX_MESSAGE`] bytes, zero-padded.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ShortMessage {
    bytes: [u8; 16],
    len: u8,
}

impl ShortMessage {
    /// `bytes` as a message, or `None` when it is longer than [`MAX_MESSAGE`].
    pub(crate) fn new(bytes: &[u8]) -> Option<Self> {
        let mut message = ShortMessage::default();
        message.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
        (bytes.len() <= MAX_MESSAGE).then_some(ShortMessage {
            len: bytes.len() as u8,
            ..message
        })
    }

    /// The message's bytes.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// The MD5 digests of `messages`, each read as a big-endian 128-bit integer (as
/// `int(md5(x).hexdigest(), 16)` reads it).
pub(crate) fn md5_many(messages: &[ShortMessage; LANES]) -> [u128; LANES] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { md5_many_avx512(messages) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { md5_many_avx2(messages) };
        }
    }
    md5_lanes(messages)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn md5_many_avx512(messages: &[ShortMessage; LANES]) -> [u128; LANES] {
    md5_lanes(messages)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn md5_many_avx2(messages: &[ShortMessage; LANES]) -> [u128; LANES] {
    md5_lanes(messages)
}

type Lanes = [u32; LANES];

/// Per-step additive constants (RFC 1321).
const K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// Per-step rotation amounts.
const S: [u32; 64] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9,
    14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15,
    21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];

/// The state after the four rounds, lane by lane.
struct State {
    a: Lanes,
    b: Lanes,
    c: Lanes,
    d: Lanes,
}

impl State {
    /// Sixteen steps of one round, with the round's boolean function `f`; step `i` reads
    /// message word `word(i)`.
    #[inline(always)]
    fn round(
        &mut self,
        steps: std::ops::Range<usize>,
        word: impl Fn(usize) -> usize,
        block: &[Lanes; 16],
        f: impl Fn(u32, u32, u32) -> u32,
    ) {
        for i in steps {
            let m = &block[word(i)];
            // Lane-indexed on purpose: one operation over all lanes per line is what the
            // compiler turns into SIMD instructions.
            #[allow(clippy::needless_range_loop)]
            for l in 0..LANES {
                let t = self.a[l]
                    .wrapping_add(f(self.b[l], self.c[l], self.d[l]))
                    .wrapping_add(K[i])
                    .wrapping_add(m[l]);
                let b = self.b[l].wrapping_add(t.rotate_left(S[i]));
                self.a[l] = self.d[l];
                self.d[l] = self.c[l];
                self.c[l] = self.b[l];
                self.b[l] = b;
            }
        }
    }
}

/// The portable body, vectorised by the compiler for whatever instruction set its caller was
/// compiled for.
#[inline(always)]
fn md5_lanes(messages: &[ShortMessage; LANES]) -> [u128; LANES] {
    // One padded block per message: the bytes, 0x80, zeros, and the length in bits in word
    // 14 (little-endian). Messages of at most 15 bytes touch words 0–3 and 14 only.
    let mut block = [[0u32; LANES]; 16];
    for (l, message) in messages.iter().enumerate() {
        let mut bytes = message.bytes;
        bytes[usize::from(message.len)] = 0x80;
        for (j, word) in block.iter_mut().take(4).enumerate() {
            word[l] = u32::from_le_bytes([
                bytes[4 * j],
                bytes[4 * j + 1],
                bytes[4 * j + 2],
                bytes[4 * j + 3],
            ]);
        }
        block[14][l] = u32::from(message.len) * 8;
    }
    const INIT: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
    let mut state = State {
        a: [INIT[0]; LANES],
        b: [INIT[1]; LANES],
        c: [INIT[2]; LANES],
        d: [INIT[3]; LANES],
    };
    state.round(0..16, |i| i, &block, |b, c, d| (b & c) | (!b & d));
    state.round(
        16..32,
        |i| (5 * i + 1) % 16,
        &block,
        |b, c, d| (d & b) | (!d & c),
    );
    state.round(32..48, |i| (3 * i + 5) % 16, &block, |b, c, d| b ^ c ^ d);
    state.round(48..64, |i| (7 * i) % 16, &block, |b, c, d| c ^ (b | !d));
    let mut digests = [0u128; LANES];
    for (l, digest) in digests.iter_mut().enumerate() {
        let words = [
            state.a[l].wrapping_add(INIT[0]),
            state.b[l].wrapping_add(INIT[1]),
            state.c[l].wrapping_add(INIT[2]),
            state.d[l].wrapping_add(INIT[3]),
        ];
        let mut bytes = [0u8; 16];
        for (chunk, word) in bytes.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        *digest = u128::from_be_bytes(bytes);
    }
    digests
}

#[cfg(test)]
mod tests {
    use super::*;
    use md5::{Digest as _, Md5};

    fn reference(bytes: &[u8]) -> u128 {
        u128::from_be_bytes(Md5::digest(bytes).into())
    }

    #[test]
    fn every_length_and_lane_matches_the_md5_crate() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..64 {
            let mut messages = [ShortMessage::default(); LANES];
            for (l, message) in messages.iter_mut().enumerate() {
                let len = (round + l) % (MAX_MESSAGE + 1);
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        (seed >> 56) as u8
                    })
                    .collect();
                *message = ShortMessage::new(&bytes).unwrap();
            }
            let expected: Vec<u128> = messages.iter().map(|m| reference(m.as_bytes())).collect();
            assert_eq!(md5_many(&messages).to_vec(), expected, "dispatched");
            assert_eq!(md5_lanes(&messages).to_vec(), expected, "portable");
        }
    }

    #[test]
    fn long_messages_are_refused() {
        assert!(ShortMessage::new(&[7; MAX_MESSAGE]).is_some());
        assert!(ShortMessage::new(&[7; MAX_MESSAGE + 1]).is_none());
        assert!(ShortMessage::new(&[7; 40]).is_none());
    }
}
