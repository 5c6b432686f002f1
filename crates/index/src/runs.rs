//! Sorted runs of fixed-size records on disk ([`RunRecord`]: the [`Pair`]s of the spilled
//! search, the unit hashes of `dedup --granularity`): records are gathered in memory up to a
//! cap, sorted and written as a run when the cap is reached, and read back merged as one
//! ascending stream.
//! [`FAN_IN`] runs of one level are merged into one of the next level as soon as they are
//! written (so at most `FAN_IN` files a level are open), and what is left at the end in passes
//! of at most `FAN_IN`. Runs are anonymous temporary files (unlinked at
//! once), so nothing is left behind however the process ends.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};

use crate::allpairs::Pair;
use crate::error::IndexError;

/// Runs merged at once; more are merged in passes first.
pub(crate) const FAN_IN: usize = 64;
/// Buffer of each reader and writer of a temporary file.
pub(crate) const IO_BUFFER: usize = 1 << 16;
/// A record that sorted runs hold: ordered, and written as a fixed number of bytes.
pub trait RunRecord: Ord + Copy + Send {
    /// Bytes of one record in a run.
    const BYTES: usize;
    /// Writes the record into `out` ([`RunRecord::BYTES`] long).
    fn encode(&self, out: &mut [u8]);
    /// The record `bytes` ([`RunRecord::BYTES`] long) hold.
    fn decode(bytes: &[u8]) -> Self;
}

/// A pair in a run: `a` and `b` (u32), then the distance (u8: at most 128).
impl RunRecord for Pair {
    const BYTES: usize = 9;

    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.a.to_le_bytes());
        out[4..8].copy_from_slice(&self.b.to_le_bytes());
        out[8] = self.distance as u8;
    }

    fn decode(bytes: &[u8]) -> Self {
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
        Pair {
            a: word(0),
            b: word(4),
            distance: u32::from(bytes[8]),
        }
    }
}

/// Two 64-bit words in a run, little-endian: e.g. a unit's hash and its position.
impl RunRecord for (u64, u64) {
    const BYTES: usize = 16;

    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.0.to_le_bytes());
        out[8..16].copy_from_slice(&self.1.to_le_bytes());
    }

    fn decode(bytes: &[u8]) -> Self {
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        (word(0), word(8))
    }
}

/// One 64-bit word in a run, little-endian.
impl RunRecord for u64 {
    const BYTES: usize = 8;

    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.to_le_bytes());
    }

    fn decode(bytes: &[u8]) -> Self {
        u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default())
    }
}

