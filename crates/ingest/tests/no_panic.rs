//! No reader, nor the extractor, nor the URL code panics on arbitrary input,
//! and readers always end.

mod common;

use neardup_ingest::extract::{html_to_text, MainContentExtractor};
use neardup_ingest::{JsonlReader, ReadOptions, WarcReader};
use proptest::prelude::*;
use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

/// Strings that look a bit like HTML, to reach the tag and entity paths.
fn htmlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z &;#<>/=\"'!-]{0,8}",
        Just("<p>".to_string()),
        Just("</div>".to_string()),
        Just("<nav class='menu'>".to_string()),
        Just("<main>".to_string()),
        Just("<script>".to_string()),
        Just("<!--".to_string()),
        Just("&amp;".to_string()),
        Just("<pre>\n".to_string()),
        Just("<a href=x>".to_string()),
        "\\PC{0,6}",
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

/// Bytes that look a bit like WARC, to get past the first checks.
fn warcish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..20),
        Just(b"WARC/1.1\r\n".to_vec()),
        Just(b"WARC-Type: response\r\n".to_vec()),
        Just(b"Content-Length: 30\r\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>x".to_vec()),
    ];
    prop::collection::vec(piece, 0..20).prop_map(|v| v.concat())
}

fn small_limit() -> Arc<ReadOptions> {
    Arc::new(ReadOptions {
        max_document_bytes: 64,
        ..ReadOptions::default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn extractor_never_panics(html in htmlish(), bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let extractor = MainContentExtractor::default();
        for page in [html, String::from_utf8_lossy(&bytes).into_owned()] {
            let out = extractor.extract(&page);
            prop_assert!(out.text.len() <= page.len() * 4 + 4);
            html_to_text(&page);
            neardup_ingest::extract::html_title(&page);
        }
    }

    #[test]
    fn jsonl_reader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let reader = JsonlReader::new(Cursor::new(bytes.clone()), Path::new("p.jsonl"), small_limit());
        prop_assert!(reader.count() <= bytes.len() + 1);
    }

    #[test]
    fn warc_readers_never_panic(bytes in warcish()) {
        let plain = WarcReader::new(Cursor::new(bytes.clone()), Path::new("p.warc"), small_limit());
        prop_assert!(plain.count() <= bytes.len() + 1);
        let gz = WarcReader::gzip(Cursor::new(bytes.clone()), Path::new("p.warc.gz"), small_limit());
        prop_assert!(gz.count() <= bytes.len() + 1);
        let zipped = common::gzip(&bytes);
        let gz = WarcReader::gzip(Cursor::new(zipped), Path::new("p.warc.gz"), small_limit());
        prop_assert!(gz.count() <= bytes.len() + 1);
    }

    #[test]
    fn url_code_never_panics(url in "\\PC{0,40}", tail in "[a-zA-Z0-9/?&=#%.:;@_-]{0,30}") {
        for input in [url.clone(), format!("http://{url}"), format!("https://example.com/{tail}")] {
            if let Ok(key) = neardup_ingest::url::canonicalize(&input) {
                prop_assert_eq!(neardup_ingest::url::canonicalize(&key), Ok(key.clone()), "{}", input);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn folder_reader_never_panics(files in prop::collection::vec((0..4usize, prop::collection::vec(any::<u8>(), 0..200)), 1..5)) {
        let dir = tempfile::tempdir().unwrap();
        let names = ["a.txt", "b.html", "c.jsonl", "d.warc"];
        for (i, (kind, data)) in files.iter().enumerate() {
            std::fs::write(dir.path().join(format!("{i}{}", names[*kind])), data).unwrap();
        }
        let opts = ReadOptions { max_document_bytes: 64, ..ReadOptions::default() };
        let reading = common::read_corpus(&[dir.path().to_path_buf()], &opts).unwrap();
        prop_assert!(reading.items.len() < 1000);
    }
}
