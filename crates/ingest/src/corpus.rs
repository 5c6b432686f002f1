//! [`Corpus`]: the inputs of a run, checked before anything is read, and read in order while a
//! thread reads ahead, each document turned into text ([`crate::text::document_text`]) and
//! mapped in parallel (rayon), the results handed back in input order. The one reader of the
//! command line's `dedup`, `fingerprint`, `extract`, `index`, `mirrors` and `compare`.
//!
//! Uncompressed JSON Lines take a fast path: blocks of whole lines are read and their records
//! parsed in parallel (`blocks`), with the same parser and the same errors as
//! [`crate::JsonlReader`], which every other format goes through.
//!
//! The caller sees the run through [`ReadHooks`]: progress, skipped records, a check that stops
//! the run (a signal), and the registration of the temporary folder streams are copied to.

use std::collections::VecDeque;
use std::error::Error as StdError;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::blocks::{lines, BlockReader, Chunk};
use crate::document::{Body, Document, Place};
use crate::error::{ErrorKind, IngestError};
use crate::extract::MainContentExtractor;
use crate::folder::FolderReader;
use crate::format::{Compression, Format};
use crate::input::{DocumentIter, OpenedInput};
use crate::jsonl::{parse_document, parse_text_document};
use crate::options::ReadOptions;
use crate::spool::Spool;
use crate::stats::{Accounting, ReadStats, StatsSnapshot};
use crate::text::{document_text, HtmlText};

/// Documents handed to the worker pool at a time.
const BATCH_DOCUMENTS: usize = 2048;
/// Bytes of document bodies handed to the worker pool at a time.
const BATCH_BYTES: usize = 32 << 20;
/// Mapped batches that may wait for the sink while the next is parsed: one is enough for the
/// workers never to wait (a worker done with its share of a block takes up the next block's),
/// and each more holds a block of documents longer.
const IN_FLIGHT: usize = 1;

/// What a document was mapped to, or a bad record.
type Mapped<U> = Result<U, IngestError>;

/// Bytes of JSON Lines read and parsed in parallel at a time: 512 KiB a worker thread, 1 to
/// 8 MiB, so that a block's parsed documents are still in cache when they are worked on (on 2
/// cores, 4 MB blocks took 3% less CPU than 16 MB ones, and 30% less memory; 512 KiB ones
/// about 10% less than 4 MB, issue 22 step 12), and what a read holds in flight (a few blocks,
/// and the shingle sets made of them, up to 8 bytes a byte) stays small beside a memory budget
/// at any number of threads.
fn block_bytes() -> usize {
    (rayon::current_num_threads() << 19).clamp(1 << 20, 8 << 20)
}

/// What to do with a bad record inside a readable input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// Report it ([`ReadHooks::skipped`]), count it, and go on.
    #[default]
    Skip,
    /// Stop with an error.
    Fail,
}

impl neardup_core::Choice for OnError {
    const ALL: &'static [Self] = &[OnError::Skip, OnError::Fail];

    fn help(self) -> &'static str {
        match self {
            OnError::Skip => "report it once with its place, count it, and go on",
            OnError::Fail => "stop with an error",
        }
    }
}

/// What a [`Corpus`] reads and how.
#[derive(Debug, Clone, Default)]
pub struct CorpusOptions {
    /// The inputs: files, folders, `-` for standard input, pipes and FIFOs.
    pub inputs: Vec<PathBuf>,
    /// How records are read (its `keep_raw` is set by each read).
    pub read: ReadOptions,
    /// What to do with a bad record.
    pub on_error: OnError,
    /// Which text of an HTML document is used.
    pub html: HtmlText,
}

/// Why a run stopped, from [`ReadHooks`] (e.g. a signal came).
pub type Stop = Box<dyn StdError + Send + Sync>;

/// How a caller follows and steers the reads of a [`Corpus`]; every method has a default that
/// does nothing ([`NoHooks`]).
pub trait ReadHooks: Send + Sync {
    /// Called between batches: an error stops the read with it.
    fn check(&self) -> Result<(), Stop> {
        Ok(())
    }

