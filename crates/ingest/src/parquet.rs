//! Parquet input: each row a document, its fields read from the columns named like the JSON
//! Lines fields ([`crate::JsonlFields`]: `text`, else `html`; `id`, `url`, `title`,
//! `fetched_at`).
//!
//! Only the named columns are read (a projection), one row group at a time, in batches of
//! [`BATCH_ROWS`] rows, so memory is bounded by a row group's text rather than the file's. A row's
//! place is its file and 1-based row number (`pages.parquet:42`), and `--kept` finds its rows
//! again by that number. Text columns may be `string`, `large_string`, `string_view` or
//! dictionary-encoded strings; the id may also be an integer column (written in decimal, as a
//! JSON number id is). A file without the text (or html) column, or with a column of another
//! type, cannot be read as asked: an error that stops the run, like an unreadable input. A null
//! text in a row (with no html either) is a bad record, as a record without text is in JSONL.
//! Parquet needs a file it can seek in: standard input and pipes are refused with a message.
//!
//! Damaged and hostile files: before a row group is read, each column chunk read must lie within
//! the file and declare no more uncompressed bytes than its rows could hold within
//! `max_document_bytes` ([`ErrorKind::ChunkTooLarge`] skips the row group unread otherwise, so a
//! tiny file holding one huge compressible string costs nothing); then the page headers of each
//! such chunk are read (`page_headers`, never the pages) and no page may declare more than
//! 3 × `max_document_bytes` and 64 KiB ([`ErrorKind::PageTooLarge`] skips the row group unread
//! otherwise, so one huge value among many small ones in a page is not decoded either: writers
//! cut pages at about 1 MiB by default, so a page over that holds a value over the limit or is
//! hostile). Every call into the `parquet` and `arrow` crates runs under
//! [`neardup_guard::catch`], so their panics on a corrupt file are [`ErrorKind::Parquet`] errors
//! with the place (file, row, row group); so is a page header that does not parse.

use std::borrow::Cow;
use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::errors::ParquetError;
use parquet::file::metadata::ColumnChunkMetaData;

use crate::document::{Document, Place};
use crate::error::{ErrorKind, IngestError, ParquetFailure};
use crate::jsonl::{InputRecord, InputRecordBody};
use crate::options::ReadOptions;

mod page_headers;

/// Rows decoded at a time.
pub const BATCH_ROWS: usize = 1024;

/// What a column chunk may declare per row, in `max_document_bytes`: the value itself, and the
/// smallest and largest values a page header may repeat as its statistics.
const CHUNK_LIMITS_PER_ROW: u64 = 3;
/// What a column chunk may declare per row besides: its length, levels, a page header.
const CHUNK_BYTES_PER_ROW: u64 = 128;
/// What a column chunk may declare besides its rows: a dictionary page header, and so on.
const CHUNK_SLACK: u64 = 64 << 10;

/// The documents of one Parquet file; see the module documentation.
pub struct ParquetReader {
    place: Place,
    opts: Arc<ReadOptions>,
    state: State,
}

/// Where the reader is.
enum State {
    /// Opening failed, or a column is unusable: this error, then the end.
    Failed(Option<IngestError>),
    Reading(Box<Reading>),
    Done,
}

/// An open file, read one row group at a time.
struct Reading {
    file: File,
    /// The file's length, which every column chunk read must lie within.
    len: u64,
    metadata: ArrowReaderMetadata,
    mask: ProjectionMask,
    /// The next row group to open.
    next_group: usize,
    /// The row group being read, if one is.
    group: Option<Group>,
    /// Rows of the file before the current batch.
    before: u64,
}

/// The row group being read.
struct Group {
    index: usize,
    batches: ParquetRecordBatchReader,
    /// The current batch, its columns, and the next row in it.
    batch: Option<(RecordBatch, Columns)>,
    at: usize,
}

/// What became of a row group that could not be opened.
enum Refused {
    /// Skipped (a bad record: its rows are over the size limit); reading goes on after it.
    Skipped(IngestError),
    /// The file cannot be read from here on.
    Failed(IngestError),
}

/// Where each configured field is in a batch (by column position), if the file has it.
#[derive(Clone, Copy, Default)]
struct Columns {
    text: Option<usize>,
    html: Option<usize>,
    id: Option<usize>,
    url: Option<usize>,
    title: Option<usize>,
    fetched_at: Option<usize>,
}

impl ParquetReader {
    /// Opens `path` for reading its rows as documents.
    pub fn open(path: Arc<Path>, opts: Arc<ReadOptions>) -> ParquetReader {
        let place = Place::file(Arc::clone(&path));
        let state = match Reading::open(&path, &opts) {
            Ok(reading) => State::Reading(Box::new(reading)),
            Err(kind) => State::Failed(Some(IngestError::new(place.clone(), kind))),
        };
        ParquetReader { place, opts, state }
    }
}

