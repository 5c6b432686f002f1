//! Permuted-table designs (Manku, Jain and Das Sarma, WWW 2007) and the pigeonhole rule behind them.
//!
//! Split the `f` bits of a fingerprint into `b` blocks. Two fingerprints at distance `≤ k` differ in
//! at most `k` blocks, so (pigeonhole, `b > k`) they agree exactly on at least `b − k` blocks. A
//! *table* keys every fingerprint on one choice of `b − k` blocks; with one table per choice, every
//! pair within `k` shares the key of at least one table. Seed 001 §3.3 is the case `b = 4, k = 3`:
//! four tables keyed on one 16-bit block each.
//!
//! A [`Table`] here is just the set of bits it keys on (its *mask*) and how to pack them into a
//! `u64` key. Searching a table means grouping fingerprints by key and comparing within groups.

use crate::error::{IndexError, Result};
use crate::fingerprint::Fingerprint;

/// Expected candidates per query below which [`Design::for_expected_len`] stops adding tables.
const CANDIDATE_BUDGET: f64 = 1024.0;
/// Cost of probing one table, in candidate comparisons (a directory lookup and a cache miss).
const PROBE_COST: f64 = 64.0;
/// The most tables a general design may have: more would cost more memory than it saves time.
pub const MAX_TABLES: usize = 4096;

/// A table layout for permuted-table search: which bits each table keys on.
///
/// The four presets are the paper's designs for `f = 64`, `k = 3` (its §3.1.1); [`Design::Blocks`]
/// is the general pigeonhole design for any width and distance.
///
/// ```
/// use neardup_index::Design;
/// assert_eq!(Design::Tables10.table_count(64).unwrap(), 10);
/// assert_eq!(Design::Blocks { blocks: 6, k: 3 }.table_count(64).unwrap(), 20);
/// // 10 million fingerprints: four 16-bit tables see ~610 candidates per query.
/// assert_eq!(Design::for_expected_len(10_000_000, 3, 64), Design::Tables4x16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Design {
    /// 4 blocks of 16 bits, each table keyed on one block (seed 001 §3.3; seomoz's 4 blocks).
    Tables4x16,
    /// 5 blocks of 13,13,13,13,12 bits; 10 tables keyed on 2 blocks (25–26 bits).
    Tables10,
    /// 4 blocks of 16 bits, then the other 48 bits in 4 blocks of 12: 16 tables keyed on 28 bits.
    Tables16,
    /// 6 blocks of 11,11,11,11,10,10 bits; 20 tables keyed on 3 blocks (31–33 bits).
    Tables20,
    /// `blocks` nearly equal blocks, one table per choice of `blocks − k` of them: C(blocks, k)
    /// tables. Needs `k < blocks ≤ f`.
    Blocks {
        /// Number of blocks `b`.
        blocks: u32,
        /// Largest distance answered exactly.
        k: u32,
    },
}

impl Design {
    /// The preset designs for `f = 64`, `k = 3`, fewest tables first.
    pub const PRESETS: [Design; 4] = [
        Design::Tables4x16,
        Design::Tables10,
        Design::Tables16,
        Design::Tables20,
    ];

    /// The largest distance `k` this design answers exactly.
    pub fn max_k(&self) -> u32 {
        match *self {
            Design::Blocks { k, .. } => k,
            _ => 3,
        }
    }

    /// Picks a design for about `n` fingerprints of `bits` bits searched at distance `k`.
    ///
    /// The rule: the design with the fewest tables (the least memory) whose expected number of
    /// candidates per query, `Σ_tables n / 2^key_bits`, is at most 1024. If none is, the one with
    /// the lowest estimated cost `64 × tables + candidates`. For `f = 64, k = 3` the choice is among
    /// the four presets; otherwise among `Blocks { b, k }` for `b = k + 1 ..`.
    pub fn for_expected_len(n: usize, k: u32, bits: u32) -> Design {
        let candidates: Vec<Design> = if bits == 64 && k == 3 {
            Self::PRESETS.to_vec()
        } else {
            (k + 1..=bits.min(k + 24))
                .map(|blocks| Design::Blocks { blocks, k })
                .take_while(|d| d.table_count(bits).is_ok())
                .collect()
        };
        let cost = |d: &Design| -> Option<(f64, f64)> {
            let cand = d.expected_candidates(n, bits).ok()?;
            let tables = d.table_count(bits).ok()? as f64;
            Some((cand, tables * PROBE_COST + cand))
        };
        if let Some(d) = candidates
            .iter()
            .find(|d| cost(d).is_some_and(|(cand, _)| cand <= CANDIDATE_BUDGET))
        {
            return *d;
        }
        candidates
            .iter()
            .filter_map(|d| cost(d).map(|(_, c)| (c, *d)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, d)| d)
            .unwrap_or(Design::Blocks { blocks: k + 1, k })
    }

    /// Number of tables for fingerprints of `bits` bits, or why the design is invalid there.
    pub fn table_count(&self, bits: u32) -> Result<usize> {
        Ok(self.key_sets(bits)?.len())
    }

