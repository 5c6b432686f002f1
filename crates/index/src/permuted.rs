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
//! # Skewed data
//! When one key value holds a large share of the set (say 30% share a 16-bit block), its bucket
//! would make every query with that key scan that share. A bucket that grows past 2048 slots
//! and 16 times the average is therefore *split*: its slots are indexed again, by a nested
//! directory keyed on `k + 1` blocks of the bits the table does not fix (all the pairs within `k`
//! in the bucket differ only there, so pigeonhole applies again) — but only if that at least
//! halves what a query scans, which it does not for clusters of identical or nearly identical
//! fingerprints. Nested directories split further the same way, at most three levels deep. The
//! "earlier table" rule carries down, so results stay exact and each id still comes once.
//!
//! # Updates
//! Buckets are vectors: insert pushes the slot into one bucket per table; remove swap-removes the
//! slot from its buckets, and the last slot moves into the hole (its bucket entries re-pointed). No
//! tombstones, no compaction; a split bucket stays split when it shrinks. A batch builds every
//! table in one counting pass (in parallel over tables) with exactly sized buckets, which is much
//! faster than pushing one item at a time.

use rayon::prelude::*;

use crate::design::{choose_blocks, split, Design, Table};
use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::hamming::{check_k, directory_bytes, sorted, HammingIndex, Match};
use crate::slots::Slots;

/// Smallest directory width (bits).
const MIN_DIR_BITS: u32 = 4;
/// Largest directory width (bits): 2^20 buckets of 24-byte vector headers per table.
const MAX_DIR_BITS: u32 = 20;
/// The root directory is widened when the items per bucket exceed 2^this.
const GROW_SHIFT: u32 = 6;
/// A bucket is split only past this many slots ...
const SPLIT_MIN: usize = 2048;
/// ... and only if it holds this many times the average bucket.
const SPLIT_FACTOR: usize = 16;
/// Nested directories go at most this deep (each level stores its slots `k + 1` more times).
const MAX_DEPTH: u32 = 3;

/// Directory width for `n` items: about 8 items per bucket.
fn dir_bits_for(n: usize) -> u32 {
    let per_bucket = (n / 8).max(1);
    (usize::BITS - 1 - per_bucket.leading_zeros()).clamp(MIN_DIR_BITS, MAX_DIR_BITS)
}

/// Permuted block tables over fingerprints of type `F`; exact for `k ≤ design.max_k()`.
#[derive(Debug, Clone)]
pub struct PermutedTables<F> {
    design: Design,
    root: Directory<F>,
    slots: Slots<F>,
}

/// One level of tables: the root keys on the design's tables; a split bucket holds a nested one.
#[derive(Debug, Clone)]
struct Directory<F> {
    tables: Vec<Table<F>>,
    /// Bits the members of this directory may differ in (all bits at the root).
    free: Vec<u32>,
    /// Directory width (each table uses `min(key_bits, dir_bits)`).
    dir_bits: u32,
    /// `buckets[t][j]`: slots whose table-`t` key prefix is `j`.
    buckets: Vec<Vec<Bucket<F>>>,
    /// Number of slots held.
    len: usize,
    /// The distance the tables are built for.
    k: u32,
    /// Nesting level: 0 at the root.
    depth: u32,
}

/// The slots of one key prefix.
#[derive(Debug, Clone)]
enum Bucket<F> {
    /// Scanned in full.
    Small(Vec<u32>),
    /// Too large to scan: indexed again on the bits its table does not fix.
    Split(Box<Directory<F>>),
}

// A bucket costs one vector header: the split variant hides in the vector's niche.
const _: () = assert!(std::mem::size_of::<Bucket<u64>>() == std::mem::size_of::<Vec<u32>>());

impl<F: Fingerprint> Default for Bucket<F> {
    fn default() -> Self {
        Bucket::Small(Vec::new())
    }
}

/// One query on its way down the directories: what it looks for, the masks of earlier tables its
/// results must not agree on (those tables report them), and what it found.
struct Probe<'a, F> {
    fp: F,
    k: u32,
    fps: &'a [F],
    ids: &'a [u64],
    exclude: Vec<F>,
    out: Vec<Match>,
}

