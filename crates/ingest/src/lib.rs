//! neardup-ingest: the messy outside world → [`Document`]s.
//!
//! This crate turns files (JSON Lines, plain or compressed; folders of text and
//! HTML files; WARC crawl archives) into a stream of [`Document`]s, extracts
//! the main content of HTML pages, canonicalises URLs and finds mirror hosts.
//! It knows nothing about fingerprints: `neardup-core` and the layers above
//! consume what it yields.
//!
//! * Readers stream: memory stays bounded by [`ReadOptions::max_document_bytes`]
//!   whatever the input. A bad record becomes an [`IngestError`] that carries
//!   its [`Place`] (`file.jsonl:17`, `crawl.warc.gz@123456`), and the reader
//!   goes on with the next record, so the caller chooses to skip or to fail.
//! * [`open_inputs`] chains several paths (files, folders or `-` for stdin),
//!   detecting each one's [`Format`] from its name unless told.
//! * [`extract::MainContentExtractor`] drops navigation, sidebars, ads and
//!   other boilerplate and keeps the main text of a page.
//! * [`url::canonicalize`] maps the many spellings of one URL to one key, and
//!   [`mirror`] finds host/path-prefix pairs that serve the same content.
//! * With [`ReadOptions::keep_raw`], each [`Document::raw`] holds the input
//!   record byte for byte, so kept records can be written out unchanged.
//!
//! Readers: [`JsonlReader`] (JSON Lines, plain or compressed),
//! [`FolderReader`] (folder trees of `.txt`/`.html` files and of the other
//! formats), [`WarcReader`] (`.warc`, `.warc.gz`); [`open_path`] picks one for
//! a path, [`open_inputs`] chains paths and counts in [`ReadStats`].
//! [`parse_record`] parses one JSON Lines record without copying its strings,
//! for callers that read the lines themselves.
//!
//! ```no_run
//! use neardup_ingest::{open_inputs, extract::MainContentExtractor, ReadOptions};
//! use std::path::PathBuf;
//!
//! let extractor = MainContentExtractor::default();
//! let inputs = open_inputs(&[PathBuf::from("crawl.warc.gz")], &ReadOptions::default());
//! for item in inputs {
//!     match item {
//!         Ok(doc) => println!("{}\t{}", doc.id, doc.main_text(&extractor).len()),
//!         Err(err) => eprintln!("skipped: {err}"),
//!     }
//! }
//! ```

mod charset;
mod document;
mod error;
pub mod extract;
mod folder;
mod format;
mod http;
mod input;
mod jsonl;
mod lines;
mod members;
pub mod mirror;
mod options;
mod parquet;
mod stats;
pub mod url;
mod warc;
mod window;

pub use charset::decode_utf8;
pub use document::{Body, Document, Place};
pub use error::{ErrorKind, IngestError};
pub use folder::FolderReader;
pub use format::{Compression, Format, ParseFormatError};
pub use input::{open_inputs, open_path, open_reader, DocumentIter, Inputs, OpenedInput};
pub use jsonl::{parse_document, parse_record, JsonlReader, Record, RecordBody};
pub use options::{JsonlFields, ReadOptions, WarcId, DEFAULT_MAX_DOCUMENT_BYTES};
pub use parquet::{ParquetReader, BATCH_ROWS};
pub use stats::{Accounting, ReadStats, StatsSnapshot, MAX_KINDS, OTHER_KIND};
pub use warc::WarcReader;

/// The result every reader yields: a document, or a bad record with its place.
pub type Result<T, E = IngestError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    /// What callers rely on to read on one thread and work on others.
    #[test]
    fn thread_safety() {
        fn send<T: Send>() {}
        fn sync<T: Sync + Send>() {}
        send::<crate::Inputs>();
        send::<crate::Document>();
        send::<crate::IngestError>();
        sync::<crate::extract::MainContentExtractor>();
        sync::<crate::ReadStats>();
    }
}
