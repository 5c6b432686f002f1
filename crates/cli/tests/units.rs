//! `neardup dedup --granularity`: navigation repeated across pages removed after its first
//! page, the records written back rewritten, the report, and the seen file across runs.

mod common;

use common::{assert_one_line_error, json_lines, neardup};
use proptest::prelude::*;

const CORPUS: &str = concat!(
    r#"{"id":"a","url":"http://x/a","text":"Home | News | Sport\n\nThe council approved the budget.\n\nAccept cookies?"}"#,
    "\n",
    r#"{"id":"b","text":"Home | News | Sport\n\nRain on Monday.\n\nACCEPT  cookies?","n":1}"#,
    "\n",
    r#"{"id":"c","text":"Home | News | Sport\n\nAccept cookies?"}"#,
    "\n",
);

#[test]
fn repeated_navigation_paragraphs_are_removed_after_the_first_page() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pages.jsonl");
    std::fs::write(&input, CORPUS).unwrap();
    let kept = dir.path().join("kept.jsonl");
    let spans = dir.path().join("spans.jsonl");
    let seen = dir.path().join("seen.units");
    let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let args = [
        "dedup",
        &path(&input),
        "--granularity",
        "paragraph",
        "--kept",
        &path(&kept),
        "--removed-spans",
        &path(&spans),
        "--seen",
        &path(&seen),
    ];
    let run = neardup(&args, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "every output went to its file");
    let records = json_lines(&std::fs::read_to_string(&kept).unwrap());
    assert_eq!(records.len(), 2, "c is left empty: dropped");
    assert_eq!(
        records[0]["text"],
        serde_json::json!(
            "Home | News | Sport\n\nThe council approved the budget.\n\nAccept cookies?"
        )
    );
    assert_eq!(records[1]["text"], "Rain on Monday.\n\n");
    assert_eq!(records[1]["n"], 1, "the other fields kept");
    let reports = json_lines(&std::fs::read_to_string(&spans).unwrap());
    assert_eq!(reports[0]["id"], "b");
    assert_eq!(
        reports[0]["removed_spans"],
        serde_json::json!([[0, 21], [38, 54]])
    );
    assert_eq!(reports[1]["dropped"], true);
    // The next dump: what this one saw counts as seen.
    let again = neardup(&args, b"");
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "",
        "every unit was seen"
    );
    assert!(
        again.stderr.contains("4 seen keys loaded, 4 saved"),
        "{}",
        again.stderr
    );
}