/// Per table, per bucket: the slots whose key prefix is the bucket's.
type Lists = Vec<Vec<Vec<u32>>>;

/// Sorts `slots` into the buckets of each table (`dir_bits` wide), by counting then placing.
fn bucket_lists<F: Fingerprint>(
    tables: &[Table<F>],
    dir_bits: u32,
    slots: &[u32],
    fps: &[F],
) -> Lists {
    tables
        .par_iter()
        .map(|table| {
            let width = table.key_bits().min(dir_bits);
            let keys: Vec<u32> = slots
                .iter()
                .map(|&s| table.key(fps[s as usize], width) as u32)
                .collect();
            let mut counts = vec![0usize; 1 << width];
            for &key in &keys {
                counts[key as usize] += 1;
            }
            let mut lists: Vec<Vec<u32>> = counts.iter().map(|&c| Vec::with_capacity(c)).collect();
            for (&slot, &key) in slots.iter().zip(&keys) {
                lists[key as usize].push(slot);
            }
            lists
        })
        .collect()
}

impl<F: Fingerprint> Directory<F> {
    /// The root directory, `dir_bits` wide, over `slots` (holding `fps[slot]`).
    fn root(tables: Vec<Table<F>>, k: u32, dir_bits: u32, slots: &[u32], fps: &[F]) -> Self {
        let lists = bucket_lists(&tables, dir_bits, slots, fps);
        let free = (0..F::BITS).rev().collect();
        Directory::from_lists(tables, free, k, dir_bits, 0, lists, fps)
    }

    /// A directory whose buckets hold `lists`; its own large buckets are split in turn.
    fn from_lists(
        tables: Vec<Table<F>>,
        free: Vec<u32>,
        k: u32,
        dir_bits: u32,
        depth: u32,
        lists: Lists,
        fps: &[F],
    ) -> Self {
        let mut dir = Directory {
            tables,
            free,
            dir_bits,
            buckets: Vec::new(),
            len: lists.first().map_or(0, |l| l.iter().map(Vec::len).sum()),
            k,
            depth,
        };
        dir.buckets = lists
            .into_iter()
            .enumerate()
            .map(|(t, lists)| {
                lists
                    .into_iter()
                    .map(|list| dir.bucket_of(t, list, fps))
                    .collect()
            })
            .collect();
        dir
    }

    /// Directory width of table `t`.
    fn width(&self, t: usize) -> u32 {
        self.tables[t].key_bits().min(self.dir_bits)
    }

    /// The bucket index of `fp` in table `t`.
    #[inline]
    fn index(&self, t: usize, fp: F) -> usize {
        self.tables[t].key(fp, self.width(t)) as usize
    }

    /// True if a bucket of table `t` with `len` slots is worth trying to split.
    fn should_split(&self, t: usize, len: usize) -> bool {
        let average = self.len >> self.width(t);
        self.depth < MAX_DEPTH
            && len > SPLIT_MIN
            && len > SPLIT_FACTOR * average.max(1)
            && self.rest(t).len() > self.k as usize
    }

    /// The free bits that table `t`'s directory prefix does not fix.
    fn rest(&self, t: usize) -> Vec<u32> {
        let fixed = &self.tables[t].positions()[..self.width(t) as usize];
        self.free
            .iter()
            .copied()
            .filter(|p| !fixed.contains(p))
            .collect()
    }

    /// Makes a bucket of table `t` from its slots, split if it is large and splitting pays.
    ///
    /// Splitting pays when a query would scan at most half as many slots: the nested tables'
    /// expected bucket size, summed over tables, `Σ |bucket|² / len`, must be at most `len / 2`.
    /// Identical or nearly identical fingerprints share every block, so splitting them would only
    /// copy them into `k + 1` more buckets of the same size; such buckets stay whole.
    fn bucket_of(&self, t: usize, list: Vec<u32>, fps: &[F]) -> Bucket<F> {
        if !self.should_split(t, list.len()) {
            return Bucket::Small(list);
        }
        let rest = self.rest(t);
        let tables: Vec<Table<F>> = choose_blocks(&split(&rest, self.k + 1), 1)
            .iter()
            .map(|set| Table::new(set))
            .collect();
        let dir_bits = dir_bits_for(list.len());
        let lists = bucket_lists(&tables, dir_bits, &list, fps);
        let scanned: usize = lists.iter().flatten().map(|b| b.len() * b.len()).sum();
        if scanned * 2 > list.len() * list.len() {
            return Bucket::Small(list);
        }
        let depth = self.depth + 1;
        let sub = Directory::from_lists(tables, rest, self.k, dir_bits, depth, lists, fps);
        Bucket::Split(Box::new(sub))
    }

