//! [`Signatures`]: each document's MinHash signature, within a share of the budget.
//!
//! A signature is `num_perm` values of 4 bytes (512 bytes at the usual 128), more than all the
//! other columns of a document together, and the MinHash decision reads it in two places only:
//! the band keys of every unit, once, in position order, and the signatures of one component's
//! units while that component is walked. So signatures are held end to end in one vector while
//! they fit a sixteenth of the budget; beyond it every later one goes, in position order, to a
//! temporary file, read back front to back by a scan or one signature at a time by position
//! (a positioned read: the walk reads from several threads).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use neardup_index::{LshParams, Runs};
use rayon::prelude::*;

use crate::budget::{spill_file, Budget};
use crate::error::DedupError;
use crate::sets::read_at;

/// Bytes of buffer for writing spilled signatures.
const BUFFER: usize = 1 << 20;

/// Signatures read one thread up to this many at a time, on every thread beyond.
const PARALLEL_READS: usize = 4096;

/// Every document's MinHash signature, by position, or none for every document (see the module
/// documentation).
pub(crate) struct Signatures {
    /// Values per signature; 0 while no document was pushed, or when documents have none.
    width: usize,
    /// Whether the documents have signatures (known from the first).
    present: Option<bool>,
    /// The signatures of positions `0..held.len() / width`, end to end.
    held: Vec<u32>,
    /// The signatures after them, once the held ones reached `cap` bytes.
    spilled: Option<BufWriter<tempfile::NamedTempFile>>,
    spilled_bytes: u64,
    len: u32,
    cap: u64,
    dir: PathBuf,
}

impl std::fmt::Debug for Signatures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signatures")
            .field("len", &self.len)
            .field("width", &self.width)
            .field("spilled_bytes", &self.spilled_bytes)
            .finish()
    }
}

impl Signatures {
    /// None yet; held up to a sixteenth of `budget`, spilled to its folder beyond.
    pub(crate) fn within(budget: &Budget) -> Self {
        Self::new(budget.memory / 16, budget.spill_dir())
    }

    /// None yet; held up to `cap` bytes, spilled to `dir` beyond.
    pub(crate) fn new(cap: u64, dir: PathBuf) -> Self {
        Signatures {
            width: 0,
            present: None,
            held: Vec::new(),
            spilled: None,
            spilled_bytes: 0,
            len: 0,
            cap,
            dir,
        }
    }

    /// Whether `signature` may come next: any for the first document; after it, one of the
    /// first's length when it had one, none when it had none.
    pub(crate) fn accepts(&self, signature: Option<&[u32]>) -> bool {
        match (self.present, signature) {
            (None, _) => true,
            (Some(present), None) => !present,
            (Some(present), Some(values)) => present && values.len() == self.width,
        }
    }

    /// Appends the next document's signature; `Ok(false)` (nothing added) unless it
    /// [is accepted](Signatures::accepts).
    pub(crate) fn push(&mut self, signature: Option<&[u32]>) -> Result<bool, DedupError> {
        if !self.accepts(signature) {
            return Ok(false);
        }
        self.present = Some(signature.is_some());
        let Some(signature) = signature else {
            self.len += 1;
            return Ok(true);
        };
        self.width = signature.len();
        let held_bytes = self.held.len() as u64 * 4;
        if self.spilled.is_none() && held_bytes > 0 && held_bytes + self.width as u64 * 4 > self.cap
        {
            self.held.shrink_to_fit();
            self.spilled = Some(BufWriter::with_capacity(BUFFER, spill_file(&self.dir)?));
        }
        match &mut self.spilled {
            None => self.held.extend_from_slice(signature),
            Some(file) => {
                for value in signature {
                    file.write_all(&value.to_le_bytes())
                        .map_err(|e| DedupError::spill("cannot write MinHash signatures", e))?;
                }
                self.spilled_bytes += signature.len() as u64 * 4;
            }
        }
        self.len += 1;
        Ok(true)
    }

