//! [`Digests`]: every document's digest, read once to find the exact groups, within a share of
//! the budget.
//!
//! A digest (32 bytes for BLAKE3 or SHA-256, 16 for XXH3-128) was two thirds of what the engine
//! held of a document of a 64-bit profile, and the engine reads it once: to find exact
//! duplicates. So each digest's first 8 bytes, a key to sort on, go with its position into
//! sorted runs ([`Runs`]: in memory up to a sixteenth of the budget, on disk beyond it), and the
//! digest itself is held in full only while the full digests fit another sixteenth; beyond it
//! they go, in input order, to a temporary file. Exact groups are the positions of equal keys in
//! the merged runs; only the members of a group of equal keys (the exact copies, and keys shared
//! by chance: about one pair in 2⁶⁴) are read back, and split by their whole digest. The answer
//! is the one the whole digests give; nothing is held per document.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;

use neardup_index::{Runs, SpillDir};

use crate::budget::{spill_file, Budget};
use crate::error::DedupError;
use crate::exact::Groups;

/// Bytes of buffer for writing the spilled digests.
const WRITE_BUFFER: usize = 1 << 20;

/// The full digests: in memory, or in a temporary file (removed when dropped).
enum Full {
    Held(Vec<u8>),
    Spilled {
        file: BufWriter<tempfile::NamedTempFile>,
    },
}

/// The digests of the documents, by position (see the module documentation).
pub(crate) struct Digests {
    /// Bytes of one digest (every digest of a run has the same length).
    len: usize,
    /// How many digests were pushed.
    count: u32,
    /// `(key, position)`: the first 8 bytes of each digest, little-endian, and its position.
    keys: Runs<(u64, u64)>,
    /// Keys not yet handed to `keys` (a batch of [`Runs::batch`]).
    batch: Vec<(u64, u64)>,
    /// Bytes `keys` holds before it writes a run.
    keys_cap: u64,
    keys_dir: SpillDir,
    full: Full,
    /// Bytes of full digests held before they go to disk.
    cap: u64,
    dir: PathBuf,
    /// Bytes of full digests written to disk.
    spilled: u64,
    /// The exact groups, once found: the digests are released then (their only use).
    groups: Option<Arc<Groups>>,
}

impl std::fmt::Debug for Digests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Digests")
            .field("count", &self.count)
            .field("len", &self.len)
            .field("spilled_bytes", &self.spilled)
            .field("groups_found", &self.groups.is_some())
            .finish()
    }
}

impl Digests {
    /// No digests yet; the full digests held up to `cap` bytes and the keys up to as many, both
    /// spilled to `dir` beyond.
    pub(crate) fn new(cap: u64, dir: PathBuf) -> Self {
        let keys_dir = SpillDir::new(&dir);
        Digests {
            len: 0,
            count: 0,
            keys: Runs::new(keys_dir.clone(), cap),
            batch: Vec::new(),
            keys_cap: cap,
            keys_dir,
            full: Full::Held(Vec::new()),
            cap,
            dir,
            spilled: 0,
            groups: None,
        }
    }

    /// The full digests and the keys held up to a sixteenth of `budget` each, spilled to its
    /// folder beyond.
    pub(crate) fn within(budget: &Budget) -> Self {
        Self::new(budget.memory / 16, budget.spill_dir())
    }

    /// The length every digest pushed has (0 before the first).
    pub(crate) fn digest_len(&self) -> usize {
        self.len
    }

    /// Adds the digest of the next position (the caller checks its length against
    /// [`Digests::digest_len`]).
    pub(crate) fn push(&mut self, digest: &[u8]) -> Result<(), DedupError> {
        if self.groups.is_some() {
            return Err(DedupError::InvalidOption(
                "a document was added after the exact duplicates were found".into(),
            ));
        }
        if self.count == u32::MAX {
            return Err(DedupError::InvalidOption(
                "more than 4,294,967,295 documents".into(),
            ));
        }
        if self.count == 0 {
            self.len = digest.len();
        }
        let mut key = [0u8; 8];
        let head = digest.len().min(8);
        key[..head].copy_from_slice(&digest[..head]);
        if let Full::Held(held) = &self.full {
            if (held.len() + digest.len()) as u64 > self.cap {
                self.spill()?;
            }
        }
        match &mut self.full {
            Full::Held(held) => held.extend_from_slice(digest),
            Full::Spilled { file } => {
                file.write_all(digest)
                    .map_err(|e| DedupError::spill("cannot write digests", e))?;
                self.spilled += digest.len() as u64;
            }
        }
        self.batch
            .push((u64::from_le_bytes(key), u64::from(self.count)));
        self.count += 1;
        if self.batch.len() >= self.keys.batch() {
            self.keys.add(&mut self.batch)?;
        }
        Ok(())
    }

