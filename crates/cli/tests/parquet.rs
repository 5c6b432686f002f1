//! Parquet in and out: every command reads `.parquet` through the one input layer, decisions
//! equal those on the same corpus as JSON Lines, and `dedup --kept OUT.parquet` keeps exactly the
//! kept rows with every input column unchanged. Test files are written with the arrow writer.

mod common;

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringDictionaryBuilder, StringViewBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, Int64Array, LargeStringArray, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use common::parquet::{read, write};
use common::{assert_one_line_error, json_lines, neardup};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

/// The bundled example's records: (id, text).
fn example() -> Vec<(String, String)> {
    let jsonl = include_str!("../../../examples/news.jsonl");
    json_lines(jsonl)
        .into_iter()
        .map(|v| {
            let field = |name: &str| v[name].as_str().unwrap().to_string();
            (field("id"), field("text"))
        })
        .collect()
}

/// The `(removed, kept)` id pairs of a `dedup --removed -` run.
fn removed(args: &[&str]) -> Vec<(String, String)> {
    let run = neardup(&[&["dedup", "--removed", "-"], args].concat(), b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    json_lines(&run.stdout)
        .iter()
        .map(|v| {
            let id = |f: &str| v[f].as_str().unwrap().to_string();
            (id("id"), id("duplicate_of"))
        })
        .collect()
}

#[test]
fn parquet_decisions_equal_jsonl_decisions_for_every_string_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let rows = example();
    let ids: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
    let texts: Vec<&str> = rows.iter().map(|(_, text)| text.as_str()).collect();
    let want = removed(&["../../examples/news.jsonl"]);
    assert!(!want.is_empty());

    let mut dictionary = StringDictionaryBuilder::<Int32Type>::new();
    texts.iter().for_each(|t| dictionary.append_value(t));
    let mut view = StringViewBuilder::new();
    texts.iter().for_each(|t| view.append_value(t));
    let encodings: Vec<(&str, ArrayRef)> = vec![
        ("utf8", Arc::new(StringArray::from(texts.clone()))),
        ("large", Arc::new(LargeStringArray::from(texts.clone()))),
        ("dictionary", Arc::new(dictionary.finish())),
        ("view", Arc::new(view.finish())),
    ];
    for (name, text) in encodings {
        let path = dir.path().join(format!("{name}.parquet"));
        let id: ArrayRef = Arc::new(StringArray::from(ids.clone()));
        // Row groups of 2 rows: documents cross row groups and batches.
        write(&path, vec![("id", id), ("text", text)], 2);
        assert_eq!(removed(&[path.to_str().unwrap()]), want, "{name}");
    }
}

