//! The targets of files read whole from disk, which the stream targets cannot feed: Parquet
//! files through the project's Parquet reader, and edits of a redb database file through the
//! store's open, stats and a check.

use std::path::Path;
use std::sync::Arc;

use anyhow::{ensure, Context as _};
use arrow_array::{ArrayRef, Int64Array, LargeStringArray, RecordBatch, StringArray};
use neardup_ingest::{open_path, ReadOptions, ReadStats};
use neardup_store::{open_db, InsertMode, NewDocument, OpenOptions};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::Runner;

/// The most items a Parquet input is read for (a corrupt page can declare a billion nulls).
const MAX_ITEMS: usize = 100_000;
/// The redb database file inside its directory.
const DB_FILE: &str = "neardup.redb";
/// redb's page size: edits land in the pages that hold data.
const PAGE: usize = 4096;
/// Bytes of one edit of the database file: a little-endian offset, then the byte written there.
const EDIT: usize = 5;

/// Parquet: the input is a file, read with the default size limit and with a small one; every
/// error names the file.
pub(crate) fn parquet() -> anyhow::Result<Runner> {
    let dir = tempfile::tempdir()?;
    let path: Arc<Path> = Arc::from(dir.path().join("fuzz.parquet"));
    Ok(Box::new(move |data: &[u8]| {
        let _keep = &dir;
        std::fs::write(&path, data)?;
        for limit in [64 << 20, 200] {
            let opts = Arc::new(ReadOptions {
                max_document_bytes: limit,
                ..ReadOptions::default()
            });
            let items = open_path(&path, &opts, &Arc::new(ReadStats::default()));
            for item in items.take(MAX_ITEMS) {
                if let Err(error) = item {
                    let message = error.to_string();
                    ensure!(
                        message.starts_with(&*path.to_string_lossy()),
                        "an error without its file: {message}"
                    );
                }
            }
        }
        Ok(())
    }))
}

/// Small Parquet files: plain and dictionary strings, integer ids with nulls, two row groups,
/// each codec the reader is built with.
pub(crate) fn parquet_seeds() -> Vec<Vec<u8>> {
    let texts = [
        "the council approved the budget on monday",
        "schools get more money this year",
        "the library opens on sundays",
        "the council approved the budget on monday",
    ];
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(4)]));
    let text: ArrayRef = Arc::new(StringArray::from(texts.to_vec()));
    let large: ArrayRef = Arc::new(LargeStringArray::from(texts.to_vec()));
    let urls: ArrayRef = Arc::new(StringArray::from(vec![
        Some("http://a.org/1"),
        None,
        None,
        None,
    ]));
    let codecs = [
        Compression::SNAPPY,
        Compression::ZSTD(ZstdLevel::default()),
        Compression::UNCOMPRESSED,
    ];
    let mut seeds = Vec::new();
    for (n, codec) in codecs.into_iter().enumerate() {
        let columns = vec![
            ("id", Arc::clone(&ids)),
            (
                "text",
                if n == 1 {
                    Arc::clone(&large)
                } else {
                    Arc::clone(&text)
                },
            ),
            ("url", Arc::clone(&urls)),
        ];
        let properties = WriterProperties::builder()
            .set_compression(codec)
            .set_dictionary_enabled(n != 2)
            .set_max_row_group_row_count(Some(2))
            .build();
        seeds.extend(parquet_file(columns, properties));
    }
    seeds
}

/// `columns` written as a Parquet file (`None` if the writer refuses them).
fn parquet_file(columns: Vec<(&str, ArrayRef)>, properties: WriterProperties) -> Option<Vec<u8>> {
    let batch = RecordBatch::try_from_iter(columns).ok()?;
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(properties)).ok()?;
    writer.write(&batch).ok()?;
    writer.close().ok()?;
    Some(out)
}

