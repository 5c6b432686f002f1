//! [`BlockKeys`]: the block split of [`crate::ProbedBlocks`] as keys a store holds, for an index
//! that lives outside the process (seed 004: one key per table and block value, holding the
//! fingerprints that share it).

use crate::design::{binomial, choose_blocks, split, Table};
use crate::error::{IndexError, Result};
use crate::fingerprint::Fingerprint;
use crate::hamming::check_k;
use crate::probed::{ball, flips, reported_by};

/// Keys are planned for this many fingerprints (a billion): a store-held index cannot change
/// its keys as it grows (every process must agree on them), so it is planned once, for the
/// largest database it should serve, and the plan is recorded beside the keys.
pub const PLANNED_LEN: usize = 1 << 30;
/// Cost of reading one key of a store-held index, in entries read. Measured on a local Redis
/// 7 (`redis-benchmark -c 1 -n 2000 MGET` of 1,000 16-byte keys against `GET` of one
/// 160,000-byte value): 0.15 µs a key against 4.5 ns an entry on the server, about 35 entries;
/// the client builds each key's name and parses its reply too, so 64.
pub const KEY_COST: f64 = 64.0;
/// Most tables a plan may have: every table holds one entry of every document (16 or 24 bytes
/// and, for a sparse key, the key itself), so more tables cost store memory.
pub const MAX_TABLES: u64 = 16;
/// Most keys one table may read for a query.
const MAX_PROBES: u64 = 1 << 16;
/// Bytes of one entry in a key's list per byte written (an 8-byte slot and the fingerprint):
/// the allocator's rounding, about 1.1.
const ENTRY_GROWTH: f64 = 1.1;
/// Bytes a store spends on a key besides its entries (its name, the key's own records):
/// measured on Redis 7, 104 bytes a key holding one 16-byte entry (`MEMORY USAGE` over 6
/// million keys, `tools/bench/index_in.sh 1000000`, BENCHMARKS.md), so about 88.
const KEY_BYTES: f64 = 88.0;
/// Most bytes a document's entries may cost a plan at the size it is planned for: keys must
/// gather enough entries each that their own cost stays small.
const MAX_DOCUMENT_BYTES: f64 = 160.0;

/// Where a fingerprint goes, and where a query looks, in an index held as keyed lists.
///
/// The fingerprint's bits are split into `blocks` equal blocks (the split
/// [`crate::ProbedBlocks`] uses); each table is keyed on a union of `choose` of them (every
/// such union is a table). Two fingerprints within `k` bits differ in `k` bits spread over the
/// blocks, so the `choose` blocks with the fewest differences hold at most
/// [`BlockKeys::radius`] of them: a query reads, in every table, the keys within that radius of
/// its own. One block a table (`choose = 1`) is seed 004's plan; a pair of blocks a table makes
/// keys twice as wide, so each holds `2^w` times fewer entries at the price of more keys read.
///
/// A fingerprint is stored under its *home* key in every table; a stored fingerprint read from
/// a table is kept only where [`BlockKeys::accepts`] says so, so each match comes once.
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
/// // Pairs of the 4 blocks: 6 tables of 32-bit keys, radius 2.
/// let pairs = BlockKeys::<u64>::with_choice(4, 2, 6).unwrap();
/// assert_eq!((pairs.tables(), pairs.radius(6)), (6, 2));
/// assert_eq!(pairs.homes(0xABCD_0000_0000_0001)[0], (0, 0xABCD_0000));
/// ```
#[derive(Debug, Clone)]
pub struct BlockKeys<F> {
    k: u32,
    blocks: u32,
    choose: u32,
    /// Most key bits: each table keys on the first `width` bits of its blocks' union.
    width: u32,
    tables: Vec<Table<F>>,
    /// Flips of a key within the radius, fewest bits first, per table.
    masks: Vec<Vec<u64>>,
}

/// The most differing bits the `choose` blocks (of `blocks`) with the fewest can hold when two
/// fingerprints differ in `k` bits: spread evenly, `k / blocks` a block and one more in
/// `k % blocks` blocks.
fn pigeonhole_radius(k: u32, blocks: u32, choose: u32) -> u32 {
    let (each, more) = (k / blocks, k % blocks);
    choose * each + choose.saturating_sub(blocks - more)
}

impl<F: Fingerprint> BlockKeys<F> {
    /// Keys of `blocks` tables, each keyed on one whole block, answering distances up to `k`
    /// (seed 004's plan, [`BlockKeys::with_choice`] with `choose = 1`).
    pub fn new(blocks: u32, k: u32) -> Result<Self> {
        Self::with_choice(blocks, 1, k)
    }

    /// Keys of one table per union of `choose` of `blocks` blocks, answering distances up to
    /// `k`; fails if `blocks` is 0 or more than the bits, `choose` is 0 or more than `blocks`,
    /// a key is wider than 64 bits, or a query would read more than 2^16 keys of a table.
    pub fn with_choice(blocks: u32, choose: u32, k: u32) -> Result<Self> {
        Self::with_width(blocks, choose, u32::MAX, k)
    }

