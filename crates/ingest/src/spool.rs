//! Streams (standard input, pipes, FIFOs) of a corpus read more than once: copied aside,
//! zstd-compressed, into a temporary folder on the first read, and read from their copies after.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::corpus::{CorpusError, ReadHooks};
use crate::watched::{Failure, Watched};

/// zstd level of the copies: level 1 compresses text about 7 times at over 400 MB/s, faster
/// than the inputs are read.
const SPOOL_LEVEL: i32 = 1;

/// The temporary folder of the copies of a corpus' streams, removed when dropped.
pub(crate) struct Spool {
    dir: tempfile::TempDir,
    /// The first error writing a copy: the cause of the read error it makes.
    failure: Failure,
}

impl Spool {
    /// Creates the folder, registered with `hooks` (to be removed should the process be ended).
    pub(crate) fn create(hooks: &dyn ReadHooks) -> Result<Spool, CorpusError> {
        let mut made = None;
        hooks
            .register_temporary(&mut || {
                let dir = tempfile::Builder::new().prefix("neardup-spool-").tempdir();
                let path = dir.as_ref().ok().map(|d| d.path().to_path_buf());
                made = Some(dir);
                path
            })
            .map_err(CorpusError::Stopped)?;
        let dir = made
            .unwrap_or_else(|| Err(io::Error::other("the folder was not created")))
            .map_err(CorpusError::Temporary)?;
        Ok(Spool {
            dir,
            failure: Failure::default(),
        })
    }

    /// The path of the copy of input `i`.
    fn copy_of(&self, i: usize) -> PathBuf {
        self.dir.path().join(i.to_string())
    }

    /// The copy of input `i`, made on the first read, decompressed.
    pub(crate) fn read_copy(&self, i: usize) -> io::Result<Box<dyn Read + Send>> {
        let file = File::open(self.copy_of(i))?;
        Ok(Box::new(zstd::Decoder::new(file)?))
    }

    /// `reader` (the stream `name`, input `i`), copying what is read into its copy; an error
    /// writing the copy is kept as [`Spool::failure`].
    pub(crate) fn tee(
        &self,
        i: usize,
        name: &Path,
        reader: Box<dyn Read + Send>,
    ) -> io::Result<Box<dyn Read + Send>> {
        let path = self.copy_of(i);
        let name = match name.to_str() {
            Some("-") => "standard input".to_string(),
            _ => name.display().to_string(),
        };
        let what = format!("cannot spool {name} to {}", path.display());
        let copy = File::create(&path).inspect_err(|e| self.failure.record(&what, e))?;
        let watched = Watched::new(copy, what, self.failure.clone());
        let copy = zstd::Encoder::new(BufWriter::new(watched), SPOOL_LEVEL)?.auto_finish();
        Ok(Box::new(Tee { reader, copy }))
    }

    /// The first error writing a copy, if any.
    pub(crate) fn failure(&self) -> Option<io::Error> {
        self.failure.error()
    }
}

/// A reader that copies what it reads.
struct Tee<W: Write> {
    reader: Box<dyn Read + Send>,
    copy: W,
}

impl<W: Write> Read for Tee<W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.reader.read(buf)?;
        self.copy.write_all(&buf[..read])?;
        Ok(read)
    }
}
