//! [`Names`]: the names of a batch's members (document ids, as UTF-8 or as JSON), by position,
//! held in memory while they fit a share of the budget (the bytes and 8 for where each ends,
//! not a `String` of 24 bytes and an allocation each) and in two temporary files beyond it
//! (the names' bytes and where each ends), read back by position.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use crate::budget::Budget;
use crate::error::DedupError;

/// Names by position, in memory or spilled (see the module documentation).
pub struct Names {
    /// Bytes the names may hold in memory.
    share: u64,
    /// Where they go beyond it.
    dir: PathBuf,
    /// The names in memory, one after another, and where each ends.
    bytes: Vec<u8>,
    ends: Vec<u64>,
    /// Once spilled: the names' bytes and their ends (u64 little-endian), and the total length.
    files: Option<Spilled>,
}

/// The files of spilled names.
struct Spilled {
    bytes: BufWriter<File>,
    ends: BufWriter<File>,
    end: u64,
    count: usize,
}

impl Names {
    /// No names yet; up to `share` bytes in memory, then files in `dir`.
    pub fn new(share: u64, dir: PathBuf) -> Self {
        Names {
            share,
            dir,
            bytes: Vec::new(),
            ends: Vec::new(),
            files: None,
        }
    }

    /// No names yet, within `budget`: the share every batch command gives its ids, an eighth
    /// of the budget, in memory, then files in the budget's spill folder.
    pub fn within(budget: &Budget) -> Self {
        Names::new(budget.memory / 8, budget.spill_dir())
    }

    /// Adds the name of the next position (spilling to new files beyond the share).
    pub fn push(&mut self, name: &[u8]) -> Result<(), DedupError> {
        let dir = &self.dir;
        let held = (self.bytes.len() + 8 * self.ends.len() + name.len() + 8) as u64;
        if self.files.is_none() && held <= self.share {
            self.bytes.extend_from_slice(name);
            self.ends.push(self.bytes.len() as u64);
            return Ok(());
        }
        let spilled = match &mut self.files {
            Some(spilled) => spilled,
            None => {
                let file = || {
                    tempfile::tempfile_in(dir)
                        .map(|f| BufWriter::with_capacity(1 << 16, f))
                        .map_err(|e| {
                            DedupError::spill(
                                &format!("cannot make a file in {}", dir.display()),
                                e,
                            )
                        })
                };
                let mut spilled = Spilled {
                    bytes: file()?,
                    ends: file()?,
                    end: self.bytes.len() as u64,
                    count: self.ends.len(),
                };
                spilled.bytes.write_all(&self.bytes).map_err(write_failed)?;
                for end in &self.ends {
                    spilled
                        .ends
                        .write_all(&end.to_le_bytes())
                        .map_err(write_failed)?;
                }
                self.bytes = Vec::new();
                self.ends = Vec::new();
                self.files.insert(spilled)
            }
        };
        spilled.bytes.write_all(name).map_err(write_failed)?;
        spilled.end += name.len() as u64;
        spilled
            .ends
            .write_all(&spilled.end.to_le_bytes())
            .map_err(write_failed)?;
        spilled.count += 1;
        Ok(())
    }

    /// The names, ready to be read by position.
    pub fn finish(self) -> Result<NameReader, DedupError> {
        let flushed = |file: BufWriter<File>| file.into_inner().map_err(|e| e.into_error());
        Ok(match self.files {
            None => NameReader::Memory {
                bytes: self.bytes,
                ends: self.ends,
            },
            Some(spilled) => NameReader::Files {
                bytes: flushed(spilled.bytes).map_err(write_failed)?,
                ends: flushed(spilled.ends).map_err(write_failed)?,
            },
        })
    }

    /// How many names were pushed.
    pub fn len(&self) -> usize {
        self.files.as_ref().map_or(self.ends.len(), |f| f.count)
    }

    /// Whether no name was pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn write_failed(error: std::io::Error) -> DedupError {
    DedupError::spill("cannot write the spilled names", error)
}

