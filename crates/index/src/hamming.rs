//! The one trait every online Hamming search method implements, and its result type.

use crate::error::{IndexError, Result};
use crate::fingerprint::Fingerprint;

/// One stored item within the query distance.
///
/// Ordered by distance, then id: the order [`HammingIndex::query`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Match {
    /// Hamming distance to the query.
    pub distance: u32,
    /// The caller's id of the stored fingerprint.
    pub id: u64,
}

/// An online index of fingerprints under caller-chosen `u64` ids, searched by Hamming distance.
///
/// Every implementation is exact for `k ≤ max_k()`: `query` returns every stored `(id, distance)`
/// with `distance ≤ k` — identical fingerprints included, each id once — sorted by distance, then
/// id. [`crate::BruteForce`] is the reference the others are tested against.
///
/// ```
/// use neardup_index::{HammingIndex, Match, PermutedTables, Design};
/// let mut index = PermutedTables::<u64>::new(Design::Tables4x16).unwrap();
/// index.insert(10, 0xFFFF_0000_FFFF_0000).unwrap();
/// index.insert(11, 0xFFFF_0000_FFFF_0000).unwrap(); // identical: both are returned
/// index.insert(12, 0xFFFF_0000_FFFF_0007).unwrap(); // 3 bits away
/// let found = index.query(0xFFFF_0000_FFFF_0000, 3).unwrap();
/// assert_eq!(found, vec![
///     Match { distance: 0, id: 10 },
///     Match { distance: 0, id: 11 },
///     Match { distance: 3, id: 12 },
/// ]);
/// ```
pub trait HammingIndex<F: Fingerprint> {
    /// Stores `fp` under `id`. Fails with [`IndexError::DuplicateId`] if `id` is stored already.
    fn insert(&mut self, id: u64, fp: F) -> Result<()>;

    /// Stores many items at once, much faster than one `insert` each. On a duplicate id (within
    /// `items` or already stored) nothing is added.
    fn insert_batch(&mut self, items: &[(u64, F)]) -> Result<()>;

    /// Removes `id`, returning its fingerprint, or `None` if it was not stored.
    fn remove(&mut self, id: u64) -> Option<F>;

    /// The fingerprint stored under `id`.
    fn get(&self, id: u64) -> Option<F>;

    /// Every stored item within distance `k` of `fp`, sorted by distance then id. Fails with
    /// [`IndexError::KTooLarge`] if `k > max_k()`.
    fn query(&self, fp: F, k: u32) -> Result<Vec<Match>>;

    /// The largest `k` that `query` answers exactly.
    fn max_k(&self) -> u32;

    /// Number of stored fingerprints.
    fn len(&self) -> usize;

    /// True if nothing is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held by the index, counting allocated capacity.
    fn memory_bytes(&self) -> usize;
}

/// Fails with [`IndexError::KTooLarge`] if `k > max`.
pub(crate) fn check_k(k: u32, max: u32) -> Result<()> {
    if k > max {
        Err(IndexError::KTooLarge { k, max })
    } else {
        Ok(())
    }
}

/// Puts query results in the documented order.
pub(crate) fn sorted(mut matches: Vec<Match>) -> Vec<Match> {
    matches.sort_unstable();
    matches
}

/// Heap bytes of per-table bucket directories: each directory's vector of bucket headers at its
/// capacity, plus what `contents` says each bucket holds.
pub(crate) fn directory_bytes<B>(tables: &[Vec<B>], contents: impl Fn(&B) -> usize) -> usize {
    tables
        .iter()
        .map(|dir| {
            dir.capacity() * std::mem::size_of::<B>() + dir.iter().map(&contents).sum::<usize>()
        })
        .sum()
}
