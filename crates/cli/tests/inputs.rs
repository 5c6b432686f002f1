//! The one input layer, end to end: every command reads the same inputs the same way, exit
//! codes a script can trust, inputs that cannot be read twice, one size limit, `--kept` in
//! the format of the input, progress on a terminal.

mod common;
mod corpus;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_one_line_error, neardup, Run};
use corpus::{corpus, COUNCIL, LIBRARY, WEATHER};
use serde_json::{json, Value};

/// The lines `corpus()` keeps, as read.
fn kept_lines() -> String {
    let corpus = corpus();
    let lines: Vec<&str> = corpus.lines().collect();
    format!("{}\n{}\n{}\n", lines[0], lines[1], lines[3])
}

fn ids(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// `neardup dedup INPUT --kept KEPT`.
fn dedup_kept(input: &Path, kept: &Path) -> Run {
    neardup(
        &[
            "dedup",
            input.to_str().unwrap(),
            "--kept",
            kept.to_str().unwrap(),
        ],
        b"",
    )
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// A WARC response record for `uri` with an HTML page of `text`.
fn warc_record(uri: &str, text: &str) -> String {
    let html = format!("<html><body><main><p>{text}</p></main></body></html>");
    let http = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}");
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{http}\r\n\r\n",
        http.len()
    )
}

