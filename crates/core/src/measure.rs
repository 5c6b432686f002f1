//! Similarity measures on feature sets and token sequences, for verification and explanation.
//!
//! Sets are sorted, de-duplicated slices of feature hashes ([`FeatureSet`]), so every set
//! measure is one linear merge.

use std::collections::HashMap;

use crate::feature_hashing::HashSink;
use crate::scratch::{with_work_space, Reused, WorkSpace};

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
    /// Small inputs (up to 256 hashes) are sorted by comparison. Larger ones are sorted by
    /// scattering them into buckets by their top bits (at least as many buckets as hashes, so
    /// about one a bucket), then one insertion pass that also drops repeats: each hash is
    /// already in its bucket, so the pass only orders the few that share one, and its test is
    /// almost always "already in order", which the processor predicts. Feature hashes are
    /// uniform, which makes this about twice as fast as a comparison sort.
    ///
    /// Two things make the shingle sets of `neardup dedup` costlier than random input of the
    /// same size, and are handled first. They are large: half their hashes are in sets of
    /// 37,000 or more on the 1 GB corpus, and above about 2^17 hashes a scatter's input,
    /// output and counters leave the core's cache (each hash written a miss). And they repeat
    /// themselves: sets of 2^14 hashes or more are 28% distinct or less, 5% from 2^20 (long
    /// documents of repeated passages). So an input of 2^14 hashes or more first goes through
    /// a direct-mapped table of the hashes seen (exact: it drops only repeats,
    /// most of them); what is left above 2^17 is split by its top bits into parts of about
    /// 2^13, each scattered, ordered and rid of its last repeats while it is in cache, and
    /// appended to the set. In the engine, about 7 ns a hash sorted before this, about 4.5
    /// after (BENCHMARKS.md, issue 22, step 7; `cargo bench -p neardup-core --bench core --
    /// feature-set`, whose `-repeats` inputs are a third distinct).
    ///
    /// A skewed input (hashes chosen to share their top bits) cannot make it quadratic: the
    /// split then makes one part, the insertion pass stops after a few moves per hash and a
    /// comparison sort finishes, so the worst case stays O(n log n). The work spaces (the
    /// table, the split parts, the sorted part and the bucket counters) are per thread and
    /// kept, so that building thousands of sets in parallel does not fault in fresh pages for
    /// each; the set itself is one allocation of its final size. Written here because it is
    /// the dedup engine's shingle-set hot spot and needs no general-purpose radix sort.
    pub fn from_hashes(hashes: &[u64]) -> Self {
        if hashes.len() <= COMPARISON_SORT_UP_TO {
            return FeatureSet(sorted_by_comparison(hashes));
        }
        with_work_space(&SORT_SCRATCH, |scratch| {
            let filter = hashes.len() >= FILTER_FROM;
            FeatureSet(sorted_distinct(hashes, scratch, filter))
        })
    }

    /// The set of the hashes `hash` hands to its sink, about `expected` of them at most (the
    /// length of the text they are hashed from): [`FeatureSet::from_hashes`] of them, without
    /// holding them all at once. From [`FILTER_FROM`] expected hashes on, [`drop_seen`]'s
    /// table drops most repeats as they come, so that a long document of repeated passages
    /// holds about its distinct hashes before the sort, not every one (a 3.2 MB document of
    /// the dedup corpus: 26 MB of hashes, about 5% distinct).
    pub(crate) fn from_hashing(expected: usize, hash: impl FnOnce(&mut SetHashes<'_>)) -> Self {
        with_work_space(&SORT_SCRATCH, |scratch| {
            let mut gathered = std::mem::take(&mut scratch.gathered);
            gathered.clear();
            let seen =
                (expected >= FILTER_FROM).then(|| SeenTable::new(&mut scratch.seen, expected));
            hash(&mut SetHashes {
                hashes: &mut gathered,
                seen,
            });
            let set = if gathered.len() <= COMPARISON_SORT_UP_TO {
                sorted_by_comparison(&gathered)
            } else {
                // Repeats were dropped on the way, or there are too few for the filter.
                sorted_distinct(&gathered, scratch, false)
            };
            scratch.gathered = gathered;
            FeatureSet(set)
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

/// Largest input [`sorted_distinct`] scatters in one pass: up to 2^17 hashes, a scatter runs
/// at 4 to 7 ns a hash (the input, the output and the bucket counters, about 20 bytes a hash,
/// mostly within the core's 2 MiB cache); above it, the input is split first.
const ONE_SCATTER_UP_TO: usize = 1 << 17;

/// The size, as a power of two, of the parts a larger input is split into: 2^13 hashes (64
/// KiB) and their counters are sorted within the core's cache.
const PART_BITS: u32 = 13;

/// The most top bits a split uses: at most 1,024 parts, whose write positions stay in cache
/// (the parts of a larger input hold more than 2^13 hashes each).
const MAX_SPLIT_BITS: u32 = 10;

/// Largest input [`FeatureSet::from_hashes`] sorts by comparison.
const COMPARISON_SORT_UP_TO: usize = 256;

/// `hashes` (any order, repeats allowed) sorted ascending without repeats by comparison, in an
/// allocation of their final size: for a few, or for more than the scatter's `u32` counters
/// hold.
fn sorted_by_comparison(hashes: &[u64]) -> Vec<u64> {
    let mut sorted = hashes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.shrink_to_fit();
    sorted
}

/// `hashes` (more than a few, any order, repeats allowed) sorted ascending without repeats,
/// in an allocation of their final size, most repeats first dropped by [`drop_seen`] if
/// `filter`; see [`FeatureSet::from_hashes`].
fn sorted_distinct(hashes: &[u64], scratch: &mut SortScratch, filter: bool) -> Vec<u64> {
    let len = hashes.len();
    if u32::try_from(len).is_err() {
        return sorted_by_comparison(hashes);
    }
    let SortScratch {
        sorted,
        parts,
        starts,
        seen,
        unseen,
        ..
    } = scratch;
    let hashes = if filter {
        drop_seen(hashes, seen, unseen)
    } else {
        hashes
    };
    let len = hashes.len();
    if len <= ONE_SCATTER_UP_TO {
        let sorted = at_least(sorted, len);
        let distinct = scatter_distinct(hashes, sorted, 0, starts);
        return sorted[..distinct].to_vec();
    }
    // Split by the top bits into parts of about 2^PART_BITS hashes.
    let split = (len.ilog2() - PART_BITS).clamp(1, MAX_SPLIT_BITS);
    let part_of = |hash: u64| (hash >> (64 - split)) as usize;
    // `ends[p]` is where part p ends in `parts`, once the counts are summed.
    let mut ends = [0u32; 1 << MAX_SPLIT_BITS];
    let ends = &mut ends[..1 << split];
    for &hash in hashes {
        ends[part_of(hash)] += 1;
    }
    let mut total = 0;
    for end in ends.iter_mut() {
        total += *end;
        *end = total;
    }
    // Filled from each part's end down (a hash's slot is its part's end, less the part's
    // hashes that came after it): `ends` becomes the parts' starts.
    let parts = at_least(parts, len);
    for &hash in hashes.iter().rev() {
        let slot = &mut ends[part_of(hash)];
        *slot -= 1;
        parts[*slot as usize] = hash;
    }
    // Each part sorted in cache, its distinct hashes appended: the parts are in order.
    let mut set = Vec::with_capacity(len);
    for (p, &start) in ends.iter().enumerate() {
        let start = start as usize;
        let end = ends.get(p + 1).map_or(len, |&next| next as usize);
        if start == end {
            continue;
        }
        let sorted = at_least(sorted, end - start);
        let distinct = scatter_distinct(&parts[start..end], sorted, split, starts);
        set.extend_from_slice(&sorted[..distinct]);
    }
    // In place: the allocator shrinks the block without copying it.
    set.shrink_to_fit();
    set
}

/// Smallest input [`sorted_distinct`] first rids of most of its repeats ([`drop_seen`]): in
/// the dedup corpus, sets of 2^14 shingles or more are 28% distinct or less (and those of 2^20
/// or more, long documents of repeated passages, 5%).
const FILTER_FROM: usize = 1 << 14;

/// The most slots, as a power of two, of [`drop_seen`]'s table: 2^16 (512 KiB) stays in the
/// core's cache beside the sort's work space.
const MAX_SEEN_BITS: u32 = 16;

/// The hashes of `hashes` that a direct-mapped table of the latest hash a slot (indexed by the
/// low bits) did not hold when they came, in order, in `unseen`: every distinct hash is kept
/// (its first occurrence is always unseen), most repeats are not (a repeat is dropped only if
/// its slot still holds it: an exact test). The table has one slot for every two hashes, at
/// most 2^[`MAX_SEEN_BITS`]; one pass, without a branch on the test. On the corpus's
/// shingle sets of 2^14 hashes or more it drops most of them, so that the sort that follows
/// handles a fraction (sets of 2^20 of the corpus's texts, timed stand-alone: 12 ns a hash
/// sorted → 3).
fn drop_seen<'a>(hashes: &[u64], seen: &mut Vec<u64>, unseen: &'a mut Vec<u64>) -> &'a [u64] {
    let mut table = SeenTable::new(seen, hashes.len());
    let unseen = at_least(unseen, hashes.len());
    let mut kept = 0;
    for &hash in hashes {
        // Written whatever it is; counted only if new.
        unseen[kept] = hash;
        kept += usize::from(table.is_new(hash));
    }
    &unseen[..kept]
}

/// [`drop_seen`]'s direct-mapped table of the latest hash a slot (indexed by the low bits):
/// one slot for every two hashes expected, at most 2^[`MAX_SEEN_BITS`].
struct SeenTable<'a> {
    slots: &'a mut [u64],
    mask: usize,
}

impl<'a> SeenTable<'a> {
    /// A table for about `len` hashes in `slots`' memory.
    fn new(slots: &'a mut Vec<u64>, len: usize) -> Self {
        let bits = (len.max(4).ilog2() - 1).clamp(1, MAX_SEEN_BITS);
        // Slot i starts with a value whose low bits are not i: no hash that maps to it equals it.
        slots.clear();
        slots.extend((0..1u64 << bits).map(|i| i ^ 1));
        SeenTable {
            slots,
            mask: (1usize << bits) - 1,
        }
    }

    /// Whether `hash` is not its slot's latest hash (an exact test: `false` only for a
    /// repeat); it becomes the slot's latest.
    #[inline(always)]
    fn is_new(&mut self, hash: u64) -> bool {
        let slot = &mut self.slots[hash as usize & self.mask];
        let new = *slot != hash;
        *slot = hash;
        new
    }
}

/// The sink a fingerprinter hashes a [`FeatureSet`]'s features into
/// ([`FeatureSet::from_hashing`]): the hashes in any order, most repeats dropped when a
/// [`SeenTable`] filters them.
pub(crate) struct SetHashes<'a> {
    hashes: &'a mut Vec<u64>,
    seen: Option<SeenTable<'a>>,
}

