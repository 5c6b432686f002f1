//! The bitwise inverted index of seed 001 §3.2, kept as a measured baseline.
//!
//! The seed builds one inverted index per bit position, each with two keys (bit = 0, bit = 1), and
//! recalls the documents that agree with the query on enough positions. Here the posting set of
//! "bit `i` = 1" is a bitset over slots (a *bit plane*; "bit `i` = 0" is its complement), and the
//! recall step counts, 64 documents at a time, how many planes disagree with the query using
//! bit-sliced counters `ge[j]` = "at least `j` mismatches so far". A word is abandoned as soon as
//! all its documents have more than `k` mismatches. Survivors are within `k` by construction.
//!
//! Keys with two values are dense: every query touches every posting set, so this is still O(n)
//! per query — which is what the benchmarks show, and why the pigeonhole tables exist.

use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::hamming::{check_k, sorted, HammingIndex, Match};
use crate::slots::Slots;

/// Bit planes over slots, searched with bit-sliced mismatch counters; exact for every `k`.
#[derive(Debug, Clone)]
pub struct BitInvertedIndex<F> {
    slots: Slots<F>,
    /// `planes[i][w]` bit `j`: bit `i` of the fingerprint in slot `64 w + j`.
    planes: Vec<Vec<u64>>,
}

impl<F: Fingerprint> BitInvertedIndex<F> {
    /// An empty index.
    pub fn new() -> Self {
        BitInvertedIndex {
            slots: Slots::default(),
            planes: vec![Vec::new(); F::BITS as usize],
        }
    }

    /// Writes the bits of `fp` into column `slot` of the planes (growing them if needed).
    fn write(&mut self, slot: usize, fp: F) {
        let (word, bit) = (slot / 64, slot % 64);
        for (i, plane) in self.planes.iter_mut().enumerate() {
            if plane.len() <= word {
                plane.resize(word + 1, 0);
            }
            let set = fp.field(i as u32, 1);
            plane[word] = (plane[word] & !(1 << bit)) | (set << bit);
        }
    }

    /// Drops the words past the last slot after a removal.
    fn trim(&mut self) {
        let words = self.slots.len().div_ceil(64);
        let bit = self.slots.len() % 64;
        for plane in &mut self.planes {
            plane.truncate(words);
            if bit != 0 {
                if let Some(last) = plane.last_mut() {
                    *last &= (1u64 << bit) - 1;
                }
            }
        }
    }
}

impl<F: Fingerprint> Default for BitInvertedIndex<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Fingerprint> HammingIndex<F> for BitInvertedIndex<F> {
    fn insert(&mut self, id: u64, fp: F) -> Result<()> {
        let slot = self.slots.push(id, fp)?;
        self.write(slot as usize, fp);
        Ok(())
    }

    fn insert_batch(&mut self, items: &[(u64, F)]) -> Result<()> {
        let old = self.slots.len();
        self.slots.extend(items)?;
        for (i, &(_, fp)) in items.iter().enumerate() {
            self.write(old + i, fp);
        }
        Ok(())
    }

    fn remove(&mut self, id: u64) -> Option<F> {
        let removed = self.slots.remove(id)?;
        if removed.moved_from.is_some() {
            let moved = self.slots.fps[removed.slot as usize];
            self.write(removed.slot as usize, moved);
        }
        self.trim();
        Some(removed.fp)
    }

    fn get(&self, id: u64) -> Option<F> {
        self.slots.find(id).map(|s| self.slots.fps[s as usize])
    }

    fn query(&self, fp: F, k: u32) -> Result<Vec<Match>> {
        check_k(k, F::BITS)?;
        let n = self.slots.len();
        let levels = k as usize + 2;
        let mut ge = vec![0u64; levels];
        let mut found = Vec::new();
        for word in 0..n.div_ceil(64) {
            let live = if (word + 1) * 64 <= n {
                u64::MAX
            } else {
                (1u64 << (n % 64)) - 1
            };
            ge.fill(0);
            ge[0] = live;
            for (i, plane) in self.planes.iter().enumerate() {
                let flip = if fp.field(i as u32, 1) == 1 {
                    u64::MAX
                } else {
                    0
                };
                let mismatch = plane[word] ^ flip;
                for j in (1..levels).rev() {
                    ge[j] |= ge[j - 1] & mismatch;
                }
                if ge[levels - 1] == live {
                    break;
                }
            }
            let mut hits = live & !ge[levels - 1];
            while hits != 0 {
                let slot = word * 64 + hits.trailing_zeros() as usize;
                hits &= hits - 1;
                found.push(Match {
                    distance: self.slots.fps[slot].distance(fp),
                    id: self.slots.ids[slot],
                });
            }
        }
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
            + self.planes.capacity() * std::mem::size_of::<Vec<u64>>()
            + self.planes.iter().map(|p| p.capacity() * 8).sum::<usize>()
    }
}