/// The redb open path: the input is a list of edits of a small database the store wrote (see
/// [`edited`]); the edited file is opened, its stats read, a document checked and one inserted.
/// Invariant: every error names the file.
pub(crate) fn redb() -> anyhow::Result<Runner> {
    let base = database()?;
    let pages: Vec<usize> = (0..base.len())
        .step_by(PAGE)
        .filter(|&at| {
            base[at..(at + PAGE).min(base.len())]
                .iter()
                .any(|&b| b != 0)
        })
        .collect();
    let work = tempfile::tempdir()?;
    let dir = work.path().join("db");
    let location = dir
        .to_str()
        .context("temporary path not UTF-8")?
        .to_string();
    let file = dir.join(DB_FILE);
    Ok(Box::new(move |data: &[u8]| {
        let _keep = &work;
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(&file, edited(&base, &pages, data))?;
        let named = |error: neardup_store::StoreError| -> anyhow::Result<()> {
            let message = error.to_string();
            ensure!(
                message.contains(&*file.to_string_lossy()),
                "an error without its file: {message}"
            );
            Ok(())
        };
        let db = match open_db(&location, OpenOptions::default()) {
            Ok(db) => db,
            Err(error) => return named(error),
        };
        let used = db
            .stats()
            .and_then(|_| db.check(&document("x", 0)))
            .and_then(|_| db.check_and_insert(&document("y", 1), InsertMode::IfUnique));
        used.map(drop).or_else(named)
    }))
}

/// `base` with the edits `data` holds: if its first byte is odd, the file is cut at the length
/// its next four bytes give (modulo the size); then each [`EDIT`] bytes write one byte in one of
/// the `pages` that hold data (the offset modulo their total).
fn edited(base: &[u8], pages: &[usize], data: &[u8]) -> Vec<u8> {
    let mut bytes = base.to_vec();
    let word = |at: &[u8]| u32::from_le_bytes([at[0], at[1], at[2], at[3]]) as usize;
    let mut edits = data;
    if data.first().is_some_and(|b| b % 2 == 1) && data.len() >= EDIT {
        bytes.truncate(word(&data[1..EDIT]) % (base.len() + 1));
        edits = &data[EDIT..];
    }
    for edit in edits.chunks_exact(EDIT) {
        let offset = word(edit) % (pages.len() * PAGE).max(1);
        let at = pages
            .get(offset / PAGE)
            .map_or(offset, |page| page + offset % PAGE);
        if let Some(byte) = bytes.get_mut(at) {
            *byte = edit[4];
        }
    }
    bytes
}

/// Edit lists to start from: none (the intact file), a cut, a zeroed run, bytes flipped.
pub(crate) fn redb_seeds() -> Vec<Vec<u8>> {
    let edit = |offset: u32, byte: u8| [&offset.to_le_bytes()[..], &[byte]].concat();
    let zeroed: Vec<u8> = (0..64).flat_map(|n| edit(40_000 + n, 0)).collect();
    vec![
        Vec::new(),
        [&[0u8][..], &edit(12_345, 0xFF)].concat(),
        [&[1u8][..], &4096u32.to_le_bytes(), &edit(7, 0)].concat(),
        [&[0u8][..], &zeroed].concat(),
        [&[0u8][..], &edit(300_000, 0x5A), &edit(500_001, 0x01)].concat(),
    ]
}

/// A document of the fuzzed database.
fn document(id: &str, n: usize) -> NewDocument {
    let text = crate::targets::NEWS.lines().nth(n).unwrap_or_default();
    NewDocument {
        id: Some(id.into()),
        text: format!("{text} {id}"),
        ..NewDocument::default()
    }
}

/// The bytes of a small database the store wrote: the project's example documents, and the
/// database opened again once (as one at rest is).
fn database() -> anyhow::Result<Vec<u8>> {
    let work = tempfile::tempdir()?;
    let location = work.path().to_str().context("temporary path not UTF-8")?;
    {
        let db = open_db(location, OpenOptions::default())?;
        let documents: Vec<NewDocument> = (0..crate::targets::NEWS.lines().count())
            .map(|n| document(&format!("d{n}"), n))
            .collect();
        for outcome in db.check_and_insert_many(&documents, InsertMode::Always) {
            outcome?;
        }
    }
    drop(open_db(location, OpenOptions::default())?);
    Ok(std::fs::read(work.path().join(DB_FILE))?)
}