    /// Calls `create`, which creates a temporary folder and returns its path (`None` if it
    /// could not), e.g. to register it for removal should the process be ended by a signal.
    fn register_temporary(&self, create: &mut dyn FnMut() -> Option<PathBuf>) -> Result<(), Stop> {
        create();
        Ok(())
    }

    /// The progress of a read labelled `label` (`reading`, `fingerprinting`, ...) of
    /// `total_bytes`, when every input's size is known.
    fn progress(&self, label: &str, total_bytes: Option<u64>) -> Box<dyn ReadProgress> {
        let _ = (label, total_bytes);
        Box::new(NoHooks)
    }

    /// A bad record skipped (under [`OnError::Skip`], on the first read only).
    fn skipped(&self, error: &IngestError) {
        let _ = error;
    }
}

/// The progress of one read (see [`ReadHooks::progress`]).
pub trait ReadProgress: Send {
    /// `bytes` of the inputs read so far, and `documents` handed back.
    fn advance(&self, bytes: u64, documents: u64) {
        let _ = (bytes, documents);
    }

    /// The read ended well.
    fn finish(&self) {}
}

/// Hooks and progress that do nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl ReadHooks for NoHooks {}
impl ReadProgress for NoHooks {}

/// Why a read of a [`Corpus`] failed.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// An input cannot be opened or read, or its format is unknown.
    #[error(transparent)]
    Input(IngestError),
    /// A bad record under [`OnError::Fail`].
    #[error("{0} (use --on-error skip to go on)")]
    BadRecord(#[source] IngestError),
    /// The hooks stopped the run.
    #[error(transparent)]
    Stopped(Stop),
    /// The temporary folder for the copies of streams could not be created.
    #[error("cannot create a temporary folder: {0}")]
    Temporary(#[source] io::Error),
    /// A copy of a stream could not be written (the cause of the read error it made).
    #[error("cannot copy a stream aside: {0}")]
    Spool(#[source] io::Error),
    /// An input read for one document holds another number of them.
    #[error("{input} holds {found} documents, not one")]
    NotOneDocument {
        /// The input.
        input: String,
        /// How many documents it holds.
        found: usize,
    },
}

/// The inputs of a run, checked before anything is read: each exists, can be opened and has a
/// known format, else [`Corpus::new`] fails. Their sizes are summed for progress. A corpus that
/// is read more than once copies the inputs that cannot be read twice (standard input, pipes,
/// FIFOs) aside, zstd-compressed, on its first read, and reads the copies after.
pub struct Corpus {
    options: CorpusOptions,
    hooks: Arc<dyn ReadHooks>,
    inputs: Vec<Input>,
    /// The sum of the inputs' sizes, when every one is known.
    total_bytes: Option<u64>,
    /// Where streams are copied on the first read, if the corpus is read again.
    spool: Option<Spool>,
    /// Whether a read has started: later reads report no bad record again.
    read_before: AtomicBool,
    /// What the first read found, record by record.
    accounting: Mutex<Accounting>,
    extractor: MainContentExtractor,
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
        ends: Vec<usize>,
        name: Arc<Path>,
    },
}

impl Corpus {
    /// Checks the inputs of `options`. With `reread`, streams are copied aside on the first
    /// read so that the corpus can be read again.
    pub fn new(
        options: CorpusOptions,
        reread: bool,
        hooks: Arc<dyn ReadHooks>,
    ) -> Result<Self, CorpusError> {
        let mut inputs = Vec::with_capacity(options.inputs.len());
        let mut total = Some(0u64);
        for path in &options.inputs {
            let (kind, size) = check_input(path, &options.read)?;
            total = total.zip(size).map(|(total, size)| total + size);
            inputs.push(Input {
                path: path.clone(),
                kind,
            });
        }
        let streams = inputs
            .iter()
            .any(|input| matches!(input.kind, InputKind::Stream(_)));
        let spool = (reread && streams)
            .then(|| Spool::create(hooks.as_ref()))
            .transpose()?;
        Ok(Corpus {
            options,
            hooks,
            inputs,
            total_bytes: total,
            spool,
            read_before: AtomicBool::new(false),
            accounting: Default::default(),
            extractor: MainContentExtractor::default(),
        })
    }

    /// The hooks the corpus reports to.
    pub fn hooks(&self) -> &dyn ReadHooks {
        self.hooks.as_ref()
    }

    /// The formats of the inputs, as far as they are known (a stream's once it is read).
    pub fn formats(&self) -> impl Iterator<Item = Format> + '_ {
        self.inputs.iter().flat_map(|input| match &input.kind {
            InputKind::Folder(formats) => formats.clone(),
            InputKind::File(format) => vec![*format],
            InputKind::Stream(format) => format.get().copied().into_iter().collect(),
        })
    }

    /// Reads every document once, in order, and maps each (with its text, see
    /// [`document_text`]) with `map(index, document, text)`, in parallel, calling `sink` with
    /// the results in input order; progress labelled `label` goes to the hooks. `index` counts
    /// the documents read so far (bad records excluded). With `keep_raw`, documents carry their
    /// input records ([`Document::raw`]). An input that cannot be read stops the read; bad
    /// records are reported (on the first read only) and counted, or stop the read, as the
    /// options say. Returns the reader's statistics.
    pub fn for_each_document<T: Send, E: From<CorpusError>>(
        &self,
        label: &str,
        keep_raw: bool,
        map: impl Fn(usize, &Document, &str) -> T + Sync,
        mut sink: impl FnMut(Document, T) -> Result<(), E>,
    ) -> Result<StatsSnapshot, E> {
        self.read_through(
            label,
            keep_raw,
            |index, doc| {
                let value = self.map_with_text(&map, index, &doc);
                (doc, value)
            },
            |(doc, value)| sink(doc, value),
        )
    }

    /// [`Corpus::for_each_document`] for a caller that needs only what each document maps to:
    /// `sink` sees the results alone, in input order, and each document is dropped on the
    /// worker that mapped it, as soon as it is mapped. The same documents, indexes, errors and
    /// statistics; what it saves is handing every document back to the caller's thread and
    /// freeing its strings there (a free of memory another thread allocated takes the
    /// allocator's slow path), and the documents' memory is reused while it is in cache.
    pub fn map_each_document<T: Send, E: From<CorpusError>>(
        &self,
        label: &str,
        keep_raw: bool,
        map: impl Fn(usize, &Document, &str) -> T + Sync,
        sink: impl FnMut(T) -> Result<(), E>,
    ) -> Result<StatsSnapshot, E> {
        self.read_through(
            label,
            keep_raw,
            |index, doc| {
                let value = self.map_with_text(&map, index, &doc);
                // The body's memory goes to the next document this worker parses.
                let (Body::Text(body) | Body::Html(body)) = doc.body;
                crate::spare::give_back(body);
                value
            },
            sink,
        )
    }

    /// `map(index, document, text)`, the document's text made as every read makes it
    /// ([`document_text`]).
    fn map_with_text<T>(
        &self,
        map: &impl Fn(usize, &Document, &str) -> T,
        index: usize,
        doc: &Document,
    ) -> T {
        map(
            index,
            doc,
            &document_text(doc, self.options.html, &self.extractor),
        )
    }

    /// The read of [`Corpus::for_each_document`] and [`Corpus::map_each_document`]: `each`
    /// turns each numbered document into what `sink` is handed, in input order.
    fn read_through<U: Send, E: From<CorpusError>>(
        &self,
        label: &str,
        keep_raw: bool,
        each: impl Fn(usize, Document) -> U + Sync,
        mut sink: impl FnMut(U) -> Result<(), E>,
    ) -> Result<StatsSnapshot, E> {
        let first = !self.read_before.swap(true, Relaxed);
        let opts = Arc::new(ReadOptions {
            keep_raw,
            ..self.options.read.clone()
        });
        let stats = Arc::new(ReadStats::default());
        let bytes_read = Arc::new(AtomicU64::new(0));
        let progress = self.hooks.progress(label, self.total_bytes);
        std::thread::scope(|scope| -> Result<(), E> {
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
            let pass = Pass {
                first,
                opts: &opts,
                stats: &stats,
                progress: progress.as_ref(),
            };
            self.work_through(&pass, receiver, &recycle, &each, &mut sink)
        })
        // A failed copy of a stream is the cause of the read error it makes.
        .map_err(|error| match self.spool.as_ref().and_then(Spool::failure) {
            Some(failure) => E::from(CorpusError::Spool(failure)),
            None => error,
        })?;
        progress.finish();
        if first {
            *self.accounting.lock().unwrap_or_else(|e| e.into_inner()) = stats.accounting();
        }
        Ok(stats.snapshot())
    }

    /// The working side of [`Corpus::for_each_document`]: takes the reader's work in order,
    /// parses each block of lines (in parallel), numbers its documents, and maps them on the
    /// pool while the next block is parsed; up to [`IN_FLIGHT`] mapped batches wait for `sink`,
    /// which sees them in input order. No stage waits for another to drain: a worker that ends
    /// its share of a block takes up the next block's.
    fn work_through<U: Send, E: From<CorpusError>>(
        &self,
        pass: &Pass,
        receiver: Receiver<(Work, u64)>,
        recycle: &SyncSender<Vec<u8>>,
        each: &(impl Fn(usize, Document) -> U + Sync),
        sink: &mut impl FnMut(U) -> Result<(), E>,
    ) -> Result<(), E> {
        rayon::in_place_scope(|pool| {
            let mut pending = VecDeque::with_capacity(IN_FLIGHT + 1);
            let mut next_index = 0usize;
            for (work, read_to) in receiver {
                self.hooks.check().map_err(CorpusError::Stopped)?;
                let records = match work {
                    Work::Records(records) => records,
                    Work::Lines {
                        block,
                        first_line,
                        ends,
                        name,
                    } => {
                        let records = parse_lines(&block, &ends, first_line, &name, pass.opts);
                        let _ = recycle.try_send(block);
                        records
                    }
                };
                let numbered = number(records, &mut next_index);
                let (done, mapped) = sync_channel(1);
                pool.spawn(move |_| {
                    let _ = done.send(map_records(numbered, each));
                });
                pending.push_back((mapped, read_to));
                while pending.len() > IN_FLIGHT {
                    self.hand_over_batch(pass, pending.pop_front(), sink)?;
                }
            }
            while !pending.is_empty() {
                self.hand_over_batch(pass, pending.pop_front(), sink)?;
            }
            Ok(())
        })
    }

    /// Waits for a mapped batch and hands its results to `sink` in order, then reports the
    /// bytes read up to its end. A batch whose mapping panicked hands nothing over: the pool's
    /// scope raises the panic again once every batch is done.
    fn hand_over_batch<U, E: From<CorpusError>>(
        &self,
        pass: &Pass,
        batch: Option<(Receiver<Vec<Mapped<U>>>, u64)>,
        sink: &mut impl FnMut(U) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some((mapped, read_to)) = batch else {
            return Ok(());
        };
        for result in mapped.recv().into_iter().flatten() {
            self.hand_over(result, pass.first, pass.stats, sink)?;
        }
        let documents = pass.stats.snapshot().documents;
        pass.progress.advance(read_to, documents);
        Ok(())
    }

    /// Hands a mapped document to `sink`, or deals with a bad record as the options say.
    fn hand_over<U, E: From<CorpusError>>(
        &self,
        result: Result<U, IngestError>,
        first: bool,
        stats: &ReadStats,
        sink: &mut impl FnMut(U) -> Result<(), E>,
    ) -> Result<(), E> {
        match result {
            Ok(value) => {
                stats.count_document();
                sink(value)
            }
            Err(error) if !error.is_bad_record() => Err(CorpusError::Input(error).into()),
            Err(error) => {
                stats.count_error(&error);
                match self.options.on_error {
                    OnError::Skip if first => self.hooks.skipped(&error),
                    OnError::Skip => {}
                    OnError::Fail => return Err(CorpusError::BadRecord(error).into()),
                }
                Ok(())
            }
        }
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

/// The one document of the input `path`, read as a [`Corpus`] reads it (the same formats and
/// options; `options.inputs` is ignored), and its text; an error if the input holds another
/// number of documents, or if a record of it is bad. What `neardup compare` reads.
pub fn read_one_document(
    path: &Path,
    options: &CorpusOptions,
) -> Result<(Document, String), CorpusError> {
    let options = CorpusOptions {
        inputs: vec![path.to_path_buf()],
        on_error: OnError::Fail,
        ..options.clone()
    };
    let corpus = Corpus::new(options, false, Arc::new(NoHooks))?;
    let mut documents = Vec::with_capacity(1);
    corpus.for_each_document(
        "reading",
        false,
        |_, _, text| text.to_string(),
        |doc, text| {
            documents.push((doc, text));
            Ok::<_, CorpusError>(())
        },
    )?;
    match <[_; 1]>::try_from(documents) {
        Ok([one]) => Ok(one),
        Err(documents) => Err(CorpusError::NotOneDocument {
            input: path.display().to_string(),
            found: documents.len(),
        }),
    }
}

/// Checks one input before the run: what it is, and its size if known.
fn check_input(path: &Path, opts: &ReadOptions) -> Result<(InputKind, Option<u64>), CorpusError> {
    if path == Path::new("-") {
        return Ok((InputKind::Stream(OnceLock::new()), None));
    }
    let fail = |kind| CorpusError::Input(IngestError::new(Place::file(path), kind));
    let metadata = std::fs::metadata(path).map_err(|e| fail(ErrorKind::Open(e)))?;
    if metadata.is_dir() {
        let (formats, size) = folder_contents(path);
        return Ok((InputKind::Folder(formats), Some(size)));
    }
    if !metadata.is_file() {
        return Ok((InputKind::Stream(OnceLock::new()), None));
    }
    File::open(path).map_err(|e| fail(ErrorKind::Open(e)))?;
    let format = opts
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

/// Parses a block of JSON Lines in parallel into documents and bad records, as
/// [`crate::JsonlReader`] does (blank lines skipped, over-long lines refused). The block's UTF-8
/// is checked once, here, as a whole: a newline ends no character, so when the block is valid so
/// is each of its lines, and no line is checked again (a block that is not is checked line by
/// line, for the same errors).
fn parse_lines(
    block: &[u8],
    ends: &[usize],
    first_line: u64,
    name: &Arc<Path>,
    opts: &ReadOptions,
) -> Vec<Result<Document, IngestError>> {
    let place = Place::file(Arc::clone(name));
    let valid = simdutf8::basic::from_utf8(block).ok();
    let lines: Vec<(u64, usize, &[u8])> = lines(block, ends, first_line)
        .filter(|(_, _, line)| !line.iter().all(u8::is_ascii_whitespace))
        .collect();
    lines
        .into_par_iter()
        .map(|(number, start, line)| {
            let place = place.at_line(number);
            let (size, limit) = (line.len() as u64, opts.max_document_bytes);
            if size > limit {
                return Err(IngestError::new(place, ErrorKind::TooLarge { size, limit }));
            }
            // A line of a valid block is valid: its bytes as they are (`get` only checks that
            // its ends are character boundaries, which a newline and the block's ends are).
            match valid.and_then(|text| text.get(start..start + line.len())) {
                Some(text) => parse_text_document(text, line, place, opts),
                None => parse_document(line, place, opts),
            }
        })
        .collect()
}

/// Maps a batch of numbered records in parallel with `each`.
fn map_records<U: Send>(
    numbered: Vec<(usize, Result<Document, IngestError>)>,
    each: &(impl Fn(usize, Document) -> U + Sync),
) -> Vec<Mapped<U>> {
    numbered
        .into_par_iter()
        .map(|(index, record)| record.map(|doc| each(index, doc)))
        .collect()
}

/// Numbers the documents of a batch of records from `next_index` on (bad records take no
/// number), as [`Corpus::for_each_document`] hands them out.
fn number(
    records: Vec<Result<Document, IngestError>>,
    next_index: &mut usize,
) -> Vec<(usize, Result<Document, IngestError>)> {
    records
        .into_iter()
        .map(|record| {
            let index = *next_index;
            *next_index += usize::from(record.is_ok());
            (index, record)
        })
        .collect()
}

/// One read of a [`Corpus`], as its working side sees it.
struct Pass<'a> {
    /// Whether it is the corpus's first read (bad records are reported on it only).
    first: bool,
    opts: &'a ReadOptions,
    stats: &'a ReadStats,
    progress: &'a dyn ReadProgress,
}

/// The reading side of [`Corpus::for_each_document`]: opens the inputs one after the other and
/// sends their records (or blocks of lines) until the end, an input that cannot be read, or
/// the receiver hangs up.
struct Reader<'c> {
    corpus: &'c Corpus,
    first: bool,
    opts: &'c Arc<ReadOptions>,
    stats: &'c Arc<ReadStats>,
    bytes_read: &'c Arc<AtomicU64>,
    sender: SyncSender<(Work, u64)>,
    recycled: Receiver<Vec<u8>>,
}

impl Reader<'_> {
    fn run(self) {
        let inputs = &self.corpus.inputs;
        let mut i = 0;
        while i < inputs.len() {
            // Files of one document each (HTML, text) given one after the other go to the pool
            // in batches, as a folder's do: one hand-over per file costs more than its reading.
            let run = inputs[i..]
                .iter()
                .take_while(|x| x.is_one_document())
                .count();
            let more = if run > 1 {
                self.send_records((i..i + run).flat_map(|j| self.documents_of(j)))
            } else {
                self.send_input(i)
            };
            if !more {
                return;
            }
            i += run.max(1);
        }
    }

    /// Sends the records of input `i`; false if the run is over.
    fn send_input(&self, i: usize) -> bool {
        let input = &self.corpus.inputs[i];
        match &input.kind {
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
        let fail = |error: io::Error| {
            IngestError::new(Place::file(Arc::clone(&name)), ErrorKind::Read(error))
        };
        let spool = self.corpus.spool.as_ref();
        let opened = match (&input.kind, spool) {
            (InputKind::Stream(format), Some(spool)) if !self.first => {
                let format = *format.get().expect("a stream's format is known once read");
                OpenedInput::new(spool.read_copy(i).map_err(fail)?, name, format)
            }
            (InputKind::Stream(format), spool) => {
                let opened = OpenedInput::open(&input.path, self.opts)?;
                let _ = format.set(opened.format);
                match spool {
                    Some(spool) => opened
                        .try_map_reader(|reader| spool.tee(i, &input.path, reader))
                        .map_err(fail)?,
                    None => opened,
                }
            }
            _ => OpenedInput::open(&input.path, self.opts)?,
        };
        let counter = Arc::clone(self.bytes_read);
        Ok(opened.map_reader(|reader| Box::new(Counting { reader, counter })))
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
                Ok(Some(Chunk::Lines {
                    block,
                    first_line,
                    ends,
                })) => Work::Lines {
                    block,
                    first_line,
                    ends,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    /// A failure of its own, with a cause.
    #[derive(Debug, thiserror::Error)]
    #[error("stopped")]
    struct Stopped(#[source] io::Error);

    #[test]
    fn every_error_wrapping_another_keeps_its_cause() {
        let record = || {
            let kind = ErrorKind::Read(io::Error::other("disk"));
            IngestError::new(Place::file(Path::new("a.jsonl")), kind)
        };
        let errors = [
            CorpusError::Input(record()),
            CorpusError::BadRecord(record()),
            CorpusError::Stopped(Box::new(Stopped(io::Error::other("signal")))),
            CorpusError::Temporary(io::Error::other(io::Error::other("full"))),
            CorpusError::Spool(io::Error::other(io::Error::other("full"))),
        ];
        for error in errors {
            assert!(error.source().is_some(), "{error:?} lost its cause");
        }
    }
}
