//! Batch all-pairs within a memory budget: [`all_pairs`](crate::all_pairs)' answer (every pair
//! of positions within `k`, once, sorted by `(a, b)`) for more fingerprints than memory holds.
//!
//! # Passes
//! 1. [`ExternalPairs::push`] holds the fingerprints in memory while the whole in-memory search
//!    fits the budget; beyond, they are written, in input order, to a temporary file.
//! 2. In memory: the search of [`all_pairs`](crate::all_pairs), its pairs handed over in batches.
//!    Spilled: for each table of the [`Design`] in turn, the fingerprint file is read once and
//!    `(fingerprint, position)` records are partitioned by the top bits of the table's key into
//!    up to 256 bucket files, so that a bucket fits the budget. Every pair the table reports
//!    agrees on its whole key, so both members are in one bucket: each bucket is loaded (buckets
//!    in parallel) and searched in memory for that one table, with the in-memory search's rule
//!    that a pair agreeing on an earlier table's mask is that table's (so each pair is found
//!    once, and identical fingerprints, which agree on every mask, are reported by table 0).
//!    A bucket still too large is partitioned again on the next key bits. One whose records all
//!    share the key bits is, for components, first collapsed to its distinct fingerprints
//!    (each repeat linked to the first of its value: a family of identical fingerprints becomes
//!    one record); what is still too large is searched a block at a time: each block in memory,
//!    then against every later record read from the file (quadratic in that bucket's distinct
//!    values, or, when pairs are listed, in its records, whose pairs are the output anyway).
//! 3. Pairs are gathered up to a share of the budget, sorted and written as runs, and read back
//!    merged ([`crate::runs`]).
//!
//! For components, each pair found is merged into one union-find of every position
//! ([`ExternalPairs::components`]), or, when that does not fit its share ([`union_find_fits`]),
//! each task keeps a union-find of its own records and writes only the links joining two of its
//! sets to sorted runs ([`ExternalPairs::links`]), whose components are found on disk
//! ([`crate::FoundLinks::components`]).
//!
//! Memory: the budget is split into the search's half (the fingerprints held, or the buckets
//! being searched: about `7 × (size of F + 8)` bytes a record, per thread) and the pairs'
//! eighth; the rest is left to the caller and the program. Temporary files are anonymous
//! (unlinked when made): nothing is left behind, whatever ends the process. Records are not
//! compressed: a fingerprint is random bits.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

use crate::allpairs::{Filter, Groups, Pair, Search};
use crate::cluster::UnionFind;
use crate::design::{Design, Table};
use crate::error::checked_len;
use crate::fingerprint::Fingerprint;
use crate::hamming::check_k;
use crate::linked::FoundLinks;
use crate::runs::{PairRuns, SortedPairs, SpillDir, SpillError, IO_BUFFER};
use crate::sink::{search_in_memory, Destination, Sink};

/// Most key bits a partition pass splits on (256 bucket files).
const MAX_SPLIT_BITS: u32 = 8;
/// Fewest records a bucket may hold in memory, however small the budget.
const MIN_BUCKET: usize = 16;

/// Fingerprints gathered for an all-pairs search within `memory` bytes, spilling to a folder.
///
/// ```
/// use neardup_index::{all_pairs, Design, ExternalPairs};
/// let fps: Vec<u64> = (0..2000u64).map(|i| (i % 700).wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
/// let dir = std::env::temp_dir();
/// let mut search = ExternalPairs::new(1 << 12, &dir); // a tiny budget: everything spills
/// for &fp in &fps {
///     search.push(fp).unwrap();
/// }
/// let found = search.finish(3, Design::Tables4x16).unwrap();
/// let pairs: Vec<_> = found.map(Result::unwrap).collect();
/// assert_eq!(pairs, all_pairs(&fps, 3, Design::Tables4x16).unwrap());
/// ```
pub struct ExternalPairs<F> {
    memory: u64,
    spill: SpillDir,
    /// The fingerprints, while the in-memory search fits the budget.
    held: Vec<F>,
    /// How many may be held.
    held_cap: usize,
    /// Every fingerprint in input order, once they do not.
    file: Option<BufWriter<File>>,
    len: usize,
}

/// The pairs found by [`ExternalPairs::finish`], ascending by `(a, b)`; an item fails if a
/// sorted run cannot be read back.
pub struct FoundPairs {
    pairs: SortedPairs,
    spill: SpillDir,
}

