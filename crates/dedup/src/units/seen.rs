//! The keys seen, in memory ([`KeySet`]) and saved across runs ([`SeenFile`]).

use std::collections::HashSet;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufReader, BufWriter, Read, Write};
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
        let failed = |what: &str, e: std::io::Error| {
            DedupError::seen(format!("{}: {what}: {e}", self.path.display()), Some(e))
        };
        let file = File::open(&self.path).map_err(|e| failed("cannot open", e))?;
        let mut input = BufReader::with_capacity(1 << 16, file);
        let mut magic = [0u8; 12];
        input
            .read_exact(&mut magic)
            .map_err(|e| failed("not a file of seen units", e))?;
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
            .map_err(|e| failed("its header is cut short", e))?;
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
        let mut count = 0u64;
        let mut key = [0u8; 8];
        loop {
            match input.read_exact(&mut key) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(failed("cannot read", e)),
            }
            each(u64::from_le_bytes(key))?;
            count += 1;
        }
        Ok(count)
    }

    /// Writes a set of keys to `out` in this file's format: `keys` must be distinct and
    /// ascending. Returns how many were written.
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
        for key in keys {
            out.write_all(&key?.to_le_bytes()).map_err(failed)?;
            count += 1;
        }
        out.flush().map_err(failed)?;
        Ok(count)
    }
}
