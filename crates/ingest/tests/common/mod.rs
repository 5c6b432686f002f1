//! Fixture builders shared by the integration tests: WARC records, gzip
//! members, zstd frames, all made in memory.

#![allow(dead_code)] // Each test file uses its own subset.

use neardup_ingest::{Corpus, CorpusOptions, ReadHooks, ReadOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A WARC record of `warc_type` with this block.
pub fn warc_record(warc_type: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    warc_record_declaring(warc_type, uri, block, block.len())
}

/// A WARC record whose Content-Length says `declared` whatever the block.
pub fn warc_record_declaring(warc_type: &str, uri: &str, block: &[u8], declared: usize) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: {warc_type}\r\nWARC-Target-URI: {uri}\r\n\
         WARC-Date: 2024-05-01T12:00:00Z\r\nWARC-Record-ID: <urn:uuid:{uri}>\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {declared}\r\n\r\n"
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// An HTTP response message.
pub fn http(status: &str, headers: &[&str], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\n").into_bytes();
    for h in headers {
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

/// A response record for an HTML page.
pub fn html_response(uri: &str, html: &str) -> Vec<u8> {
    warc_record(
        "response",
        uri,
        &http(
            "200 OK",
            &["Content-Type: text/html; charset=utf-8"],
            html.as_bytes(),
        ),
    )
}

/// One gzip member.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// One zstd frame.
pub fn zstd_frame(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 1).unwrap()
}

/// `Ok(id)` or `Err(message)` for each item, for compact assertions.
pub fn outline<E: std::fmt::Display>(
    items: impl IntoIterator<Item = Result<neardup_ingest::Document, E>>,
) -> Vec<Result<String, String>> {
    items
        .into_iter()
        .map(|item| item.map(|d| d.id).map_err(|e| e.to_string()))
        .collect()
}

/// A bad record a [`Corpus`] read skipped.
#[derive(Debug)]
pub struct Skipped {
    /// Where it is.
    pub place: neardup_ingest::Place,
    /// Its kind's reason (`over the size limit`, ...).
    pub reason: &'static str,
    /// The whole message, its place first.
    pub message: String,
}

/// What one read of a [`Corpus`] (bad records skipped) gave.
pub struct Reading {
    /// Documents and skipped bad records, in input order.
    pub items: Vec<Result<neardup_ingest::Document, Skipped>>,
    /// The read's statistics, or the error (an input that cannot be read) that ended it.
    pub end: Result<neardup_ingest::StatsSnapshot, neardup_ingest::CorpusError>,
    /// Every record of the read ([`Corpus::accounting`]).
    pub accounting: neardup_ingest::Accounting,
}

impl Reading {
    /// The documents read.
    pub fn documents(self) -> Vec<neardup_ingest::Document> {
        self.items.into_iter().flatten().collect()
    }

    /// `Ok(id)` or `Err(message)` for each item, for compact assertions.
    pub fn outline(&self) -> Vec<Result<String, String>> {
        let item = |item: &Result<neardup_ingest::Document, Skipped>| match item {
            Ok(doc) => Ok(doc.id.clone()),
            Err(skipped) => Err(skipped.message.clone()),
        };
        self.items.iter().map(item).collect()
    }

    /// The error that ended the read.
    pub fn end_error(&self) -> &neardup_ingest::IngestError {
        match &self.end {
            Err(neardup_ingest::CorpusError::Input(error)) => error,
            other => panic!("the read did not end on an input error: {other:?}"),
        }
    }
}

/// Hooks that keep the skipped bad records in `items`, where the documents go too.
struct Collect(Arc<Mutex<Vec<Result<neardup_ingest::Document, Skipped>>>>);

impl ReadHooks for Collect {
    fn skipped(&self, error: &neardup_ingest::IngestError) {
        let skipped = Skipped {
            place: error.place.clone(),
            reason: error.kind.reason(),
            message: error.to_string(),
        };
        self.0.lock().unwrap().push(Err(skipped));
    }
}

/// Reads `paths` once with a [`Corpus`] (the one reader), bad records skipped; an error if an
/// input cannot be opened or is of no known format.
pub fn read_corpus(
    paths: &[PathBuf],
    read: &ReadOptions,
) -> Result<Reading, neardup_ingest::CorpusError> {
    let items = Arc::new(Mutex::new(Vec::new()));
    let options = CorpusOptions {
        inputs: paths.to_vec(),
        read: read.clone(),
        ..CorpusOptions::default()
    };
    let corpus = Corpus::new(options, false, Arc::new(Collect(Arc::clone(&items))))?;
    let end = corpus.for_each_document(
        "reading",
        false,
        |_, _, _| (),
        |doc, ()| {
            items.lock().unwrap().push(Ok(doc));
            Ok(())
        },
    );
    let items = std::mem::take(&mut *items.lock().unwrap());
    Ok(Reading {
        items,
        end,
        accounting: corpus.accounting(),
    })
}
