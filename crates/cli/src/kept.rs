//! `--kept`: the kept records written back in their format by the library
//! ([`neardup_ingest::kept`]); a name of the wrong kind of records is a usage error (exit 2).

use std::io::Write;
use std::path::Path;

use neardup_ingest::kept::{self, KeptError};
use neardup_ingest::Corpus;

use crate::usage::usage;

/// Checks, before anything is read, that the kept records can go in one output at `path`.
pub fn check(corpus: &Corpus, path: &Path) -> anyhow::Result<()> {
    kept::check(corpus, path).map_err(into_anyhow)
}

/// Writes the input records of the documents whose `kept` entry is true to `out`.
pub fn write_kept(
    out: &mut (impl Write + Send),
    path: &Path,
    corpus: &Corpus,
    kept: &[bool],
) -> anyhow::Result<()> {
    kept::write_kept(out, path, corpus, kept).map_err(into_anyhow)
}

/// The error as the command line reports it: a usage error for a name of the wrong kind, and
/// write errors as themselves (so that a closed standard output is recognised).
pub fn into_anyhow(error: KeptError) -> anyhow::Error {
    match error {
        KeptError::Io(error) => error.into(),
        KeptError::Json(error) => error.into(),
        error if error.is_usage() => usage(error).into(),
        error => error.into(),
    }
}
