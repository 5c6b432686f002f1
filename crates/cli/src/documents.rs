//! The one input layer of every command that reads documents (`fingerprint`, `dedup`,
//! `index add`/`check`, `mirrors`, `extract`): the input options they share, the inputs checked
//! before anything is read ([`Corpus`]), the text each document is fingerprinted by
//! ([`document_text`]), and reading with fingerprinting (or any work) in parallel batches while
//! a thread reads ahead, with progress on standard error.
//!
//! Uncompressed JSON Lines take a fast path: blocks of whole lines are read and their records
//! parsed in parallel (`blocks`), with the same parser and the same errors as ingest's
//! `JsonlReader`, which every other format goes through.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, OnceLock};

use anyhow::Context;
use neardup_ingest::extract::{html_to_text, MainContentExtractor};
use neardup_ingest::{
    parse_document, Accounting, Body, Compression, Document, DocumentIter, ErrorKind, FolderReader,
    Format, IngestError, JsonlFields, OpenedInput, Place, ReadOptions, ReadStats, StatsSnapshot,
    DEFAULT_MAX_DOCUMENT_BYTES,
};
use rayon::prelude::*;

use crate::blocks::{lines, BlockReader, Chunk};
use crate::output::{Failure, Watched};
use crate::{interrupt, progress};

/// Input options shared by the commands that read documents.
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Inputs: JSONL (.jsonl, .jsonl.gz, .jsonl.zst), WARC (.warc, .warc.gz), Parquet
    /// (.parquet, a document a row, columns named as the JSONL fields), text (.txt, one
    /// document a file), HTML (.html), folders of these; `-` (or no input) is standard input.
    /// Pipes, FIFOs and `<(...)` work too; a stream's format is guessed from its first bytes
    /// unless its name or --format gives it.
    #[arg(value_name = "INPUT", default_value = "-")]
    pub inputs: Vec<PathBuf>,
    /// Input format of every input (one of jsonl, jsonl.gz, jsonl.zst, warc, warc.gz, txt,
    /// html, parquet), instead of telling it from the name.
    #[arg(long, value_name = "FORMAT", alias = "input-format")]
    pub format: Option<Format>,
    /// JSONL field (Parquet column) holding the document id (a string or a number; `FILE:LINE`,
    /// or `FILE:ROW`, if absent).
    #[arg(long, default_value = "id")]
    pub id_field: String,
    /// JSONL field (Parquet column) holding the text.
    #[arg(long, default_value = "text")]
    pub text_field: String,
    /// JSONL field holding HTML (used when the text field is absent).
    #[arg(long, default_value = "html")]
    pub html_field: String,
    /// JSONL field holding the URL.
    #[arg(long, default_value = "url")]
    pub url_field: String,
    /// JSONL field holding the title.
    #[arg(long, default_value = "title")]
    pub title_field: String,
    /// JSONL field holding the fetch time (RFC 3339 or Unix seconds).
    #[arg(long, default_value = "fetched_at")]
    pub fetched_at_field: String,
    /// Largest record accepted, in bytes (a JSONL line, a file, a WARC record); a larger one
    /// is a bad record, read through without being held.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_DOCUMENT_BYTES)]
    pub max_document_bytes: u64,
    /// Replace invalid UTF-8 with U+FFFD instead of treating the record as bad.
    #[arg(long)]
    pub lossy: bool,
    /// What to do with a bad record inside a readable input: report it once with its place and
    /// go on (skip), or stop (fail). An input that cannot be opened or read, or whose format
    /// is unknown, always stops the run.
    #[arg(long, value_enum, default_value_t = OnError::Skip)]
    pub on_error: OnError,
    /// Which text of an HTML document is used: its main content (navigation, sidebars, ads
    /// and footers dropped) or all visible text.
    #[arg(long, value_enum, default_value_t = HtmlText::Main)]
    pub html: HtmlText,
}

/// Which text of an HTML document is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HtmlText {
    /// The main content.
    Main,
    /// All visible text.
    All,
}

/// What to do with a bad input record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnError {
    /// Report it on stderr with its place, count it, and go on.
    Skip,
    /// Stop with an error.
    Fail,
}

