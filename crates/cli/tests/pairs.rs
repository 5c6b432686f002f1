//! `neardup pairs` run as a user would: the built binary, small inputs, exact output.

mod common;

use common::{assert_one_line_error, neardup, Run};

/// Runs `neardup pairs ARGS` with `input` on standard input.
fn pairs(args: &[&str], input: &str) -> Run {
    neardup(&[&["pairs"][..], args].concat(), input.as_bytes())
}

/// Asserts success and returns standard output.
fn ok(args: &[&str], input: &str) -> String {
    let run = pairs(args, input);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    run.stdout
}

#[test]
fn decimal_input_with_identical_fingerprints() {
    // Lines 0 and 3 are identical (seomoz's find_all drops such pairs); 7 = 0b111 is 2 bits
    // from 1 and 1 bit from 3.
    let out = ok(&["--k", "1"], "1\n2\n3\n1\n7\n");
    assert_eq!(
        out,
        "{\"a\":0,\"b\":2,\"distance\":1}\n\
         {\"a\":0,\"b\":3,\"distance\":0}\n\
         {\"a\":1,\"b\":2,\"distance\":1}\n\
         {\"a\":2,\"b\":3,\"distance\":1}\n\
         {\"a\":2,\"b\":4,\"distance\":1}\n"
    );
}

#[test]
fn hex_input_and_all_designs_agree() {
    let input = "ffffffffffffffff\n0000000000000000\nfffffffffffffff0\nFFFFFFFFFFFFFFFE\n";
    let expected = "{\"a\":0,\"b\":2,\"distance\":4}\n\
                    {\"a\":0,\"b\":3,\"distance\":1}\n\
                    {\"a\":2,\"b\":3,\"distance\":3}\n";
    let with_k4 = ok(&["--k", "4", "--blocks", "5"], input);
    assert_eq!(with_k4, expected);
    for design in ["4x16", "10", "16", "20"] {
        let out = ok(&["--k", "3", "--design", design], input);
        assert_eq!(
            out,
            "{\"a\":0,\"b\":3,\"distance\":1}\n{\"a\":2,\"b\":3,\"distance\":3}\n"
        );
    }
}

#[test]
fn wide_fingerprints() {
    let a = "0123456789abcdef0123456789abcdef";
    let b = "0123456789abcdef0123456789abcdee";
    let c = "f123456789abcdef0123456789abcdef";
    let out = ok(&["--k", "2", "-"], &format!("{a}\n{b}\n{c}\n{a}"));
    assert_eq!(
        out,
        "{\"a\":0,\"b\":1,\"distance\":1}\n\
         {\"a\":0,\"b\":3,\"distance\":0}\n\
         {\"a\":1,\"b\":3,\"distance\":1}\n"
    );
}

#[test]
fn clusters() {
    // 8–9, 1–9 and 1–3 are 1 bit apart; 0xFF00 and 0xFF03 are 2 bits apart.
    let out = ok(&["--k", "1", "--clusters"], "8\n1\n65280\n3\n9\n65283\n");
    assert_eq!(
        out,
        "{\"cluster\":0,\"members\":[0,1,3,4],\"representative\":0}\n"
    );
    let out = ok(&["--k", "2", "--clusters"], "8\n1\n65280\n3\n9\n65283\n");
    assert_eq!(
        out,
        "{\"cluster\":0,\"members\":[0,1,3,4],\"representative\":0}\n\
         {\"cluster\":1,\"members\":[2,5],\"representative\":2}\n"
    );
}

#[test]
fn file_argument_and_empty_input() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pairs-input.txt");
    std::fs::write(&path, "5\n4\n").expect("the temporary file is written");
    let out = ok(&["--k", "1", path.to_str().expect("utf-8 path")], "");
    assert_eq!(out, "{\"a\":0,\"b\":1,\"distance\":1}\n");
    assert_eq!(ok(&["--k", "3"], ""), "");
}

