//! `neardup dedup --granularity`: navigation repeated across pages removed after its first
//! page, the records written back rewritten, the report, and the seen file across runs.

mod common;

use common::{assert_one_line_error, json_lines, neardup};

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
        &["dedup", "-", "--granularity", "line", "--pairs", "-"],
        b"",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = neardup(
        &[
            "dedup",
            "-",
            "--granularity",
            "line",
            "--kept",
            "out.parquet",
        ],
        CORPUS.as_bytes(),
    );
    assert_one_line_error(&run, 2, "JSON Lines");
}
