//! [`BlockKeys`]: the block split of [`crate::ProbedBlocks`] as keys a store holds, for an index
//! that lives outside the process (seed 004: one key per table and block value, holding the
//! fingerprints that share it).

use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::hamming::check_k;
use crate::probed::{ball, block_tables, flips, reported_by};

/// Keys are planned for this many fingerprints: a store-held index cannot change its keys as it
/// grows (every process must agree on them), so it is planned once for a large database.
pub const PLANNED_LEN: usize = 1 << 27;
/// Cost of reading one key of a store-held index, in fingerprint comparisons (a lookup in the
/// store and its share of a round trip: well over a bucket probe in memory).
pub const KEY_COST: f64 = 2000.0;

/// Where a fingerprint goes, and where a query looks, in an index held as keyed lists: one
/// table per block of the fingerprint (the split [`crate::ProbedBlocks`] uses), each keyed on the
/// whole block. A fingerprint is stored under its *home* key in every table; a query at
/// distance `k` reads the keys within `⌊k / blocks⌋` bits of its own in each table, and keeps a
/// stored fingerprint only where [`BlockKeys::accepts`] says so, so each match comes once.
///
/// ```
/// use neardup_index::BlockKeys;
/// let keys = BlockKeys::<u64>::new(4, 6).unwrap();
/// let homes = keys.homes(0xABCD_0000_0000_0001);
/// assert_eq!(homes, vec![(0, 0xABCD), (1, 0), (2, 0), (3, 1)]);
/// // Radius 1: the home key and its 16 one-bit neighbours in each of the 4 tables.
/// assert_eq!(keys.probes(0).len(), 4 * 17);
/// assert_eq!(keys.accepts(0, 0b111, 0, 6), Some(3));
/// assert_eq!(keys.accepts(1, 0b111, 0, 6), None, "table 0 reports it");
/// ```
#[derive(Debug, Clone)]
pub struct BlockKeys<F> {
    k: u32,
    tables: Vec<crate::Table<F>>,
    /// Flips of a key within the radius, fewest bits first, per table.
    masks: Vec<Vec<u64>>,
}

impl<F: Fingerprint> BlockKeys<F> {
    /// Keys of `blocks` tables (each keyed on a whole block, at most 64 bits) answering
    /// distances up to `k`; fails as [`crate::ProbedBlocks::new`] does, or if a block is wider than 64
    /// bits.
    pub fn new(blocks: u32, k: u32) -> Result<Self> {
        let tables = block_tables::<F>(blocks, k, 64)?;
        if let Some(wide) = tables.iter().find(|t| t.key_bits() > 64) {
            return Err(crate::IndexError::InvalidDesign(format!(
                "{blocks} blocks of {} bits: a key holds at most 64",
                wide.key_bits()
            )));
        }
        let radius = k / blocks;
        let masks = tables.iter().map(|t| flips(t.key_bits(), radius)).collect();
        Ok(BlockKeys { k, tables, masks })
    }

    /// The keys that cost least for [`PLANNED_LEN`] fingerprints searched at `k`: a query
    /// costs [`KEY_COST`] per key read plus one per fingerprint in them (`n / 2^w` for a `w`-bit
    /// block), and reads `Σ_{i ≤ ⌊k/b⌋} C(w, i)` keys per table. Blocks fit 64-bit keys.
    ///
    /// ```
    /// use neardup_index::BlockKeys;
    /// assert_eq!(BlockKeys::<u64>::planned(6).unwrap().blocks(), 4);
    /// assert_eq!(BlockKeys::<u64>::planned(3).unwrap().blocks(), 4);
    /// assert_eq!(BlockKeys::<u128>::planned(6).unwrap().blocks(), 7);
    /// ```
    pub fn planned(k: u32) -> Result<Self> {
        let n = PLANNED_LEN as f64;
        let cost = |blocks: u32| -> f64 {
            let w = F::BITS / blocks;
            let keys = f64::from(blocks) * ball(w, k / blocks) as f64;
            keys * KEY_COST + keys * n / 2f64.powi(w as i32)
        };
        let blocks = (F::BITS.div_ceil(64)..=F::BITS / 4)
            .map(|blocks| (cost(blocks), blocks))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or(1, |(_, blocks)| blocks);
        Self::new(blocks, k)
    }

