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
//! when the pairs are written. `--clusters` lists no pair: the search links the positions of
//! each cluster, merged into a union-find of every position while it fits an eighth of the
//! budget ([`union_find_fits`]: 5 bytes a position), else written as links to sorted runs whose
//! components are found on disk ([`neardup_index::FoundLinks::components`]); either way each
//! member is then named by its cluster's first member, sorted in runs by cluster, and the
//! clusters are written one member at a time from them.

mod input;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use neardup_dedup::{Budget, Phase};
use neardup_index::{
    by_component, union_find_fits, Design, ExternalPairs, Fingerprint, FoundPairs, Pair, Sorted,
    SpillDir, SpillError,
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
    /// Bytes written to --tmp-dir: standard input's copy, fingerprints, buckets, pair runs, ids
    /// (with `--clusters`: links and the runs of members by cluster).
    spilled_bytes: u64,
    /// With `--clusters`, the rounds of large-star and small-star steps run on disk to find the
    /// components from links (0: the links fitted memory); absent when a union-find of every
    /// position fitted the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    component_rounds: Option<u32>,
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
    let searching = |e| match e {
        SpillError::Index(e) => anyhow::Error::new(usage(e)).context(format!(
            "cannot search at k = {} with design {design}",
            args.k
        )),
        other => other.into(),
    };
    let found = if args.clusters {
        Found::Clusters(by_cluster(fps, args.k, design, budget.memory, &dir).map_err(searching)?)
    } else {
        Found::Pairs(fps.finish(args.k, design).map_err(searching)?)
    };
    let searched = started.elapsed().as_secs_f64();
    let names = names.map(Names::finish).transpose()?;
    let names_spilled = names.as_ref().map_or(0, NameReader::spilled_bytes);
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let (written, spilled, component_rounds) = match found {
        Found::Pairs(found) => {
            let (written, spilled) = write_pairs(&mut out, found, names.as_ref())?;
            (written, spilled, None)
        }
        Found::Clusters(clusters) => {
            let rounds = clusters.rounds;
            let (written, spilled) = write_clusters(&mut out, clusters, names.as_ref())?;
            (written, spilled, rounds)
        }
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
        component_rounds,
        phases: vec![
            phase("reading", read),
            phase(
                if args.clusters {
                    "search, components and sorted runs by cluster"
                } else {
                    "search (and sorted runs)"
                },
                searched - read,
            ),
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

/// What the search found: the pairs, or the members of the clusters.
enum Found {
    Pairs(FoundPairs),
    Clusters(ByCluster),
}

/// The members of every cluster of two or more, `(first member, member)` ascending: a
/// cluster's members together, ascending, clusters in the order of their first member.
struct ByCluster {
    members: Sorted<Pair>,
    /// Bytes the search, the components and the runs by cluster wrote to the temporary folder.
    spilled: u64,
    /// The rounds on disk of [`neardup_index::Labels`], when the components were found from links.
    rounds: Option<u32>,
}

/// Searches `fps` for the clusters of "within `k`": the components merged into a union-find of
/// every position while it fits its share of the budget ([`union_find_fits`]), else found from
/// links on disk ([`ExternalPairs::links`]); each member of a component of two or more, named
/// by the component's first member, is then sorted in runs by component (an eighth of the
/// budget of `memory` bytes in memory) in `dir`.
fn by_cluster<F: Fingerprint>(
    fps: ExternalPairs<F>,
    k: u32,
    design: Design,
    memory: u64,
    dir: &Path,
) -> Result<ByCluster, SpillError> {
    let spill = SpillDir::new(dir);
    let (members, searched, rounds) = if union_find_fits(fps.len(), memory) {
        let mut found = fps.components(k, design)?;
        let members = by_component(found.components.labels().map(Ok), &spill, memory)?;
        (members, found.spilled_bytes, None)
    } else {
        let mut labels = fps.links(k, design)?.components()?;
        let members = by_component(labels.by_ref(), &spill, memory)?;
        tracing::debug!(rounds = labels.rounds(), "components found on disk");
        (members, labels.spilled_bytes(), Some(labels.rounds()))
    };
    Ok(ByCluster {
        members,
        spilled: searched + spill.written(),
        rounds,
    })
}

/// Writes one JSON line {"cluster", "members", "representative"} per cluster of two or more
/// members (the representative is the first), a member at a time (a cluster is never held);
/// returns the lines written and the bytes spilled.
fn write_clusters(
    out: &mut impl Write,
    clusters: ByCluster,
    names: Option<&NameReader>,
) -> anyhow::Result<(u64, u64)> {
    let mut line = Vec::with_capacity(256);
    let mut written = 0u64;
    let mut current = None;
    for (i, record) in clusters.members.enumerate() {
        let Pair {
            a: first,
            b: member,
            ..
        } = record?;
        line.clear();
        if current == Some(first) {
            line.push(b',');
        } else {
            if let Some(previous) = current {
                end_cluster(names, previous, &mut line)?;
            }
            line.extend_from_slice(format!("{{\"cluster\":{written},\"members\":[").as_bytes());
            current = Some(first);
            written += 1;
        }
        name(names, member, &mut line)?;
        out.write_all(&line)?;
        if (i + 1).is_multiple_of(65536) {
            interrupt::check()?;
        }
    }
    if let Some(last) = current {
        line.clear();
        end_cluster(names, last, &mut line)?;
        out.write_all(&line)?;
    }
    Ok((written, clusters.spilled))
}

/// Appends the end of the line of the cluster whose representative is `first`.
fn end_cluster(names: Option<&NameReader>, first: u32, line: &mut Vec<u8>) -> anyhow::Result<()> {
    line.extend_from_slice(b"],\"representative\":");
    name(names, first, line)?;
    line.extend_from_slice(b"}\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup_index::{all_pairs, clusters, synth, Representative};

    /// What `pairs --clusters` wrote before it found them within the budget: every pair
    /// listed, then merged by [`clusters`] in memory.
    fn reference(fps: &[u64], k: u32, design: Design) -> String {
        let pairs = all_pairs(fps, k, design).unwrap();
        let links = pairs.iter().map(|p| (p.a, p.b));
        let found = clusters(fps.len(), links, Representative::FirstSeen, false).unwrap();
        let line = |(i, cluster): (usize, &neardup_index::Cluster)| {
            let members: Vec<String> = cluster.members.iter().map(u32::to_string).collect();
            format!(
                "{{\"cluster\":{i},\"members\":[{}],\"representative\":{}}}\n",
                members.join(","),
                cluster.representative
            )
        };
        found.iter().enumerate().map(line).collect()
    }

    /// The clusters `pairs` writes for `fps` within `memory` bytes (the search's share as in
    /// [`run`]), and the rounds of the components on disk.
    fn written(
        fps: &[u64],
        k: u32,
        design: Design,
        memory: u64,
        dir: &Path,
    ) -> (String, Option<u32>) {
        let mut search = ExternalPairs::new(memory - memory / 4, dir);
        for &fp in fps {
            search.push(fp).unwrap();
        }
        let found = by_cluster(search, k, design, memory, dir).unwrap();
        let rounds = found.rounds;
        let mut out = Vec::new();
        write_clusters(&mut out, found, None).unwrap();
        (String::from_utf8(out).unwrap(), rounds)
    }

    /// A random walk of one bit a step, shuffled: long chains of clusters, whose components
    /// take several rounds on disk.
    fn chains(n: usize, seed: u64) -> Vec<u64> {
        let mut rng = synth::Rng::new(seed);
        let mut fp: u64 = rng.fingerprint();
        let mut fps: Vec<u64> = (0..n)
            .map(|i| {
                fp = if i % 700 == 0 {
                    rng.fingerprint()
                } else {
                    rng.flip(fp, 1)
                };
                fp
            })
            .collect();
        rng.shuffle(&mut fps);
        fps
    }

    #[test]
    fn clusters_within_any_budget_are_the_clusters_of_every_pair() {
        let dir = tempfile::tempdir().unwrap();
        let mut identical: Vec<u64> = synth::planted_with(2_000, 3, 200, 3, 50);
        identical.extend(std::iter::repeat_n(0x0123_4567_89ab_cdef, 600));
        let inputs: [(&str, Vec<u64>); 5] = [
            ("random", synth::random(3_000, 1)),
            ("planted", synth::planted(3_000, 2)),
            ("identical", identical),
            ("skewed", synth::skewed(3_000, 4, 0.5, 50)),
            ("chains", chains(2_800, 5)),
        ];
        let mut paths = std::collections::BTreeSet::new();
        for (kind, fps) in &inputs {
            for (k, design) in [
                (3, Design::Tables4x16),
                (2, Design::Blocks { blocks: 5, k: 2 }),
            ] {
                let expected = reference(fps, k, design);
                assert!(
                    expected.len() > 100 || *kind == "random",
                    "{kind}: clusters to find"
                );
                for memory in [1 << 30, 1 << 16, 1 << 11] {
                    let (found, rounds) = written(fps, k, design, memory, dir.path());
                    assert!(
                        found == expected,
                        "{kind} k={k} memory={memory}: {rounds:?}"
                    );
                    paths.insert(rounds.map(|r| r.min(2)));
                    let left = std::fs::read_dir(dir.path()).unwrap().count();
                    assert_eq!(left, 0, "no temporary file left");
                }
            }
        }
        // A union-find, links in memory, and several rounds on disk.
        let every = [None, Some(0), Some(2)];
        assert_eq!(paths, every.into_iter().collect(), "every path taken");
    }
}
