//! Permuted block tables (Manku et al.): the online index for large sets.
//!
//! # Layout
//! One fingerprint array and one id array in slot order (see `slots.rs`), plus, per table of the
//! [`Design`], a directory of buckets: bucket `j` lists (as `u32` slots) every fingerprint whose
//! table key starts with the bits of `j`. The directory uses the first `w = min(key_bits, d)` key
//! bits, where `d` grows with the number of stored items (about `log2(n / 8)`, at most 20), so
//! small indexes stay small and a 16-bit table has exactly one bucket per key. Memory: 8 (or 16)
//! bytes of fingerprint + 8 of id + 4 per table + about 6 for the id map; with the four 16-bit
//! tables that is under 40 bytes per fingerprint.
//!
//! # Query
//! For each table, scan the query's bucket and keep a slot if it agrees with the query on the
//! table's whole mask (a bucket may hold other keys when `w < key_bits`), is within `k`, and agrees
//! on no *earlier* table's mask — that earlier table reports it instead. So each item is reported
//! once without a hash set, and the pigeonhole principle makes the result exact.
//!
//! # Updates
//! Buckets are vectors: insert pushes the slot into one bucket per table; remove swap-removes the
//! slot from its buckets, and the last slot moves into the hole (its bucket entries re-pointed). No
//! tombstones, no compaction. A batch builds every table in one counting pass (in parallel over
//! tables) with exactly sized buckets, which is much faster than pushing one item at a time.
//!
//! # Skewed data
//! Buckets are not split further: if one key value holds a large share of the set, queries with
//! that key scan that whole bucket. Results stay exact; only their latency suffers.

use rayon::prelude::*;

use crate::design::{Design, Table};
use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::hamming::{check_k, sorted, HammingIndex, Match};
use crate::slots::Slots;

/// Smallest directory width (bits).
const MIN_DIR_BITS: u32 = 4;
/// Largest directory width (bits): 2^20 buckets of 24-byte vector headers per table.
const MAX_DIR_BITS: u32 = 20;
/// The directory is widened when the items per bucket exceed 2^this.
const GROW_SHIFT: u32 = 6;

/// Directory width for `n` items: about 8 items per bucket.
fn dir_bits_for(n: usize) -> u32 {
    let per_bucket = (n / 8).max(1);
    (usize::BITS - 1 - per_bucket.leading_zeros()).clamp(MIN_DIR_BITS, MAX_DIR_BITS)
}

/// Permuted block tables over fingerprints of type `F`; exact for `k ≤ design.max_k()`.
#[derive(Debug, Clone)]
pub struct PermutedTables<F> {
    design: Design,
    tables: Vec<Table<F>>,
    /// Directory width used now (each table uses `min(key_bits, dir_bits)`).
    dir_bits: u32,
    /// `buckets[t][j]`: slots whose table-`t` key prefix is `j`.
    buckets: Vec<Vec<Vec<u32>>>,
    slots: Slots<F>,
}

impl<F: Fingerprint> PermutedTables<F> {
    /// An empty index with the tables of `design`. Fails if the design is invalid for `F`.
    pub fn new(design: Design) -> Result<Self> {
        Self::with_capacity(design, 0)
    }

    /// An empty index sized for about `n` fingerprints (the directory still grows past that).
    pub fn with_capacity(design: Design, n: usize) -> Result<Self> {
        let tables = design.tables::<F>()?;
        let mut index = PermutedTables {
            design,
            tables,
            dir_bits: 0,
            buckets: Vec::new(),
            slots: Slots::default(),
        };
        index.rebuild(dir_bits_for(n));
        Ok(index)
    }

    /// Builds an index from a batch, choosing the design with [`Design::for_expected_len`].
    pub fn from_batch(items: &[(u64, F)], k: u32) -> Result<Self> {
        let mut index = Self::new(Design::for_expected_len(items.len(), k, F::BITS))?;
        index.insert_batch(items)?;
        Ok(index)
    }

    /// The design this index was built with.
    pub fn design(&self) -> Design {
        self.design
    }

    /// Number of candidates a query for `fp` scans (the sum of its bucket sizes): the index's cost
    /// measure, reported by the benchmarks.
    pub fn candidates(&self, fp: F) -> usize {
        (0..self.tables.len())
            .map(|t| self.buckets[t][self.bucket(t, fp)].len())
            .sum()
    }

    /// Directory width of table `t`.
    fn width(&self, t: usize) -> u32 {
        self.tables[t].key_bits().min(self.dir_bits)
    }

    /// The bucket of `fp` in table `t`.
    #[inline]
    fn bucket(&self, t: usize, fp: F) -> usize {
        self.tables[t].key(fp, self.width(t)) as usize
    }

