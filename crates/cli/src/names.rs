//! [`Names`]: the names of a batch's members (JSON-encoded ids), by position, held in memory
//! while they fit a share of the budget and in two temporary files beyond it (the names' bytes
//! and where each ends), read back by position.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::Context;

/// Names by position, in memory or spilled (see the module documentation).
pub struct Names {
    /// Bytes the names may hold in memory.
    share: u64,
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
    /// No names yet; up to `share` bytes in memory, then files (in the folder [`Names::push`]
    /// is given).
    pub fn new(share: u64) -> Self {
        Names {
            share,
            bytes: Vec::new(),
            ends: Vec::new(),
            files: None,
        }
    }

    /// Adds the name of the next position (spilling to new files in `dir` beyond the share).
    pub fn push(&mut self, name: &[u8], dir: &Path) -> anyhow::Result<()> {
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
                        .with_context(|| format!("cannot make a file in {}", dir.display()))
                };
                let mut spilled = Spilled {
                    bytes: file()?,
                    ends: file()?,
                    end: self.bytes.len() as u64,
                    count: self.ends.len(),
                };
                spilled.bytes.write_all(&self.bytes)?;
                for end in &self.ends {
                    spilled.ends.write_all(&end.to_le_bytes())?;
                }
                self.bytes = Vec::new();
                self.ends = Vec::new();
                self.files.insert(spilled)
            }
        };
        spilled.bytes.write_all(name)?;
        spilled.end += name.len() as u64;
        spilled.ends.write_all(&spilled.end.to_le_bytes())?;
        spilled.count += 1;
        Ok(())
    }

    /// The names, ready to be read by position.
    pub fn finish(self) -> anyhow::Result<NameReader> {
        Ok(match self.files {
            None => NameReader::Memory {
                bytes: self.bytes,
                ends: self.ends,
            },
            Some(spilled) => NameReader::Files {
                bytes: spilled.bytes.into_inner().map_err(|e| e.into_error())?,
                ends: spilled.ends.into_inner().map_err(|e| e.into_error())?,
            },
        })
    }
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

    /// Appends the name at `position` to `out`.
    pub fn write(&self, position: u32, out: &mut Vec<u8>) -> anyhow::Result<()> {
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
                let start = u64::from_le_bytes(bounds[..8].try_into()?);
                let end = u64::from_le_bytes(bounds[8..].try_into()?);
                let from = out.len();
                out.resize(from + usize::try_from(end - start)?, 0);
                read_at(bytes, &mut out[from..], start)?;
            }
        }
        Ok(())
    }
}

/// Fills `buf` from `file` at `offset`.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> anyhow::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
        .context("cannot read back the spilled names")
}

/// Fills `buf` from `file` at `offset`.
#[cfg(not(unix))]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> anyhow::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file.try_clone()?;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
        .context("cannot read back the spilled names")
}