/// Names read back by position.
pub enum NameReader {
    /// Every name in memory.
    Memory {
        /// The names, one after another.
        bytes: Vec<u8>,
        /// Where each ends.
        ends: Vec<u64>,
    },
    /// The names in files.
    Files {
        /// The names, one after another.
        bytes: File,
        /// Where each ends (u64 little-endian).
        ends: File,
    },
}

impl NameReader {
    /// Bytes the names took on disk.
    pub fn spilled_bytes(&self) -> u64 {
        match self {
            NameReader::Memory { .. } => 0,
            NameReader::Files { bytes, ends } => [bytes, ends]
                .iter()
                .map(|f| f.metadata().map_or(0, |m| m.len()))
                .sum(),
        }
    }

    /// The name at `position`, as text (names pushed as UTF-8: ids, or their JSON).
    pub fn get(&self, position: u32) -> Result<String, DedupError> {
        let mut bytes = Vec::new();
        self.write(position, &mut bytes)?;
        String::from_utf8(bytes).map_err(|_| DedupError::Spill {
            what: format!("the name at {position} read back is not UTF-8"),
            source: None,
        })
    }

    /// Appends the name at `position` to `out`.
    pub fn write(&self, position: u32, out: &mut Vec<u8>) -> Result<(), DedupError> {
        let i = position as usize;
        match self {
            NameReader::Memory { bytes, ends } => {
                let start = if i == 0 { 0 } else { ends[i - 1] as usize };
                out.extend_from_slice(&bytes[start..ends[i] as usize]);
            }
            NameReader::Files { bytes, ends } => {
                let mut bounds = [0u8; 16];
                let (range, at) = if i == 0 {
                    (&mut bounds[8..], 0)
                } else {
                    (&mut bounds[..], 8 * (i as u64 - 1))
                };
                read_at(ends, range, at)?;
                let [start, end] = [&bounds[..8], &bounds[8..]]
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
                let len = end.checked_sub(start).ok_or_else(|| DedupError::Spill {
                    what: format!("the spilled names' ends are out of order at {position}"),
                    source: None,
                })?;
                let from = out.len();
                out.resize(from + len as usize, 0);
                read_at(bytes, &mut out[from..], start)?;
            }
        }
        Ok(())
    }
}

/// Fills `buf` from `file` at `offset`.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> Result<(), DedupError> {
    #[cfg(unix)]
    let read = {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    };
    #[cfg(not(unix))]
    let read = {
        use std::io::{Read, Seek, SeekFrom};
        file.try_clone().and_then(|mut file| {
            file.seek(SeekFrom::Start(offset))?;
            file.read_exact(buf)
        })
    };
    read.map_err(|e| DedupError::spill("cannot read back the spilled names", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(share: u64, dir: &std::path::Path) -> (Vec<String>, NameReader) {
        let all: Vec<String> = (0..300)
            .map(|i| format!("doc-{i}-{}", "é".repeat(i % 7)))
            .collect();
        let mut names = Names::new(share, dir.to_path_buf());
        for name in &all {
            names.push(name.as_bytes()).unwrap();
        }
        assert_eq!(names.len(), all.len());
        (all, names.finish().unwrap())
    }

    /// Names read back by position are the names pushed, whether they stayed in memory, went to
    /// files from the first, or spilled part way.
    #[test]
    fn names_come_back_by_position_in_memory_and_spilled() {
        let dir = tempfile::tempdir().unwrap();
        for share in [u64::MAX, 0, 1000] {
            let (all, reader) = names(share, dir.path());
            assert_eq!(
                reader.spilled_bytes() > 0,
                share != u64::MAX,
                "share {share}"
            );
            for (i, name) in all.iter().enumerate().rev() {
                assert_eq!(&reader.get(i as u32).unwrap(), name);
            }
        }
        // The files are unnamed temporary files: nothing is left in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// A folder that cannot hold the spill is an error naming it, not a panic.
    #[test]
    fn a_missing_folder_is_an_error() {
        let mut names = Names::new(0, PathBuf::from("/no/such/folder"));
        let error = names.push(b"a").unwrap_err().to_string();
        assert!(error.contains("/no/such/folder"), "{error}");
    }
}