impl Reading {
    /// The file's metadata and the projection of the configured columns, or why the file
    /// cannot be read.
    fn open(path: &Path, opts: &ReadOptions) -> Result<Reading, ErrorKind> {
        if path == Path::new("-") {
            return Err(not_seekable());
        }
        let file = File::open(path).map_err(ErrorKind::Open)?;
        let file_metadata = file.metadata().map_err(ErrorKind::Open)?;
        if !file_metadata.is_file() {
            return Err(not_seekable());
        }
        let metadata = guarded(|| ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()))
            .map_err(|failure| ErrorKind::parquet_failed("the footer", failure))?;
        let fields = &opts.fields;
        let names = [
            Some(&fields.text),
            fields.html.as_ref(),
            Some(&fields.id),
            fields.url.as_ref(),
            fields.title.as_ref(),
            fields.fetched_at.as_ref(),
        ];
        let schema = metadata.schema();
        let wanted: Vec<usize> = names
            .iter()
            .flatten()
            .filter_map(|name| schema.index_of(name).ok())
            .collect();
        let has_body = [Some(&fields.text), fields.html.as_ref()]
            .iter()
            .flatten()
            .any(|name| schema.index_of(name).is_ok());
        if !has_body {
            let missing = ErrorKind::MissingText {
                text: fields.text.clone(),
                html: fields.html.clone(),
            };
            return Err(ErrorKind::parquet(format!("no row can be read: {missing}")));
        }
        let mask = guarded(|| {
            Ok::<_, ParquetError>(ProjectionMask::roots(
                metadata.metadata().file_metadata().schema_descr(),
                wanted,
            ))
        })
        .map_err(|failure| ErrorKind::parquet_failed("the columns to read", failure))?;
        Ok(Reading {
            file,
            len: file_metadata.len(),
            metadata,
            mask,
            next_group: 0,
            group: None,
            before: 0,
        })
    }

    /// Opens row group `index` after checking what its metadata declares: the read column
    /// chunks within the file, and not bigger than their rows could be within the size limit.
    fn open_group(&self, index: usize, place: &Place, limit: u64) -> Result<Group, Refused> {
        let row_group = self.metadata.metadata().row_group(index);
        let first = place.at_line(self.before + 1);
        let failed = |detail: String| {
            let kind = ErrorKind::parquet(format!("row group {index}: {detail}"));
            Refused::Failed(IngestError::new(first.clone(), kind))
        };
        let rows = u64::try_from(row_group.num_rows())
            .map_err(|_| failed(format!("{} rows declared", row_group.num_rows())))?;
        let read = row_group
            .columns()
            .iter()
            .enumerate()
            .filter(|(leaf, _)| self.mask.leaf_included(*leaf));
        for (_, chunk) in read {
            self.check_chunk(index, rows, chunk, limit)
                .map_err(|check| match check {
                    Check::Skip(kind) => Refused::Skipped(IngestError::new(first.clone(), kind)),
                    Check::Fail(detail) => failed(detail),
                })?;
        }
        let file = self.file.try_clone().map_err(|error| {
            Refused::Failed(IngestError::new(first.clone(), ErrorKind::Read(error)))
        })?;
        let batches = guarded(|| {
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.metadata.clone())
                .with_projection(self.mask.clone())
                .with_row_groups(vec![index])
                .with_batch_size(BATCH_ROWS)
                .build()
        })
        .map_err(|failure| {
            let kind = ErrorKind::parquet_failed(&format!("row group {index}"), failure);
            Refused::Failed(IngestError::new(first.clone(), kind))
        })?;
        Ok(Group {
            index,
            batches,
            batch: None,
            at: 0,
        })
    }

    /// Checks what column chunk `chunk` of row group `group` (of `rows` rows) declares: its
    /// bytes within the file, its uncompressed size within what its rows could hold within
    /// `limit`, and each of its pages (from their headers) within [`page_allowance`].
    fn check_chunk(
        &self,
        group: usize,
        rows: u64,
        chunk: &ColumnChunkMetaData,
        limit: u64,
    ) -> Result<(), Check> {
        let column = chunk.column_path().string();
        let (bytes, declared) = declared_bytes(chunk, self.len)
            .map_err(|detail| Check::Fail(format!("column `{column}`: {detail}")))?;
        if declared > chunk_allowance(rows, limit) {
            return Err(Check::Skip(ErrorKind::ChunkTooLarge {
                group,
                rows,
                column,
                size: declared,
                limit,
            }));
        }
        let large = page_headers::large_page(&self.file, bytes, page_allowance(limit))
            .map_err(|detail| Check::Fail(format!("column `{column}`: {detail}")))?;
        match large {
            Some(page) => Err(Check::Skip(ErrorKind::PageTooLarge {
                group,
                column,
                offset: page.offset,
                size: page.size,
                limit,
            })),
            None => Ok(()),
        }
    }
}

