//! End-to-end tests of `neardup mirrors` within a memory budget: a crawl larger than the least
//! budget holds is spilled to --tmp-dir and found the same, and nothing is left there.

mod common;

use std::io::Write;

use common::neardup;

/// A crawl of 51,000 pages (more splits than `--memory 16M` holds): 200 sites of 170 pages two
/// directories deep, half of them mirrored under `m{site}.net/mirror`, and one page in ten of
/// every mirror edited.
fn crawl() -> String {
    let mut lines = String::new();
    for site in 0..200 {
        for page in 0..170 {
            let text = format!("site {site} page {page} words about things");
            let url = format!("http://h{site}.org/a/b/p{page}.html");
            lines.push_str(&serde_json::json!({"url": url, "text": text}).to_string());
            lines.push('\n');
            if site % 2 == 0 {
                let text = if page % 10 == 3 { "edited" } else { &text };
                let url = format!("https://m{site}.net/mirror/a/b/p{page}.html");
                lines.push_str(&serde_json::json!({"url": url, "text": text}).to_string());
                lines.push('\n');
            }
        }
    }
    lines
}

/// The bytes spilled that the last line of standard error reports.
fn spilled(stderr: &str) -> u64 {
    let last = stderr.lines().last().unwrap_or_default();
    let words: Vec<&str> = last.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "bytes").expect(last);
    words[at - 1].parse().unwrap()
}

#[test]
fn the_least_budget_spills_and_finds_the_same_mirrors() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("crawl.jsonl");
    std::fs::write(&input, crawl()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let run = |memory: &str| {
        let run = neardup(
            &[
                "mirrors",
                input.to_str().unwrap(),
                "--memory",
                memory,
                "--tmp-dir",
                tmp.path().to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        run
    };
    let in_memory = run("2G");
    assert_eq!(spilled(&in_memory.stderr), 0, "{}", in_memory.stderr);
    assert_eq!(in_memory.stdout.lines().count(), 100);
    assert!(in_memory
        .stdout
        .contains(r#"{"a":"h0.org","b":"m0.net/mirror","shared_paths":170,"same_content":153,"#));
    let least = run("16M");
    assert!(spilled(&least.stderr) > 1 << 20, "{}", least.stderr);
    assert_eq!(least.stdout, in_memory.stdout);

    // A truncated input after the crawl: the run fails once it has spilled, and leaves nothing.
    let truncated = dir.path().join("truncated.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(crawl().as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    std::fs::write(&truncated, &gz[..gz.len() / 2]).unwrap();
    let failed = neardup(
        &[
            "mirrors",
            input.to_str().unwrap(),
            truncated.to_str().unwrap(),
            "--memory",
            "16M",
            "--tmp-dir",
            tmp.path().to_str().unwrap(),
        ],
        b"",
    );
    common::assert_one_line_error(&failed, 1, "truncated");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}
