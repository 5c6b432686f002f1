//! Multi-probe block tables: the online index for any distance with a handful of tables.
//!
//! # Why not more permuted tables
//! Pigeonhole with exact keys needs `b > k` blocks and one table per choice of `b − k` of them:
//! at `k = 6` on 64 bits, [`Design::for_expected_len`](crate::Design::for_expected_len) picks 84
//! tables at 10 million fingerprints, which took 8.3 GB and 18 s to build. The other way to use
//! the pigeonhole principle keeps the tables few and *probes* more keys: split the bits into `b`
//! blocks; two fingerprints within `k` differ in at most `⌊k / b⌋ = r` bits of at least one block.
//! So one table per block, keyed on the block, finds every match if a query scans every bucket whose
//! key is within `r` bits of its own. Four 16-bit blocks answer `k ≤ 3` with one bucket per table
//! (seed 001 §3.3) and `k ≤ 7` with 17 (the key and its 16 one-bit neighbours): four tables, not 84.
//!
//! # Layout
//! One fingerprint array and one id array in slot order (see `slots.rs`), plus, per table, a
//! directory of buckets keyed on the first `w` bits of the block (`w` grows with the number of
//! stored items, at most the block's width and 20). A bucket keeps its fingerprints *inline* beside
//! their slots, so scanning it reads memory in order instead of jumping to the fingerprint array
//! once per candidate. Memory: `b × (size_of::<F>() + 4)` bytes per fingerprint plus the slot
//! arrays; for four tables over `u64`, about 70 bytes.
//!
//! # Query
//! For each table, scan every bucket whose prefix is within `r` bits of the query's (flips of the
//! prefix's bits; the rest of the key is checked per entry), keep an entry if its whole block is
//! within `r` bits, its fingerprint within `k`, and no *earlier* table's block is within `r` bits
//! — that table reports it instead. So each item comes once, without a hash set, and the result is
//! exact. A query for a smaller `k` uses the smaller radius `⌊k / b⌋`.
//!
//! # Skew
//! Buckets are not split: a block value shared by a large share of the set makes its buckets long
//! ([`crate::PermutedTables`] splits such buckets). Identical fingerprints cannot be helped by any
//! split, and the online store keeps one fingerprint per document.

use rayon::prelude::*;

use crate::design::{binomial, split, Table};
use crate::error::{IndexError, Result};
use crate::fingerprint::Fingerprint;
use crate::hamming::{check_k, directory_bytes, sorted, HammingIndex, Match};
use crate::slots::Slots;

/// Smallest directory width (bits).
const MIN_DIR_BITS: u32 = 4;
/// Largest directory width (bits): 2^20 buckets of two vector headers per table.
const MAX_DIR_BITS: u32 = 20;
/// The directory is widened when the items per bucket exceed 2^this.
const GROW_SHIFT: u32 = 4;
/// Cost of probing one bucket, in candidate comparisons (a directory lookup and two cache misses).
const PROBE_COST: f64 = 64.0;
/// Block counts are planned for at least this many items: an index that starts empty and grows
/// should not be stuck with the brute-force-like plan that suits a dozen items.
const PLANNING_FLOOR: usize = 1 << 20;

/// Directory width for `n` items: about 8 items per bucket.
fn dir_bits_for(n: usize) -> u32 {
    let per_bucket = (n / 8).max(1);
    (usize::BITS - 1 - per_bucket.leading_zeros()).clamp(MIN_DIR_BITS, MAX_DIR_BITS)
}

/// Number of keys within `r` bits of a `w`-bit key: `Σ_{i ≤ r} C(w, i)`.
pub(crate) fn ball(w: u32, r: u32) -> u64 {
    (0..=r.min(w)).fold(0u64, |sum, i| {
        sum.saturating_add(binomial(u64::from(w), u64::from(i)))
    })
}

/// Every `w`-bit mask with at most `r` bits set, fewest bits first.
pub(crate) fn flips(w: u32, r: u32) -> Vec<u64> {
    let mut out = vec![0u64];
    let mut frontier = vec![(0u64, 0u32)];
    for _ in 0..r.min(w) {
        let mut next = Vec::new();
        for &(mask, from) in &frontier {
            for bit in from..w {
                next.push((mask | 1 << bit, bit + 1));
            }
        }
        out.extend(next.iter().map(|&(mask, _)| mask));
        frontier = next;
    }
    out
}

