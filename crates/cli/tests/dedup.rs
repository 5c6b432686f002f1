//! `neardup dedup`, end to end, on corpora the tests write.

mod common;
mod corpus;

use std::path::Path;
use std::process::Command;

use common::{assert_one_line_error, neardup};
use corpus::{corpus, COUNCIL, LIBRARY, WEATHER};
use serde_json::{json, Value};

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn finds_exact_and_near_duplicates_and_writes_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    std::fs::write(&input, corpus()).unwrap();
    let out = |name: &str| dir.path().join(name);
    let run = neardup(
        &[
            "dedup",
            input.to_str().unwrap(),
            "--k",
            "6",
            "--kept",
            out("kept.jsonl").to_str().unwrap(),
            "--removed",
            out("removed.jsonl").to_str().unwrap(),
            "--pairs",
            out("pairs.jsonl").to_str().unwrap(),
            "--clusters",
            out("clusters.jsonl").to_str().unwrap(),
            "--summary",
            out("summary.json").to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("5 documents") && run.stderr.contains("1 exact and 1 near"),
        "{}",
        run.stderr
    );

    let removed = lines(&out("removed.jsonl"));
    let removed: Vec<(&str, &str, &str)> = removed
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap(),
                r["duplicate_of"].as_str().unwrap(),
                r["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        removed,
        [
            ("council-copy", "council", "exact"),
            ("weather-near", "weather", "near")
        ]
    );

    // Kept records are the input lines, unchanged, in input order.
    let kept = std::fs::read_to_string(out("kept.jsonl")).unwrap();
    let input_lines: Vec<&str> = corpus().leak().lines().collect();
    assert_eq!(
        kept,
        format!(
            "{}\n{}\n{}\n",
            input_lines[0], input_lines[1], input_lines[3]
        )
    );

    let pairs = lines(&out("pairs.jsonl"));
    assert_eq!(pairs.len(), 2);
    assert_eq!(
        (pairs[0]["a"].as_str(), pairs[0]["b"].as_str()),
        (Some("council"), Some("council-copy"))
    );
    let clusters = lines(&out("clusters.jsonl"));
    assert_eq!(clusters[1]["members"], json!(["weather", "weather-near"]));
    assert_eq!(clusters[1]["representative"], "weather");

    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["documents"], 5);
    assert_eq!(summary["kept"], 3);
    assert_eq!(summary["clusters"], 2);
    // Measured by the kernel, not estimated: more than the binary's own pages.
    assert!(summary["peak_rss_bytes"].as_u64().unwrap() > 1 << 20);
    assert_eq!(summary["memory_budget_bytes"], 2u64 << 30);
    assert_eq!(summary["spilled_bytes"], 0);
    let phases: Vec<&str> = summary["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(phases.first(), Some(&"reading and fingerprinting"));
    assert_eq!(phases.last(), Some(&"writing outputs"));

    // --keep newest keeps the later copy.
    let newest = neardup(
        &[
            "dedup",
            input.to_str().unwrap(),
            "--keep",
            "newest",
            "--removed",
            "-",
        ],
        b"",
    );
    assert!(
        newest.stdout.contains(
            r#"{"id":"council","verdict":"duplicate","duplicate_of":"council-copy","kind":"exact""#
        ),
        "{}",
        newest.stdout
    );
}

#[test]
fn standard_input_and_kept_records() {
    let run = neardup(&["dedup", "-", "--kept", "-"], corpus().as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout.lines().count(),
        3,
        "the exact and the near copy go: {}",
        run.stdout
    );
}

#[test]
fn outputs_are_identical_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    let many: String = (0..300).map(|i| format!("{}", json!({"id": i, "text": format!("{} {}", [COUNCIL, WEATHER, LIBRARY][i % 3], i % 7)}))).map(|l| l + "\n").collect();
    std::fs::write(&input, many).unwrap();
    let pairs_with = |threads: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args([
                "dedup",
                input.to_str().unwrap(),
                "--method",
                "cascade",
                "--pairs",
                "-",
            ])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(output.status.success());
        output.stdout
    };
    let one = pairs_with("1");
    assert!(!one.is_empty());
    assert_eq!(one, pairs_with("2"));
}

