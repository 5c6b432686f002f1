//! [`Document`]: what every reader yields, and [`Place`]: where it came from.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Where a document or an error comes from: a file (or `-` for stdin) and,
/// when meaningful, a 1-based line (JSONL) or a byte offset (WARC).
///
/// Displays as `file.jsonl:17`, `crawl.warc.gz@123456` or just `page.html`.
/// The source is shared (`Arc`) so that cloning a place per record is cheap.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    /// The input path as given (or found in a folder); `-` means stdin.
    pub source: Arc<Path>,
    /// 1-based line number within the (decompressed) input, for line formats.
    pub line: Option<u64>,
    /// Byte offset of the record: in the file for `.warc`, of the gzip member
    /// holding the record for `.warc.gz` (the convention of CDX indexes).
    pub offset: Option<u64>,
}

impl Place {
    /// The whole of `source`, without line or offset.
    pub fn file(source: impl Into<Arc<Path>>) -> Self {
        Place {
            source: source.into(),
            line: None,
            offset: None,
        }
    }

    /// The same source at a 1-based line.
    pub fn at_line(&self, line: u64) -> Self {
        Place {
            source: Arc::clone(&self.source),
            line: Some(line),
            offset: None,
        }
    }

    /// The same source at a byte offset.
    pub fn at_offset(&self, offset: u64) -> Self {
        Place {
            source: Arc::clone(&self.source),
            line: None,
            offset: Some(offset),
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(offset) = self.offset {
            write!(f, "@{offset}")?;
        }
        Ok(())
    }
}

/// The content of a document: plain text, or HTML whose main text is still
/// to be extracted (see [`crate::text::document_text`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// Plain text, used as is.
    Text(String),
    /// An HTML page (already decoded to UTF-8).
    Html(String),
}

impl Body {
    /// The body as given (text, or HTML source).
    pub fn as_str(&self) -> &str {
        match self {
            Body::Text(s) | Body::Html(s) => s,
        }
    }

    /// True for [`Body::Html`].
    pub fn is_html(&self) -> bool {
        matches!(self, Body::Html(_))
    }
}

/// One input record: what the fingerprinting layers consume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// The record's identifier: the JSONL id field (a number is rendered in
    /// decimal), the WARC target URI or record id, the file path relative to
    /// the folder given; `<file>:<line>` when a JSONL record has none.
    pub id: String,
    /// The URL the content was fetched from, as given (not canonicalised;
    /// see [`crate::url::canonicalize`]).
    pub url: Option<String>,
    /// The title: the title field, else the HTML `<title>`.
    pub title: Option<String>,
    /// The text or HTML content.
    pub body: Body,
    /// When the content was fetched, as the source gives it (WARC-Date is
    /// RFC 3339; JSONL values are passed through unchecked).
    pub fetched_at: Option<String>,
    /// Where the record is in the input.
    pub place: Place,
    /// The input record byte for byte, when [`crate::ReadOptions::keep_raw`]
    /// is set: a JSONL line without its `\n` (write it back followed by `\n`),
    /// or an uncompressed WARC record including its trailing CRLF CRLF.
    /// `None` for files read whole from a folder: the file is the record.
    /// This is what `neardup dedup --kept` writes out unchanged.
    pub raw: Option<Box<[u8]>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_display() {
        let p = Place::file(Path::new("data/file.jsonl"));
        assert_eq!(p.to_string(), "data/file.jsonl");
        assert_eq!(p.at_line(17).to_string(), "data/file.jsonl:17");
        let w = Place::file(Path::new("crawl.warc.gz"));
        assert_eq!(w.at_offset(123456).to_string(), "crawl.warc.gz@123456");
        assert_eq!(Place::file(Path::new("-")).at_line(3).to_string(), "-:3");
    }
}
