//! WARC files (`.warc`, `.warc.gz`): `response` records → [`Document`]s.
//!
//! A small reader of our own rather than the `warc` crate: that crate stops
//! at the first malformed record, trusts Content-Length blindly, cannot
//! resynchronise, and hides gzip member offsets. Crawls are messy, so this
//! reader
//! * reads each record into a look-ahead [`Window`] and checks that its block
//!   is followed by CRLF CRLF before using it; a wrong Content-Length is
//!   reported and the reader resynchronises on the next `WARC/1.` header,
//!   which may be inside the bad record's block;
//! * reports garbage between records (and between gzip members) with its
//!   offset and skips it;
//! * decodes `.warc.gz` as runs of consecutive intact members ([`Members`]),
//!   so a record may span members (BGZF-style files cut the stream every
//!   64 KB); places carry the offset of the member where the record starts
//!   (as CDX indexes do), and a corrupt member costs only the records that
//!   touch it: the reader goes on at the next gzip header;
//! * streams past records over `max_document_bytes` without holding them.
//!
//! Only `response` records with a 2xx status and a text/html, XHTML or
//! text/plain payload become documents; the rest is skipped and counted in
//! [`ReadStats`].

use crate::charset;
use crate::document::{Body, Document, Place};
use crate::error::{ErrorKind, IngestError};
use crate::format::Compression;
use crate::http;
use crate::members::{Members, GZIP_MAGIC};
use crate::options::{ReadOptions, WarcId};
use crate::stats::ReadStats;
use crate::window::Window;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

/// Longest WARC record header accepted.
const MAX_HEADER: usize = 64 * 1024;

/// How much is looked at, at a time, when scanning for a pattern.
const SCAN_SPAN: usize = 64 * 1024;

/// The start of a WARC record header (versions 1.0 and 1.1).
const WARC_MAGIC: &[u8] = b"WARC/1.";

/// Most compressed bytes kept to rewind to the start of a corrupt gzip member.
const MAX_REWIND: usize = 16 << 20;

/// Streams [`Document`]s from the `response` records of a WARC file.
pub struct WarcReader<R> {
    ctx: Context,
    source: Source<R>,
}

/// What the record parser needs besides the bytes.
struct Context {
    place: Place,
    opts: Arc<ReadOptions>,
    stats: Arc<ReadStats>,
}

enum Source<R> {
    Plain(Window<R>),
    Gzip(Gzip<R>),
    Done,
}

/// A `.warc.gz` being read: runs of consecutive intact members, and the
/// compressed stream between them.
struct Gzip<R> {
    /// The compressed stream, between runs of members (`None` at the end).
    compressed: Option<Window<R>>,
    /// The run of members being read.
    run: Option<Box<Run<R>>>,
    /// Skip garbage silently: we are resynchronising after a corrupt
    /// member, which was already reported.
    quiet: bool,
    /// A run has ended before: the next one may start inside a record.
    resumed: bool,
    /// The decompressed-data buffer, kept from run to run.
    spare: Vec<u8>,
}

/// A run of consecutive intact gzip members, decompressed.
struct Run<R> {
    data: Window<Members<R>>,
    /// The run follows a break (a corrupt member, garbage): the bytes before
    /// its first `WARC/1.` are the rest of a record already reported as lost,
    /// and are skipped without another error.
    skip_tail: bool,
}

/// The outcome of one parsing step.
enum Step {
    Doc(Box<Document>),
    Skipped,
    Error(IngestError),
    End,
}

impl<R: Read> WarcReader<R> {
    /// Reads an uncompressed WARC stream; `source` names it in places.
    pub fn new(reader: R, source: impl Into<Arc<Path>>, opts: Arc<ReadOptions>) -> Self {
        Self::with_source(Source::Plain(Window::new(reader)), source, opts)
    }

    /// Reads a gzip-compressed WARC stream: normally one gzip member per
    /// record, but one member holding every record, or members cut anywhere
    /// (BGZF-style), work too.
    pub fn gzip(reader: R, source: impl Into<Arc<Path>>, opts: Arc<ReadOptions>) -> Self {
        let gz = Source::Gzip(Gzip {
            compressed: Some(Window::new(reader)),
            run: None,
            quiet: false,
            resumed: false,
            spare: Vec::new(),
        });
        Self::with_source(gz, source, opts)
    }

