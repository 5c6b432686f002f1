//! `neardup dedup`: the main job. Read a corpus, find its exact and near duplicates, and write
//! what to keep, what goes and why.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use neardup_core::Fingerprinter;
use neardup_dedup::{
    dedup_documents, AcceptedPair, Budget, ClusterOf, ComponentOf, CorpusFeatures, DedupOptions,
    DocumentVerdict, Documents, DuplicateOf, Item, KeepPolicy, Kind, NameReader, Names, Phase,
    Policy, RunOutcome, Verdict,
};
use neardup_ingest::url::canonicalize;
use neardup_ingest::{Accounting, Corpus};
use neardup_store::{open_db, IndexIn, InsertMode, OpenOptions};
use serde::Serialize;

use crate::budget_args::BudgetArgs;
use crate::choice::choice;
use crate::documents::{unix_seconds, InputArgs};
use crate::output::{Output, Outputs};
use crate::policy_args::PolicyArgs;
use crate::{interrupt, kept, progress};

mod removals;

use removals::{IndexRemoval, Removals};

/// Arguments of `neardup dedup`.
#[derive(Debug, clap::Args)]
pub struct DedupArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Which document of a cluster is kept.
    #[arg(long, value_parser = choice::<KeepPolicy>(), default_value = "first", conflicts_with = "index")]
    keep: KeepPolicy,
    /// Documents with the same canonical URL are duplicates too.
    #[arg(long, conflicts_with = "index")]
    url_dedup: bool,
    /// Write the input records of kept documents here, unchanged, in input order, in the
    /// format they came in: JSONL lines as read, WARC records as WARC (one gzip member a
    /// record for .warc.gz inputs); a file read whole (.txt, .html) as a JSON line {"id",
    /// "text"}; compressed as the name says (kept.jsonl.zst, kept.warc.gz). Inputs of two
    /// kinds (JSONL and WARC), or a name of another kind (kept.parquet for JSONL), are refused.
    #[arg(long, value_name = "FILE")]
    kept: Option<PathBuf>,
    /// Write one JSON line per removed document: its id, the id it duplicates, why. (`-` for
    /// standard output, here and in the other outputs.)
    #[arg(long, value_name = "FILE")]
    removed: Option<PathBuf>,
    /// Write every pair the policy accepts as a JSON line {"a", "b", "kind", "distance",
    /// "measure", "value", "threshold"} (near pairs between the first copies of exact groups).
    #[arg(long, value_name = "FILE")]
    pairs: Option<PathBuf>,
    /// Write clusters of two or more documents as JSON lines. Clusters are
    /// representative-centred: every member is a duplicate of the representative by the policy.
    #[arg(long, value_name = "FILE")]
    clusters: Option<PathBuf>,
    /// Write the connected components of the accepted pairs as JSON lines {"component",
    /// "members", "kept"}: chained near-duplicates grouped (A ~ B ~ C, even with A and C
    /// apart), for topic clustering; a component can hold several kept documents.
    #[arg(long, value_name = "FILE", conflicts_with = "index")]
    components: Option<PathBuf>,
    /// Write the summary as JSON here (it always goes to stderr as text).
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
    /// Incremental dedup against a saved index (a directory, or redis://…; the database of
    /// `neardup index` and `neardup serve`): each document is checked, in input order, against
    /// the index (which holds the documents kept before it, in this run and earlier ones) by
    /// the index's policy, and added to it when unique. The index keeps the policy it was
    /// made with (policy options, if given, must name the same one); the first seen is kept,
    /// so --keep and --url-dedup are refused with it. Within --memory: the database gets the
    /// budget (redb's page cache a quarter; a local index that cannot fit in the rest is
    /// refused before it is built, naming
    /// --index-in store), the run holds a byte a document and spills its removals to --tmp-dir
    /// (a warning if the measured peak still goes above the budget). --clusters are numbered in
    /// the order of each cluster's first duplicate in the input.
    #[arg(long, value_name = "DIR|URL")]
    index: Option<String>,
    /// With --index: where its checks find their candidates: `local`, the whole index loaded
    /// into this process (about 90 bytes a stored document), or `store`, the block keys the
    /// database holds (redb: a table in its file, built at the first such run; Redis: keys
    /// spread over the cluster): this process holds none, whatever the database's size.
    #[arg(long, value_parser = choice::<IndexIn>(), default_value = "local", requires = "index")]
    index_in: IndexIn,
    /// Dedup below the document as well: after the documents are decided (exact, near, URL,
    /// by the policy, as without it), the paragraphs (blocks between blank lines; of HTML,
    /// block elements), lines, or spans of N sentences that repeat across the kept documents
    /// are removed from every one but the first that has them, in input order (by the
    /// profile's normalised text); --kept writes the kept records with their text rewritten
    /// (JSON Lines, compressed as its name says, or Parquet rows from Parquet inputs with the
    /// text column replaced), --removed the removed documents, --removed-spans the removed
    /// units.
    /// `document`: whole documents only (the default).
    #[arg(long, value_name = "UNIT", value_parser = parse_granularity,
          conflicts_with = "index")]
    granularity: Option<Granularity>,
    /// With --granularity: no document-level decision; the units of every document are
    /// deduplicated (for inputs deduplicated whole already, or to see what repeats below the
    /// document alone). Refuses the document-level outputs and options (--removed, --pairs,
    /// --clusters, --components, --url-dedup, --keep).
    #[arg(long, requires = "granularity",
          conflicts_with_all = ["pairs", "clusters", "components", "removed", "url_dedup"])]
    units_only: bool,
    /// With --granularity: a document left with fewer characters than this (white space not
    /// counted) is dropped [default: 1, only documents left empty].
    #[arg(long, value_name = "CHARS", requires = "granularity")]
    min_chars: Option<u64>,
    /// With --granularity paragraph or line: the fraction rule (dolma's paragraph dedup by
    /// n-grams) instead of the exact one: a unit is removed when at least --ngram-threshold
    /// of its N-grams of words were seen before it (in earlier kept documents, earlier in the
    /// same one, or in --seen); a unit of N words or fewer is removed when its whole text was.
    /// [default with --ngram-threshold: 13]
    #[arg(long, value_name = "N", requires = "granularity")]
    ngrams: Option<u32>,
    /// With --granularity paragraph or line: the fraction rule's threshold, above 0, at most
    /// 1 [default with --ngrams: 1.0, dolma's: every n-gram seen before].
    #[arg(long, value_name = "FRACTION", requires = "granularity")]
    ngram_threshold: Option<f64>,
    /// With --granularity: one JSON line per document something was removed from: {"id",
    /// "units", "units_removed", "bytes_removed", "removed_spans": [[start, end], ...] (byte
    /// offsets in the document's text as extracted), "dropped"}.
    #[arg(long, value_name = "FILE", requires = "granularity")]
    removed_spans: Option<PathBuf>,
    /// With --granularity: the units seen by earlier runs (a file this option wrote; none
    /// yet on a first run) count as seen before the first document, and the file is replaced
    /// by their union with this run's: incremental across dumps. Exact (no false positives but
    /// the 64-bit keys' collisions: about n^2 / 2^65 pairs for n distinct units).
    #[arg(long, value_name = "FILE", requires = "granularity")]
    seen: Option<PathBuf>,
}

