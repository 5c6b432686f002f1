//! The parallel JSON Lines path of [`neardup_ingest::Corpus`] (blocks of lines parsed and mapped
//! on the pool, several blocks in flight) gives what the serial [`JsonlReader`] gives, record
//! for record: the same documents, bodies and places, the same bad records with the same line
//! numbers and messages, documents numbered in input order. The inputs span several blocks
//! (4 MB each at least), so lines are split across blocks, and mix plain and escaped strings,
//! CRLF endings, blank lines, invalid UTF-8, malformed JSON, lines over the size limit and one
//! longer than a block.

mod common;

use common::read_corpus;
use neardup_ingest::{Corpus, CorpusOptions, JsonlReader, NoHooks, ReadOptions};
use proptest::prelude::*;
use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

/// The size limit of the reads: lines over it are bad records.
const LIMIT: u64 = 300_000;

/// A small deterministic generator (xorshift), so a case is its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Words with and without non-ASCII characters and JSON escapes.
const WORDS: [&str; 10] = [
    "plain",
    "words",
    "caf\u{e9}",
    "\u{a7}12",
    "\u{4e2d}\u{6587}",
    "tab\\there",
    "quote\\\"d",
    "esc\\u00e9",
    "new\\nline",
    "emoji\\ud83d\\ude00",
];

/// One line (without its ending) of a corpus, as bytes; with `invalid`, some lines are not
/// UTF-8 (then every block has such a line), else every block is valid UTF-8 as a whole.
fn line(rng: &mut Rng, i: u64, invalid: bool) -> Vec<u8> {
    let most = if rng.below(50) == 0 { 20_000 } else { 400 };
    let words = 1 + rng.below(most);
    let text: Vec<&str> = (0..words)
        .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
        .collect();
    let text = text.join(" ");
    match rng.below(40) {
        0 => Vec::new(),
        1 => b"  \t".to_vec(),
        2 => format!("{{\"id\":{i},\"text\":\"broken").into_bytes(),
        3 => format!("[{i}]").into_bytes(),
        4 => format!("{{\"id\":{i},\"text\":{i}}}").into_bytes(),
        5 if invalid => {
            let mut bad = format!("{{\"id\":{i},\"text\":\"bad ").into_bytes();
            bad.extend_from_slice(b"\xff\xfe\"}");
            bad
        }
        6 => format!("{{\"text\":\"{}\"}}", "x".repeat(LIMIT as usize)).into_bytes(),
        7 => format!("{{\"title\":\"no id\",\"text\":\"{text}\"}}").into_bytes(),
        8 => format!("{{\"id\":\"s{i}\",\"html\":\"<p>{text}</p>\"}}").into_bytes(),
        _ => format!("{{\"id\":{i},\"url\":\"u{i}\",\"text\":\"{text}\"}}").into_bytes(),
    }
}

/// A corpus of about `bytes` bytes from `seed`, with LF and CRLF endings, and with or without
/// a newline at the end.
fn corpus(seed: u64, bytes: usize) -> Vec<u8> {
    corpus_of(seed, bytes, true)
}

/// [`corpus`], with lines that are not UTF-8 or without (see [`line`]).
fn corpus_of(seed: u64, bytes: usize, invalid: bool) -> Vec<u8> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::with_capacity(bytes + 4096);
    let mut i = 0;
    while out.len() < bytes {
        out.extend_from_slice(&line(&mut rng, i, invalid));
        out.extend_from_slice(if rng.below(5) == 0 { b"\r\n" } else { b"\n" });
        i += 1;
    }
    if seed.is_multiple_of(2) {
        out.pop();
    }
    out
}

/// Each record of a read as `Ok((id, place, body, url, title))` or `Err(message)`.
type Outline = Vec<Result<String, String>>;

fn outline(doc: &neardup_ingest::Document) -> String {
    format!(
        "{} | {} | {:?} | {:?} | {:?}",
        doc.id, doc.place, doc.body, doc.url, doc.title
    )
}

/// What the serial reader makes of `data`, named `name`.
fn serial(data: &[u8], name: &Path, opts: &ReadOptions) -> Outline {
    JsonlReader::new(Cursor::new(data.to_vec()), name, Arc::new(opts.clone()))
        .map(|record| record.map(|doc| outline(&doc)).map_err(|e| e.to_string()))
        .collect()
}

/// What a corpus read of the file `path` gives, checking that documents are numbered in order.
fn parallel(path: &Path, opts: &ReadOptions) -> Outline {
    let reading = read_corpus(&[path.to_path_buf()], opts).expect("a readable input");
    reading.end.expect("the read ends well");
    let options = CorpusOptions {
        inputs: vec![path.to_path_buf()],
        read: opts.clone(),
        ..CorpusOptions::default()
    };
    let corpus = Corpus::new(options, false, Arc::new(NoHooks)).unwrap();
    let mut next = 0;
    corpus
        .for_each_document(
            "reading",
            false,
            |index, _, _| index,
            |_, index| {
                assert_eq!(index, next, "documents are numbered in input order");
                next += 1;
                Ok::<_, neardup_ingest::CorpusError>(())
            },
        )
        .unwrap();
    let items = reading.items.iter().map(|item| match item {
        Ok(doc) => Ok(outline(doc)),
        Err(skipped) => Err(skipped.message.clone()),
    });
    items.collect()
}