#[test]
fn kept_parquet_keeps_exactly_the_kept_rows_with_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let rows = example();
    let n = rows.len();
    let texts: Vec<&str> = rows.iter().map(|(_, text)| text.as_str()).collect();
    let mut tags = ListBuilder::new(arrow_array::builder::StringBuilder::new());
    for i in 0..n {
        tags.values().append_value(format!("tag{i}"));
        tags.append(i % 3 != 0);
    }
    let input = dir.path().join("in.parquet");
    let numbers: Vec<i64> = (0..n as i64).map(|i| i * 1000).collect();
    let times: Vec<i64> = (0..n as i64).map(|i| 1_700_000_000_000 + i).collect();
    write(
        &input,
        vec![
            // An integer id column: ids are written in decimal, as JSON number ids are.
            (
                "id",
                Arc::new(Int64Array::from_iter_values(0..n as i64)) as ArrayRef,
            ),
            ("text", Arc::new(StringArray::from(texts))),
            ("number", Arc::new(Int64Array::from(numbers))),
            ("fetched", Arc::new(TimestampMillisecondArray::from(times))),
            ("tags", Arc::new(tags.finish())),
        ],
        3,
    );
    let output = dir.path().join("kept.parquet");
    let run = neardup(
        &[
            "dedup",
            input.to_str().unwrap(),
            "--kept",
            output.to_str().unwrap(),
            "--removed",
            "-",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let removed: Vec<i64> = json_lines(&run.stdout)
        .iter()
        .map(|v| v["id"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(!removed.is_empty());
    let kept_rows: Vec<u32> = (0..n as u32)
        .filter(|i| !removed.contains(&i64::from(*i)))
        .collect();

    let original = read(&input);
    let kept = read(&output);
    assert_eq!(kept.schema(), original.schema(), "every column, same types");
    let indices = arrow_array::UInt32Array::from(kept_rows.clone());
    for (column, name) in original.columns().iter().zip(original.schema().fields()) {
        let want = arrow_select::take::take(column.as_ref(), &indices, None).unwrap();
        assert_eq!(
            kept.column_by_name(name.name()).unwrap().to_data(),
            want.to_data(),
            "{name}"
        );
    }
}

#[test]
fn bad_parquet_is_a_clear_error_and_a_null_text_a_bad_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();

    std::fs::write(path("garbage.parquet"), b"PAR1 this is not parquet at all").unwrap();
    let run = neardup(&["dedup", &path("garbage.parquet")], b"");
    assert_one_line_error(&run, 1, "cannot read Parquet");

    let numbers: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    write(
        &dir.path().join("numbers.parquet"),
        vec![("text", numbers)],
        10,
    );
    let run = neardup(&["fingerprint", &path("numbers.parquet")], b"");
    assert_one_line_error(
        &run,
        1,
        "field `text` is an integer column, expected a string column",
    );

    let body: ArrayRef = Arc::new(StringArray::from(vec!["only a body"]));
    write(&dir.path().join("body.parquet"), vec![("body", body)], 10);
    let run = neardup(&["fingerprint", &path("body.parquet")], b"");
    assert_one_line_error(&run, 1, "no text field `text`");
    let named = neardup(
        &["fingerprint", &path("body.parquet"), "--text-field", "body"],
        b"",
    );
    assert_eq!(named.code, 0, "{}", named.stderr);
    assert_eq!(json_lines(&named.stdout).len(), 1);

    let texts: ArrayRef = Arc::new(StringArray::from(vec![Some("one text"), None, Some("two")]));
    write(&dir.path().join("nulls.parquet"), vec![("text", texts)], 10);
    let run = neardup(
        &["fingerprint", &path("nulls.parquet"), "--on-error", "fail"],
        b"",
    );
    assert_one_line_error(&run, 1, "nulls.parquet:2");
    let skipped = neardup(&["fingerprint", &path("nulls.parquet")], b"");
    assert_eq!(skipped.code, 0, "{}", skipped.stderr);
    let ids: Vec<String> = json_lines(&skipped.stdout)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(
        ids[1].ends_with("nulls.parquet:3"),
        "the row is the default id: {ids:?}"
    );

    let bytes = std::fs::read(path("nulls.parquet")).unwrap();
    let run = neardup(&["fingerprint", "-", "--format", "parquet"], &bytes);
    assert_one_line_error(&run, 1, "Parquet is read from a file");
}

/// The files that made the `parquet` and `arrow` crates panic (exit 101 with a "thread panicked"
/// message): one line and exit 1, naming the file, for every command that reads them.
#[test]
fn corrupt_parquet_that_made_the_decoder_panic_is_one_line_and_exit_1() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/parquet");
    let mut files = 0;
    for entry in std::fs::read_dir(&corpus).unwrap() {
        let path = entry.unwrap().path();
        let name = path.to_str().unwrap();
        for command in ["dedup", "fingerprint"] {
            let run = neardup(&[command, name], b"");
            assert_one_line_error(&run, 1, &format!("{name}:"));
            assert!(run.stderr.contains("cannot read Parquet"), "{}", run.stderr);
        }
        files += 1;
    }
    assert!(files >= 5, "the corpus is in {}", corpus.display());
}

/// Runs `neardup` with `args`; returns its exit code, its standard error and its peak resident
/// memory in KiB as last seen (its `VmHWM`, read every millisecond until it exits: getrusage
/// would count the memory of this process, which made the input, in the child's).
fn neardup_peak(args: &[&str]) -> (Option<i32>, String, u64) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        let seen = std::fs::read_to_string(&status).unwrap_or_default();
        let hwm = seen.lines().find_map(|l| l.strip_prefix("VmHWM:"));
        let kib = hwm.and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
        peak = peak.max(kib.unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), stderr, peak)
}

/// A row group holding one value over the limit is skipped from its declared size, not decoded:
/// neither by the reader nor when `--kept` reads the kept rows again (with every column).
#[test]
fn a_value_over_the_limit_is_not_decoded_by_the_reader_nor_by_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.parquet");
    let len = 128 << 20;
    let mut texts = vec!["a".repeat(len)];
    texts.extend(example().into_iter().map(|(_, text)| text));
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..texts.len() as i64));
    let texts: ArrayRef = Arc::new(StringArray::from(texts));
    let batch = RecordBatch::try_from_iter([("id", ids), ("text", texts)]).unwrap();
    let properties = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(1))
        .build();
    let file = std::fs::File::create(&input).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    drop(batch);
    let kept = dir.path().join("kept.parquet");
    let (code, stderr, peak) = neardup_peak(&[
        "dedup",
        "--max-document-bytes",
        "1000000",
        "--kept",
        kept.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(":1: row group 0: column `text` declares"),
        "{stderr}"
    );
    assert!(read(&kept).num_rows() > 0);
    assert!(peak > 0, "the peak was read");
    assert!(
        peak < 96 << 10,
        "peak {peak} KiB with a value of {len} bytes"
    );
}