    /// [`BlockKeys::with_choice`] keyed on at most the first `width` bits of each union (the
    /// rest of the union is checked per entry): fewer, fuller keys, each read whole. Two
    /// fingerprints whose union differs in at most the radius differ in at most that many of
    /// its first bits, so the answers are the same.
    pub fn with_width(blocks: u32, choose: u32, width: u32, k: u32) -> Result<Self> {
        let invalid = |why: String| Err(IndexError::InvalidDesign(why));
        if blocks == 0 || blocks > F::BITS || choose == 0 || choose > blocks || width == 0 {
            return invalid(format!(
                "tables of {choose} of {blocks} blocks on {}-bit fingerprints",
                F::BITS
            ));
        }
        let all: Vec<u32> = (0..F::BITS).rev().collect();
        let tables: Vec<Table<F>> = choose_blocks(&split(&all, blocks), choose as usize)
            .iter()
            .map(|positions| Table::new(positions))
            .collect();
        let radius = pigeonhole_radius(k, blocks, choose);
        let key_bits = |table: &Table<F>| table.key_bits().min(width);
        for table in &tables {
            if key_bits(table) > 64 {
                return invalid(format!(
                    "keys of {} bits: a key holds at most 64",
                    key_bits(table)
                ));
            }
            if ball(key_bits(table), radius) > MAX_PROBES {
                return invalid(format!(
                    "{}-bit keys at radius {radius} read over {MAX_PROBES} keys a table",
                    key_bits(table)
                ));
            }
        }
        let masks = tables.iter().map(|t| flips(key_bits(t), radius)).collect();
        let width = tables.iter().map(key_bits).max().unwrap_or(0);
        Ok(BlockKeys {
            k,
            blocks,
            choose,
            width,
            tables,
            masks,
        })
    }

    /// What a plan of `blocks` blocks, `choose` a table, keys of at most `width` bits costs for
    /// `n` fingerprints searched at `k`, without building it: (a query's cost in entries read,
    /// [`KEY_COST`] a key; bytes a document), or `None` if no such keys exist.
    fn estimate(n: f64, blocks: u32, choose: u32, width: u32, k: u32) -> Option<(f64, f64)> {
        let radius = pigeonhole_radius(k, blocks, choose);
        let tables = binomial(u64::from(blocks), u64::from(choose));
        if tables > MAX_TABLES {
            return None;
        }
        // The blocks' widths: `F::BITS / blocks`, and one more in the first `F::BITS % blocks`;
        // a union's narrowest is `choose` narrow ones where it can be.
        let (narrow, wide) = (F::BITS / blocks, F::BITS % blocks);
        let narrowest = choose * narrow + choose.saturating_sub(blocks - wide);
        if narrowest == 0 || width > narrowest || width > 64 {
            return None;
        }
        let read = ball(width, radius);
        if read > MAX_PROBES {
            return None;
        }
        let per_key = n / 2f64.powi(width as i32);
        let cost = tables as f64 * read as f64 * (KEY_COST + per_key);
        let entry = f64::from(8 + F::BITS / 8) * ENTRY_GROWTH;
        let bytes = tables as f64 * (entry + KEY_BYTES / per_key.max(1.0));
        Some((cost, bytes))
    }

    /// The keys that cost least for [`PLANNED_LEN`] fingerprints searched at `k`
    /// ([`BlockKeys::planned_for`]).
    ///
    /// ```
    /// use neardup_index::BlockKeys;
    /// let keys = BlockKeys::<u64>::planned(6).unwrap();
    /// assert_eq!((keys.blocks(), keys.choose(), keys.width()), (4, 2, 26));
    /// assert!(BlockKeys::<u128>::planned(6).unwrap().tables() <= 16);
    /// ```
    pub fn planned(k: u32) -> Result<Self> {
        Self::planned_for(PLANNED_LEN, k)
    }

    /// The keys that cost least for `n` fingerprints searched at `k`, among plans of at most
    /// `MAX_TABLES` (16) tables whose entries cost at most `MAX_DOCUMENT_BYTES` (160) a document:
    /// a query costs [`KEY_COST`] per key read plus one per entry in them (`n / 2^w` for a
    /// `w`-bit key), and reads `Σ_{i ≤ radius} C(w, i)` keys per table; a key costs its
    /// entries plus about 88 bytes of its own, shared by the entries it holds.
    ///
    /// ```
    /// use neardup_index::BlockKeys;
    /// // Up to 16 million: seed 004's four 16-bit blocks, radius 1 (68 keys a query).
    /// let keys = BlockKeys::<u64>::planned_for(1 << 24, 6).unwrap();
    /// assert_eq!((keys.blocks(), keys.choose(), keys.width()), (4, 1, 16));
    /// assert_eq!(keys.probes(0).len(), 68);
    /// ```
    pub fn planned_for(n: usize, k: u32) -> Result<Self> {
        let n = n.max(1) as f64;
        let mut best: Option<(f64, (u32, u32, u32))> = None;
        for blocks in 1..=F::BITS.min(64) {
            for choose in 1..=blocks {
                for width in 1..=64 {
                    let Some((cost, bytes)) = Self::estimate(n, blocks, choose, width, k) else {
                        continue;
                    };
                    if bytes <= MAX_DOCUMENT_BYTES && best.is_none_or(|(least, _)| cost < least) {
                        best = Some((cost, (blocks, choose, width)));
                    }
                }
            }
        }
        let (_, (blocks, choose, width)) =
            best.ok_or_else(|| IndexError::InvalidDesign(format!("no block keys answer k = {k}")))?;
        Self::with_width(blocks, choose, width, k)
    }

