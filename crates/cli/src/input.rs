//! Opening inputs: files or standard input, with clear errors.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Opens `path` for reading; `-` is standard input.
pub fn open_input(path: &Path) -> anyhow::Result<Box<dyn Read + Send>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdin()));
    }
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    Ok(Box::new(file))
}

/// An input read line by line as text, so that only one line is held at a time.
pub struct TextLines {
    reader: BufReader<Box<dyn Read + Send>>,
    path: PathBuf,
    lossy: bool,
    /// Bytes of the input read so far.
    offset: u64,
    buffer: Vec<u8>,
}

impl TextLines {
    /// Opens `path` (`-`: standard input). Invalid UTF-8 is an error naming the byte offset,
    /// unless `lossy`, which replaces it with U+FFFD.
    pub fn open(path: &Path, lossy: bool) -> anyhow::Result<Self> {
        Ok(TextLines {
            reader: BufReader::with_capacity(1 << 16, open_input(path)?),
            path: path.to_path_buf(),
            lossy,
            offset: 0,
            buffer: Vec::new(),
        })
    }

    /// The next line, without its line ending (`\n` or `\r\n`); `None` at the end.
    pub fn next_line(&mut self) -> anyhow::Result<Option<Cow<'_, str>>> {
        self.buffer.clear();
        let read = self
            .reader
            .read_until(b'\n', &mut self.buffer)
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        if read == 0 {
            return Ok(None);
        }
        let start = self.offset;
        self.offset += read as u64;
        if self.buffer.last() == Some(&b'\n') {
            self.buffer.pop();
            if self.buffer.last() == Some(&b'\r') {
                self.buffer.pop();
            }
        }
        match std::str::from_utf8(&self.buffer) {
            Ok(line) => Ok(Some(Cow::Borrowed(line))),
            Err(_) if self.lossy => Ok(Some(String::from_utf8_lossy(&self.buffer))),
            Err(error) => anyhow::bail!(
                "{}: invalid UTF-8 at byte {} (use --lossy to replace invalid bytes)",
                self.path.display(),
                start + error.valid_up_to() as u64
            ),
        }
    }
}
