//! Look at what the extractor keeps, or measure its speed.
//!
//! ```text
//! cargo run --release -p neardup-ingest --example extract -- page.html...
//! cargo run --release -p neardup-ingest --example extract -- --all page.html
//! cargo run --release -p neardup-ingest --example extract -- --speed DIR [STEP]
//! ```
//!
//! `--speed` reads every STEP-th (default 100) `.html` file under DIR and
//! reports main-content and all-text throughput on one core.

use neardup_ingest::extract::{html_to_text, MainContentExtractor};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--speed") => speed(
            args.get(1).expect("DIR"),
            args.get(2).map_or(100, |s| s.parse().expect("STEP")),
        ),
        Some("--all") => args[1..]
            .iter()
            .for_each(|p| println!("{}", html_to_text(&read(p)))),
        _ => {
            let extractor = MainContentExtractor::default();
            for path in &args {
                let out = extractor.extract(&read(path));
                println!(
                    "== {path}\n# {}\n{}",
                    out.title.unwrap_or_default(),
                    out.text
                );
            }
        }
    }
}

fn read(path: &str) -> String {
    String::from_utf8_lossy(&std::fs::read(path).expect("readable file")).into_owned()
}

fn speed(dir: &str, step: usize) {
    let mut paths: Vec<_> = walk(std::path::Path::new(dir));
    paths.sort();
    let pages: Vec<String> = paths
        .iter()
        .step_by(step)
        .map(|p| read(p.to_str().unwrap_or_default()))
        .collect();
    let bytes: usize = pages.iter().map(String::len).sum();
    let extractor = MainContentExtractor::default();
    let time = |name: &str, f: &dyn Fn(&str) -> usize| {
        let start = Instant::now();
        let out: usize = pages.iter().map(|p| f(p)).sum();
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name:>13}: {:7.1} MB/s ({} pages, {:.1} MB in, {:.1} MB out)",
            bytes as f64 / secs / 1e6,
            pages.len(),
            bytes as f64 / 1e6,
            out as f64 / 1e6
        );
    };
    for _ in 0..2 {
        time("main content", &|p| extractor.extract(p).text.len());
        time("all text", &|p| html_to_text(p).len());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
    out
}
