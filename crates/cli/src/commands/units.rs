//! `neardup dedup --granularity paragraph|line|sentences:N`: the repeated units of a corpus
//! removed (the rule is [`neardup_dedup::units`]'s), the records written back with their text
//! rewritten, and a report of what went from each document.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use neardup_dedup::units::{rewrite_record, Rewritten, UnitDedup, UnitFigures, UnitReport};
use neardup_dedup::{Budget, Policy};
use neardup_ingest::kept::Rewrites;
use neardup_ingest::{Corpus, Document};
use serde::Serialize;

use crate::commands::extract::TextLine;
use crate::output::{Output, Outputs};

/// What the run writes.
pub struct UnitOutputs<'a> {
    /// The records, rewritten (`--kept`).
    pub kept: Option<&'a Path>,
    /// One line a document something was removed from (`--removed-spans`).
    pub removed_spans: Option<&'a Path>,
    /// The keys seen, saved for the next run (`--seen`).
    pub seen: Option<&'a PathBuf>,
    /// The figures as JSON (`--summary`).
    pub summary: Option<&'a Path>,
    /// The JSONL field the text is written back to.
    pub text_field: &'a str,
}

/// What the document-level decision hands the unit pass.
#[derive(Default)]
pub struct Decided {
    /// The kept documents, by position (`None`: every document).
    pub kept: Option<Vec<bool>>,
    /// Each document's place in keep order (`None`: input order).
    pub ranks: Option<Vec<u32>>,
}

/// One line of `--removed-spans`.
#[derive(Serialize)]
struct RemovedLine<'a> {
    id: &'a str,
    #[serde(flatten)]
    report: &'a UnitReport,
}

/// The figures of the pass below the document, printed and written with `--summary` (in a
/// combined run, as its `units` field).
#[derive(Debug, Serialize)]
pub struct UnitSummary {
    #[serde(flatten)]
    figures: UnitFigures,
    /// Documents written to `--kept`: those the pass read, less those it dropped.
    documents_kept: u64,
    /// Keys saved to `--seen`.
    seen_saved: Option<u64>,
    /// Wall time of the pass (both reads when it spilled).
    pub seconds: f64,
    /// Megabytes of text the pass read a second.
    mb_per_second: f64,
}

/// The figures of a run below the document only (`--units-only`).
#[derive(Serialize)]
struct Summary<'a> {
    #[serde(flatten)]
    units: &'a UnitSummary,
    memory_budget_bytes: u64,
    peak_rss_bytes: Option<u64>,
    policy: String,
}

/// Checks, before anything is read, that `--kept` can hold rewritten records: JSON Lines
/// (compressed as its name says), or Parquet from Parquet inputs.
pub fn check_kept(corpus: &Corpus, path: &Path) -> anyhow::Result<()> {
    neardup_ingest::kept::check_rewritten(corpus, path).map_err(crate::kept::into_anyhow)
}

/// Runs the rule of `policy.units` over `corpus` alone (`--units-only`), writes the outputs
/// and the summary.
pub fn run_alone(
    policy: &Policy,
    corpus: &Corpus,
    budget: &Budget,
    outputs: &UnitOutputs<'_>,
) -> anyhow::Result<()> {
    let mut files = Outputs::default();
    let units = run(
        policy,
        corpus,
        budget,
        outputs,
        Decided::default(),
        &mut files,
    )?;
    let summary = Summary {
        units: &units,
        memory_budget_bytes: budget.memory,
        peak_rss_bytes: neardup_dedup::peak_resident_bytes(),
        policy: policy.describe(),
    };
    print_summary(&units);
    eprintln!(
        "neardup: peak memory {:.1} MB, budget {:.1} MB",
        summary.peak_rss_bytes.unwrap_or(0) as f64 / 1e6,
        summary.memory_budget_bytes as f64 / 1e6,
    );
    if let Some(path) = outputs.summary {
        files.write(path, |out| {
            serde_json::to_writer_pretty(&mut *out, &summary)?;
            writeln!(out)?;
            Ok(())
        })?;
    }
    files.commit()
}

