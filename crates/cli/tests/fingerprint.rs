//! `neardup fingerprint` and `neardup compare`, end to end.

mod common;

use common::{assert_one_line_error, json_lines, neardup};
use serde_json::Value;

/// `neardup fingerprint` on JSONL from standard input, stopping at the first bad record.
fn jsonl(input: &[u8]) -> common::Run {
    neardup(
        &[
            "fingerprint",
            "--input-format",
            "jsonl",
            "--on-error",
            "fail",
        ],
        input,
    )
}

#[test]
fn fingerprints_jsonl_with_ids_in_input_order() {
    let input = br#"{"id": "a", "text": "The cat sat on the mat."}
{"id": 7, "text": "The cat sat on the mat!", "other": [1, {"x": null}]}

{"text": "no id here"}
"#;
    let run = neardup(&["fingerprint", "--format", "jsonl", "-"], input);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["a", "7", "-:4"],
        "missing id → place, as in every command"
    );
    for line in &lines {
        assert_eq!(line["simhash"].as_str().unwrap().len(), 16);
        assert_eq!(line["digest"].as_str().unwrap().len(), 64);
        assert!(line["features"].as_u64().is_some() && line["bytes"].as_u64().is_some());
        assert!(line.get("minhash").is_none());
    }
    // Punctuation is part of the default profile's character shingles: close, not equal.
    let simhash =
        |i: usize| u64::from_str_radix(lines[i]["simhash"].as_str().unwrap(), 16).unwrap();
    assert!((simhash(0) ^ simhash(1)).count_ones() <= 8);
    assert_eq!(lines[0]["bytes"], 23);
}

#[test]
fn custom_fields_profiles_and_text_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.txt");
    std::fs::write(&path, "How are you? I am fine. Thanks.").unwrap();
    let path = path.to_str().unwrap();
    let run = neardup(&["fingerprint", "--profile", "python-simhash", path], b"");
    let line = &json_lines(&run.stdout)[0];
    assert_eq!(line["id"], path);
    assert_eq!(
        line["simhash"], "2f73898a203ee80b",
        "the PyPI package's value"
    );

    let input = br#"{"key": "k1", "body": "How are you? I am fine. Thanks."}"#;
    let run = neardup(
        &[
            "fingerprint",
            "--profile",
            "python-simhash",
            "--format",
            "jsonl",
            "--id-field",
            "key",
            "--text-field",
            "body",
        ],
        input,
    );
    let line = &json_lines(&run.stdout)[0];
    assert_eq!(
        (line["id"].as_str(), line["simhash"].as_str()),
        (Some("k1"), Some("2f73898a203ee80b"))
    );
}

#[test]
fn bad_input_gives_one_line_and_exit_code_1() {
    assert_one_line_error(
        &jsonl(b"{\"text\": \"ok\"}\n{\"text\": oops}\n"),
        1,
        "-:2: malformed JSON",
    );
    assert_one_line_error(
        &jsonl(b"{\"id\": 1}\n"),
        1,
        "-:1: record has no text field `text` (nor html field `html`)",
    );
    assert_one_line_error(
        &jsonl(b"{\"text\": 12}\n"),
        1,
        "-:1: field `text` is a number, expected a string",
    );
    assert_one_line_error(
        &jsonl(b"{\"text\": \"a\xffb\"}\n"),
        1,
        "-:1: invalid UTF-8 (first bad byte at byte 11 of the record)",
    );
    let lossy = neardup(
        &["fingerprint", "--input-format", "jsonl", "--lossy"],
        b"{\"text\": \"a\xffb\"}\n",
    );
    assert_eq!(lossy.code, 0);
    // The lines before a bad one are written.
    let partial = jsonl(b"{\"text\": \"first\"}\nnot json\n");
    assert_eq!(partial.stdout.lines().count(), 1);

    assert_one_line_error(
        &neardup(&["fingerprint", "/no/such/file"], b""),
        1,
        "/no/such/file: cannot open",
    );
    assert_one_line_error(
        &neardup(&["fingerprint", "--on-error", "fail", "-"], b"caf\xe9"),
        1,
        "-: invalid UTF-8",
    );
    let profile = neardup(&["fingerprint", "--profile", "nope"], b"");
    assert_eq!(profile.code, 2, "a wrong profile is a usage error");
    assert!(
        profile.stderr.contains("'nope'") && profile.stderr.contains("python-simhash"),
        "{}",
        profile.stderr
    );
    assert_eq!(neardup(&["fingerprint", "--no-such-flag"], b"").code, 2);
    assert_eq!(
        neardup(&["fingerprint", "--input-format", "xml"], b"").code,
        2
    );
}

