//! [`SetStore`]: the shingle sets verification reads, held in memory while they fit their share
//! of the [`Budget`](crate::Budget) and written to a temporary file beyond it, read back
//! through a cache of bounded size.
//!
//! Each set's size and [`BucketCounts`] (a quarter of a byte a shingle) stay in memory
//! whatever is spilled, while the counts fit half of the store's share: most pairs
//! verification sees fail on them alone (template pages close in SimHash, under the threshold),
//! so a set is read back only for a pair that may pass. Sets stored once the counts' half is
//! full have no counts (a bound of nothing): a pair with one of them is verified on the sets
//! read back, the same decision, more reads.
//!
//! Shingle hashes are uniform 64-bit values: sorted, their gaps still take about 64 − log2(n)
//! bits each, so neither delta coding nor zstd makes them much smaller. They are stored as they
//! are, 8 bytes a shingle, and the file is read at the offsets of the sets a verification needs.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;
use neardup_core::measure::{intersection_bound, BucketCounts, FeatureSet};
use tempfile::NamedTempFile;

use crate::budget::spill_file;
use crate::error::DedupError;
use crate::ranked::RankedPositions;

/// Bytes a set read back holds in the cache, counted high: 8 a shingle, and one more for the
/// allocator's share of sets freed and made all the time (when the cache also held each set's
/// bucket counts, counting only what the sets held left the peak 7% above a 700 MiB budget on
/// the 1 GB corpus; with this count, the peaks measured at 2 GiB were 1.34 GB for the 1 GB
/// corpus and 1.86 GB for the 4 GB one).
fn cached_bytes(set: &FeatureSet) -> usize {
    set.len() * 9 + 128
}

/// What is known of a stored set without reading it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Summary<'a> {
    /// Shingles in the set.
    pub(crate) len: usize,
    /// Its bucket counts ([`BucketCounts::as_bytes`]).
    pub(crate) counts: &'a [u8],
}

impl Summary<'_> {
    /// An upper bound on the shingles this set shares with `other`'s (exact as a bound).
    pub(crate) fn intersection_bound(&self, other: &Summary<'_>) -> usize {
        intersection_bound(self.counts, other.counts)
    }
}

/// Where one stored set ends, in the sequence of every stored set's shingles and of every
/// stored set's bucket counts: a set starts where the one before it ends (16 bytes a set; its
/// place, length and counts follow from its own end and the one before).
#[derive(Debug, Clone, Copy, Default)]
struct End {
    shingles: u64,
    counts: u64,
}

/// Where one stored set lies, read from its [`End`] and the one before.
#[derive(Debug, Clone, Copy)]
struct Span {
    /// Offset in shingles, in memory or in the file.
    offset: u64,
    len: u32,
    on_disk: bool,
    /// Where its bucket counts start in the store's counts, and how many there are.
    counts_at: u64,
    counts_len: u32,
}

/// The spill file and its writer.
struct Spill {
    file: NamedTempFile,
    writer: Option<BufWriter<File>>,
    /// Shingles written.
    written: u64,
}

/// Shingle sets by document position, appended in ascending order of position.
pub(crate) struct SetStore {
    /// The positions stored, each one's rank its set's index in `ends` (a bit a document up to
    /// the last stored: verification looks up two sets a pair, one cache line each).
    slots: RankedPositions,
    ends: Vec<End>,
    /// The index in `ends` of the first set written to the file (`usize::MAX` until one is):
    /// the sets before it are in `memory`.
    first_on_disk: usize,
    memory: Vec<u64>,
    /// Shingles `memory` may hold before sets go to the file.
    memory_limit: usize,
    /// Every set's bucket counts, one after the other (see [`Span::counts_at`]).
    counts: Vec<u8>,
    /// Bytes `counts` may hold; sets stored beyond it have none.
    counts_limit: usize,
    /// The bytes of sets the store may hold (`memory`, the counts and the cache together).
    share: usize,
    spill_dir: std::path::PathBuf,
    spill: Option<Spill>,
    cache: Mutex<Cache>,
}

/// The most recently used sets, up to a number of bytes.
struct Cache {
    sets: LruCache<u32, Arc<FeatureSet>>,
    bytes: usize,
    limit: usize,
}