impl HashSink for SetHashes<'_> {
    #[inline(always)]
    fn one(&mut self, hash: u128) {
        // Always 64-bit hashes: the low half of 128-bit ones.
        let hash = hash as u64;
        if self.seen.as_mut().is_none_or(|seen| seen.is_new(hash)) {
            self.hashes.push(hash);
        }
    }

    #[inline(always)]
    fn many64(&mut self, hashes: &[u64]) {
        match &mut self.seen {
            None => self.hashes.extend_from_slice(hashes),
            Some(seen) => self
                .hashes
                .extend(hashes.iter().copied().filter(|&hash| seen.is_new(hash))),
        }
    }
}

/// The first `len` elements of `buffer`, grown to hold them if it is shorter: a work space
/// zeroed only when it grows, not on every use.
fn at_least(buffer: &mut Vec<u64>, len: usize) -> &mut [u64] {
    if buffer.len() < len {
        buffer.resize(len, 0);
    }
    &mut buffer[..len]
}

/// Sorts `hashes` (which share their top `skip` bits) into `out` (as long) through buckets of
/// their next bits, at least as many buckets as hashes (at most 2^20), and one insertion pass
/// that drops repeats (a comparison sort when that pass gives up, on input crowded into a few
/// buckets); returns how many distinct hashes lead `out`.
fn scatter_distinct(hashes: &[u64], out: &mut [u64], skip: u32, starts: &mut Vec<u32>) -> usize {
    debug_assert_eq!(hashes.len(), out.len());
    let len = hashes.len() as u32;
    let bits = (len.max(2).ilog2() + 1).clamp(4, 20).min(64 - skip);
    let shift = 64 - skip - bits;
    let mask = (1usize << bits) - 1;
    let bucket = |hash: u64| (hash >> shift) as usize & mask;
    // `starts[b]` is where bucket b begins in `out`; then, while scattering, where its next
    // element goes.
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
    for &hash in hashes {
        let slot = &mut starts[bucket(hash)];
        out[*slot as usize] = hash;
        *slot += 1;
    }
    match insertion_distinct(out, 8 * hashes.len()) {
        Some(distinct) => distinct,
        None => {
            out.sort_unstable();
            dedup_sorted(out)
        }
    }
}

