//! The keys seen, in memory ([`KeySet`]) and saved across runs ([`SeenFile`]).

use std::collections::HashSet;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use neardup_core::normalize::NormalizeOptions;
use serde::{Deserialize, Serialize};

use super::{Unit, UnitRule, KEY_BITS};
use crate::error::DedupError;

/// A key is already a uniform 64-bit hash: the set uses it as its own hash.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// The keys seen so far, in memory.
pub(crate) type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// Bytes a [`KeySet`] of `len` keys holds once it has grown to hold them, with the table it
/// leaves while it grows (hashbrown: a power of two of buckets at most 7/8 full, 9 bytes a
/// bucket).
pub(crate) fn set_bytes(len: usize) -> u64 {
    let buckets = (len.max(1) * 8 / 7 + 1).next_power_of_two() as u64;
    buckets * 9 + buckets / 2 * 9
}

const MAGIC: &[u8; 8] = b"NDUNITS1";

/// What a saved set of keys was made under: a set made with another unit, normalisation or
/// key (whole units, or n-grams of words) is refused, since its keys would never match. The
/// fraction rule's threshold is not part of it: the set holds every n-gram seen, whatever
/// the threshold removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    unit: Unit,
    normalize: NormalizeOptions,
    key: String,
}

/// A file of keys seen by earlier runs (`--seen`, as dolma's saved bloom filter is reused
/// across dumps): `NDUNITS1`, the length of a JSON header (u32, little-endian) and the header
/// (unit, normalisation, key), then the keys, distinct, ascending, 8 bytes each
/// (little-endian). Exact: a key is in it or not (no false positive beyond the collisions of
/// the 64-bit key, see [`super::KEY_BITS`]).
#[derive(Debug, Clone)]
pub struct SeenFile {
    path: PathBuf,
    header: Vec<u8>,
}

impl SeenFile {
    /// The saved set at `path`, for the keys of `rule` under `normalize`.
    pub fn new(
        path: &Path,
        rule: &UnitRule,
        normalize: NormalizeOptions,
    ) -> Result<Self, DedupError> {
        let key = match rule.ngrams {
            None => format!("xxh3-{KEY_BITS}"),
            Some(ngrams) => format!("xxh3-{KEY_BITS} of {}-grams of words", ngrams.n),
        };
        let header = Header {
            unit: rule.unit,
            normalize,
            key,
        };
        let header = serde_json::to_vec(&header)
            .map_err(|e| DedupError::InvalidOption(format!("cannot encode a header: {e}")))?;
        Ok(SeenFile {
            path: path.to_path_buf(),
            header,
        })
    }