/// The components found by [`ExternalPairs::components`].
#[derive(Debug)]
pub struct FoundComponents {
    /// The components of the positions.
    pub components: UnionFind,
    /// Bytes written to the temporary folder (fingerprints and buckets; removed since).
    pub spilled_bytes: u64,
}

impl FoundPairs {
    /// Bytes written to the temporary folder so far (fingerprints, buckets and runs).
    pub fn spilled_bytes(&self) -> u64 {
        self.spill.written()
    }
}

impl Iterator for FoundPairs {
    type Item = Result<Pair, SpillError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.pairs.next()
    }
}

impl<F: Fingerprint> ExternalPairs<F> {
    /// An empty search that may hold about `memory` bytes and writes what does not fit to
    /// temporary files in `dir`.
    pub fn new(memory: u64, dir: &Path) -> Self {
        let per_fp = in_memory_bytes::<F>() as u64;
        let held_cap = usize::try_from(search_share(memory) / per_fp).unwrap_or(usize::MAX);
        ExternalPairs {
            memory,
            spill: SpillDir::new(dir),
            held: Vec::new(),
            held_cap,
            file: None,
            len: 0,
        }
    }

    /// Number of fingerprints pushed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before any fingerprint is pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes written to the temporary folder so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.spill.written()
    }

    /// Adds the fingerprint at the next position (0, 1, ...).
    pub fn push(&mut self, fp: F) -> Result<(), SpillError> {
        checked_len(self.len + 1)?;
        self.len += 1;
        if self.file.is_none() && self.held.len() < self.held_cap {
            self.held.push(fp);
            return Ok(());
        }
        if self.file.is_none() {
            let file = BufWriter::with_capacity(IO_BUFFER, self.spill.file()?);
            let held = std::mem::take(&mut self.held);
            let out = self.file.insert(file);
            for &held_fp in &held {
                write_fp(out, held_fp)
                    .map_err(|e| self.spill.io("cannot write fingerprints", e))?;
            }
        }
        let out = self.file.as_mut().ok_or_else(|| {
            self.spill
                .io("no fingerprint file", std::io::ErrorKind::NotFound.into())
        })?;
        write_fp(out, fp).map_err(|e| self.spill.io("cannot write fingerprints", e))
    }

    /// Every pair within `k` (exact for `k ≤ design.max_k()`, else [`crate::IndexError::KTooLarge`]),
    /// each once, ascending by `(a, b)`: what [`all_pairs`](crate::all_pairs) returns.
    pub fn finish(self, k: u32, design: Design) -> Result<FoundPairs, SpillError> {
        let runs = PairRuns::new(self.spill.clone(), self.memory / 8);
        let spill = self.spill.clone();
        self.search(k, design, &Destination::Runs(&runs))?;
        Ok(FoundPairs {
            pairs: runs.into_sorted()?,
            spill,
        })
    }

    /// The connected components of "within `k`" over the positions pushed: what
    /// [`near_components`](crate::near_components) returns, by the same search as
    /// [`ExternalPairs::finish`] (so within the same memory), without listing a pair. Each pair
    /// found is merged at once, and the positions of one fingerprint, or of two fingerprints
    /// within `k`, are linked by one merge each, not a pair each: linear in the positions
    /// however large a family is. Beyond the search, it holds 5 bytes a position.
    pub fn components(self, k: u32, design: Design) -> Result<FoundComponents, SpillError> {
        let merged = Mutex::new(UnionFind::new(self.len)?);
        let spill = self.spill.clone();
        self.search(k, design, &Destination::Components(&merged))?;
        Ok(FoundComponents {
            components: merged.into_inner().unwrap_or_else(PoisonError::into_inner),
            spilled_bytes: spill.written(),
        })
    }

    /// The links of the components of "within `k`" over the positions pushed, to sorted runs:
    /// the search of [`ExternalPairs::components`], but each task (a bucket, a table searched in
    /// memory) merges what it finds into a union-find of its own records and writes only the
    /// links that join two of its sets (at most one fewer than the records it saw: a family of m
    /// values, identical or near, gives fewer than m links, not m²). Nothing is held a position;
    /// [`FoundLinks::components`] finds the components from the links within the budget.
    pub fn links(self, k: u32, design: Design) -> Result<FoundLinks, SpillError> {
        let links = FoundLinks::new(self.spill.clone(), self.memory);
        self.search(k, design, &Destination::Links(links.runs()))?;
        Ok(links)
    }

    /// Runs the search of `design`, handing what it finds to `destination`.
    fn search(
        self,
        k: u32,
        design: Design,
        destination: &Destination<'_>,
    ) -> Result<(), SpillError> {
        check_k(k, design.max_k())?;
        let tables = design.tables::<F>()?;
        match self.file {
            None => {
                let groups = Groups::from_positions(
                    self.held
                        .iter()
                        .enumerate()
                        .map(|(i, &fp)| (fp, i as u32))
                        .collect(),
                );
                drop(self.held);
                search_in_memory(&groups, k, design, destination)
            }
            Some(file) => {
                self.spill.count((self.len * fp_bytes::<F>()) as u64);
                let file = file
                    .into_inner()
                    .map_err(|e| self.spill.io("cannot write fingerprints", e.into_error()))?;
                let masks: Vec<F> = tables.iter().map(Table::mask).collect();
                let spilled = Spilled {
                    spill: &self.spill,
                    destination,
                    k,
                    masks: &masks,
                    bucket_cap: bucket_cap::<F>(self.memory),
                };
                // The bits the first partition of a table splits on when its key has as many.
                let bits = split_bits(self.len, spilled.bucket_cap, u32::MAX);
                passes(&tables, bits)
                    .into_iter()
                    .try_for_each(|pass| spilled.pass(&file, self.len, &tables, pass))
            }
        }
    }
}