impl InputArgs {
    /// The reader options these arguments describe.
    pub fn read_options(&self, keep_raw: bool) -> ReadOptions {
        ReadOptions {
            format: self.format,
            fields: JsonlFields {
                id: self.id_field.clone(),
                text: self.text_field.clone(),
                html: Some(self.html_field.clone()),
                url: Some(self.url_field.clone()),
                title: Some(self.title_field.clone()),
                fetched_at: Some(self.fetched_at_field.clone()),
            },
            max_document_bytes: self.max_document_bytes,
            lossy_utf8: self.lossy,
            keep_raw,
            ..ReadOptions::default()
        }
    }
}

/// Documents handed to the worker pool at a time.
const BATCH_DOCUMENTS: usize = 2048;
/// Bytes of document bodies handed to the worker pool at a time.
const BATCH_BYTES: usize = 32 << 20;
/// Bytes of JSON Lines read and parsed in parallel at a time: about 2 MB a worker thread, so
/// that a block's parsed documents are still in cache when they are worked on (on 2 cores,
/// 4 MB blocks took 3% less CPU than 16 MB ones, and 30% less memory), 4 to 32 MB.
fn block_bytes() -> usize {
    (rayon::current_num_threads() << 21).clamp(4 << 20, 32 << 20)
}

/// Reads every document of `args`' inputs once, in order, and maps each (its main text
/// extracted from HTML) with `map(index, document, text)`, in parallel, calling `sink` with the
/// results in input order; progress goes to stderr. `index` counts the documents read so far
/// (bad records excluded). An input that cannot be opened or read, or whose format is unknown,
/// is an error (checked before anything is read); bad records are reported and counted, or
/// stop the run, as `args.on_error` says. Returns the reader's statistics.
pub fn for_each_document<T: Send>(
    args: &InputArgs,
    keep_raw: bool,
    map: impl Fn(usize, &Document, &str) -> T + Sync,
    sink: impl FnMut(Document, T) -> anyhow::Result<()>,
) -> anyhow::Result<StatsSnapshot> {
    Corpus::new(args, false)?.for_each_document("reading", keep_raw, map, sink)
}

/// The inputs of a run, checked before anything is read: each exists, can be opened and has a
/// known format, else the run stops with one line. Their sizes are summed for progress. A
/// corpus that is read more than once copies the inputs that cannot be read twice (standard
/// input, pipes, FIFOs) aside, zstd-compressed, on its first read, and reads the copies after.
pub struct Corpus<'a> {
    args: &'a InputArgs,
    inputs: Vec<Input>,
    /// The sum of the inputs' sizes, when every one is known.
    total_bytes: Option<u64>,
    /// Where streams are copied on the first read, if the corpus is read again.
    spool: Option<tempfile::TempDir>,
    /// The first error writing a copy of a stream: the cause of the read error it makes.
    spool_failure: Failure,
    /// Whether a read has started: later reads report no bad record again.
    read_before: AtomicBool,
    /// What the first read found, record by record.
    accounting: std::sync::Mutex<Accounting>,
}

/// One input of a [`Corpus`].
struct Input {
    path: PathBuf,
    kind: InputKind,
}

impl Input {
    /// Whether the input is a regular file holding one document (HTML or text).
    fn is_one_document(&self) -> bool {
        matches!(self.kind, InputKind::File(Format::Html | Format::Text))
    }
}

/// What an input is.
enum InputKind {
    /// A folder, and the formats of the files in it.
    Folder(Vec<Format>),
    /// A regular file of a known format.
    File(Format),
    /// Standard input, a pipe or a FIFO: read once; its format is known once it is opened.
    Stream(OnceLock<Format>),
}

/// Work for the pool, in input order.
enum Work {
    /// Documents and bad records.
    Records(Vec<Result<Document, IngestError>>),
    /// A block of whole JSON Lines of the input `name`.
    Lines {
        block: Vec<u8>,
        first_line: u64,
        name: Arc<Path>,
    },
}

impl<'a> Corpus<'a> {
    /// Checks `args`' inputs. With `reread`, streams are copied aside on the first read so
    /// that the corpus can be read again.
    pub fn new(args: &'a InputArgs, reread: bool) -> anyhow::Result<Self> {
        let mut inputs = Vec::with_capacity(args.inputs.len());
        let mut total = Some(0u64);
        for path in &args.inputs {
            let (kind, size) = check_input(path, args)?;
            total = total.zip(size).map(|(total, size)| total + size);
            inputs.push(Input {
                path: path.clone(),
                kind,
            });
        }
        let streams = inputs
            .iter()
            .any(|input| matches!(input.kind, InputKind::Stream(_)));
        let spool = if reread && streams {
            let mut registry = interrupt::lock()?;
            let dir = tempfile::Builder::new()
                .prefix("neardup-spool-")
                .tempdir()
                .map_err(|e| anyhow::anyhow!("cannot create a temporary folder: {e}"))?;
            registry.remove_on_signal(dir.path());
            Some(dir)
        } else {
            None
        };
        Ok(Corpus {
            args,
            inputs,
            total_bytes: total,
            spool,
            spool_failure: Failure::default(),
            read_before: AtomicBool::new(false),
            accounting: Default::default(),
        })
    }