    /// Adds `slot` (holding `fp`; `fps` is every stored fingerprint).
    fn insert(&mut self, slot: u32, fp: F, fps: &[F]) {
        self.len += 1;
        for t in 0..self.tables.len() {
            let j = self.index(t, fp);
            let len = match &mut self.buckets[t][j] {
                Bucket::Split(sub) => {
                    sub.insert(slot, fp, fps);
                    continue;
                }
                Bucket::Small(list) => {
                    list.push(slot);
                    list.len()
                }
            };
            // Retried at powers of two only, so a bucket that does not split costs O(1) amortised.
            if len.is_power_of_two() && self.should_split(t, len) {
                let list = match std::mem::take(&mut self.buckets[t][j]) {
                    Bucket::Small(list) => list,
                    split @ Bucket::Split(_) => {
                        self.buckets[t][j] = split;
                        continue;
                    }
                };
                self.buckets[t][j] = self.bucket_of(t, list, fps);
            }
        }
    }

    /// Removes `slot` (holding `fp`).
    fn remove(&mut self, slot: u32, fp: F) {
        self.len -= 1;
        for t in 0..self.tables.len() {
            let j = self.index(t, fp);
            match &mut self.buckets[t][j] {
                Bucket::Split(sub) => sub.remove(slot, fp),
                Bucket::Small(list) => {
                    if let Some(at) = list.iter().position(|&s| s == slot) {
                        list.swap_remove(at);
                    }
                }
            }
        }
    }

    /// Renames slot `from` (holding `fp`) to `to`.
    fn rename(&mut self, fp: F, from: u32, to: u32) {
        for t in 0..self.tables.len() {
            let j = self.index(t, fp);
            match &mut self.buckets[t][j] {
                Bucket::Split(sub) => sub.rename(fp, from, to),
                Bucket::Small(list) => {
                    if let Some(entry) = list.iter_mut().find(|s| **s == from) {
                        *entry = to;
                    }
                }
            }
        }
    }

    /// Adds every match of the probe found through this directory. Slots reaching here agree with
    /// the query on `require`.
    fn query(&self, probe: &mut Probe<'_, F>, require: F) {
        for (t, table) in self.tables.iter().enumerate() {
            let require = require.or(table.mask());
            match &self.buckets[t][self.index(t, probe.fp)] {
                Bucket::Small(list) => {
                    for &slot in list {
                        let diff = probe.fps[slot as usize].xor(probe.fp);
                        if diff.and(require) != F::ZERO {
                            continue;
                        }
                        let distance = diff.ones();
                        if distance > probe.k {
                            continue;
                        }
                        let seen = |m: &F| diff.and(*m) == F::ZERO;
                        if self.tables[..t].iter().any(|e| seen(&e.mask()))
                            || probe.exclude.iter().any(seen)
                        {
                            continue;
                        }
                        probe.out.push(Match {
                            distance,
                            id: probe.ids[slot as usize],
                        });
                    }
                }
                Bucket::Split(sub) => {
                    let depth = probe.exclude.len();
                    probe
                        .exclude
                        .extend(self.tables[..t].iter().map(Table::mask));
                    sub.query(probe, require);
                    probe.exclude.truncate(depth);
                }
            }
        }
    }

    /// Number of slots a query for `fp` scans.
    fn candidates(&self, fp: F) -> usize {
        (0..self.tables.len())
            .map(|t| match &self.buckets[t][self.index(t, fp)] {
                Bucket::Small(list) => list.len(),
                Bucket::Split(sub) => sub.candidates(fp),
            })
            .sum()
    }