    /// Number of blocks the bits are split into.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Number of blocks each table is keyed on.
    pub fn choose(&self) -> u32 {
        self.choose
    }

    /// Most bits of a key (a table keyed on a narrower union keys on all of it).
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Number of tables (keys each fingerprint is stored under).
    pub fn tables(&self) -> u32 {
        self.tables.len() as u32
    }

    /// The largest distance answered.
    pub fn max_k(&self) -> u32 {
        self.k
    }

    /// How far (in bits) from a query's key a table's keys are read for distance `k`.
    pub fn radius(&self, k: u32) -> u32 {
        pigeonhole_radius(k, self.blocks, self.choose)
    }

    /// The key `fp` is stored under in each table, as (table, key).
    pub fn homes(&self, fp: F) -> Vec<(u32, u64)> {
        self.tables
            .iter()
            .enumerate()
            .map(|(t, table)| (t as u32, table.key(fp, table.key_bits().min(self.width))))
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
    /// table reports it (its key is within the radius and no earlier table's is); else
    /// `None`. Fails for a `k` over [`BlockKeys::max_k`].
    pub fn accepts(&self, table: u32, stored: F, query: F, k: u32) -> Option<u32> {
        check_k(k, self.k).ok()?;
        let t = table as usize;
        let diff = stored.xor(query);
        let distance = diff.ones();
        let radius = self.radius(k);
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
        agrees_with_brute_force(&BlockKeys::<u64>::planned(3).unwrap(), &fps);
        agrees_with_brute_force(&BlockKeys::<u64>::with_choice(8, 3, 7).unwrap(), &fps);
        agrees_with_brute_force(&BlockKeys::<u64>::with_choice(5, 2, 8).unwrap(), &fps);
        agrees_with_brute_force(&BlockKeys::<u64>::with_width(4, 2, 20, 6).unwrap(), &fps);
        agrees_with_brute_force(&BlockKeys::<u64>::with_width(4, 1, 9, 6).unwrap(), &fps);
        agrees_with_brute_force(&BlockKeys::<u64>::planned_for(1 << 24, 6).unwrap(), &fps);
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

    /// The radius is the most the fewest-differing `choose` blocks can hold: every way of
    /// spreading `k` differences over the blocks, tried.
    #[test]
    fn the_radius_holds_for_every_spread() {
        fn spreads(blocks: u32, k: u32) -> Vec<Vec<u32>> {
            if blocks == 1 {
                return (0..=k).map(|d| vec![d]).collect();
            }
            (0..=k)
                .flat_map(|d| {
                    spreads(blocks - 1, k - d).into_iter().map(move |mut rest| {
                        rest.push(d);
                        rest
                    })
                })
                .collect()
        }
        for blocks in 1..=8 {
            for choose in 1..=blocks {
                for k in 0..=8 {
                    let worst = spreads(blocks, k)
                        .into_iter()
                        .map(|mut spread| {
                            spread.sort_unstable();
                            spread[..choose as usize].iter().sum::<u32>()
                        })
                        .max()
                        .unwrap_or(0);
                    assert_eq!(
                        pigeonhole_radius(k, blocks, choose),
                        worst,
                        "{blocks} {choose} {k}"
                    );
                }
            }
        }
    }

    #[test]
    #[ignore = "prints the plans; run with --ignored --nocapture"]
    fn print_plans() {
        for k in [3, 6] {
            for n in [1usize << 20, 1 << 24, 1 << 27, 1 << 30] {
                let keys = BlockKeys::<u64>::planned_for(n, k).unwrap();
                let est = BlockKeys::<u64>::estimate(
                    n as f64,
                    keys.blocks(),
                    keys.choose(),
                    keys.width(),
                    k,
                );
                println!(
                    "k={k} n={n}: blocks={} choose={} width={} probes={} {est:?}",
                    keys.blocks(),
                    keys.choose(),
                    keys.width(),
                    keys.probes(0).len()
                );
            }
        }
    }

    /// Today's seed-004 plan is the one-block-a-table case: its keys are the ones databases
    /// written before wider keys hold.
    #[test]
    fn one_block_a_table_keeps_its_keys() {
        let keys = BlockKeys::<u64>::new(4, 6).unwrap();
        assert_eq!((keys.tables(), keys.radius(6)), (4, 1));
        assert_eq!(
            keys.homes(0x0123_4567_89AB_CDEF),
            vec![(0, 0x0123), (1, 0x4567), (2, 0x89AB), (3, 0xCDEF)]
        );
    }
}
