//! [`ReadStats`]: counts of what the readers yielded and skipped.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters shared by all readers of one [`crate::open_inputs`] run. They are
/// atomics so that the caller can read them while another thread consumes the
/// documents (e.g. for a progress bar).
#[derive(Debug, Default)]
pub struct ReadStats {
    documents: AtomicU64,
    errors: AtomicU64,
    skipped_files: AtomicU64,
    skipped_records: AtomicU64,
    skipped_responses: AtomicU64,
}

/// A copy of the [`ReadStats`] counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StatsSnapshot {
    /// Documents yielded (counted by [`crate::Inputs`]).
    pub documents: u64,
    /// Errors yielded: bad records, unreadable inputs (counted by
    /// [`crate::Inputs`]).
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

    pub(crate) fn count_document(&self) {
        self.documents.fetch_add(1, Relaxed);
    }

    pub(crate) fn count_error(&self) {
        self.errors.fetch_add(1, Relaxed);
    }

    pub(crate) fn count_skipped_file(&self) {
        self.skipped_files.fetch_add(1, Relaxed);
    }

    pub(crate) fn count_skipped_record(&self) {
        self.skipped_records.fetch_add(1, Relaxed);
    }

    pub(crate) fn count_skipped_response(&self) {
        self.skipped_responses.fetch_add(1, Relaxed);
    }
}