/// A `--granularity` value: `None` for whole documents.
#[derive(Debug, Clone, Copy)]
struct Granularity(Option<neardup_dedup::units::Unit>);

fn parse_granularity(text: &str) -> Result<Granularity, String> {
    neardup_dedup::units::Unit::parse_granularity(text)
        .map(Granularity)
        .map_err(|e| e.to_string())
}

/// The run's figures, printed to stderr and written with --summary.
#[derive(Debug, Serialize)]
struct Summary {
    documents: usize,
    /// Bytes of document bodies as read (HTML included).
    input_bytes: u64,
    /// Bytes of text fingerprinted (after main-content extraction).
    text_bytes: u64,
    exact_duplicates: usize,
    near_duplicates: usize,
    url_duplicates: usize,
    kept: usize,
    clusters: usize,
    /// Accepted pairs listed: every one with --pairs or --components, else those that decided.
    pairs: usize,
    /// Candidate pairs the SimHash (or LSH, or overlap) search found.
    candidates: usize,
    /// Candidate pairs verified on their shingle sets.
    verified_candidates: usize,
    skipped_records: u64,
    skipped_files: u64,
    seconds: f64,
    mb_per_second: f64,
    documents_per_second: f64,
    /// The memory budget (--memory), in bytes.
    memory_budget_bytes: u64,
    /// The peak resident memory of the process, as the kernel measured it (getrusage).
    peak_rss_bytes: Option<u64>,
    /// Bytes written to --tmp-dir because they did not fit the budget.
    spilled_bytes: u64,
    /// Each phase of the run and its wall time, in order.
    phases: Vec<Phase>,
    profile: String,
    /// The decision, in words (the policy itself: --show-policy).
    policy: String,
    /// Clusters are representative-centred (every member a duplicate of the representative).
    clustering: &'static str,
    /// Every record read: documents, skipped by reason, not documents by type.
    records: Accounting,
    /// Their sum: what the inputs hold.
    records_total: u64,
    /// With --granularity: the pass below the document, over the kept documents.
    #[serde(skip_serializing_if = "Option::is_none")]
    units: Option<crate::commands::units::UnitSummary>,
}

