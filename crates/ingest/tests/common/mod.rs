//! Fixture builders shared by the integration tests: WARC records, gzip
//! members, zstd frames, all made in memory.

#![allow(dead_code)] // Each test file uses its own subset.

use std::io::Write;

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