    /// The values per signature, or the error of a run that needs signatures when the
    /// documents have none.
    pub(crate) fn require(&self) -> Result<usize, DedupError> {
        match self.present() {
            true => Ok(self.width),
            false => Err(missing()),
        }
    }

    /// Whether the documents have signatures.
    pub(crate) fn present(&self) -> bool {
        self.present == Some(true)
    }

    /// Values per signature (0 without signatures).
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Bytes held in memory.
    pub(crate) fn held_bytes(&self) -> u64 {
        self.held.capacity() as u64 * 4
    }

    /// Bytes written to disk beyond the share of the budget.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    /// Writes out what is buffered, so that the spilled signatures can be read: called once
    /// every document is pushed, before the first read.
    pub(crate) fn flush(&mut self) -> Result<(), DedupError> {
        match &mut self.spilled {
            Some(file) => file
                .flush()
                .map_err(|e| DedupError::spill("cannot write MinHash signatures", e)),
            None => Ok(()),
        }
    }

    /// Document `i`'s signature into `out` (replacing what it held): held, or read from the
    /// spill file (which must be [flushed](Signatures::flush)).
    pub(crate) fn read(&self, i: u32, out: &mut Vec<u32>) -> Result<(), DedupError> {
        out.clear();
        out.resize(self.width, 0);
        self.read_into(i, out)
    }