#[test]
fn jsonl_records_that_are_not_objects_or_have_the_wrong_types() {
    assert_one_line_error(
        &jsonl(b"{\"text\": \"ok\"}\n\n[1, 2]\n"),
        1,
        "-:3: record is not a JSON object",
    );
    assert_one_line_error(
        &jsonl(b"{\"id\": true, \"text\": \"x\"}\n"),
        1,
        "-:1: field `id` is a boolean, expected a string or a number",
    );
    assert_one_line_error(
        &jsonl(b"{\"text\": null}\n"),
        1,
        "-:1: record has no text field `text`",
    );
    // The fields are those of every command: an html field stands in for a missing text (its
    // main content is fingerprinted), and a named field of the wrong type makes a bad record.
    let html = jsonl(b"{\"html\": \"<p>x</p>\"}\n");
    assert_eq!(json_lines(&html.stdout)[0]["bytes"], 1, "{}", html.stderr);
    assert_one_line_error(
        &jsonl(b"{\"text\": \"x\", \"url\": 5}\n"),
        1,
        "-:1: field `url` is a number, expected a string",
    );
    let others = jsonl(b"{\"text\": \"x\", \"other\": 5, \"more\": []}\n");
    assert_eq!(others.code, 0, "{}", others.stderr);
    // Escaped text is fingerprinted as the string it stands for.
    let escaped = jsonl(b"{\"text\": \"caf\\u00e9\"}\n{\"text\": \"caf\xc3\xa9\"}\n");
    let lines = json_lines(&escaped.stdout);
    assert_eq!(lines[0]["simhash"], lines[1]["simhash"]);
    assert_eq!(lines[0]["bytes"], 5);
}

#[test]
fn empty_and_white_space_documents_are_fingerprinted() {
    let run = neardup(
        &["fingerprint", "--input-format", "jsonl"],
        b"{\"text\": \"\"}\n{\"text\": \" \\n\\t \"}\n",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    assert_eq!(lines.len(), 2);
    // The default profile's character shingles give an empty text itself as the one feature.
    assert_eq!(lines[0]["features"], 1);
    assert_eq!(
        lines[0]["digest"], lines[1]["digest"],
        "white space only normalises to empty"
    );
}

#[test]
fn profile_round_trips_through_a_file() {
    let run = neardup(&["fingerprint", "--profile", "zh", "--show-profile"], b"");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zh.json");
    std::fs::write(&path, &run.stdout).unwrap();
    let text = "美国“51区”雇员称内部有9架飞碟，曾看见灰色外星人";
    let from_file = neardup(
        &["fingerprint", "--profile-file", path.to_str().unwrap(), "-"],
        text.as_bytes(),
    );
    let builtin = neardup(&["fingerprint", "--profile", "zh", "-"], text.as_bytes());
    assert_eq!(from_file.stdout, builtin.stdout);
    std::fs::write(&path, "{\"name\": \"broken\"}").unwrap();
    let broken = neardup(
        &["fingerprint", "--profile-file", path.to_str().unwrap()],
        b"",
    );
    assert_one_line_error(&broken, 1, "invalid profile");
}

#[test]
fn compare_explains_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    let b = dir.path().join("b.txt");
    std::fs::write(
        &a,
        "the quick brown fox jumps over the lazy dog and runs far away into the woods",
    )
    .unwrap();
    std::fs::write(
        &b,
        "the quick brown fox jumps over the lazy cat and runs far away into the woods",
    )
    .unwrap();
    // Word 3-shingles, whatever the default profile's features are.
    let profile = dir.path().join("word3.json");
    let shown = neardup(&["fingerprint", "--show-profile"], b"");
    let mut word3: Value = serde_json::from_str(&shown.stdout).unwrap();
    word3["features"] = serde_json::json!({"kind": "word-shingles", "width": 3});
    std::fs::write(&profile, word3.to_string()).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let word3 = ["--profile-file", profile.to_str().unwrap()];
    let run = neardup(&[&["compare", a, b, "--json"][..], &word3].concat(), b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let jaccard = report["jaccard"].as_f64().unwrap();
    // 16 words, 14 word 3-shingles each; "dog" / "cat" changes 3 of them: 11 shared of 17.
    assert!((jaccard - 11.0 / 17.0).abs() < 1e-9, "{jaccard}");
    assert_eq!(report["containment_a_in_b"].as_f64().unwrap(), 11.0 / 14.0);
    assert_eq!(report["token_edit_distance"], 1);
    // The default policy's decision: within k = 6 bits or not, and then Jaccard ≥ 0.9 or not.
    assert_eq!(report["decision"]["verdict"], "unique");
    let measure = report["decision"]["measure"].as_str().unwrap();
    assert!(
        ["simhash_distance", "jaccard"].contains(&measure),
        "{measure}"
    );
    let differing: Vec<&str> = report["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["feature"].as_str().unwrap())
        .collect();
    assert!(
        differing.contains(&"lazy dog and") && differing.contains(&"lazy cat and"),
        "{differing:?}"
    );

    let table = neardup(&["compare", a, b], b"");
    assert!(
        table.stdout.contains("hamming distance")
            && table.stdout.contains("features that weigh most")
    );
    assert_one_line_error(
        &neardup(&["compare", a, "/missing"], b""),
        1,
        "/missing: cannot open",
    );
}

/// `--show-profile` and `--show-policy` into a pipe whose reader is gone (`| head` done
/// reading) end quietly with success, as every output does: no panic, nothing on stderr.
#[test]
fn a_closed_pipe_ends_the_show_options_quietly() {
    for args in [
        &["fingerprint", "--show-profile"][..],
        &["dedup", "--show-policy", "-"][..],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}
