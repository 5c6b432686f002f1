//! Throughput of HTML extraction on real pages, and of the readers.
//!
//! The pages are every 50th `.html` file of the Rust documentation that
//! ships with the toolchain (`$(rustc --print sysroot)/share/doc/rust/html`,
//! or the folder in `NEARDUP_BENCH_HTML`); the extraction benches are skipped
//! with a message if there is none. JSONL inputs are generated; the WARC
//! input wraps the same pages in per-record gzip members. `jsonl-record` parses the generated
//! records one by one, by the one-pass reader and by serde_json alone.
//!
//! ```text
//! cargo bench -p neardup-ingest --bench extract
//! ```

// `criterion_group!` generates functions without documentation.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use neardup_ingest::extract::{html_to_text, MainContentExtractor};
use neardup_ingest::{
    parse_record, parse_record_serde, Corpus, CorpusError, CorpusOptions, ErrorKind, HtmlText,
    InputRecord, JsonlFields, NoHooks,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Reads `path` as the commands do (a [`Corpus`]), each HTML document's text taken as `html`
/// says, and returns the bytes of text.
fn read_text_bytes(path: &Path, html: HtmlText) -> usize {
    let options = CorpusOptions {
        inputs: vec![path.to_path_buf()],
        html,
        ..CorpusOptions::default()
    };
    let corpus = Corpus::new(options, false, Arc::new(NoHooks)).unwrap();
    let mut bytes = 0;
    corpus
        .for_each_document(
            "reading",
            false,
            |_, _, text| text.len(),
            |_, length| {
                bytes += length;
                Ok::<_, CorpusError>(())
            },
        )
        .unwrap();
    bytes
}

/// Every how many pages one is taken.
const STEP: usize = 50;

fn doc_root() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("NEARDUP_BENCH_HTML") {
        return Some(PathBuf::from(dir));
    }
    let out = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let root =
        PathBuf::from(String::from_utf8(out.stdout).ok()?.trim()).join("share/doc/rust/html");
    root.is_dir().then_some(root)
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            html_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
}

fn sample_pages() -> Vec<String> {
    let Some(root) = doc_root() else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    html_files(&root, &mut paths);
    paths.sort();
    paths
        .iter()
        .step_by(STEP)
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

fn extraction(c: &mut Criterion, pages: &[String]) {
    let bytes: usize = pages.iter().map(String::len).sum();
    let mut group = c.benchmark_group("extract");
    group.throughput(Throughput::Bytes(bytes as u64));
    let extractor = MainContentExtractor::default();
    group.bench_function("main_content", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| extractor.extract(p).text.len())
                .sum::<usize>()
        })
    });
    group.bench_function("html_to_text", |b| {
        b.iter(|| pages.iter().map(|p| html_to_text(p).len()).sum::<usize>())
    });
    group.finish();
}

/// A JSONL corpus of about 20 MB: news-like records of ~1 KB.
fn jsonl_corpus() -> Vec<u8> {
    let words = [
        "transit", "council", "plan", "city", "vote", "the", "of", "and", "northern", "suburbs",
    ];
    let mut out = Vec::new();
    for i in 0..20_000usize {
        let text: Vec<&str> = (0..150)
            .map(|j| words[(i * 7 + j * 13) % words.len()])
            .collect();
        writeln!(
            out,
            r#"{{"id":{i},"url":"https://example.com/{i}","title":"Story {i}","text":"{}\nend","lang":"en"}}"#,
            text.join(" ")
        )
        .unwrap();
    }
    out
}

fn readers(c: &mut Criterion, pages: &[String]) {
    let dir = tempfile::tempdir().unwrap();
    let corpus = jsonl_corpus();
    let write = |name: &str, data: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, data).unwrap();
        path
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&corpus).unwrap();
    let inputs = [
        ("jsonl", write("c.jsonl", &corpus), corpus.len()),
        (
            "jsonl.gz",
            write("c.jsonl.gz", &gz.finish().unwrap()),
            corpus.len(),
        ),
        (
            "jsonl.zst",
            write("c.jsonl.zst", &zstd::encode_all(&corpus[..], 3).unwrap()),
            corpus.len(),
        ),
    ];
    let mut group = c.benchmark_group("read");
    for (name, path, bytes) in inputs {
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(name, |b| b.iter(|| read_text_bytes(&path, HtmlText::Main)));
    }
    if !pages.is_empty() {
        let mut warc = Vec::new();
        let mut raw_bytes = 0;
        for (i, page) in pages.iter().enumerate() {
            let http =
                format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{page}");
            let record = format!(
                "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: https://doc.rust-lang.org/{i}\r\nContent-Length: {}\r\n\r\n{http}\r\n\r\n",
                http.len()
            );
            raw_bytes += record.len();
            let mut member =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            member.write_all(record.as_bytes()).unwrap();
            warc.extend(member.finish().unwrap());
        }
        let path = write("pages.warc.gz", &warc);
        group.throughput(Throughput::Bytes(raw_bytes as u64));
        group.bench_function("warc.gz+all_text", |b| {
            b.iter(|| read_text_bytes(&path, HtmlText::All))
        });
        group.bench_function("warc.gz+main_content", |b| {
            b.iter(|| read_text_bytes(&path, HtmlText::Main))
        });
    }
    group.finish();
}

/// One JSON Lines record parsed for an id and a text, by the one-pass reader
/// (`parse_record`) and by serde_json alone (`parse_record_serde`, the reference), on the
/// generated corpus (a text with one `\n` escape a record) and on the same records with an
/// escaped quote every 40 words.
fn records(c: &mut Criterion) {
    let plain = jsonl_corpus();
    let escaped = String::from_utf8(plain.clone())
        .unwrap()
        .replace("council plan", "council \\\"plan\\\"");
    let fields = JsonlFields::id_and_text("id", "text");
    let mut group = c.benchmark_group("jsonl-record");
    for (name, corpus) in [("plain", plain.as_slice()), ("quotes", escaped.as_bytes())] {
        let lines: Vec<&str> = std::str::from_utf8(corpus).unwrap().lines().collect();
        group.throughput(Throughput::Bytes(corpus.len() as u64));
        group.bench_function(format!("{name}/serde_json"), |b| {
            b.iter(|| text_bytes(&lines, &fields, parse_record_serde))
        });
        group.bench_function(format!("{name}/one_pass"), |b| {
            b.iter(|| text_bytes(&lines, &fields, parse_record))
        });
    }
    group.finish();
}

/// The bytes of text of `lines` parsed by `parse`.
fn text_bytes(
    lines: &[&str],
    fields: &JsonlFields,
    parse: impl for<'a> Fn(&'a str, &JsonlFields) -> Result<InputRecord<'a>, ErrorKind>,
) -> usize {
    lines
        .iter()
        .map(|line| parse(line, fields).map_or(0, |r| r.body.as_str().len()))
        .sum()
}

fn benches(c: &mut Criterion) {
    records(c);
    let pages = sample_pages();
    if pages.is_empty() {
        eprintln!(
            "no Rust documentation found (set NEARDUP_BENCH_HTML): skipping the extraction benches"
        );
    } else {
        extraction(c, &pages);
    }
    readers(c, &pages);
}

criterion_group! {
    name = group;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = benches
}
criterion_main!(group);