    /// Document `i`'s signature into `out`, [`Signatures::width`] values.
    fn read_into(&self, i: u32, out: &mut [u32]) -> Result<(), DedupError> {
        if !self.present() || i >= self.len || out.len() != self.width {
            return Err(missing());
        }
        let (width, held) = (self.width, self.held.len() / self.width.max(1));
        if (i as usize) < held {
            let at = i as usize * width;
            out.copy_from_slice(&self.held[at..at + width]);
            return Ok(());
        }
        let file = self.file()?;
        let mut bytes = vec![0u8; width * 4];
        let offset = (u64::from(i) - held as u64) * width as u64 * 4;
        read_at(file, &mut bytes, offset)
            .map_err(|e| DedupError::spill("cannot read MinHash signatures back", e))?;
        for (value, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            *value = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Ok(())
    }

    /// The signatures of `positions`, each its own vector (read in parallel when they are
    /// many).
    pub(crate) fn read_many(&self, positions: &[u32]) -> Result<Vec<Vec<u32>>, DedupError> {
        let read = |&i: &u32| {
            let mut signature = Vec::with_capacity(self.width);
            self.read(i, &mut signature)?;
            Ok(signature)
        };
        match positions.len() > PARALLEL_READS {
            true => positions.par_iter().map(read).collect(),
            false => positions.iter().map(read).collect(),
        }
    }

    /// The signatures of `positions`, one after the other in one vector of
    /// [`Signatures::width`] values each (read in parallel when they are many): no second copy.
    pub(crate) fn read_flat(&self, positions: &[u32]) -> Result<Vec<u32>, DedupError> {
        if positions.is_empty() {
            return Ok(Vec::new());
        }
        let width = self.require()?;
        let mut flat = vec![0u32; positions.len() * width];
        match positions.len() > PARALLEL_READS {
            true => flat
                .par_chunks_mut(width)
                .zip(positions.par_iter())
                .try_for_each(|(slot, &i)| self.read_into(i, slot))?,
            false => {
                for (slot, &i) in flat.chunks_mut(width).zip(positions) {
                    self.read_into(i, slot)?;
                }
            }
        }
        Ok(flat)
    }

    /// Adds `(band key, ordinal)` of every band of `params` of the signature of each of
    /// `positions` (ascending, numbered from 0 in that order) to `runs`, read front to back.
    pub(crate) fn band_keys_into(
        &self,
        positions: impl Iterator<Item = u32>,
        params: LshParams,
        runs: &Runs<(u64, u64)>,
    ) -> Result<(), DedupError> {
        let mut signature = Vec::with_capacity(self.width);
        let mut batch = Vec::with_capacity(runs.batch());
        for (ordinal, position) in positions.enumerate() {
            self.read(position, &mut signature)?;
            batch.extend(
                params
                    .band_keys(&signature)
                    .map(|key| (key, ordinal as u64)),
            );
            if batch.len() >= runs.batch() {
                runs.add(&mut batch)?;
            }
        }
        Ok(runs.add(&mut batch)?)
    }

    /// The spill file, flushed.
    fn file(&self) -> Result<&File, DedupError> {
        match &self.spilled {
            Some(file) if file.buffer().is_empty() => Ok(file.get_ref().as_file()),
            Some(_) => Err(DedupError::MissingData(
                "MinHash signatures read before they were written out".into(),
            )),
            None => Err(missing()),
        }
    }
}

fn missing() -> DedupError {
    DedupError::MissingData(
        "the minhash method needs a profile with MinHash signatures (\"minhash\": {\"num_perm\": 128, \"seed\": 1})".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signature(i: u32, width: u32) -> Vec<u32> {
        (0..width)
            .map(|v| i.wrapping_mul(2_654_435_761) ^ v)
            .collect()
    }

    /// Signatures beyond the share go to disk and read back equal, held or spilled, in any
    /// order; the file is gone once they are dropped.
    #[test]
    fn spilled_signatures_read_back_equal() {
        let dir = tempfile::tempdir().unwrap();
        let mut signatures = Signatures::new(10 * 16 * 4, dir.path().into());
        for i in 0..100 {
            assert!(signatures.push(Some(&signature(i, 16))).unwrap());
        }
        assert!(!signatures.push(Some(&[1, 2, 3])).unwrap());
        assert!(!signatures.push(None).unwrap());
        assert_eq!(signatures.spilled_bytes(), 90 * 16 * 4);
        let mut out = Vec::new();
        assert!(signatures.read(50, &mut out).is_err(), "read before flush");
        signatures.flush().unwrap();
        for i in (0..100).rev() {
            signatures.read(i, &mut out).unwrap();
            assert_eq!(out, signature(i, 16));
        }
        assert!(signatures.read(100, &mut out).is_err());
        drop(signatures);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Signatures read side by side are those read one by one, held or spilled, on one thread
    /// and in parallel (more than `PARALLEL_READS`), in any order of positions.
    #[test]
    fn flat_reads_are_the_signatures_one_after_the_other() {
        let dir = tempfile::tempdir().unwrap();
        let mut signatures = Signatures::new(1_000 * 8 * 4, dir.path().into());
        for i in 0..6_000 {
            assert!(signatures.push(Some(&signature(i, 8))).unwrap());
        }
        signatures.flush().unwrap();
        for positions in [
            vec![],
            vec![5_999, 3, 999, 1_000],
            (0..6_000).rev().collect::<Vec<u32>>(),
        ] {
            let flat = signatures.read_flat(&positions).unwrap();
            assert_eq!(flat, signatures.read_many(&positions).unwrap().concat());
            let one_by_one: Vec<u32> = positions.iter().flat_map(|&i| signature(i, 8)).collect();
            assert_eq!(flat, one_by_one);
        }
        assert!(signatures.read_flat(&[6_000]).is_err());
    }

    /// Documents without signatures take no room, and a signature after them is refused.
    #[test]
    fn no_signatures_take_no_room() {
        let mut signatures = Signatures::new(1 << 20, std::env::temp_dir());
        assert!(signatures.push(None).unwrap());
        assert!(signatures.push(None).unwrap());
        assert!(!signatures.push(Some(&[1])).unwrap());
        assert!(!signatures.present());
        assert_eq!(signatures.held_bytes(), 0);
        assert!(signatures.read(0, &mut Vec::new()).is_err());
        assert!(signatures.read_flat(&[0]).is_err());
    }
}