/// Why a column chunk is not read.
enum Check {
    /// Its row group is skipped: this bad record.
    Skip(ErrorKind),
    /// The file cannot be read from here on: what is wrong.
    Fail(String),
}

/// The bytes of a column chunk in the file, known to lie within a file of `file_len` bytes, and
/// the uncompressed bytes it declares; or what is wrong with its metadata.
fn declared_bytes(chunk: &ColumnChunkMetaData, file_len: u64) -> Result<(Range<u64>, u64), String> {
    let start = chunk
        .dictionary_page_offset()
        .unwrap_or(chunk.data_page_offset());
    let (compressed, uncompressed) = (chunk.compressed_size(), chunk.uncompressed_size());
    let within = u64::try_from(start)
        .ok()
        .zip(u64::try_from(compressed).ok())
        .and_then(|(start, len)| Some(start..start.checked_add(len)?))
        .filter(|bytes| bytes.end <= file_len);
    let Some(bytes) = within else {
        return Err(format!(
            "{compressed} bytes at offset {start} declared, outside the file of {file_len} bytes"
        ));
    };
    let uncompressed = u64::try_from(uncompressed)
        .map_err(|_| format!("{uncompressed} uncompressed bytes declared"))?;
    Ok((bytes, uncompressed))
}

/// The most uncompressed bytes a column chunk of `rows` rows, each within `limit`, can hold.
fn chunk_allowance(rows: u64, limit: u64) -> u64 {
    let per_row = limit
        .saturating_mul(CHUNK_LIMITS_PER_ROW)
        .saturating_add(CHUNK_BYTES_PER_ROW);
    rows.saturating_mul(per_row).saturating_add(CHUNK_SLACK)
}

/// The most bytes a page may declare (uncompressed or compressed): 3 × `limit` (a value, and
/// the min/max its header may repeat) and 64 KiB. Writers cut pages at about 1 MiB (the
/// `parquet` crate and parquet-mr by default), so a page over this holds a value over the
/// limit, or is hostile.
fn page_allowance(limit: u64) -> u64 {
    limit
        .saturating_mul(CHUNK_LIMITS_PER_ROW)
        .saturating_add(CHUNK_SLACK)
}

/// Runs a call into the `parquet` and `arrow` crates, which panic on some corrupt files: their
/// error or their panic as a message.
fn guarded<T, E: Into<ParquetFailure>>(
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, ParquetFailure> {
    match neardup_guard::catch(f) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.into()),
        Err(panic) => Err(ParquetFailure::Panicked(panic)),
    }
}

impl Iterator for ParquetReader {
    type Item = Result<Document, IngestError>;

    fn next(&mut self) -> Option<Self::Item> {
        let ParquetReader { place, opts, state } = self;
        loop {
            let State::Reading(reading) = state else {
                return match std::mem::replace(state, State::Done) {
                    State::Failed(error) => error.map(Err),
                    _ => None,
                };
            };
            let Some(group) = &mut reading.group else {
                let index = reading.next_group;
                if index == reading.metadata.metadata().num_row_groups() {
                    *state = State::Done;
                    return None;
                }
                reading.next_group += 1;
                match reading.open_group(index, place, opts.max_document_bytes) {
                    Ok(group) => reading.group = Some(group),
                    Err(Refused::Skipped(error)) => {
                        let rows = reading.metadata.metadata().row_group(index).num_rows();
                        reading.before += rows as u64;
                        return Some(Err(error));
                    }
                    Err(Refused::Failed(error)) => {
                        *state = State::Done;
                        return Some(Err(error));
                    }
                }
                continue;
            };
            if let Some((current, columns)) = &group.batch {
                if group.at < current.num_rows() {
                    let row_place = place.at_line(reading.before + group.at as u64 + 1);
                    group.at += 1;
                    return Some(row(opts, current, columns, group.at - 1, row_place));
                }
                reading.before += current.num_rows() as u64;
            }
            let next = match guarded(|| group.batches.next().transpose()) {
                Ok(None) => {
                    reading.group = None;
                    continue;
                }
                Ok(Some(next)) => next,
                Err(failure) => {
                    let part = format!("row group {}", group.index);
                    let kind = ErrorKind::parquet_failed(&part, failure);
                    let error = IngestError::new(place.at_line(reading.before + 1), kind);
                    *state = State::Done;
                    return Some(Err(error));
                }
            };
            match columns_of(opts, &next) {
                Ok(columns) => {
                    group.batch = Some((next, columns));
                    group.at = 0;
                }
                Err(kind) => {
                    // The whole file is unusable as asked, not one record: it stops the run.
                    let kind = ErrorKind::parquet(kind.to_string());
                    *state = State::Failed(Some(IngestError::new(place.clone(), kind)));
                }
            }
        }
    }
}