    /// Counts skipped records and responses into `stats` (shared with other
    /// readers) instead of a counter of its own.
    pub fn with_stats(mut self, stats: Arc<ReadStats>) -> Self {
        self.ctx.stats = stats;
        self
    }

    /// The counters of skipped records and responses.
    pub fn stats(&self) -> &Arc<ReadStats> {
        &self.ctx.stats
    }

    fn with_source(source: Source<R>, name: impl Into<Arc<Path>>, opts: Arc<ReadOptions>) -> Self {
        WarcReader {
            ctx: Context {
                place: Place::file(name),
                opts,
                stats: Arc::default(),
            },
            source,
        }
    }

    fn step(&mut self) -> Step {
        let ctx = &self.ctx;
        match &mut self.source {
            Source::Done => Step::End,
            Source::Plain(window) => match ctx.record(window, |w| w.offset()) {
                Ok(Step::End) => {
                    self.source = Source::Done;
                    Step::End
                }
                Ok(step) => step,
                Err(err) => {
                    let error = IngestError::new(
                        ctx.place.at_offset(window.offset()),
                        ErrorKind::Read(err),
                    );
                    self.source = Source::Done;
                    Step::Error(error)
                }
            },
            Source::Gzip(gzip) => gzip.step(ctx),
        }
    }
}

impl<R: Read> Gzip<R> {
    fn step(&mut self, ctx: &Context) -> Step {
        if let Some(run) = self.run.as_mut() {
            return match ctx.run_record(run) {
                Ok(Step::End) => self.end_run(ctx),
                Ok(step) => step,
                Err(err) => {
                    let at = run.data.inner_mut().current_member();
                    self.stop();
                    Step::Error(IngestError::new(
                        ctx.place.at_offset(at),
                        ErrorKind::Read(err),
                    ))
                }
            };
        }
        let Some(mut window) = self.compressed.take() else {
            return Step::End;
        };
        let start = window.offset();
        let (skipped, found) = match scan_to(&mut window, GZIP_MAGIC) {
            Ok(scan) => scan,
            Err(err) => {
                self.stop();
                let error = IngestError::new(ctx.place.at_offset(start), ErrorKind::Read(err));
                return Step::Error(error);
            }
        };
        if found {
            let members = Members::new(window, ctx.rewind_cap());
            self.run = Some(Box::new(Run {
                data: Window::with_buffer(members, std::mem::take(&mut self.spare)),
                skip_tail: self.resumed,
            }));
        }
        if skipped > 0 && !self.quiet {
            let kind = ErrorKind::Garbage {
                bytes: skipped,
                expected: "gzip member",
            };
            return Step::Error(IngestError::new(ctx.place.at_offset(start), kind));
        }
        Step::Skipped
    }

    /// The run has ended: back to the compressed stream, with an error if a
    /// corrupt member ended it.
    fn end_run(&mut self, ctx: &Context) -> Step {
        let Some(run) = self.run.take() else {
            return Step::End;
        };
        let (members, buf) = run.data.into_parts();
        self.spare = buf;
        let (window, corrupt) = members.finish();
        self.compressed = window;
        self.quiet = corrupt.is_some();
        self.resumed = true;
        let Some(corrupt) = corrupt else {
            return Step::Skipped;
        };
        let kind = ErrorKind::Decompress {
            codec: Compression::Gzip,
            source: corrupt.source,
        };
        Step::Error(IngestError::new(ctx.place.at_offset(corrupt.offset), kind))
    }

    /// Nothing more is read.
    fn stop(&mut self) {
        self.compressed = None;
        self.run = None;
    }
}

impl<R: Read> Iterator for WarcReader<R> {
    type Item = Result<Document, IngestError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.step() {
                Step::Doc(doc) => return Some(Ok(*doc)),
                Step::Error(err) => return Some(Err(err)),
                Step::Skipped => continue,
                Step::End => return None,
            }
        }
    }
}

/// The WARC header fields this reader uses.
#[derive(Default)]
struct Header {
    /// `WARC-Type`, lower case (`response`, `request`, `metadata`, ...).
    warc_type: Option<String>,
    content_length: Option<u64>,
    target_uri: Option<String>,
    record_id: Option<String>,
    date: Option<String>,
}

