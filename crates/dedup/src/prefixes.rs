//! The overlap method's search: prefix filtering (Chaudhuri et al. 2006; Bayardo et al. 2007)
//! in one global order of shingles.
//!
//! Order every set's shingles by one total order. If two sets share at least `α` shingles, the
//! first shared one in that order is among the first `|A| − α + 1` shingles of either set, since
//! everything before it in either set is unshared. For verification to accept a pair, the
//! smaller set must share `α(|smaller|)` of its shingles (what containment ≥ the threshold needs,
//! and Jaccard ≥ the threshold too): so a set's first `|A| − α(|A|) + 1` shingles (its *index
//! prefix*, as the smaller side of a pair) and its first `|B| − α(s) + 1` (its *probe prefix*, as
//! the larger side; `s` is the smallest size the length guard lets partner it) suffice. Two sets
//! are **candidates** when the guard passes and the smaller's index prefix shares a shingle with
//! the larger's probe prefix (for two sets of one size, either way round). No pair verification
//! can accept is missed, whatever the order; the order decides how few the others are.
//!
//! The order is rarest first, so that a common shingle is seldom in a prefix: by an estimate of
//! each shingle's document frequency from a count-min sketch of every set ([`ShingleOrder`], two
//! rows of 16-bit saturating counters, at most 16 MiB, sized by the number of sets), then by
//! value. The estimate depends only on the sets, so the order, the candidates and the
//! components are the same at every budget, in memory or spilled.

use std::collections::HashMap;

use neardup_core::measure::FeatureSet;
use rayon::prelude::*;

use crate::policy::Policy;

/// One row of the sketch holds at most this many counters (two rows of 2 bytes each: 16 MiB).
const MAX_WIDTH: usize = 1 << 22;

/// The sketch holds this many counters a row for each set counted (at least 1,024, at most
/// [`MAX_WIDTH`]).
const COUNTERS_PER_SET: usize = 16;

/// A count-min sketch of how many sets hold each shingle, and the order it gives shingles:
/// ascending by estimated frequency, then by value (see the module documentation).
pub(crate) struct ShingleOrder {
    /// Two rows of `mask + 1` counters, one after the other.
    counters: Vec<u16>,
    mask: u64,
}

impl ShingleOrder {
    /// An empty sketch for about `sets` sets (its size depends only on that number).
    pub(crate) fn for_sets(sets: usize) -> Self {
        let width = sets
            .saturating_mul(COUNTERS_PER_SET)
            .next_power_of_two()
            .clamp(1 << 10, MAX_WIDTH);
        ShingleOrder {
            counters: vec![0; 2 * width],
            mask: width as u64 - 1,
        }
    }

    /// Bytes the sketch holds.
    pub(crate) fn held_bytes(&self) -> u64 {
        self.counters.len() as u64 * 2
    }

    /// The two counters of `shingle` (a shingle is a uniform 64-bit hash: the rows take their
    /// places from its low and high halves).
    fn slots(&self, shingle: u64) -> [usize; 2] {
        let width = self.mask as usize + 1;
        [
            (shingle & self.mask) as usize,
            width + ((shingle >> 32) & self.mask) as usize,
        ]
    }

    /// Counts the shingles of one set.
    pub(crate) fn count(&mut self, set: &FeatureSet) {
        for &shingle in set.as_slice() {
            for slot in self.slots(shingle) {
                self.counters[slot] = self.counters[slot].saturating_add(1);
            }
        }
    }

    /// `shingle`'s place in the order: its estimated frequency above its value.
    fn key(&self, shingle: u64) -> u128 {
        let [a, b] = self.slots(shingle);
        let estimate = self.counters[a].min(self.counters[b]);
        (u128::from(estimate) << 64) | u128::from(shingle)
    }

