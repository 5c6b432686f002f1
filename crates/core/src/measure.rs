//! Similarity measures on feature sets and token sequences, for verification and explanation.
//!
//! Sets are sorted, de-duplicated slices of feature hashes ([`FeatureSet`]), so every set
//! measure is one linear merge.

use std::collections::HashMap;

/// A set of feature hashes: sorted and without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureSet(Vec<u64>);

impl FeatureSet {
    /// The empty set.
    pub const fn empty() -> Self {
        FeatureSet(Vec::new())
    }

    /// The set of the given hashes.
    pub fn new(hashes: Vec<u64>) -> Self {
        Self::from_hashes(&hashes)
    }

    /// The set of the hashes in `hashes` (in any order, repeats allowed), which the caller
    /// may reuse as a scratch buffer. Holds no spare capacity: sets are kept by the thousand
    /// during verification.
    ///
    /// Large inputs are sorted by scattering them into buckets by their top bits (at least as
    /// many buckets as hashes, so about one a bucket), then one insertion pass over the whole
    /// output: each hash is already in its bucket, so the pass only orders the few that share
    /// one, and its test is almost always "already in order", which the processor predicts.
    /// Feature hashes are uniform, which makes this about twice as fast as buckets of four
    /// sorted one by one (a loop and a mispredicted exit per bucket) and as a comparison sort,
    /// on sets of 300 to 30,000 (`cargo bench -p neardup-core --bench core -- feature-set`). A
    /// skewed input (hashes chosen to share their top bits) cannot make it quadratic: the
    /// insertion pass stops after a few moves per hash and a comparison sort finishes, so the
    /// worst case stays O(n log n). The work space is per thread, so that building thousands
    /// of sets in parallel does not fault in fresh pages for each. Written here because it is
    /// the dedup engine's shingle-set hot spot and needs no general-purpose radix sort.
    pub fn from_hashes(hashes: &[u64]) -> Self {
        const COMPARISON_SORT_UP_TO: usize = 256;
        if hashes.len() <= COMPARISON_SORT_UP_TO {
            let mut sorted = hashes.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            sorted.shrink_to_fit();
            return FeatureSet(sorted);
        }
        // Sorted in per-thread buffers, then copied out at its final size: one allocation
        // per set, no fresh pages for the work space.
        SORT_SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let SortScratch { sorted, starts } = &mut *scratch;
            bucket_sort(hashes, sorted, starts);
            sorted.dedup();
            FeatureSet(sorted.as_slice().to_vec())
        })
    }

    /// The set whose hashes `sorted` already lists ascending without repeats (a set written
    /// out with [`FeatureSet::as_slice`] and read back), or `None` if they are not.
    pub fn from_sorted(sorted: Vec<u64>) -> Option<Self> {
        sorted
            .windows(2)
            .all(|w| w[0] < w[1])
            .then_some(FeatureSet(sorted))
    }

    /// The hashes, sorted.
    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }

    /// Number of distinct features.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Size of the intersection with `other`.
    pub fn intersection_len(&self, other: &FeatureSet) -> usize {
        self.merge_intersection(other, 0).unwrap_or(0)
    }

    /// Size of the intersection with `other` by one linear merge, or `None` as soon as it
    /// cannot reach `needed` (the elements left on the shorter side are too few).
    ///
    /// A plain branching merge: on the near-identical sets that verification sees, almost
    /// every step is a match, so the branches are predicted and the processor runs ahead. (A
    /// branch-free merge, which chains every step on the previous loads, measured 2x slower:
    /// `cargo bench -p neardup-core --bench core -- verify-jaccard`.)
    fn merge_intersection(&self, other: &FeatureSet, needed: usize) -> Option<usize> {
        let (mut i, mut j, mut shared) = (0, 0, 0);
        let (a, b) = (&self.0, &other.0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
            }
            if shared + (a.len() - i).min(b.len() - j) < needed {
                return None;
            }
        }
        Some(shared)
    }
}

