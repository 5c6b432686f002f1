//! `JsonlLines`: JSON Lines records read in the Spark job's executors (`neardup.spark`'s
//! `dedup_jsonl`) with the CLI's own reader: each line of a batch (an Arrow binary column of
//! lines, as Spark's text source splits the files, or a piece of a file the executor reads
//! straight from it, split into lines here) goes through
//! [`neardup_ingest::parse_document`] and [`neardup_ingest::document_text`], so that a record
//! the CLI skips (not JSON, no text, a field of the wrong type, invalid UTF-8, over the size
//! limit) is skipped here too, a blank line is no record, a record without an id is named
//! `FILE:LINE`, and an HTML record is compared by its main text, as `neardup dedup` reads it.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use neardup_ingest::extract::MainContentExtractor;
use neardup_ingest::{document_text, parse_document, HtmlText, JsonlFields, Place, ReadOptions};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use rayon::prelude::*;

use crate::convert;
use crate::error::invalid;

/// The CLI's JSON Lines reader (its default options: fields `id`, `text`, `html`, `url`,
/// `title`, `fetched_at`, 64 MiB a record, strict UTF-8, the main text of HTML) over batches
/// of lines.
#[pyclass(module = "neardup", frozen)]
pub struct JsonlLines {
    opts: ReadOptions,
    extractor: MainContentExtractor,
}

/// One record's columns: id, text, and the optional url, title and fetch time.
type Record = (String, String, [Option<String>; 3]);

#[pymethods]
impl JsonlLines {
    #[new]
    #[pyo3(signature = (id_field = "id", text_field = "text"))]
    fn new(id_field: &str, text_field: &str) -> Self {
        let fields = JsonlFields {
            id: id_field.into(),
            text: text_field.into(),
            ..JsonlFields::default()
        };
        JsonlLines {
            opts: ReadOptions {
                fields,
                ..ReadOptions::default()
            },
            extractor: MainContentExtractor::default(),
        }
    }