/// One table per block of `blocks` equal blocks of `F`'s bits (most significant first); fails
/// if `blocks` is 0 or more than the bits, or if a query at `k` would probe more than 2^16 keys
/// of `min(block, widest)` bits per table. The blocks are [`split`]'s, which the index held in a
/// store ([`BlockKeys`]) keys on too (one block a table, or unions of them).
pub(crate) fn block_tables<F: Fingerprint>(
    blocks: u32,
    k: u32,
    widest: u32,
) -> Result<Vec<Table<F>>> {
    if blocks == 0 || blocks > F::BITS {
        return Err(IndexError::InvalidDesign(format!(
            "{blocks} blocks on {}-bit fingerprints (needs 1 to {})",
            F::BITS,
            F::BITS
        )));
    }
    let all: Vec<u32> = (0..F::BITS).rev().collect();
    let tables: Vec<Table<F>> = split(&all, blocks).iter().map(|b| Table::new(b)).collect();
    let widest_probe = tables
        .iter()
        .map(|t| ball(t.key_bits().min(widest), k / blocks))
        .max()
        .unwrap_or(0);
    if widest_probe > 1 << 16 {
        return Err(IndexError::InvalidDesign(format!(
            "{blocks} blocks at k = {k} probe {widest_probe} buckets per table; use more blocks"
        )));
    }
    Ok(tables)
}

/// Whether `table` reports a stored fingerprint that differs from the query by `diff`: its
/// block is within `radius` bits, and no earlier table's is (that one reports it instead), so
/// each match comes once.
#[inline]
pub(crate) fn reported_by<F: Fingerprint>(
    table: &Table<F>,
    earlier: &[Table<F>],
    diff: F,
    radius: u32,
) -> bool {
    diff.and(table.mask()).ones() <= radius
        && !earlier.iter().any(|e| diff.and(e.mask()).ones() <= radius)
}

/// The fingerprints of one bucket, with their slots beside them.
#[derive(Debug, Clone)]
struct Bucket<F> {
    fps: Vec<F>,
    slots: Vec<u32>,
}

// Not derived: a derive would require `F: Default`.
impl<F> Default for Bucket<F> {
    fn default() -> Self {
        Bucket {
            fps: Vec::new(),
            slots: Vec::new(),
        }
    }
}

/// Multi-probe block tables over fingerprints of type `F`; exact for `k ≤ max_k()`.
///
/// ```
/// use neardup_index::{HammingIndex, ProbedBlocks};
/// // Four 16-bit blocks: one probe per table up to k = 3, seventeen up to k = 7.
/// let mut index = ProbedBlocks::<u64>::new(4, 7).unwrap();
/// index.insert(1, 0).unwrap();
/// index.insert(2, 0b11_1111).unwrap(); // 6 bits away
/// index.insert(3, !0).unwrap();
/// let found = index.query(0, 6).unwrap();
/// assert_eq!(found.iter().map(|m| m.id).collect::<Vec<_>>(), vec![1, 2]);
/// ```
#[derive(Debug, Clone)]
pub struct ProbedBlocks<F> {
    /// Largest distance answered.
    k: u32,
    /// One table per block.
    tables: Vec<Table<F>>,
    /// Directory width before clamping to each block's width.
    dir_bits: u32,
    /// `buckets[t][j]`: the items whose block-`t` prefix is `j`.
    buckets: Vec<Vec<Bucket<F>>>,
    /// `masks[t]`: the prefix flips a query at distance `k` probes in table `t`, fewest bits first.
    masks: Vec<Vec<u64>>,
    slots: Slots<F>,
}

impl<F: Fingerprint> ProbedBlocks<F> {
    /// An empty index of `blocks` tables answering distances up to `k`.
    ///
    /// Fails if `blocks` is 0 or more than the fingerprint's bits, or if a query at `k` would
    /// probe more than 2^16 buckets per table (use more blocks).
    pub fn new(blocks: u32, k: u32) -> Result<Self> {
        Self::with_capacity(blocks, k, 0)
    }

    /// An empty index sized for about `n` fingerprints (the directory still grows past that).
    pub fn with_capacity(blocks: u32, k: u32, n: usize) -> Result<Self> {
        let tables = block_tables::<F>(blocks, k, MAX_DIR_BITS)?;
        let mut index = ProbedBlocks {
            k,
            tables,
            dir_bits: dir_bits_for(n),
            buckets: Vec::new(),
            masks: Vec::new(),
            slots: Slots::default(),
        };
        index.rebuild();
        Ok(index)
    }