impl SetStore {
    /// A store for the sets of `expected` documents, the last at position `last`, that holds
    /// up to `bytes` of sets in memory and spills the rest to a file in `spill_dir`. Of
    /// `bytes`, where each set lies comes first (16 bytes a set, and a bit a document up to
    /// `last`, reserved at once: growing by doubling would hold up to twice as much); of the
    /// rest a quarter is for written sets, at most half for their bucket counts, and the cache
    /// of sets read back gets what they leave, at least an eighth. The cache is the larger
    /// share: the decision reads every set through it, and on the 1 GB corpus with a budget a
    /// third of its sets' size, verification took 90 s with the shares the other way round.
    pub(crate) fn new(bytes: u64, expected: usize, last: u32, spill_dir: &Path) -> Self {
        let slots = RankedPositions::with_end(last.saturating_add(1));
        let ends = Vec::with_capacity(expected);
        let places = slots.held_bytes() + (ends.capacity() * std::mem::size_of::<End>()) as u64;
        let bytes = bytes.saturating_sub(places);
        let quarter = usize::try_from(bytes / 4).unwrap_or(usize::MAX);
        let memory_limit = quarter / 8;
        SetStore {
            slots,
            ends,
            first_on_disk: usize::MAX,
            // Reserved once: growing by doubling would hold up to twice the share, and three
            // times while it moves. Pages never written are never resident.
            memory: Vec::with_capacity(memory_limit),
            memory_limit,
            // Reserved once, as `memory`.
            counts: Vec::with_capacity(2 * quarter),
            counts_limit: 2 * quarter,
            share: usize::try_from(bytes).unwrap_or(usize::MAX),
            spill_dir: spill_dir.to_path_buf(),
            spill: None,
            cache: Mutex::new(Cache {
                sets: LruCache::unbounded(),
                bytes: 0,
                limit: quarter * 3,
            }),
        }
    }

    /// Stores the set of the document at `position` (greater than any stored before).
    pub(crate) fn push(&mut self, position: u32, set: &FeatureSet) -> Result<(), DedupError> {
        if !self.slots.push(position) {
            return Err(DedupError::MissingData(format!(
                "shingle sets came out of order (document {position})"
            )));
        }
        let shingles = set.as_slice();
        let len = u32::try_from(shingles.len()).map_err(|_| {
            DedupError::MissingData(format!("document {position}: too many shingles"))
        })?;
        let in_memory =
            self.spill.is_none() && self.memory.len() + shingles.len() <= self.memory_limit;
        if in_memory {
            self.memory.extend_from_slice(shingles);
        } else {
            if self.first_on_disk == usize::MAX {
                self.first_on_disk = self.ends.len();
            }
            let spill = self.spill_mut()?;
            let writer = spill
                .writer
                .as_mut()
                .expect("the writer lives until finish");
            write_shingles(writer, shingles).map_err(write_error)?;
            spill.written += shingles.len() as u64;
        }
        let counts_at = self.counts.len();
        if counts_at < self.counts_limit {
            let counts = BucketCounts::of(set);
            let counts = counts.as_bytes();
            if counts_at + counts.len() <= self.counts_limit {
                self.counts.extend_from_slice(counts);
            } else {
                // Full: no later set has counts either.
                self.counts_limit = counts_at;
            }
        }
        let before = self.ends.last().copied().unwrap_or_default();
        self.ends.push(End {
            shingles: before.shingles + u64::from(len),
            counts: self.counts.len() as u64,
        });
        Ok(())
    }

    /// Ends the writing: what is spilled is flushed so that it can be read.
    pub(crate) fn finish(&mut self) -> Result<(), DedupError> {
        if let Some(spill) = &mut self.spill {
            if let Some(mut writer) = spill.writer.take() {
                writer.flush().map_err(write_error)?;
            }
        }
        // No shrink_to_fit: it would copy the sets (twice the memory for a moment), and the
        // reserved pages never written were never resident.
        // The cache has what the written sets and the counts leave of the share, and at least
        // an eighth of it.
        let held = self.memory.len() * 8
            + self.counts.capacity()
            + self.ends.capacity() * std::mem::size_of::<End>()
            + self.slots.held_bytes() as usize;
        let cache = self.share.saturating_sub(held).max(self.share / 8);
        self.lock().limit = cache;
        tracing::info!(
            count_bytes = self.counts.len(),
            cache_bytes = cache,
            "shingle sets stored"
        );
        Ok(())
    }

    /// The bytes of memory the store may hold: sets, counts and cache together.
    pub(crate) fn share(&self) -> u64 {
        self.share as u64
    }

