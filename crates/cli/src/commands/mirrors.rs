//! `neardup mirrors`: host (or host/path-prefix) pairs whose shared paths mostly carry the same
//! content — mirror sites, the largest single cause of duplication on the web.

use std::io::Write;

use neardup_core::Fingerprinter;
use neardup_dedup::mirrors::{content_key, MirrorFinder, MirrorOptions};

use crate::budget_args::BudgetArgs;
use crate::documents::{for_each_document, InputArgs};
use crate::profile_args::ProfileArgs;

/// Arguments of `neardup mirrors`.
#[derive(Debug, clap::Args)]
pub struct MirrorsArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    profile: ProfileArgs,
    /// Nothing is spilled: the run holds a key per URL (its host, path and content digest),
    /// and warns if its measured peak goes above --memory.
    #[command(flatten)]
    budget: BudgetArgs,
    /// Fewest shared paths for a pair of hosts or prefixes to be reported.
    #[arg(long, default_value_t = 5)]
    min_shared_paths: usize,
    /// Smallest share of shared paths whose content is the same.
    #[arg(long, default_value_t = 0.8)]
    min_ratio: f64,
    /// Deepest path prefix compared (0: whole hosts only).
    #[arg(long, default_value_t = 2)]
    max_prefix_depth: usize,
}

/// Runs `neardup mirrors`: documents need a URL; pages count as the same content when their
/// normalised texts have the same digest.
pub fn run(args: MirrorsArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.min_ratio),
        "--min-ratio must be between 0 and 1"
    );
    let (_budget, _spill_dir) = args.budget.budget()?;
    let fingerprinter = Fingerprinter::new(args.profile.load()?)?;
    let mut finder = MirrorFinder::new(MirrorOptions {
        min_shared_paths: args.min_shared_paths,
        min_ratio: args.min_ratio,
        max_prefix_depth: args.max_prefix_depth,
        ..MirrorOptions::default()
    });
    let (mut without_url, mut bad_urls) = (0u64, 0u64);
    for_each_document(
        &args.input,
        |_, _, text| content_key(&fingerprinter.fingerprint(text).digest),
        |doc, key| {
            match doc.url.as_deref() {
                None => without_url += 1,
                Some(url) => {
                    if finder.add(url, key).is_err() {
                        bad_urls += 1;
                    }
                }
            }
            Ok(())
        },
    )?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let pairs = finder.finish();
    for pair in &pairs {
        serde_json::to_writer(&mut out, pair)?;
        writeln!(out)?;
    }
    out.flush()?;
    eprintln!(
        "neardup: {} mirror pairs; {without_url} documents without a URL and {bad_urls} with an unusable URL ignored",
        pairs.len()
    );
    args.budget.warn_if_exceeded("mirrors", "a key per URL");
    Ok(())
}