/// `hashes` sorted (repeats kept), through buckets of their top bits; see
/// [`FeatureSet::from_hashes`].
fn bucket_sort(hashes: &[u64], sorted: &mut Vec<u64>, starts: &mut Vec<u32>) {
    let Ok(len) = u32::try_from(hashes.len()) else {
        sorted.clear();
        sorted.extend_from_slice(hashes);
        return sorted.sort_unstable();
    };
    // At least as many buckets as hashes (between one and two a hash), at most 2^20 (the
    // work space stays within 4 MiB a thread; a larger set has more a bucket).
    let bits = (len.max(2).ilog2() + 1).clamp(4, 20);
    let bucket = |hash: u64| (hash >> (64 - bits)) as usize;
    // `starts[b]` is where bucket b begins in the output; then, while scattering, where its
    // next element goes.
    starts.clear();
    starts.resize((1 << bits) + 1, 0);
    for &hash in hashes {
        starts[bucket(hash) + 1] += 1;
    }
    let mut total = 0;
    for start in starts.iter_mut() {
        total += *start;
        *start = total;
    }
    sorted.clear();
    sorted.resize(hashes.len(), 0);
    for &hash in hashes {
        let slot = &mut starts[bucket(hash)];
        sorted[*slot as usize] = hash;
        *slot += 1;
    }
    if !insertion_pass(sorted, 8 * hashes.len()) {
        sorted.sort_unstable();
    }
}

/// Sorts `values` by insertion if that takes at most `moves` moves, and says whether it did;
/// else leaves them in some order (the same values) and returns false.
fn insertion_pass(values: &mut [u64], moves: usize) -> bool {
    let mut left = moves;
    for i in 1..values.len() {
        let value = values[i];
        if values[i - 1] <= value {
            continue;
        }
        let mut j = i;
        while j > 0 && values[j - 1] > value {
            values[j] = values[j - 1];
            j -= 1;
        }
        values[j] = value;
        match left.checked_sub(i - j) {
            Some(rest) => left = rest,
            None => return false,
        }
    }
    true
}

/// The work space of [`bucket_sort`], one per thread.
#[derive(Default)]
struct SortScratch {
    sorted: Vec<u64>,
    starts: Vec<u32>,
}

thread_local! {
    static SORT_SCRATCH: std::cell::RefCell<SortScratch> = std::cell::RefCell::default();
}

/// The number of top bits that make buckets of about four elements for a set of `len`
/// elements (at least 16 buckets, at most 2^20).
fn bucket_bits(len: usize) -> u32 {
    (len / 4).max(1).ilog2().clamp(4, 20)
}

/// Jaccard resemblance |A ∩ B| / |A ∪ B|; 1 for two empty sets.
///
/// ```
/// use neardup_core::measure::{jaccard, FeatureSet};
/// // The slides' example: A = {0,1,2,5,6}, B = {0,2,3,5,7,9} → 3/8.
/// let a = FeatureSet::new(vec![0, 1, 2, 5, 6]);
/// let b = FeatureSet::new(vec![0, 2, 3, 5, 7, 9]);
/// assert_eq!(jaccard(&a, &b), 0.375);
/// ```
pub fn jaccard(a: &FeatureSet, b: &FeatureSet) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let shared = a.intersection_len(b);
    shared as f64 / (a.len() + b.len() - shared) as f64
}

/// The Jaccard resemblance of `a` and `b` if it is at least `threshold`, else `None`: exact,
/// but it stops as soon as the threshold is out of reach. Sets whose sizes alone rule it out
/// (J ≤ min/max) are rejected without a merge; the merge stops when the shared elements found
/// plus the most that can still be found are too few. Verification of near-identical template
/// pages (close, but under the threshold) costs a fraction of a full merge this way.
///
/// ```
/// use neardup_core::measure::{jaccard_at_least, FeatureSet};
/// let a = FeatureSet::new((0..100).collect());
/// let b = FeatureSet::new((5..100).collect());
/// assert_eq!(jaccard_at_least(&a, &b, 0.9), Some(0.95));
/// assert_eq!(jaccard_at_least(&a, &b, 0.96), None);
/// ```
pub fn jaccard_at_least(a: &FeatureSet, b: &FeatureSet, threshold: f64) -> Option<f64> {
    let (x, y) = (a.as_slice(), b.as_slice());
    if x.is_empty() && y.is_empty() {
        return (1.0 >= threshold).then_some(1.0);
    }
    let needed = jaccard_needed(x.len(), y.len(), threshold);
    if x.len().min(y.len()) < needed {
        return None;
    }
    let shared = a.merge_intersection(b, needed)?;
    let similarity = shared as f64 / (x.len() + y.len() - shared) as f64;
    (similarity >= threshold).then_some(similarity)
}

