//! Issue 12: the accounting of a run adds up to what the inputs hold, on
//! damaged inputs: every record is a document, a record skipped with its
//! reason, or a record that is not a document, with its type.

mod common;

use common::*;
use neardup_ingest::{Accounting, ReadOptions};
use std::collections::BTreeMap;
use std::fs;

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|&(k, n)| (k.to_string(), n)).collect()
}

#[test]
fn every_record_of_damaged_inputs_is_accounted_for() {
    let dir = tempfile::tempdir().unwrap();
    let page = |n: u32| html_response(&format!("http://a.org/{n}"), &format!("<p>page {n}</p>"));
    let block = http("200 OK", &["Content-Type: text/html"], b"<p>cut</p>");
    // 8 records: 2 documents, 1 truncated mid-file, 5 of other types.
    let plain = [
        warc_record("warcinfo", "", b"software: test"),
        warc_record("request", "http://a.org/1", b"GET / HTTP/1.1\r\n\r\n"),
        page(1),
        warc_record(
            "response",
            "http://a.org/img",
            &http("200 OK", &["Content-Type: image/PNG"], b"\x89PNG"),
        ),
        warc_record(
            "response",
            "http://a.org/404",
            &http("404 Not Found", &["Content-Type: text/html"], b"<p>no</p>"),
        ),
        warc_record_declaring("response", "http://a.org/cut", &block, 100_000),
        page(2),
        warc_record("metadata", "http://a.org/2", b"via: x"),
    ];
    fs::write(dir.path().join("a.warc"), plain.concat()).unwrap();
    // 4 records: 2 documents, 1 in a truncated member, 1 request.
    let mut cut = gzip(&page(4));
    cut.truncate(cut.len() - 9);
    let members = [
        gzip(&page(3)),
        cut,
        gzip(&page(5)),
        gzip(&warc_record(
            "request",
            "http://a.org/5",
            b"GET /5 HTTP/1.1\r\n\r\n",
        )),
    ];
    fs::write(dir.path().join("b.warc.gz"), members.concat()).unwrap();
    // 3 records (the blank line is none): 1 document, 2 bad.
    let jsonl = "{\"id\":1,\"text\":\"one\"}\n\n{bad\n{\"id\":3}\n";
    fs::write(dir.path().join("c.jsonl"), jsonl).unwrap();
    fs::write(dir.path().join("d.png"), b"\x89PNG").unwrap();

    let reading = read_corpus(&[dir.path().to_path_buf()], &ReadOptions::default()).unwrap();
    assert!(reading.end.is_ok(), "{:?}", reading.end);
    let accounting = reading.accounting;
    let (docs, errors): (Vec<_>, Vec<_>) = reading.items.into_iter().partition(Result::is_ok);
    assert_eq!(
        accounting,
        Accounting {
            documents: 5,
            skipped: counts(&[
                ("corrupt gzip stream", 1),
                ("malformed JSON", 1),
                ("no text field", 1),
                ("truncated record", 1),
            ]),
            not_documents: counts(&[
                ("content-type image/png", 1),
                ("file .png", 1),
                ("http 404", 1),
                ("warc metadata", 1),
                ("warc request", 2),
                ("warc warcinfo", 1),
            ]),
        },
        "{errors:?}"
    );
    assert_eq!(accounting.records(), 8 + 4 + 3 + 1);
    assert_eq!(accounting.documents, docs.len() as u64);
    assert_eq!(accounting.skipped_total(), errors.len() as u64);
    assert_eq!(
        accounting.to_string(),
        "16 records: 5 documents, 4 skipped (corrupt gzip stream: 1, malformed JSON: 1, \
         no text field: 1, truncated record: 1), 7 not documents (content-type image/png: 1, \
         file .png: 1, http 404: 1, warc metadata: 1, warc request: 2, warc warcinfo: 1)"
    );
}

#[test]
fn kinds_from_the_input_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<u8> = (0..500)
        .flat_map(|n| {
            let ct = format!("Content-Type: x/{n}");
            warc_record("response", "http://a.org/", &http("200 OK", &[&ct], b"x"))
        })
        .collect();
    fs::write(dir.path().join("a.warc"), records).unwrap();
    let reading = read_corpus(&[dir.path().join("a.warc")], &ReadOptions::default()).unwrap();
    assert!(reading.end.is_ok(), "{:?}", reading.end);
    assert_eq!(reading.items.len(), 0);
    let accounting = reading.accounting;
    assert_eq!(accounting.not_documents.len(), neardup_ingest::MAX_KINDS);
    assert_eq!(accounting.records(), 500);
    assert_eq!(
        accounting.not_documents[neardup_ingest::OTHER_KIND],
        500 - (neardup_ingest::MAX_KINDS as u64 - 1)
    );
}
