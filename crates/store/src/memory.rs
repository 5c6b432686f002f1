//! The in-memory index a [`crate::NearDupDb`] checks against: multi-probe block tables over SimHash
//! fingerprints (64 or 128 bits), plus each slot's digest key in a plain array.
//!
//! No digest map is needed: documents with the same digest have the same normalised text, hence
//! the same SimHash, so every exact duplicate is among the distance-0 matches of the SimHash
//! query; comparing their digest keys finds them.

use neardup_core::Bits;
use neardup_index::{HammingIndex, IndexError, Match, ProbedBlocks};

use crate::error::Result;
use crate::record::Entry;

/// The Hamming index for the profile's width.
#[derive(Debug)]
enum SimIndex {
    B64(ProbedBlocks<u64>),
    B128(ProbedBlocks<u128>),
}

/// What one query found: near matches (distance, slot), sorted, and exact-digest slots.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub near: Vec<Match>,
    pub exact: Vec<u64>,
}

/// The SimHash index over the live documents and the digest key of every slot.
#[derive(Debug)]
pub(crate) struct MemIndex {
    sim: SimIndex,
    /// Digest key by slot (meaningful only for slots in `sim`).
    digests: Vec<u128>,
    k: u32,
}

impl MemIndex {
    /// Builds the index from every live row.
    pub fn build(entries: &[Entry], bits: Bits, k: u32) -> Result<MemIndex> {
        let top = entries.iter().map(|e| e.slot + 1).max().unwrap_or(0);
        let mut digests = vec![0; usize::try_from(top).unwrap_or(usize::MAX)];
        for e in entries {
            digests[e.slot as usize] = e.digest;
        }
        let sim = match bits {
            Bits::B64 => {
                let items: Vec<(u64, u64)> =
                    entries.iter().map(|e| (e.slot, e.simhash as u64)).collect();
                SimIndex::B64(ProbedBlocks::from_batch(&items, k)?)
            }
            Bits::B128 => {
                let items: Vec<(u64, u128)> = entries.iter().map(|e| (e.slot, e.simhash)).collect();
                SimIndex::B128(ProbedBlocks::from_batch(&items, k)?)
            }
        };
        Ok(MemIndex { sim, digests, k })
    }

    /// Adds a row; a slot already present is left as it is (catching up may replay it).
    pub fn insert(&mut self, e: Entry) -> Result<()> {
        let added = match &mut self.sim {
            SimIndex::B64(index) => index.insert(e.slot, e.simhash as u64),
            SimIndex::B128(index) => index.insert(e.slot, e.simhash),
        };
        match added {
            Ok(()) => {
                let at = e.slot as usize;
                if at >= self.digests.len() {
                    self.digests.resize(at + 1, 0);
                }
                self.digests[at] = e.digest;
                Ok(())
            }
            Err(IndexError::DuplicateId(_)) => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// Removes a slot if present.
    pub fn remove(&mut self, slot: u64) {
        match &mut self.sim {
            SimIndex::B64(index) => index.remove(slot).map(drop),
            SimIndex::B128(index) => index.remove(slot).map(drop),
        };
    }

    /// Everything within the database's `k` of `simhash`, and every slot with this digest key.
    pub fn query(&self, simhash: u128, digest: u128) -> Result<Found> {
        let near = match &self.sim {
            SimIndex::B64(index) => index.query(simhash as u64, self.k)?,
            SimIndex::B128(index) => index.query(simhash, self.k)?,
        };
        let exact = near
            .iter()
            .take_while(|m| m.distance == 0)
            .filter(|m| self.digests.get(m.id as usize) == Some(&digest))
            .map(|m| m.id)
            .collect();
        Ok(Found { near, exact })
    }

    /// Number of indexed documents.
    pub fn len(&self) -> usize {
        match &self.sim {
            SimIndex::B64(index) => index.len(),
            SimIndex::B128(index) => index.len(),
        }
    }

    /// Heap bytes of the Hamming index and the digest array.
    pub fn memory_bytes(&self) -> usize {
        let sim = match &self.sim {
            SimIndex::B64(index) => index.memory_bytes(),
            SimIndex::B128(index) => index.memory_bytes(),
        };
        sim + self.digests.capacity() * std::mem::size_of::<u128>()
    }
}
