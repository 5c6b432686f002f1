//! `neardup eval`: precision, recall and F1 of the near-duplicate decision on labelled pairs.
//!
//! Input: JSON lines, one pair a line, with two text fields and a label (field names are
//! options). Labels are compared as numbers (a number, or a string holding one); pairs whose
//! label is in neither `--positive` nor `--negative`, or is null, are ignored and counted. Pairs
//! are read a batch at a time (a share of `--memory`), fingerprinted in parallel and decided by
//! the [`Policy`] (the same decision
//! as `dedup`, `compare` and the database: [`Policy::decide`]). `--sweep` prints the metrics
//! over the whole range of the method's parameter; `--plot` draws histograms of the score of
//! positives and negatives.

mod read;
mod tally;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use neardup_core::measure::FeatureSet;
use neardup_core::{Fingerprinter, Fingerprints};
use neardup_dedup::{Measure, Method, Policy, Side};
use rayon::prelude::*;
use serde::Serialize;

use crate::budget_args::BudgetArgs;
use crate::output::Outputs;
use crate::plot::draw_svg;
use crate::policy_args::PolicyArgs;
use read::PairReader;
use tally::{Outcome, PlotTally, Tally};

/// Arguments of `neardup eval`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("memory", |arg| arg.help(MEMORY_HELP)))]
pub struct EvalArgs {
    /// JSON lines of labelled pairs.
    pairs: PathBuf,
    /// Labels of positive pairs (near-duplicates), comma-separated numbers.
    #[arg(long, value_delimiter = ',', required = true, num_args = 1..)]
    positive: Vec<f64>,
    /// Labels of negative pairs, comma-separated numbers.
    #[arg(long, value_delimiter = ',', required = true, num_args = 1..)]
    negative: Vec<f64>,
    /// Field of the first text.
    #[arg(long, default_value = "text_a")]
    text_a_field: String,
    /// Field of the second text.
    #[arg(long, default_value = "text_b")]
    text_b_field: String,
    /// Field of the label.
    #[arg(long, default_value = "label")]
    label_field: String,
    /// The decision (`--method overlap --verify jaccard` flags every pair whose Jaccard
    /// reaches the threshold, with no candidate filter).
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Print the metrics for k = 0..=bits/4 (simhash) or thresholds 0.00..1.00 in steps of 0.05.
    #[arg(long)]
    sweep: bool,
    /// Draw histograms of the score of positives and negatives to this SVG file.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Write one JSON object instead of tables.
    #[arg(long)]
    json: bool,
    /// Replace invalid UTF-8 with U+FFFD instead of failing.
    #[arg(long)]
    lossy: bool,
}

/// What `--memory` bounds in `neardup eval`.
const MEMORY_HELP: &str = "Memory the run may hold for its own data (e.g. 512M, 2G, 8GiB): \
    pairs are read and scored a batch at a time (a 32nd of it of text, at most 32 MiB; a \
    batch's texts and shingle sets take about 9 bytes a character) and only counts are kept \
    per pair (nothing grows with the pairs but an entry per distinct label). The report is the \
    same at any budget";

/// Whether a used pair is a positive or a negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Positive,
    Negative,
}

/// One fingerprinted pair.
#[derive(Debug)]
struct Scored {
    class: Option<Class>,
    label: f64,
    a: (Fingerprints, FeatureSet),
    b: (Fingerprints, FeatureSet),
}

impl Scored {
    /// Whether `policy` decides the pair a duplicate.
    fn flagged(&self, policy: &Policy) -> bool {
        let (a, b) = (&self.a, &self.b);
        // Both sides carry what any policy needs: a failure would be a bug, and counts as no.
        policy
            .decide(&Side::new(&a.0, Some(&a.1)), &Side::new(&b.0, Some(&b.1)))
            .is_ok_and(|d| d.is_duplicate())
    }

    /// The value the policy thresholds last (for plots): the verified measure, the MinHash
    /// estimate, or the SimHash distance.
    fn score(&self, policy: &Policy) -> f64 {
        let (a, b) = (&self.a, &self.b);
        match (policy.verify, policy.method) {
            (Some(_), _) => policy.verification_evidence(&a.1, &b.1).map_or(0.0, |e| {
                if e.measure == Measure::LengthRatio {
                    0.0
                } else {
                    e.value
                }
            }),
            (None, Method::Minhash) => match (&a.0.minhash, &b.0.minhash) {
                (Some(x), Some(y)) => neardup_core::minhash::estimate_jaccard(x, y),
                _ => 0.0,
            },
            (None, _) => policy
                .distance_evidence(&a.0, &b.0)
                .map_or(f64::INFINITY, |e| e.value),
        }
    }
}

