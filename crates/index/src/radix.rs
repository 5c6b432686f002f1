//! Least-significant-digit radix sort, 8 bits a pass.
//!
//! Used to sort permuted keys in batch all-pairs and rotate-sort-compare: linear time, stable,
//! and passes in which every item has the same digit (e.g. the high bits of short keys) are
//! skipped after one counting scan.

use rayon::prelude::*;

/// Bits per pass.
const DIGIT_BITS: u32 = 8;
/// Below this many items a comparison sort is faster than 256-bucket passes.
const SMALL: usize = 256;
/// Below this many items [`par_lsd_sort`] sorts on one thread.
const PARALLEL_MIN: usize = 1 << 16;

/// Sorts `items` stably by the bits `lo..hi` of their key, where `digit(item, shift)` returns the
/// key bits from `shift` upwards (only the low 8 are used).
///
/// One scan counts the digits of every pass; a pass whose items all share one digit is skipped.
pub(crate) fn lsd_sort<T: Copy + Default>(
    items: &mut Vec<T>,
    lo: u32,
    hi: u32,
    digit: impl Fn(&T, u32) -> usize,
) {
    let n = items.len();
    let shifts: Vec<u32> = (lo..hi).step_by(DIGIT_BITS as usize).collect();
    let mut counts = vec![[0usize; 1 << DIGIT_BITS]; shifts.len()];
    for item in items.iter() {
        for (pass, &shift) in shifts.iter().enumerate() {
            counts[pass][digit(item, shift) & 0xFF] += 1;
        }
    }
    let mut scratch: Vec<T> = Vec::new();
    for (pass, &shift) in shifts.iter().enumerate() {
        let counts = &mut counts[pass];
        if counts.contains(&n) {
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
    }
}

/// Sorts `items` stably by the bits `0..bits` of their key, like [`lsd_sort`], on all threads:
/// one pass on the top digit splits the items into 256 ranges, then each range is sorted by the
/// lower digits in parallel.
pub(crate) fn par_lsd_sort<T, D>(items: &mut Vec<T>, bits: u32, digit: D)
where
    T: Copy + Default + Send + Sync,
    D: Fn(&T, u32) -> usize + Sync,
{
    if items.len() < PARALLEL_MIN || bits <= DIGIT_BITS {
        lsd_sort(items, 0, bits, digit);
        return;
    }
    let top = bits - DIGIT_BITS;
    let mut counts = [0usize; 1 << DIGIT_BITS];
    for item in items.iter() {
        counts[digit(item, top) & 0xFF] += 1;
    }
    let mut next = [0usize; 1 << DIGIT_BITS];
    let mut sum = 0;
    for (start, &count) in next.iter_mut().zip(&counts) {
        *start = sum;
        sum += count;
    }
    let mut out = vec![T::default(); items.len()];
    for item in items.iter() {
        let d = digit(item, top) & 0xFF;
        out[next[d]] = *item;
        next[d] += 1;
    }
    let mut parts: Vec<&mut [T]> = Vec::with_capacity(counts.len());
    let mut rest = out.as_mut_slice();
    for &count in &counts {
        let (part, tail) = rest.split_at_mut(count);
        parts.push(part);
        rest = tail;
    }
    parts.into_par_iter().for_each(|part| {
        let mut sorted = part.to_vec();
        lsd_sort(&mut sorted, 0, top, &digit);
        part.copy_from_slice(&sorted);
    });
    *items = out;
}

/// Sorts `items` by the bits `lo..hi` of `key(item)` (the bits above `hi` must be zero). Items
/// whose bits `lo..hi` are equal keep their input order provided their keys' bits below `lo`
/// ascend in input order, as the packed `key << lo | position` keys of the callers do.
pub(crate) fn sort_by_high_bits<T: Copy + Default>(
    items: &mut Vec<T>,
    lo: u32,
    hi: u32,
    key: impl Fn(&T) -> u64,
) {
    if items.len() < SMALL {
        items.sort_unstable_by_key(&key);
    } else {
        lsd_sort(items, lo, hi, |item, shift| (key(item) >> shift) as usize);
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
        sort_by_high_bits(&mut v, 0, 64, |&x| x);
        assert_eq!(v, expected);
        let mut pairs: Vec<(u128, u32)> = (0..1000u32).map(|i| ((i % 7) as u128, i)).collect();
        lsd_sort(&mut pairs, 0, 128, |p, s| (p.0 >> s) as usize);
        assert!(pairs.windows(2).all(|w| w[0] <= w[1]));
        let mut many: Vec<(u64, u32)> = v.iter().cycle().take(200_000).map(|&x| (x, 0)).collect();
        for (i, item) in many.iter_mut().enumerate() {
            item.1 = i as u32;
        }
        let mut expected = many.clone();
        expected.sort_unstable();
        par_lsd_sort(&mut many, 64, |p, s| (p.0 >> s) as usize);
        assert_eq!(many, expected, "sorted, and stable");
    }
}