    /// The formats of the inputs, as far as they are known (a stream's once it is read).
    pub fn formats(&self) -> impl Iterator<Item = Format> + '_ {
        self.inputs.iter().flat_map(|input| match &input.kind {
            InputKind::Folder(formats) => formats.clone(),
            InputKind::File(format) => vec![*format],
            InputKind::Stream(format) => format.get().copied().into_iter().collect(),
        })
    }

    /// Reads every document in order, as [`for_each_document`] does, with a progress bar
    /// labelled `label`. Bad records are reported on the first read only.
    pub fn for_each_document<T: Send>(
        &self,
        label: &str,
        keep_raw: bool,
        map: impl Fn(usize, &Document, &str) -> T + Sync,
        mut sink: impl FnMut(Document, T) -> anyhow::Result<()>,
    ) -> anyhow::Result<StatsSnapshot> {
        let first = !self.read_before.swap(true, Relaxed);
        let opts = Arc::new(self.args.read_options(keep_raw));
        let stats = Arc::new(ReadStats::default());
        let bytes_read = Arc::new(AtomicU64::new(0));
        let bar = progress::read_bar(label, self.total_bytes);
        bar.set_message("0 documents");
        let extractor = MainContentExtractor::default();
        let (mut documents, mut errors) = (0u64, 0u64);
        let mut skipped: std::collections::BTreeMap<String, u64> = Default::default();
        std::thread::scope(|scope| -> anyhow::Result<()> {
            // Each piece of work comes with the bytes read up to its end, for progress.
            let (sender, receiver) = sync_channel::<(Work, u64)>(2);
            let (recycle, recycled) = sync_channel::<Vec<u8>>(2);
            let reader = Reader {
                corpus: self,
                first,
                opts: &opts,
                stats: &stats,
                bytes_read: &bytes_read,
                sender,
                recycled,
            };
            scope.spawn(move || reader.run());
            let mut next_index = 0usize;
            for (work, read_to) in receiver {
                interrupt::check()?;
                let records = match work {
                    Work::Records(records) => records,
                    Work::Lines {
                        block,
                        first_line,
                        name,
                    } => {
                        let records = parse_lines(&block, first_line, &name, &opts);
                        let _ = recycle.try_send(block);
                        records
                    }
                };
                let indexed: Vec<(usize, Result<Document, IngestError>)> = records
                    .into_iter()
                    .map(|record| {
                        let index = next_index;
                        next_index += usize::from(record.is_ok());
                        (index, record)
                    })
                    .collect();
                let mapped: Vec<Result<(Document, T), IngestError>> = indexed
                    .into_par_iter()
                    .map(|(index, record)| {
                        record.map(|doc| {
                            let text = document_text(&doc, self.args.html, &extractor);
                            let value = map(index, &doc, &text);
                            (doc, value)
                        })
                    })
                    .collect();
                for result in mapped {
                    match result {
                        Ok((doc, value)) => {
                            documents += 1;
                            sink(doc, value)?;
                        }
                        Err(error) if !error.is_bad_record() => anyhow::bail!("{error}"),
                        Err(error) => {
                            errors += 1;
                            *skipped.entry(error.kind.reason().to_string()).or_default() += 1;
                            match self.args.on_error {
                                OnError::Skip if first => eprintln!("neardup: skipped {error}"),
                                OnError::Skip => {}
                                OnError::Fail => {
                                    anyhow::bail!("{error} (use --on-error skip to go on)")
                                }
                            }
                        }
                    }
                }
                bar.set_position(read_to);
                bar.set_message(format!("{documents} documents"));
            }
            Ok(())
        })
        // A failed copy of a stream is the cause of the read error it makes.
        .map_err(|error| self.spool_failure.error().unwrap_or(error))?;
        bar.finish_and_clear();
        if first {
            *self.accounting.lock().unwrap_or_else(|e| e.into_inner()) = Accounting {
                documents,
                skipped,
                not_documents: stats.accounting().not_documents,
            };
        }
        Ok(StatsSnapshot {
            documents,
            errors,
            ..stats.snapshot()
        })
    }

    /// Every record the first read found: documents, skipped records by reason, and records
    /// that are not documents by type (WARC requests, HTTP errors, images, ...); they add up
    /// to what the inputs hold.
    pub fn accounting(&self) -> Accounting {
        self.accounting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Checks one input before the run: what it is, and its size if known.
fn check_input(path: &Path, args: &InputArgs) -> anyhow::Result<(InputKind, Option<u64>)> {
    if path == Path::new("-") {
        return Ok((InputKind::Stream(OnceLock::new()), None));
    }
    let fail = |kind| anyhow::anyhow!("{}", IngestError::new(Place::file(path), kind));
    let metadata = std::fs::metadata(path).map_err(|e| fail(ErrorKind::Open(e)))?;
    if metadata.is_dir() {
        let (formats, size) = folder_contents(path);
        return Ok((InputKind::Folder(formats), Some(size)));
    }
    if !metadata.is_file() {
        return Ok((InputKind::Stream(OnceLock::new()), None));
    }
    File::open(path).map_err(|e| fail(ErrorKind::Open(e)))?;
    let format = args
        .format
        .or_else(|| Format::from_extension(path))
        .ok_or_else(|| fail(ErrorKind::UnknownFormat))?;
    Ok((InputKind::File(format), Some(metadata.len())))
}

/// The formats of the files a folder holds (of those [`FolderReader`] reads), and the sum of
/// their sizes. Entries that cannot be read are left to the read itself to report.
fn folder_contents(path: &Path) -> (Vec<Format>, u64) {
    let mut formats = Vec::new();
    let mut size = 0;
    let entries = walkdir::WalkDir::new(path).into_iter().flatten();
    for entry in entries.filter(|e| e.file_type().is_file()) {
        if let Some(format) = Format::from_extension(entry.path()) {
            size += entry.metadata().map_or(0, |m| m.len());
            if !formats.contains(&format) {
                formats.push(format);
            }
        }
    }
    (formats, size)
}

/// Parses a block of JSON Lines in parallel into documents and bad records, as ingest's
/// `JsonlReader` does (blank lines skipped, over-long lines refused).
fn parse_lines(
    block: &[u8],
    first_line: u64,
    name: &Arc<Path>,
    opts: &ReadOptions,
) -> Vec<Result<Document, IngestError>> {
    let place = Place::file(Arc::clone(name));
    let lines: Vec<(u64, &[u8])> = lines(block, first_line)
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .collect();
    lines
        .into_par_iter()
        .map(|(number, line)| {
            let place = place.at_line(number);
            let (size, limit) = (line.len() as u64, opts.max_document_bytes);
            if size > limit {
                return Err(IngestError::new(place, ErrorKind::TooLarge { size, limit }));
            }
            parse_document(line, place, opts)
        })
        .collect()
}

/// The reading side of [`Corpus::for_each_document`]: opens the inputs one after the other and
/// sends their records (or blocks of lines) until the end, an input that cannot be read, or
/// the receiver hangs up.
struct Reader<'c, 'a> {
    corpus: &'c Corpus<'a>,
    first: bool,
    opts: &'c Arc<ReadOptions>,
    stats: &'c Arc<ReadStats>,
    bytes_read: &'c Arc<AtomicU64>,
    sender: SyncSender<(Work, u64)>,
    recycled: Receiver<Vec<u8>>,
}

impl Reader<'_, '_> {
    fn run(self) {
        let inputs = &self.corpus.inputs;
        let mut i = 0;
        while i < inputs.len() {
            let input = &inputs[i];
            // Files of one document each (HTML, text) given one after the other go to the pool
            // in batches, as a folder's do: one hand-over per file costs more than its reading.
            let run = inputs[i..]
                .iter()
                .take_while(|x| x.is_one_document())
                .count();
            if run > 1 {
                if !self.send_records((i..i + run).flat_map(|j| self.documents_of(j))) {
                    return;
                }
                i += run;
                continue;
            }
            let more = match &input.kind {
                InputKind::Folder(_) => {
                    let folder = FolderReader::new(&input.path, Arc::clone(self.opts))
                        .with_stats(Arc::clone(self.stats));
                    // Files of a folder are counted by their bodies.
                    self.send_records(folder.inspect(|record| {
                        if let Ok(doc) = record {
                            let bytes = doc.body.as_str().len() as u64;
                            self.bytes_read.fetch_add(bytes, Relaxed);
                        }
                    }))
                }
                InputKind::File(_) | InputKind::Stream(_) => match self.open(i, input) {
                    Ok(opened) if opened.format == Format::Jsonl(Compression::None) => {
                        self.send_lines(opened)
                    }
                    Ok(opened) => self.send_records(opened.documents(self.opts, self.stats)),
                    Err(error) => {
                        self.send_records(std::iter::once(Err(error)));
                        false
                    }
                },
            };
            if !more {
                return;
            }
            i += 1;
        }
    }

    /// The documents of input `i` (a file), or the error opening it.
    fn documents_of(&self, i: usize) -> DocumentIter {
        match self.open(i, &self.corpus.inputs[i]) {
            Ok(opened) => opened.documents(self.opts, self.stats),
            Err(error) => Box::new(std::iter::once(Err(error))),
        }
    }

    /// Opens an input, counting the bytes read; a stream is copied aside on the first read of
    /// a corpus read again, and read from its copy after.
    fn open(&self, i: usize, input: &Input) -> Result<OpenedInput, IngestError> {
        let name: Arc<Path> = Arc::from(input.path.as_path());
        let spooled = self
            .corpus
            .spool
            .as_ref()
            .map(|dir| dir.path().join(i.to_string()));
        let fail = |error: io::Error| {
            IngestError::new(Place::file(Arc::clone(&name)), ErrorKind::Read(error))
        };
        let opened = match (&input.kind, spooled) {
            (InputKind::Stream(format), Some(copy)) if !self.first => {
                let format = *format.get().expect("a stream's format is known once read");
                let file = File::open(&copy).map_err(fail)?;
                let decoder = zstd::Decoder::new(file).map_err(fail)?;
                OpenedInput::new(Box::new(decoder), name, format)
            }
            (InputKind::Stream(format), spooled) => {
                let opened = OpenedInput::open(&input.path, self.opts)?;
                let _ = format.set(opened.format);
                match spooled {
                    Some(copy) => {
                        let encoder = self.spool(input, &copy).map_err(fail)?;
                        opened.map_reader(|reader| {
                            Box::new(Tee {
                                reader,
                                copy: encoder,
                            })
                        })
                    }
                    None => opened,
                }
            }
            _ => OpenedInput::open(&input.path, self.opts)?,
        };
        let counter = Arc::clone(self.bytes_read);
        Ok(opened.map_reader(|reader| Box::new(Counting { reader, counter })))
    }

    /// Creates the copy of a stream, at `path`: its errors are kept as the corpus' spool
    /// failure.
    fn spool(&self, input: &Input, path: &Path) -> io::Result<Spool> {
        let name = match input.path.to_str() {
            Some("-") => "standard input".to_string(),
            _ => input.path.display().to_string(),
        };
        let what = format!("cannot spool {name} to {}", path.display());
        let failure = &self.corpus.spool_failure;
        let copy = File::create(path).inspect_err(|e| failure.record(&what, e))?;
        let watched = Watched::new(copy, what, failure.clone());
        Ok(zstd::Encoder::new(BufWriter::new(watched), SPOOL_LEVEL)?.auto_finish())
    }

    /// Sends work with the bytes read so far; false if the receiver hung up.
    fn send(&self, work: Work) -> bool {
        let read_to = self.bytes_read.load(Relaxed);
        self.sender.send((work, read_to)).is_ok()
    }

    /// Sends documents in batches; false if the run is over (the receiver hung up, or an input
    /// could not be read).
    fn send_records(&self, records: impl Iterator<Item = Result<Document, IngestError>>) -> bool {
        let mut batch = Vec::with_capacity(BATCH_DOCUMENTS);
        let mut bytes = 0;
        for record in records {
            let fatal = record.as_ref().is_err_and(|e| !e.is_bad_record());
            bytes += record.as_ref().map_or(0, |d| d.body.as_str().len());
            batch.push(record);
            if fatal {
                self.send(Work::Records(batch));
                return false;
            }
            if batch.len() == BATCH_DOCUMENTS || bytes >= BATCH_BYTES {
                if !self.send(Work::Records(std::mem::take(&mut batch))) {
                    return false;
                }
                bytes = 0;
            }
        }
        self.send(Work::Records(batch))
    }

    /// Sends an uncompressed JSON Lines input as blocks of whole lines; over-long lines are
    /// bad records, a failed read ends the run.
    fn send_lines(&self, input: OpenedInput) -> bool {
        let name = Arc::clone(&input.name);
        let limit = self.opts.max_document_bytes;
        let mut blocks = BlockReader::new(input.into_reader(), block_bytes(), limit);
        loop {
            let buffer = self.recycled.try_recv().unwrap_or_default();
            let work = match blocks.next_chunk(buffer) {
                Ok(None) => return true,
                Ok(Some(Chunk::Lines { block, first_line })) => Work::Lines {
                    block,
                    first_line,
                    name: Arc::clone(&name),
                },
                Ok(Some(Chunk::TooLong { line, size })) => {
                    let place = Place::file(Arc::clone(&name)).at_line(line);
                    let kind = ErrorKind::TooLarge { size, limit };
                    Work::Records(vec![Err(IngestError::new(place, kind))])
                }
                Err(error) => {
                    let place = Place::file(Arc::clone(&name));
                    let record = Err(IngestError::new(place, ErrorKind::Read(error)));
                    self.send(Work::Records(vec![record]));
                    return false;
                }
            };
            if !self.send(work) {
                return false;
            }
        }
    }
}

/// zstd level of the copies of streams: level 1 compresses text about 7 times at over
/// 400 MB/s, faster than the inputs are read.
const SPOOL_LEVEL: i32 = 1;

/// The copy of a stream: zstd-compressed, completed when dropped, its errors watched (an
/// error completing it makes the next read of the copy fail, and is reported then).
type Spool = zstd::stream::AutoFinishEncoder<'static, BufWriter<Watched<File>>>;

/// A reader that copies what it reads.
struct Tee<W: Write> {
    reader: Box<dyn Read + Send>,
    copy: W,
}

impl<W: Write> Read for Tee<W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.reader.read(buf)?;
        self.copy.write_all(&buf[..read])?;
        Ok(read)
    }
}