/// `neardup dedup --index`: every document checked against the saved index and added when
/// unique (see [`neardup_store::NearDupDb::check_and_insert_many`]). The database gets the
/// budget (a local index over it is refused before it is built; with `--index-in store` it
/// holds a cache within it); the run holds a flag a document (for --kept) and spills its
/// removals ([`removals`]).
fn run_incremental(
    args: &DedupArgs,
    corpus: &Corpus,
    spec: &str,
    policy: Option<Policy>,
    started: Instant,
) -> anyhow::Result<()> {
    let (budget, _spill_dir) = args.budget.budget()?;
    let db = open_db(
        spec,
        OpenOptions {
            policy,
            index_in: args.index_in,
            memory: Some(budget.memory),
            ..OpenOptions::default()
        },
    )
    .with_context(|| format!("cannot open index {}", neardup_store::redact(spec)))?;
    let mut kept = Vec::new();
    let mut removals = Removals::within(&budget);
    let stats = db.check_corpus(corpus, InsertMode::IfUnique, |_, outcome| {
        let removed = match outcome.verdict {
            Verdict::Duplicate(duplicate) => {
                removals.push(&IndexRemoval {
                    id: outcome.id,
                    duplicate,
                })?;
                true
            }
            _ => false,
        };
        kept.push(!removed);
        Ok::<_, anyhow::Error>(())
    })?;
    let removals = removals.finish()?;
    let mut outputs = Outputs::default();
    if let Some(path) = &args.removed {
        removals.write_removed(&mut outputs, path)?;
    }
    if let Some(path) = &args.pairs {
        removals.write_pairs(&mut outputs, path)?;
    }
    let clusters = removals.write_clusters(&mut outputs, args.clusters.as_deref(), &budget)?;
    if let Some(path) = &args.kept {
        write_kept(&mut outputs, path, corpus, &kept)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let documents = kept.len();
    let added = documents - removals.len();
    eprintln!(
        "neardup: {documents} documents checked against {spec} in {seconds:.2} s: {} exact and {} near duplicates, {added} added; {} bad records skipped",
        removals.exact, removals.near, stats.errors
    );
    if let Some(path) = &args.summary {
        let summary = serde_json::json!({
            "documents": documents,
            "exact_duplicates": removals.exact,
            "near_duplicates": removals.near,
            "kept": added,
            "clusters": clusters,
            "skipped_records": stats.errors,
            "seconds": seconds,
            "index": spec,
            "index_in": args.index_in,
            "indexed": db.indexed(),
            "policy": db.policy().describe(),
            "memory_budget_bytes": args.budget.memory(),
            "peak_rss_bytes": neardup_dedup::peak_resident_bytes(),
        });
        outputs.write(path, |out| write_json(out, &summary))?;
    }
    args.budget.warn_if_exceeded(
        "dedup --index",
        "a flag a document, its removals within an eighth of the budget, and the database's cache",
    );
    outputs.commit()
}

/// The per-document state of a corpus read once: ids, documents, and what was read.
struct Fingerprinted {
    ids: NameReader,
    documents: Documents,
    input_bytes: u64,
    text_bytes: u64,
    stats: neardup_ingest::StatsSnapshot,
}

/// Reads `corpus` once, fingerprinting every document (and its canonical URL with
/// `url_dedup`). The ids are held within an eighth of `budget`, spilled beyond it.
fn fingerprint_corpus(
    corpus: &Corpus,
    fingerprinter: &Fingerprinter,
    url_dedup: bool,
    budget: &Budget,
) -> anyhow::Result<Fingerprinted> {
    let mut ids = Names::within(budget);
    let mut documents = Documents::within(budget);
    let (mut input_bytes, mut text_bytes) = (0u64, 0u64);
    let stats = corpus.for_each_document(
        "fingerprinting",
        false,
        |_, doc, text| {
            let mut item = Item::new(fingerprinter.fingerprint(text), text.len() as u64);
            item.fetched_at = doc.fetched_at.as_deref().and_then(unix_seconds);
            item.url_key = url_dedup
                .then(|| doc.url.as_deref().and_then(|u| canonicalize(u).ok()))
                .flatten();
            item
        },
        |doc, item| {
            input_bytes += doc.body.as_str().len() as u64;
            text_bytes += item.bytes;
            ids.push(doc.id.as_bytes())?;
            documents.push(item)?;
            Ok::<_, anyhow::Error>(())
        },
    )?;
    Ok(Fingerprinted {
        ids: ids.finish()?,
        documents,
        input_bytes,
        text_bytes,
        stats,
    })
}

/// Writes the outputs asked for (all but the summary; --kept's records unless `records` is
/// false: the pass below the document writes them rewritten), to be committed when the run
/// succeeds.
fn write_outputs(
    args: &DedupArgs,
    corpus: &Corpus,
    outcome: &RunOutcome,
    ids: &NameReader,
    records: bool,
) -> anyhow::Result<Outputs> {
    let mut outputs = Outputs::default();
    if let Some(path) = &args.removed {
        write_removed(&mut outputs, path, outcome, ids)?;
    }
    if let Some(path) = &args.pairs {
        write_pairs(&mut outputs, path, outcome, ids)?;
    }
    if let Some(path) = &args.clusters {
        write_clusters(&mut outputs, path, outcome, ids)?;
    }
    if let Some(path) = &args.components {
        write_components(&mut outputs, path, outcome, ids)?;
    }
    if let Some(path) = args.kept.as_ref().filter(|_| records) {
        write_kept(&mut outputs, path, corpus, &outcome.kept)?;
    }
    Ok(outputs)
}

/// Runs `neardup dedup`.
pub fn run(args: DedupArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let options = DedupOptions {
        policy: unit_policy(&args, args.policy.policy()?)?,
        keep: args.keep,
        url_dedup: args.url_dedup,
        // Every accepted pair only when one is written: else each document is verified only
        // against the kept documents it could duplicate (same clusters, far fewer checks).
        list_pairs: args.pairs.is_some() || args.components.is_some(),
        budget: Budget::default(),
    };
    if args.policy.show(&options.policy)? {
        return Ok(());
    }
    let units = options.policy.units.is_some();
    if args.units_only {
        anyhow::ensure!(
            units,
            "--units-only needs a unit below the document (--granularity paragraph, line or sentences:N)"
        );
        return run_units(&args, &options.policy);
    }
    // Verification, --kept and the units below the document read the inputs again.
    let rereads =
        units || args.kept.is_some() || (args.index.is_none() && options.policy.verifies());
    let corpus = args.input.corpus(rereads)?;
    match &args.kept {
        Some(path) if units => crate::commands::units::check_kept(&corpus, path)?,
        Some(path) => kept::check(&corpus, path)?,
        None => {}
    }
    if let Some(spec) = &args.index {
        let policy = args
            .policy
            .is_given()
            .then(|| args.policy.policy())
            .transpose()?;
        return run_incremental(&args, &corpus, spec, policy, started);
    }
    let (budget, _spill_dir) = args.budget.budget()?;
    let options = DedupOptions { budget, ..options };
    let fingerprinter = Fingerprinter::new(options.policy.profile.clone())?;
    let read = fingerprint_corpus(&corpus, &fingerprinter, options.url_dedup, &options.budget)?;
    let Fingerprinted {
        ids,
        mut documents,
        input_bytes,
        text_bytes,
        stats,
    } = read;
    // The engine's phase: the search for candidates, then, after a read of the shingle sets,
    // their verification.
    let mut phase = progress::spinner("finding duplicates");
    let mut features = CorpusFeatures::new(&corpus, &fingerprinter, |reading| match reading {
        true => phase.finish_and_clear(),
        false => phase = progress::spinner("verifying candidates and forming clusters"),
    });
    let read_seconds = started.elapsed().as_secs_f64();
    let outcome = dedup_documents(&mut documents, &options, &mut features);
    phase.finish_and_clear();
    let outcome = outcome?;
    let written = Instant::now();
    let mut outputs = write_outputs(&args, &corpus, &outcome, &ids, !units)?;
    let mut phases: Vec<Phase> = std::iter::once(Phase {
        name: "reading and fingerprinting",
        seconds: read_seconds,
    })
    .chain(outcome.phases.iter().copied())
    .chain(std::iter::once(Phase {
        name: "writing outputs",
        seconds: written.elapsed().as_secs_f64(),
    }))
    .collect();
    let (mut exact, mut near, mut url) = (0, 0, 0);
    for removal in outcome.removals.iter() {
        *match removal?.kind {
            Kind::Exact => &mut exact,
            Kind::Near => &mut near,
            Kind::Url => &mut url,
        } += 1;
    }
    let (clusters, pairs) = (outcome.cluster_count, outcome.pairs.len());
    let (candidates, verified_candidates) = (outcome.candidates, outcome.verified_candidates);
    let spilled_bytes = outcome.spilled_bytes + ids.spilled_bytes();
    let kept = outcome.kept;
    let kept_count = kept.iter().filter(|k| **k).count();
    let documents_count = documents.len();
    // The unit pass takes the kept documents in the order --keep prefers them in.
    let ranks = match units && options.keep != KeepPolicy::First {
        true => Some(documents.keep_ranks(options.keep)?),
        false => None,
    };
    // The pass below the document holds the kept flags and its keys: the document engine's
    // state is let go first.
    drop((documents, ids));
    let units = match units {
        false => None,
        true => {
            let summary = run_units_over(&args, &options, &corpus, kept, ranks, &mut outputs)?;
            phases.push(Phase {
                name: "removing repeated units",
                seconds: summary.seconds,
            });
            Some(summary)
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let accounting = corpus.accounting();
    let summary = Summary {
        documents: documents_count,
        input_bytes,
        text_bytes,
        exact_duplicates: exact,
        near_duplicates: near,
        url_duplicates: url,
        kept: kept_count,
        clusters,
        pairs,
        candidates,
        verified_candidates,
        skipped_records: stats.errors,
        skipped_files: stats.skipped_files,
        seconds,
        mb_per_second: input_bytes as f64 / 1e6 / seconds.max(1e-9),
        documents_per_second: documents_count as f64 / seconds.max(1e-9),
        memory_budget_bytes: options.budget.memory,
        peak_rss_bytes: neardup_dedup::peak_resident_bytes(),
        spilled_bytes,
        phases,
        profile: fingerprinter.profile().name.clone(),
        policy: options.policy.describe(),
        clustering: "representative-centred",
        records_total: accounting.records(),
        records: accounting,
        units,
    };
    print_summary(&summary);
    if let Some(path) = &args.summary {
        outputs.write(path, |out| write_json(out, &summary))?;
    }
    outputs.commit()
}

/// The policy with the rule below the document that --granularity and --min-chars name.
fn unit_policy(args: &DedupArgs, policy: Policy) -> anyhow::Result<Policy> {
    let Some(Granularity(unit)) = args.granularity else {
        return Ok(policy);
    };
    let ngrams = neardup_dedup::units::NgramRule::from_options(args.ngrams, args.ngram_threshold);
    neardup_dedup::units::with_units(policy, unit, args.min_chars, ngrams)
        .map_err(|e| crate::usage::usage(e).into())
}

/// `neardup dedup --granularity paragraph|line|sentences:N --units-only`: the units of every
/// document ([`crate::commands::units`]), no document-level decision.
fn run_units(args: &DedupArgs, policy: &Policy) -> anyhow::Result<()> {
    if args.keep != KeepPolicy::First {
        return Err(crate::usage::usage(anyhow::anyhow!(
            "--keep: with --units-only the first occurrence of a unit is kept"
        ))
        .into());
    }
    let corpus = args.input.corpus(true)?;
    if let Some(path) = &args.kept {
        crate::commands::units::check_kept(&corpus, path)?;
    }
    let (budget, _spill_dir) = args.budget.budget()?;
    crate::commands::units::run_alone(policy, &corpus, &budget, &unit_outputs(args))
}

/// The pass below the document over the documents document-level dedup kept (`kept`, by
/// position), in keep order (`ranks`: each document's place; `None`: input order), its
/// outputs written into `outputs`.
fn run_units_over(
    args: &DedupArgs,
    options: &DedupOptions,
    corpus: &Corpus,
    kept: Vec<bool>,
    ranks: Option<Vec<u32>>,
    outputs: &mut Outputs,
) -> anyhow::Result<crate::commands::units::UnitSummary> {
    let units = &unit_outputs(args);
    let decided = crate::commands::units::Decided {
        kept: Some(kept),
        ranks,
    };
    crate::commands::units::run(
        &options.policy,
        corpus,
        &options.budget,
        units,
        decided,
        outputs,
    )
}

/// The outputs of the pass below the document.
fn unit_outputs(args: &DedupArgs) -> crate::commands::units::UnitOutputs<'_> {
    crate::commands::units::UnitOutputs {
        kept: args.kept.as_deref(),
        removed_spans: args.removed_spans.as_deref(),
        seen: args.seen.as_ref(),
        summary: args.summary.as_deref(),
        text_field: &args.input.read.text_field,
    }
}

/// Writes `value` as pretty JSON and a newline: the `--summary` file.
fn write_json(out: &mut Output, value: &impl Serialize) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Writes the output `path`, one JSON line a value of `lines`.
fn write_lines<T: Serialize>(
    outputs: &mut Outputs,
    path: &Path,
    lines: impl Iterator<Item = anyhow::Result<T>>,
) -> anyhow::Result<()> {
    outputs.write(path, |out| {
        for line in lines {
            interrupt::check()?;
            serde_json::to_writer(&mut *out, &line?)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })
}

fn write_removed(
    outputs: &mut Outputs,
    path: &Path,
    outcome: &RunOutcome,
    ids: &NameReader,
) -> anyhow::Result<()> {
    write_lines(
        outputs,
        path,
        outcome.removals.iter().map(|r| {
            let r = r?;
            Ok(DocumentVerdict {
                id: ids.get(r.index)?,
                verdict: Verdict::Duplicate(DuplicateOf {
                    duplicate_of: ids.get(r.of)?,
                    kind: r.kind,
                    distance: r.distance,
                    evidence: r.evidence,
                }),
            })
        }),
    )
}

fn write_pairs(
    outputs: &mut Outputs,
    path: &Path,
    outcome: &RunOutcome,
    ids: &NameReader,
) -> anyhow::Result<()> {
    write_lines(
        outputs,
        path,
        outcome.pairs.iter().map(|p| {
            let p = p?;
            Ok(AcceptedPair {
                a: ids.get(p.a)?,
                b: ids.get(p.b)?,
                kind: p.kind,
                distance: p.distance,
                evidence: p.evidence,
            })
        }),
    )
}

fn write_clusters(
    outputs: &mut Outputs,
    path: &Path,
    outcome: &RunOutcome,
    ids: &NameReader,
) -> anyhow::Result<()> {
    write_lines(
        outputs,
        path,
        outcome.clusters()?.enumerate().map(|(i, c)| {
            let c = c?;
            Ok(ClusterOf {
                cluster: i,
                members: named(ids, &c.members)?,
                representative: ids.get(c.representative)?,
            })
        }),
    )
}

fn write_components(
    outputs: &mut Outputs,
    path: &Path,
    outcome: &RunOutcome,
    ids: &NameReader,
) -> anyhow::Result<()> {
    write_lines(
        outputs,
        path,
        outcome.components()?.enumerate().map(|(i, members)| {
            let members = members?;
            let kept: Vec<u32> = members
                .iter()
                .copied()
                .filter(|&m| outcome.kept[m as usize])
                .collect();
            Ok(ComponentOf {
                component: i,
                members: named(ids, &members)?,
                kept: named(ids, &kept)?,
            })
        }),
    )
}

/// The ids of the documents at `positions`.
fn named(ids: &NameReader, positions: &[u32]) -> anyhow::Result<Vec<String>> {
    Ok(positions
        .iter()
        .map(|&m| ids.get(m))
        .collect::<Result<_, _>>()?)
}

/// Writes the input records of kept documents to `path` (see [`kept::write_kept`]).
fn write_kept(
    outputs: &mut Outputs,
    path: &Path,
    corpus: &Corpus,
    kept: &[bool],
) -> anyhow::Result<()> {
    outputs.write(path, |out| kept::write_kept(out, path, corpus, kept))
}

fn print_summary(s: &Summary) {
    eprintln!(
        "neardup: {} documents ({:.1} MB read, {:.1} MB of text) in {:.2} s ({:.1} MB/s, {:.0} documents/s)",
        s.documents,
        s.input_bytes as f64 / 1e6,
        s.text_bytes as f64 / 1e6,
        s.seconds,
        s.mb_per_second,
        s.documents_per_second
    );
    eprintln!(
        "neardup: {} exact and {} near duplicates{} removed, {} kept, {} clusters; {} bad records skipped",
        s.exact_duplicates,
        s.near_duplicates,
        if s.url_duplicates > 0 { format!(" and {} URL duplicates", s.url_duplicates) } else { String::new() },
        s.kept,
        s.clusters,
        s.skipped_records
    );
    eprintln!("neardup: {}", s.records);
    let phases: Vec<String> = s
        .phases
        .iter()
        .map(|p| format!("{} {:.2} s", p.name, p.seconds))
        .collect();
    eprintln!(
        "neardup: peak memory {}, budget {}, {} spilled; {}",
        megabytes(s.peak_rss_bytes),
        megabytes(Some(s.memory_budget_bytes)),
        megabytes(Some(s.spilled_bytes)),
        phases.join(", ")
    );
    if let Some(units) = &s.units {
        crate::commands::units::print_summary(units);
    }
}

/// `bytes` in MB for the summary line, or "unknown".
fn megabytes(bytes: Option<u64>) -> String {
    bytes.map_or("unknown".into(), |b| format!("{:.1} MB", b as f64 / 1e6))
}
