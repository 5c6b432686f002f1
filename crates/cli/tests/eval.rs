//! End-to-end tests of `neardup eval` on a small pairs file made up here.

mod common;

use common::{assert_one_line_error, neardup};

/// A sentence long enough to make many character shingles.
const BASE: &str = "the committee met on tuesday to discuss the new budget for the city library \
                    and agreed to extend the opening hours during the winter months";

/// Writes `lines` to a temporary JSONL file.
fn pairs_file(lines: &[String]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pairs.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let path = path.to_str().unwrap().to_string();
    (dir, path)
}

fn pair(a: &str, b: &str, label: serde_json::Value) -> String {
    serde_json::json!({"text_a": a, "text_b": b, "label": label}).to_string()
}

/// Runs `neardup eval PATH --positive 3 --negative 0.5` with `extra` arguments.
fn eval(path: &str, extra: &[&str]) -> common::Run {
    let base = ["eval", path, "--positive", "3", "--negative", "0.5"];
    neardup(&[&base[..], extra].concat(), b"")
}

/// Three identical positives, one positive that shares nothing, two negatives that share
/// nothing, one identical negative, plus ignored labels: under every method, TP 3, FN 1, FP 1,
/// TN 2.
fn fixture() -> Vec<String> {
    let other = "completely unrelated words about football scores and the weather in spain";
    let third = "an entirely different story about cooking pasta with garlic and olive oil";
    vec![
        pair(BASE, BASE, 3.into()),
        pair(other, other, 3.into()),
        pair(third, third, "3".into()),
        pair(BASE, other, 3.into()),
        pair(BASE, third, 0.5.into()),
        pair(other, third, 0.5.into()),
        pair(third, third, 0.5.into()),
        pair(BASE, BASE, serde_json::Value::Null),
        pair(BASE, BASE, 1.into()),
        pair(BASE, BASE, "unknown".into()),
    ]
}

#[test]
fn metrics_are_exact_under_every_method() {
    let (_dir, path) = pairs_file(&fixture());
    for method in [
        &["simhash"][..],
        &["minhash"],
        &["overlap", "--verify", "jaccard"],
        &["overlap"],
        &["cascade"],
    ] {
        let run = eval(&path, &[&["--method"][..], method, &["--json"]].concat());
        assert_eq!(run.code, 0, "{method:?}: {}", run.stderr);
        let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let count = |f: &str| report[f].as_u64().unwrap();
        assert_eq!(
            (count("tp"), count("fp"), count("fn_"), count("tn")),
            (3, 1, 1, 2),
            "{method:?}"
        );
        assert_eq!(report["precision"].as_f64().unwrap(), 0.75);
        assert_eq!(report["recall"].as_f64().unwrap(), 0.75);
        assert_eq!(report["f1"].as_f64().unwrap(), 0.75);
        let counts = &report["counts"];
        assert_eq!(counts["lines"], 10);
        assert_eq!(
            (counts["positives"].as_u64(), counts["negatives"].as_u64()),
            (Some(4), Some(3))
        );
        assert_eq!(counts["null_labels"], 1);
        assert_eq!(counts["other_labels"], 2);
        // Label 1 is ignored for the metrics but still counted as flagged.
        let by_label = report["by_label"].as_array().unwrap();
        let label_1 = by_label.iter().find(|l| l["label"] == 1.0).unwrap();
        assert_eq!(
            (label_1["pairs"].as_u64(), label_1["flagged"].as_u64()),
            (Some(1), Some(1))
        );
    }
}

