//! Kept records with their text rewritten (`neardup dedup --granularity --kept`), written as
//! [`super`] writes kept records: JSON Lines compressed as the output's name says
//! (`.jsonl.gz`, `.jsonl.zst`), or, from Parquet inputs, Parquet rows with every column of
//! the input and the text column replaced.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;

use super::{open_again, parquet_properties, KeptError, KeptRows, ROW_GROUP_BYTES, ZSTD_LEVEL};
use crate::corpus::Corpus;
use crate::document::Document;
use crate::format::{Compression, Format};

/// Where the rewritten records go.
enum Sink<'w, W: Write + Send> {
    /// JSON lines, as they are.
    Plain(&'w mut W),
    /// JSON lines, gzip-compressed.
    Gzip(flate2::write::GzEncoder<&'w mut W>),
    /// JSON lines, zstd-compressed.
    Zstd(zstd::Encoder<'static, &'w mut W>),
    /// Parquet rows: the kept rows (file, row) and their new texts, spooled to a file in
    /// order (each a little-endian u64 length and the bytes), until [`Rewrites::finish`].
    Parquet {
        out: &'w mut W,
        rows: KeptRows,
        texts: BufWriter<File>,
    },
}

/// A `--kept` output of rewritten records, written as they come, in input order.
pub struct Rewrites<'w, W: Write + Send> {
    sink: Sink<'w, W>,
}

/// Whether every input of `corpus` is Parquet (and there is one).
fn all_parquet(corpus: &Corpus) -> bool {
    let mut formats = corpus.formats().peekable();
    formats.peek().is_some() && formats.all(|f| f == Format::Parquet)
}

/// Checks, before anything is read, that rewritten records can go to `path`: JSON Lines
/// (compressed as the name says), or Parquet from Parquet inputs only.
pub fn check_rewritten(corpus: &Corpus, path: &Path) -> Result<(), KeptError> {
    rewritten_format(corpus, path).map(|_| ())
}

/// The format of rewritten records written to `path`: Parquet when every input is Parquet
/// and the name says Parquet or nothing, else JSON Lines compressed as the name says.
fn rewritten_format(corpus: &Corpus, path: &Path) -> Result<Option<Compression>, KeptError> {
    let parquet = all_parquet(corpus);
    match Format::from_extension(path) {
        None if parquet => Ok(None),
        Some(Format::Parquet) if parquet => Ok(None),
        None => Ok(Some(Compression::None)),
        Some(Format::Jsonl(codec)) => Ok(Some(codec)),
        Some(Format::Parquet) => Err(KeptError::OtherKind {
            path: path.display().to_string(),
            named: "Parquet",
            kind: "JSON Lines (Parquet is written from Parquet inputs only)",
        }),
        Some(named) => Err(KeptError::NotRecords {
            path: path.display().to_string(),
            kind: "rewritten JSON Lines",
            named,
        }),
    }
}

impl<'w, W: Write + Send> Rewrites<'w, W> {
    /// The output `path` (its name says the format, see [`check_rewritten`]) written to
    /// `out`; Parquet rows spool their texts to a file in `spill_dir` until the end.
    pub fn new(
        out: &'w mut W,
        path: &Path,
        corpus: &Corpus,
        spill_dir: &Path,
    ) -> Result<Self, KeptError> {
        let sink = match rewritten_format(corpus, path)? {
            Some(Compression::Gzip) => Sink::Gzip(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::default(),
            )),
            Some(Compression::Zstd) => Sink::Zstd(zstd::Encoder::new(out, ZSTD_LEVEL)?),
            Some(_) => Sink::Plain(out),
            None => Sink::Parquet {
                out,
                rows: Vec::new(),
                texts: BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(spill_dir)?),
            },
        };
        Ok(Rewrites { sink })
    }

    /// Whether the output is Parquet: documents are written with [`Rewrites::row`], else
    /// with [`Rewrites::line`].
    pub fn is_parquet(&self) -> bool {
        matches!(self.sink, Sink::Parquet { .. })
    }

    /// Writes a record's JSON line (without its newline).
    pub fn line(&mut self, line: &[u8]) -> Result<(), KeptError> {
        let out: &mut dyn Write = match &mut self.sink {
            Sink::Plain(out) => *out,
            Sink::Gzip(out) => out,
            Sink::Zstd(out) => out,
            Sink::Parquet { .. } => {
                return Err(KeptError::Io(std::io::Error::other(
                    "a JSON line for a Parquet output",
                )))
            }
        };
        out.write_all(line)?;
        out.write_all(b"\n")?;
        Ok(())
    }

    /// Keeps the Parquet row of `doc` with `text` as its new text.
    pub fn row(&mut self, doc: &Document, text: &str) -> Result<(), KeptError> {
        let Sink::Parquet { rows, texts, .. } = &mut self.sink else {
            return Err(KeptError::Io(std::io::Error::other(
                "a Parquet row for a JSON Lines output",
            )));
        };
        let place = &doc.place;
        let row = place.line.ok_or_else(|| {
            super::cannot_read_again(&place.source, "a Parquet document without its row")
        })? - 1;
        match rows.last_mut() {
            Some((source, kept)) if *source == place.source => kept.push(row),
            _ => rows.push((place.source.clone(), vec![row])),
        }
        texts.write_all(&(text.len() as u64).to_le_bytes())?;
        texts.write_all(text.as_bytes())?;
        Ok(())
    }

    /// Ends the output: the compressed stream's end, or the Parquet file (the kept rows read
    /// again with every column, the column `text_field` replaced by the new texts, or added
    /// at the end when the input has none).
    pub fn finish(self, corpus: &Corpus, text_field: &str) -> Result<(), KeptError> {
        match self.sink {
            Sink::Plain(_) => Ok(()),
            Sink::Gzip(out) => out.finish().map(|_| ()).map_err(KeptError::from),
            Sink::Zstd(out) => out.finish().map(|_| ()).map_err(KeptError::from),
            Sink::Parquet { out, rows, texts } => {
                let texts = texts.into_inner().map_err(|e| e.into_error())?;
                write_parquet(out, corpus, &rows, texts, text_field)
            }
        }
    }
}

