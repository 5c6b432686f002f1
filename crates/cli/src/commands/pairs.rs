//! `neardup pairs`: every pair of fingerprints within a Hamming distance, or their clusters.
//!
//! Does the job of seomoz's `simhash-find-all`, exactly and faster: it keeps identical
//! fingerprints (each pair of equal lines is reported at distance 0) and reports positions (line
//! indices), so duplicates stay distinguishable.
//!
//! Input: one fingerprint a line, either decimal `u64` or hexadecimal with exactly 16 (64-bit) or
//! 32 (128-bit) digits, or the JSON lines `neardup fingerprint` writes (`{"id", "simhash", ...}`).
//! A file whose first line starts with `{` is read as JSON lines, and its pairs and clusters name
//! documents by their `id`; otherwise a file is read as hexadecimal when its lines are all 16 or
//! all 32 hex digits, as decimal otherwise, and members are named by line index (from 0).
//! `--format` overrides the guess (a 16-digit decimal number could be either).
//!
//! Memory: within `--memory` whatever the input. The input is streamed; the fingerprints are
//! searched by [`ExternalPairs`] (in memory while they fit its share, else as bucket files per
//! table, see there); the pairs are sorted in runs on disk and merged; the ids of JSON lines are
//! held while they fit an eighth of the budget and in a file beyond, read back by position
//! when the pairs are written. `--clusters` holds a union-find of every position and the
//! clusters' members (about 9 bytes a fingerprint, outside the budget's accounting).

mod input;

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use neardup_dedup::{Budget, Phase};
use neardup_index::{
    clusters, Design, ExternalPairs, Fingerprint, FoundPairs, Representative, SpillError,
};
use serde::Serialize;

use self::input::{Reading, Source, Width};
use crate::budget_args::BudgetArgs;
use crate::interrupt;
use crate::output::Outputs;
use crate::usage::usage;
use neardup_dedup::{NameReader, Names};

/// How the fingerprints in the input are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FingerprintFormat {
    /// JSON lines if the first line starts with `{`; else hexadecimal if every line has 16 (or
    /// every line 32) hex digits; else decimal.
    Auto,
    /// Decimal `u64`, one a line.
    Dec,
    /// Hexadecimal, 16 digits (64-bit) or 32 digits (128-bit) a line, all lines alike.
    Hex,
    /// The JSON lines of `neardup fingerprint`: the `simhash` field (hex), named by `id`.
    Jsonl,
}

/// Arguments of `neardup pairs`.
#[derive(Debug, clap::Args)]
pub struct PairsArgs {
    /// Largest Hamming distance of a reported pair.
    #[arg(long, short)]
    pub k: u32,
    /// Use the general design with this many blocks (more than k): C(blocks, k) tables.
    #[arg(long, conflicts_with = "design")]
    pub blocks: Option<u32>,
    /// Use a preset design for 64-bit fingerprints at k ≤ 3: 4x16, 10, 16 or 20 tables. Default:
    /// chosen from the number of fingerprints.
    #[arg(long, value_parser = parse_design)]
    pub design: Option<Design>,
    /// Write clusters ({"cluster", "members", "representative"}) instead of pairs.
    #[arg(long)]
    pub clusters: bool,
    /// How fingerprints are written in the input.
    #[arg(long, value_enum, default_value_t = FingerprintFormat::Auto)]
    pub format: FingerprintFormat,
    /// Write a summary as JSON here: counts, the peak resident memory, bytes spilled, the time
    /// of each phase.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Input file with one fingerprint a line; `-` or nothing reads standard input.
    pub input: Option<PathBuf>,
}

/// Parses a `--design` value.
fn parse_design(s: &str) -> Result<Design, String> {
    s.parse()
        .map_err(|e: neardup_index::IndexError| e.to_string())
}

/// The run's figures: logged, and written with `--summary`.
#[derive(Debug, Serialize)]
struct Summary {
    /// Fingerprints read.
    documents: usize,
    /// Bytes of input read.
    input_bytes: u64,
    /// Pairs (or clusters) written.
    written: u64,
    design: String,
    seconds: f64,
    /// The memory budget (--memory), in bytes.
    memory_budget_bytes: u64,
    /// The peak resident memory of the process, as the kernel measured it (getrusage).
    peak_rss_bytes: Option<u64>,
    /// Bytes written to --tmp-dir: standard input's copy, fingerprints, buckets, pair runs, ids.
    spilled_bytes: u64,
    /// Each phase of the run and its wall time, in order.
    phases: Vec<Phase>,
}

/// Runs `neardup pairs`.
pub fn run(args: PairsArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let (budget, _spill_dir) = args.budget.budget()?;
    let source = Source::open(args.input.as_deref(), &budget.spill_dir())?;
    let reading = input::decide(&source, args.format)?;
    match reading.width {
        Width::W64(_) => search::<u64>(&args, &budget, &source, reading, started),
        Width::W128 => search::<u128>(&args, &budget, &source, reading, started),
    }
}