    /// Moves the full digests held so far to a temporary file.
    fn spill(&mut self) -> Result<(), DedupError> {
        let Full::Held(held) = &mut self.full else {
            return Ok(());
        };
        let mut file = BufWriter::with_capacity(WRITE_BUFFER, spill_file(&self.dir)?);
        file.write_all(held)
            .map_err(|e| DedupError::spill("cannot write digests", e))?;
        self.spilled += held.len() as u64;
        self.full = Full::Spilled { file };
        Ok(())
    }

    /// Bytes held in memory (the keys' share whole: what their runs may hold).
    pub(crate) fn held_bytes(&self) -> u64 {
        let full = match &self.full {
            Full::Held(held) => held.capacity(),
            Full::Spilled { .. } => WRITE_BUFFER,
        };
        let keys = match self.groups {
            Some(_) => 0,
            None => self.keys_cap.min(u64::from(self.count) * 16),
        };
        keys + full as u64
    }

    /// Bytes written to disk: full digests and sorted runs of keys.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.spilled + self.keys_dir.written()
    }

    /// Groups of two or more positions with equal digests; positions ascending within a group,
    /// groups ordered by their first position. Found once: the digests are released then (what
    /// they held goes to the candidate search), the groups kept for a later call.
    pub(crate) fn exact_groups(&mut self) -> Result<Arc<Groups>, DedupError> {
        if let Some(groups) = &self.groups {
            return Ok(groups.clone());
        }
        let groups = Arc::new(self.find_exact_groups()?);
        self.full = Full::Held(Vec::new());
        self.groups = Some(groups.clone());
        Ok(groups)
    }

    /// [`Digests::exact_groups`], from the digests.
    fn find_exact_groups(&mut self) -> Result<Groups, DedupError> {
        let keys = std::mem::replace(&mut self.keys, Runs::new(self.keys_dir.clone(), 0));
        keys.add(&mut self.batch)?;
        let len = self.len;
        let mut source = match &mut self.full {
            Full::Held(held) => Source::Held(held),
            Full::Spilled { file, .. } => {
                file.flush()
                    .map_err(|e| DedupError::spill("cannot write digests", e))?;
                let reopened = file.get_ref().reopen();
                Source::File(
                    reopened.map_err(|e| DedupError::spill("cannot read digests back", e))?,
                )
            }
        };
        let mut groups = Groups::default();
        let mut classes = KeyClasses::default();
        let mut current = None;
        for record in keys.into_sorted()? {
            let (key, position) = record?;
            if current != Some(key) {
                classes.end(&mut groups);
                current = Some(key);
            }
            classes.add(position as u32, |at, out| {
                source.append(u64::from(at) * len as u64, len, out)
            })?;
        }
        classes.end(&mut groups);
        Ok(groups.sorted())
    }
}

/// Where the full digests are read back from.
enum Source<'a> {
    Held(&'a [u8]),
    File(File),
}

impl Source<'_> {
    /// Appends the `len` bytes at `offset` to `out`.
    fn append(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<(), DedupError> {
        match self {
            Source::Held(held) => {
                let at = offset as usize;
                out.extend_from_slice(&held[at..at + len]);
                Ok(())
            }
            Source::File(file) => {
                let start = out.len();
                out.resize(start + len, 0);
                file.seek(SeekFrom::Start(offset))
                    .and_then(|_| file.read_exact(&mut out[start..]))
                    .map_err(|e| DedupError::spill("cannot read digests back", e))
            }
        }
    }
}

/// The positions of one key (given ascending) split by their whole digest as they come: only
/// a key's distinct digests and its positions are held, never a digest a position (one key of
/// 40 million copies held 1.3 GB of digests).
#[derive(Default)]
struct KeyClasses {
    /// The key's first position, its digest not read yet: a key of one position reads none.
    first: Option<u32>,
    /// Each distinct digest of the key, and its positions, ascending.
    classes: HashMap<Box<[u8]>, Vec<u32>>,
    digest: Vec<u8>,
}