    /// Builds an index from a batch, with the block count of [`ProbedBlocks::blocks_for`].
    ///
    /// ```
    /// use neardup_index::{HammingIndex, ProbedBlocks};
    /// let index = ProbedBlocks::from_batch(&[(1, 0u64), (2, 0b11), (3, !0)], 6).unwrap();
    /// assert_eq!(index.query(0b1, 6).unwrap().len(), 2);
    /// ```
    pub fn from_batch(items: &[(u64, F)], k: u32) -> Result<Self> {
        let blocks = Self::blocks_for(items.len(), k);
        let mut index = Self::with_capacity(blocks, k, items.len())?;
        index.insert_batch(items)?;
        Ok(index)
    }

    /// The block count that costs least for about `n` fingerprints searched at distance `k`.
    ///
    /// The cost of a query is `64 × probes + candidates`, where a table of a `w`-bit directory
    /// probes `Σ_{i ≤ ⌊k/b⌋} C(w, i)` buckets of `n / 2^w` items each. Planned for at least 2^20
    /// items, so an index that starts small does not keep a plan for a dozen.
    ///
    /// ```
    /// use neardup_index::ProbedBlocks;
    /// assert_eq!(ProbedBlocks::<u64>::blocks_for(10_000_000, 3), 4);
    /// assert_eq!(ProbedBlocks::<u64>::blocks_for(10_000_000, 6), 4);
    /// ```
    pub fn blocks_for(n: usize, k: u32) -> u32 {
        let n = n.max(PLANNING_FLOOR);
        let dir_bits = dir_bits_for(n);
        let cost = |blocks: u32| -> f64 {
            let w = (F::BITS / blocks).min(dir_bits);
            let probes = f64::from(blocks) * ball(w, k / blocks) as f64;
            probes * PROBE_COST + probes * n as f64 / 2f64.powi(w as i32)
        };
        (1..=F::BITS / 4)
            .map(|blocks| (cost(blocks), blocks))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or(1, |(_, blocks)| blocks)
    }

    /// Number of tables (blocks).
    pub fn blocks(&self) -> u32 {
        self.tables.len() as u32
    }

    /// Number of candidates a query for `fp` at distance `k` scans: the index's cost measure.
    pub fn candidates(&self, fp: F, k: u32) -> usize {
        let radius = k / self.blocks();
        (0..self.tables.len())
            .map(|t| {
                self.probes(t, fp, radius)
                    .map(|j| self.buckets[t][j].fps.len())
                    .sum::<usize>()
            })
            .sum()
    }

    /// Directory width of table `t`.
    fn width(&self, t: usize) -> u32 {
        self.tables[t].key_bits().min(self.dir_bits)
    }

    /// The bucket of `fp` in table `t`.
    #[inline]
    fn index(&self, t: usize, fp: F) -> usize {
        self.tables[t].key(fp, self.width(t)) as usize
    }

    /// The buckets of table `t` a query for `fp` at `radius` scans.
    fn probes(&self, t: usize, fp: F, radius: u32) -> impl Iterator<Item = usize> + '_ {
        let home = self.index(t, fp);
        self.masks[t]
            .iter()
            .take_while(move |flip| flip.count_ones() <= radius)
            .map(move |&flip| home ^ flip as usize)
    }

    /// Rebuilds every table from the stored fingerprints, in one counting pass per table.
    fn rebuild(&mut self) {
        let fps = &self.slots.fps;
        let dir_bits = self.dir_bits;
        let radius = self.k / self.blocks();
        self.masks = (0..self.tables.len())
            .map(|t| flips(self.width(t), radius))
            .collect();
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
                let mut buckets: Vec<Bucket<F>> = counts
                    .iter()
                    .map(|&c| Bucket {
                        fps: Vec::with_capacity(c),
                        slots: Vec::with_capacity(c),
                    })
                    .collect();
                for (slot, (&key, &fp)) in keys.iter().zip(fps).enumerate() {
                    let bucket = &mut buckets[key as usize];
                    bucket.fps.push(fp);
                    bucket.slots.push(slot as u32);
                }
                buckets
            })
            .collect();
    }

    /// Widens the directory when buckets have grown long.
    fn maybe_grow(&mut self) {
        let widest = self.tables.iter().map(Table::key_bits).max().unwrap_or(0);
        let crowded = self.len() >> (self.dir_bits + GROW_SHIFT) > 0;
        if crowded && self.dir_bits < widest.min(MAX_DIR_BITS) {
            self.dir_bits = dir_bits_for(self.len()).max(self.dir_bits + 1);
            self.rebuild();
        }
    }

    /// Adds `slot` (holding `fp`) to every table.
    fn place(&mut self, slot: u32, fp: F) {
        for t in 0..self.tables.len() {
            let j = self.index(t, fp);
            let bucket = &mut self.buckets[t][j];
            bucket.fps.push(fp);
            bucket.slots.push(slot);
        }
    }
}