/// Each document of a read by [`Corpus::map_each_document`], with its raw record (read with
/// `keep_raw`), as the map saw it, in the order the sink got them; and the read's count of
/// documents and bad records.
fn mapped(path: &Path, opts: &ReadOptions) -> (Vec<String>, u64, u64) {
    let options = CorpusOptions {
        inputs: vec![path.to_path_buf()],
        read: opts.clone(),
        ..CorpusOptions::default()
    };
    let corpus = Corpus::new(options, false, Arc::new(NoHooks)).unwrap();
    let mut seen = Vec::new();
    let stats = corpus
        .map_each_document(
            "reading",
            true,
            |index, doc, _| (index, outline_raw(doc), doc.body.as_str().len()),
            |(index, outline, length)| {
                assert_eq!(index, seen.len(), "documents are numbered in input order");
                seen.push(format!("{outline} | {length}"));
                Ok::<_, neardup_ingest::CorpusError>(())
            },
        )
        .unwrap();
    (seen, stats.documents, stats.errors)
}

/// [`outline`] with the raw record.
fn outline_raw(doc: &neardup_ingest::Document) -> String {
    let raw = doc.raw.as_deref().map(String::from_utf8_lossy);
    format!("{} | {raw:?}", outline(doc))
}

fn check(seed: u64, bytes: usize, opts: &ReadOptions) {
    check_of(seed, bytes, opts, true);
}

/// [`check`] of [`corpus_of`]`(seed, bytes, invalid)`; and the documents of a
/// [`Corpus::map_each_document`] read with their raw records, against the serial reader's.
fn check_of(seed: u64, bytes: usize, opts: &ReadOptions, invalid: bool) {
    let data = corpus_of(seed, bytes, invalid);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    std::fs::write(&path, &data).unwrap();
    let serial = serial(&data, &path, opts);
    let parallel = parallel(&path, opts);
    assert_eq!(serial.len(), parallel.len(), "seed {seed}");
    for (i, (a, b)) in serial.iter().zip(&parallel).enumerate() {
        assert_eq!(a, b, "seed {seed}, record {i}");
    }
    if bytes > 1 << 20 {
        assert!(serial.iter().any(Result::is_err) && serial.iter().any(Result::is_ok));
    }
    let raw_opts = ReadOptions {
        keep_raw: true,
        ..opts.clone()
    };
    let reader = JsonlReader::new(
        Cursor::new(data.clone()),
        path.as_path(),
        Arc::new(raw_opts),
    );
    let (mut documents, mut bad) = (Vec::new(), 0);
    for record in reader {
        match record {
            Ok(doc) => {
                let length = doc.body.as_str().len();
                documents.push(format!("{} | {length}", outline_raw(&doc)));
            }
            Err(_) => bad += 1,
        }
    }
    let (seen, read, errors) = mapped(&path, opts);
    assert_eq!((read, errors), (documents.len() as u64, bad), "seed {seed}");
    assert_eq!(seen.len(), documents.len(), "seed {seed}");
    for (i, (a, b)) in documents.iter().zip(&seen).enumerate() {
        assert_eq!(a, b, "seed {seed}, document {i}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]

    /// Inputs of two to three blocks, strict and lossy UTF-8.
    #[test]
    fn blocks_of_lines_read_as_the_serial_reader_reads(seed in any::<u64>(), lossy in any::<bool>()) {
        let opts = ReadOptions {
            max_document_bytes: LIMIT,
            lossy_utf8: lossy,
            ..ReadOptions::default()
        };
        check(seed, 9 << 20, &opts);
    }

    /// Inputs whose blocks are valid UTF-8 as a whole (so no line is checked alone), and the
    /// documents of [`Corpus::map_each_document`] (their memory used again for the next ones).
    #[test]
    fn valid_blocks_read_as_the_serial_reader_reads(seed in any::<u64>(), lossy in any::<bool>()) {
        let opts = ReadOptions {
            max_document_bytes: LIMIT,
            lossy_utf8: lossy,
            ..ReadOptions::default()
        };
        check_of(seed, 9 << 20, &opts, false);
    }
}

#[test]
fn a_line_longer_than_a_block_and_a_small_input() {
    let opts = ReadOptions {
        max_document_bytes: 6 << 20,
        ..ReadOptions::default()
    };
    let mut data = corpus(7, 1 << 20);
    data.extend_from_slice(b"\n{\"id\":\"long\",\"text\":\"");
    data.extend(std::iter::repeat_n(b'w', 5 << 20));
    data.extend_from_slice(b"\"}\r\n");
    data.extend(corpus(9, 1 << 20));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, &data).unwrap();
    assert_eq!(serial(&data, &path, &opts), parallel(&path, &opts));
    check(11, 10_000, &opts);
}
