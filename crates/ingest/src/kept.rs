//! Kept records written back in their format (`neardup dedup --kept`): the input records of
//! the kept documents, unchanged and in input order, in the format they came in: JSON Lines as
//! read (byte for byte, each followed by a newline), WARC records as WARC, one gzip member a
//! record when the input was `.warc.gz`, Parquet rows as Parquet with every column of the
//! input. One output holds one format: inputs of two formats are refused up front.

use std::error::Error as StdError;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatchReader;
use parquet::arrow::arrow_reader::{
    ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::corpus::{Corpus, CorpusError};
use crate::format::{Compression, Format};

mod rewritten;

pub use rewritten::{check_rewritten, Rewrites};

/// Why kept records could not be written.
#[derive(Debug, thiserror::Error)]
pub enum KeptError {
    /// The inputs hold records of two kinds.
    #[error("--kept writes records in the format they came in, one format a file, but the inputs hold {first} and {other} records: dedup them in separate runs, or leave out --kept")]
    Mixed {
        /// The first kind.
        first: &'static str,
        /// Another.
        other: &'static str,
    },
    /// The output's name says a format that is no kind of record.
    #[error("--kept {path}: the kept records are {kind}, not {named} (name it .jsonl, .jsonl.gz, .jsonl.zst, .warc, .warc.gz or .parquet as the inputs are)")]
    NotRecords {
        /// The output.
        path: String,
        /// The kind of the kept records.
        kind: &'static str,
        /// The format its name says.
        named: Format,
    },
    /// The output's name says another kind of records than the inputs'.
    #[error("--kept {path} names {named} records, but the kept records are {kind}, written as they came in: give it a name of that format, or no extension")]
    OtherKind {
        /// The output.
        path: String,
        /// The kind its name says.
        named: &'static str,
        /// The kind of the kept records.
        kind: &'static str,
    },
    /// A read of the corpus failed.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// The inputs changed between reads.
    #[error("the inputs changed while deduplicating ({read} documents on the last read, {first} on the first)")]
    Changed {
        /// Documents of the last read.
        read: usize,
        /// Documents of the first.
        first: usize,
    },
    /// No document was kept from Parquet inputs.
    #[error("no document was kept, so there is no Parquet row to write")]
    NoParquetRow,
    /// Two Parquet inputs have other columns.
    #[error("--kept writes one Parquet file, but {input} has other columns than {first}: dedup them in separate runs")]
    OtherColumns {
        /// The input.
        input: String,
        /// The first input.
        first: String,
    },
    /// A Parquet input could not be read again.
    #[error("cannot read {input} again")]
    ReadAgain {
        /// The input.
        input: String,
        /// Why.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// The hooks stopped the run.
    #[error(transparent)]
    Stopped(crate::corpus::Stop),
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// Writing a JSON line failed.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// Writing Parquet failed.
    #[error(transparent)]
    Parquet(#[from] parquet::errors::ParquetError),
    /// Filtering Parquet rows failed.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
}

impl KeptError {
    /// Whether the error is in the output's name (a usage error), not in the run.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            KeptError::NotRecords { .. } | KeptError::OtherKind { .. }
        )
    }
}

/// Bytes of rows the Parquet writer holds before it closes a row group: what bounds its memory.
const ROW_GROUP_BYTES: usize = 64 << 20;
/// zstd level of a `--kept *.jsonl.zst` output: zstd's default, a good ratio at over 100 MB/s.
const ZSTD_LEVEL: i32 = 3;
/// Rows read at a time when the kept rows of a Parquet input are copied.
const COPY_BATCH_ROWS: usize = 8192;

/// The format of a `--kept` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeptFormat {
    /// JSON Lines: each record's line as read; a file read whole (`.txt`, `.html`) as a line
    /// `{"id", "text"}`; compressed as the output's name says (`.jsonl.gz`, `.jsonl.zst`).
    Jsonl(Compression),
    /// WARC records as read.
    Warc,
    /// WARC records as read, each compressed as a gzip member.
    WarcGz,
    /// The kept rows of Parquet inputs, every column as read.
    Parquet,
}

impl KeptFormat {
    fn of(format: Format) -> KeptFormat {
        match format {
            Format::Warc => KeptFormat::Warc,
            Format::WarcGz => KeptFormat::WarcGz,
            Format::Parquet => KeptFormat::Parquet,
            _ => KeptFormat::Jsonl(Compression::None),
        }
    }

    /// The same kind of records (JSON Lines, WARC, Parquet), whatever the compression.
    fn same_kind(self, other: KeptFormat) -> bool {
        let kind = |f| match f {
            KeptFormat::Jsonl(_) => 0,
            KeptFormat::Warc | KeptFormat::WarcGz => 1,
            KeptFormat::Parquet => 2,
        };
        kind(self) == kind(other)
    }

