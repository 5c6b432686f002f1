//! Reading files and folders through [`neardup_ingest::Corpus`], the one reader: JSONL
//! (plain, gzip with several members, zstd with several frames), folders, and the bad
//! records each reported with its place while reading goes on; inputs that cannot be read
//! are refused before the read or end it.

mod common;

use common::*;
use neardup_ingest::{Body, Compression, CorpusError, ErrorKind, Format, ReadOptions};
use std::fs;
use std::path::{Path, PathBuf};

fn lines(from: u32, to: u32) -> String {
    (from..to)
        .map(|i| format!("{{\"id\":{i},\"text\":\"doc {i}\"}}\n"))
        .collect()
}

fn ids(range: std::ops::Range<u32>) -> Vec<Result<String, String>> {
    range.map(|i| Ok(i.to_string())).collect()
}

/// The read of `paths`, which must be readable inputs.
fn read(paths: &[PathBuf], opts: &ReadOptions) -> Reading {
    read_corpus(paths, opts).expect("readable inputs")
}

#[test]
fn jsonl_plain_gzip_and_zstd_chain_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("a.jsonl");
    let gz = dir.path().join("b.jsonl.gz");
    let zst = dir.path().join("c.ndjson.zst");
    fs::write(&plain, lines(0, 3)).unwrap();
    fs::write(
        &gz,
        [gzip(lines(3, 5).as_bytes()), gzip(lines(5, 7).as_bytes())].concat(),
    )
    .unwrap();
    fs::write(
        &zst,
        [
            zstd_frame(lines(7, 8).as_bytes()),
            zstd_frame(lines(8, 10).as_bytes()),
        ]
        .concat(),
    )
    .unwrap();
    let reading = read(&[plain, gz.clone(), zst], &ReadOptions::default());
    assert_eq!(reading.outline(), ids(0..10));
    assert_eq!(reading.end.unwrap().documents, 10);
    let doc = read(std::slice::from_ref(&gz), &ReadOptions::default())
        .documents()
        .swap_remove(1);
    assert_eq!(doc.place.to_string(), format!("{}:2", gz.display()));
    assert_eq!(doc.body, Body::Text("doc 4".into()));
}

#[test]
fn truncated_compressed_streams_end_the_read_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let data = lines(0, 20_000);
    for (name, mut bytes, codec) in [
        ("t.jsonl.gz", gzip(data.as_bytes()), Compression::Gzip),
        (
            "t.jsonl.zst",
            zstd_frame(data.as_bytes()),
            Compression::Zstd,
        ),
    ] {
        bytes.truncate(bytes.len() * 2 / 3);
        let path = dir.path().join(name);
        fs::write(&path, bytes).unwrap();
        let next = dir.path().join("next.jsonl");
        fs::write(&next, lines(7, 8)).unwrap();
        let reading = read(&[path.clone(), next], &ReadOptions::default());
        assert!(
            reading.items.len() > 100,
            "{name}: the records before the damage are read"
        );
        assert!(reading.items.iter().all(Result::is_ok), "{name}");
        let err = reading.end_error();
        assert!(
            matches!(&err.kind, ErrorKind::CorruptStream { codec: c, .. } if *c == codec),
            "{err}"
        );
        assert!(
            err.to_string().starts_with(&format!("{}:", path.display())),
            "{err}"
        );
        let last = reading.items.last().unwrap().as_ref().unwrap();
        assert_ne!(last.id, "7", "{name}: the read ends at the damage");
    }
}

#[test]
fn unreadable_and_unknown_inputs_are_refused_before_the_read() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.jsonl");
    fs::write(&good, lines(0, 1)).unwrap();
    let unknown = dir.path().join("notes.pdf");
    fs::write(&unknown, "x").unwrap();
    let missing = dir.path().join("missing.jsonl");
    let refused = |paths: &[PathBuf]| match read_corpus(paths, &ReadOptions::default()) {
        Err(CorpusError::Input(error)) => error,
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("{paths:?} read"),
    };
    let error = refused(&[missing.clone(), good.clone()]);
    assert!(matches!(error.kind, ErrorKind::Open(_)), "{error}");
    assert_eq!(error.place.source.as_ref(), missing);
    let error = refused(&[good.clone(), unknown]);
    assert!(matches!(error.kind, ErrorKind::UnknownFormat), "{error}");
    assert_eq!(read(&[good], &ReadOptions::default()).outline(), ids(0..1));
}

