//! `neardup mirrors`: host (or host/path-prefix) pairs whose shared paths mostly carry the same
//! content — mirror sites, the largest single cause of duplication on the web.

use std::io::Write;

use neardup_core::Fingerprinter;
use neardup_dedup::mirrors::{content_key, MirrorError, MirrorFinder, MirrorOptions};

use crate::budget_args::BudgetArgs;
use crate::documents::{for_each_document, InputArgs};
use crate::profile_args::ProfileArgs;

/// Arguments of `neardup mirrors`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("memory", |arg| arg.help(MEMORY_HELP)))]
pub struct MirrorsArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    profile: ProfileArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
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

/// What `--memory` bounds in `neardup mirrors`.
const MEMORY_HELP: &str = "Memory the run may hold for its own data (e.g. 512M, 2G, 8GiB): the \
    splits of every page (1 to 3 a page, 64 bytes each) and the votes are held while they fit \
    and written to --tmp-dir beyond; the distinct prefixes (each text once, 8 bytes where \
    it ends and a map entry) and the candidate pairs are held whatever the input. The pairs are the same at any \
    budget";

/// Runs `neardup mirrors`: documents need a URL; pages count as the same content when their
/// normalised texts have the same digest.
pub fn run(args: MirrorsArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.min_ratio),
        "--min-ratio must be between 0 and 1"
    );
    let (budget, _spill_dir) = args.budget.budget()?;
    let fingerprinter = Fingerprinter::new(args.profile.load()?)?;
    let options = MirrorOptions {
        min_shared_paths: args.min_shared_paths,
        min_ratio: args.min_ratio,
        max_prefix_depth: args.max_prefix_depth,
        ..MirrorOptions::default()
    };
    let mut finder = MirrorFinder::new(options, &budget);
    let (mut without_url, mut bad_urls) = (0u64, 0u64);
    for_each_document(
        &args.input,
        |_, _, text| content_key(&fingerprinter.fingerprint(text).digest),
        |doc, key| {
            match doc.url.as_deref() {
                None => without_url += 1,
                Some(url) => match finder.add(url, key) {
                    Ok(()) => {}
                    Err(MirrorError::Url(_)) => bad_urls += 1,
                    Err(MirrorError::Finder(e)) => return Err(e.into()),
                },
            }
            Ok(())
        },
    )?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let found = finder.finish()?;
    for pair in &found.pairs {
        serde_json::to_writer(&mut out, pair)?;
        writeln!(out)?;
    }
    out.flush()?;
    eprintln!(
        "neardup: {} mirror pairs; {without_url} documents without a URL and {bad_urls} with an unusable URL ignored; {} bytes spilled",
        found.pairs.len(),
        found.bytes_spilled
    );
    Ok(())
}
