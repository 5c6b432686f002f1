//! Exact-duplicate lookup: digest → ids.
//!
//! Keys are whatever identifies identical content — typically a `[u8; 32]` SHA-256 or a `u128`
//! xxh3 digest of the normalised text. Any `Hash + Eq` type works.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

use rayon::slice::ParallelSliceMut;

use crate::error::{IndexError, Result};

/// An online map from digest to the ids stored under it (ascending).
///
/// ```
/// use neardup_index::ExactIndex;
/// let mut index = ExactIndex::new();
/// index.insert(7, [1u8; 32]).unwrap();
/// index.insert(3, [1u8; 32]).unwrap();
/// assert_eq!(index.query(&[1u8; 32]), &[3, 7]);
/// assert!(index.query(&[2u8; 32]).is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct ExactIndex<K> {
    by_key: HashMap<K, Vec<u64>>,
    by_id: HashMap<u64, K>,
}

impl<K: Hash + Eq + Clone> Default for ExactIndex<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Hash + Eq + Clone> ExactIndex<K> {
    /// An empty index.
    pub fn new() -> Self {
        ExactIndex {
            by_key: HashMap::new(),
            by_id: HashMap::new(),
        }
    }

    /// Stores `key` under `id`. Fails with [`IndexError::DuplicateId`] if `id` is stored.
    pub fn insert(&mut self, id: u64, key: K) -> Result<()> {
        if self.by_id.contains_key(&id) {
            return Err(IndexError::DuplicateId(id));
        }
        let ids = self.by_key.entry(key.clone()).or_default();
        let at = ids.partition_point(|&x| x < id);
        ids.insert(at, id);
        self.by_id.insert(id, key);
        Ok(())
    }

    /// Removes `id`, returning its key.
    pub fn remove(&mut self, id: u64) -> Option<K> {
        let key = self.by_id.remove(&id)?;
        if let Some(ids) = self.by_key.get_mut(&key) {
            ids.retain(|&x| x != id);
            if ids.is_empty() {
                self.by_key.remove(&key);
            }
        }
        Some(key)
    }

    /// The ids stored under `key`, ascending (empty if none).
    pub fn query<Q>(&self, key: &Q) -> &[u64]
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.by_key.get(key).map_or(&[], Vec::as_slice)
    }

    /// Number of stored ids.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True if nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// Groups of two or more positions of `0..len` whose keys (`key(position)`) are equal;
/// positions ascending within a group, groups ordered by their first position.
///
/// The positions are sorted by key (in parallel) and equal runs taken: 4 bytes a position
/// beside the groups, where a map from key to group would hold an entry and a list for every
/// distinct key (about 100 bytes a document of a crawl, measured as the largest per-document
/// cost of a dedup run before this).
///
/// ```
/// use neardup_index::exact_groups;
/// let keys = ["a", "b", "a", "c", "b", "a"];
/// assert_eq!(exact_groups(6, |i| keys[i as usize]), vec![vec![0, 2, 5], vec![1, 4]]);
/// ```
pub fn exact_groups<K: Ord>(len: u32, key: impl Fn(u32) -> K + Sync) -> Vec<Vec<u32>> {
    let mut order: Vec<u32> = (0..len).collect();
    order.par_sort_unstable_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    let mut groups: Vec<Vec<u32>> = order
        .chunk_by(|&a, &b| key(a) == key(b))
        .filter(|run| run.len() > 1)
        .map(<[u32]>::to_vec)
        .collect();
    groups.sort_unstable_by_key(|group| group[0]);
    groups
}