impl<F: Fingerprint> HammingIndex<F> for ProbedBlocks<F> {
    fn insert(&mut self, id: u64, fp: F) -> Result<()> {
        let slot = self.slots.push(id, fp)?;
        self.place(slot, fp);
        self.maybe_grow();
        Ok(())
    }

    fn insert_batch(&mut self, items: &[(u64, F)]) -> Result<()> {
        match self.slots.extend_batch(items)? {
            Some(new) => {
                for slot in new {
                    self.place(slot, self.slots.fps[slot as usize]);
                }
                self.maybe_grow();
            }
            None => {
                self.dir_bits = self.dir_bits.max(dir_bits_for(self.slots.len()));
                self.rebuild();
            }
        }
        Ok(())
    }

    fn remove(&mut self, id: u64) -> Option<F> {
        let removed = self.slots.remove(id)?;
        let moved = removed
            .moved_from
            .map(|from| (from, self.slots.fps[removed.slot as usize]));
        for t in 0..self.tables.len() {
            let j = self.index(t, removed.fp);
            let bucket = &mut self.buckets[t][j];
            if let Some(at) = bucket.slots.iter().position(|&s| s == removed.slot) {
                bucket.slots.swap_remove(at);
                bucket.fps.swap_remove(at);
            }
            if let Some((from, fp)) = moved {
                let j = self.index(t, fp);
                let bucket = &mut self.buckets[t][j];
                if let Some(entry) = bucket.slots.iter_mut().find(|s| **s == from) {
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
        check_k(k, self.k)?;
        let radius = k / self.blocks();
        // The buckets of every table's probes first: reading their headers one after the other
        // (a miss each) lets the misses overlap, where reading each just before its scan made
        // every scan wait for one (13% of a query's time on the 4 GB corpus's kept units).
        let probed: Vec<(usize, &[F], &[u32])> = (0..self.tables.len())
            .flat_map(|t| {
                self.probes(t, fp, radius).map(move |j| {
                    let bucket = &self.buckets[t][j];
                    (t, bucket.fps.as_slice(), bucket.slots.as_slice())
                })
            })
            .collect();
        // The matches with their slots for ids, then each slot replaced by its id: the ids'
        // loads (at random in the id array) are made together after the scans instead of each
        // in the middle of one.
        let mut out = Vec::new();
        for (t, fps, slots) in probed {
            let (table, earlier) = (&self.tables[t], &self.tables[..t]);
            for (at, &stored) in fps.iter().enumerate() {
                let diff = stored.xor(fp);
                let distance = diff.ones();
                if distance <= k && reported_by(table, earlier, diff, radius) {
                    out.push(Match {
                        distance,
                        id: u64::from(slots[at]),
                    });
                }
            }
        }
        for found in &mut out {
            found.id = self.slots.ids[found.id as usize];
        }
        Ok(sorted(out))
    }

    fn max_k(&self) -> u32 {
        self.k
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn memory_bytes(&self) -> usize {
        let buckets = directory_bytes(&self.buckets, |b| {
            b.fps.capacity() * std::mem::size_of::<F>() + b.slots.capacity() * 4
        });
        self.slots.memory_bytes() + buckets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flips_enumerate_the_ball_fewest_bits_first() {
        let masks = flips(16, 1);
        assert_eq!(masks.len() as u64, ball(16, 1));
        assert_eq!(masks[0], 0);
        let two = flips(5, 2);
        assert_eq!(two.len(), 1 + 5 + 10);
        let mut unique = two.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), two.len());
        assert!(two
            .windows(2)
            .all(|w| w[0].count_ones() <= w[1].count_ones()));
        assert_eq!(flips(3, 9).len(), 8);
    }

    #[test]
    fn plans_few_tables_for_large_k() {
        assert_eq!(ProbedBlocks::<u64>::blocks_for(1_000_000, 6), 4);
        assert!(ProbedBlocks::<u128>::blocks_for(10_000_000, 6) >= 6);
        assert!(ProbedBlocks::<u64>::new(0, 3).is_err());
        assert!(ProbedBlocks::<u64>::new(65, 3).is_err());
        assert!(ProbedBlocks::<u64>::new(1, 40).is_err());
    }
}
