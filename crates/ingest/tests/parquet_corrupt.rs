//! Corrupt and hostile Parquet: every damaged file is an error with its place, never a panic,
//! and a value over the size limit is skipped from the declared sizes (of its column chunk, or
//! of its page), before it is decoded.
//! The corpus of files that made the `parquet` and `arrow` crates panic (each one byte off a
//! small valid file) is the fuzz target's regressions, `crates/fuzz/regressions/parquet/`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use neardup_ingest::{open_path, ReadOptions, ReadStats};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesBuilder};

/// The environment variable naming the big file the child process reads.
const BIG_FILE: &str = "NEARDUP_TEST_BIG_PARQUET";

/// A small valid file: two row groups of three rows (id, text, url), snappy pages.
fn small_file() -> Vec<u8> {
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5, 6]));
    let texts: ArrayRef = Arc::new(StringArray::from(vec![
        "the council approved the budget",
        "schools get more money this year",
        "the library opens on sundays",
        "roads will be repaired in spring",
        "the mayor spoke for an hour",
        "a long debate about the town hall",
    ]));
    let urls: ArrayRef = Arc::new(StringArray::from(vec![
        Some("http://a.org/1"),
        None,
        Some("http://a.org/3"),
        Some("http://a.org/4"),
        Some("http://a.org/5"),
        None,
    ]));
    let batch = RecordBatch::try_from_iter([("id", ids), ("text", texts), ("url", urls)]).unwrap();
    let properties = WriterProperties::builder()
        .set_max_row_group_row_count(Some(3))
        .set_compression(Compression::SNAPPY)
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    out
}

/// Reads `path` to the end with `opts`; returns (documents, error messages).
fn read(path: &Path, opts: ReadOptions) -> (usize, Vec<String>) {
    let stats = Arc::new(ReadStats::default());
    let mut documents = 0;
    let mut errors = Vec::new();
    for item in open_path(path, &Arc::new(opts), &stats) {
        match item {
            Ok(_) => documents += 1,
            Err(error) => errors.push(error.to_string()),
        }
    }
    (documents, errors)
}

/// The corruptions of `bytes` tried: each byte zeroed, set to 0xFF, and bits flipped; the file
/// cut at each length.
fn corruptions(bytes: &[u8]) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
    let edits = (0..bytes.len()).flat_map(move |at| {
        [0xFFu8, 0x01].into_iter().map(move |how| {
            let mut changed = bytes.to_vec();
            changed[at] = if how == 0x00 || how == 0xFF {
                how
            } else {
                changed[at] ^ how
            };
            (format!("byte {at} set with {how:#04x}"), changed)
        })
    });
    let cuts = (0..bytes.len()).map(move |len| (format!("cut at {len}"), bytes[..len].to_vec()));
    edits.chain(cuts)
}

#[test]
fn no_corruption_of_a_small_file_panics_and_every_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = small_file();
    let path: PathBuf = dir.path().join("pages.parquet");
    let mut panics = Vec::new();
    for (how, corrupt) in corruptions(&bytes) {
        std::fs::write(&path, &corrupt).unwrap();
        let outcome = std::panic::catch_unwind(|| read(&path, ReadOptions::default()));
        match outcome {
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panics.push(format!("{how}: {message}"));
            }
            Ok((_, errors)) => {
                for error in errors {
                    assert!(
                        error.starts_with(&path.display().to_string()),
                        "{how}: {error}"
                    );
                }
            }
        }
    }
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics.join("\n")
    );
}

#[test]
fn the_corpus_of_files_that_made_the_dependencies_panic_gives_errors_with_their_place() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/parquet");
    let mut files = 0;
    for entry in std::fs::read_dir(&corpus).unwrap() {
        let path = entry.unwrap().path();
        let (_, errors) = read(&path, ReadOptions::default());
        let name = path.display().to_string();
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        assert!(errors[0].starts_with(&format!("{name}:")), "{}", errors[0]);
        assert!(errors[0].contains("cannot read Parquet"), "{}", errors[0]);
        files += 1;
    }
    assert!(files >= 5, "the corpus is in {}", corpus.display());
}

/// Writes `texts` in one column `text`, zstd pages without dictionary or statistics, with
/// `properties` besides (a few hundred KB on disk for a value of 128 MiB of `a`).
fn write_texts(path: &Path, texts: Vec<String>, properties: WriterPropertiesBuilder) {
    let texts: ArrayRef = Arc::new(StringArray::from(texts));
    let batch = RecordBatch::try_from_iter([("text", texts)]).unwrap();
    let properties = properties
        .set_compression(Compression::ZSTD(Default::default()))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// What the child process ([`read_the_big_file`]) read.
struct ChildRead {
    peak_kib: u64,
    documents: usize,
    errors: Vec<String>,
}

/// Reads `path` with a 1 MiB limit in a child process, whose peak memory is the reader's
/// alone.
fn read_in_child(path: &Path) -> ChildRead {
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "read_the_big_file", "--ignored", "--nocapture"])
        .env(BIG_FILE, path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&child.stderr)
    );
    let line = |key: &str| -> String {
        let found = stdout.lines().find_map(|l| l.strip_prefix(key));
        found
            .unwrap_or_else(|| panic!("no {key} in {stdout}"))
            .to_string()
    };
    ChildRead {
        peak_kib: line("peak KiB ").trim().parse().unwrap(),
        documents: line("documents ").parse().unwrap(),
        errors: stdout
            .lines()
            .filter_map(|l| l.strip_prefix("error "))
            .map(str::to_string)
            .collect(),
    }
}

