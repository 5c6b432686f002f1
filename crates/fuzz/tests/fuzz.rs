//! The bounded fuzz run of the test suite: every target for `NEARDUP_FUZZ_SECONDS` (default 6)
//! each, in parallel (one test per target), so CI spends well under a minute; and every saved
//! crash under `regressions/` replayed.

use std::path::Path;
use std::time::Duration;

fn budget() -> Duration {
    let seconds = std::env::var("NEARDUP_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(6.0);
    Duration::from_secs_f64(seconds)
}

fn run(name: &str) {
    let target = neardup_fuzz::target(name).unwrap();
    let crash_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-crashes");
    // A fixed seed per run of CI would fuzz the same inputs every time: take the clock, print it.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let report = neardup_fuzz::fuzz(target, budget(), seed, &crash_dir);
    eprintln!(
        "fuzz {name}: {} executions in {:.1} s, slowest {:.1} ms, seed {seed}",
        report.executions,
        report.elapsed.as_secs_f64(),
        report.slowest.as_secs_f64() * 1e3
    );
    if let Some((message, path)) = report.failure {
        panic!(
            "{name}: {message}; input saved to {} (seed {seed})",
            path.display()
        );
    }
    assert!(report.executions > 0);
}

#[test]
fn fuzz_jsonl() {
    run("jsonl");
}

#[test]
fn fuzz_compressed() {
    run("compressed");
}

#[test]
fn fuzz_warc() {
    run("warc");
}

#[test]
fn fuzz_html() {
    run("html");
}

#[test]
fn fuzz_url() {
    run("url");
}

#[test]
fn fuzz_http() {
    run("http");
}

#[test]
fn fuzz_parquet() {
    run("parquet");
}

#[test]
fn fuzz_redb() {
    run("redb");
}

/// Every input a crash was found with, under `regressions/<target>/`, runs clean.
#[test]
fn regressions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    for target in &neardup_fuzz::TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(target.name)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let input = std::fs::read(&path).unwrap();
            if let Err(error) = neardup_fuzz::replay(target, &input) {
                panic!("{}: {error:#}", path.display());
            }
        }
    }
}
