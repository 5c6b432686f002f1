//! Least-significant-digit radix sort, 8 bits a pass.
//!
//! Used to sort permuted keys in batch all-pairs and rotate-sort-compare: linear time, stable,
//! and passes in which every item has the same digit (e.g. the high bits of short keys) are
//! skipped after one counting scan.

/// Bits per pass.
const DIGIT_BITS: u32 = 8;
/// Below this many items a comparison sort is faster than 256-bucket passes.
const SMALL: usize = 256;

/// Sorts `items` stably by the bits `lo..hi` of their key, where `digit(item, shift)` returns the
/// key bits from `shift` upwards (only the low 8 are used).
pub(crate) fn lsd_sort<T: Copy + Default>(
    items: &mut Vec<T>,
    lo: u32,
    hi: u32,
    digit: impl Fn(&T, u32) -> usize,
) {
    let n = items.len();
    let mut scratch: Vec<T> = Vec::new();
    let mut shift = lo;
    while shift < hi {
        let mut counts = [0usize; 1 << DIGIT_BITS];
        for item in items.iter() {
            counts[digit(item, shift) & 0xFF] += 1;
        }
        if counts.iter().all(|&c| c == 0 || c == n) {
            shift += DIGIT_BITS;
            continue;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = sum;
            sum += here;
        }
        scratch.resize(n, T::default());
        for item in items.iter() {
            let d = digit(item, shift) & 0xFF;
            scratch[counts[d]] = *item;
            counts[d] += 1;
        }
        std::mem::swap(items, &mut scratch);
        shift += DIGIT_BITS;
    }
}

/// Sorts `u64` values by their bits `lo..64` (stable for the bits below `lo` only when radix
/// sorting; small inputs are fully sorted, which orders ties by their low bits too).
pub(crate) fn sort_high_bits(values: &mut Vec<u64>, lo: u32) {
    if values.len() < SMALL {
        values.sort_unstable();
    } else {
        lsd_sort(values, lo, 64, |&v, shift| (v >> shift) as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_sort() {
        let mut x: u64 = 12345;
        let mut v: Vec<u64> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        let mut expected = v.clone();
        expected.sort_unstable();
        sort_high_bits(&mut v, 0);
        assert_eq!(v, expected);
        let mut pairs: Vec<(u128, u32)> = (0..1000u32).map(|i| ((i % 7) as u128, i)).collect();
        lsd_sort(&mut pairs, 0, 128, |p, s| (p.0 >> s) as usize);
        assert!(pairs.windows(2).all(|w| w[0] <= w[1]));
    }
}