/// How many pairs with one label the rule flags.
#[derive(Debug, Serialize)]
struct LabelFlags {
    label: f64,
    pairs: usize,
    flagged: usize,
}

/// How the input's lines were used.
#[derive(Debug, Default, Serialize)]
struct Counts {
    lines: usize,
    positives: usize,
    negatives: usize,
    /// Pairs whose label is null.
    null_labels: usize,
    /// Pairs whose label is neither positive nor negative (or not a number).
    other_labels: usize,
    /// Pairs whose label is not a number (among `other_labels`).
    non_numeric_labels: usize,
}

/// Confusion counts and the metrics derived from them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
struct Metrics {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
    precision: f64,
    recall: f64,
    f1: f64,
}

impl Metrics {
    fn from_counts(tp: usize, fp: usize, fn_: usize, tn: usize) -> Self {
        // Undefined ratios (nothing predicted, nothing to find) count as 0.
        let ratio = |num: usize, den: usize| {
            if den == 0 {
                0.0
            } else {
                num as f64 / den as f64
            }
        };
        Metrics {
            tp,
            fp,
            fn_,
            tn,
            precision: ratio(tp, tp + fp),
            recall: ratio(tp, tp + fn_),
            f1: ratio(2 * tp, 2 * tp + fp + fn_),
        }
    }
}

/// A policy's parameters in a report: the profile is named once, at the top.
#[derive(Debug, Serialize)]
struct Rule {
    method: Method,
    k: u32,
    threshold: f64,
    verify: Option<neardup_dedup::VerifyMeasure>,
    min_length_ratio: f64,
}

impl From<&Policy> for Rule {
    fn from(p: &Policy) -> Rule {
        Rule {
            method: p.method,
            k: p.k,
            threshold: p.threshold,
            verify: p.verify,
            min_length_ratio: p.min_length_ratio,
        }
    }
}

/// One row of a sweep.
#[derive(Debug, Serialize)]
struct SweepRow {
    rule: Rule,
    #[serde(flatten)]
    metrics: Metrics,
}

/// Everything `eval` reports.
#[derive(Debug, Serialize)]
struct Report {
    input: String,
    profile: String,
    bits: u32,
    counts: Counts,
    rule: Rule,
    decision: String,
    #[serde(flatten)]
    metrics: Metrics,
    /// Flagged pairs per label, ignored labels included.
    by_label: Vec<LabelFlags>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep: Option<Vec<SweepRow>>,
}

/// Runs `neardup eval`.
pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    let policy = args.policy.policy()?;
    if args.policy.show(&policy)? {
        return Ok(());
    }
    if let Some(label) = args.positive.iter().find(|l| args.negative.contains(l)) {
        bail!("label {label} is both --positive and --negative");
    }
    if let Some(plot) = &args.plot {
        check_plot_path(plot)?;
    }
    let (budget, _spill_dir) = args.budget.budget()?;
    let fingerprinter = Fingerprinter::new(policy.profile.clone())?;
    let side = |text: &str| {
        (
            fingerprinter.fingerprint(text),
            fingerprinter.feature_set(text),
        )
    };
    let sweep = if args.sweep {
        sweep_policies(&policy)
    } else {
        Vec::new()
    };
    let mut tally = Tally::new(&policy, sweep.len(), args.plot.is_some());
    let mut reader = PairReader::open(&args)?;
    loop {
        let batch = reader.batch(batch_bytes(budget.memory))?;
        if batch.is_empty() {
            break;
        }
        let outcomes: Vec<Outcome> = batch
            .into_par_iter()
            .map(|pair| {
                let scored = Scored {
                    class: pair.class,
                    label: pair.label,
                    a: side(&pair.a),
                    b: side(&pair.b),
                };
                Outcome::of(&scored, &policy, &sweep, args.plot.is_some())
            })
            .collect();
        for outcome in &outcomes {
            tally.add(outcome);
        }
    }
    let counts = reader.finish(&args.pairs)?;
    let report = Report {
        input: args.pairs.display().to_string(),
        profile: policy.profile.name.clone(),
        bits: policy.profile.bits.count(),
        counts,
        rule: Rule::from(&policy),
        decision: policy.describe(),
        metrics: tally.confusion.metrics(),
        by_label: tally.by_label(),
        sweep: args.sweep.then(|| {
            sweep
                .iter()
                .zip(&tally.sweep)
                .map(|(swept, confusion)| SweepRow {
                    metrics: confusion.metrics(),
                    rule: Rule::from(swept),
                })
                .collect()
        }),
    };
    if let (Some(path), Some(histograms)) = (&args.plot, tally.plot.take()) {
        plot(path, histograms, &report)?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_report(&mut out, &report)?;
    }
    Ok(())
}

