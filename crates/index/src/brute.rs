//! Brute force (seed 001 §3.1): compare the query with every stored fingerprint.
//!
//! O(n) per query and trivially right: the reference every other method is tested against.

use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::hamming::{check_k, sorted, HammingIndex, Match};
use crate::slots::Slots;

/// Linear scan over all stored fingerprints; exact for every `k ≤ BITS`.
#[derive(Debug, Clone, Default)]
pub struct BruteForce<F> {
    slots: Slots<F>,
}

impl<F: Fingerprint> BruteForce<F> {
    /// An empty index.
    pub fn new() -> Self {
        BruteForce {
            slots: Slots::default(),
        }
    }
}

impl<F: Fingerprint> HammingIndex<F> for BruteForce<F> {
    fn insert(&mut self, id: u64, fp: F) -> Result<()> {
        self.slots.push(id, fp).map(|_| ())
    }

    fn insert_batch(&mut self, items: &[(u64, F)]) -> Result<()> {
        self.slots.extend(items)
    }

    fn remove(&mut self, id: u64) -> Option<F> {
        self.slots.remove(id).map(|r| r.fp)
    }

    fn get(&self, id: u64) -> Option<F> {
        self.slots.find(id).map(|s| self.slots.fps[s as usize])
    }

    fn query(&self, fp: F, k: u32) -> Result<Vec<Match>> {
        check_k(k, F::BITS)?;
        let found = self
            .slots
            .fps
            .iter()
            .zip(&self.slots.ids)
            .filter_map(|(&stored, &id)| {
                let distance = stored.distance(fp);
                (distance <= k).then_some(Match { distance, id })
            })
            .collect();
        Ok(sorted(found))
    }

    fn max_k(&self) -> u32 {
        F::BITS
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn memory_bytes(&self) -> usize {
        self.slots.memory_bytes()
    }
}