/// The fewest shared elements two sets of `len_a` and `len_b` elements need for a Jaccard
/// resemblance of at least `threshold`, rounded down a little: a lower bound for pruning only
/// (floating-point error must never rule out a pair exactly at the threshold; the final
/// comparison of the true resemblance decides).
///
/// J = I / (|A| + |B| − I) ≥ t  ⇔  I ≥ t (|A| + |B|) / (1 + t).
pub fn jaccard_needed(len_a: usize, len_b: usize, threshold: f64) -> usize {
    let bound = threshold * (len_a + len_b) as f64 / (1.0 + threshold);
    (bound - 1e-6).ceil().max(0.0) as usize
}

/// The fewest shared elements for which a set of `len` elements is contained in another at
/// `threshold` or more, rounded down a little as [`jaccard_needed`] is.
pub fn containment_needed(len: usize, threshold: f64) -> usize {
    (threshold * len as f64 - 1e-6).ceil().max(0.0) as usize
}

/// The number of elements of a [`FeatureSet`] in each of 2^b buckets (a bucket is the top b
/// bits of the hash): a summary of about a quarter of a byte an element that bounds the size of
/// an intersection from above, exactly, without a merge.
///
/// |A ∩ B| ≤ Σ_k min(|A_k|, |B_k|), since shared elements fall in the same bucket. With about
/// four elements per bucket, two sets that differ in a tenth or more of their elements are
/// told apart by the bound alone: the unshared elements rarely meet in a bucket. Verification
/// of template pages (close in SimHash, under the Jaccard threshold) is mostly such pairs;
/// the bound costs one pass over the buckets instead of a merge over the elements, and the
/// counts are small enough to stay in memory while the sets themselves are on disk.
///
/// A count is one byte. A set whose bucket would hold 255 elements or more (60 times its
/// expected size, which only hashes chosen to collide make) has no counts, and bounds nothing.
///
/// ```
/// use neardup_core::measure::{BucketCounts, FeatureSet};
/// let a = FeatureSet::new((0..1000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect());
/// let b = FeatureSet::new((500..1500u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect());
/// let bound = BucketCounts::of(&a).intersection_bound(&BucketCounts::of(&b));
/// assert!(bound >= a.intersection_len(&b) && bound < 1000);
/// ```
#[derive(Debug, Clone)]
pub struct BucketCounts {
    /// A byte a bucket (2^b of them); empty when a bucket overflowed.
    counts: Box<[u8]>,
}

impl BucketCounts {
    /// The counts of `set`, with about four elements per bucket (at least 16 buckets, at
    /// most 2^20).
    pub fn of(set: &FeatureSet) -> Self {
        let bits = bucket_bits(set.len());
        let mut counts = vec![0u8; 1 << bits].into_boxed_slice();
        for &hash in set.as_slice() {
            let count = &mut counts[(hash >> (64 - bits)) as usize];
            match count.checked_add(1) {
                Some(more) => *count = more,
                None => {
                    return BucketCounts {
                        counts: Box::new([]),
                    }
                }
            }
        }
        BucketCounts { counts }
    }

    /// The counts, a byte a bucket, for a caller that keeps many sets' counts in one place
    /// (see [`intersection_bound`]); empty when a bucket overflowed a byte.
    pub fn as_bytes(&self) -> &[u8] {
        &self.counts
    }

    /// An upper bound on |A ∩ B|, where `self` and `other` are the counts of A and B. Exact
    /// as a bound: never below the true size.
    pub fn intersection_bound(&self, other: &BucketCounts) -> usize {
        intersection_bound(&self.counts, &other.counts)
    }
}

/// An upper bound on |A ∩ B| from the counts of A and B as [`BucketCounts::as_bytes`] gives
/// them: exact as a bound, `usize::MAX` (no bound) when either has none.
pub fn intersection_bound(a: &[u8], b: &[u8]) -> usize {
    if a.is_empty() || b.is_empty() {
        return usize::MAX;
    }
    let (fine, coarse) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    // A coarse bucket is consecutive fine ones (the counts of both are powers of two).
    let group = fine.len() / coarse.len();
    let bound: u64 = if group == 1 {
        // 256 byte minima sum within a u16 (255 · 256 < 2^16): the compiler keeps them in
        // vector lanes, where a wider sum per byte does not.
        fine.chunks(256)
            .zip(coarse.chunks(256))
            .map(|(x, y)| {
                let sum: u16 = x.iter().zip(y).map(|(&x, &y)| u16::from(x.min(y))).sum();
                u64::from(sum)
            })
            .sum()
    } else {
        fine.chunks_exact(group)
            .zip(coarse)
            .map(|(chunk, &y)| {
                let x: u32 = chunk.iter().map(|&c| u32::from(c)).sum();
                u64::from(x.min(u32::from(y)))
            })
            .sum()
    };
    bound as usize
}