    fn name(self) -> &'static str {
        match self {
            KeptFormat::Jsonl(_) => "JSON Lines",
            KeptFormat::Warc => "WARC",
            KeptFormat::WarcGz => "gzip-compressed WARC",
            KeptFormat::Parquet => "Parquet",
        }
    }
}

/// The format the corpus' kept records are written in to `path`: the inputs' (JSON Lines when
/// no input's format is known yet), compressed as the name says (`kept.jsonl.zst`,
/// `kept.warc.gz`, or as the first input was when the name says nothing, as `-` does). An
/// error when the inputs hold records of two kinds (JSON Lines and WARC), and a usage error
/// when the name says another kind than the inputs' (`kept.parquet` for JSON Lines).
fn kept_format(corpus: &Corpus, path: &Path) -> Result<KeptFormat, KeptError> {
    let mut formats = corpus.formats().map(KeptFormat::of);
    let first = formats
        .next()
        .unwrap_or(KeptFormat::Jsonl(Compression::None));
    if let Some(other) = formats.find(|f| !f.same_kind(first)) {
        return Err(KeptError::Mixed {
            first: first.name(),
            other: other.name(),
        });
    }
    let named = match Format::from_extension(path) {
        None => return Ok(first),
        Some(Format::Jsonl(codec)) => KeptFormat::Jsonl(codec),
        Some(Format::Warc) => KeptFormat::Warc,
        Some(Format::WarcGz) => KeptFormat::WarcGz,
        Some(Format::Parquet) => KeptFormat::Parquet,
        Some(named) => {
            return Err(KeptError::NotRecords {
                path: path.display().to_string(),
                kind: first.name(),
                named,
            })
        }
    };
    if !named.same_kind(first) {
        return Err(KeptError::OtherKind {
            path: path.display().to_string(),
            named: named.name(),
            kind: first.name(),
        });
    }
    Ok(named)
}

/// Checks, before anything is read, that the kept records can go in one output at `path`.
pub fn check(corpus: &Corpus, path: &Path) -> Result<(), KeptError> {
    kept_format(corpus, path).map(|_| ())
}

/// Writes the input records of the documents whose `kept` entry is true, read again from the
/// corpus, to `out`.
pub fn write_kept(
    out: &mut (impl Write + Send),
    path: &Path,
    corpus: &Corpus,
    kept: &[bool],
) -> Result<(), KeptError> {
    match kept_format(corpus, path)? {
        KeptFormat::Parquet => write_kept_parquet(out, corpus, kept),
        KeptFormat::Jsonl(Compression::Gzip) => {
            let mut gzip = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            write_kept_records(
                &mut gzip,
                KeptFormat::Jsonl(Compression::None),
                corpus,
                kept,
            )?;
            gzip.finish()?;
            Ok(())
        }
        KeptFormat::Jsonl(Compression::Zstd) => {
            let mut zstd = zstd::Encoder::new(out, ZSTD_LEVEL)?;
            write_kept_records(
                &mut zstd,
                KeptFormat::Jsonl(Compression::None),
                corpus,
                kept,
            )?;
            zstd.finish()?;
            Ok(())
        }
        format => write_kept_records(out, format, corpus, kept),
    }
}

/// Writes the kept records one by one, as read (JSON Lines, WARC): see [`write_kept`].
fn write_kept_records(
    out: &mut (impl Write + Send),
    format: KeptFormat,
    corpus: &Corpus,
    kept: &[bool],
) -> Result<(), KeptError> {
    let mut index = 0usize;
    corpus.for_each_document(
        "writing kept records",
        true,
        // Only a document without a raw record (a file read whole) needs its text.
        |_, doc, text| doc.raw.is_none().then(|| text.to_string()),
        |doc, text| {
            if kept.get(index).copied().unwrap_or(false) {
                match (doc.raw.as_deref(), format) {
                    (Some(raw), KeptFormat::WarcGz) => {
                        let mut member = flate2::write::GzEncoder::new(
                            &mut *out,
                            flate2::Compression::default(),
                        );
                        member.write_all(raw)?;
                        member.finish()?;
                    }
                    (Some(raw), KeptFormat::Warc) => out.write_all(raw)?,
                    (Some(raw), KeptFormat::Jsonl(_) | KeptFormat::Parquet) => {
                        out.write_all(raw)?;
                        out.write_all(b"\n")?;
                    }
                    (None, _) => {
                        let line = serde_json::json!({ "id": doc.id, "text": text });
                        serde_json::to_writer(&mut *out, &line)?;
                        out.write_all(b"\n")?;
                    }
                }
            }
            index += 1;
            Ok::<_, KeptError>(())
        },
    )?;
    same_documents(index, kept)
}