#[test]
fn a_bad_granularity_or_a_document_option_is_a_usage_error() {
    let run = neardup(&["dedup", "-", "--granularity", "sentences:0"], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = neardup(
        &[
            "dedup",
            "-",
            "--granularity",
            "line",
            "--units-only",
            "--pairs",
            "-",
        ],
        b"",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = neardup(&["dedup", "-", "--units-only"], b"");
    assert_eq!(
        run.code, 2,
        "--units-only needs --granularity: {}",
        run.stderr
    );
    let run = neardup(
        &["dedup", "-", "--granularity", "document", "--units-only"],
        CORPUS.as_bytes(),
    );
    assert_one_line_error(&run, 1, "--units-only needs a unit below the document");
    let run = neardup(
        &["dedup", "-", "--granularity", "line", "--kept", "out.warc"],
        CORPUS.as_bytes(),
    );
    assert_one_line_error(&run, 2, "JSON Lines");
}

/// Words of the generated stories: enough that two stories are not near duplicates.
const WORDS: &[&str] = &[
    "council", "budget", "river", "school", "market", "train", "storm", "harvest", "museum",
    "bridge", "library", "festival", "election", "hospital", "factory", "garden", "airport",
    "concert", "village", "harbour", "mayor", "teacher", "farmer", "doctor", "pilot", "singer",
];

/// Paragraphs many pages share.
const SHARED: &[&str] = &[
    "Home | News | Sport | Weather",
    "Accept cookies? We use cookies to improve your experience.",
    "Copyright 2026 The Daily Example. All rights reserved.",
    "Subscribe to our newsletter for the latest stories.",
];

/// A page: shared paragraphs around a story of `sentences` (word indexes), each sentence a
/// paragraph or joined to the next.
fn page(shared: &[usize], sentences: &[Vec<usize>]) -> String {
    let mut text = String::new();
    for &s in shared.iter().take(2) {
        text.push_str(SHARED[s]);
        text.push_str("\n\n");
    }
    for (i, words) in sentences.iter().enumerate() {
        let words: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
        text.push_str(&format!("The {} met today.", words.join(" ")));
        text.push_str(if i % 2 == 0 { " " } else { "\n\n" });
    }
    for &s in shared.iter().skip(2) {
        text.push_str(SHARED[s]);
        text.push_str("\n\n");
    }
    text
}

/// A corpus of pages and copies of some (the same text, or one sentence changed: near
/// duplicates), as JSON Lines with an extra field.
fn corpora() -> impl Strategy<Value = String> {
    let sentence = prop::collection::vec(0..WORDS.len(), 3..7);
    let pages = (
        prop::collection::vec(0..SHARED.len(), 0..4),
        prop::collection::vec(sentence, 4..12),
    );
    let copies = prop::collection::vec((any::<prop::sample::Index>(), 0..3usize), 0..8);
    (prop::collection::vec(pages, 1..10), copies).prop_map(|(pages, copies)| {
        let mut texts: Vec<String> = pages.iter().map(|(s, t)| page(s, t)).collect();
        for (of, change) in copies {
            let (shared, story) = &pages[of.index(pages.len())];
            let mut story = story.clone();
            if change == 1 {
                story[0] = vec![0, 1, 2];
            }
            texts.push(match change {
                2 => page(&[], &story),
                _ => page(shared, &story),
            });
        }
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                serde_json::json!({"id": format!("d{i}"), "text": t, "n": i}).to_string() + "\n"
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// One run does both: `dedup --granularity paragraph` writes what `dedup --kept` followed by
    /// `dedup --granularity paragraph --units-only` of its output writes, byte for byte, and
    /// lists the removed documents as `dedup --removed` does.
    #[test]
    fn one_run_equals_document_dedup_then_unit_dedup_of_its_kept_records(corpus in corpora()) {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
        std::fs::write(file("c.jsonl"), &corpus).unwrap();
        let read = |name: &str| std::fs::read_to_string(file(name)).unwrap();
        let ok = |args: &[&str]| {
            let run = neardup(args, b"");
            assert_eq!(run.code, 0, "{}", run.stderr);
        };
        ok(&["dedup", &file("c.jsonl"), "--kept", &file("docs.jsonl"), "--removed", &file("removed1.jsonl")]);
        ok(&["dedup", &file("docs.jsonl"), "--granularity", "paragraph", "--units-only",
             "--kept", &file("kept1.jsonl"), "--removed-spans", &file("spans1.jsonl")]);
        ok(&["dedup", &file("c.jsonl"), "--granularity", "paragraph", "--kept", &file("kept2.jsonl"),
             "--removed-spans", &file("spans2.jsonl"), "--removed", &file("removed2.jsonl"),
             "--summary", &file("summary.json")]);
        prop_assert_eq!(read("kept1.jsonl"), read("kept2.jsonl"));
        prop_assert_eq!(read("spans1.jsonl"), read("spans2.jsonl"));
        prop_assert_eq!(read("removed1.jsonl"), read("removed2.jsonl"));
        let summary: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
        let kept_documents = read("docs.jsonl").lines().count();
        prop_assert_eq!(summary["kept"].as_u64(), Some(kept_documents as u64));
        prop_assert_eq!(summary["units"]["documents"].as_u64(), Some(kept_documents as u64));
        prop_assert_eq!(
            summary["units"]["documents_kept"].as_u64(),
            Some(read("kept2.jsonl").lines().count() as u64)
        );
    }
}

#[test]
fn near_duplicate_pages_go_whole_and_shared_paragraphs_go_from_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let story: Vec<String> = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu",
    ]
    .iter()
    .enumerate()
    .map(|(i, w)| {
        format!("Sentence {w} about the council budget and the bridge over the river number {i}.")
    })
    .collect();
    let story = story.join(" ");
    let pages = [
        format!("Home | News\n\n{story}\n\nAccept cookies?"),
        format!("Home | News\n\n{story} Updated today.\n\nAccept cookies?"),
        "Home | News\n\nRain on Monday across the valley, the farmers said.\n\nAccept cookies?"
            .to_string(),
    ];
    let corpus: String = pages
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"id": i.to_string(), "text": t}).to_string() + "\n")
        .collect();
    let input = dir.path().join("c.jsonl");
    std::fs::write(&input, corpus).unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let run = paragraphs(
        &path("c.jsonl"),
        &path("kept.jsonl"),
        &["--removed", &path("removed.jsonl")],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let removed = json_lines(&std::fs::read_to_string(path("removed.jsonl")).unwrap());
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(removed[0]["id"], "1");
    assert_eq!(removed[0]["kind"], "near");
    let kept = json_lines(&std::fs::read_to_string(path("kept.jsonl")).unwrap());
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0]["text"], serde_json::json!(pages[0]));
    assert_eq!(
        kept[1]["text"],
        "Rain on Monday across the valley, the farmers said.\n\n"
    );
    assert!(run.stderr.contains("below the document"), "{}", run.stderr);
}