/// Runs the rule of `policy.units` over `corpus` (over the documents `decided` keeps only,
/// in its keep order, when document-level dedup decided first) and writes `--kept`,
/// `--removed-spans` and `--seen` into `files`, to be committed with the run's other outputs.
/// Returns the figures.
pub fn run(
    policy: &Policy,
    corpus: &Corpus,
    budget: &Budget,
    outputs: &UnitOutputs<'_>,
    decided: Decided,
    files: &mut Outputs,
) -> anyhow::Result<UnitSummary> {
    let started = Instant::now();
    let rule = policy.units.context("no unit rule in the policy")?;
    let mut dedup = UnitDedup::new(rule, policy.profile.normalize, budget);
    if let Some(kept) = decided.kept {
        dedup = dedup.over_kept(kept);
    }
    if let Some(ranks) = decided.ranks {
        dedup = dedup.in_keep_order(ranks);
    }
    if outputs.kept.is_some() {
        dedup = dedup.with_records();
    }
    if let Some(path) = outputs.seen {
        dedup = dedup.with_seen(path)?;
    }
    let mut spans = Outputs::default();
    let mut kept_count = 0u64;
    let mut figures = UnitFigures::default();
    optional(files, outputs.kept, |kept| {
        let mut kept = match (kept, outputs.kept) {
            (Some(out), Some(path)) => Some(
                Rewrites::new(out, path, corpus, &budget.spill_dir())
                    .map_err(crate::kept::into_anyhow)?,
            ),
            _ => None,
        };
        let parquet = kept.as_ref().map(Rewrites::is_parquet);
        let spans_wanted = outputs.removed_spans.is_some();
        optional(&mut spans, outputs.removed_spans, |mut removed| {
            figures = dedup.run(
                corpus,
                |doc, rewritten| render(doc, rewritten, parquet, spans_wanted, outputs.text_field),
                |rendered: Rendered| {
                    kept_count += u64::from(!rendered.dropped);
                    if let (Some(out), Some(line)) = (removed.as_deref_mut(), &rendered.spans) {
                        out.write_all(line)?;
                    }
                    match (kept.as_mut(), rendered.record) {
                        (Some(out), Record::Line(line)) => {
                            out.line(&line).map_err(crate::kept::into_anyhow)
                        }
                        (Some(out), Record::Row(doc, text)) => {
                            out.row(&doc, &text).map_err(crate::kept::into_anyhow)
                        }
                        _ => Ok(()),
                    }
                },
            )?;
            Ok(())
        })?;
        match kept {
            Some(kept) => kept
                .finish(corpus, outputs.text_field)
                .map_err(crate::kept::into_anyhow),
            None => Ok(()),
        }
    })?;
    files.extend(spans);
    let seen_saved = match outputs.seen {
        Some(path) => {
            let mut count = 0;
            files.write(path, |out| {
                count = dedup.write_seen(out)?;
                Ok(())
            })?;
            Some(count)
        }
        None => None,
    };
    let seconds = started.elapsed().as_secs_f64();
    Ok(UnitSummary {
        mb_per_second: figures.text_bytes as f64 / 1e6 / seconds.max(1e-9),
        figures,
        documents_kept: kept_count,
        seen_saved,
        seconds,
    })
}

/// Calls `write` with the output `path` when one is given (written into `outputs`), else
/// with none.
fn optional(
    outputs: &mut Outputs,
    path: Option<&Path>,
    write: impl FnOnce(Option<&mut Output>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match path {
        Some(path) => outputs.write(path, |out| write(Some(out))),
        None => write(None),
    }
}

/// A document's record with its text rewritten, as `--kept` takes it.
enum Record {
    /// Nothing: the document is dropped, or there is no `--kept`.
    None,
    /// Its JSON line (without the newline).
    Line(Vec<u8>),
    /// Its Parquet row (the document's place) and its new text.
    Row(Document, String),
}

/// A document rendered on the pool, for the writing thread.
struct Rendered {
    /// Its record for `--kept`.
    record: Record,
    /// Its line of `--removed-spans` (with the newline), if something was removed.
    spans: Option<Vec<u8>>,
    /// Whether the document is dropped.
    dropped: bool,
}

/// Renders a rewritten document: its record for `--kept` (`parquet`: `None` without `--kept`,
/// else whether it is Parquet) and, when `spans` are wanted, its line of `--removed-spans`.
fn render(
    doc: Document,
    rewritten: Rewritten,
    parquet: Option<bool>,
    spans: bool,
    text_field: &str,
) -> anyhow::Result<Rendered> {
    let report = &rewritten.report;
    let spans = match spans && (report.units_removed > 0 || report.dropped) {
        true => Some(report_line(&doc, report)?),
        false => None,
    };
    let dropped = report.dropped;
    let record = match parquet {
        _ if dropped => Record::None,
        None => Record::None,
        Some(true) => Record::Row(doc, rewritten.text),
        Some(false) => Record::Line(record_line(&doc, &rewritten, text_field)?),
    };
    Ok(Rendered {
        record,
        spans,
        dropped,
    })
}

/// A document's JSON record with the text field replaced, or a line `{"id", "url", "title",
/// "text"}` for a document read from another format.
fn record_line(doc: &Document, rewritten: &Rewritten, text_field: &str) -> anyhow::Result<Vec<u8>> {
    Ok(
        match doc.raw.as_deref().filter(|raw| raw.first() == Some(&b'{')) {
            Some(raw) => rewrite_record(raw, text_field, &rewritten.text)?,
            None => serde_json::to_vec(&TextLine {
                id: &doc.id,
                url: doc.url.as_deref(),
                title: doc.title.as_deref(),
                text: &rewritten.text,
            })?,
        },
    )
}

/// A line of `--removed-spans` (with its newline).
fn report_line(doc: &Document, report: &UnitReport) -> anyhow::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(&RemovedLine {
        id: &doc.id,
        report,
    })?;
    line.push(b'\n');
    Ok(line)
}

/// Prints the figures of the pass below the document (two lines) to stderr.
pub fn print_summary(s: &UnitSummary) {
    let f = &s.figures;
    eprintln!(
        "neardup: below the document, {} documents ({:.1} MB of text) in {:.2} s ({:.1} MB/s): {} of {} units removed ({:.1} MB, {:.1}%), {} documents dropped, {} kept",
        f.documents,
        f.text_bytes as f64 / 1e6,
        s.seconds,
        s.mb_per_second,
        f.units_removed,
        f.units,
        f.bytes_removed as f64 / 1e6,
        100.0 * f.bytes_removed as f64 / (f.text_bytes.max(1)) as f64,
        f.documents_dropped,
        s.documents_kept
    );
    eprintln!(
        "neardup: {} reads, {} seen keys loaded{}, {:.1} MB spilled",
        f.passes,
        f.seen_loaded,
        s.seen_saved
            .map_or(String::new(), |n| format!(", {n} saved")),
        f.spilled_bytes as f64 / 1e6
    );
}