    /// The prefixes of `set` under `policy` (see [`Prefix`]).
    pub(crate) fn prefix(&self, set: &FeatureSet, policy: &Policy) -> Prefix {
        let len = set.len();
        let (index, probe) = prefix_lens(len, policy);
        let mut keys: Vec<u128> = set.as_slice().iter().map(|&s| self.key(s)).collect();
        if probe < keys.len() {
            keys.select_nth_unstable(probe);
            keys.truncate(probe);
        }
        keys.sort_unstable();
        Prefix {
            keys,
            index,
            len: len as u32,
        }
    }
}

/// The first shingles of a set in the [`ShingleOrder`]: as many as its probe prefix holds, of
/// which the first `index` are its index prefix.
#[derive(Debug, Clone)]
pub(crate) struct Prefix {
    /// The shingles' keys in the order (estimate above value), ascending.
    keys: Vec<u128>,
    /// How many of them make the index prefix.
    index: usize,
    /// The size of the whole set.
    len: u32,
}

impl Prefix {
    /// The size of the whole set.
    pub(crate) fn set_len(&self) -> usize {
        self.len as usize
    }

    /// Bytes a [`PrefixIndex`] holds for this prefix, counted high (8 a posting, the maps'
    /// keys and lists as much again, and the room a hash map keeps free).
    pub(crate) fn index_bytes(&self) -> u64 {
        self.keys.len() as u64 * 32
    }

    /// The shingles of the probe prefix, in order, each with whether it is in the index
    /// prefix too.
    pub(crate) fn shingles(&self) -> impl Iterator<Item = (u64, bool)> + '_ {
        self.keys
            .iter()
            .enumerate()
            .map(|(at, &key)| (key as u64, at < self.index))
    }

    /// Whether `self` and `other` are candidates (see the module documentation).
    pub(crate) fn candidates(&self, other: &Prefix, policy: &Policy) -> bool {
        if !policy.length_ratio_passes(self.set_len(), other.set_len()) {
            return false;
        }
        let (small, large) = match self.len <= other.len {
            true => (self, other),
            false => (other, self),
        };
        shares(&small.keys[..small.index], &large.keys)
            || (small.len == large.len && shares(&large.keys[..large.index], &small.keys))
    }
}