/// Bytes a position takes in a [`UnionFind`] (a parent and a rank).
const UNION_FIND_BYTES: u64 = 5;

/// True when the union-find of [`ExternalPairs::components`] over `positions` (5 bytes a
/// position) fits its share of a budget of `memory` bytes: an eighth, the share the pairs of
/// [`ExternalPairs::finish`] take. Beyond, [`ExternalPairs::links`] and
/// [`FoundLinks::components`] find the components within the budget.
pub fn union_find_fits(positions: usize, memory: u64) -> bool {
    positions as u64 * UNION_FIND_BYTES <= memory / 8
}

/// The search's share of a budget of `memory` bytes.
fn search_share(memory: u64) -> u64 {
    memory / 2
}

/// Bytes a fingerprint takes in the in-memory search of every table (the groups and their sort,
/// and each thread's table sorted).
fn in_memory_bytes<F>() -> usize {
    (3 + 3 * rayon::current_num_threads()) * (std::mem::size_of::<F>() + 8)
}

/// Records of one bucket searched in memory, per thread.
fn bucket_cap<F>(memory: u64) -> usize {
    let per_record = (7 * (std::mem::size_of::<F>() + 8) * rayon::current_num_threads()) as u64;
    usize::try_from(search_share(memory) / per_record)
        .unwrap_or(usize::MAX)
        .max(MIN_BUCKET)
}

/// A bucket file of `(fingerprint, position)` records.
struct Bucket {
    file: File,
    len: usize,
}

/// Where records come from: the fingerprint file (positions are line numbers) or a bucket.
enum Source<'a> {
    Fingerprints(&'a File, usize),
    Bucket(&'a Bucket),
}

/// The spilled search of one design.
struct Spilled<'a, F> {
    spill: &'a SpillDir,
    destination: &'a Destination<'a>,
    k: u32,
    masks: &'a [F],
    /// Records a bucket may hold to be searched in memory.
    bucket_cap: usize,
}