    /// Bytes written to the spill file.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.spill.as_ref().map_or(0, |s| s.written * 8)
    }

    /// Number of sets stored.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Shingles stored, in memory and on disk.
    pub(crate) fn shingles(&self) -> u64 {
        self.memory.len() as u64 + self.spill.as_ref().map_or(0, |s| s.written)
    }

    /// Where the set of the document at `position` lies, if it was stored.
    fn span(&self, position: u32) -> Option<Span> {
        let slot = self.slots.rank(position)? as usize;
        let end = self.ends[slot];
        let start = match slot {
            0 => End::default(),
            _ => self.ends[slot - 1],
        };
        let on_disk = slot >= self.first_on_disk;
        Some(Span {
            // The file holds the sets after those in memory.
            offset: match on_disk {
                true => start.shingles - self.memory.len() as u64,
                false => start.shingles,
            },
            len: (end.shingles - start.shingles) as u32,
            on_disk,
            counts_at: start.counts,
            counts_len: (end.counts - start.counts) as u32,
        })
    }

    /// The size and bucket counts of the set of the document at `position`, or `None` if it
    /// was not stored: held in memory, whatever is spilled (no counts, which bound nothing, for
    /// a set stored once the counts' share was full).
    pub(crate) fn summary(&self, position: u32) -> Option<Summary<'_>> {
        Some(self.summary_of(self.span(position)?))
    }

    fn summary_of(&self, span: Span) -> Summary<'_> {
        let start = span.counts_at as usize;
        Summary {
            len: span.len as usize,
            counts: &self.counts[start..start + span.counts_len as usize],
        }
    }

    /// The summaries of the sets of `positions` (`None` where one was not stored), into `out`:
    /// the same as [`SetStore::summary`] of each, read together. Their spans are gathered
    /// first and every cache line of their counts touched before any bound is computed, so the
    /// misses of all of them (two to six a set, at random in the spans and counts of every
    /// stored set) overlap instead of following one another: on the 4 GB corpus, verification
    /// asks for the summaries of about a hundred kept units a unit.
    pub(crate) fn summaries<'s>(&'s self, positions: &[u32], out: &mut Vec<Option<Summary<'s>>>) {
        out.clear();
        out.extend(positions.iter().map(|&position| self.summary(position)));
        let mut touched = 0u8;
        for summary in out.iter().flatten() {
            // A byte every 64 and the last: every line the counts span, wherever they start.
            for line in summary.counts.chunks(64) {
                touched ^= line[0];
            }
            touched ^= summary.counts.last().copied().unwrap_or(0);
        }
        std::hint::black_box(touched);
    }

    /// The set of the document at `position`, or `None` if it was not stored.
    pub(crate) fn get(&self, position: u32) -> Result<Option<Arc<FeatureSet>>, DedupError> {
        let Some(span) = self.span(position) else {
            return Ok(None);
        };
        if let Some(held) = self.lock().sets.get(&position) {
            return Ok(Some(Arc::clone(held)));
        }
        let held = Arc::new(self.read(span, position)?);
        let mut cache = self.lock();
        cache.bytes += cached_bytes(&held);
        if let Some(old) = cache.sets.put(position, Arc::clone(&held)) {
            cache.bytes -= cached_bytes(&old);
        }
        while cache.bytes > cache.limit && cache.sets.len() > 1 {
            if let Some((_, old)) = cache.sets.pop_lru() {
                cache.bytes -= cached_bytes(&old);
            }
        }
        Ok(Some(held))
    }

    /// Drops the set of the document at `position` from the cache.
    pub(crate) fn forget(&self, position: u32) {
        let mut cache = self.lock();
        if let Some(held) = cache.sets.pop(&position) {
            cache.bytes -= cached_bytes(&held);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        // A panic elsewhere cannot leave the cache inconsistent in a way that matters: it only
        // holds copies.
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn read(&self, span: Span, position: u32) -> Result<FeatureSet, DedupError> {
        let shingles = if span.on_disk {
            let spill = self.spill.as_ref().expect("a span on disk has a file");
            let mut shingles = vec![0u64; span.len as usize];
            let bytes = bytemuck::cast_slice_mut::<u64, u8>(&mut shingles);
            read_at(spill.file.as_file(), bytes, span.offset * 8).map_err(|e| {
                DedupError::spill(&format!("reading {} back", spill.file.path().display()), e)
            })?;
            // Written little-endian (`write_shingles`).
            shingles.iter_mut().for_each(|s| *s = u64::from_le(*s));
            shingles
        } else {
            let start = span.offset as usize;
            self.memory[start..start + span.len as usize].to_vec()
        };
        FeatureSet::from_sorted(shingles).ok_or_else(|| DedupError::Spill {
            what: format!("the spilled shingle set of document {position} came back damaged"),
            source: None,
        })
    }

    fn spill_mut(&mut self) -> Result<&mut Spill, DedupError> {
        if self.spill.is_none() {
            let file = spill_file(&self.spill_dir)?;
            let writer = file.reopen().map_err(write_error)?;
            tracing::info!(path = %file.path().display(), "shingle sets spill to disk");
            self.spill = Some(Spill {
                file,
                writer: Some(BufWriter::with_capacity(1 << 20, writer)),
                written: 0,
            });
        }
        Ok(self.spill.as_mut().expect("just made"))
    }
}

/// Writes `shingles` little-endian: as they are in memory on a little-endian machine (one copy
/// of the whole slice), byte-swapped elsewhere.
fn write_shingles(writer: &mut impl Write, shingles: &[u64]) -> std::io::Result<()> {
    if cfg!(target_endian = "little") {
        writer.write_all(bytemuck::cast_slice(shingles))
    } else {
        shingles
            .iter()
            .try_for_each(|s| writer.write_all(&s.to_le_bytes()))
    }
}

fn write_error(e: std::io::Error) -> DedupError {
    DedupError::spill("writing shingle sets", e)
}

#[cfg(unix)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
pub(crate) fn read_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(seed: u64, len: u64) -> FeatureSet {
        FeatureSet::new(
            (0..len)
                .map(|i| (i + seed).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect(),
        )
    }

    #[test]
    fn sets_come_back_equal_from_memory_and_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        // Room for about two sets of 100 in memory: the rest spill.
        let mut store = SetStore::new(2 * 100 * 8 * 4 + 8 + 20 * 16 + 64, 20, 57, dir.path());
        let sets: Vec<FeatureSet> = (0..20).map(|i| set(i * 1000, 100)).collect();
        for (i, s) in sets.iter().enumerate() {
            store.push(i as u32 * 3, s).unwrap();
        }
        store.finish().unwrap();
        assert!(store.spilled_bytes() > 0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        for _round in 0..2 {
            for (i, s) in sets.iter().enumerate() {
                let held = store.get(i as u32 * 3).unwrap().unwrap();
                assert_eq!(&*held, s);
                let summary = store.summary(i as u32 * 3).unwrap();
                assert_eq!(summary.len, s.len());
                assert_eq!(summary.counts, BucketCounts::of(s).as_bytes());
            }
        }
        assert!(store.get(1).unwrap().is_none());
        assert!(store.push(0, &sets[0]).is_err(), "out of order");
        drop(store);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "spill removed"
        );
    }

    /// Counts held up to half of the share: the sets stored after it is full have none,
    /// and bound nothing (`usize::MAX`); every set still comes back whole.
    #[test]
    fn bucket_counts_stay_within_their_half() {
        let dir = tempfile::tempdir().unwrap();
        let sets: Vec<FeatureSet> = (0..20).map(|i| set(i * 1000, 100)).collect();
        let per_set = BucketCounts::of(&sets[0]).as_bytes().len();
        // Half of the share holds the counts of 5 sets and a half.
        let mut store = SetStore::new(
            (2 * per_set * 11 / 2 + 20 * 16 + 64) as u64,
            20,
            19,
            dir.path(),
        );
        for (i, s) in sets.iter().enumerate() {
            store.push(i as u32, s).unwrap();
        }
        store.finish().unwrap();
        for (i, s) in sets.iter().enumerate() {
            let summary = store.summary(i as u32).unwrap();
            let counts = BucketCounts::of(s);
            let want: &[u8] = if i < 5 { counts.as_bytes() } else { &[] };
            assert_eq!(summary.counts, want, "set {i}");
            assert_eq!(&*store.get(i as u32).unwrap().unwrap(), s);
        }
        let (first, last) = (store.summary(0).unwrap(), store.summary(19).unwrap());
        assert!(first.intersection_bound(&store.summary(1).unwrap()) < 100);
        assert_eq!(first.intersection_bound(&last), usize::MAX);
    }

    #[test]
    fn a_missing_spill_directory_is_an_error() {
        let mut store = SetStore::new(16, 1, 0, Path::new("/nonexistent/neardup"));
        let err = store.push(0, &set(1, 100)).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/neardup"), "{err}");
    }
}