/// Runs `neardup dedup INPUT --granularity paragraph --kept KEPT EXTRA...`.
fn paragraphs(input: &str, kept: &str, extra: &[&str]) -> common::Run {
    let args = ["dedup", input, "--granularity", "paragraph", "--kept", kept];
    neardup(&[&args[..], extra].concat(), b"")
}

#[test]
fn rewritten_records_are_compressed_as_the_name_says() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(path("c.jsonl"), CORPUS).unwrap();
    let written = |name: &str| {
        let run = paragraphs(&path("c.jsonl"), &path(name), &[]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        std::fs::read(path(name)).unwrap()
    };
    let plain = written("kept.jsonl");
    assert_eq!(json_lines(std::str::from_utf8(&plain).unwrap()).len(), 2);
    let gzip = written("kept.jsonl.gz");
    let mut unzipped = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(&gzip[..]),
        &mut unzipped,
    )
    .unwrap();
    assert_eq!(unzipped, plain);
    let zstd = written("kept.jsonl.zst");
    assert_eq!(zstd::decode_all(&zstd[..]).unwrap(), plain);
}

#[test]
fn parquet_rows_keep_every_column_with_the_text_replaced() {
    use arrow_array::{Array, ArrayRef, Int64Array, LargeStringArray, StringArray};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(path("c.jsonl"), CORPUS).unwrap();
    let records = json_lines(CORPUS);
    let field = |name: &str| -> Vec<String> {
        records
            .iter()
            .map(|r| r[name].as_str().unwrap().to_string())
            .collect()
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(StringArray::from(field("id")))),
        ("text", Arc::new(LargeStringArray::from(field("text")))),
        ("n", Arc::new(Int64Array::from(vec![10, 11, 12]))),
    ];
    // Row groups of one row: the rows are read back across groups.
    common::parquet::write(dir.path().join("c.parquet").as_path(), columns, 1);
    let run = |input: &str, kept: &str| paragraphs(&path(input), &path(kept), &[]);
    let jsonl = run("c.jsonl", "kept.jsonl");
    assert_eq!(jsonl.code, 0, "{}", jsonl.stderr);
    let parquet = run("c.parquet", "kept.parquet");
    assert_eq!(parquet.code, 0, "{}", parquet.stderr);
    let want = json_lines(&std::fs::read_to_string(path("kept.jsonl")).unwrap());
    let got = common::parquet::read(dir.path().join("kept.parquet").as_path());
    assert_eq!(got.num_columns(), 3, "every column, in place");
    let strings = |name: &str| -> Vec<String> {
        let column = got.column_by_name(name).unwrap();
        let column = column.as_any().downcast_ref::<StringArray>().unwrap();
        (0..column.len())
            .map(|i| column.value(i).to_string())
            .collect()
    };
    let wanted = |name: &str| -> Vec<String> {
        want.iter()
            .map(|r| r[name].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(strings("id"), wanted("id"));
    assert_eq!(strings("text"), wanted("text"));
    let n = got.column_by_name("n").unwrap();
    let n = n.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(n.values().to_vec(), vec![10, 11]);
    // Parquet only from Parquet inputs.
    assert_one_line_error(&run("c.jsonl", "kept.parquet"), 2, "Parquet");
}

#[test]
fn the_fraction_rule_is_a_policy_field_and_removes_mostly_seen_paragraphs() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let flags = [
        "--granularity",
        "paragraph",
        "--ngrams",
        "3",
        "--ngram-threshold",
        "0.5",
    ];
    let shown = neardup(
        &[&["dedup", "-", "--show-policy"][..], &flags].concat(),
        b"",
    );
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let policy: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(
        policy["units"],
        serde_json::json!({"unit": "paragraph", "min_chars": 1, "ngrams": {"n": 3, "threshold": 0.5}})
    );
    std::fs::write(path("policy.json"), &shown.stdout).unwrap();
    let corpus = concat!(
        r#"{"id":"a","text":"The council met on Monday and approved the budget for the bridge."}"#,
        "\n",
        r#"{"id":"b","text":"Intro.\n\nThe council met on Monday and approved the budget for a school."}"#,
        "\n",
    );
    std::fs::write(path("c.jsonl"), corpus).unwrap();
    let input = path("c.jsonl");
    let policy_file = path("policy.json");
    let units_only = |extra: &[&str]| {
        let run = neardup(
            &[&["dedup", &input, "--units-only", "--kept", "-"][..], extra].concat(),
            b"",
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
    };
    let alone = units_only(&flags);
    let kept = json_lines(&alone);
    assert_eq!(
        kept[1]["text"], "Intro.\n\n",
        "8 of its 10 3-grams were seen"
    );
    // The policy file carries the rule: documents first (both kept), then the same units.
    let from_file = neardup(
        &[
            "dedup",
            &input,
            "--policy-file",
            &policy_file,
            "--kept",
            "-",
        ],
        b"",
    );
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    assert_eq!(from_file.stdout, alone);
    // --granularity with the file keeps the file's n-gram rule (only what is given changes).
    let file_and_unit = units_only(&["--policy-file", &policy_file, "--granularity", "paragraph"]);
    assert_eq!(file_and_unit, alone);
    let exact = units_only(&["--granularity", "paragraph"]);
    assert_eq!(json_lines(&exact)[1]["text"], json_lines(corpus)[1]["text"]);
    let sentences = neardup(
        &[
            "dedup",
            "-",
            "--granularity",
            "sentences:2",
            "--ngrams",
            "3",
        ],
        b"",
    );
    assert_one_line_error(&sentences, 2, "paragraphs or lines");
    let threshold = neardup(
        &[
            "dedup",
            "-",
            "--granularity",
            "line",
            "--ngram-threshold",
            "0",
        ],
        b"",
    );
    assert_one_line_error(&threshold, 2, "threshold");
}

#[test]
fn a_later_document_keep_prefers_keeps_the_shared_paragraph() {
    let corpus = concat!(
        r#"{"id":"a","text":"Home | News | Sport\n\nRain on Monday."}"#,
        "\n",
        r#"{"id":"b","text":"Home | News | Sport\n\nThe council approved the budget for the new bridge over the river."}"#,
        "\n",
    );
    let run = |keep: &str| {
        let args = [
            "dedup",
            "-",
            "--granularity",
            "paragraph",
            "--keep",
            keep,
            "--kept",
            "-",
        ];
        let run = neardup(&args, corpus.as_bytes());
        assert_eq!(run.code, 0, "{}", run.stderr);
        json_lines(&run.stdout)
    };
    let first = run("first");
    assert_eq!(first[0]["text"], "Home | News | Sport\n\nRain on Monday.");
    assert_eq!(
        first[1]["text"],
        "The council approved the budget for the new bridge over the river."
    );
    let longest = run("longest");
    assert_eq!(longest[0]["id"], "a", "written in input order");
    assert_eq!(longest[0]["text"], "Rain on Monday.");
    assert_eq!(longest[1]["text"], json_lines(corpus)[1]["text"]);
}