#[test]
fn lenient_labels_and_other_field_names() {
    let lines: Vec<String> = fixture()
        .iter()
        .map(|l| {
            l.replace("\"text_a\"", "\"sentence1\"")
                .replace("\"text_b\"", "\"sentence2\"")
        })
        .collect();
    let (_dir, path) = pairs_file(&lines);
    let run = neardup(
        &[
            "eval",
            &path,
            "--positive",
            "3,1",
            "--negative",
            "0.5",
            "--text-a-field",
            "sentence1",
            "--text-b-field",
            "sentence2",
            "--method",
            "overlap",
            "--verify",
            "jaccard",
            "--json",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (report["tp"].as_u64(), report["fn_"].as_u64()),
        (Some(4), Some(1))
    );
    // F1 = 2·4 / (2·4 + 1 + 1).
    assert_eq!(report["f1"].as_f64().unwrap(), 0.8);
}

#[test]
fn sweeps_have_one_row_per_parameter() {
    let (_dir, path) = pairs_file(&fixture());
    let run = eval(&path, &["--sweep", "--method", "simhash"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("k "))
        .collect();
    // Header and k = 0..=16 for 64 bits.
    assert_eq!(rows.len(), 18, "{}", run.stdout);
    assert!(rows[1].trim_start().starts_with("0 "));
    assert!(rows[17].trim_start().starts_with("16 "));
    let run = eval(
        &path,
        &["--sweep", "--method", "overlap", "--verify", "jaccard"],
    );
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("threshold"))
        .collect();
    // Thresholds 0.05..=1.00: the overlap search needs one above 0.
    assert_eq!(rows.len(), 21, "{}", run.stdout);
    assert!(rows[1].trim_start().starts_with("0.05 "));
    assert!(rows[20].trim_start().starts_with("1.00 "));
    // A higher threshold never finds more: recall falls or stays.
    let recall = |row: &str| {
        row.split_whitespace()
            .nth(2)
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    assert!(rows[1..].windows(2).all(|w| recall(w[0]) >= recall(w[1])));
}

#[test]
fn plot_is_written() {
    let (dir, path) = pairs_file(&fixture());
    for method in ["simhash", "cascade"] {
        let plot = dir.path().join(format!("{method}.svg"));
        let plot = plot.to_str().unwrap();
        let run = eval(&path, &["--method", method, "--plot", plot]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let svg = std::fs::read_to_string(plot).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<rect"), "{svg}");
    }
    let run = eval(&path, &["--plot", "x.png"]);
    assert_one_line_error(&run, 1, "only SVG");
}

#[test]
fn errors_are_one_line() {
    let mut lines = fixture();
    lines.insert(2, "{not json".to_string());
    let (_dir, path) = pairs_file(&lines);
    let run = eval(&path, &[]);
    assert_one_line_error(&run, 1, "pairs.jsonl:3: not a JSON object");

    let mut lines = fixture();
    lines.push(serde_json::json!({"text_a": "x", "label": 3}).to_string());
    let (_dir, path) = pairs_file(&lines);
    let run = eval(&path, &[]);
    assert_one_line_error(&run, 1, "pairs.jsonl:11: no field \"text_b\"");

    let lines = vec![serde_json::json!({"text_a": "x", "text_b": "y"}).to_string()];
    let (_dir, path) = pairs_file(&lines);
    let run = eval(&path, &[]);
    assert_one_line_error(&run, 1, "pairs.jsonl:1: no field \"label\"");

    let run = eval("/nonexistent/pairs.jsonl", &[]);
    assert_one_line_error(&run, 1, "cannot open /nonexistent/pairs.jsonl");
}

#[test]
fn length_ratio_guard_is_described_applied_and_swept() {
    // A short text inside a long one (containment 1, length ratio well under 0.2) labelled
    // negative, and a copy labelled positive.
    let long = format!("{BASE} {BASE_TAIL}");
    let lines = vec![
        pair(BASE, BASE, 3.into()),
        pair("the committee met on tuesday", &long, 0.5.into()),
    ];
    let (_dir, path) = pairs_file(&lines);
    let containment = ["--method", "overlap", "--threshold", "0.9", "--json"];
    let run_with = |extra: &[&str]| {
        let run = eval(&path, &[&containment[..], extra].concat());
        assert_eq!(run.code, 0, "{}", run.stderr);
        serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap()
    };
    let off = run_with(&[]);
    assert_eq!(
        off["decision"],
        "profile web: shingle overlap, then containment >= 0.90"
    );
    assert_eq!((off["tp"].as_u64(), off["fp"].as_u64()), (Some(1), Some(1)));
    let on = run_with(&["--min-length-ratio", "0.2"]);
    assert_eq!(
        on["decision"],
        "profile web: shingle overlap, then containment >= 0.90, length ratio >= 0.20"
    );
    assert_eq!(on["rule"]["min_length_ratio"], 0.2);
    assert_eq!((on["tp"].as_u64(), on["fp"].as_u64()), (Some(1), Some(0)));
    // The sweep keeps the guard: no threshold flags the short-in-long negative.
    let swept = run_with(&["--min-length-ratio", "0.2", "--sweep"]);
    let rows = swept["sweep"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        20,
        "thresholds 0.05 to 1.00: overlap needs one above 0"
    );
    assert!(rows
        .iter()
        .all(|r| r["fp"] == 0 && r["rule"]["min_length_ratio"] == 0.2));
    // Usage errors: no feature sets to compare, out of range.
    let simhash = eval(&path, &["--method", "simhash", "--min-length-ratio", "0.2"]);
    assert_one_line_error(&simhash, 2, "min_length_ratio");
    assert_one_line_error(
        &eval(&path, &["--min-length-ratio", "1.5"]),
        2,
        "between 0 and 1",
    );
}

/// More words for a long text that contains a short one.
const BASE_TAIL: &str =
    "while the council debated the cost of repairs to the roof, the car park, the \
    heating system and the children's reading room, and then voted to publish the full accounts of \
    the library for the last five years together with a plan for the next ten years of services";

/// Pairs are read and scored a batch at a time (a 32nd of --memory of text): at the least
/// budget, a file of several batches gives the same report, sweep and plot byte for byte as
/// one batch at the default budget, and so does the fixture.
#[test]
fn the_least_budget_reports_the_same() {
    let words = [
        "river", "stone", "market", "winter", "garden", "signal", "harbour", "violin",
    ];
    let text = |i: usize| -> String {
        (0..30)
            .map(|j| words[(i * 7 + j * (i % 5 + 1)) % words.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    // 6,000 pairs of about 200 bytes a text: 2.4 MB, five batches at 16M.
    let lines: Vec<String> = (0..6000)
        .map(|i| {
            let label = [3.0, 0.5, 1.0][i % 3];
            let b = if i % 4 == 0 { text(i + 1) } else { text(i) };
            pair(&text(i), &b, label.into())
        })
        .chain(fixture())
        .collect();
    let (dir, big) = pairs_file(&lines);
    let (_fixture_dir, small) = pairs_file(&fixture());
    for path in [&big, &small] {
        let report = |memory: &str| {
            let plot = dir.path().join(format!("plot-{memory}.svg"));
            let extra = ["--sweep", "--json", "--memory", memory, "--plot"];
            let run = eval(path, &[&extra[..], &[plot.to_str().unwrap()]].concat());
            assert_eq!(run.code, 0, "{}", run.stderr);
            (run.stdout, std::fs::read(plot).unwrap())
        };
        let (least, least_plot) = report("16M");
        let (default, default_plot) = report("2G");
        assert_eq!(least, default);
        assert_eq!(least_plot, default_plot);
        let report: serde_json::Value = serde_json::from_str(&least).unwrap();
        let lines = if path == &big { 6010 } else { 10 };
        assert_eq!(report["counts"]["lines"], lines, "{report}");
    }
}