/// Why an external (spilling) search failed.
#[derive(Debug, thiserror::Error)]
pub enum SpillError {
    /// Bad parameters or input, as in the in-memory search.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// Reading or writing a temporary file failed (the folder is missing, full or unwritable).
    #[error("{context}")]
    Io {
        /// What was being done, and where.
        context: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The temporary folder of a search (or of any user of [`Runs`]) and the bytes written to it
/// so far.
#[derive(Debug, Clone)]
pub struct SpillDir {
    dir: PathBuf,
    written: Arc<AtomicU64>,
}

impl SpillDir {
    /// Temporary files in `dir`.
    pub fn new(dir: &Path) -> Self {
        SpillDir {
            dir: dir.to_path_buf(),
            written: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A new anonymous temporary file, open for writing and reading.
    pub(crate) fn file(&self) -> Result<File, SpillError> {
        tempfile::tempfile_in(&self.dir).map_err(|e| self.io("cannot create a file", e))
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Counts `bytes` written to the folder.
    pub fn count(&self, bytes: u64) {
        self.written.fetch_add(bytes, Relaxed);
    }

    /// Bytes written to the folder so far.
    pub fn written(&self) -> u64 {
        self.written.load(Relaxed)
    }

    /// An error of doing `what` in the folder.
    pub(crate) fn io(&self, what: &str, source: std::io::Error) -> SpillError {
        SpillError::Io {
            context: format!("{what} in {}", self.dir.display()),
            source,
        }
    }

    /// `file` rewound, for reading from its start.
    pub(crate) fn rewind(&self, mut file: File) -> Result<BufReader<File>, SpillError> {
        file.seek(SeekFrom::Start(0))
            .map_err(|e| self.io("cannot rewind a temporary file", e))?;
        Ok(BufReader::with_capacity(IO_BUFFER, file))
    }
}

/// Records gathered from several threads, in memory up to a cap, then as sorted runs on disk.
pub struct Runs<R: RunRecord> {
    spill: SpillDir,
    /// Records held before a run is written.
    cap: usize,
    state: Mutex<Gathered<R>>,
}

/// The pairs of the spilled search.
pub(crate) type PairRuns = Runs<Pair>;

/// What [`Runs`] holds: the records not yet written, and the runs written with their level
/// (0: written from memory; `l + 1`: merged from [`FAN_IN`] runs of level `l`), levels
/// descending.
struct Gathered<R> {
    pairs: Vec<R>,
    runs: Vec<(u32, File)>,
}

impl<R> Default for Gathered<R> {
    fn default() -> Self {
        Gathered {
            pairs: Vec::new(),
            runs: Vec::new(),
        }
    }
}

impl<R: RunRecord> Runs<R> {
    /// Holds up to `memory` bytes of records (at least a few) before writing a run to `spill`.
    pub fn new(spill: SpillDir, memory: u64) -> Self {
        let cap = (memory / std::mem::size_of::<R>().max(1) as u64).max(16);
        Runs {
            spill,
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            state: Mutex::new(Gathered::default()),
        }
    }

    /// How many records a caller should gather before calling [`Runs::add`].
    pub fn batch(&self) -> usize {
        (self.cap / 8).clamp(1, 1 << 14)
    }

    /// Adds `batch` (emptied), writing a run when the cap is reached.
    pub fn add(&self, batch: &mut Vec<R>) -> Result<(), SpillError> {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = &mut *guard;
        state.pairs.append(batch);
        if state.pairs.len() >= self.cap {
            let mut pairs = std::mem::take(&mut state.pairs);
            pairs.sort_unstable();
            let run = self.write_run(pairs.into_iter().map(Ok))?;
            state.runs.push((0, run));
            while let Some(level) = full_level(&state.runs) {
                let start = state.runs.len() - FAN_IN;
                let group = state.runs.split_off(start);
                let merge = Merge::new(&self.spill, group.into_iter().map(|(_, f)| f).collect())?;
                let merged = self.write_run(merge)?;
                state.runs.push((level + 1, merged));
            }
        }
        Ok(())
    }

    /// Writes ascending `records` to a new run.
    fn write_run(
        &self,
        records: impl Iterator<Item = Result<R, SpillError>>,
    ) -> Result<File, SpillError> {
        let file = self.spill.file()?;
        let mut out = BufWriter::with_capacity(IO_BUFFER, file);
        let mut bytes = 0u64;
        let mut encoded = vec![0u8; R::BYTES];
        for record in records {
            record?.encode(&mut encoded);
            out.write_all(&encoded)
                .map_err(|e| self.spill.io("cannot write a sorted run", e))?;
            bytes += R::BYTES as u64;
        }
        self.spill.count(bytes);
        out.into_inner()
            .map_err(|e| self.spill.io("cannot write a sorted run", e.into_error()))
    }

    /// Every record added, ascending: the records in memory if no run was written, else the
    /// runs merged (in passes of at most 64 (`FAN_IN`) until that many are left).
    pub fn into_sorted(self) -> Result<Sorted<R>, SpillError> {
        let Gathered { mut pairs, runs } = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let mut runs: Vec<File> = runs.into_iter().map(|(_, run)| run).collect();
        pairs.sort_unstable();
        if runs.is_empty() {
            return Ok(Sorted::Memory(pairs.into_iter()));
        }
        let last = Runs {
            spill: self.spill.clone(),
            cap: self.cap,
            state: Mutex::new(Gathered::default()),
        };
        if !pairs.is_empty() {
            runs.push(last.write_run(pairs.into_iter().map(Ok))?);
        }
        while runs.len() > FAN_IN {
            let mut merged = Vec::with_capacity(runs.len().div_ceil(FAN_IN));
            let mut rest = runs.into_iter().peekable();
            while rest.peek().is_some() {
                let group: Vec<File> = rest.by_ref().take(FAN_IN).collect();
                let merge = Merge::new(&self.spill, group)?;
                merged.push(last.write_run(merge)?);
            }
            runs = merged;
        }
        Ok(Sorted::Merged(Merge::new(&self.spill, runs)?))
    }
}

/// The level of the last [`FAN_IN`] runs if they all have the same one.
fn full_level(runs: &[(u32, File)]) -> Option<u32> {
    let last = runs.len().checked_sub(FAN_IN).map(|start| &runs[start..])?;
    let level = last[0].0;
    last.iter().all(|(l, _)| *l == level).then_some(level)
}

/// Records in ascending order, from memory or merged from runs on disk.
pub enum Sorted<R: RunRecord> {
    /// Every record fitted in memory.
    Memory(std::vec::IntoIter<R>),
    /// Merged from sorted runs.
    Merged(Merge<R>),
}

/// Pairs in ascending `(a, b)` order, from memory or merged from runs on disk.
pub type SortedPairs = Sorted<Pair>;

impl<R: RunRecord> Iterator for Sorted<R> {
    type Item = Result<R, SpillError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Sorted::Memory(records) => records.next().map(Ok),
            Sorted::Merged(merge) => merge.next(),
        }
    }
}

/// A k-way merge of sorted runs.
pub struct Merge<R: RunRecord = Pair> {
    spill: SpillDir,
    readers: Vec<BufReader<File>>,
    heap: BinaryHeap<Reverse<(R, usize)>>,
    /// One record's bytes, as read.
    buffer: Vec<u8>,
    failed: bool,
}

impl<R: RunRecord> Merge<R> {
    /// Merges `runs`, each read from its start.
    fn new(spill: &SpillDir, runs: Vec<File>) -> Result<Self, SpillError> {
        let mut merge = Merge {
            spill: spill.clone(),
            readers: Vec::with_capacity(runs.len()),
            heap: BinaryHeap::with_capacity(runs.len()),
            buffer: vec![0; R::BYTES],
            failed: false,
        };
        for run in runs {
            merge.readers.push(spill.rewind(run)?);
            merge.refill(merge.readers.len() - 1)?;
        }
        Ok(merge)
    }

    /// Reads the next record of run `i` into the heap, if it has one.
    fn refill(&mut self, i: usize) -> Result<(), SpillError> {
        match self.readers[i].read_exact(&mut self.buffer) {
            Ok(()) => {
                self.heap.push(Reverse((R::decode(&self.buffer), i)));
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(()),
            Err(e) => Err(self.spill.io("cannot read a sorted run", e)),
        }
    }
}

impl<R: RunRecord> Iterator for Merge<R> {
    type Item = Result<R, SpillError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let Reverse((record, i)) = self.heap.pop()?;
        if let Err(e) = self.refill(i) {
            self.failed = true;
            return Some(Err(e));
        }
        Some(Ok(record))
    }
}