/// Sorts `values` by insertion, dropping repeats, if that takes at most `moves` moves, and
/// returns how many distinct values then lead `values`; else `None`, with `values` holding
/// the same distinct values in some order, some more than once (every slot always holds one
/// of the input's values, and each distinct value stays in at least one: a comparison sort
/// and [`dedup_sorted`] finish the work).
///
/// One pass: a value in order after the last kept one is written after it (and counted only
/// if it differs, without a branch: repeats are common in shingle sets and unpredictable);
/// a value out of order is inserted where it belongs, unless it is there already.
fn insertion_distinct(values: &mut [u64], moves: usize) -> Option<usize> {
    let Some(&first) = values.first() else {
        return Some(0);
    };
    let (mut kept, mut last, mut left) = (1, first, moves);
    for i in 1..values.len() {
        let value = values[i];
        // `kept <= i`: the slot was read already (or is this value's own).
        values[kept] = value;
        if last <= value {
            kept += usize::from(last != value);
            last = value;
            continue;
        }
        // Out of order: its place among the kept values, after any smaller or equal one.
        let mut j = kept - 1;
        while j > 0 && values[j - 1] > value {
            j -= 1;
        }
        if j > 0 && values[j - 1] == value {
            continue;
        }
        let moved = kept - j;
        left = left.checked_sub(moved)?;
        values.copy_within(j..kept, j + 1);
        values[j] = value;
        kept += 1;
    }
    Some(kept)
}