    /// Reads the lines of an Arrow binary column given as its buffers (`offsets`, NumPy
    /// int64, `len + 1`, into `data`: `bytes` or a NumPy `uint8` view), line `i` being line
    /// `first_line + i` (1-based) of the file `source`, in parallel with the GIL released.
    /// Returns a dict: `line` (NumPy int64: the index in the batch of each record's line, the
    /// records in line order), `bad` (how many lines were bad records, skipped), and per
    /// column (`id`, `text`, `url`, `title`, `fetched_at`) a tuple of its offsets (NumPy
    /// int64, one more than the records), its UTF-8 bytes end to end, and which records have
    /// a value (NumPy bool; every record has an id and a text).
    fn read<'py>(
        &self,
        py: Python<'py>,
        offsets: PyReadonlyArray1<'py, i64>,
        data: convert::ByteView<'py>,
        source: &str,
        first_line: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let lines = convert::arrow_bytes(offsets.as_slice()?, data.as_slice()?)?;
        self.records(py, &lines, source, first_line)
    }

    /// Reads the lines of a piece of a file read straight from it (`data`: `bytes` or a NumPy
    /// `uint8` view, starting where a line starts): the lines that start before byte `owned`
    /// of `data` (the last of them may end beyond it), split at `\n` as Spark's text source
    /// splits them with `lineSep` `\n` (the `\n` not part of the line, a `\r` kept), line `i`
    /// being line `first_line + i` (1-based) of the file `source`; `at_end`: `data` ends where
    /// the file ends (a last line without `\n` is then whole, else it waits for the next call).
    /// Returns [`read`](Self::read)'s dict and `lines` (how many lines were read, blank ones
    /// included), `consumed` (their bytes with their `\n`: where the next call starts), `done`
    /// (no line of the piece is left: the next line starts at `owned` or beyond, or the file
    /// ended), and per line read its first byte in `data` and its length (`line_at`,
    /// `line_bytes`: NumPy int64; a record's are those of its `line`, what
    /// [`read_at`](Self::read_at) reads it again by). A piece whose first line does not end
    /// within `data` reads no line: the caller reads a longer piece.
    fn read_range<'py>(
        &self,
        py: Python<'py>,
        data: convert::ByteView<'py>,
        owned: u64,
        at_end: bool,
        source: &str,
        first_line: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let data = data.as_slice()?;
        let (lines, consumed, done) = split_lines(data, owned, at_end);
        let out = self.records(py, &lines, source, first_line)?;
        out.set_item("lines", lines.len())?;
        out.set_item("consumed", consumed)?;
        out.set_item("done", done)?;
        let base = data.as_ptr() as usize;
        let at: Vec<i64> = lines
            .iter()
            .map(|l| (l.as_ptr() as usize - base) as i64)
            .collect();
        let bytes: Vec<i64> = lines.iter().map(|l| l.len() as i64).collect();
        out.set_item("line_at", PyArray1::from_vec(py, at))?;
        out.set_item("line_bytes", PyArray1::from_vec(py, bytes))?;
        Ok(out)
    }

    /// Reads records again straight from their files, each by where its line is: record `i`
    /// is the line of `length[i]` bytes at byte `at[i]` of the file `paths[file[i]]`, line
    /// `line[i]` (1-based) of it (what names a record without an id). Returns
    /// [`read`](Self::read)'s columns (`id`, `text`, `url`, `title`, `fetched_at`), one row a
    /// record, in the order given. Fails when a line cannot be read or is no longer a record
    /// (the file changed since it was read).
    fn read_at<'py>(
        &self,
        py: Python<'py>,
        paths: Vec<String>,
        file: PyReadonlyArray1<'py, i64>,
        at: PyReadonlyArray1<'py, i64>,
        length: PyReadonlyArray1<'py, i64>,
        line: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (file, at, length, line) = (
            file.as_slice()?,
            at.as_slice()?,
            length.as_slice()?,
            line.as_slice()?,
        );
        if [at.len(), length.len(), line.len()]
            .iter()
            .any(|&n| n != file.len())
        {
            return Err(invalid("file, at, length and line must be as long"));
        }
        let places: Vec<Place> = paths
            .iter()
            .map(|p| Place::file(Arc::<Path>::from(Path::new(p))))
            .collect();
        let read = py.detach(|| -> Result<Vec<Record>, String> {
            let mut open: Vec<Option<std::fs::File>> = paths.iter().map(|_| None).collect();
            let mut data = Vec::new();
            let mut spans = Vec::with_capacity(file.len());
            for i in 0..file.len() {
                let f = usize::try_from(file[i]).ok().filter(|&f| f < paths.len());
                let (Some(f), Ok(start), Ok(bytes)) = (f, u64::try_from(at[i]), usize::try_from(length[i])) else {
                    return Err(format!("record {i}: no file {} or a negative place", file[i]));
                };
                if open[f].is_none() {
                    let opened = std::fs::File::open(&paths[f]).map_err(|e| format!("{}: {e}", paths[f]))?;
                    open[f] = Some(opened);
                }
                let from = data.len();
                data.resize(from + bytes, 0);
                let source = open[f].as_mut().expect("opened above");
                source
                    .seek(SeekFrom::Start(start))
                    .and_then(|_| source.read_exact(&mut data[from..]))
                    .map_err(|e| format!("{}: {bytes} bytes at {start}: {e}", paths[f]))?;
                spans.push((f, from, from + bytes));
            }
            spans
                .par_iter()
                .enumerate()
                .map(|(i, &(f, from, to))| {
                    let place = places[f].at_line(line[i] as u64);
                    self.record(&data[from..to], place).flatten().ok_or_else(|| {
                        format!(
                            "{}: line {} is no longer a record (the file changed since it was read)",
                            paths[f], line[i]
                        )
                    })
                })
                .collect()
        });
        let records = read.map_err(invalid)?;
        let out = PyDict::new(py);
        out.set_item(
            "id",
            column(py, records.iter().map(|r| Some(r.0.as_str())))?,
        )?;
        out.set_item(
            "text",
            column(py, records.iter().map(|r| Some(r.1.as_str())))?,
        )?;
        for (k, name) in ["url", "title", "fetched_at"].into_iter().enumerate() {
            out.set_item(name, column(py, records.iter().map(|r| r.2[k].as_deref()))?)?;
        }
        Ok(out)
    }
}