impl Context {
    /// How much of a gzip member's compressed bytes are kept to go back to
    /// its start should it prove corrupt, and of its decompressed bytes held
    /// back until its CRC is checked: a member normally holds one record (at
    /// most `max_document_bytes`) or 64 KB; a bigger one (a whole file in one
    /// member) is streamed unverified and not rewound, to keep memory bounded.
    fn rewind_cap(&self) -> usize {
        usize::try_from(self.opts.max_document_bytes)
            .unwrap_or(usize::MAX)
            .min(MAX_REWIND)
    }

    /// Parses the next record of a run of gzip members; the place of a
    /// record is the offset of the member where it starts (as in CDX
    /// indexes).
    fn run_record<R: Read>(&self, run: &mut Run<R>) -> io::Result<Step> {
        if run.skip_tail {
            run.skip_tail = false;
            scan_to(&mut run.data, WARC_MAGIC)?;
        }
        self.record(&mut run.data, |w| {
            let at = w.offset();
            w.inner_mut().member_at(at)
        })
    }

    /// Parses the next record of `w`; `place_of` gives the offset of its
    /// place from the window at the record's start. An I/O error is returned
    /// as such.
    fn record<R: Read>(
        &self,
        w: &mut Window<R>,
        place_of: impl FnOnce(&mut Window<R>) -> u64,
    ) -> io::Result<Step> {
        if !skip_blank_lines(w)? {
            return Ok(Step::End);
        }
        let place = self.place.at_offset(place_of(w));
        let error = |kind| Ok(Step::Error(IngestError::new(place.clone(), kind)));
        if !w.fill_to(WARC_MAGIC.len())?.starts_with(WARC_MAGIC) {
            let (bytes, _) = scan_to(w, WARC_MAGIC)?;
            return error(ErrorKind::Garbage {
                bytes,
                expected: "WARC record",
            });
        }
        let avail = w.fill_to(MAX_HEADER)?;
        let Some(header_len) = header_end(avail) else {
            let problem = if avail.len() < MAX_HEADER {
                "the input ends inside the header".to_string()
            } else {
                format!("no end of header within {MAX_HEADER} bytes")
            };
            resync(w)?;
            return error(ErrorKind::BadRecord(problem));
        };
        let header = parse_header(&avail[..header_len]);
        let Some(length) = header.content_length else {
            resync(w)?;
            return error(ErrorKind::BadRecord(
                "missing or invalid Content-Length".into(),
            ));
        };
        if length > self.opts.max_document_bytes {
            w.consume_buffered(header_len);
            return self.skip_oversized(w, &header, length, place);
        }
        let is_response = header.warc_type.as_deref() == Some("response");
        // `length <= limit`, which fits in memory by the caller's choice.
        let block_end = header_len + length as usize;
        let avail = w.fill_to(block_end + 4)?;
        if avail.len() < block_end {
            // The input ends inside the declared block: the rest of the
            // input is in the window, and the records in it are read.
            let available = (avail.len() - header_len) as u64;
            resync(w)?;
            return error(ErrorKind::Truncated {
                declared: length,
                available,
            });
        }
        let Some(trailer) = trailer_len(&avail[block_end..], avail.len() < block_end + 4) else {
            resync(w)?;
            return error(ErrorKind::BadLength { declared: length });
        };
        let record_len = block_end + trailer;
        let step = if is_response {
            let record = &avail[..record_len];
            match self.response(&header, &avail[header_len..block_end], record, &place) {
                Ok(Ok(doc)) => Step::Doc(Box::new(doc)),
                Ok(Err(kind)) => {
                    self.stats.count_skipped_response(&kind);
                    Step::Skipped
                }
                Err(kind) => Step::Error(IngestError::new(place, kind)),
            }
        } else {
            self.not_response(&header)
        };
        w.consume_buffered(record_len);
        Ok(step)
    }