/// Drops the repeats of sorted `values` in place, and returns how many distinct values then
/// lead it.
fn dedup_sorted(values: &mut [u64]) -> usize {
    let Some(&first) = values.first() else {
        return 0;
    };
    let (mut kept, mut last) = (1, first);
    for i in 1..values.len() {
        let value = values[i];
        values[kept] = value;
        kept += usize::from(value != last);
        last = value;
    }
    kept
}

/// The work space of [`sorted_distinct`], one per thread.
#[derive(Default)]
struct SortScratch {
    /// An input (or a part of one) sorted, its distinct hashes leading.
    sorted: Vec<u64>,
    /// A large input split into parts by its top bits.
    parts: Vec<u64>,
    /// [`drop_seen`]'s table: the latest hash a slot.
    seen: Vec<u64>,
    /// The hashes [`drop_seen`] keeps.
    unseen: Vec<u64>,
    /// The bucket counters of a scatter.
    starts: Vec<u32>,
    /// The hashes [`FeatureSet::from_hashing`] gathers.
    gathered: Vec<u64>,
}

impl WorkSpace for SortScratch {
    fn keep_small(&mut self) {
        let SortScratch {
            sorted,
            parts,
            seen,
            unseen,
            starts,
            gathered,
        } = self;
        sorted.keep_small();
        parts.keep_small();
        seen.keep_small();
        unseen.keep_small();
        starts.keep_small();
        gathered.keep_small();
    }
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

