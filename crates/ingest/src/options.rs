//! [`ReadOptions`]: how the readers read; one value shared by all inputs.

use crate::format::Format;

/// The default of [`ReadOptions::max_document_bytes`]: 64 MiB.
pub const DEFAULT_MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// Options for every reader. `ReadOptions::default()` is what the CLI uses
/// when no flag is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Use this format for every path instead of detecting it from the name
    /// (default: `None`, detect). A folder is always walked as a folder.
    pub format: Option<Format>,
    /// JSONL field names.
    pub fields: JsonlFields,
    /// Largest record accepted, in bytes (default 64 MiB): a JSONL line, a
    /// file of a folder, a WARC record block. A bigger one is reported as
    /// [`crate::ErrorKind::TooLarge`] with its place and skipped without being
    /// held in memory, so memory stays bounded on hostile input.
    pub max_document_bytes: u64,
    /// Decode invalid UTF-8 in JSONL lines and text files with U+FFFD
    /// replacement characters instead of reporting an error (default false).
    pub lossy_utf8: bool,
    /// Keep each record's raw bytes in [`crate::Document::raw`] so that kept
    /// records can be written out unchanged (default false: it costs memory).
    pub keep_raw: bool,
    /// Which WARC header becomes the document id.
    pub warc_id: WarcId,
    /// Follow symbolic links when walking folders (default false).
    pub follow_links: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            fields: JsonlFields::default(),
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            lossy_utf8: false,
            keep_raw: false,
            warc_id: WarcId::TargetUri,
            follow_links: false,
        }
    }
}

/// Names of the JSONL fields that make a [`crate::Document`]. Fields not
/// named here are ignored; a named field that is absent or `null` is `None`.
/// The optional fields can be left out (`None`): a caller that wants only the
/// id and the text (`neardup fingerprint`) then neither reads nor type-checks
/// the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonlFields {
    /// Id field (default `id`): a string or a number (rendered in decimal).
    /// When absent, the id is `<file>:<line>`.
    pub id: String,
    /// Text field (default `text`): a string; becomes [`crate::Body::Text`].
    pub text: String,
    /// HTML field (default `html`), used when the text field is absent:
    /// becomes [`crate::Body::Html`].
    pub html: Option<String>,
    /// URL field (default `url`).
    pub url: Option<String>,
    /// Title field (default `title`).
    pub title: Option<String>,
    /// Fetch time field (default `fetched_at`).
    pub fetched_at: Option<String>,
}

impl JsonlFields {
    /// Only an id and a text field: what fingerprinting a line needs.
    pub fn id_and_text(id: impl Into<String>, text: impl Into<String>) -> Self {
        JsonlFields {
            id: id.into(),
            text: text.into(),
            html: None,
            url: None,
            title: None,
            fetched_at: None,
        }
    }
}

impl Default for JsonlFields {
    fn default() -> Self {
        JsonlFields {
            html: Some("html".into()),
            url: Some("url".into()),
            title: Some("title".into()),
            fetched_at: Some("fetched_at".into()),
            ..JsonlFields::id_and_text("id", "text")
        }
    }
}

/// Which WARC header names a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WarcId {
    /// `WARC-Target-URI` (the page URL), falling back to `WARC-Record-ID`.
    #[default]
    TargetUri,
    /// `WARC-Record-ID` (unique per record, even for a URL fetched twice).
    RecordId,
}