/// The lines of `data` that start before byte `owned` (`\n`-separated, without it), the bytes
/// they take with their `\n`, and whether no line of the piece is left after them (the next
/// one starts at `owned` or beyond, or `at_end` and `data` is read to its end). A last line
/// without `\n` is a line only `at_end`.
fn split_lines(data: &[u8], owned: u64, at_end: bool) -> (Vec<&[u8]>, usize, bool) {
    let owned = usize::try_from(owned).unwrap_or(usize::MAX);
    let mut lines = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', data) {
        if start >= owned {
            return (lines, start, true);
        }
        lines.push(&data[start..end]);
        start = end + 1;
    }
    if start >= owned {
        return (lines, start, true);
    }
    if at_end {
        if start < data.len() {
            lines.push(&data[start..]);
        }
        return (lines, data.len(), true);
    }
    (lines, start, false)
}

impl JsonlLines {
    /// The records of `lines`, line `i` being line `first_line + i` of the file `source`, read
    /// in parallel with the GIL released, as [`read`](Self::read) returns them.
    fn records<'py>(
        &self,
        py: Python<'py>,
        lines: &[&[u8]],
        source: &str,
        first_line: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let file = Place::file(Arc::<Path>::from(Path::new(source)));
        let read = py.detach(|| {
            lines
                .par_iter()
                .enumerate()
                .map(|(i, line)| self.record(line, file.at_line(first_line + i as u64)))
                .collect::<Vec<_>>()
        });
        let bad = read.iter().filter(|r| matches!(r, Some(None))).count();
        let records: Vec<(i64, Record)> = read
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| r.flatten().map(|record| (i as i64, record)))
            .collect();
        let out = PyDict::new(py);
        let line: Vec<i64> = records.iter().map(|(i, _)| *i).collect();
        out.set_item("line", PyArray1::from_vec(py, line))?;
        out.set_item("bad", bad)?;
        out.set_item(
            "id",
            column(py, records.iter().map(|(_, r)| Some(r.0.as_str())))?,
        )?;
        out.set_item(
            "text",
            column(py, records.iter().map(|(_, r)| Some(r.1.as_str())))?,
        )?;
        for (k, name) in ["url", "title", "fetched_at"].into_iter().enumerate() {
            out.set_item(
                name,
                column(py, records.iter().map(|(_, r)| r.2[k].as_deref()))?,
            )?;
        }
        Ok(out)
    }

    /// One line as the CLI reads it: `None` for a blank line (no record), `Some(None)` for a
    /// bad record (skipped), else the record's columns.
    fn record(&self, line: &[u8], place: Place) -> Option<Option<Record>> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if line.len() as u64 > self.opts.max_document_bytes {
            return Some(None);
        }
        let Ok(doc) = parse_document(line, place, &self.opts) else {
            return Some(None);
        };
        let text = document_text(&doc, HtmlText::default(), &self.extractor).into_owned();
        Some(Some((doc.id, text, [doc.url, doc.title, doc.fetched_at])))
    }
}

/// Strings (or nulls) as an Arrow-like column: `(offsets, data, valid)`.
fn column<'py, 'a>(
    py: Python<'py>,
    values: impl Iterator<Item = Option<&'a str>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (mut offsets, mut data, mut valid) = (vec![0i64], Vec::new(), Vec::new());
    for value in values {
        data.extend_from_slice(value.unwrap_or_default().as_bytes());
        offsets.push(data.len() as i64);
        valid.push(value.is_some());
    }
    PyTuple::new(
        py,
        [
            PyArray1::from_vec(py, offsets).into_any(),
            PyBytes::new(py, &data).into_any(),
            PyArray1::from_vec(py, valid).into_any(),
        ],
    )
}