    /// Heap bytes held, counting capacity.
    fn memory_bytes(&self) -> usize {
        let buckets = directory_bytes(&self.buckets, |b| match b {
            Bucket::Small(list) => list.capacity() * 4,
            Bucket::Split(sub) => std::mem::size_of::<Directory<F>>() + sub.memory_bytes(),
        });
        let tables: usize = self
            .tables
            .iter()
            .map(|t| std::mem::size_of::<Table<F>>() + t.key_bits() as usize * 12)
            .sum();
        buckets + tables + self.free.capacity() * 4
    }
}

impl<F: Fingerprint> PermutedTables<F> {
    /// An empty index with the tables of `design`. Fails if the design is invalid for `F`.
    pub fn new(design: Design) -> Result<Self> {
        Self::with_capacity(design, 0)
    }

    /// An empty index sized for about `n` fingerprints (the directory still grows past that).
    pub fn with_capacity(design: Design, n: usize) -> Result<Self> {
        let tables = design.tables::<F>()?;
        let root = Directory::root(tables, design.max_k(), dir_bits_for(n), &[], &[]);
        Ok(PermutedTables {
            design,
            root,
            slots: Slots::default(),
        })
    }

    /// Builds an index from a batch, choosing the design with [`Design::for_expected_len`].
    ///
    /// ```
    /// use neardup_index::{HammingIndex, PermutedTables};
    /// let index = PermutedTables::from_batch(&[(1, 0u64), (2, 0b11), (3, !0)], 3).unwrap();
    /// assert_eq!(index.query(0b1, 3).unwrap().len(), 2);
    /// ```
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
        self.root.candidates(fp)
    }

    /// Rebuilds every table from the stored fingerprints, never narrowing the directory.
    fn rebuild(&mut self) {
        let slots: Vec<u32> = (0..self.slots.len() as u32).collect();
        let tables = std::mem::take(&mut self.root.tables);
        let dir_bits = dir_bits_for(slots.len()).max(self.root.dir_bits);
        let k = self.design.max_k();
        self.root = Directory::root(tables, k, dir_bits, &slots, &self.slots.fps);
    }

    /// Widens the root directory when buckets have grown long and a wider one would split them.
    fn maybe_grow(&mut self) {
        let widest = self
            .root
            .tables
            .iter()
            .map(Table::key_bits)
            .max()
            .unwrap_or(0);
        let crowded = self.len() >> (self.root.dir_bits + GROW_SHIFT) > 0;
        if crowded && dir_bits_for(self.len()) > self.root.dir_bits && self.root.dir_bits < widest {
            self.rebuild();
        }
    }
}

impl<F: Fingerprint> HammingIndex<F> for PermutedTables<F> {
    fn insert(&mut self, id: u64, fp: F) -> Result<()> {
        let slot = self.slots.push(id, fp)?;
        self.root.insert(slot, fp, &self.slots.fps);
        self.maybe_grow();
        Ok(())
    }

    fn insert_batch(&mut self, items: &[(u64, F)]) -> Result<()> {
        match self.slots.extend_batch(items)? {
            Some(new) => {
                for slot in new {
                    let fp = self.slots.fps[slot as usize];
                    self.root.insert(slot, fp, &self.slots.fps);
                }
                self.maybe_grow();
            }
            None => self.rebuild(),
        }
        Ok(())
    }

    fn remove(&mut self, id: u64) -> Option<F> {
        let removed = self.slots.remove(id)?;
        self.root.remove(removed.slot, removed.fp);
        if let Some(last) = removed.moved_from {
            let moved = self.slots.fps[removed.slot as usize];
            self.root.rename(moved, last, removed.slot);
        }
        Some(removed.fp)
    }

    fn get(&self, id: u64) -> Option<F> {
        self.slots.find(id).map(|s| self.slots.fps[s as usize])
    }

    fn query(&self, fp: F, k: u32) -> Result<Vec<Match>> {
        check_k(k, self.design.max_k())?;
        let mut probe = Probe {
            fp,
            k,
            fps: &self.slots.fps,
            ids: &self.slots.ids,
            exclude: Vec::new(),
            out: Vec::new(),
        };
        self.root.query(&mut probe, F::ZERO);
        Ok(sorted(probe.out))
    }

    fn max_k(&self) -> u32 {
        self.design.max_k()
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn memory_bytes(&self) -> usize {
        self.slots.memory_bytes() + self.root.memory_bytes()
    }
}
