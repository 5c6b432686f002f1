//! Opening one input: a path (file, folder, or `-` for stdin) → a stream of
//! documents, with the format detected or given. [`crate::Corpus`] reads many
//! inputs through [`OpenedInput`] and [`crate::FolderReader`].

use crate::document::{Document, Place};
use crate::error::{ErrorKind, IngestError};
use crate::folder::{read_whole, FolderReader};
use crate::format::{Compression, Format};
use crate::jsonl::JsonlReader;
use crate::options::ReadOptions;
use crate::parquet::{not_seekable, ParquetReader};
use crate::stats::ReadStats;
use crate::warc::WarcReader;
use crate::window::Window;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;

/// A stream of documents from one or more inputs, type-erased (every reader
/// is one of these once opened). `Send`, so it can feed a thread pool.
pub type DocumentIter = Box<dyn Iterator<Item = Result<Document, IngestError>> + Send>;

/// Buffer size for decompressed JSONL.
const LINE_BUFFER: usize = 256 * 1024;

/// How many bytes of a stream are looked at to guess its format.
const SNIFF_BYTES: usize = 64 * 1024;

/// Opens one input as a stream of documents.
///
/// * A folder is walked ([`FolderReader`]).
/// * Anything else is opened with [`OpenedInput::open`] and read by its
///   format; an input that cannot be opened, or whose format is unknown,
///   yields one error.
///
/// Skipped files, records and responses are counted in `stats`.
pub fn open_path(path: &Path, opts: &Arc<ReadOptions>, stats: &Arc<ReadStats>) -> DocumentIter {
    if path != Path::new("-") && path.is_dir() {
        return Box::new(FolderReader::new(path, Arc::clone(opts)).with_stats(Arc::clone(stats)));
    }
    match OpenedInput::open(path, opts) {
        Ok(input) => input.documents(opts, stats),
        Err(error) => Box::new(std::iter::once(Err(error))),
    }
}

/// One input (a file, standard input, a pipe) opened and its format known,
/// nothing read yet but the first bytes sniffing needed. The caller may wrap
/// its reader ([`OpenedInput::map_reader`], e.g. to count or copy the bytes),
/// take its bytes ([`OpenedInput::into_reader`]) or read its documents
/// ([`OpenedInput::documents`]).
pub struct OpenedInput {
    /// The input as it is named in places: the path given, `-` for stdin.
    pub name: Arc<Path>,
    /// Its format.
    pub format: Format,
    reader: Box<dyn Read + Send>,
    /// Its size, for a regular file: a whole-file read makes room for it at once.
    size: Option<u64>,
}

impl OpenedInput {
    /// Opens `path` (`-` is stdin; not a folder). Its format is
    /// `opts.format`, else that of its name ([`Format::from_extension`]),
    /// else, for a stream that is not a regular file (stdin, a FIFO, a pipe
    /// such as `/dev/fd/63` from `<(...)`), guessed from its first bytes
    /// ([`Format::sniff`]). Errors: [`ErrorKind::Open`],
    /// [`ErrorKind::UnknownFormat`] (a regular file with an unknown name),
    /// [`ErrorKind::Read`] (while sniffing).
    pub fn open(path: &Path, opts: &ReadOptions) -> Result<OpenedInput, IngestError> {
        let name: Arc<Path> = Arc::from(path);
        let fail = |kind| IngestError::new(Place::file(Arc::clone(&name)), kind);
        let (reader, size): (Box<dyn Read + Send>, Option<u64>) = if path == Path::new("-") {
            (Box::new(std::io::stdin()), None)
        } else {
            let file = File::open(path).map_err(|err| fail(ErrorKind::Open(err)))?;
            let metadata = file.metadata().map_err(|err| fail(ErrorKind::Open(err)))?;
            (Box::new(file), metadata.is_file().then_some(metadata.len()))
        };
        let regular = size.is_some();
        let known = opts.format.or_else(|| Format::from_extension(path));
        match known {
            Some(format) => Ok(OpenedInput {
                size,
                ..OpenedInput::new(reader, name, format)
            }),
            None if regular => Err(fail(ErrorKind::UnknownFormat)),
            None => {
                let mut window = Window::new(reader);
                let format = Format::sniff(
                    window
                        .fill_to(SNIFF_BYTES)
                        .map_err(|err| fail(ErrorKind::Read(err)))?,
                );
                Ok(OpenedInput::new(Box::new(window), name, format))
            }
        }
    }