    /// Rebuilds every table's directory at width `dir_bits` from the stored fingerprints.
    fn rebuild(&mut self, dir_bits: u32) {
        self.dir_bits = dir_bits;
        let fps = &self.slots.fps;
        self.buckets = self
            .tables
            .par_iter()
            .map(|table| {
                let width = table.key_bits().min(dir_bits);
                let keys: Vec<u32> = fps.iter().map(|&fp| table.key(fp, width) as u32).collect();
                let mut counts = vec![0usize; 1 << width];
                for &key in &keys {
                    counts[key as usize] += 1;
                }
                let mut buckets: Vec<Vec<u32>> =
                    counts.iter().map(|&c| Vec::with_capacity(c)).collect();
                for (slot, &key) in keys.iter().enumerate() {
                    buckets[key as usize].push(slot as u32);
                }
                buckets
            })
            .collect();
    }

    /// Widens the directory when buckets have grown long and a wider one would split them.
    fn maybe_grow(&mut self) {
        let widest = self.tables.iter().map(Table::key_bits).max().unwrap_or(0);
        let wanted = dir_bits_for(self.len());
        let crowded = self.len() >> (self.dir_bits + GROW_SHIFT) > 0;
        if crowded && wanted > self.dir_bits && self.dir_bits < widest {
            self.rebuild(wanted);
        }
    }

    /// Adds `slot` (holding `fp`) to its bucket in every table.
    fn link(&mut self, slot: u32, fp: F) {
        for t in 0..self.tables.len() {
            let b = self.bucket(t, fp);
            self.buckets[t][b].push(slot);
        }
    }
}

impl<F: Fingerprint> HammingIndex<F> for PermutedTables<F> {
    fn insert(&mut self, id: u64, fp: F) -> Result<()> {
        let slot = self.slots.push(id, fp)?;
        self.link(slot, fp);
        self.maybe_grow();
        Ok(())
    }

    fn insert_batch(&mut self, items: &[(u64, F)]) -> Result<()> {
        let old = self.slots.len();
        self.slots.extend(items)?;
        // A small batch joins the existing buckets; a large one rebuilds them all at once.
        if items.len() < old / 8 {
            for (i, &(_, fp)) in items.iter().enumerate() {
                self.link((old + i) as u32, fp);
            }
            self.maybe_grow();
        } else {
            self.rebuild(dir_bits_for(self.len()).max(self.dir_bits));
        }
        Ok(())
    }

    fn remove(&mut self, id: u64) -> Option<F> {
        let removed = self.slots.remove(id)?;
        for t in 0..self.tables.len() {
            let b = self.bucket(t, removed.fp);
            let bucket = &mut self.buckets[t][b];
            if let Some(at) = bucket.iter().position(|&s| s == removed.slot) {
                bucket.swap_remove(at);
            }
        }
        if let Some(last) = removed.moved_from {
            let moved = self.slots.fps[removed.slot as usize];
            for t in 0..self.tables.len() {
                let b = self.bucket(t, moved);
                if let Some(entry) = self.buckets[t][b].iter_mut().find(|s| **s == last) {
                    *entry = removed.slot;
                }
            }
        }
        Some(removed.fp)
    }

    fn get(&self, id: u64) -> Option<F> {
        self.slots.find(id).map(|s| self.slots.fps[s as usize])
    }

    fn query(&self, fp: F, k: u32) -> Result<Vec<Match>> {
        check_k(k, self.design.max_k())?;
        let mut found = Vec::new();
        for (t, table) in self.tables.iter().enumerate() {
            let mask = table.mask();
            for &slot in &self.buckets[t][self.bucket(t, fp)] {
                let diff = self.slots.fps[slot as usize].xor(fp);
                if diff.and(mask) != F::ZERO {
                    continue;
                }
                let distance = diff.ones();
                if distance > k {
                    continue;
                }
                let earlier = self.tables[..t]
                    .iter()
                    .any(|e| diff.and(e.mask()) == F::ZERO);
                if !earlier {
                    found.push(Match {
                        distance,
                        id: self.slots.ids[slot as usize],
                    });
                }
            }
        }
        Ok(sorted(found))
    }

    fn max_k(&self) -> u32 {
        self.design.max_k()
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn memory_bytes(&self) -> usize {
        let header = std::mem::size_of::<Vec<u32>>();
        let buckets: usize = self
            .buckets
            .iter()
            .map(|dir| {
                dir.capacity() * header + dir.iter().map(|b| b.capacity() * 4).sum::<usize>()
            })
            .sum();
        let tables: usize = self
            .tables
            .iter()
            .map(|t| std::mem::size_of::<Table<F>>() + t.key_bits() as usize * 12)
            .sum();
        self.slots.memory_bytes() + buckets + tables
    }
}
