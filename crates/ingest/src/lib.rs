//! neardup-ingest: the messy outside world → [`Document`]s.
//!
//! This crate turns files (JSON Lines, plain or compressed; folders of text and
//! HTML files; WARC crawl archives) into a stream of [`Document`]s, extracts
//! the main content of HTML pages and canonicalises URLs.
//! It knows nothing about fingerprints (of `neardup-core` it uses only the
//! `Choice` trait of option values): the layers above consume what it yields.
//!
//! * Readers stream: memory stays bounded by [`ReadOptions::max_document_bytes`]
//!   whatever the input. A bad record becomes an [`IngestError`] that carries
//!   its [`Place`] (`file.jsonl:17`, `crawl.warc.gz@123456`), and the reader
//!   goes on with the next record, so the caller chooses to skip or to fail.
//! * [`Corpus`] is the one reader of many inputs (files, folders, `-` for
//!   stdin, pipes): checked before reading, read ahead on a thread, each
//!   document turned into text by [`document_text`] and mapped in parallel,
//!   the results in input order; [`kept`] writes the kept records back in
//!   their format.
//! * [`extract::MainContentExtractor`] drops navigation, sidebars, ads and
//!   other boilerplate and keeps the main text of a page.
//! * [`url::canonicalize`] maps the many spellings of one URL to one key (the
//!   key mirror detection, in `neardup-dedup`, compares).
//! * With [`ReadOptions::keep_raw`], each [`Document::raw`] holds the input
//!   record byte for byte, so kept records can be written out unchanged.
//!
//! Readers: [`JsonlReader`] (JSON Lines, plain or compressed),
//! [`FolderReader`] (folder trees of `.txt`/`.html` files and of the other
//! formats), [`WarcReader`] (`.warc`, `.warc.gz`), [`ParquetReader`];
//! [`OpenedInput`] opens one input and picks one by its format.
//! [`parse_record`] parses one JSON Lines record without copying its strings,
//! for callers that read the lines themselves: in one pass with a SIMD string
//! scan where it can, by serde_json ([`parse_record_serde`]) for the rest and
//! for the errors.
//!
//! ```no_run
//! use neardup_ingest::{Corpus, CorpusError, CorpusOptions, NoHooks};
//! use std::{path::PathBuf, sync::Arc};
//!
//! let options = CorpusOptions {
//!     inputs: vec![PathBuf::from("crawl.warc.gz")],
//!     ..CorpusOptions::default()
//! };
//! let corpus = Corpus::new(options, false, Arc::new(NoHooks))?;
//! corpus.for_each_document(
//!     "reading",
//!     false,
//!     |_, _, text| text.len(),
//!     |doc, length| Ok::<_, CorpusError>(println!("{}\t{length}", doc.id)),
//! )?;
//! # Ok::<(), CorpusError>(())
//! ```

mod blocks;
mod charset;
mod corpus;
mod document;
mod error;
pub mod extract;
mod folder;
mod format;
mod http;
mod input;
mod jsonl;
pub mod kept;
mod lines;
mod members;
mod options;
mod parquet;
mod spare;
mod spool;
mod stats;
pub mod text;
pub mod url;
mod warc;
pub mod watched;
mod window;

pub use charset::decode_utf8;
pub use corpus::{
    read_one_document, Corpus, CorpusError, CorpusOptions, NoHooks, OnError, ReadHooks,
    ReadProgress, Stop,
};
pub use document::{Body, Document, Place};
pub use error::{ErrorKind, IngestError, ParquetFailure};
pub use folder::FolderReader;
pub use format::{Compression, Format, ParseFormatError};
pub use input::{open_path, open_reader, DocumentIter, OpenedInput};
pub use jsonl::{
    parse_document, parse_record, parse_record_serde, InputRecord, InputRecordBody, JsonlReader,
};
pub use options::{JsonlFields, ReadOptions, WarcId, DEFAULT_MAX_DOCUMENT_BYTES};
pub use parquet::{ParquetReader, BATCH_ROWS};
pub use stats::{Accounting, ReadStats, StatsSnapshot, MAX_KINDS, OTHER_KIND};
pub use text::{body_text, document_text, title_of, HtmlText};
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
        send::<crate::DocumentIter>();
        send::<crate::Document>();
        send::<crate::IngestError>();
        sync::<crate::extract::MainContentExtractor>();
        sync::<crate::ReadStats>();
    }
}