    /// Expected candidates per query among `n` uniformly random fingerprints: `Σ n / 2^key_bits`.
    pub fn expected_candidates(&self, n: usize, bits: u32) -> Result<f64> {
        Ok(self
            .key_sets(bits)?
            .iter()
            .map(|set| n as f64 / 2f64.powi(set.len() as i32))
            .sum())
    }

    /// The tables of this design for fingerprint type `F`.
    pub fn tables<F: Fingerprint>(&self) -> Result<Vec<Table<F>>> {
        Ok(self
            .key_sets(F::BITS)?
            .iter()
            .map(|set| Table::new(set))
            .collect())
    }

    /// The key bit positions of every table, each most significant first.
    fn key_sets(&self, bits: u32) -> Result<Vec<Vec<u32>>> {
        let all: Vec<u32> = (0..bits).rev().collect();
        let preset = |name: &str| -> Result<()> {
            if bits == 64 {
                Ok(())
            } else {
                Err(IndexError::InvalidDesign(format!(
                    "{name} is a design for 64-bit fingerprints; use Blocks for {bits} bits"
                )))
            }
        };
        match *self {
            Design::Tables4x16 => {
                preset("Tables4x16")?;
                Ok(choose_blocks(&split(&all, 4), 1))
            }
            Design::Tables10 => {
                preset("Tables10")?;
                Ok(choose_blocks(&split(&all, 5), 2))
            }
            Design::Tables20 => {
                preset("Tables20")?;
                Ok(choose_blocks(&split(&all, 6), 3))
            }
            Design::Tables16 => {
                preset("Tables16")?;
                let mut sets = Vec::with_capacity(16);
                for outer in split(&all, 4) {
                    let rest: Vec<u32> =
                        all.iter().copied().filter(|p| !outer.contains(p)).collect();
                    for inner in split(&rest, 4) {
                        let mut set: Vec<u32> = outer.iter().chain(&inner).copied().collect();
                        set.sort_unstable_by(|a, b| b.cmp(a));
                        sets.push(set);
                    }
                }
                Ok(sets)
            }
            Design::Blocks { blocks, k } => {
                if blocks <= k || blocks > bits {
                    return Err(IndexError::InvalidDesign(format!(
                        "{blocks} blocks cannot answer k = {k} on {bits}-bit fingerprints \
                         (needs k < blocks ≤ {bits})"
                    )));
                }
                let tables = binomial(blocks as u64, k as u64);
                if tables > MAX_TABLES as u64 {
                    return Err(IndexError::InvalidDesign(format!(
                        "{blocks} blocks at k = {k} need {tables} tables (at most {MAX_TABLES})"
                    )));
                }
                Ok(choose_blocks(&split(&all, blocks), (blocks - k) as usize))
            }
        }
    }
}

impl std::fmt::Display for Design {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Design::Tables4x16 => write!(f, "4x16"),
            Design::Tables10 => write!(f, "10"),
            Design::Tables16 => write!(f, "16"),
            Design::Tables20 => write!(f, "20"),
            Design::Blocks { blocks, k } => write!(f, "blocks={blocks},k={k}"),
        }
    }
}

impl std::str::FromStr for Design {
    type Err = IndexError;

    /// Parses a preset name: `4x16`, `10`, `16` or `20` (as printed by `Display`).
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "4x16" | "4" | "tables4x16" => Ok(Design::Tables4x16),
            "10" | "tables10" => Ok(Design::Tables10),
            "16" | "tables16" => Ok(Design::Tables16),
            "20" | "tables20" => Ok(Design::Tables20),
            other => Err(IndexError::InvalidDesign(format!(
                "unknown design {other:?} (expected 4x16, 10, 16 or 20)"
            ))),
        }
    }
}

/// Splits bit positions into `b` consecutive, nearly equal blocks (the first ones one bit longer).
pub(crate) fn split(positions: &[u32], b: u32) -> Vec<Vec<u32>> {
    let b = b.max(1) as usize;
    let (base, extra) = (positions.len() / b, positions.len() % b);
    let mut blocks = Vec::with_capacity(b);
    let mut at = 0;
    for i in 0..b {
        let len = base + usize::from(i < extra);
        blocks.push(positions[at..at + len].to_vec());
        at += len;
    }
    blocks
}

/// Every union of `r` of the given blocks, in lexicographic order of block choice; each union's
/// positions most significant first.
pub(crate) fn choose_blocks(blocks: &[Vec<u32>], r: usize) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut pick: Vec<usize> = (0..r).collect();
    if r == 0 || r > blocks.len() {
        return out;
    }
    loop {
        let mut set: Vec<u32> = pick
            .iter()
            .flat_map(|&i| blocks[i].iter().copied())
            .collect();
        set.sort_unstable_by(|a, b| b.cmp(a));
        out.push(set);
        // Advance to the next combination.
        let Some(i) = (0..r).rev().find(|&i| pick[i] < blocks.len() - r + i) else {
            return out;
        };
        pick[i] += 1;
        for j in i + 1..r {
            pick[j] = pick[j - 1] + 1;
        }
    }
}