#[test]
fn bad_input_is_one_line_and_exit_1_bad_options_exit_2() {
    let run = pairs(&["--k", "3"], "12\n34\nnot-a-number\n");
    assert_eq!(run.stdout, "");
    assert_one_line_error(
        &run,
        1,
        "line 3: not a decimal u64 fingerprint: \"not-a-number\"",
    );
    assert_one_line_error(&pairs(&["--k", "3"], "99999999999999999999\n"), 1, "line 1");
    let mixed = pairs(
        &["--k", "3"],
        "0123456789abcdef0123456789abcdef\nffffffffffffffff\n",
    );
    assert_one_line_error(&mixed, 1, "line 2");
    assert!(mixed.stderr.contains("mixed"), "{}", mixed.stderr);
    let too_far = pairs(&["--k", "4", "--design", "4x16"], "1\n2\n");
    assert_one_line_error(&too_far, 2, "k = 4");
    assert_one_line_error(&pairs(&["--k", "3"], "1\n\n2\n"), 1, "line 2");
    let bad_design = pairs(&["--k", "3", "--design", "7"], "1\n");
    assert_eq!(bad_design.code, 2, "a bad --design is a usage error");
}

#[test]
fn format_override() {
    // Lines of 16 digits are read as hex unless told otherwise: 0x1000000000000000 and
    // 0x1000000000000010 differ in 1 bit, the decimal numbers 1000000000000000 and
    // 1000000000000010 in 2.
    let input = "1000000000000000\n1000000000000010\n";
    assert_eq!(
        ok(&["--k", "1"], input),
        "{\"a\":0,\"b\":1,\"distance\":1}\n"
    );
    assert_eq!(ok(&["--k", "1", "--format", "dec"], input), "");
    assert_eq!(
        ok(&["--k", "2", "--format", "dec"], input),
        "{\"a\":0,\"b\":1,\"distance\":2}\n"
    );
    assert_one_line_error(
        &pairs(&["--k", "1", "--format", "hex"], "12\n"),
        1,
        "line 1",
    );
}

#[test]
fn reads_fingerprint_json_lines_and_names_documents_by_id() {
    // What `neardup fingerprint` writes (other fields are ignored).
    let input = "{\"id\":\"a\",\"simhash\":\"ffffffffffffffff\",\"digest\":\"x\",\"features\":3}\n\
                 {\"id\":\"b\",\"simhash\":\"0000000000000000\"}\n\
                 {\"id\":\"c\",\"simhash\":\"fffffffffffffff0\"}\n\
                 {\"id\":\"d\",\"simhash\":\"fffffffffffffffe\"}\n";
    assert_eq!(
        ok(&["--k", "3"], input),
        "{\"a\":\"a\",\"b\":\"d\",\"distance\":1}\n{\"a\":\"c\",\"b\":\"d\",\"distance\":3}\n"
    );
    assert_eq!(
        ok(&["--k", "3", "--clusters"], input),
        "{\"cluster\":0,\"members\":[\"a\",\"c\",\"d\"],\"representative\":\"a\"}\n"
    );
    let bad = pairs(&["--k", "3"], "{\"id\":\"a\"}\n");
    assert_one_line_error(&bad, 1, "line 1: not a fingerprint JSON line");
}

#[test]
fn reads_what_fingerprint_writes() {
    let fingerprints = neardup(
        &[
            "fingerprint",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/news.jsonl"),
        ],
        b"",
    );
    assert_eq!(fingerprints.code, 0, "stderr: {}", fingerprints.stderr);
    let out = ok(&["--k", "3"], &fingerprints.stdout);
    assert!(
        out.contains("\"a\":\"council-budget\",\"b\":\"council-budget-copy\",\"distance\":0"),
        "{out}"
    );
}

#[test]
fn an_impossible_k_is_a_usage_error() {
    assert_one_line_error(
        &pairs(&["--k", "70"], "1\n2\n"),
        2,
        "cannot search at k = 70",
    );
}