/// A reader that counts the bytes it reads.
struct Counting {
    reader: Box<dyn Read + Send>,
    counter: Arc<AtomicU64>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.reader.read(buf)?;
        self.counter.fetch_add(read as u64, Relaxed);
        Ok(read)
    }
}

/// Writes one JSON line per document of `args`' inputs to standard output, in input order:
/// `encode(document, text)` serialises a document's line (in parallel, as
/// [`for_each_document`] maps). The output of `fingerprint` and `extract`.
pub fn write_json_lines(
    args: &InputArgs,
    encode: impl Fn(&Document, &str) -> serde_json::Result<Vec<u8>> + Sync,
) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    for_each_document(
        args,
        false,
        |_, doc, text| {
            encode(doc, text).map(|mut line| {
                line.push(b'\n');
                line
            })
        },
        |_, line| {
            out.write_all(&line?).context("cannot write output")?;
            Ok(())
        },
    )?;
    out.flush().context("cannot write output")?;
    Ok(())
}

/// The text a document is fingerprinted by: a text body as is; of an HTML body its main content
/// or all its visible text, as `html` says. The one rule every command that reads documents
/// uses (`dedup`, `index`, `mirrors`, `extract`).
pub fn document_text<'a>(
    doc: &'a Document,
    html: HtmlText,
    extractor: &MainContentExtractor,
) -> Cow<'a, str> {
    match (&doc.body, html) {
        (Body::Html(page), HtmlText::All) => Cow::Owned(html_to_text(page)),
        _ => doc.main_text(extractor),
    }
}

/// Unix seconds of a fetch time given as RFC 3339 or as a number of seconds.
pub fn unix_seconds(fetched_at: &str) -> Option<i64> {
    let text = fetched_at.trim();
    if let Ok(seconds) = text.parse::<i64>() {
        return Some(seconds);
    }
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .ok()
        .map(|t| t.unix_timestamp())
}

#[cfg(test)]
mod tests {
    use super::unix_seconds;

    #[test]
    fn fetch_times_parse() {
        assert_eq!(unix_seconds("1700000000"), Some(1_700_000_000));
        assert_eq!(unix_seconds("2023-11-14T22:13:20Z"), Some(1_700_000_000));
        assert_eq!(
            unix_seconds("2023-11-15T00:13:20+02:00"),
            Some(1_700_000_000)
        );
        assert_eq!(unix_seconds("yesterday"), None);
    }
}