    /// An input already opened (e.g. a copy of a stream read before), read
    /// as `format` and named `name` in places.
    pub fn new(reader: Box<dyn Read + Send>, name: Arc<Path>, format: Format) -> Self {
        OpenedInput {
            name,
            format,
            reader,
            size: None,
        }
    }

    /// The same input with its reader wrapped by `wrap`.
    pub fn map_reader(
        mut self,
        wrap: impl FnOnce(Box<dyn Read + Send>) -> Box<dyn Read + Send>,
    ) -> Self {
        self.reader = wrap(self.reader);
        self
    }

    /// The same input with its reader wrapped by `wrap`, which may fail.
    pub fn try_map_reader<E>(
        mut self,
        wrap: impl FnOnce(Box<dyn Read + Send>) -> Result<Box<dyn Read + Send>, E>,
    ) -> Result<Self, E> {
        self.reader = wrap(self.reader)?;
        Ok(self)
    }

    /// The input's bytes from its start (sniffed bytes included), as stored
    /// (compressed if it is).
    pub fn into_reader(self) -> Box<dyn Read + Send> {
        self.reader
    }

    /// The input's documents, read by its format. Skipped records and
    /// responses are counted in `stats`.
    pub fn documents(self, opts: &Arc<ReadOptions>, stats: &Arc<ReadStats>) -> DocumentIter {
        if self.format == Format::Parquet {
            // Parquet seeks: it is read from its file by name, not from this stream.
            return Box::new(ParquetReader::open(self.name, Arc::clone(opts)));
        }
        read_stream(self.reader, self.name, self.format, opts, stats, self.size)
    }
}

/// Opens a file of a known format (not a folder).
pub(crate) fn open_file(
    source: Arc<Path>,
    format: Format,
    opts: &Arc<ReadOptions>,
    stats: &Arc<ReadStats>,
) -> DocumentIter {
    if format == Format::Parquet {
        return Box::new(ParquetReader::open(source, Arc::clone(opts)));
    }
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
    read_stream(reader, source, format, opts, stats, None)
}

/// [`open_reader`], knowing the stream's size if it is a regular file's.
fn read_stream<R: Read + Send + 'static>(
    reader: R,
    source: Arc<Path>,
    format: Format,
    opts: &Arc<ReadOptions>,
    stats: &Arc<ReadStats>,
    size: Option<u64>,
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
            Err(err) => fail(source, ErrorKind::CorruptStream { codec, source: err }),
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
                size,
            )))
        }
        Format::Parquet => fail(source, not_seekable()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_by_its_name_and_a_regular_file_of_unknown_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("a.jsonl");
        std::fs::write(&jsonl, "{\"text\": \"x\"}\n").unwrap();
        let opts = ReadOptions::default();
        let opened = OpenedInput::open(&jsonl, &opts).unwrap();
        assert_eq!(opened.format, Format::Jsonl(Compression::None));
        let mut bytes = String::new();
        opened.into_reader().read_to_string(&mut bytes).unwrap();
        assert_eq!(bytes, "{\"text\": \"x\"}\n");

        let pdf = dir.path().join("a.pdf");
        std::fs::write(&pdf, "{}").unwrap();
        let error = OpenedInput::open(&pdf, &opts).err().unwrap();
        assert!(matches!(error.kind, ErrorKind::UnknownFormat));
        assert!(!error.is_bad_record(), "an input that cannot be read");
        let missing = OpenedInput::open(&dir.path().join("none.jsonl"), &opts);
        assert!(!missing.err().unwrap().is_bad_record());
        let forced = ReadOptions {
            format: Some(Format::Text),
            ..ReadOptions::default()
        };
        assert_eq!(
            OpenedInput::open(&pdf, &forced).unwrap().format,
            Format::Text
        );
    }

    #[test]
    fn bad_records_are_told_from_unreadable_inputs() {
        let place = Place::file(Path::new("x.jsonl"));
        let bad = IngestError::new(place.at_line(2), ErrorKind::NotAnObject);
        assert!(bad.is_bad_record());
        let size = ErrorKind::TooLarge { size: 9, limit: 1 };
        assert!(IngestError::new(place.clone(), size).is_bad_record());
        let read = ErrorKind::Read(std::io::Error::other("disk"));
        assert!(!IngestError::new(place, read).is_bad_record());
    }
}