    /// Skips the block of a record over the size limit (`length` declared; its header
    /// consumed) and its trailer: a response is [`ErrorKind::TooLarge`], another record is
    /// skipped as it would be anyway.
    fn skip_oversized<R: Read>(
        &self,
        w: &mut Window<R>,
        header: &Header,
        length: u64,
        place: Place,
    ) -> io::Result<Step> {
        let limit = self.opts.max_document_bytes;
        let error = |kind| Ok(Step::Error(IngestError::new(place, kind)));
        let hold = usize::try_from(limit).unwrap_or(usize::MAX);
        if let Some(available) = skip_block(w, length, hold)? {
            return error(ErrorKind::Truncated {
                declared: length,
                available,
            });
        }
        let after = w.fill_to(4)?;
        match trailer_len(after, after.len() < 4) {
            Some(trailer) => w.consume_buffered(trailer),
            None => resync(w)?,
        }
        if header.warc_type.as_deref() == Some("response") {
            return error(ErrorKind::TooLarge {
                size: length,
                limit,
            });
        }
        Ok(self.not_response(header))
    }

    /// A record that is not a response, counted by its type.
    fn not_response(&self, header: &Header) -> Step {
        let warc_type = header.warc_type.as_deref().unwrap_or("without WARC-Type");
        self.stats
            .count_skipped_record(&format!("warc {warc_type}"));
        Step::Skipped
    }

    /// Turns a response record into a document, or says what else it is
    /// (`http 404`, `content-type image/png`, ...) if it is not one.
    fn response(
        &self,
        header: &Header,
        block: &[u8],
        record: &[u8],
        place: &Place,
    ) -> Result<Result<Document, String>, ErrorKind> {
        let Some(response) = http::parse_response(block, self.opts.max_document_bytes)? else {
            return Ok(Err("content-encoding unsupported".into()));
        };
        if !(200..300).contains(&response.status) {
            return Ok(Err(format!("http {}", response.status)));
        }
        let mime = response
            .content_type
            .as_deref()
            .and_then(|ct| ct.split(';').next())
            .map(|m| m.trim().to_ascii_lowercase());
        let html = match mime.as_deref() {
            Some("text/html" | "application/xhtml+xml") => true,
            Some("text/plain") => false,
            None | Some("") => looks_like_html(&response.body),
            Some(other) => return Ok(Err(format!("content-type {other}"))),
        };
        if mime.is_none() && !html {
            return Ok(Err("content-type none, not HTML".into()));
        }
        let text = charset::decode_web(&response.body, response.content_type.as_deref(), html);
        let body = if html {
            Body::Html(text)
        } else {
            Body::Text(text)
        };
        let title = crate::text::title_of(None, &body);
        let (uri, record_id) = (header.target_uri.as_ref(), header.record_id.as_ref());
        let id = match self.opts.warc_id {
            WarcId::TargetUri => uri.or(record_id),
            WarcId::RecordId => record_id.or(uri),
        };
        Ok(Ok(Document {
            id: id.map_or_else(|| place.to_string(), String::clone),
            url: header.target_uri.clone(),
            title,
            body,
            fetched_at: header.date.clone(),
            place: place.clone(),
            raw: self.opts.keep_raw.then(|| record.into()),
        }))
    }
}

/// Length of the header including the empty line that ends it, if complete.
fn header_end(data: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\n', data).find_map(|i| match data.get(i + 1..) {
        Some([b'\n', ..]) => Some(i + 2),
        Some([b'\r', b'\n', ..]) => Some(i + 3),
        _ => None,
    })
}

/// Parses `Name: value` lines (after the version line), leniently.
fn parse_header(data: &[u8]) -> Header {
    let mut header = Header::default();
    let text = std::str::from_utf8(data).unwrap_or_else(|err| {
        // Header values are ASCII by the standard; keep the valid prefix.
        std::str::from_utf8(&data[..err.valid_up_to()]).unwrap_or_default()
    });
    for line in text.lines().skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let unbracketed = value
            .strip_prefix('<')
            .and_then(|v| v.strip_suffix('>'))
            .unwrap_or(value);
        match name.trim().to_ascii_lowercase().as_str() {
            "warc-type" => header.warc_type = Some(value.to_ascii_lowercase()),
            "content-length" => header.content_length = value.parse().ok(),
            "warc-target-uri" => header.target_uri = Some(unbracketed.to_string()),
            "warc-record-id" => header.record_id = Some(unbracketed.to_string()),
            "warc-date" => header.date = Some(value.to_string()),
            _ => {}
        }
    }
    header
}