/// Asserts that the file at `path`, small on disk, holding a value of `len` bytes, is read in a
/// child process ([`read_in_child`]) with a peak memory under `peak_mib`, its only row group
/// skipped unread with an error starting with `reason` after its place.
fn assert_skipped_unread(path: &Path, len: usize, peak_mib: u64, reason: &str) {
    assert!(std::fs::metadata(path).unwrap().len() < 1 << 20);
    let read = read_in_child(path);
    assert!(
        read.peak_kib < peak_mib << 10,
        "peak {} KiB reading a {len}-byte value",
        read.peak_kib
    );
    assert_eq!(read.errors.len(), 1, "{:?}", read.errors);
    let want = format!("{}:1: {reason}", path.display());
    assert!(read.errors[0].starts_with(&want), "{}", read.errors[0]);
    assert!(read.errors[0].ends_with("its rows are skipped unread"));
    assert_eq!(read.documents, 0);
}

#[test]
fn a_value_over_the_limit_is_skipped_from_its_declared_size_before_it_is_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.parquet");
    let len = 128 << 20;
    write_texts(&path, vec!["a".repeat(len)], WriterProperties::builder());
    assert_skipped_unread(&path, len, 48, "row group 0: column `text` declares ");
}

#[test]
fn a_value_over_the_limit_among_small_ones_in_one_page_is_skipped_from_the_page_header() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one-page.parquet");
    let len = 64 << 20;
    // 200 small values and the big one, in one page whose average is within the limit.
    let mut texts: Vec<String> = (0..200).map(|n| format!("a small page {n}")).collect();
    texts.insert(100, "a".repeat(len));
    let one_page = WriterProperties::builder()
        .set_data_page_size_limit(1 << 30)
        .set_data_page_row_count_limit(1 << 20)
        .set_write_batch_size(1 << 20);
    write_texts(&path, texts, one_page);
    let reason = "row group 0: column `text` declares a page of ";
    assert_skipped_unread(&path, len, 32, reason);
}

/// The child of the tests above ([`read_in_child`]): reads the file named by [`BIG_FILE`] with a 1 MiB limit and
/// prints what it read and its peak resident memory.
#[test]
#[ignore = "run by the tests of values over the limit"]
fn read_the_big_file() {
    let path = std::env::var(BIG_FILE).expect("run by its parent test");
    let opts = ReadOptions {
        max_document_bytes: 1 << 20,
        ..ReadOptions::default()
    };
    let (documents, errors) = read(Path::new(&path), opts);
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .unwrap();
    println!("peak KiB {}", peak.trim().trim_end_matches("kB").trim());
    println!("documents {documents}");
    for error in errors {
        println!("error {error}");
    }
}

#[test]
fn the_page_headers_of_many_pages_with_statistics_and_dictionaries_are_walked_and_all_rows_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pages.parquet");
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..3000));
    let texts: ArrayRef =
        Arc::new(StringArray::from_iter_values((0..3000).map(|n| {
            format!("page {} of the town council minutes", n % 700)
        })));
    let batch = RecordBatch::try_from_iter([("id", ids), ("text", texts)]).unwrap();
    let properties = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .set_max_row_group_row_count(Some(1000))
        .build();
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let opts = ReadOptions {
        max_document_bytes: 1 << 10,
        ..ReadOptions::default()
    };
    assert_eq!(read(&path, opts), (3000, Vec::new()));
}

#[test]
fn a_page_header_that_does_not_parse_is_an_error_naming_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pages.parquet");
    let mut bytes = small_file();
    std::fs::write(&path, &bytes).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&file)
        .unwrap();
    let (offset, _) = metadata.row_group(0).column(1).byte_range();
    // A field header of an unknown Thrift type (15) where the text column's first page starts.
    bytes[offset as usize] = 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    let (documents, errors) = read(&path, ReadOptions::default());
    assert_eq!(documents, 0);
    let want = format!(
        "{}:1: cannot read Parquet: row group 0: column `text`: the page header at offset \
         {offset}: an unknown Thrift type 15",
        path.display()
    );
    assert_eq!(errors, [want]);
}

#[test]
fn a_file_that_is_not_parquet_keeps_the_decoder_s_error_as_its_source() {
    use neardup_ingest::{ErrorKind, ParquetFailure};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.parquet");
    let bytes = small_file();
    std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    let stats = Arc::new(ReadStats::default());
    let error = open_path(&path, &Arc::new(ReadOptions::default()), &stats)
        .find_map(Result::err)
        .expect("a cut footer is an error");
    let ErrorKind::Parquet { what, source } = &error.kind else {
        panic!("not a Parquet error: {error}");
    };
    assert!(what.starts_with("the footer: "), "{what}");
    let Some(ParquetFailure::Parquet(decoder)) = source else {
        panic!("the decoder's error is lost: {source:?}");
    };
    assert!(what.ends_with(&decoder.to_string()), "{what}");
    let chain = std::iter::successors(Some(&error as &dyn std::error::Error), |e| e.source());
    assert_eq!(
        chain.count(),
        3,
        "place, Parquet error, the decoder's own error"
    );
}