/// Fails if the last read found another number of documents than the first.
fn same_documents(read: usize, kept: &[bool]) -> Result<(), KeptError> {
    if read != kept.len() {
        return Err(KeptError::Changed {
            read,
            first: kept.len(),
        });
    }
    Ok(())
}

/// Parquet: the kept rows of every input file with all their columns, in one file. The
/// documents are read again through the reader of the first read, which alone knows which rows
/// are documents, to find the kept rows (file and row number); then each file's kept rows are
/// read with every column ([`open_again`]) and written. Memory: one batch of the input and at
/// most [`ROW_GROUP_BYTES`] of rows waiting in the writer.
fn write_kept_parquet(
    out: &mut (impl Write + Send),
    corpus: &Corpus,
    kept: &[bool],
) -> Result<(), KeptError> {
    let files = kept_rows(corpus, kept)?;
    let Some((first, rows)) = files.first() else {
        return Err(KeptError::NoParquetRow);
    };
    let schema = open_again(first, rows)?.schema();
    let mut writer = ArrowWriter::try_new(out, schema.clone(), Some(parquet_properties()))?;
    for (source, rows) in &files {
        let mut reader = open_again(source, rows)?;
        if reader.schema() != schema {
            return Err(KeptError::OtherColumns {
                input: source.display().to_string(),
                first: first.display().to_string(),
            });
        }
        while let Some(batch) = neardup_guard::catch(|| reader.next())
            .map_err(|panic| cannot_read_again(source, format!("the decoder failed: {panic}")))?
        {
            corpus.hooks().check().map_err(KeptError::Stopped)?;
            writer.write(&batch.map_err(|e| cannot_read_again(source, e))?)?;
            if writer.in_progress_size() > ROW_GROUP_BYTES {
                writer.flush()?;
            }
        }
    }
    writer.close()?;
    Ok(())
}

/// The properties of a `--kept` Parquet output: zstd-compressed columns.
fn parquet_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(ParquetCompression::ZSTD(ZstdLevel::default()))
        .build()
}

/// Parquet input files, each with the 0-based numbers of its kept rows, in order.
type KeptRows = Vec<(Arc<Path>, Vec<u64>)>;

/// The kept rows of the corpus' Parquet inputs.
fn kept_rows(corpus: &Corpus, kept: &[bool]) -> Result<KeptRows, KeptError> {
    let mut files: KeptRows = Vec::new();
    let mut index = 0usize;
    corpus.for_each_document(
        "finding kept rows",
        false,
        |_, _, _| (),
        |doc, ()| {
            if kept.get(index).copied().unwrap_or(false) {
                let place = &doc.place;
                let row = place.line.ok_or_else(|| {
                    cannot_read_again(&place.source, "a Parquet document without its row")
                })? - 1;
                match files.last_mut() {
                    Some((source, rows)) if *source == doc.place.source => rows.push(row),
                    _ => files.push((doc.place.source, vec![row])),
                }
            }
            index += 1;
            Ok::<_, KeptError>(())
        },
    )?;
    same_documents(index, kept)?;
    Ok(files)
}

/// The rows `rows` (from 0, ascending) of a Parquet input opened again, with every column, in
/// batches of [`COPY_BATCH_ROWS`]: a row selection, so the pages of rows not kept (a row group
/// skipped as over the size limit, say) are passed over, not decoded. The `parquet` crate's
/// panics on a damaged file are errors.
fn open_again(source: &Path, rows: &[u64]) -> Result<ParquetRecordBatchReader, KeptError> {
    let file = File::open(source).map_err(|e| cannot_read_again(source, e))?;
    let mut selectors: Vec<RowSelector> = Vec::new();
    let mut next = 0;
    for &row in rows {
        if row > next {
            selectors.push(RowSelector::skip((row - next) as usize));
        }
        match selectors.last_mut() {
            Some(last) if !last.skip && row == next => last.row_count += 1,
            _ => selectors.push(RowSelector::select(1)),
        }
        next = row + 1;
    }
    let built = neardup_guard::catch(|| {
        ParquetRecordBatchReaderBuilder::try_new(file)?
            .with_row_selection(RowSelection::from(selectors))
            .with_batch_size(COPY_BATCH_ROWS)
            .build()
    });
    built
        .map_err(|panic| cannot_read_again(source, format!("the decoder failed: {panic}")))?
        .map_err(|e| cannot_read_again(source, e))
}

/// The error of an input that cannot be read again.
fn cannot_read_again(
    source: &Path,
    error: impl Into<Box<dyn StdError + Send + Sync>>,
) -> KeptError {
    KeptError::ReadAgain {
        input: source.display().to_string(),
        source: error.into(),
    }
}
