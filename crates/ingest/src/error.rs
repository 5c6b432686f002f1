//! Errors: what went wrong ([`ErrorKind`]) and where ([`Place`]).
//!
//! Every reader reports a bad record as an [`IngestError`] and goes on with the
//! next record, so the caller decides whether to skip it or stop the run.

use crate::document::Place;
use crate::format::Compression;
use std::io;

/// A bad input record or an input that could not be read, with its place.
///
/// Displays as `place: message`, e.g. `data.jsonl:17: malformed JSON at
/// column 12: expected value`.
#[derive(Debug, thiserror::Error)]
#[error("{place}: {kind}")]
pub struct IngestError {
    /// Where the problem is: file (or `-`), line or byte offset.
    pub place: Place,
    /// What the problem is.
    #[source]
    pub kind: ErrorKind,
}

impl IngestError {
    /// Pairs a problem with its place.
    pub fn new(place: Place, kind: ErrorKind) -> Self {
        IngestError { place, kind }
    }

    /// True for a bad record inside a readable input (malformed, too large,
    /// not UTF-8, a corrupt compressed stream, ...), which a caller may skip;
    /// false when an input cannot be read at all or reading it failed
    /// ([`ErrorKind::Open`], [`ErrorKind::Read`], [`ErrorKind::Walk`],
    /// [`ErrorKind::UnknownFormat`], [`ErrorKind::CorruptStream`]: the rest of
    /// a compressed input that cannot be decoded holds an unknown number of
    /// records), which no caller should take for a skipped record.
    pub fn is_bad_record(&self) -> bool {
        !matches!(
            self.kind,
            ErrorKind::Open(_)
                | ErrorKind::Read(_)
                | ErrorKind::Walk(_)
                | ErrorKind::UnknownFormat
                | ErrorKind::Parquet { .. }
                | ErrorKind::CorruptStream { .. }
        )
    }
}