    /// Whether the file exists (a first run starts without it).
    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    /// Reads every key of the file, checking its header, calling `each` with them.
    pub fn read(
        &self,
        mut each: impl FnMut(u64) -> Result<(), DedupError>,
    ) -> Result<u64, DedupError> {
        let (mut input, _) = self.open()?;
        let mut count = 0u64;
        let mut key = [0u8; 8];
        loop {
            match input.read_exact(&mut key) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(self.failed("cannot read", e)),
            }
            each(u64::from_le_bytes(key))?;
            count += 1;
        }
        Ok(count)
    }

    /// How many keys the file holds, checking its header: for readers that share the file
    /// out in ranges ([`SeenFile::read_range`]: the Spark door's executors).
    pub fn key_count(&self) -> Result<u64, DedupError> {
        let (input, start) = self.open()?;
        let size = input
            .get_ref()
            .metadata()
            .map_err(|e| self.failed("cannot read", e))?
            .len();
        let keys = size.saturating_sub(start);
        if keys % 8 != 0 {
            return Err(DedupError::seen(
                format!("{}: its keys are cut short", self.path.display()),
                None,
            ));
        }
        Ok(keys / 8)
    }

    /// Keys `first..first + count` of the file (fewer at its end), checking its header.
    pub fn read_range(&self, first: u64, count: u64) -> Result<Vec<u64>, DedupError> {
        let (mut input, start) = self.open()?;
        let offset = first
            .checked_mul(8)
            .and_then(|bytes| bytes.checked_add(start))
            .ok_or_else(|| DedupError::InvalidOption(format!("no key {first} in a file")))?;
        input
            .seek(SeekFrom::Start(offset))
            .map_err(|e| self.failed("cannot read", e))?;
        let mut bytes = Vec::new();
        input
            .take(count.saturating_mul(8))
            .read_to_end(&mut bytes)
            .map_err(|e| self.failed("cannot read", e))?;
        if bytes.len() % 8 != 0 {
            return Err(DedupError::seen(
                format!("{}: its keys are cut short", self.path.display()),
                None,
            ));
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|key| {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(key);
                u64::from_le_bytes(bytes)
            })
            .collect())
    }

    /// The file opened past its header, once the header is checked: the reader and where
    /// the keys start.
    fn open(&self) -> Result<(BufReader<File>, u64), DedupError> {
        let file = File::open(&self.path).map_err(|e| self.failed("cannot open", e))?;
        let mut input = BufReader::with_capacity(1 << 16, file);
        let mut magic = [0u8; 12];
        input
            .read_exact(&mut magic)
            .map_err(|e| self.failed("not a file of seen units", e))?;
        let len = u32::from_le_bytes([magic[8], magic[9], magic[10], magic[11]]) as usize;
        if &magic[..8] != MAGIC || len > 1 << 16 {
            return Err(DedupError::seen(
                format!("{}: not a file of seen units", self.path.display()),
                None,
            ));
        }
        let mut header = vec![0u8; len];
        input
            .read_exact(&mut header)
            .map_err(|e| self.failed("its header is cut short", e))?;
        if header != self.header {
            return Err(DedupError::seen(
                format!(
                    "{}: its units were hashed under another rule ({}), not this run's ({})",
                    self.path.display(),
                    String::from_utf8_lossy(&header),
                    String::from_utf8_lossy(&self.header)
                ),
                None,
            ));
        }
        Ok((input, (magic.len() + len) as u64))
    }

    /// An error of reading this file.
    fn failed(&self, what: &str, e: std::io::Error) -> DedupError {
        DedupError::seen(format!("{}: {what}: {e}", self.path.display()), Some(e))
    }

    /// Writes a set of keys to `out` in this file's format: `keys` must be distinct and
    /// ascending (an error otherwise). Returns how many were written.
    pub fn write(
        &self,
        out: &mut impl Write,
        keys: impl Iterator<Item = Result<u64, DedupError>>,
    ) -> Result<u64, DedupError> {
        let failed = |e: std::io::Error| {
            DedupError::seen(
                format!("cannot write {}: {e}", self.path.display()),
                Some(e),
            )
        };
        let mut out = BufWriter::with_capacity(1 << 16, out);
        out.write_all(MAGIC).map_err(failed)?;
        out.write_all(&(self.header.len() as u32).to_le_bytes())
            .map_err(failed)?;
        out.write_all(&self.header).map_err(failed)?;
        let mut count = 0u64;
        let mut last = None;
        for key in keys {
            let key = key?;
            if let Some(last) = last.filter(|&last| last >= key) {
                return Err(DedupError::InvalidOption(format!(
                    "the keys of {} must be distinct and ascending: {key:#x} after {last:#x}",
                    self.path.display()
                )));
            }
            last = Some(key);
            out.write_all(&key.to_le_bytes()).map_err(failed)?;
            count += 1;
        }
        out.flush().map_err(failed)?;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_whole_or_in_ranges_and_written_ascending_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("units.seen");
        let file =
            SeenFile::new(&path, &UnitRule::new(Unit::Line), NormalizeOptions::web()).unwrap();
        let keys = [1u64, 7, 1 << 40, u64::MAX];
        let mut bytes = Vec::new();
        assert_eq!(
            file.write(&mut bytes, keys.iter().copied().map(Ok))
                .unwrap(),
            4
        );
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(file.key_count().unwrap(), 4);
        assert_eq!(file.read_range(1, 2).unwrap(), [7, 1 << 40]);
        assert_eq!(file.read_range(3, 10).unwrap(), [u64::MAX]);
        assert!(file.read_range(9, 1).unwrap().is_empty());
        let mut all = Vec::new();
        file.read(|key| {
            all.push(key);
            Ok(())
        })
        .unwrap();
        assert_eq!(all, keys);
        for unsorted in [[7u64, 1], [7, 7]] {
            let refused = file.write(&mut Vec::new(), unsorted.into_iter().map(Ok));
            assert!(refused.is_err(), "{unsorted:?}");
        }
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(file.key_count().is_err() && file.read_range(0, 4).is_err());
        let other = SeenFile::new(
            &path,
            &UnitRule::new(Unit::Paragraph),
            NormalizeOptions::web(),
        );
        assert!(other.unwrap().key_count().is_err(), "another rule's file");
    }
}