/// `n choose r`, saturating.
pub(crate) fn binomial(n: u64, r: u64) -> u64 {
    let r = r.min(n.saturating_sub(r));
    (0..r).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// One permuted table: the bits it keys on, packed most significant first into a `u64` key.
///
/// Keys longer than 64 bits (possible with 128-bit fingerprints) are cut to their first 64 bits;
/// a shorter *prefix* key can be taken too. Grouping by a prefix puts every pair that agrees on
/// the whole mask into the same group, plus some that do not; callers check [`Table::mask`] to
/// tell them apart.
#[derive(Debug, Clone)]
pub struct Table<F> {
    /// Key bit positions, most significant first.
    positions: Vec<u32>,
    /// `(start, len)` runs of consecutive positions, in key order.
    ranges: Vec<(u32, u32)>,
    /// All the key bits.
    mask: F,
}

impl<F: Fingerprint> Table<F> {
    /// A table keyed on the given bit positions (most significant first).
    pub(crate) fn new(positions: &[u32]) -> Self {
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for &p in positions {
            match ranges.last_mut() {
                // Extends a run downwards: the next position is one below the run's start.
                Some((start, len)) if *start == p + 1 => {
                    *start = p;
                    *len += 1;
                }
                _ => ranges.push((p, 1)),
            }
        }
        let mask = positions.iter().fold(F::ZERO, |m, &p| m.or(F::bit(p)));
        Table {
            positions: positions.to_vec(),
            ranges,
            mask,
        }
    }

    /// Every bit this table keys on.
    pub fn mask(&self) -> F {
        self.mask
    }

    /// Number of key bits.
    pub fn key_bits(&self) -> u32 {
        self.positions.len() as u32
    }

    /// Key bit positions, most significant first.
    pub(crate) fn positions(&self) -> &[u32] {
        &self.positions
    }

    /// The first `width` key bits of `fp` (`width ≤ min(64, key_bits)`), as the low bits of a u64.
    #[inline]
    pub fn key(&self, fp: F, width: u32) -> u64 {
        let mut key = 0u64;
        let mut left = width;
        for &(start, len) in &self.ranges {
            if left == 0 {
                break;
            }
            let take = len.min(left);
            let bits = fp.field(start + len - take, take);
            key = key.checked_shl(take).unwrap_or(0) | bits;
            left -= take;
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(d: Design) -> Vec<u32> {
        d.tables::<u64>()
            .unwrap()
            .iter()
            .map(|t| t.key_bits())
            .collect()
    }

    #[test]
    fn presets_match_the_paper() {
        assert_eq!(sizes(Design::Tables4x16), vec![16; 4]);
        let t10 = sizes(Design::Tables10);
        assert_eq!(t10.len(), 10);
        assert!(t10.iter().all(|&p| p == 25 || p == 26));
        assert_eq!(sizes(Design::Tables16), vec![28; 16]);
        let t20 = sizes(Design::Tables20);
        assert_eq!(t20.len(), 20);
        assert!(t20.iter().all(|&p| (31..=33).contains(&p)));
    }

    #[test]
    fn keys_pack_bits_in_order() {
        let t = &Design::Tables4x16.tables::<u64>().unwrap()[0];
        assert_eq!(t.key(0xABCD_0000_0000_0000, 16), 0xABCD);
        assert_eq!(t.key(0xABCD_0000_0000_0000, 8), 0xAB);
        let t = Table::<u64>::new(&[63, 62, 1, 0]);
        assert_eq!(t.key(0xC000_0000_0000_0002, 4), 0b1110);
        assert_eq!(t.mask(), 0xC000_0000_0000_0003);
        let wide = Table::<u128>::new(&(0..128).rev().collect::<Vec<_>>());
        assert_eq!(wide.key(u128::MAX - 1, 64), u64::MAX);
    }

    #[test]
    fn invalid_designs_are_errors() {
        assert!(Design::Blocks { blocks: 3, k: 3 }.tables::<u64>().is_err());
        assert!(Design::Blocks { blocks: 65, k: 3 }.tables::<u64>().is_err());
        assert!(Design::Blocks { blocks: 40, k: 20 }
            .tables::<u64>()
            .is_err());
        assert!(Design::Tables10.tables::<u128>().is_err());
        assert!("7".parse::<Design>().is_err());
        assert_eq!("4x16".parse::<Design>().unwrap(), Design::Tables4x16);
    }

    #[test]
    fn choice_by_expected_len() {
        assert_eq!(Design::for_expected_len(1_000, 3, 64), Design::Tables4x16);
        assert_eq!(
            Design::for_expected_len(100_000_000, 3, 64),
            Design::Tables10
        );
        assert_eq!(Design::for_expected_len(1 << 34, 3, 64), Design::Tables16);
        assert_eq!(
            Design::for_expected_len(1_000_000, 3, 128),
            Design::Blocks { blocks: 4, k: 3 }
        );
        assert_eq!(
            Design::for_expected_len(10, 0, 64),
            Design::Blocks { blocks: 1, k: 0 }
        );
        assert!(Design::for_expected_len(1_000_000, 10, 64)
            .tables::<u64>()
            .is_ok());
    }
}