    /// Number of tables (blocks).
    pub fn blocks(&self) -> u32 {
        self.tables.len() as u32
    }

    /// The largest distance answered.
    pub fn max_k(&self) -> u32 {
        self.k
    }

    /// The key `fp` is stored under in each table, as (table, key).
    pub fn homes(&self, fp: F) -> Vec<(u32, u64)> {
        self.tables
            .iter()
            .enumerate()
            .map(|(t, table)| (t as u32, table.key(fp, table.key_bits())))
            .collect()
    }

    /// Every (table, key) a query for `fp` at the largest distance reads.
    pub fn probes(&self, fp: F) -> Vec<(u32, u64)> {
        self.homes(fp)
            .into_iter()
            .flat_map(|(t, home)| {
                self.masks[t as usize]
                    .iter()
                    .map(move |&flip| (t, home ^ flip))
            })
            .collect()
    }

    /// The distance of `stored`, found in `table`, if it is within `k` of `query` and this
    /// table reports it (its block is within the radius and no earlier table's is); else
    /// `None`. Fails for a `k` over [`BlockKeys::max_k`].
    pub fn accepts(&self, table: u32, stored: F, query: F, k: u32) -> Option<u32> {
        check_k(k, self.k).ok()?;
        let t = table as usize;
        let diff = stored.xor(query);
        let distance = diff.ones();
        let radius = k / self.blocks();
        (distance <= k && reported_by(self.tables.get(t)?, &self.tables[..t], diff, radius))
            .then_some(distance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Keyed lists filled and read as a store would: every match within k, once, as brute force.
    fn agrees_with_brute_force<F: Fingerprint + std::hash::Hash>(keys: &BlockKeys<F>, fps: &[F]) {
        let mut lists: HashMap<(u32, u64), Vec<(usize, F)>> = HashMap::new();
        for (id, &fp) in fps.iter().enumerate() {
            for home in keys.homes(fp) {
                lists.entry(home).or_default().push((id, fp));
            }
        }
        for k in 0..=keys.max_k() {
            for &query in fps.iter().take(50) {
                let mut found: Vec<usize> = Vec::new();
                for (t, key) in keys.probes(query) {
                    for &(id, fp) in lists.get(&(t, key)).into_iter().flatten() {
                        if keys.accepts(t, fp, query, k).is_some() {
                            found.push(id);
                        }
                    }
                }
                found.sort_unstable();
                let mut expected: Vec<usize> = (0..fps.len())
                    .filter(|&i| fps[i].distance(query) <= k)
                    .collect();
                expected.sort_unstable();
                assert_eq!(found, expected, "k = {k}");
            }
        }
    }

    #[test]
    fn finds_every_match_once() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let bases: Vec<u64> = (0..40).map(|_| next()).collect();
        // Near copies of a few bases, at every distance up to 8.
        let fps: Vec<u64> = (0..400)
            .map(|i| {
                let flips = (0..i % 9).fold(0u64, |m, _| m | 1 << (next() % 64));
                bases[i % 40] ^ flips
            })
            .collect();
        agrees_with_brute_force(&BlockKeys::<u64>::new(4, 7).unwrap(), &fps);
        agrees_with_brute_force(&BlockKeys::<u64>::planned(6).unwrap(), &fps);
        let wide: Vec<u128> = fps
            .iter()
            .map(|&f| u128::from(f) << 64 | u128::from(!f))
            .collect();
        agrees_with_brute_force(&BlockKeys::<u128>::planned(6).unwrap(), &wide);
        assert!(BlockKeys::<u128>::new(1, 3).is_err(), "a 128-bit key");
        assert_eq!(
            BlockKeys::<u64>::planned(6).unwrap().accepts(0, 0, 0, 9),
            None
        );
    }
}