/// Length of the record trailer at the start of `after`: CRLF CRLF (or LF LF
/// from sloppy writers), or whatever line ends remain at the end of input.
/// `None` if the block is not followed by a trailer: a wrong Content-Length.
fn trailer_len(after: &[u8], at_end: bool) -> Option<usize> {
    if after.starts_with(b"\r\n\r\n") {
        Some(4)
    } else if after.starts_with(b"\n\n") {
        Some(2)
    } else if at_end && after.iter().all(|&b| b == b'\r' || b == b'\n') {
        Some(after.len())
    } else {
        None
    }
}

/// Skips the blank lines (tolerated) before a record; false at the end of the input.
fn skip_blank_lines<R: Read>(w: &mut Window<R>) -> io::Result<bool> {
    loop {
        let avail = w.fill_to(1)?;
        if avail.is_empty() {
            return Ok(false);
        }
        let blank = avail
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        if blank == 0 {
            return Ok(true);
        }
        w.consume_buffered(blank);
    }
}

/// After a bad record at the window's position: skips its `WARC/1.` and
/// everything up to the next one (which may be inside the bad block).
fn resync<R: Read>(w: &mut Window<R>) -> io::Result<()> {
    w.consume_buffered(WARC_MAGIC.len());
    scan_to(w, WARC_MAGIC).map(drop)
}

/// Streams past the `length` bytes of a block over the memory limit. If the
/// input ends first, the block was truncated (or its Content-Length is wrong)
/// and the records that follow it may lie inside the declared length: so at
/// each `WARC/1.` inside the block, up to `hold` bytes are kept in the window
/// until the block is known to be whole. Returns `None` once the block is
/// skipped, or `Some(bytes until the end)` for a truncated block, the window
/// then at the first `WARC/1.` within `hold` bytes of the end (or at the end).
fn skip_block<R: Read>(w: &mut Window<R>, length: u64, hold: usize) -> io::Result<Option<u64>> {
    let finder = memchr::memmem::Finder::new(WARC_MAGIC);
    let mut left = length;
    while left > 0 {
        let avail = w.fill_to(SCAN_SPAN)?;
        let at_end = avail.len() < SCAN_SPAN;
        let span = avail.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if span == 0 {
            return Ok(Some(length - left));
        }
        if let Some(at) = finder.find(&avail[..span]) {
            w.consume_buffered(at);
            left -= at as u64;
            let want = usize::try_from(left).unwrap_or(usize::MAX).min(hold);
            let held = w.fill_to(want)?.len();
            if held < want {
                return Ok(Some(length - left + held as u64));
            }
            if want as u64 == left {
                w.consume_buffered(want);
                return Ok(None);
            }
            // Too far from the end to be held: a `WARC/1.` in the content.
            w.consume_buffered(WARC_MAGIC.len());
            left -= WARC_MAGIC.len() as u64;
            continue;
        }
        // Keep a tail that may hold the start of a `WARC/1.`.
        let n = if at_end || span as u64 == left {
            span
        } else {
            span + 1 - WARC_MAGIC.len()
        };
        w.consume_buffered(n);
        left -= n as u64;
    }
    Ok(None)
}

/// Consumes bytes up to the next occurrence of `pattern` (or to the end);
/// returns how many were skipped and whether the pattern was found.
fn scan_to<R: Read>(w: &mut Window<R>, pattern: &[u8]) -> io::Result<(u64, bool)> {
    let finder = memchr::memmem::Finder::new(pattern);
    let mut skipped = 0u64;
    loop {
        let avail = w.fill_to(SCAN_SPAN)?;
        if let Some(at) = finder.find(avail) {
            w.consume_buffered(at);
            return Ok((skipped + at as u64, true));
        }
        let at_end = avail.len() < SCAN_SPAN;
        let n = if at_end {
            avail.len()
        } else {
            avail.len() + 1 - pattern.len()
        };
        w.consume_buffered(n);
        skipped += n as u64;
        if at_end {
            return Ok((skipped, false));
        }
    }
}

/// For a response without Content-Type: does the payload start like HTML?
fn looks_like_html(body: &[u8]) -> bool {
    let head = body[..body.len().min(512)]
        .trim_ascii_start()
        .to_ascii_lowercase();
    head.starts_with(b"<!doctype html") || head.starts_with(b"<html") || head.starts_with(b"<head")
}
