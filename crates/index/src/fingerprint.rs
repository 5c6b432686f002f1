//! The fingerprint types the Hamming indexes work on: plain `u64` and `u128`.
//!
//! The index crate does not depend on `neardup-core`: a SimHash fingerprint is just its bits. The
//! [`Fingerprint`] trait is sealed, so the indexes only ever see these two widths and can rely on
//! the bit helpers below being exact.

use std::fmt::Debug;
use std::hash::Hash;

mod sealed {
    /// Keeps [`super::Fingerprint`] implemented for `u64` and `u128` only.
    pub trait Sealed {}
    impl Sealed for u64 {}
    impl Sealed for u128 {}
}

/// A SimHash fingerprint of `BITS` bits (64 or 128), compared by Hamming distance.
///
/// Bit `i` is the bit of weight `2^i`. Every helper is a few instructions, so the indexes can call
/// them in their inner loops.
///
/// ```
/// use neardup_index::Fingerprint;
/// assert_eq!(0b1011u64.distance(0b0001), 2);
/// assert_eq!(<u128 as Fingerprint>::BITS, 128);
/// ```
pub trait Fingerprint:
    sealed::Sealed + Copy + Ord + Hash + Send + Sync + Debug + Default + 'static
{
    /// Number of bits: 64 or 128.
    const BITS: u32;
    /// The fingerprint with no bit set.
    const ZERO: Self;

    /// Hamming distance: the number of bits in which `self` and `other` differ.
    fn distance(self, other: Self) -> u32;
    /// Bitwise exclusive or.
    fn xor(self, other: Self) -> Self;
    /// Bitwise and.
    fn and(self, other: Self) -> Self;
    /// Bitwise or.
    fn or(self, other: Self) -> Self;
    /// Number of set bits.
    fn ones(self) -> u32;
    /// Rotates the bits left by `n` (bits leaving the top come back at the bottom).
    fn rotate(self, n: u32) -> Self;
    /// The `len` bits starting at bit `start`, as the low bits of a `u64`. Needs `len <= 64` and
    /// `start + len <= BITS`.
    fn field(self, start: u32, len: u32) -> u64;
    /// A fingerprint with only bit `i` set (`i < BITS`).
    fn bit(i: u32) -> Self;
    /// Builds a fingerprint from the low `BITS` bits of a `u128`.
    fn from_u128(value: u128) -> Self;
}

/// Implements [`Fingerprint`] for one unsigned integer type.
macro_rules! impl_fingerprint {
    ($t:ty) => {
        impl Fingerprint for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;

            #[inline]
            fn distance(self, other: Self) -> u32 {
                (self ^ other).count_ones()
            }
            #[inline]
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
            #[inline]
            fn and(self, other: Self) -> Self {
                self & other
            }
            #[inline]
            fn or(self, other: Self) -> Self {
                self | other
            }
            #[inline]
            fn ones(self) -> u32 {
                self.count_ones()
            }
            #[inline]
            fn rotate(self, n: u32) -> Self {
                self.rotate_left(n)
            }
            #[inline]
            fn field(self, start: u32, len: u32) -> u64 {
                debug_assert!(len <= 64 && start + len <= Self::BITS);
                let shifted = self.checked_shr(start).unwrap_or(0);
                let mask = if len >= 64 {
                    u64::MAX
                } else {
                    (1u64 << len) - 1
                };
                // Truncation keeps the low 64 bits, which hold the whole field.
                (shifted as u64) & mask
            }
            #[inline]
            fn bit(i: u32) -> Self {
                1 << i
            }
            #[inline]
            fn from_u128(value: u128) -> Self {
                value as $t
            }
        }
    };
}

impl_fingerprint!(u64);
impl_fingerprint!(u128);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_and_rotate() {
        let x: u64 = 0xABCD_0000_0000_1234;
        assert_eq!(x.field(48, 16), 0xABCD);
        assert_eq!(x.field(0, 16), 0x1234);
        assert_eq!(x.field(0, 64), x);
        assert_eq!(Fingerprint::rotate(x, 16), 0x0000_0000_1234_ABCD);
        let y: u128 = (0xFFu128 << 120) | 7;
        assert_eq!(y.field(120, 8), 0xFF);
        assert_eq!(y.field(64, 64), 0xFF << 56);
        assert_eq!(y.field(0, 3), 7);
        assert_eq!(y.distance(0), 11);
        assert_eq!(<u128 as Fingerprint>::bit(127).ones(), 1);
    }
}
