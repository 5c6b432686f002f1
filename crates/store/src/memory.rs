//! The in-memory index a [`crate::NearDupDb`] checks against: permuted tables over SimHash
//! fingerprints (64 or 128 bits) plus an exact-digest map, both keyed by slot.

use neardup_core::Bits;
use neardup_index::{ExactIndex, HammingIndex, IndexError, Match, PermutedTables};

use crate::error::Result;
use crate::record::Entry;

/// The Hamming index for the profile's width.
#[derive(Debug)]
enum SimIndex {
    B64(PermutedTables<u64>),
    B128(PermutedTables<u128>),
}

/// What one query found: near matches (distance, slot), sorted, and exact-digest slots.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub near: Vec<Match>,
    pub exact: Vec<u64>,
}

/// SimHash and digest indexes over the live documents.
#[derive(Debug)]
pub(crate) struct MemIndex {
    sim: SimIndex,
    exact: ExactIndex<u128>,
    k: u32,
}

impl MemIndex {
    /// Builds the index from every live row; the two halves are built on two threads.
    pub fn build(entries: &[Entry], bits: Bits, k: u32) -> Result<MemIndex> {
        let (sim, exact) = std::thread::scope(|scope| {
            let exact = scope.spawn(|| {
                let mut exact = ExactIndex::new();
                for e in entries {
                    exact.insert(e.slot, e.digest)?;
                }
                Ok::<_, IndexError>(exact)
            });
            let sim = match bits {
                Bits::B64 => {
                    let items: Vec<(u64, u64)> =
                        entries.iter().map(|e| (e.slot, e.simhash as u64)).collect();
                    PermutedTables::from_batch(&items, k).map(SimIndex::B64)
                }
                Bits::B128 => {
                    let items: Vec<(u64, u128)> =
                        entries.iter().map(|e| (e.slot, e.simhash)).collect();
                    PermutedTables::from_batch(&items, k).map(SimIndex::B128)
                }
            };
            let exact = exact
                .join()
                .expect("the exact-index builder does not panic");
            (sim, exact)
        });
        Ok(MemIndex {
            sim: sim?,
            exact: exact?,
            k,
        })
    }

    /// Adds a row; a slot already present is left as it is (catching up may replay it).
    pub fn insert(&mut self, e: Entry) -> Result<()> {
        let added = match &mut self.sim {
            SimIndex::B64(index) => index.insert(e.slot, e.simhash as u64),
            SimIndex::B128(index) => index.insert(e.slot, e.simhash),
        };
        match added {
            Ok(()) => Ok(self.exact.insert(e.slot, e.digest)?),
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
        self.exact.remove(slot);
    }

    /// Everything within the database's `k` of `simhash`, and every slot with this digest key.
    pub fn query(&self, simhash: u128, digest: u128) -> Result<Found> {
        let near = match &self.sim {
            SimIndex::B64(index) => index.query(simhash as u64, self.k)?,
            SimIndex::B128(index) => index.query(simhash, self.k)?,
        };
        Ok(Found {
            near,
            exact: self.exact.query(&digest).to_vec(),
        })
    }

    /// Number of indexed documents.
    pub fn len(&self) -> usize {
        self.exact.len()
    }

    /// Heap bytes of the Hamming index.
    pub fn memory_bytes(&self) -> usize {
        match &self.sim {
            SimIndex::B64(index) => index.memory_bytes(),
            SimIndex::B128(index) => index.memory_bytes(),
        }
    }
}