impl KeyClasses {
    /// Adds `position` (after every position added before), its digest appended to a buffer by
    /// `read` when needed.
    fn add(
        &mut self,
        position: u32,
        mut read: impl FnMut(u32, &mut Vec<u8>) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        if self.first.is_none() && self.classes.is_empty() {
            self.first = Some(position);
            return Ok(());
        }
        for at in self.first.take().into_iter().chain([position]) {
            self.digest.clear();
            read(at, &mut self.digest)?;
            match self.classes.get_mut(self.digest.as_slice()) {
                Some(members) => members.push(at),
                None => {
                    self.classes.insert(self.digest.as_slice().into(), vec![at]);
                }
            }
        }
        Ok(())
    }

    /// Appends the key's classes of two or more positions to `groups` and starts a new key.
    fn end(&mut self, groups: &mut Groups) {
        for (_, members) in self.classes.drain() {
            if members.len() > 1 {
                groups.push(&members);
            }
        }
        self.first = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Digests of 16 bytes: equal first 8 bytes (a shared key) for every position, and a
    /// second half that repeats with period `period`.
    fn digest(i: u32, period: u32) -> [u8; 16] {
        let mut d = [7u8; 16];
        d[8..12].copy_from_slice(&(i % period).to_le_bytes());
        d
    }

    /// The groups whole digests give, by brute force.
    fn reference(digests: &[[u8; 16]]) -> Vec<Vec<u32>> {
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for (i, d) in digests.iter().enumerate() {
            if groups.iter().any(|g| g.contains(&(i as u32))) {
                continue;
            }
            let group: Vec<u32> = (i..digests.len())
                .filter(|&j| digests[j] == *d)
                .map(|j| j as u32)
                .collect();
            if group.len() > 1 {
                groups.push(group);
            }
        }
        groups
    }

    /// Keys shared by every digest (so every group is split by the whole digest), held and
    /// spilled alike, give the groups of the whole digests; the spilled file is counted.
    #[test]
    fn groups_are_those_of_whole_digests_held_or_spilled() {
        let all: Vec<[u8; 16]> = (0..1000).map(|i| digest(i, 37)).collect();
        let want: Groups = reference(&all).iter().map(Vec::as_slice).collect();
        assert_eq!(want.len(), 37);
        for cap in [0, 160, 1 << 20] {
            let dir = tempfile::tempdir().unwrap();
            let mut digests = Digests::new(cap, dir.path().to_path_buf());
            for d in &all {
                digests.push(d).unwrap();
            }
            assert_eq!(*digests.exact_groups().unwrap(), want, "cap {cap}");
            assert_eq!(digests.spilled_bytes() > 0, cap < 16_000, "cap {cap}");
            // Released once found; the groups stay, and nothing may be added after.
            assert_eq!(digests.held_bytes(), 0, "cap {cap}");
            assert_eq!(*digests.exact_groups().unwrap(), want, "cap {cap}");
            assert!(digests.push(&all[0]).is_err());
            drop(digests);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }

    /// Keys spread over many sorted runs on disk (more than one merge pass takes at once), each
    /// digest repeated with a period: the groups come out of the merged runs as the whole
    /// digests give them.
    #[test]
    fn keys_merged_from_many_runs_give_the_groups() {
        let spread = |i: u32| {
            let mut d = [0u8; 16];
            let value = u64::from(i % 301).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            d[..8].copy_from_slice(&value.to_le_bytes());
            d
        };
        let all: Vec<[u8; 16]> = (0..20_000).map(spread).collect();
        let want: Groups = reference(&all).iter().map(Vec::as_slice).collect();
        assert_eq!(want.len(), 301);
        let dir = tempfile::tempdir().unwrap();
        let mut digests = Digests::new(16 * 100, dir.path().to_path_buf());
        for d in &all {
            digests.push(d).unwrap();
        }
        assert_eq!(*digests.exact_groups().unwrap(), want);
        assert!(digests.spilled_bytes() > 20_000 * 16);
    }

    /// Distinct digests make no group; one digest repeated makes one.
    #[test]
    fn distinct_and_identical() {
        let dir = tempfile::tempdir().unwrap();
        let mut distinct = Digests::new(0, dir.path().to_path_buf());
        for i in 0..100u32 {
            distinct.push(&digest(i, 1000)).unwrap();
        }
        assert_eq!(distinct.exact_groups().unwrap().len(), 0);
        let mut same = Digests::new(0, dir.path().to_path_buf());
        for _ in 0..50 {
            same.push(&[1u8; 32]).unwrap();
        }
        let all: Vec<u32> = (0..50).collect();
        assert_eq!(same.exact_groups().unwrap().to_vecs(), [all]);
    }
}