#[test]
fn log_lines_in_a_pipe_have_no_colour_codes() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["pairs", "--k", "1", "-"])
        .env("NEARDUP_LOG", "info")
        .stdin(std::fs::File::open(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    // Cargo.toml is not fingerprints: an error line, and no escape codes in it or in a log.
    assert!(stderr.contains("neardup: "), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    let logged = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["pairs", "--k", "1", "-"])
        .env("NEARDUP_LOG", "info")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8(logged.stderr).unwrap();
    assert!(stderr.contains("pairs found"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

/// Fingerprints of a test of the budget: random ones, near and exact copies, and a family of
/// 700 identical values (244,650 pairs at distance 0), as hex lines and as JSON lines with
/// long ids (so that the ids do not fit an eighth of 16 MiB either).
fn budget_inputs(dir: &std::path::Path) -> [std::path::PathBuf; 2] {
    let mut fps: Vec<u64> = neardup_index::synth::planted_with(80_000, 7, 8_000, 3, 800);
    fps.extend(std::iter::repeat_n(0x0123_4567_89ab_cdef, 700));
    let hex: String = fps.iter().map(|fp| format!("{fp:016x}\n")).collect();
    let jsonl: String = fps
        .iter()
        .enumerate()
        .map(|(i, fp)| format!("{{\"id\":\"document-{i:08}-of-a-crawl-with-long-ids\",\"simhash\":\"{fp:016x}\"}}\n"))
        .collect();
    let paths = [dir.join("fps.hex"), dir.join("fps.jsonl")];
    std::fs::write(&paths[0], hex).unwrap();
    std::fs::write(&paths[1], jsonl).unwrap();
    paths
}

/// The summary's `spilled_bytes`.
fn spilled(summary: &std::path::Path) -> u64 {
    let text = std::fs::read_to_string(summary).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(value["peak_rss_bytes"].as_u64().unwrap() > 0, "{text}");
    value["spilled_bytes"].as_u64().unwrap()
}

#[test]
fn the_smallest_budget_spills_everything_and_writes_what_memory_does() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let summary = dir.path().join("summary.json");
    for input in budget_inputs(dir.path()) {
        let input = input.to_str().unwrap();
        for extra in [&[][..], &["--clusters"][..]] {
            let run = |memory: &str| {
                let args = [
                    &["--k", "3", "--memory", memory, "--tmp-dir"][..],
                    &[
                        tmp.to_str().unwrap(),
                        "--summary",
                        summary.to_str().unwrap(),
                        input,
                    ],
                    extra,
                ]
                .concat();
                let out = ok(&args, "");
                (out, spilled(&summary))
            };
            let (in_memory, none) = run("2G");
            let (within, some) = run("16M");
            assert_eq!(none, 0, "{input} {extra:?}: 2 GiB holds it all");
            // The fingerprints and buckets (and the pairs' runs, which clusters do not list).
            assert!(
                some > 4 << 20,
                "{input} {extra:?}: 16 MiB spills ({some} bytes)"
            );
            assert!(in_memory == within, "{input} {extra:?}: the same output");
            assert!(in_memory.lines().count() > 244_650 || !extra.is_empty());
            assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "nothing left");
        }
    }
}

#[test]
fn a_tmp_dir_that_cannot_be_written_is_one_line() {
    let run = pairs(&["--k", "3", "--tmp-dir", "/nonexistent/neardup"], "1\n2\n");
    assert_one_line_error(&run, 1, "/nonexistent/neardup");
}

#[test]
fn clusters_beyond_a_union_find_come_from_links_on_disk_and_are_the_same() {
    // 440,000 positions: their union-find (5 bytes each) does not fit an eighth of 16 MiB, and
    // the links of 120,000 near and 20,000 exact copies do not fit memory either.
    let fps: Vec<u64> = neardup_index::synth::planted_with(440_000, 11, 120_000, 3, 20_000);
    let pairs = neardup_index::all_pairs(&fps, 3, neardup_index::Design::Tables4x16).unwrap();
    let links = pairs.iter().map(|p| (p.a, p.b));
    let first = neardup_index::Representative::FirstSeen;
    let reference: String = neardup_index::clusters(fps.len(), links, first, false)
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, cluster)| {
            let members: Vec<String> = cluster.members.iter().map(u32::to_string).collect();
            format!(
                "{{\"cluster\":{i},\"members\":[{}],\"representative\":{}}}\n",
                members.join(","),
                cluster.representative
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (tmp, summary, input) = (
        dir.path().join("tmp"),
        dir.path().join("s"),
        dir.path().join("in"),
    );
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(
        &input,
        fps.iter()
            .map(|fp| format!("{fp:016x}\n"))
            .collect::<String>(),
    )
    .unwrap();
    for (memory, on_disk) in [("2G", false), ("16M", true)] {
        let out = ok(
            &[
                "--k",
                "3",
                "--clusters",
                "--design",
                "4x16",
                "--memory",
                memory,
                "--tmp-dir",
                tmp.to_str().unwrap(),
                "--summary",
                summary.to_str().unwrap(),
                input.to_str().unwrap(),
            ],
            "",
        );
        assert!(out == reference, "{memory}: the clusters of every pair");
        let text = std::fs::read_to_string(&summary).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let rounds = value["component_rounds"].as_u64();
        assert_eq!(rounds.is_some(), on_disk, "{memory}: {text}");
        assert!(rounds.unwrap_or(1) >= 1, "{memory}: rounds on disk: {text}");
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "nothing left");
    }
}