/// Reads the fingerprints, finds the pairs (or clusters) and writes them as JSON lines to
/// standard output, each member named by its id (JSON lines) or position.
fn search<F: Fingerprint>(
    args: &PairsArgs,
    budget: &Budget,
    source: &Source,
    reading: Reading,
    started: Instant,
) -> anyhow::Result<()> {
    let dir = budget.spill_dir();
    let mut names = reading.jsonl.then(|| Names::within(budget));
    let mut fps = ExternalPairs::<F>::new(budget.memory - budget.memory / 4, &dir);
    let mut json = Vec::new();
    input::read::<F>(source, reading, |fp, id| {
        fps.push(fp)?;
        if let (Some(names), Some(id)) = (&mut names, id) {
            json.clear();
            serde_json::to_writer(&mut json, id)?;
            names.push(&json)?;
        }
        Ok(())
    })?;
    let read = started.elapsed().as_secs_f64();
    let n = fps.len();
    let design = match (args.blocks, args.design) {
        (Some(blocks), _) => Design::Blocks { blocks, k: args.k },
        (None, Some(design)) => design,
        (None, None) => Design::for_expected_len(n, args.k, F::BITS),
    };
    let found = fps.finish(args.k, design).map_err(|e| match e {
        SpillError::Index(e) => anyhow::Error::new(usage(e)).context(format!(
            "cannot search at k = {} with design {design}",
            args.k
        )),
        other => other.into(),
    })?;
    let searched = started.elapsed().as_secs_f64();
    let names = names.map(Names::finish).transpose()?;
    let names_spilled = names.as_ref().map_or(0, NameReader::spilled_bytes);
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let (written, spilled) = if args.clusters {
        write_clusters(&mut out, found, n, names.as_ref())?
    } else {
        write_pairs(&mut out, found, names.as_ref())?
    };
    out.flush()?;
    let seconds = started.elapsed().as_secs_f64();
    let phase = |name, seconds| Phase { name, seconds };
    let summary = Summary {
        documents: n,
        input_bytes: source.bytes,
        written,
        design: design.to_string(),
        seconds,
        memory_budget_bytes: budget.memory,
        peak_rss_bytes: neardup_dedup::peak_resident_bytes(),
        spilled_bytes: source.spilled + spilled + names_spilled,
        phases: vec![
            phase("reading", read),
            phase("search (and sorted runs)", searched - read),
            phase("merging and writing", seconds - searched),
        ],
    };
    tracing::info!(fingerprints = n, written, %design, peak_rss_bytes = summary.peak_rss_bytes,
        spilled_bytes = summary.spilled_bytes, seconds, "pairs found");
    if let Some(path) = &args.summary {
        let mut outputs = Outputs::default();
        outputs.write(path, |out| {
            serde_json::to_writer_pretty(&mut *out, &summary)?;
            Ok(writeln!(out)?)
        })?;
        outputs.commit()?;
    }
    Ok(())
}

/// Appends the name of `position`: its id (JSON) or the position itself.
fn name(names: Option<&NameReader>, position: u32, line: &mut Vec<u8>) -> anyhow::Result<()> {
    match names {
        Some(names) => Ok(names.write(position, line)?),
        None => {
            line.extend_from_slice(position.to_string().as_bytes());
            Ok(())
        }
    }
}

/// Writes one JSON line {"a", "b", "distance"} per pair; returns the lines written and the
/// bytes the search spilled.
fn write_pairs(
    out: &mut impl Write,
    mut found: FoundPairs,
    names: Option<&NameReader>,
) -> anyhow::Result<(u64, u64)> {
    let mut line = Vec::with_capacity(256);
    let mut written = 0u64;
    for pair in found.by_ref() {
        let pair = pair?;
        line.clear();
        line.extend_from_slice(b"{\"a\":");
        name(names, pair.a, &mut line)?;
        line.extend_from_slice(b",\"b\":");
        name(names, pair.b, &mut line)?;
        line.extend_from_slice(format!(",\"distance\":{}}}\n", pair.distance).as_bytes());
        out.write_all(&line)?;
        written += 1;
        if written.is_multiple_of(65536) {
            interrupt::check()?;
        }
    }
    Ok((written, found.spilled_bytes()))
}

/// Writes one JSON line {"cluster", "members", "representative"} per cluster of two or more
/// members (the representative is the first); returns the lines written and the bytes the
/// search spilled.
fn write_clusters(
    out: &mut impl Write,
    mut found: FoundPairs,
    n: usize,
    names: Option<&NameReader>,
) -> anyhow::Result<(u64, u64)> {
    let mut failure = None;
    let links = found.by_ref().map_while(|pair| match pair {
        Ok(pair) => Some((pair.a, pair.b)),
        Err(e) => {
            failure = Some(e);
            None
        }
    });
    let all = clusters(n, links, Representative::FirstSeen, false)?;
    if let Some(e) = failure {
        return Err(e.into());
    }
    let mut line = Vec::with_capacity(256);
    for (i, cluster) in all.iter().enumerate() {
        line.clear();
        line.extend_from_slice(format!("{{\"cluster\":{i},\"members\":[").as_bytes());
        for (j, &member) in cluster.members.iter().enumerate() {
            if j > 0 {
                line.push(b',');
            }
            name(names, member, &mut line)?;
        }
        line.extend_from_slice(b"],\"representative\":");
        name(names, cluster.representative, &mut line)?;
        line.extend_from_slice(b"}\n");
        out.write_all(&line)?;
    }
    Ok((all.len() as u64, found.spilled_bytes()))
}
