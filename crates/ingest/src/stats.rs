//! [`ReadStats`]: counts of what the readers yielded and skipped, and the
//! [`Accounting`] of every record read.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// Most distinct kinds one [`Accounting`] map holds; rarer kinds are counted
/// under [`OTHER_KIND`], so a hostile input cannot make the map grow without
/// bound.
pub const MAX_KINDS: usize = 64;

/// The kind rare kinds are counted under once a map holds [`MAX_KINDS`].
pub const OTHER_KIND: &str = "other";

/// Longest kind kept (longer ones, e.g. a content type from the input, are
/// cut at a character boundary).
const MAX_KIND_LEN: usize = 80;

/// Counters shared by all readers of one read of a [`crate::Corpus`]. They are
/// atomics so that the caller can read them while another thread consumes the
/// documents (e.g. for a progress bar).
#[derive(Debug, Default)]
pub struct ReadStats {
    documents: AtomicU64,
    errors: AtomicU64,
    skipped_files: AtomicU64,
    skipped_records: AtomicU64,
    skipped_responses: AtomicU64,
    kinds: Mutex<Kinds>,
}

/// The per-kind counts of an [`Accounting`], filled as records are read.
#[derive(Debug, Default)]
struct Kinds {
    skipped: BTreeMap<String, u64>,
    not_documents: BTreeMap<String, u64>,
}

/// Every record a run read, in exactly one of three columns, so that
/// [`Accounting::records`] is what the inputs hold:
/// * documents yielded;
/// * records skipped, by reason ([`crate::ErrorKind::reason`]: `truncated
///   record`, `corrupt gzip stream`, `malformed JSON`, ...): each error the
///   readers yielded, a damaged record or span of input;
/// * records that are not documents, by type: `warc request`, `warc
///   metadata`, `http 404`, `content-type image/png`, `file .png` (a file in
///   a folder that is of no known format), ...
///
/// Blank lines between JSON Lines records and between WARC records are not
/// records. See [`ReadStats::accounting`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Accounting {
    /// Documents yielded.
    pub documents: u64,
    /// Records skipped as damaged or unreadable, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Records read that are not documents, by type.
    pub not_documents: BTreeMap<String, u64>,
}

impl Accounting {
    /// Every record read: documents, skipped and not documents.
    pub fn records(&self) -> u64 {
        self.documents + self.skipped_total() + self.not_documents_total()
    }

    /// Records skipped, whatever the reason.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    /// Records that are not documents, whatever the type.
    pub fn not_documents_total(&self) -> u64 {
        self.not_documents.values().sum()
    }
}

/// One line, e.g. `5 records: 2 documents, 1 skipped (truncated record: 1),
/// 2 not documents (http 404: 1, warc request: 1)`.
impl fmt::Display for Accounting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn column(
            f: &mut fmt::Formatter<'_>,
            total: u64,
            label: &str,
            kinds: &BTreeMap<String, u64>,
        ) -> fmt::Result {
            write!(f, "{total} {label}")?;
            if !kinds.is_empty() {
                let kinds: Vec<_> = kinds.iter().map(|(k, n)| format!("{k}: {n}")).collect();
                write!(f, " ({})", kinds.join(", "))?;
            }
            Ok(())
        }
        write!(
            f,
            "{} records: {} documents, ",
            self.records(),
            self.documents
        )?;
        column(f, self.skipped_total(), "skipped", &self.skipped)?;
        f.write_str(", ")?;
        column(
            f,
            self.not_documents_total(),
            "not documents",
            &self.not_documents,
        )
    }
}

/// A copy of the [`ReadStats`] counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StatsSnapshot {
    /// Documents handed over (counted by [`crate::Corpus`]).
    pub documents: u64,
    /// Bad records skipped (counted by [`crate::Corpus`]).
    pub errors: u64,
    /// Files in folders skipped because their extension is not a known format.
    pub skipped_files: u64,
    /// WARC records that are not `response` records (request, metadata, ...).
    pub skipped_records: u64,
    /// WARC responses that are not documents: status not 2xx, content type
    /// not text/html or text/plain, or an unsupported Content-Encoding.
    pub skipped_responses: u64,
}

impl ReadStats {
    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            documents: self.documents.load(Relaxed),
            errors: self.errors.load(Relaxed),
            skipped_files: self.skipped_files.load(Relaxed),
            skipped_records: self.skipped_records.load(Relaxed),
            skipped_responses: self.skipped_responses.load(Relaxed),
        }
    }

    /// Every record read so far, documents, skipped (by reason) and not
    /// documents (by type); see [`Accounting`].
    pub fn accounting(&self) -> Accounting {
        let kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        Accounting {
            documents: self.documents.load(Relaxed),
            skipped: kinds.skipped.clone(),
            not_documents: kinds.not_documents.clone(),
        }
    }

    /// A document handed over.
    pub(crate) fn count_document(&self) {
        self.documents.fetch_add(1, Relaxed);
    }

    /// A bad record skipped, counted by its reason.
    pub(crate) fn count_error(&self, error: &crate::IngestError) {
        self.errors.fetch_add(1, Relaxed);
        self.count_kind(|k| &mut k.skipped, error.kind.reason());
    }

    /// A file of no known format in a folder; `kind` says which, e.g. `file .png`.
    pub(crate) fn count_skipped_file(&self, kind: &str) {
        self.skipped_files.fetch_add(1, Relaxed);
        self.count_kind(|k| &mut k.not_documents, kind);
    }

    /// A WARC record that is not a response; `kind` says which, e.g. `warc request`.
    pub(crate) fn count_skipped_record(&self, kind: &str) {
        self.skipped_records.fetch_add(1, Relaxed);
        self.count_kind(|k| &mut k.not_documents, kind);
    }

    /// A WARC response that is not a document; `kind` says why, e.g. `http 404`.
    pub(crate) fn count_skipped_response(&self, kind: &str) {
        self.skipped_responses.fetch_add(1, Relaxed);
        self.count_kind(|k| &mut k.not_documents, kind);
    }

    fn count_kind(&self, map: impl FnOnce(&mut Kinds) -> &mut BTreeMap<String, u64>, kind: &str) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let map = map(&mut kinds);
        let mut end = kind.len().min(MAX_KIND_LEN);
        while !kind.is_char_boundary(end) {
            end -= 1;
        }
        let kind = &kind[..end];
        if let Some(count) = map.get_mut(kind) {
            *count += 1;
        } else {
            let kind = if map.len() < MAX_KINDS - 1 {
                kind
            } else {
                OTHER_KIND
            };
            *map.entry(kind.to_string()).or_default() += 1;
        }
    }
}