/// The document of row `at` of `batch`.
fn row(
    opts: &ReadOptions,
    batch: &RecordBatch,
    columns: &Columns,
    at: usize,
    place: Place,
) -> Result<Document, IngestError> {
    let fail = |kind| IngestError::new(place.clone(), kind);
    let get = |column: Option<usize>| -> Option<Cow<'_, str>> {
        column.and_then(|c| value(batch.column(c).as_ref(), at))
    };
    let body = match (get(columns.text), get(columns.html)) {
        (Some(text), _) => InputRecordBody::Text(text),
        (None, Some(html)) => InputRecordBody::Html(html),
        (None, None) => {
            return Err(fail(ErrorKind::MissingText {
                text: opts.fields.text.clone(),
                html: opts.fields.html.clone(),
            }))
        }
    };
    let size = body.as_str().len() as u64;
    let limit = opts.max_document_bytes;
    if size > limit {
        return Err(fail(ErrorKind::TooLarge { size, limit }));
    }
    let record = InputRecord {
        id: get(columns.id),
        body,
        url: get(columns.url),
        title: get(columns.title),
        fetched_at: get(columns.fetched_at),
    };
    Ok(record.into_document(place))
}

/// Where the configured fields are in `batch`, or the first column of a type it cannot read.
fn columns_of(opts: &ReadOptions, batch: &RecordBatch) -> Result<Columns, ErrorKind> {
    let fields = &opts.fields;
    let find = |name: Option<&String>, numbers: bool| -> Result<Option<usize>, ErrorKind> {
        let Some(name) = name else { return Ok(None) };
        let Ok(at) = batch.schema().index_of(name) else {
            return Ok(None);
        };
        let data_type = batch.column(at).data_type();
        if is_string(data_type) || (numbers && data_type.is_integer()) {
            Ok(Some(at))
        } else {
            Err(ErrorKind::WrongType {
                field: name.clone(),
                expected: if numbers {
                    "a string or integer column"
                } else {
                    "a string column"
                },
                found: describe(data_type),
            })
        }
    };
    Ok(Columns {
        text: find(Some(&fields.text), false)?,
        html: find(fields.html.as_ref(), false)?,
        id: find(Some(&fields.id), true)?,
        url: find(fields.url.as_ref(), false)?,
        title: find(fields.title.as_ref(), false)?,
        fetched_at: find(fields.fetched_at.as_ref(), false)?,
    })
}

/// The error for a Parquet input that is not a regular file.
pub(crate) fn not_seekable() -> ErrorKind {
    ErrorKind::parquet("Parquet is read from a file (it is not a stream): save it to a file first")
}

/// True for the string types a text column may have.
fn is_string(data_type: &DataType) -> bool {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, values) => is_string(values),
        _ => false,
    }
}

/// What a column of `data_type` is, for an error message.
fn describe(data_type: &DataType) -> &'static str {
    match data_type {
        t if t.is_integer() => "an integer column",
        t if t.is_floating() => "a floating-point column",
        DataType::Boolean => "a boolean column",
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => "a binary column",
        DataType::Timestamp(..) | DataType::Date32 | DataType::Date64 => "a date or time column",
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => "a list column",
        DataType::Struct(_) => "a struct column",
        DataType::Null => "a column of nulls only",
        _ => "a column of another type",
    }
}

/// Row `at` of a string or integer column (checked by [`ParquetReader::columns`]), `None` if
/// null. Strings are borrowed; dictionary values are looked up; integers are written in decimal.
fn value(array: &dyn Array, at: usize) -> Option<Cow<'_, str>> {
    if array.is_null(at) {
        return None;
    }
    macro_rules! integer {
        ($($t:ty),*) => {
            $(if let Some(numbers) = array.as_primitive_opt::<$t>() {
                return Some(Cow::Owned(numbers.value(at).to_string()));
            })*
        };
    }
    match array.data_type() {
        DataType::Utf8 => Some(Cow::Borrowed(array.as_string::<i32>().value(at))),
        DataType::LargeUtf8 => Some(Cow::Borrowed(array.as_string::<i64>().value(at))),
        DataType::Utf8View => Some(Cow::Borrowed(array.as_string_view().value(at))),
        DataType::Dictionary(..) => {
            let dictionary = array.as_any_dictionary();
            let key = value(dictionary.keys(), at)?.parse().ok()?;
            value(dictionary.values().as_ref(), key)
        }
        _ => {
            integer!(
                Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
                UInt64Type
            );
            None
        }
    }
}
