//! Opening inputs: a path (file, folder, or `-` for stdin) → a stream of
//! documents, with the format detected or given, and [`open_inputs`] to chain
//! several paths in order.

use crate::document::{Document, Place};
use crate::error::{ErrorKind, IngestError};
use crate::folder::{read_whole, FolderReader};
use crate::format::{Compression, Format};
use crate::jsonl::JsonlReader;
use crate::options::ReadOptions;
use crate::stats::ReadStats;
use crate::warc::WarcReader;
use crate::window::Window;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A stream of documents from one or more inputs, type-erased (every reader
/// is one of these once opened). `Send`, so it can feed a thread pool.
pub type DocumentIter = Box<dyn Iterator<Item = Result<Document, IngestError>> + Send>;

/// Buffer size for decompressed JSONL.
const LINE_BUFFER: usize = 256 * 1024;

/// How many bytes of stdin are looked at to guess its format.
const SNIFF_BYTES: usize = 64 * 1024;

/// Opens `paths` in order and yields their documents one input after the
/// other. An input that cannot be opened yields one error and the next input
/// follows; see [`open_path`] for how each path is read.
pub fn open_inputs(paths: &[PathBuf], opts: &ReadOptions) -> Inputs {
    Inputs {
        paths: paths.iter().cloned().collect(),
        current: None,
        opts: Arc::new(opts.clone()),
        stats: Arc::default(),
    }
}

/// The documents of several inputs, in order; see [`open_inputs`].
pub struct Inputs {
    paths: VecDeque<PathBuf>,
    current: Option<DocumentIter>,
    opts: Arc<ReadOptions>,
    stats: Arc<ReadStats>,
}

impl Inputs {
    /// The counters of this run (documents, errors, skipped files, records
    /// and responses), updated as documents are read. Clone the `Arc` before
    /// handing the iterator to another thread to watch progress.
    pub fn stats(&self) -> &Arc<ReadStats> {
        &self.stats
    }
}

impl Iterator for Inputs {
    type Item = Result<Document, IngestError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.current.as_mut().and_then(Iterator::next) {
                match &item {
                    Ok(_) => self.stats.count_document(),
                    Err(err) => self.stats.count_error(err),
                }
                return Some(item);
            }
            let path = self.paths.pop_front()?;
            self.current = Some(open_path(&path, &self.opts, &self.stats));
        }
    }
}

/// Opens one input as a stream of documents.
///
/// * `-` is stdin; its format is `opts.format`, else guessed from its first
///   bytes ([`Format::sniff`]).
/// * A folder is walked ([`FolderReader`]).
/// * A file has `opts.format`, else the format of its name
///   ([`Format::from_extension`]); an unknown name yields one
///   [`ErrorKind::UnknownFormat`] error.
///
/// Skipped files, records and responses are counted in `stats`.
pub fn open_path(path: &Path, opts: &Arc<ReadOptions>, stats: &Arc<ReadStats>) -> DocumentIter {
    let source: Arc<Path> = Arc::from(path);
    if path == Path::new("-") {
        let mut stdin = Window::new(std::io::stdin());
        let format = match opts.format {
            Some(format) => format,
            None => match stdin.fill_to(SNIFF_BYTES) {
                Ok(prefix) => Format::sniff(prefix),
                Err(err) => return fail(source, ErrorKind::Read(err)),
            },
        };
        return open_reader(stdin, source, format, opts, stats);
    }
    if path.is_dir() {
        return Box::new(FolderReader::new(path, Arc::clone(opts)).with_stats(Arc::clone(stats)));
    }
    let Some(format) = opts.format.or_else(|| Format::from_extension(path)) else {
        return fail(source, ErrorKind::UnknownFormat);
    };
    open_file(source, format, opts, stats)
}

/// Opens a file of a known format (not a folder).
pub(crate) fn open_file(
    source: Arc<Path>,
    format: Format,
    opts: &Arc<ReadOptions>,
    stats: &Arc<ReadStats>,
) -> DocumentIter {
    match File::open(&source) {
        Ok(file) => open_reader(file, source, format, opts, stats),
        Err(err) => fail(source, ErrorKind::Open(err)),
    }
}

/// Reads an opened stream (a file, a pipe, bytes in memory) of `format`,
/// named `source` in places, with the reader for its format: the one way
/// every input is read, whoever opened it. A folder format yields one error;
/// skipped records are counted in `stats`.
pub fn open_reader<R: Read + Send + 'static>(
    reader: R,
    source: Arc<Path>,
    format: Format,
    opts: &Arc<ReadOptions>,
    stats: &Arc<ReadStats>,
) -> DocumentIter {
    let opts = Arc::clone(opts);
    let stats = Arc::clone(stats);
    match format {
        Format::Jsonl(Compression::None) => Box::new(JsonlReader::new(
            BufReader::with_capacity(LINE_BUFFER, reader),
            source,
            opts,
        )),
        Format::Jsonl(codec @ Compression::Gzip) => {
            let decoder = flate2::bufread::MultiGzDecoder::new(BufReader::new(reader));
            let lines = BufReader::with_capacity(LINE_BUFFER, decoder);
            Box::new(JsonlReader::new(lines, source, opts).decompressing(codec))
        }
        Format::Jsonl(codec @ Compression::Zstd) => match zstd::Decoder::new(reader) {
            Ok(decoder) => {
                let lines = BufReader::with_capacity(LINE_BUFFER, decoder);
                Box::new(JsonlReader::new(lines, source, opts).decompressing(codec))
            }
            Err(err) => fail(source, ErrorKind::Decompress { codec, source: err }),
        },
        Format::Warc => Box::new(WarcReader::new(reader, source, opts).with_stats(stats)),
        Format::WarcGz => Box::new(WarcReader::gzip(reader, source, opts).with_stats(stats)),
        Format::Text | Format::Html => {
            let id = source.to_string_lossy().into_owned();
            let place = Place::file(source);
            Box::new(std::iter::once(read_whole(
                reader,
                place,
                id,
                format == Format::Html,
                &opts,
            )))
        }
        Format::Dir => fail(
            source,
            ErrorKind::Open(std::io::Error::other("not a folder")),
        ),
    }
}

/// A stream holding one error.
fn fail(source: Arc<Path>, kind: ErrorKind) -> DocumentIter {
    Box::new(std::iter::once(Err(IngestError::new(
        Place::file(source),
        kind,
    ))))
}