#[test]
fn format_override() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.txt");
    fs::write(&path, lines(0, 2)).unwrap();
    let as_text = read(std::slice::from_ref(&path), &ReadOptions::default());
    assert_eq!(as_text.items.len(), 1);
    let opts = ReadOptions {
        format: Some(Format::Jsonl(Compression::None)),
        ..ReadOptions::default()
    };
    assert_eq!(read(&[path], &opts).outline(), ids(0..2));
}

#[test]
fn huge_single_line_is_rejected_without_holding_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    let mut data = format!("{{\"text\":\"{}\"}}\n", "y".repeat(3 << 20)).into_bytes();
    data.extend_from_slice(lines(1, 2).as_bytes());
    fs::write(&path, data).unwrap();
    let opts = ReadOptions {
        max_document_bytes: 1 << 20,
        ..ReadOptions::default()
    };
    let reading = read(&[path], &opts);
    let err = reading.items[0].as_ref().unwrap_err();
    assert_eq!(err.reason, "over the size limit");
    let size = (3 << 20) + 11;
    assert!(
        err.message.contains(&format!("record of {size} bytes")),
        "{}",
        err.message
    );
    assert_eq!(err.place.line, Some(1));
    assert_eq!(reading.items[1].as_ref().unwrap().id, "1");
}

/// A folder with every kind of file.
fn tree(root: &Path) {
    let write = |rel: &str, data: &[u8]| {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, data).unwrap();
    };
    write("b.txt", b"plain text b");
    write("a.txt", b"plain text a");
    write(
        "sub/page.html",
        b"<html><head><title>The &lt;Page&gt;</title></head><body><p>Hi</p></body></html>",
    );
    write("sub/old.htm", b"<meta charset=windows-1252><p>caf\xe9</p>");
    write("sub/binary.txt", b"\x7fELF\0\0\x01");
    write("sub/latin1.txt", b"caf\xe9");
    write("sub/z/records.jsonl", lines(0, 2).as_bytes());
    write("image.png", b"\x89PNG");
    write("README", b"no extension");
}

#[test]
fn folders_are_walked_in_order_with_bad_files_reported() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let reading = read(&[dir.path().to_path_buf()], &ReadOptions::default());
    let shown: Vec<String> = reading
        .items
        .iter()
        .map(|r| match r {
            Ok(d) => format!("ok {}", d.id),
            Err(e) => e
                .message
                .strip_prefix(&format!("{}/", dir.path().display()))
                .unwrap()
                .to_string(),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "ok a.txt",
            "ok b.txt",
            "sub/binary.txt: binary file (NUL byte in the first 8 KiB)",
            "sub/latin1.txt: invalid UTF-8 (first bad byte at byte 3 of the record)",
            "ok sub/old.htm",
            "ok sub/page.html",
            "ok 0",
            "ok 1",
        ]
    );
    let page = reading.items[5].as_ref().unwrap();
    assert_eq!(page.title.as_deref(), Some("The <Page>"));
    assert!(page.body.is_html());
    let old = reading.items[4].as_ref().unwrap();
    assert!(old.body.as_str().ends_with("café</p>"));
    let s = reading.end.unwrap();
    assert_eq!((s.documents, s.errors, s.skipped_files), (6, 2, 2));
}

#[test]
fn lossy_decoding_and_size_limit_in_folders() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    fs::write(dir.path().join("big.txt"), "z".repeat(5000)).unwrap();
    let opts = ReadOptions {
        lossy_utf8: true,
        max_document_bytes: 4096,
        ..ReadOptions::default()
    };
    let reading = read(&[dir.path().to_path_buf()], &opts);
    let err = reading.items[2].as_ref().unwrap_err();
    assert!(
        err.message
            .ends_with("record of 5000 bytes is over the limit of 4096 bytes (max_document_bytes)"),
        "{}",
        err.message
    );
    let latin = reading
        .documents()
        .into_iter()
        .find(|d| d.id.ends_with("latin1.txt"))
        .unwrap();
    assert_eq!(latin.body, Body::Text("caf\u{fffd}".into()));
}

#[test]
fn single_files_are_one_document_each() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let paths: Vec<PathBuf> = ["a.txt", "sub/page.html"]
        .iter()
        .map(|p| dir.path().join(p))
        .collect();
    let reading = read(&paths, &ReadOptions::default());
    assert!(reading.items.iter().all(Result::is_ok));
    let docs = reading.documents();
    assert_eq!(docs[0].id, paths[0].to_string_lossy());
    assert_eq!(docs[0].body, Body::Text("plain text a".into()));
    assert_eq!(docs[1].title.as_deref(), Some("The <Page>"));
}