/// Starts `command` with no standard input and its outputs piped.
fn spawn(command: &mut Command) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child`, reading its outputs, and fails the test if it runs longer than `limit`
/// (a hang is a failure, not a stuck test run).
fn wait_with_timeout(mut child: Child, limit: Duration) -> Run {
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                pipe.read_to_string(&mut text).unwrap();
            }
            text
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("neardup still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn removed_pairs(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_string(),
                v["duplicate_of"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn expected_removals() -> Vec<(String, String)> {
    vec![
        ("council-copy".into(), "council".into()),
        ("weather-near".into(), "weather".into()),
    ]
}

#[test]
fn fingerprint_reads_every_format_one_document_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(path("corpus.jsonl"), corpus()).unwrap();
    std::fs::write(path("corpus.jsonl.gz"), gzip(corpus().as_bytes())).unwrap();
    std::fs::create_dir_all(dir.path().join("pages/sub")).unwrap();
    std::fs::write(path("pages/a.txt"), LIBRARY).unwrap();
    std::fs::write(path("pages/b.html"), format!("<p>{WEATHER}</p>")).unwrap();
    std::fs::write(path("pages/sub/c.jsonl"), corpus()).unwrap();
    std::fs::write(path("pages/skipped.pdf"), "not read").unwrap();
    std::fs::write(
        path("crawl.warc"),
        warc_record("http://a.example/", COUNCIL) + &warc_record("http://b.example/", LIBRARY),
    )
    .unwrap();
    std::fs::write(path("note.txt"), COUNCIL).unwrap();

    let fingerprint = |input: &str| {
        let run = neardup(&["fingerprint", input], b"");
        assert_eq!(run.code, 0, "{input}: {}", run.stderr);
        run.stdout
    };
    let records = [
        "council",
        "weather",
        "council-copy",
        "library",
        "weather-near",
    ];
    let jsonl = fingerprint(&path("corpus.jsonl"));
    assert_eq!(ids(&jsonl), records, "one document a record, not a file");
    assert_eq!(fingerprint(&path("corpus.jsonl.gz")), jsonl);
    let folder: Vec<String> = ["a.txt", "b.html"]
        .iter()
        .map(|s| s.to_string())
        .chain(records.iter().map(|s| s.to_string()))
        .collect();
    assert_eq!(ids(&fingerprint(&path("pages"))), folder);
    assert_eq!(
        ids(&fingerprint(&path("crawl.warc"))),
        ["http://a.example/", "http://b.example/"]
    );
    let note = fingerprint(&path("note.txt"));
    assert_eq!(
        ids(&note),
        [path("note.txt")],
        "a .txt file is one document"
    );
    let text = neardup(&["fingerprint"], COUNCIL.as_bytes());
    assert_eq!(
        ids(&text.stdout),
        ["-"],
        "plain text on stdin is one document"
    );
    let digest = |out: &str| {
        let line: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        line["digest"].clone()
    };
    assert_eq!(digest(&text.stdout), digest(&note));
    assert_eq!(
        digest(&note),
        digest(&jsonl),
        "the same text, the same digest"
    );
}

#[test]
fn inputs_that_cannot_be_read_stop_every_command_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.jsonl");
    std::fs::write(&good, corpus()).unwrap();
    let pdf = dir.path().join("notes.pdf");
    std::fs::write(&pdf, "%PDF-1.4").unwrap();
    let missing = dir.path().join("missing.jsonl");
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let commands: [&[&str]; 4] = [
        &["fingerprint"],
        &["dedup"],
        &["mirrors"],
        &["index", "add", "--db", db],
    ];
    for command in commands {
        let with = |input: &Path| {
            let args: Vec<&str> = command
                .iter()
                .copied()
                .chain([good.to_str().unwrap(), input.to_str().unwrap()])
                .collect();
            neardup(&args, b"")
        };
        let run = with(&missing);
        assert_one_line_error(&run, 1, "missing.jsonl: cannot open");
        assert!(run.stdout.is_empty(), "nothing is read: {}", run.stdout);
        assert_one_line_error(&with(&pdf), 1, "notes.pdf: unknown format");
    }
}

#[test]
fn a_bad_record_is_reported_once_and_wrong_options_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.jsonl");
    std::fs::write(&input, corpus().replacen("\n", "\nnot json\n", 1)).unwrap();
    let kept = dir.path().join("kept.jsonl");
    // Fingerprinting, verification and --kept read the input three times.
    let run = neardup(
        &[
            "dedup",
            input.to_str().unwrap(),
            "--kept",
            kept.to_str().unwrap(),
            "--removed",
            "-",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(removed_pairs(&run.stdout), expected_removals());
    assert_eq!(
        run.stderr.matches("bad.jsonl:2").count(),
        1,
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), kept_lines());

    let profile = neardup(&["dedup", input.to_str().unwrap(), "--profile", "wbe"], b"");
    assert_eq!(profile.code, 2, "{}", profile.stderr);

    let typo = dir.path().join("typo");
    let add = neardup(
        &["index", "add", "--db", typo.to_str().unwrap(), "-"],
        corpus().as_bytes(),
    );
    assert_eq!(add.code, 0, "{}", add.stderr);
    let notices: Vec<&str> = add
        .stderr
        .lines()
        .filter(|l| l.contains("creating a new database"))
        .collect();
    assert_eq!(notices.len(), 1, "{}", add.stderr);
    assert!(notices[0].contains("typo"), "{}", notices[0]);
    let again = neardup(
        &["index", "add", "--db", typo.to_str().unwrap(), "-"],
        corpus().as_bytes(),
    );
    assert!(!again.stderr.contains("creating"), "{}", again.stderr);
}

#[test]
fn a_closed_standard_output_ends_quietly_with_exit_code_0() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("many.jsonl");
    let many: String = (0..20_000)
        .map(|i| format!("{}\n", json!({"id": i, "text": format!("{LIBRARY} {i}")})))
        .collect();
    std::fs::write(&input, many).unwrap();
    let db = dir.path().join("db");
    let commands: [&[&str]; 2] = [
        &["fingerprint"],
        &["index", "add", "--db", db.to_str().unwrap()],
    ];
    for command in commands {
        let mut child = spawn(
            Command::new(env!("CARGO_BIN_EXE_neardup"))
                .args(command)
                .arg(&input),
        );
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // `| head -1`: the reader goes away.
        assert!(first.starts_with('{'), "{first}");
        let run = wait_with_timeout(child, Duration::from_secs(120));
        assert_eq!(run.code, 0, "{command:?}: {}", run.stderr);
        // Nothing but the new database's notice.
        assert!(
            run.stderr
                .lines()
                .all(|l| l.contains("creating a new database")),
            "{command:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn fifos_and_process_substitution_are_read_once_and_deduplicated() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("feed");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let kept = dir.path().join("kept.jsonl");
    let child = spawn(
        Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["dedup", fifo.to_str().unwrap(), "--removed", "-", "--kept"])
            .arg(&kept),
    );
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            // Opening blocks until neardup opens the FIFO to read it.
            std::fs::write(fifo, corpus()).unwrap();
        })
    };
    let run = wait_with_timeout(child, Duration::from_secs(60));
    writer.join().unwrap();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(removed_pairs(&run.stdout), expected_removals());
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), kept_lines());

    let input = dir.path().join("corpus.jsonl");
    std::fs::write(&input, corpus()).unwrap();
    let child = spawn(
        Command::new("bash")
            .arg("-c")
            .arg(r#""$0" dedup <(cat "$1") --removed - --kept -"#)
            .arg(env!("CARGO_BIN_EXE_neardup"))
            .arg(&input),
    );
    let run = wait_with_timeout(child, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (removed, kept): (Vec<&str>, Vec<&str>) =
        run.stdout.lines().partition(|l| l.contains("duplicate_of"));
    assert_eq!(removed_pairs(&removed.join("\n")), expected_removals());
    assert_eq!(kept.join("\n") + "\n", kept_lines());
}

#[test]
fn an_oversized_record_is_a_bad_record_in_every_command() {
    // A 20 MB line: longer than a block of the JSON Lines reader, never held whole.
    let big = format!("{}\n", json!({"id": "big", "text": "x".repeat(20 << 20)}));
    let input = format!(
        "{}{big}{}",
        &corpus()[..corpus().find('\n').unwrap() + 1],
        corpus()
    );
    let limit = ["--max-document-bytes", "100000"];
    let report = format!(
        "-:2: record of {} bytes is over the limit of 100000 bytes",
        big.len() - 1
    );
    for command in ["fingerprint", "dedup", "mirrors"] {
        let run = neardup(&[&[command, "-"][..], &limit].concat(), input.as_bytes());
        assert_eq!(run.code, 0, "{command}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("skipped {report}")),
            "{command}: {}",
            run.stderr
        );
        let fail = neardup(
            &[&[command, "-", "--on-error", "fail"][..], &limit].concat(),
            input.as_bytes(),
        );
        assert_one_line_error(&fail, 1, &report);
    }
    let run = neardup(
        &[&["fingerprint", "-"][..], &limit].concat(),
        input.as_bytes(),
    );
    assert_eq!(run.stdout.lines().count(), 6);
    // One default, the same in every command.
    for command in ["fingerprint", "dedup", "mirrors"] {
        let help = neardup(&[command, "--help"], b"");
        assert!(help.stdout.contains("[default: 67108864]"), "{command}");
    }
}

#[test]
fn kept_records_stay_in_their_format_and_formats_are_not_mixed() {
    let dir = tempfile::tempdir().unwrap();
    let records = [
        warc_record("http://a.example/x", WEATHER),
        warc_record("http://b.example/y", WEATHER),
        warc_record("http://c.example/z", LIBRARY),
    ];
    let plain = dir.path().join("crawl.warc");
    std::fs::write(&plain, records.concat()).unwrap();
    let compressed = dir.path().join("crawl.warc.gz");
    let members: Vec<u8> = records.iter().flat_map(|r| gzip(r.as_bytes())).collect();
    std::fs::write(&compressed, members).unwrap();
    let kept = dir.path().join("kept");
    let dedup = |input: &Path| {
        let run = dedup_kept(input, &kept);
        assert_eq!(run.code, 0, "{}", run.stderr);
        std::fs::read(&kept).unwrap()
    };
    let expected = records[0].clone() + &records[2];
    assert_eq!(String::from_utf8(dedup(&plain)).unwrap(), expected);
    let out = dedup(&compressed);
    // One gzip member a record, as in the input.
    let mut first = flate2::read::GzDecoder::new(&out[..]);
    let mut text = String::new();
    first.read_to_string(&mut text).unwrap();
    assert_eq!(text, records[0]);
    let mut all = String::new();
    flate2::read::MultiGzDecoder::new(&out[..])
        .read_to_string(&mut all)
        .unwrap();
    assert_eq!(all, expected);

    let jsonl = dir.path().join("corpus.jsonl");
    std::fs::write(&jsonl, corpus()).unwrap();
    let mixed = neardup(
        &[
            "dedup",
            jsonl.to_str().unwrap(),
            plain.to_str().unwrap(),
            "--kept",
            kept.to_str().unwrap(),
        ],
        b"",
    );
    assert_one_line_error(&mixed, 1, "JSON Lines and WARC records");
    // WARC and gzip-compressed WARC are one kind of record: written as the first input was
    // (all three of the second file are copies of kept records).
    let both = neardup(
        &[
            "dedup",
            plain.to_str().unwrap(),
            compressed.to_str().unwrap(),
            "--kept",
            "-",
        ],
        b"",
    );
    assert_eq!(both.code, 0, "{}", both.stderr);
    assert_eq!(both.stdout, expected);
}

/// `--kept` follows its name: compressed as the extension says and readable back, and a name
/// of another kind of record than the inputs' is a usage error before anything is read.
#[test]
fn kept_records_are_compressed_as_the_name_says_and_a_wrong_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("corpus.jsonl");
    std::fs::write(&jsonl, corpus()).unwrap();
    for name in ["kept.jsonl.gz", "kept.jsonl.zst", "kept.ndjson", "kept"] {
        let kept = dir.path().join(name);
        let run = dedup_kept(&jsonl, &kept);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let bytes = std::fs::read(&kept).unwrap();
        let text = match name {
            "kept.jsonl.gz" => {
                let mut text = String::new();
                flate2::read::GzDecoder::new(&bytes[..])
                    .read_to_string(&mut text)
                    .unwrap();
                text
            }
            "kept.jsonl.zst" => String::from_utf8(zstd::decode_all(&bytes[..]).unwrap()).unwrap(),
            _ => String::from_utf8(bytes).unwrap(),
        };
        assert_eq!(text, kept_lines(), "{name}");
        // neardup reads back what it wrote (a name without extension needs its format).
        let path = kept.to_str().unwrap();
        let args: &[&str] = if name == "kept" {
            &["fingerprint", path, "--format", "jsonl"]
        } else {
            &["fingerprint", path]
        };
        let again = neardup(args, b"");
        assert_eq!(
            (again.code, again.stdout.lines().count()),
            (0, 3),
            "{name}: {}",
            again.stderr
        );
    }
    for (name, needle) in [
        (
            "kept.parquet",
            "names Parquet records, but the kept records are JSON Lines",
        ),
        ("kept.warc.gz", "names gzip-compressed WARC records"),
        ("kept.txt", "not txt"),
    ] {
        let kept = dir.path().join(name);
        let run = dedup_kept(&jsonl, &kept);
        assert_one_line_error(&run, 2, needle);
        assert!(!kept.exists(), "{name} written");
    }
}

#[test]
fn progress_is_drawn_on_a_terminal_for_every_phase() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    std::fs::write(&input, corpus().repeat(200)).unwrap();
    // `script` runs the command on a pseudo-terminal and copies what it draws.
    let command = format!(
        "{} dedup {} --kept /dev/null",
        env!("CARGO_BIN_EXE_neardup"),
        input.display()
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success());
    let screen = String::from_utf8_lossy(&output.stdout);
    for phase in [
        "fingerprinting:",
        "verifying: reading shingle sets:",
        "writing kept records:",
    ] {
        assert!(screen.contains(phase), "{phase} not in {screen}");
    }
    assert!(screen.contains("ETA"), "{screen}");
}

/// A reading command given no input while standard input is a terminal does not wait silently
/// for documents typed in: it exits 2 with one line saying what to do. The terminal is a pty
/// made by util-linux `script` (which must be installed: the test fails without it).
#[test]
fn no_input_on_a_terminal_is_a_usage_error_not_a_silent_wait() {
    for command in ["dedup", "fingerprint"] {
        let line = format!("{} {command}", env!("CARGO_BIN_EXE_neardup"));
        let mut child = Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("util-linux `script` runs");
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(30) {
                child.kill().unwrap();
                panic!("neardup {command} waited silently on a terminal");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut said = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut said)
            .unwrap();
        assert_eq!(status.code(), Some(2), "{said}");
        assert_eq!(said.trim().lines().count(), 1, "{said}");
        assert!(said.contains("pipe documents in"), "{said}");
    }
}

/// Every batch command takes `--memory` (one parser: too small a budget is clap's usage error) and
/// `--tmp-dir` (left empty when the run ends).
#[test]
fn every_batch_command_takes_a_memory_budget() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.jsonl");
    std::fs::write(&good, corpus()).unwrap();
    let labelled = dir.path().join("labelled.jsonl");
    std::fs::write(
        &labelled,
        "{\"text_a\": \"a b c\", \"text_b\": \"a b c\", \"label\": 1}\n",
    )
    .unwrap();
    let fingerprints = dir.path().join("fps.txt");
    std::fs::write(&fingerprints, "1\n3\n").unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let db = dir.path().join("db");
    let (good, labelled, fingerprints) = (
        good.to_str().unwrap(),
        labelled.to_str().unwrap(),
        fingerprints.to_str().unwrap(),
    );
    let commands: [&[&str]; 5] = [
        &["dedup", good],
        &["dedup", good, "--index", db.to_str().unwrap()],
        &["pairs", "--k", "1", fingerprints],
        &["mirrors", good],
        &["eval", labelled, "--positive", "1", "--negative", "0"],
    ];
    for command in commands {
        let too_small = [command, &["--memory", "1K"]].concat();
        let refused = neardup(&too_small, b"");
        assert_eq!(refused.code, 2, "{command:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains("below the least a run needs"),
            "{}",
            refused.stderr
        );
        let within = [
            command,
            &["--memory", "16M", "--tmp-dir", tmp.to_str().unwrap()],
        ]
        .concat();
        let run = neardup(&within, b"");
        assert_eq!(run.code, 0, "{command:?}: {}", run.stderr);
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "{command:?} left files"
        );
    }
}