        /// Hashes handed over as they are made, one at a time or in slices, with any
        /// expected count (below or beyond the filter's threshold, under or over the true
        /// count): the set of them all, without spare capacity; the thread's work space
        /// is small again afterwards.
        #[test]
        fn sets_made_while_hashing_are_the_sets_of_all_hashes(
            len in 0usize..(FILTER_FROM * 4),
            distinct in 1u64..5_000,
            expected_per_hash in proptest::prop_oneof![proptest::prelude::Just(0.0f64), 0.5f64..3.0],
            chunks in proptest::collection::vec(1usize..600, 1..8),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let mut state = seed;
            let hashes: Vec<u64> = (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((state >> 20) % distinct).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                })
                .collect();
            let expected_count = (len as f64 * expected_per_hash) as usize;
            let set = FeatureSet::from_hashing(expected_count, |sink| {
                let mut rest = &hashes[..];
                for (i, &chunk) in chunks.iter().cycle().enumerate() {
                    if rest.is_empty() {
                        break;
                    }
                    let (now, later) = rest.split_at(chunk.min(rest.len()));
                    if i % 2 == 0 {
                        sink.many64(now);
                    } else {
                        now.iter().for_each(|&hash| sink.one(u128::from(hash) | 1 << 100));
                    }
                    rest = later;
                }
            });
            let mut all = hashes.clone();
            all.sort_unstable();
            all.dedup();
            proptest::prop_assert_eq!(set.as_slice(), &all[..]);
            proptest::prop_assert_eq!(set.0.capacity(), set.len());
            SORT_SCRATCH.with(|scratch| {
                let scratch = scratch.borrow();
                assert!(scratch.gathered.capacity() * 8 <= crate::scratch::KEPT_BYTES);
                assert!(scratch.unseen.capacity() * 8 <= crate::scratch::KEPT_BYTES);
            });
        }

        /// The insertion pass that drops repeats gives what a comparison sort and `dedup`
        /// give when it finishes, and keeps every distinct value when it gives up, whatever
        /// its budget of moves.
        #[test]
        fn insertion_distinct_agrees_with_sort_and_dedup(
            values in proptest::collection::vec(0u64..64, 0..300),
            moves in 0usize..2000,
        ) {
            let mut expected = values.clone();
            expected.sort_unstable();
            expected.dedup();
            let mut values = values;
            match insertion_distinct(&mut values, moves) {
                Some(distinct) => proptest::prop_assert_eq!(&values[..distinct], &expected[..]),
                None => {
                    values.sort_unstable();
                    let distinct = dedup_sorted(&mut values);
                    proptest::prop_assert_eq!(&values[..distinct], &expected[..]);
                }
            }
        }

        /// The table of seen hashes keeps every distinct hash, in order, and drops only
        /// repeats: small values (slots shared, and values equal to the table's first
        /// contents) and any.
        #[test]
        fn drop_seen_keeps_every_distinct_hash(
            small in proptest::collection::vec(0u64..64, 2..3000),
            any in proptest::collection::vec(proptest::prelude::any::<u64>(), 2..300),
        ) {
            let (mut seen, mut unseen) = (Vec::new(), Vec::new());
            for hashes in [small, any] {
                let kept = drop_seen(&hashes, &mut seen, &mut unseen).to_vec();
                let count = |values: &[u64]| {
                    let mut counts = std::collections::BTreeMap::new();
                    for &v in values {
                        *counts.entry(v).or_insert(0usize) += 1;
                    }
                    counts
                };
                let (all, kept_counts) = (count(&hashes), count(&kept));
                let every = all.keys().eq(kept_counts.keys());
                proptest::prop_assert!(every, "every distinct hash kept");
                proptest::prop_assert!(kept_counts.iter().all(|(v, &n)| n <= all[v]));
                // In the input's order: a subsequence.
                let mut rest = hashes.iter();
                proptest::prop_assert!(kept.iter().all(|k| rest.any(|h| h == k)));
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

    proptest::proptest! {
        // Each case sorts three inputs of up to 650,000 hashes.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// Inputs large enough to be rid of most repeats first, and to be split by their top
        /// bits (above 2^17): uniform, crowded into a
        /// few parts (top bits from a handful of values, so a part is larger than the cache
        /// and its own scatter crowded), and with many repeats.
        #[test]
        fn split_sets_are_sorted_and_distinct(
            len in FILTER_FROM..(ONE_SCATTER_UP_TO * 5),
            seed in proptest::prelude::any::<u64>(),
            tops in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..4),
            distinct in 1u64..100_000,
        ) {
            let mut state = seed;
            let mut next = move || {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                state ^ (state >> 29)
            };
            let uniform: Vec<u64> = (0..len).map(|_| next()).collect();
            let crowded: Vec<u64> = (0..len)
                .map(|i| (tops[i % tops.len()] & (0xfff << 52)) | (next() >> 12))
                .collect();
            let repeated: Vec<u64> = (0..len)
                .map(|_| (next() % distinct).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            for hashes in [uniform, crowded, repeated] {
                let mut expected = hashes.clone();
                expected.sort_unstable();
                expected.dedup();
                let set = FeatureSet::from_hashes(&hashes);
                proptest::prop_assert_eq!(set.as_slice(), &expected[..]);
                proptest::prop_assert_eq!(set.0.capacity(), set.len());
            }
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
        // Split first (2^21 hashes), into one part: the same top 40 bits, descending (the
        // insertion pass would move every hash to the front), then only 2^12 values.
        let mut descending: Vec<u64> = (0..1 << 21).map(|_| (7 << 60) | (next() >> 40)).collect();
        descending.sort_unstable_by(|a, b| b.cmp(a));
        let few: Vec<u64> = (0..1 << 21).map(|_| (3 << 62) | (next() >> 52)).collect();
        for hashes in [uniform, skewed, colliding, descending, few] {
            let mut expected = hashes.clone();
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(FeatureSet::from_hashes(&hashes).as_slice(), &expected[..]);
        }
    }

    #[test]
    fn the_insertion_pass_gives_up_past_its_moves() {
        let reversed: Vec<u64> = (0..100).rev().chain(0..10).collect();
        let mut values = reversed.clone();
        assert_eq!(insertion_distinct(&mut values, 10), None);
        values.sort_unstable();
        let distinct = dedup_sorted(&mut values);
        assert_eq!(
            values[..distinct],
            (0..100).collect::<Vec<_>>(),
            "the same values"
        );
        let mut values = reversed;
        assert_eq!(insertion_distinct(&mut values, 100 * 99 / 2), Some(100));
        assert_eq!(values[..100], (0..100).collect::<Vec<_>>());
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