/// Writes the kept rows of `files` with their texts replaced (see [`Rewrites::finish`]).
fn write_parquet(
    out: &mut (impl Write + Send),
    corpus: &Corpus,
    files: &KeptRows,
    mut texts: File,
    text_field: &str,
) -> Result<(), KeptError> {
    let Some((first, rows)) = files.first() else {
        return Err(KeptError::NoParquetRow);
    };
    let input_schema = open_again(first, rows)?.schema();
    let schema = with_text(&input_schema, text_field);
    let mut writer = ArrowWriter::try_new(out, schema.clone(), Some(parquet_properties()))?;
    texts.seek(SeekFrom::Start(0))?;
    let mut texts = BufReader::with_capacity(1 << 20, texts);
    for (source, rows) in files {
        let mut reader = open_again(source, rows)?;
        if reader.schema() != input_schema {
            return Err(KeptError::OtherColumns {
                input: source.display().to_string(),
                first: first.display().to_string(),
            });
        }
        while let Some(batch) = neardup_guard::catch(|| reader.next()).map_err(|panic| {
            super::cannot_read_again(source, format!("the decoder failed: {panic}"))
        })? {
            corpus.hooks().check().map_err(KeptError::Stopped)?;
            let batch = batch.map_err(|e| super::cannot_read_again(source, e))?;
            let new_texts = read_texts(&mut texts, batch.num_rows())?;
            writer.write(&replace_text(&schema, &batch, text_field, new_texts)?)?;
            if writer.in_progress_size() > ROW_GROUP_BYTES {
                writer.flush()?;
            }
        }
    }
    writer.close()?;
    Ok(())
}

/// The schema of the output: the input's, with the column `text_field` a string column (added
/// at the end when the input has none).
fn with_text(schema: &SchemaRef, text_field: &str) -> SchemaRef {
    let text = Field::new(text_field, DataType::Utf8, true);
    let mut fields: Vec<Field> = Vec::with_capacity(schema.fields().len() + 1);
    let mut found = false;
    for field in schema.fields() {
        if field.name() == text_field {
            found = true;
            fields.push(text.clone().with_metadata(field.metadata().clone()));
        } else {
            fields.push(field.as_ref().clone());
        }
    }
    if !found {
        fields.push(text);
    }
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The next `count` texts of the spool.
fn read_texts(texts: &mut impl Read, count: usize) -> Result<StringArray, KeptError> {
    let mut all = Vec::with_capacity(count);
    for _ in 0..count {
        let mut len = [0u8; 8];
        texts.read_exact(&mut len)?;
        let mut text = vec![0u8; u64::from_le_bytes(len) as usize];
        texts.read_exact(&mut text)?;
        all.push(String::from_utf8(text).map_err(std::io::Error::other)?);
    }
    Ok(StringArray::from(all))
}

/// `batch` with its column `text_field` replaced by `texts` (or added), under `schema`.
fn replace_text(
    schema: &SchemaRef,
    batch: &RecordBatch,
    text_field: &str,
    texts: StringArray,
) -> Result<RecordBatch, KeptError> {
    let texts: ArrayRef = Arc::new(texts);
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    let mut found = false;
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if field.name() == text_field {
            found = true;
            columns.push(texts.clone());
        } else {
            columns.push(column.clone());
        }
    }
    if !found {
        columns.push(texts);
    }
    debug_assert!(columns.iter().all(|c| c.len() == batch.num_rows()));
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}
