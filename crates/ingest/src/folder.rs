//! Folders: walked recursively in sorted order. `.txt` and `.html`/`.htm`
//! files are one document each (id: the path relative to the folder given);
//! JSONL and WARC files inside are read as such; other files are skipped and
//! counted.

use crate::charset;
use crate::document::{Body, Document, Place};
use crate::error::{ErrorKind, IngestError};
use crate::format::Format;
use crate::input::{open_file, DocumentIter};
use crate::options::ReadOptions;
use crate::stats::ReadStats;
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;

/// Streams the documents of a folder tree.
///
/// Paths are visited depth first with each folder's entries sorted by name,
/// so runs are deterministic. A binary file (NUL bytes in its first 8 KiB),
/// a file that is not UTF-8 (unless [`ReadOptions::lossy_utf8`]; an HTML file
/// may declare another charset) or over the size limit yields an error with
/// its path, and the walk goes on.
pub struct FolderReader {
    root: PathBuf,
    walker: walkdir::IntoIter,
    nested: Option<DocumentIter>,
    opts: Arc<ReadOptions>,
    stats: Arc<ReadStats>,
}

impl FolderReader {
    /// Walks `root`.
    pub fn new(root: impl Into<PathBuf>, opts: Arc<ReadOptions>) -> Self {
        let root = root.into();
        let walker = walkdir::WalkDir::new(&root)
            .follow_links(opts.follow_links)
            .sort_by_file_name()
            .into_iter();
        FolderReader {
            root,
            walker,
            nested: None,
            opts,
            stats: Arc::default(),
        }
    }

    /// Counts skipped files (and the records skipped in nested WARC files)
    /// into `stats` (shared with other readers) instead of its own counter.
    pub fn with_stats(mut self, stats: Arc<ReadStats>) -> Self {
        self.stats = stats;
        self
    }

    /// The counters of skipped files, records and responses.
    pub fn stats(&self) -> &Arc<ReadStats> {
        &self.stats
    }
}

impl Iterator for FolderReader {
    type Item = Result<Document, IngestError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.nested.as_mut().and_then(Iterator::next) {
                return Some(item);
            }
            self.nested = None;
            let entry = match self.walker.next()? {
                Ok(entry) => entry,
                Err(err) => {
                    let path = err.path().unwrap_or(&self.root).to_path_buf();
                    return Some(Err(IngestError::new(
                        Place::file(path),
                        ErrorKind::Walk(err),
                    )));
                }
            };
            if entry.file_type().is_dir() {
                continue;
            }
            let path = entry.into_path();
            match Format::from_extension(&path) {
                Some(format @ (Format::Text | Format::Html)) => {
                    let id = path
                        .strip_prefix(&self.root)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .into_owned();
                    let html = format == Format::Html;
                    return Some(read_file(path, id, html, &self.opts));
                }
                Some(format) => {
                    self.nested = Some(open_file(path.into(), format, &self.opts, &self.stats));
                }
                None => {
                    let kind = match path.extension() {
                        Some(ext) => format!("file .{}", ext.to_string_lossy().to_lowercase()),
                        None => "file without extension".to_string(),
                    };
                    self.stats.count_skipped_file(&kind);
                }
            }
        }
    }
}

/// Reads a whole file as one document.
fn read_file(
    path: PathBuf,
    id: String,
    html: bool,
    opts: &ReadOptions,
) -> Result<Document, IngestError> {
    let place = Place::file(path);
    let fail = |kind| IngestError::new(place.clone(), kind);
    let file = File::open(&place.source).map_err(|err| fail(ErrorKind::Open(err)))?;
    // Refuse a big file without reading it.
    let size = file
        .metadata()
        .map_err(|err| fail(ErrorKind::Read(err)))?
        .len();
    if size > opts.max_document_bytes {
        let limit = opts.max_document_bytes;
        return Err(fail(ErrorKind::TooLarge { size, limit }));
    }
    read_whole(file, place, id, html, opts, Some(size))
}

/// Reads a whole stream (a file, or stdin given as text or HTML) as one
/// document, refusing more than `max_document_bytes` (the rest is read
/// through to report the size, never held). `size`: the file's, if known.
pub(crate) fn read_whole(
    mut reader: impl Read,
    place: Place,
    id: String,
    html: bool,
    opts: &ReadOptions,
    size: Option<u64>,
) -> Result<Document, IngestError> {
    let fail = |kind| IngestError::new(place.clone(), kind);
    let limit = opts.max_document_bytes;
    // A file of known size is read in one call, into room for all of it (and a byte to see
    // the end), rather than in growing steps.
    let room = size.map_or(0, |size| size.min(limit).saturating_add(1));
    let mut bytes = Vec::with_capacity(usize::try_from(room).unwrap_or(0));
    reader
        .by_ref()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| fail(ErrorKind::Read(err)))?;
    if bytes.len() as u64 > limit {
        let rest =
            io::copy(&mut reader, &mut io::sink()).map_err(|err| fail(ErrorKind::Read(err)))?;
        let size = bytes.len() as u64 + rest;
        return Err(fail(ErrorKind::TooLarge { size, limit }));
    }
    let text = charset::decode_file(bytes, html, opts.lossy_utf8).map_err(fail)?;
    let body = if html {
        Body::Html(text)
    } else {
        Body::Text(text)
    };
    let title = crate::text::title_of(None, &body);
    Ok(Document {
        id,
        url: None,
        title,
        body,
        fetched_at: None,
        place,
        raw: None,
    })
}