/// Whether two ascending lists share a value.
fn shares(a: &[u128], b: &[u128]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// The index and probe prefix lengths of a set of `len` shingles under `policy`.
pub(crate) fn prefix_lens(len: usize, policy: &Policy) -> (usize, usize) {
    if len == 0 {
        return (0, 0);
    }
    // `shared_needed` is between 1 and the size for a positive threshold (validated).
    let index = len + 1 - shared_needed(len, policy.threshold).clamp(1, len);
    // The smallest partner the guard allows, and the overlap it would need.
    let smallest = (1..=len)
        .find(|&small| policy.length_ratio_passes(small, len))
        .unwrap_or(len);
    let probe = len + 1 - shared_needed(smallest, policy.threshold).clamp(1, len);
    (index, probe.max(index))
}

/// The fewest shared shingles for which a set of `len` shingles is contained at `threshold`:
/// the smallest `m` with `m / len ≥ threshold`, computed as verification compares (in floating
/// point), so that the search and the verification agree at the boundary.
fn shared_needed(len: usize, threshold: f64) -> usize {
    if len == 0 {
        return 0;
    }
    let passes = |m: usize| m as f64 / len as f64 >= threshold;
    let mut m = ((threshold * len as f64).ceil() as usize).min(len);
    while m > 0 && passes(m - 1) {
        m -= 1;
    }
    while m < len && !passes(m) {
        m += 1;
    }
    m
}

/// Sets indexed by their prefixes, searched for the candidates of a set (see the module
/// documentation). Holds about 8 bytes a shingle of every probe prefix inserted, plus the maps'
/// own overhead (about as much again).
#[derive(Default)]
pub(crate) struct PrefixIndex {
    /// For each shingle, the sets whose index prefix holds it: `(id, size)`.
    index: HashMap<u64, Vec<(u32, u32)>>,
    /// For each shingle, the sets whose probe prefix holds it beyond their index prefix.
    probe: HashMap<u64, Vec<(u32, u32)>>,
}

impl PrefixIndex {
    /// Indexes the set `id` by its prefixes.
    pub(crate) fn insert(&mut self, id: u32, prefix: &Prefix) {
        for (shingle, in_index) in prefix.shingles() {
            let map = match in_index {
                true => &mut self.index,
                false => &mut self.probe,
            };
            map.entry(shingle).or_default().push((id, prefix.len));
        }
    }

    /// The ids of the indexed sets that are candidates with the set of `prefix`, ascending,
    /// each once.
    ///
    /// Every shingle of its probe prefix is looked up among the index prefixes (the others as
    /// the smaller side), but only the shingles of its index prefix among the rest of the
    /// probe prefixes (the others as the larger side): the rare ones. A common shingle, which
    /// a set without a length guard has in its probe prefix, so meets only the few sets whose
    /// index prefix holds it.
    pub(crate) fn candidates(&self, prefix: &Prefix, policy: &Policy) -> Vec<u32> {
        let len = prefix.len;
        let mut found: Vec<u32> = Vec::new();
        let mut take = |postings: Option<&Vec<(u32, u32)>>, keep: &dyn Fn(u32) -> bool| {
            for &(id, other_len) in postings.into_iter().flatten() {
                if keep(other_len) && policy.length_ratio_passes(other_len as usize, len as usize) {
                    found.push(id);
                }
            }
        };
        for (shingle, in_index) in prefix.shingles() {
            // The smaller's index prefix against the larger's probe prefix (either way round
            // for one size).
            match in_index {
                true => {
                    take(self.index.get(&shingle), &|_| true);
                    take(self.probe.get(&shingle), &|other_len| other_len >= len);
                }
                false => take(self.index.get(&shingle), &|other_len| other_len <= len),
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// Sets made into prefixes at a time (in parallel) by [`each_prefix_pair`].
const PREFIX_BATCH: usize = 1024;

/// Calls `found(a, b, (size of a, size of b))` for every candidate pair among `n` sets (by
/// their number), each once, `a < b`; `prefix_of(i)` makes the prefix of set `i`.
///
/// The sets are taken in blocks whose index fits `memory` bytes ([`Prefix::index_bytes`]; at
/// least one set a block): a block's sets are indexed one by one, each searched for among the
/// block's sets before it first, then every later set is searched for in that index,
/// [`PREFIX_BATCH`] at a time on every thread. So one block is held at a time, and a set is made
/// into its prefix once for each block before its own and once for its own; with every set in
/// one block, pairs come in the order of `b`, then `a`.
pub(crate) fn each_prefix_pair<E: Send>(
    n: usize,
    memory: u64,
    policy: &Policy,
    prefix_of: impl Fn(usize) -> Result<Prefix, E> + Sync,
    mut found: impl FnMut(usize, usize, (usize, usize)) -> Result<(), E>,
) -> Result<(), E> {
    let mut start = 0;
    while start < n {
        let mut index = PrefixIndex::default();
        let mut lens = Vec::new();
        let mut bytes = 0;
        let mut end = start;
        while end < n && (end == start || bytes < memory) {
            let prefix = prefix_of(end)?;
            for a in index.candidates(&prefix, policy) {
                let a = a as usize;
                found(a, end, (lens[a - start], prefix.set_len()))?;
            }
            bytes += prefix.index_bytes();
            index.insert(end as u32, &prefix);
            lens.push(prefix.set_len());
            end += 1;
        }
        let mut first = end;
        while first < n {
            let last = (first + PREFIX_BATCH).min(n);
            let searched: Vec<(usize, Vec<u32>)> = (first..last)
                .into_par_iter()
                .map(|b| {
                    let prefix = prefix_of(b)?;
                    Ok((prefix.set_len(), index.candidates(&prefix, policy)))
                })
                .collect::<Result<_, E>>()?;
            for (b, (len, candidates)) in (first..).zip(searched) {
                for a in candidates {
                    let a = a as usize;
                    found(a, b, (lens[a - start], len))?;
                }
            }
            first = last;
        }
        start = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Method, VerifyMeasure};
    use proptest::prelude::*;

    fn overlap(threshold: f64, min_length_ratio: f64) -> Policy {
        Policy {
            method: Method::Overlap,
            verify: Some(VerifyMeasure::Containment),
            threshold,
            min_length_ratio,
            ..Policy::default()
        }
    }

    /// Sets drawn from a small alphabet with a few very common shingles, so that pairs overlap
    /// at every degree and the order matters.
    fn sets() -> impl Strategy<Value = Vec<FeatureSet>> {
        prop::collection::vec(
            prop::collection::vec(prop_oneof![0u64..8, 0u64..60], 0..30),
            2..40,
        )
        .prop_map(|sets| {
            sets.into_iter()
                .map(|set| {
                    // Spread over 64 bits, as shingle hashes are.
                    let hashes: Vec<u64> = set
                        .into_iter()
                        .map(|s| s.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                        .collect();
                    FeatureSet::from_hashes(&hashes)
                })
                .collect()
        })
    }

    proptest! {
        /// No pair that verification accepts is missed, the index and the pairwise test agree
        /// on what a candidate is, and blocks of any size find the same pairs.
        #[test]
        fn every_passing_pair_is_a_candidate(
            sets in sets(),
            threshold in prop_oneof![Just(0.5), Just(0.8), Just(1.0), 0.05f64..1.0],
            ratio in prop_oneof![Just(0.0), Just(0.5), 0.0f64..1.0],
            block in prop_oneof![Just(0u64), 0u64..2_000],
        ) {
            let policy = overlap(threshold, ratio);
            let mut order = ShingleOrder::for_sets(sets.len());
            sets.iter().for_each(|set| order.count(set));
            let prefixes: Vec<Prefix> = sets.iter().map(|s| order.prefix(s, &policy)).collect();
            let prefix_of = |i: usize| Ok::<_, ()>(prefixes[i].clone());
            let mut found = Vec::new();
            each_prefix_pair(sets.len(), u64::MAX, &policy, prefix_of, |a, b, _| {
                found.push((a as u32, b as u32));
                Ok(())
            }).unwrap();
            // In blocks of a set or a few: the same pairs.
            let mut blocked = Vec::new();
            each_prefix_pair(sets.len(), block, &policy, prefix_of, |a, b, _| {
                blocked.push((a as u32, b as u32));
                Ok(())
            }).unwrap();
            found.sort_unstable();
            blocked.sort_unstable();
            prop_assert_eq!(&blocked, &found);
            for a in 0..sets.len() {
                for b in a + 1..sets.len() {
                    let candidate = found.binary_search(&(a as u32, b as u32)).is_ok();
                    prop_assert_eq!(candidate, prefixes[a].candidates(&prefixes[b], &policy));
                    // Empty sets take part in no pair.
                    let (x, y) = (&sets[a], &sets[b]);
                    let passes = !x.is_empty()
                        && !y.is_empty()
                        && policy.verify(x, y, None).is_some();
                    if passes {
                        prop_assert!(candidate, "pair {a} {b} passes but is no candidate");
                    }
                }
            }
        }
    }

    #[test]
    fn the_order_puts_common_shingles_last() {
        let common = 0x1234_5678_9ABC_DEF0u64;
        let sets: Vec<FeatureSet> = (0..100u64)
            .map(|i| FeatureSet::from_hashes(&[common, i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1]))
            .collect();
        let mut order = ShingleOrder::for_sets(sets.len());
        sets.iter().for_each(|set| order.count(set));
        let policy = overlap(1.0, 0.0);
        // At containment 1 the index prefix is one shingle: the rare one. Unguarded, a set of
        // one could partner it, so the probe prefix holds both.
        let rare = sets[7].as_slice().iter().find(|&&s| s != common).copied();
        let prefix = order.prefix(&sets[7], &policy);
        let shingles: Vec<(u64, bool)> = prefix.shingles().collect();
        assert_eq!(shingles, [(rare.unwrap(), true), (common, false)]);
    }
}