/// Bytes of text scored at a time within a budget of `memory` bytes: a 32nd of it (the
/// shingle sets of a text take about 8 bytes a character, and the batch's texts, fingerprints
/// and sets are all held while it is scored), at most 32 MiB.
fn batch_bytes(memory: u64) -> usize {
    usize::try_from(memory / 32).map_or(32 << 20, |bytes| bytes.min(32 << 20))
}

/// Whether a sweep runs through k (SimHash alone) or the threshold (everything else).
fn sweeps_k(policy: &Policy) -> bool {
    policy.method == Method::Simhash && policy.verify.is_none()
}

/// The policies a sweep runs through: k = 0..=bits/4 for SimHash alone, else thresholds
/// 0.00..=1.00 (0 left out for the overlap search, which needs a positive threshold).
fn sweep_policies(policy: &Policy) -> Vec<Policy> {
    if sweeps_k(policy) {
        (0..=policy.profile.bits.count() / 4)
            .map(|k| Policy {
                k,
                ..policy.clone()
            })
            .collect()
    } else {
        let first = u32::from(policy.method == Method::Overlap);
        (first..=20)
            .map(|step| Policy {
                threshold: f64::from(step) * 0.05,
                ..policy.clone()
            })
            .collect()
    }
}

/// Checks the plot file's extension: SVG only (PNG would need a bundled font to draw text).
fn check_plot_path(path: &Path) -> anyhow::Result<()> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => Ok(()),
        _ => bail!(
            "--plot {}: only SVG is supported (name the file .svg)",
            path.display()
        ),
    }
}

/// Draws the score histograms of positives and negatives (counted in `plot`), titled with the
/// report's metrics.
fn plot(path: &Path, mut plot: PlotTally, report: &Report) -> anyhow::Result<()> {
    let m = &report.metrics;
    plot.histograms.title = format!(
        "{} ({}): {}; P {:.3} R {:.3} F1 {:.3}",
        file_name(&report.input),
        report.profile,
        report.decision,
        m.precision,
        m.recall,
        m.f1
    );
    let svg =
        draw_svg(&plot.histograms).with_context(|| format!("cannot draw {}", path.display()))?;
    let mut outputs = Outputs::default();
    outputs.write(path, |out| Ok(out.write_all(svg.as_bytes())?))?;
    outputs.commit()
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn print_report(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let c = &r.counts;
    writeln!(out, "pairs      {}", r.input)?;
    writeln!(
        out,
        "used       {} of {} ({} positive, {} negative); ignored: {} null labels, {} other labels",
        c.positives + c.negatives,
        c.lines,
        c.positives,
        c.negatives,
        c.null_labels,
        c.other_labels
    )?;
    writeln!(out, "profile    {} ({} bits)", r.profile, r.bits)?;
    writeln!(out, "decision   {}", r.decision)?;
    let m = &r.metrics;
    writeln!(
        out,
        "precision  {:.3}   recall {:.3}   F1 {:.3}   (TP {}, FP {}, FN {}, TN {})",
        m.precision, m.recall, m.f1, m.tp, m.fp, m.fn_, m.tn
    )?;
    let flagged: Vec<String> = r
        .by_label
        .iter()
        .map(|l| format!("label {}: {} of {}", l.label, l.flagged, l.pairs))
        .collect();
    writeln!(out, "flagged    {}", flagged.join("; "))?;
    if let Some(rows) = &r.sweep {
        let by_k = r.rule.method == Method::Simhash && r.rule.verify.is_none();
        let parameter = if by_k { "k" } else { "threshold" };
        writeln!(out)?;
        writeln!(
            out,
            "{parameter:>9} {:>9} {:>7} {:>6} {:>5} {:>5} {:>5} {:>5}",
            "precision", "recall", "F1", "TP", "FP", "FN", "TN"
        )?;
        for row in rows {
            let value = if by_k {
                row.rule.k.to_string()
            } else {
                format!("{:.2}", row.rule.threshold)
            };
            let m = &row.metrics;
            writeln!(
                out,
                "{value:>9} {:>9.3} {:>7.3} {:>6.3} {:>5} {:>5} {:>5} {:>5}",
                m.precision, m.recall, m.f1, m.tp, m.fp, m.fn_, m.tn
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_follow_the_definitions() {
        let m = Metrics::from_counts(3, 1, 2, 4);
        assert_eq!(m.precision, 0.75);
        assert_eq!(m.recall, 0.6);
        assert_eq!(m.f1, 6.0 / 9.0);
        let none = Metrics::from_counts(0, 0, 5, 5);
        assert_eq!((none.precision, none.recall, none.f1), (0.0, 0.0, 0.0));
    }
}