/// Containment of `a` in `b`: |A ∩ B| / |A| (Broder); 1 when `a` is empty.
pub fn containment(a: &FeatureSet, b: &FeatureSet) -> f64 {
    if a.is_empty() {
        return 1.0;
    }
    a.intersection_len(b) as f64 / a.len() as f64
}

/// Cosine similarity of two weighted feature vectors (feature hash → weight); 0 when either is
/// empty or all-zero.
pub fn cosine(a: &HashMap<u64, f64>, b: &HashMap<u64, f64>) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let dot: f64 = small
        .iter()
        .filter_map(|(k, x)| large.get(k).map(|y| x * y))
        .sum();
    let norm = |v: &HashMap<u64, f64>| v.values().map(|x| x * x).sum::<f64>().sqrt();
    let denominator = norm(a) * norm(b);
    if denominator == 0.0 {
        0.0
    } else {
        dot / denominator
    }
}

/// Largest `len(a) * len(b)` for which [`token_edit_distance`] computes an answer: beyond it the
/// quadratic cost is refused rather than paid.
pub const EDIT_DISTANCE_MAX_CELLS: u64 = 400_000_000;

/// Levenshtein distance between two token sequences (insertions, deletions and substitutions of
/// whole tokens), or `None` when the sequences are too long for the quadratic algorithm.
pub fn token_edit_distance<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    if (a.len() as u64).saturating_mul(b.len() as u64) > EDIT_DISTANCE_MAX_CELLS {
        return None;
    }
    // strsim wants sized iterables; a vector of references costs one small allocation.
    let (a, b): (Vec<&T>, Vec<&T>) = (a.iter().collect(), b.iter().collect());
    Some(strsim::generic_levenshtein(&a, &b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Strategy;

    proptest::proptest! {
        /// The early-exit form agrees with the full computation.
        #[test]
        fn jaccard_at_least_agrees_with_jaccard(
            a in proptest::collection::vec(0u64..200, 0..150),
            b in proptest::collection::vec(0u64..200, 0..150),
            threshold in proptest::prop_oneof![0.0f64..=1.0, (1u32..20, 1u32..20).prop_map(|(p, q)| f64::from(p.min(q)) / f64::from(p.max(q)))],
        ) {
            let (a, b) = (FeatureSet::new(a), FeatureSet::new(b));
            let full = jaccard(&a, &b);
            let expected = (full >= threshold).then_some(full);
            proptest::prop_assert_eq!(jaccard_at_least(&a, &b, threshold), expected);
        }

        /// The bucket bound is never below the true intersection, whatever the sizes (and so
        /// the bucket widths) of the two sets.
        #[test]
        fn bucket_bound_is_an_upper_bound(
            a in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..400),
            b in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..2000),
            shared in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..400),
        ) {
            let (a, b) = (
                FeatureSet::new(a.iter().chain(&shared).copied().collect()),
                FeatureSet::new(b.iter().chain(&shared).copied().collect()),
            );
            let (ca, cb) = (BucketCounts::of(&a), BucketCounts::of(&b));
            let bound = ca.intersection_bound(&cb);
            proptest::prop_assert!(bound >= a.intersection_len(&b));
            proptest::prop_assert_eq!(bound, cb.intersection_bound(&ca));
            proptest::prop_assert!(bound <= a.len().min(b.len()));
        }

        /// The bound stays an upper bound where buckets overflow a byte: hashes crowded into a
        /// few buckets (their top bits drawn from a handful of values), shared or not.
        #[test]
        fn bucket_bound_is_an_upper_bound_with_full_buckets(
            a_low in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..1500),
            b_low in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..1500),
            shared_low in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..1500),
            tops in proptest::collection::vec(0u64..3, 1..4),
        ) {
            let crowd = |low: &[u64]| -> Vec<u64> {
                low.iter()
                    .enumerate()
                    .map(|(i, &l)| (tops[i % tops.len()] << 60) | (l >> 4))
                    .collect()
            };
            let shared = crowd(&shared_low);
            let (a, b) = (
                FeatureSet::new(crowd(&a_low).into_iter().chain(shared.iter().copied()).collect()),
                FeatureSet::new(crowd(&b_low).into_iter().chain(shared).collect()),
            );
            let (ca, cb) = (BucketCounts::of(&a), BucketCounts::of(&b));
            let bound = ca.intersection_bound(&cb);
            proptest::prop_assert!(bound >= a.intersection_len(&b));
            proptest::prop_assert_eq!(bound, cb.intersection_bound(&ca));
        }

        /// The bucket sort gives what a comparison sort gives, on uniform and on skewed input.
        #[test]
        fn sets_are_sorted_and_distinct(
            uniform in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..3000),
            skewed in proptest::collection::vec(0u64..50, 0..3000),
        ) {
            for hashes in [uniform, skewed] {
                let mut expected = hashes.clone();
                expected.sort_unstable();
                expected.dedup();
                let set = FeatureSet::from_hashes(&hashes);
                proptest::prop_assert_eq!(set.as_slice(), &expected[..]);
            }
        }

        /// The merge counts the intersection exactly, across many early-stop checks.
        #[test]
        fn intersection_is_exact(
            a in proptest::collection::vec(0u64..400, 0..300),
            b in proptest::collection::vec(0u64..400, 0..300),
        ) {
            let expected = a
                .iter()
                .collect::<std::collections::HashSet<_>>()
                .intersection(&b.iter().collect())
                .count();
            let (a, b) = (FeatureSet::new(a), FeatureSet::new(b));
            proptest::prop_assert_eq!(a.intersection_len(&b), expected);
            proptest::prop_assert_eq!(b.intersection_len(&a), expected);
        }
    }

    #[test]
    fn large_and_skewed_sets_are_sorted() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state ^ (state >> 29)
        };
        let uniform: Vec<u64> = (0..100_000).map(|_| next()).collect();
        // Skewed: every hash in one top-8-bit part, many repeats.
        let skewed: Vec<u64> = (0..100_000).map(|_| (next() >> 12) % 5_000).collect();
        // Colliding: distinct hashes that all share their top 40 bits (one bucket).
        let colliding: Vec<u64> = (0..100_000).map(|_| (7 << 60) | (next() >> 40)).collect();
        for hashes in [uniform, skewed, colliding] {
            let mut expected = hashes.clone();
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(FeatureSet::from_hashes(&hashes).as_slice(), &expected[..]);
        }
    }

    #[test]
    fn the_insertion_pass_gives_up_past_its_moves() {
        let reversed: Vec<u64> = (0..100).rev().collect();
        let mut values = reversed.clone();
        assert!(!insertion_pass(&mut values, 10));
        values.sort_unstable();
        assert_eq!(values, (0..100).collect::<Vec<_>>(), "the same values");
        let mut values = reversed;
        assert!(insertion_pass(&mut values, 100 * 99 / 2));
        assert_eq!(values, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn containment_is_directional() {
        let small = FeatureSet::new(vec![1, 2]);
        let large = FeatureSet::new(vec![1, 2, 3, 4]);
        assert_eq!(containment(&small, &large), 1.0);
        assert_eq!(containment(&large, &small), 0.5);
        assert_eq!(jaccard(&small, &large), 0.5);
        assert_eq!(jaccard(&FeatureSet::default(), &FeatureSet::default()), 1.0);
    }

    #[test]
    fn cosine_of_seed_004_sentences() {
        // Seed 004: A = [1,2,2,1,1,1,0], B = [1,2,2,1,1,2,1].
        let a: HashMap<u64, f64> = [1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 0.0]
            .into_iter()
            .enumerate()
            .map(|(i, w)| (i as u64, w))
            .collect();
        let b: HashMap<u64, f64> = [1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 1.0]
            .into_iter()
            .enumerate()
            .map(|(i, w)| (i as u64, w))
            .collect();
        let expected = 13.0 / (12.0f64.sqrt() * 16.0f64.sqrt());
        assert!((cosine(&a, &b) - expected).abs() < 1e-12);
        assert_eq!(cosine(&a, &HashMap::new()), 0.0);
    }

    #[test]
    fn edit_distance_counts_token_operations() {
        let a = ["the", "cat", "sat", "on", "the", "mat"];
        let b = ["the", "cat", "sat", "on", "a", "mat"];
        assert_eq!(token_edit_distance(&a, &b), Some(1));
        assert_eq!(token_edit_distance(&a, &a[..0]), Some(6));
    }
}
