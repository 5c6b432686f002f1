//! Main-content quality and speed on a labelled extraction set such as
//! trafilatura's evaluation pages (one JSON object a line, optionally
//! zstd-compressed: `html`, `with` = snippets the main text must contain,
//! `without` = snippets of boilerplate it must not contain).
//!
//! ```text
//! cargo run --release -p neardup-ingest --example extract_eval -- DATA.jsonl.zst
//! cargo run --release -p neardup-ingest --example extract_eval -- DATA.jsonl.zst --misses
//! cargo run --release -p neardup-ingest --example extract_eval -- DATA.jsonl.zst --page 17
//! ```
//!
//! Scored as trafilatura scores itself: a `with` snippet found in the text is
//! a true positive, missing a false negative; a `without` snippet found is a
//! false positive, absent a true negative. Prints precision, recall, accuracy
//! and F1 over all pages, and over the even- and odd-numbered pages apart
//! (tuning on one half and checking on the other), then the throughput of
//! the extractor on one core (the best of three passes over all pages).
//! `--misses` also prints, per page, the snippets it got wrong; `--page N`
//! prints only the text extracted from page N (counted from 0, as
//! `--misses` numbers them).

use neardup_ingest::extract::MainContentExtractor;
use std::io::Read;
use std::time::Instant;

/// One labelled page.
#[derive(serde::Deserialize)]
struct Page {
    url: String,
    html: String,
    with: Vec<String>,
    without: Vec<String>,
}

/// Snippet counts.
#[derive(Default, Clone, Copy)]
struct Score {
    tp: usize,
    fn_: usize,
    fp: usize,
    tn: usize,
}

impl Score {
    fn add(&mut self, other: Score) {
        self.tp += other.tp;
        self.fn_ += other.fn_;
        self.fp += other.fp;
        self.tn += other.tn;
    }

    fn line(&self, name: &str) -> String {
        let ratio = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        let p = ratio(self.tp, self.tp + self.fp);
        let r = ratio(self.tp, self.tp + self.fn_);
        let acc = ratio(self.tp + self.tn, self.tp + self.tn + self.fp + self.fn_);
        let f1 = 2.0 * p * r / (p + r).max(f64::MIN_POSITIVE);
        format!("{name:<6} P {p:.3}  R {r:.3}  acc {acc:.3}  F1 {f1:.3}")
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first().filter(|a| !a.starts_with("--")) else {
        eprintln!("usage: extract_eval DATA.jsonl[.zst] [--misses | --page N]");
        std::process::exit(2);
    };
    let misses = args.iter().any(|a| a == "--misses");
    let pages = match load(path) {
        Ok(pages) => pages,
        Err(error) => {
            eprintln!("extract_eval: cannot read {path}: {error}");
            std::process::exit(1);
        }
    };
    let extractor = MainContentExtractor::default();
    if let Some(at) = args.iter().position(|a| a == "--page") {
        let Some(page) = args
            .get(at + 1)
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| pages.get(n))
        else {
            eprintln!(
                "extract_eval: --page takes a page number below {}",
                pages.len()
            );
            std::process::exit(2);
        };
        println!("{}", extractor.extract(&page.html).text);
        return;
    }
    let mut halves = [Score::default(); 2];
    for (i, page) in pages.iter().enumerate() {
        let text = extractor.extract(&page.html).text;
        let mut score = Score::default();
        let mut wrong = Vec::new();
        for snippet in &page.with {
            if text.contains(snippet.as_str()) {
                score.tp += 1;
            } else {
                score.fn_ += 1;
                wrong.push(format!("  missing: {snippet}"));
            }
        }
        for snippet in &page.without {
            if text.contains(snippet.as_str()) {
                score.fp += 1;
                wrong.push(format!("  kept:    {snippet}"));
            } else {
                score.tn += 1;
            }
        }
        if misses && !wrong.is_empty() {
            println!("#{i} {}\n{}", page.url, wrong.join("\n"));
        }
        halves[i % 2].add(score);
    }
    let mut all = halves[0];
    all.add(halves[1]);
    println!("{} ({} pages)", all.line("all"), pages.len());
    println!("{}", halves[0].line("even"));
    println!("{}", halves[1].line("odd"));

    let bytes: usize = pages.iter().map(|p| p.html.len()).sum();
    let best = (0..3)
        .map(|_| {
            let start = Instant::now();
            let out: usize = pages
                .iter()
                .map(|p| extractor.extract(&p.html).text.len())
                .sum();
            std::hint::black_box(out);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    println!(
        "speed  {:.0} MB/s on one core ({:.1} MB of HTML)",
        bytes as f64 / best / 1e6,
        bytes as f64 / 1e6
    );
}

/// Reads the pages of a JSONL file, zstd-compressed if its name ends in `.zst`.
fn load(path: &str) -> Result<Vec<Page>, Box<dyn std::error::Error>> {
    let file = std::fs::File::open(path)?;
    let mut raw = Vec::new();
    if path.ends_with(".zst") {
        zstd::stream::read::Decoder::new(file)?.read_to_end(&mut raw)?;
    } else {
        std::io::BufReader::new(file).read_to_end(&mut raw)?;
    }
    let text = String::from_utf8_lossy(&raw);
    let mut pages = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        pages.push(serde_json::from_str(line)?);
    }
    Ok(pages)
}