/// What went wrong with an input or one of its records.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file or folder could not be opened (missing, permissions, ...).
    #[error("cannot open: {0}")]
    Open(#[source] io::Error),
    /// Reading failed part-way; the rest of this input is skipped.
    #[error("read failed: {0}")]
    Read(#[source] io::Error),
    /// A compressed input is corrupt or ends early (a truncated `.jsonl.gz`
    /// or `.jsonl.zst` file): the records before this place were read, the
    /// rest of the input cannot be (how many records it held is unknown).
    #[error(
        "corrupt or truncated {codec} stream: {source} (the rest of the input cannot be read)"
    )]
    CorruptStream {
        /// The compression format of the stream.
        codec: Compression,
        /// The decoder's own message.
        #[source]
        source: io::Error,
    },
    /// A corrupt or truncated gzip member in an input whose reader
    /// resynchronises on the next member (`.warc.gz`): the member's records
    /// are lost, reading goes on after it.
    #[error("corrupt or truncated {codec} stream: {source}")]
    Decompress {
        /// The compression format of the stream.
        codec: Compression,
        /// The decoder's own message.
        #[source]
        source: io::Error,
    },
    /// A folder could not be walked (a sub-folder that cannot be read, ...).
    #[error("cannot walk folder: {0}")]
    Walk(#[source] walkdir::Error),
    /// The format of a path cannot be told from its name.
    #[error("unknown format (give it explicitly, one of {names})", names = crate::format::Format::NAMES.join(", "))]
    UnknownFormat,
    /// The record is not valid UTF-8 (and lossy decoding was not asked for).
    #[error("invalid UTF-8 (first bad byte at byte {valid_up_to} of the record)")]
    InvalidUtf8 {
        /// Length of the valid prefix of the record.
        valid_up_to: usize,
    },
    /// A file with NUL bytes in its first 8 KiB: not text.
    #[error("binary file (NUL byte in the first 8 KiB)")]
    Binary,
    /// The record is bigger than `ReadOptions::max_document_bytes`.
    #[error("record of {size} bytes is over the limit of {limit} bytes (max_document_bytes)")]
    TooLarge {
        /// The record's size in bytes.
        size: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A Parquet column chunk declares more bytes than its rows could hold if each were within
    /// `ReadOptions::max_document_bytes`: some row is over the limit. The row group is skipped
    /// without being read (its place is its first row) and reading goes on with the next.
    #[error(
        "row group {group}: column `{column}` declares {size} bytes in {rows} row(s), more than \
         rows within the limit of {limit} bytes (max_document_bytes) can hold: its rows are \
         skipped unread"
    )]
    ChunkTooLarge {
        /// The row group (from 0).
        group: usize,
        /// Its rows.
        rows: u64,
        /// The column (its path, dotted).
        column: String,
        /// The uncompressed bytes the column chunk declares.
        size: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A page of a Parquet column chunk declares more bytes (uncompressed or compressed) than
    /// a page of values within `ReadOptions::max_document_bytes` can hold (3 × the limit and
    /// 64 KiB): it holds a value over the limit. Found from the page headers before the row
    /// group is read; the row group is skipped without being read (its place is its first
    /// row) and reading goes on with the next.
    #[error(
        "row group {group}: column `{column}` declares a page of {size} bytes (its header at \
         offset {offset}), more than a page of values within the limit of {limit} bytes \
         (max_document_bytes) can hold: its rows are skipped unread"
    )]
    PageTooLarge {
        /// The row group (from 0).
        group: usize,
        /// The column (its path, dotted).
        column: String,
        /// Where the page's header starts in the file.
        offset: u64,
        /// The larger of the page's declared uncompressed and compressed sizes.
        size: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A JSONL line is not valid JSON.
    #[error("malformed JSON at column {column}: {message}")]
    Json {
        /// 1-based column (byte) of the problem within the line.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A JSONL line is valid JSON but not an object.
    #[error("record is not a JSON object")]
    NotAnObject,
    /// A JSONL record has neither the text field nor the html field.
    #[error("record has no text field `{text}`{}", nor_html(.html.as_deref()))]
    MissingText {
        /// The configured text field name.
        text: String,
        /// The configured html field name, if one is read.
        html: Option<String>,
    },
    /// A JSONL field has the wrong JSON type (e.g. the text is a number).
    #[error("field `{field}` is {found}, expected {expected}")]
    WrongType {
        /// The field name.
        field: String,
        /// What was expected, e.g. `a string`.
        expected: &'static str,
        /// What was found, e.g. `a number`.
        found: &'static str,
    },
    /// Bytes that are not a record where a record (or gzip member) should
    /// start; the reader skipped them and resynchronised.
    #[error("skipped {bytes} bytes of garbage before the next {expected}")]
    Garbage {
        /// How many bytes were skipped.
        bytes: u64,
        /// What the reader was looking for, e.g. `WARC record`.
        expected: &'static str,
    },
    /// A WARC record header is malformed (bad first line, missing or invalid
    /// Content-Length, header too long, ...).
    #[error("malformed WARC record: {0}")]
    BadRecord(String),
    /// A WARC block is not followed by CRLF CRLF at its declared length: the
    /// Content-Length is wrong. The record is dropped and the reader
    /// resynchronises on the next `WARC/1.` line.
    #[error("Content-Length {declared} does not match the record (no CRLF CRLF after the block)")]
    BadLength {
        /// The declared Content-Length.
        declared: u64,
    },
    /// The input ends inside a WARC record.
    #[error("record truncated: Content-Length {declared} but only {available} bytes follow")]
    Truncated {
        /// The declared Content-Length.
        declared: u64,
        /// How many bytes the input still had.
        available: u64,
    },
    /// The HTTP response inside a WARC `response` record is malformed.
    #[error("malformed HTTP response: {what}")]
    Http {
        /// What is wrong (with the parser's or decoder's message, where one failed).
        what: String,
        /// The error of the HTTP parser or of the content decoder, where one failed.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A Parquet input cannot be read: not a file, not Parquet, or a page that does not
    /// decode. The rows before it were read; the rest of the input is not.
    #[error("cannot read Parquet: {what}")]
    Parquet {
        /// What cannot be read (with the decoder's message, where it failed).
        what: String,
        /// The decoder's failure, where it failed.
        #[source]
        source: Option<ParquetFailure>,
    },
}

/// Why the Parquet decoder failed: its error, or its panic caught at this crate's boundary.
#[derive(Debug, thiserror::Error)]
pub enum ParquetFailure {
    /// The Parquet reader returned an error.
    #[error(transparent)]
    Parquet(#[from] parquet::errors::ParquetError),
    /// The Arrow record batch reader returned an error.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The decoder panicked (a corrupt file): the panic's message.
    #[error("corrupt file (the decoder failed: {0})")]
    Panicked(String),
}

impl ErrorKind {
    /// A malformed HTTP response, for `what` alone (no parser error beneath it).
    pub(crate) fn http(what: impl Into<String>) -> ErrorKind {
        ErrorKind::Http {
            what: what.into(),
            source: None,
        }
    }

    /// A malformed HTTP response: `doing` failed with `source`.
    pub(crate) fn http_failed(
        doing: &str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> ErrorKind {
        ErrorKind::Http {
            what: format!("{doing}: {source}"),
            source: Some(Box::new(source)),
        }
    }

    /// A Parquet input that cannot be read, for `what` alone (no decoder error beneath it).
    pub(crate) fn parquet(what: impl Into<String>) -> ErrorKind {
        ErrorKind::Parquet {
            what: what.into(),
            source: None,
        }
    }

    /// A Parquet input that cannot be read: reading `part` (the footer, a row group) failed.
    pub(crate) fn parquet_failed(part: &str, failure: ParquetFailure) -> ErrorKind {
        ErrorKind::Parquet {
            what: format!("{part}: {failure}"),
            source: Some(failure),
        }
    }

    /// A short fixed label of the kind of problem, the reason a record is
    /// counted as skipped in [`crate::Accounting`]: `truncated record`,
    /// `corrupt gzip stream`, `malformed JSON`, ...
    pub fn reason(&self) -> &'static str {
        match self {
            ErrorKind::Open(_) => "cannot open",
            ErrorKind::Read(_) => "read failed",
            ErrorKind::Decompress { codec, .. } | ErrorKind::CorruptStream { codec, .. } => {
                match codec {
                    Compression::Gzip => "corrupt gzip stream",
                    Compression::Zstd => "corrupt zstd stream",
                    Compression::None => "corrupt stream",
                }
            }
            ErrorKind::Walk(_) => "cannot walk folder",
            ErrorKind::UnknownFormat => "unknown format",
            ErrorKind::InvalidUtf8 { .. } => "invalid UTF-8",
            ErrorKind::Binary => "binary file",
            ErrorKind::TooLarge { .. }
            | ErrorKind::ChunkTooLarge { .. }
            | ErrorKind::PageTooLarge { .. } => "over the size limit",
            ErrorKind::Json { .. } => "malformed JSON",
            ErrorKind::NotAnObject => "not a JSON object",
            ErrorKind::MissingText { .. } => "no text field",
            ErrorKind::WrongType { .. } => "field of the wrong type",
            ErrorKind::Garbage { .. } => "garbage between records",
            ErrorKind::BadRecord(_) => "malformed WARC record",
            ErrorKind::BadLength { .. } => "wrong Content-Length",
            ErrorKind::Truncated { .. } => "truncated record",
            ErrorKind::Parquet { .. } => "invalid Parquet",
            ErrorKind::Http { .. } => "malformed HTTP response",
        }
    }
}

/// The end of the [`ErrorKind::MissingText`] message: the html field looked
/// for too, if any.
fn nor_html(html: Option<&str>) -> String {
    html.map(|html| format!(" (nor html field `{html}`)"))
        .unwrap_or_default()
}