impl<F: Fingerprint> Spilled<'_, F> {
    /// Finds the pairs the tables `pass` (indices into `tables`, whose first key bits a
    /// partition splits on are the same) report among the `len` fingerprints of `file`: the
    /// file is read and partitioned once for all of them, and each bucket that fits is read
    /// once and searched for each table.
    fn pass(
        &self,
        file: &File,
        len: usize,
        tables: &[Table<F>],
        pass: Range<usize>,
    ) -> Result<(), SpillError> {
        let first = &tables[pass.start];
        let (buckets, used) = self.partition(Source::Fingerprints(file, len), len, first, 0)?;
        buckets.into_par_iter().try_for_each(|bucket| {
            if bucket.len <= self.bucket_cap {
                let groups = Groups::from_positions(self.read_all(&bucket)?);
                drop(bucket);
                return pass
                    .clone()
                    .try_for_each(|t| self.solve(&groups, t, &tables[t]));
            }
            pass.clone()
                .try_for_each(|t| self.bucket(&bucket, used, t, &tables[t]))
        })
    }

    /// Searches one bucket whose records agree on the first `used` key bits of `table`.
    fn bucket(
        &self,
        bucket: &Bucket,
        used: u32,
        t: usize,
        table: &Table<F>,
    ) -> Result<(), SpillError> {
        if bucket.len <= self.bucket_cap {
            let groups = Groups::from_positions(self.read_all(bucket)?);
            return self.solve(&groups, t, table);
        }
        if used < key_width(table) {
            let (buckets, deeper) =
                self.partition(Source::Bucket(bucket), bucket.len, table, used)?;
            return buckets
                .iter()
                .try_for_each(|b| self.bucket(b, deeper, t, table));
        }
        if self.destination.links_only() {
            let distinct = self.distinct(bucket)?;
            if distinct.len <= self.bucket_cap {
                let groups = Groups::from_positions(self.read_all(&distinct)?);
                return self.solve(&groups, t, table);
            }
            return self.blocks(&distinct, t, table);
        }
        self.blocks(bucket, t, table)
    }

    /// For components only: the records of `bucket` with each fingerprint once, at the first
    /// position it has there, every repeat linked to that first one. A family of identical
    /// fingerprints beyond memory becomes one record, so that it is neither compared record by
    /// record in [`Spilled::blocks`] (quadratic) nor searched again by every table.
    fn distinct(&self, bucket: &Bucket) -> Result<Bucket, SpillError> {
        let write_error = |e| self.spill.io("cannot write a bucket", e);
        let mut out = BufWriter::with_capacity(IO_BUFFER, self.spill.file()?);
        let mut sink = Sink::new(self.destination);
        let len = self.collapse(bucket, 0, &mut out, &mut sink)?;
        sink.finish()?;
        self.spill.count((len * (fp_bytes::<F>() + 4)) as u64);
        let file = out.into_inner().map_err(|e| write_error(e.into_error()))?;
        Ok(Bucket { file, len })
    }

    /// Writes to `out` each fingerprint of `bucket` once with its first position, links each
    /// repeat to it through `sink`, and returns how many it wrote. The distinct fingerprints are
    /// held while a bucket's worth of them fits; beyond, the bucket is split by the bits of a
    /// hash of the whole value after the first `used` (identical values stay together) and each
    /// part collapsed in turn.
    fn collapse(
        &self,
        bucket: &Bucket,
        used: u32,
        out: &mut BufWriter<File>,
        sink: &mut Sink<'_>,
    ) -> Result<usize, SpillError> {
        let mut first: HashMap<F, u32> = HashMap::new();
        let mut fits = true;
        self.for_each_record(Source::Bucket(bucket), |fp, position| {
            match first.get(&fp) {
                Some(&at) => sink.near(&[at], &[position], 0),
                None if fits && first.len() < self.bucket_cap => {
                    first.insert(fp, position);
                }
                None => fits = false,
            }
            Ok(())
        })
        .map_err(|e| self.spill.io("cannot read a bucket", e))?;
        if fits || used >= u64::BITS {
            // (All 64 hash bits used and still too many values: only colliding hashes of
            // 128-bit values can do that; they are written as they are, a correct search.)
            let mut records: Vec<(F, u32)> = if fits {
                first.into_iter().collect()
            } else {
                self.read_all(bucket)?
            };
            records.sort_unstable_by_key(|&(_, position)| position);
            for &(fp, position) in &records {
                write_fp(out, fp)
                    .and_then(|()| out.write_all(&position.to_le_bytes()))
                    .map_err(|e| self.spill.io("cannot write a bucket", e))?;
            }
            return Ok(records.len());
        }
        drop(first);
        let (parts, deeper) = self.partition_by(
            Source::Bucket(bucket),
            bucket.len,
            u64::BITS,
            used,
            value_hash,
        )?;
        parts.iter().try_fold(0, |written, part| {
            Ok(written + self.collapse(part, deeper, out, sink)?)
        })
    }

    /// Splits the records of `source` by the key bits of `table` after the first `used`, into
    /// buckets expected to be half full; returns them and the key bits they agree on.
    fn partition(
        &self,
        source: Source<'_>,
        len: usize,
        table: &Table<F>,
        used: u32,
    ) -> Result<(Vec<Bucket>, u32), SpillError> {
        let width = key_width(table);
        self.partition_by(source, len, width, used, |fp| table.key(fp, width))
    }

    /// Splits the records of `source` by the bits of `key` (a key of `width` bits) after the
    /// first `used`, into buckets expected to be half full; returns them and the key bits they
    /// agree on.
    fn partition_by(
        &self,
        source: Source<'_>,
        len: usize,
        width: u32,
        used: u32,
        key: impl Fn(F) -> u64,
    ) -> Result<(Vec<Bucket>, u32), SpillError> {
        let bits = split_bits(len, self.bucket_cap, width - used);
        let shift = width - used - bits;
        let mask = (1u64 << bits) - 1;
        let mut outs = (0..1usize << bits)
            .map(|_| {
                Ok((
                    BufWriter::with_capacity(IO_BUFFER, self.spill.file()?),
                    0usize,
                ))
            })
            .collect::<Result<Vec<_>, SpillError>>()?;
        let write_error = |e| self.spill.io("cannot write a bucket", e);
        self.for_each_record(source, |fp, position| {
            let (out, count) = &mut outs[((key(fp) >> shift) & mask) as usize];
            *count += 1;
            write_fp(out, fp)?;
            out.write_all(&position.to_le_bytes())
        })
        .map_err(write_error)?;
        self.spill.count((len * (fp_bytes::<F>() + 4)) as u64);
        let buckets = outs
            .into_iter()
            .filter(|(_, count)| *count > 0)
            .map(|(out, len)| {
                let file = out.into_inner().map_err(|e| write_error(e.into_error()))?;
                Ok(Bucket { file, len })
            })
            .collect::<Result<Vec<_>, SpillError>>()?;
        Ok((buckets, used + bits))
    }

    /// Hands every record of `source` to `f`, in file order.
    fn for_each_record(
        &self,
        source: Source<'_>,
        mut f: impl FnMut(F, u32) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let (file, len, with_positions) = match source {
            Source::Fingerprints(file, len) => (file, len, false),
            Source::Bucket(bucket) => (&bucket.file, bucket.len, true),
        };
        let mut input = reader_at(file, 0)?;
        for i in 0..len {
            let fp = read_fp(&mut input)?;
            let position = if with_positions {
                read_u32(&mut input)?
            } else {
                i as u32
            };
            f(fp, position)?;
        }
        Ok(())
    }

    /// Every record of `bucket`.
    fn read_all(&self, bucket: &Bucket) -> Result<Vec<(F, u32)>, SpillError> {
        let mut records = Vec::with_capacity(bucket.len);
        self.for_each_record(Source::Bucket(bucket), |fp, position| {
            records.push((fp, position));
            Ok(())
        })
        .map_err(|e| self.spill.io("cannot read a bucket", e))?;
        Ok(records)
    }

    /// The pairs table `t` reports among the records of `groups` (which may share all of its
    /// key or not).
    fn solve(&self, groups: &Groups<F>, t: usize, table: &Table<F>) -> Result<(), SpillError> {
        let mut sink = Sink::new(self.destination);
        if t == 0 {
            sink.identical(groups);
        }
        let search = Search {
            vals: &groups.values,
            k: self.k,
            links_only: self.destination.links_only(),
        };
        let all: Vec<u32> = (0..groups.values.len() as u32).collect();
        let free: Vec<u32> = (0..F::BITS).rev().collect();
        let filter = Filter {
            require: Vec::new(),
            exclude: self.masks[..t].to_vec(),
        };
        search.table(&all, table, &free, &filter, &mut |u, v, d| {
            sink.near(groups.members(u), groups.members(v), d);
        });
        sink.finish()
    }

    /// Searches a bucket too large for memory whose records share every key bit a partition
    /// can use: a block at a time, each searched in memory and then compared with every record
    /// after it in the file.
    fn blocks(&self, bucket: &Bucket, t: usize, table: &Table<F>) -> Result<(), SpillError> {
        let block = (self.bucket_cap / 2).max(MIN_BUCKET / 2);
        let record_bytes = (fp_bytes::<F>() + 4) as u64;
        let filter = Filter {
            require: vec![table.mask()],
            exclude: self.masks[..t].to_vec(),
        };
        let read_error = |e| self.spill.io("cannot read a bucket", e);
        let mut start = 0;
        while start < bucket.len {
            let end = (start + block).min(bucket.len);
            let mut input =
                reader_at(&bucket.file, start as u64 * record_bytes).map_err(read_error)?;
            let mut records = Vec::with_capacity(end - start);
            for _ in start..end {
                records.push((
                    read_fp(&mut input).map_err(read_error)?,
                    read_u32(&mut input).map_err(read_error)?,
                ));
            }
            let mut sink = Sink::new(self.destination);
            for _ in end..bucket.len {
                let fp: F = read_fp(&mut input).map_err(read_error)?;
                let position = read_u32(&mut input).map_err(read_error)?;
                for &(other, other_position) in &records {
                    let diff = fp.xor(other);
                    let distance = diff.ones();
                    if distance <= self.k && filter.accepts(diff) {
                        sink.near(&[position], &[other_position], distance);
                    }
                }
            }
            sink.finish()?;
            self.solve(&Groups::from_positions(records), t, table)?;
            start = end;
        }
        Ok(())
    }
}