/// Near copies of long texts with long ids, more shingles and ids than the smallest budget
/// holds: the shingle sets and the ids go to --tmp-dir and come back, the decisions and the ids
/// written are those of a run in memory, under the default method and under MinHash (its band
/// keys on disk too), and nothing is left in --tmp-dir (after a run and after a failed one).
#[test]
fn a_small_budget_spills_to_tmp_dir_and_decides_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("long.jsonl");
    // 400 texts of about 13 KB in 200 near-copy pairs, ids of 6 KB: more sets and ids than 16 MB
    // holds beside the rest.
    let lines: String = (0..400)
        .map(|i| {
            let family = i / 2;
            let edited = i % 2 == 1;
            let text: Vec<String> = (0..1500)
                .map(|j| match edited && j == 700 {
                    true => "edited".to_string(),
                    false => format!("f{family}w{j}"),
                })
                .collect();
            format!(
                "{}\n",
                json!({"id": format!("d{i}-{}", "x".repeat(6000)), "text": text.join(" ")})
            )
        })
        .collect();
    std::fs::write(&input, lines).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let run = |memory: &str, method: &str| {
        let summary = dir.path().join(format!("summary-{memory}-{method}.json"));
        let out = |name: &str| dir.path().join(format!("{name}-{memory}-{method}.jsonl"));
        let run = neardup(
            &[
                "dedup",
                input.to_str().unwrap(),
                "--method",
                method,
                "--memory",
                memory,
                "--tmp-dir",
                spill.path().to_str().unwrap(),
                "--removed",
                out("removed").to_str().unwrap(),
                "--pairs",
                out("pairs").to_str().unwrap(),
                "--components",
                out("components").to_str().unwrap(),
                "--summary",
                summary.to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let summary: Value = serde_json::from_slice(&std::fs::read(summary).unwrap()).unwrap();
        let written = ["removed", "pairs", "components"]
            .map(|name| std::fs::read_to_string(out(name)).unwrap());
        (written, summary)
    };
    for method in ["cascade", "minhash"] {
        let (in_memory, summary) = run("2G", method);
        assert_eq!(summary["spilled_bytes"], 0);
        if method == "cascade" {
            assert_eq!(summary["near_duplicates"], 200);
            // Every accepted pair listed: the 200 pairs, each its own component.
            assert_eq!(in_memory[1].lines().count(), 200);
            assert_eq!(in_memory[2].lines().count(), 200);
        } else {
            // Unverified MinHash estimates accept more than the 200 verified pairs here.
            assert!(summary["near_duplicates"].as_u64().unwrap() >= 200);
        }
        let (spilled, summary) = run("16M", method);
        assert!(
            summary["spilled_bytes"].as_u64().unwrap() > 1 << 20,
            "{summary}"
        );
        assert_eq!(spilled, in_memory, "{method}");
        assert!(spilled[0].contains(&format!("d399-{}", "x".repeat(6000))));
    }
    assert_eq!(std::fs::read_dir(spill.path()).unwrap().count(), 0);

    let missing = dir.path().join("no-such-dir");
    let failed = neardup(
        &[
            "dedup",
            input.to_str().unwrap(),
            "--tmp-dir",
            missing.to_str().unwrap(),
        ],
        b"",
    );
    assert_one_line_error(&failed, 1, "no-such-dir");
    let tiny = neardup(&["dedup", input.to_str().unwrap(), "--memory", "1K"], b"");
    assert_eq!(tiny.code, 2, "{}", tiny.stderr);
    assert!(tiny.stderr.contains("--memory"), "{}", tiny.stderr);
}

#[test]
fn folders_html_and_warc() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join("sub")).unwrap();
    let page = |body: &str, nav: &str| {
        format!("<html><head><title>T</title></head><body><nav>{nav}</nav><main><p>{body}</p></main><footer>(c) site</footer></body></html>")
    };
    std::fs::write(
        site.join("a.html"),
        page(COUNCIL, "Home News Sport Weather"),
    )
    .unwrap();
    std::fs::write(
        site.join("sub/b.html"),
        page(COUNCIL, "Start Politics Culture Markets Travel Jobs"),
    )
    .unwrap();
    std::fs::write(site.join("c.txt"), LIBRARY).unwrap();
    let run = neardup(&["dedup", site.to_str().unwrap(), "--removed", "-"], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let removed: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(
        (removed["id"].as_str(), removed["kind"].as_str()),
        (Some("sub/b.html"), Some("exact")),
        "navigation is not content"
    );

    let warc = dir.path().join("crawl.warc");
    let record = |uri: &str, html: &str| {
        let http =
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}");
        format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{http}\r\n\r\n",
            http.len()
        )
    };
    std::fs::write(
        &warc,
        record("http://a.example/x", &page(WEATHER, "A"))
            + &record("http://b.example/y", &page(WEATHER, "B")),
    )
    .unwrap();
    let run = neardup(&["dedup", warc.to_str().unwrap(), "--removed", "-"], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            r#""id":"http://b.example/y","verdict":"duplicate","duplicate_of":"http://a.example/x""#
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn bad_records_are_reported_with_their_place_and_skipped_or_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.jsonl");
    let text = format!(
        "{}\nnot json\n{}\n{}\n",
        json!({"id": "ok", "text": COUNCIL}),
        json!({"id": "no-text", "body": "x"}),
        json!({"id": "big", "text": "x".repeat(5000)})
    );
    std::fs::write(&input, text).unwrap();
    let path = input.to_str().unwrap();
    let run = neardup(
        &[
            "dedup",
            path,
            "--max-document-bytes",
            "4096",
            "--summary",
            "-",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    for place in [":2:", ":3:", ":4:"] {
        assert!(
            run.stderr.contains(&format!("bad.jsonl{place}")),
            "{place} in {}",
            run.stderr
        );
    }
    let summary: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (
            summary["documents"].as_u64(),
            summary["skipped_records"].as_u64()
        ),
        (Some(1), Some(3))
    );

    let fail = neardup(&["dedup", path, "--on-error", "fail"], b"");
    assert_one_line_error(&fail, 1, "bad.jsonl:2");

    // A truncated or corrupt compressed file is an error, not a skipped record: what it held
    // after the damage is unknown, so a run that went on would silently lose it.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, corpus().as_bytes()).unwrap();
    let compressed = encoder.finish().unwrap();
    let damaged = [
        ("cut.jsonl.gz", compressed[..compressed.len() - 20].to_vec()),
        ("not-gzip.jsonl.gz", b"plain text, not gzip".to_vec()),
        (
            "cut.jsonl.zst",
            zstd::encode_all(corpus().as_bytes(), 3).unwrap()[..40].to_vec(),
        ),
    ];
    for (name, bytes) in damaged {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        for on_error in ["skip", "fail"] {
            let run = neardup(
                &["dedup", path.to_str().unwrap(), "--on-error", on_error],
                b"",
            );
            assert_one_line_error(&run, 1, name);
            assert!(run.stderr.contains("cannot be read"), "{}", run.stderr);
        }
    }

    // A binary file in a folder.
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("ok.txt"), LIBRARY).unwrap();
    std::fs::write(folder.join("image.txt"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    let run = neardup(&["dedup", folder.to_str().unwrap()], b"");
    assert_eq!(run.code, 0);
    assert!(run.stderr.contains("image.txt"), "{}", run.stderr);

    // Wrong parameters are usage errors (exit 2), clap's or the policy's, in one line.
    assert_eq!(neardup(&["dedup", path, "--method", "magic"], b"").code, 2);
    assert_one_line_error(
        &neardup(&["dedup", path, "--threshold", "1.5"], b""),
        2,
        "threshold",
    );
    assert_one_line_error(
        &neardup(&["dedup", path, "--min-length-ratio", "2"], b""),
        2,
        "min_length_ratio",
    );
    assert_one_line_error(
        &neardup(&["dedup", path, "--k", "65"], b""),
        2,
        "k must be at most the fingerprint width",
    );
}

#[test]
fn mirrors_are_found_by_shared_paths_with_the_same_content() {
    let texts = [
        COUNCIL,
        WEATHER,
        LIBRARY,
        "a fourth page of text",
        "a fifth page of text",
        "a sixth page",
    ];
    let mut corpus = String::new();
    for (i, text) in texts.iter().enumerate() {
        for host in [
            "https://www.origin.example/docs",
            "http://mirror.example.net/pub/docs",
        ] {
            corpus += &format!(
                "{}\n",
                json!({"id": format!("{host}/{i}"), "url": format!("{host}/page{i}.html"), "text": text})
            );
        }
        corpus += &format!(
            "{}\n",
            json!({"id": format!("other{i}"), "url": format!("https://other.example/page{i}.html"), "text": format!("other {i}")})
        );
    }
    let run = neardup(&["mirrors", "-"], corpus.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let first: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    let hosts = [first["a"].as_str().unwrap(), first["b"].as_str().unwrap()];
    assert!(
        hosts.iter().any(|h| h.contains("origin.example"))
            && hosts.iter().any(|h| h.contains("mirror.example.net")),
        "{}",
        run.stdout
    );
    assert_eq!(first["same_content"], 6);
    assert!(!run.stdout.contains("other.example"));
}

/// Asserts that the index at `index` decides by the policy it was made with: another profile or
/// policy, reading `input`, is refused with a message naming both, the same one, named, is
/// accepted, and an option of the batch run alone is a usage error.
fn refuses_another_policy(index: &str, input: &std::path::Path) {
    let input = input.to_str().unwrap();
    // The index remembers its profile: another one is refused with a clear error.
    let wrong = neardup(&["dedup", input, "--index", index, "--profile", "zh"], b"");
    assert_one_line_error(&wrong, 1, "cannot open index");
    // The index decides by the policy it was made with: another policy is refused with a
    // message naming both, not silently ignored; the same one, named, is accepted.
    for option in [
        &["--method", "simhash"][..],
        &["--k", "3"],
        &["--verify", "containment"],
        &["--min-length-ratio", "0.2"],
    ] {
        let mut args = vec!["dedup", input, "--index", index];
        args.extend_from_slice(option);
        let refused = neardup(&args, b"");
        assert_one_line_error(&refused, 1, "it cannot be opened with");
        assert!(refused.stderr.contains("<= 6"), "{}", refused.stderr);
    }
    let same = ["dedup", input, "--index", index, "--k", "6"];
    assert_eq!(neardup(&same, b"").code, 0);
    let keep = ["dedup", input, "--index", index, "--keep", "longest"];
    let refused = neardup(&keep, b"");
    assert_eq!(refused.code, 2, "{}", refused.stderr);
}

#[test]
fn incremental_dedup_against_a_saved_index() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let today = dir.path().join("today.jsonl");
    let tomorrow = dir.path().join("tomorrow.jsonl");
    std::fs::write(&today, corpus()).unwrap();
    let next_day = [
        json!({"id": "council-again", "text": COUNCIL}),
        json!({"id": "fresh", "text": "A completely new story about the harbour festival, fireworks and boats."}),
    ];
    std::fs::write(
        &tomorrow,
        next_day
            .iter()
            .map(|v| format!("{v}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let index = index.to_str().unwrap();
    let first = neardup(
        &[
            "dedup",
            today.to_str().unwrap(),
            "--index",
            index,
            "--removed",
            "-",
        ],
        b"",
    );
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first
            .stdout
            .contains(r#""id":"council-copy","verdict":"duplicate","duplicate_of":"council""#),
        "{}",
        first.stdout
    );
    let second = neardup(
        &[
            "dedup",
            tomorrow.to_str().unwrap(),
            "--index",
            index,
            "--removed",
            "-",
            "--kept",
            dir.path().join("kept.jsonl").to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(second.code, 0, "{}", second.stderr);
    let removed: Vec<Value> = second
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(removed.len(), 1);
    assert_eq!(
        (
            removed[0]["id"].as_str(),
            removed[0]["duplicate_of"].as_str()
        ),
        (Some("council-again"), Some("council"))
    );
    let kept = std::fs::read_to_string(dir.path().join("kept.jsonl")).unwrap();
    assert!(kept.contains("\"fresh\"") && !kept.contains("council-again"));
    refuses_another_policy(index, &tomorrow);
    // `neardup index` reads the same store.
    let check = neardup(
        &["index", "check", "--db", index, tomorrow.to_str().unwrap()],
        b"",
    );
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(
        check
            .stdout
            .lines()
            .all(|l| !l.contains(r#""verdict":"unique""#)),
        "{}",
        check.stdout
    );
    let stats = neardup(&["index", "stats", "--db", index], b"");
    assert!(stats.stdout.contains("\"documents\":"), "{}", stats.stdout);
}

/// A short Chinese news lead, a re-posted copy of it (prefixed, last clause cut), a headline, the
/// long article it heads, and an unrelated text: all written for this test.
const ZH_REPORT: &str = "本市气象台今天上午发布暴雨蓝色预警，预计今天夜间到明天白天全市大部分地区将出现大到暴雨，局地伴有雷电和短时大风，请市民注意出行安全。";
const ZH_REPOST: &str = "转发：本市气象台今天上午发布暴雨蓝色预警，预计今天夜间到明天白天全市大部分地区将出现大到暴雨，局地伴有雷电和短时大风。";
const ZH_HEADLINE: &str = "市图书馆周末延长开放时间";
const ZH_ARTICLE_BODY: &str = "记者从市图书馆获悉，为方便市民阅读，从下个月起，图书馆将在每周六和周日延长开放时间，\
    闭馆时间由下午五点推迟到晚上九点。图书馆负责人介绍，去年的读者调查显示，超过三分之二的读者希望周末能多开放几个小时，\
    尤其是带孩子的家长和上班族。延长开放期间，自助借还机、电子阅览室和少儿阅览区都将正常开放，馆内咖啡区也会同步延长营业。\
    图书馆还提醒读者，进馆前可以通过官方网站或者手机程序预约座位，高峰时段座位比较紧张。";
const ZH_OTHER: &str =
    "昨晚的足球联赛中，主队在补时阶段打进一球，以二比一逆转取胜，球迷们在看台上欢呼了很久。";

#[test]
fn short_chinese_copies_are_found_by_overlap_and_a_headline_is_not_its_article() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("zh.jsonl");
    let article = format!("{ZH_HEADLINE}。{ZH_ARTICLE_BODY}");
    let corpus: String = [
        json!({"id": "report", "text": ZH_REPORT}),
        json!({"id": "article", "text": article}),
        json!({"id": "other", "text": ZH_OTHER}),
        json!({"id": "repost", "text": ZH_REPOST}),
        json!({"id": "headline", "text": ZH_HEADLINE}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect();
    std::fs::write(&input, corpus).unwrap();
    let removed = |extra: &[&str]| {
        let mut args = vec!["dedup", input.to_str().unwrap(), "--removed", "-"];
        args.extend(extra);
        let run = neardup(&args, b"");
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["id"].as_str().unwrap().to_string(),
                    v["duplicate_of"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    let overlap = [
        "--profile",
        "zh-short",
        "--method",
        "overlap",
        "--threshold",
        "0.9",
    ];
    // Guarded: the re-post goes, the headline stays (it is 1/17 of its article's length).
    let guarded = [&overlap[..], &["--min-length-ratio", "0.2"]].concat();
    assert_eq!(removed(&guarded), [pair("repost", "report")]);
    // Unguarded, containment alone takes the headline for a copy of its article.
    assert_eq!(
        removed(&overlap),
        [pair("repost", "report"), pair("headline", "article")]
    );
    // The default cascade (SimHash candidates, Jaccard ≥ 0.9) finds neither: the re-post's
    // Jaccard is 0.78.
    assert!(removed(&["--profile", "zh-short"]).is_empty());
    // Usage errors: a guard without verification, out of range.
    let input = input.to_str().unwrap();
    let unverified = [
        "dedup",
        input,
        "--method",
        "simhash",
        "--min-length-ratio",
        "0.2",
    ];
    assert_one_line_error(&neardup(&unverified, b""), 2, "needs verification");
    let out_of_range = ["dedup", input, "--min-length-ratio", "2"];
    assert_one_line_error(&neardup(&out_of_range, b""), 2, "between 0 and 1");
}

/// The summary accounts for every record read: documents, skipped records by reason and
/// records that are not documents by type, adding up to what the inputs hold.
#[test]
fn the_summary_accounts_for_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    std::fs::write(pages.join("a.txt"), "The council met on Monday.").unwrap();
    std::fs::write(pages.join("logo.png"), [0x89, b'P', b'N', b'G']).unwrap();
    let jsonl = dir.path().join("feed.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\": \"x\", \"text\": \"Rain is expected on Tuesday.\"}\n{not json\n{\"id\": \"y\", \"text\": \"Rain is expected on Tuesday.\"}\n",
    )
    .unwrap();
    let summary = dir.path().join("summary.json");
    let run = neardup(
        &[
            "dedup",
            pages.to_str().unwrap(),
            jsonl.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let records = &s["records"];
    assert_eq!(records["documents"], 3, "{s}");
    assert_eq!(records["skipped"]["malformed JSON"], 1, "{s}");
    assert_eq!(records["not_documents"]["file .png"], 1, "{s}");
    assert_eq!(s["records_total"], 5, "{s}");
    assert!(run.stderr.contains("5 records"), "{}", run.stderr);
}

/// A Chinese news paragraph and the same with six words changed (README, "Profiles").
const ZH_ECONOMY: &str = "北京时间周二晚间，国家统计局公布了最新一季度的经济数据。数据显示，国内生产总值同比增长百分之五点三，高于市场此前的普遍预期。分析人士认为，消费回暖和出口改善是推动经济增长的主要因素。与此同时，制造业投资保持稳定，基础设施建设继续发挥托底作用。不过，房地产市场仍然面临一定压力，新开工面积和销售额均出现不同程度的下降。专家建议，下一阶段应继续实施积极的财政政策和稳健的货币政策，进一步扩大内需，稳定市场预期，推动经济持续健康发展。";
const ZH_ECONOMY_EDITED: &str = "北京时间周二晚上，国家统计局发布了最新一季度的经济数据。数据显示，国内生产总值同比增长百分之五点三，高于市场此前的普遍预期。分析人士指出，消费回暖和出口改善是推动经济增长的主要原因。与此同时，制造业投资保持稳定，基础设施建设继续发挥托底作用。不过，房地产市场依然面临一定压力，新开工面积和销售额均出现不同程度的下降。专家建议，下一阶段应继续实施积极的财政政策和稳健的货币政策，进一步扩大国内需求，稳定市场预期，推动经济持续健康发展。";

/// What the profile table says of languages holds: `web` judges an edited Chinese paragraph
/// more strictly than the Chinese profiles do (0.72 against 0.82 and 0.86).
#[test]
fn the_chinese_profiles_judge_edited_chinese_more_leniently_than_web() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    let b = dir.path().join("b.txt");
    std::fs::write(&a, ZH_ECONOMY).unwrap();
    std::fs::write(&b, ZH_ECONOMY_EDITED).unwrap();
    let jaccard = |profile: &str| {
        let run = neardup(
            &[
                "compare",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "--json",
                "--profile",
                profile,
            ],
            b"",
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let answer: Value = serde_json::from_str(&run.stdout).unwrap();
        answer["jaccard"].as_f64().unwrap()
    };
    let (web, zh, zh_short) = (jaccard("web"), jaccard("zh"), jaccard("zh-short"));
    assert!((0.70..0.75).contains(&web), "web {web}");
    assert!((0.80..0.85).contains(&zh), "zh {zh}");
    assert!((0.85..0.88).contains(&zh_short), "zh-short {zh_short}");
}

/// `dedup --index` of a redb database with `--index-in store` (the block keys in its file,
/// built at the first such run over a database written without them) decides as with the
/// index loaded: the same removals, pairs and clusters, run after run.
#[test]
fn dedup_against_the_index_a_redb_file_holds_decides_as_the_loaded_one() {
    let dir = tempfile::tempdir().unwrap();
    let today = dir.path().join("today.jsonl");
    std::fs::write(&today, corpus()).unwrap();
    let mut tomorrow = String::new();
    for (i, text) in [COUNCIL, WEATHER, LIBRARY, COUNCIL].iter().enumerate() {
        tomorrow += &format!("{}\n", json!({"id": format!("again{i}"), "text": text}));
    }
    tomorrow += &format!(
        "{}\n",
        json!({"id": "fresh", "text": "A new story about the harbour festival and its boats."})
    );
    let tomorrow_path = dir.path().join("tomorrow.jsonl");
    std::fs::write(&tomorrow_path, tomorrow).unwrap();
    let run = |index: &str, input: &Path, index_in: &str| -> Vec<String> {
        let out = |name: &str| dir.path().join(format!("{index_in}-{name}"));
        let (removed, pairs, clusters) = (out("removed"), out("pairs"), out("clusters"));
        let args = [
            "dedup",
            input.to_str().unwrap(),
            "--index",
            index,
            "--index-in",
            index_in,
            "--removed",
            removed.to_str().unwrap(),
            "--pairs",
            pairs.to_str().unwrap(),
            "--clusters",
            clusters.to_str().unwrap(),
            "--memory",
            "16M",
        ];
        let run = neardup(&args, b"");
        assert_eq!(run.code, 0, "{}", run.stderr);
        ["removed", "pairs", "clusters"]
            .iter()
            .map(|name| std::fs::read_to_string(out(name)).unwrap())
            .collect()
    };
    let (local, held) = (dir.path().join("local"), dir.path().join("held"));
    let (local, held) = (local.to_str().unwrap(), held.to_str().unwrap());
    // The held database is written without block keys first: the store run builds them.
    assert_eq!(run(local, &today, "local"), run(held, &today, "local"));
    let expected = run(local, &tomorrow_path, "local");
    let got = run(held, &tomorrow_path, "store");
    assert_eq!(got, expected);
    assert_eq!(got[0].lines().count(), 4, "{}", got[0]);
    let clusters: Vec<Value> = got[2]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(clusters[0]["representative"], "council", "{}", got[2]);
    assert_eq!(
        clusters[0]["members"],
        json!(["council", "again0", "again3"])
    );
}
