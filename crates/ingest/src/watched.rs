//! Writers that keep their first error, described with what they were writing: so that an
//! error is reported with its file (`cannot write PATH: No space left on device`), whatever
//! layers (JSON, gzip, zstd, Parquet, a reader copying a stream) it went through on its way up.

use std::io::{self, Write};
use std::sync::{Arc, OnceLock};

/// A writer that keeps its first error, described (`cannot write PATH: ...`), in a
/// [`Failure`]: so that the error is reported with the file it was writing, whatever layers
/// (JSON, gzip, zstd, a reader) it went through on its way up.
pub struct Watched<W> {
    inner: W,
    what: String,
    failure: Failure,
}

impl<W: Write> Watched<W> {
    /// Watches `inner`; `what` says what failed (`cannot write PATH`).
    pub fn new(inner: W, what: String, failure: Failure) -> Self {
        Watched {
            inner,
            what,
            failure,
        }
    }

    /// The writer watched.
    pub fn into_inner(self) -> W {
        self.inner
    }

    fn watch<T>(&self, result: io::Result<T>) -> io::Result<T> {
        if let Err(error) = &result {
            self.failure.record(&self.what, error);
        }
        result
    }
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.watch(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush();
        self.watch(result)
    }
}

/// The first error of the [`Watched`] writers sharing it.
#[derive(Debug, Clone, Default)]
pub struct Failure(Arc<OnceLock<io::Error>>);

impl Failure {
    /// Keeps `error` as `what: error`, unless an error is kept already (or it is a retried
    /// `Interrupted`).
    pub fn record(&self, what: &str, error: &io::Error) {
        if error.kind() != io::ErrorKind::Interrupted {
            let _ = self
                .0
                .set(io::Error::new(error.kind(), format!("{what}: {error}")));
        }
    }

    /// The error kept, if any (an I/O error of the same kind, for the callers that look).
    pub fn error(&self) -> Option<io::Error> {
        let kept = self.0.get()?;
        Some(io::Error::new(kept.kind(), kept.to_string()))
    }
}