/// A hash of a whole fingerprint, its bits mixed (SplitMix64's finalizer, a bijection of 64-bit
/// values): the key that splits records of one table key into parts of fewer distinct values.
fn value_hash<F: Fingerprint>(fp: F) -> u64 {
    let mut x = fp.field(0, 64);
    if F::BITS > 64 {
        x ^= fp.field(64, 64).rotate_left(32);
    }
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Key bits a partition of `len` records splits on, at most `width`: buckets expected half
/// full at `bucket_cap` records.
fn split_bits(len: usize, bucket_cap: usize, width: u32) -> u32 {
    let wanted = (2 * len).div_ceil(bucket_cap).max(2);
    (usize::BITS - (wanted - 1).leading_zeros())
        .clamp(1, MAX_SPLIT_BITS)
        .min(width)
}

/// The tables in passes: runs of consecutive tables whose first `bits` key positions are the
/// same (a design's tables on combinations of blocks, in order, share their first block), so
/// that one partition of the fingerprints on those bits serves them all (84 tables of 3 of 9
/// blocks in 7 passes). A table with fewer key bits is a pass of its own.
fn passes<F: Fingerprint>(tables: &[Table<F>], bits: u32) -> Vec<Range<usize>> {
    let mut passes: Vec<Range<usize>> = Vec::new();
    for (t, table) in tables.iter().enumerate() {
        let prefix = table.positions().get(..bits as usize);
        match passes.last_mut() {
            Some(pass)
                if prefix.is_some()
                    && prefix == tables[pass.start].positions().get(..bits as usize) =>
            {
                pass.end = t + 1
            }
            _ => passes.push(t..t + 1),
        }
    }
    passes
}

/// Key bits a partition can split on: the table's key, cut to 64 bits.
fn key_width<F: Fingerprint>(table: &Table<F>) -> u32 {
    table.key_bits().min(64)
}

/// Bytes of a fingerprint in a file.
fn fp_bytes<F: Fingerprint>() -> usize {
    F::BITS as usize / 8
}

/// A buffered reader of `file` from byte `offset` (the file's offset is shared with its other
/// handles: one reader at a time).
fn reader_at(file: &File, offset: u64) -> std::io::Result<BufReader<File>> {
    let mut file = file.try_clone()?;
    file.seek(SeekFrom::Start(offset))?;
    Ok(BufReader::with_capacity(IO_BUFFER, file))
}

/// Writes `fp` little-endian, low 64 bits first.
fn write_fp<F: Fingerprint>(out: &mut impl Write, fp: F) -> std::io::Result<()> {
    out.write_all(&fp.field(0, 64).to_le_bytes())?;
    if F::BITS == 128 {
        out.write_all(&fp.field(64, 64).to_le_bytes())?;
    }
    Ok(())
}

/// Reads a fingerprint written by [`write_fp`].
fn read_fp<F: Fingerprint>(input: &mut impl Read) -> std::io::Result<F> {
    let mut word = [0u8; 8];
    input.read_exact(&mut word)?;
    let mut value = u128::from(u64::from_le_bytes(word));
    if F::BITS == 128 {
        input.read_exact(&mut word)?;
        value |= u128::from(u64::from_le_bytes(word)) << 64;
    }
    Ok(F::from_u128(value))
}

/// Reads a little-endian `u32`.
fn read_u32(input: &mut impl Read) -> std::io::Result<u32> {
    let mut word = [0u8; 4];
    input.read_exact(&mut word)?;
    Ok(u32::from_le_bytes(word))
}
