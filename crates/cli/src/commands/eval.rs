//! `neardup eval`: precision, recall and F1 of the near-duplicate decision on labelled pairs.
//!
//! Input: JSON lines, one pair a line, with two text fields and a label (field names are
//! options). Labels are compared as numbers (a number, or a string holding one); pairs whose
//! label is in neither `--positive` nor `--negative`, or is null, are ignored and counted. Each
//! used pair is scored in parallel by the SimHash distance and by the exact and estimated set
//! measures of the profile's features, then classified by `--method`. `--sweep` prints the
//! metrics over the whole range of the method's parameter; `--plot` draws histograms of the
//! score of positives and negatives.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use neardup_core::measure::{containment, jaccard};
use neardup_core::minhash::{estimate_jaccard, MinHasher};
use neardup_core::Fingerprinter;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::input::read_text;
use crate::plot::{draw_svg, Histograms};
use crate::profile_args::ProfileArgs;

/// How a pair is decided to be a near-duplicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// SimHash Hamming distance ≤ `--k`.
    Simhash,
    /// MinHash-estimated Jaccard of the feature sets ≥ `--threshold`.
    Minhash,
    /// Exact Jaccard of the feature sets ≥ `--threshold`.
    Jaccard,
    /// The larger of the two containments of the feature sets ≥ `--threshold`.
    Containment,
    /// SimHash distance ≤ `--k` as the candidate filter, then `--verify` ≥ `--threshold`.
    Cascade,
}

/// The exact measure a cascade verifies candidates with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Verify {
    /// Jaccard resemblance of the feature sets.
    Jaccard,
    /// The larger of the two containments of the feature sets.
    Containment,
}

/// Arguments of `neardup eval`.
#[derive(Debug, clap::Args)]
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
    #[command(flatten)]
    profile: ProfileArgs,
    /// The decision rule.
    #[arg(long, value_enum, default_value_t = Method::Cascade)]
    method: Method,
    /// Largest SimHash distance of a near-duplicate (simhash), or of a candidate (cascade).
    #[arg(long, default_value_t = neardup_dedup::DEFAULT_K)]
    k: u32,
    /// Smallest similarity of a near-duplicate (minhash, jaccard, containment, cascade).
    #[arg(long, default_value_t = neardup_dedup::DEFAULT_THRESHOLD)]
    threshold: f64,
    /// The measure a cascade verifies its candidates with.
    #[arg(long, value_enum, default_value_t = Verify::Jaccard)]
    verify: Verify,
    /// With an exact set measure (jaccard, containment, cascade): flag a pair only if the
    /// smaller feature set has at least R times as many features as the larger (0, the
    /// default, turns this off; `neardup dedup --min-length-ratio`). The sweep keeps it fixed.
    #[arg(long, value_name = "R", default_value_t = 0.0)]
    min_length_ratio: f64,
    /// MinHash signature length, when the profile does not set one.
    #[arg(long, default_value_t = 128)]
    num_perm: usize,
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

/// Whether a used pair is a positive or a negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Positive,
    Negative,
}

/// One pair to score.
#[derive(Debug)]
struct LabelledPair {
    /// `None` for a label that is neither positive nor negative: scored, but only counted.
    class: Option<Class>,
    label: f64,
    a: String,
    b: String,
}

/// One scored pair.
#[derive(Debug, Clone, Copy)]
struct Scored {
    class: Option<Class>,
    label: f64,
    scores: Scores,
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

/// Every measure of one pair.
#[derive(Debug, Clone, Copy)]
struct Scores {
    distance: u32,
    jaccard: f64,
    containment: f64,
    minhash: f64,
    /// Size of the smaller feature set over the size of the larger (1 for two empty sets).
    length_ratio: f64,
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

/// One decision rule, fully parameterised.
#[derive(Debug, Clone, Copy, Serialize)]
struct Rule {
    method: Method,
    #[serde(skip_serializing_if = "Option::is_none")]
    k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    threshold: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verify: Option<Verify>,
    /// The length-ratio guard, when it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    min_length_ratio: Option<f64>,
}

impl Rule {
    fn new(method: Method, k: u32, threshold: f64, verify: Verify, min_length_ratio: f64) -> Self {
        let uses_k = matches!(method, Method::Simhash | Method::Cascade);
        let uses_threshold = method != Method::Simhash;
        Rule {
            method,
            k: uses_k.then_some(k),
            threshold: uses_threshold.then_some(threshold),
            verify: (method == Method::Cascade).then_some(verify),
            min_length_ratio: (min_length_ratio > 0.0).then_some(min_length_ratio),
        }
    }

    /// The similarity this rule thresholds (none for plain SimHash).
    fn similarity(&self, s: &Scores) -> Option<f64> {
        match self.method {
            Method::Simhash => None,
            Method::Minhash => Some(s.minhash),
            Method::Jaccard => Some(s.jaccard),
            Method::Containment => Some(s.containment),
            Method::Cascade => Some(match self.verify {
                Some(Verify::Containment) => s.containment,
                _ => s.jaccard,
            }),
        }
    }

    fn flags(&self, s: &Scores) -> bool {
        let close = self.k.is_none_or(|k| s.distance <= k);
        let similar = match (self.similarity(s), self.threshold) {
            (Some(similarity), Some(threshold)) => similarity >= threshold,
            _ => true,
        };
        let long_enough = self.min_length_ratio.is_none_or(|r| s.length_ratio >= r);
        close && similar && long_enough
    }

    fn describe(&self) -> String {
        let verify = match self.verify {
            Some(Verify::Containment) => "containment",
            _ => "jaccard",
        };
        let k = self.k.unwrap_or_default();
        let t = self.threshold.unwrap_or_default();
        let rule = match self.method {
            Method::Simhash => format!("simhash distance <= {k}"),
            Method::Minhash => format!("minhash estimated jaccard >= {t:.2}"),
            Method::Jaccard => format!("jaccard >= {t:.2}"),
            Method::Containment => format!("max containment >= {t:.2}"),
            Method::Cascade => format!("simhash distance <= {k}, then {verify} >= {t:.2}"),
        };
        match self.min_length_ratio {
            Some(r) => format!("{rule}, length ratio >= {r:.2}"),
            None => rule,
        }
    }

    fn evaluate(&self, scored: &[Scored]) -> Metrics {
        let (mut tp, mut fp, mut fn_, mut tn) = (0, 0, 0, 0);
        for pair in scored {
            match (pair.class, self.flags(&pair.scores)) {
                (Some(Class::Positive), true) => tp += 1,
                (Some(Class::Positive), false) => fn_ += 1,
                (Some(Class::Negative), true) => fp += 1,
                (Some(Class::Negative), false) => tn += 1,
                (None, _) => {}
            }
        }
        Metrics::from_counts(tp, fp, fn_, tn)
    }

    /// Pairs and flagged pairs per numeric label, every label included, in label order.
    fn flags_by_label(&self, scored: &[Scored]) -> Vec<LabelFlags> {
        let mut by_label: Vec<LabelFlags> = Vec::new();
        for pair in scored {
            let flagged = usize::from(self.flags(&pair.scores));
            match by_label.iter_mut().find(|l| l.label == pair.label) {
                Some(entry) => {
                    entry.pairs += 1;
                    entry.flagged += flagged;
                }
                None => by_label.push(LabelFlags {
                    label: pair.label,
                    pairs: 1,
                    flagged,
                }),
            }
        }
        by_label.sort_by(|a, b| a.label.total_cmp(&b.label));
        by_label
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
    if !(0.0..=1.0).contains(&args.threshold) {
        bail!(
            "--threshold must be between 0 and 1 (got {})",
            args.threshold
        );
    }
    if !(0.0..=1.0).contains(&args.min_length_ratio) {
        bail!(
            "--min-length-ratio must be between 0 and 1 (got {})",
            args.min_length_ratio
        );
    }
    if args.min_length_ratio > 0.0 && matches!(args.method, Method::Simhash | Method::Minhash) {
        bail!("--min-length-ratio compares feature-set sizes: use it with --method jaccard, containment or cascade");
    }
    if let Some(label) = args.positive.iter().find(|l| args.negative.contains(l)) {
        bail!("label {label} is both --positive and --negative");
    }
    if let Some(plot) = &args.plot {
        check_plot_path(plot)?;
    }
    let mut profile = args.profile.load()?;
    let num_perm = profile.minhash.map_or(args.num_perm, |m| m.num_perm);
    if num_perm == 0 {
        bail!("--num-perm must be at least 1");
    }
    let mut minhash_options = profile.minhash.unwrap_or_default();
    minhash_options.num_perm = num_perm;
    // The signature is computed here from the feature set; the fingerprinter need not.
    profile.minhash = None;
    let fingerprinter = Fingerprinter::new(profile)?;
    let minhasher = MinHasher::new(minhash_options);

    let (pairs, counts) = read_pairs(&args)?;
    let scored: Vec<Scored> = pairs
        .par_iter()
        .map(|pair| {
            Ok(Scored {
                class: pair.class,
                label: pair.label,
                scores: score(&fingerprinter, &minhasher, pair)?,
            })
        })
        .collect::<anyhow::Result<_>>()?;

    let rule = Rule::new(
        args.method,
        args.k,
        args.threshold,
        args.verify,
        args.min_length_ratio,
    );
    let bits = fingerprinter.profile().bits.count();
    let sweep = args.sweep.then(|| {
        sweep_rules(&args, bits)
            .into_iter()
            .map(|rule| SweepRow {
                metrics: rule.evaluate(&scored),
                rule,
            })
            .collect()
    });
    let report = Report {
        input: args.pairs.display().to_string(),
        profile: fingerprinter.profile().name.clone(),
        bits,
        counts,
        rule,
        decision: rule.describe(),
        metrics: rule.evaluate(&scored),
        by_label: rule.flags_by_label(&scored),
        sweep,
    };
    if let Some(path) = &args.plot {
        plot(path, &rule, bits, &scored, &report)?;
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

/// The rules a sweep runs through: k = 0..=bits/4 for SimHash, else thresholds 0.00..=1.00.
fn sweep_rules(args: &EvalArgs, bits: u32) -> Vec<Rule> {
    if args.method == Method::Simhash {
        (0..=bits / 4)
            .map(|k| Rule::new(args.method, k, args.threshold, args.verify, 0.0))
            .collect()
    } else {
        (0..=20)
            .map(|step| {
                let threshold = f64::from(step) * 0.05;
                Rule::new(
                    args.method,
                    args.k,
                    threshold,
                    args.verify,
                    args.min_length_ratio,
                )
            })
            .collect()
    }
}

/// Reads and classifies the pairs; errors name the line.
fn read_pairs(args: &EvalArgs) -> anyhow::Result<(Vec<LabelledPair>, Counts)> {
    let path = &args.pairs;
    let text = read_text(path, args.lossy)?;
    let mut counts = Counts::default();
    let mut pairs = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = index + 1;
        counts.lines += 1;
        let place = || format!("{}:{number}", path.display());
        let value: Value = serde_json::from_str(line)
            .map_err(|e| anyhow::anyhow!("{}: not a JSON object: {e}", place()))?;
        let Value::Object(mut object) = value else {
            bail!("{}: not a JSON object", place());
        };
        let label = match object.get(&args.label_field) {
            None => bail!("{}: no field {:?}", place(), args.label_field),
            Some(Value::Null) => {
                counts.null_labels += 1;
                continue;
            }
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            Some(_) => None,
        };
        let Some(label) = label else {
            counts.other_labels += 1;
            counts.non_numeric_labels += 1;
            continue;
        };
        let class = if args.positive.contains(&label) {
            counts.positives += 1;
            Some(Class::Positive)
        } else if args.negative.contains(&label) {
            counts.negatives += 1;
            Some(Class::Negative)
        } else {
            counts.other_labels += 1;
            None
        };
        let mut take = |field: &str| match object.remove(field) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => bail!("{}: field {field:?} is not a string", place()),
            None => bail!("{}: no field {field:?}", place()),
        };
        let a = take(&args.text_a_field)?;
        let b = take(&args.text_b_field)?;
        pairs.push(LabelledPair { class, label, a, b });
    }
    if counts.positives + counts.negatives == 0 {
        bail!(
            "{}: no pair has a --positive or --negative label ({} lines)",
            path.display(),
            counts.lines
        );
    }
    Ok((pairs, counts))
}

fn score(
    fingerprinter: &Fingerprinter,
    minhasher: &MinHasher,
    pair: &LabelledPair,
) -> anyhow::Result<Scores> {
    let (fa, fb) = (
        fingerprinter.fingerprint(&pair.a),
        fingerprinter.fingerprint(&pair.b),
    );
    let (sa, sb) = (
        fingerprinter.feature_set(&pair.a),
        fingerprinter.feature_set(&pair.b),
    );
    let (ma, mb) = (
        minhasher.signature(sa.as_slice().iter().copied()),
        minhasher.signature(sb.as_slice().iter().copied()),
    );
    Ok(Scores {
        distance: fa.simhash.distance(fb.simhash)?,
        jaccard: jaccard(&sa, &sb),
        containment: containment(&sa, &sb).max(containment(&sb, &sa)),
        minhash: estimate_jaccard(&ma, &mb),
        length_ratio: length_ratio(sa.len(), sb.len()),
    })
}

/// The smaller size over the larger, as `DedupOptions::length_ratio_passes` compares it.
fn length_ratio(a: usize, b: usize) -> f64 {
    let (short, long) = (a.min(b), a.max(b));
    if long == 0 {
        1.0
    } else {
        short as f64 / long as f64
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

/// Draws the score histograms of positives and negatives, with the rule's threshold.
fn plot(
    path: &Path,
    rule: &Rule,
    bits: u32,
    scored: &[Scored],
    report: &Report,
) -> anyhow::Result<()> {
    let m = &report.metrics;
    let title = format!(
        "{} ({}): {}; P {:.3} R {:.3} F1 {:.3}",
        file_name(&report.input),
        report.profile,
        report.decision,
        m.precision,
        m.recall,
        m.f1
    );
    let histograms = if rule.method == Method::Simhash {
        // One bin per distance, up to half the width (beyond it, fingerprints are unrelated).
        let bins = bits as usize / 2 + 1;
        let mut h = Histograms::new(title, "SimHash Hamming distance", 0.0, bins as f64, bins);
        for (positive, s) in classified(scored) {
            h.add(positive, f64::from(s.distance.min(bits / 2)));
        }
        h.threshold = rule.k.map(|k| f64::from(k) + 1.0);
        h
    } else {
        let label = match (rule.method, rule.verify) {
            (Method::Minhash, _) => "MinHash-estimated Jaccard",
            (Method::Containment, _) | (_, Some(Verify::Containment)) => "max containment",
            _ => "Jaccard",
        };
        let mut h = Histograms::new(title, label, 0.0, 1.0, 20);
        for (positive, s) in classified(scored) {
            h.add(positive, rule.similarity(s).unwrap_or_default());
        }
        h.threshold = rule.threshold;
        h
    };
    draw_svg(path, &histograms).with_context(|| format!("cannot draw {}", path.display()))
}

/// The positive and negative pairs' scores, each with whether it is positive.
fn classified(scored: &[Scored]) -> impl Iterator<Item = (bool, &Scores)> {
    scored
        .iter()
        .filter_map(|p| p.class.map(|c| (c == Class::Positive, &p.scores)))
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
        let parameter = if r.rule.method == Method::Simhash {
            "k"
        } else {
            "threshold"
        };
        writeln!(out)?;
        writeln!(
            out,
            "{parameter:>9} {:>9} {:>7} {:>6} {:>5} {:>5} {:>5} {:>5}",
            "precision", "recall", "F1", "TP", "FP", "FN", "TN"
        )?;
        for row in rows {
            let value = match (r.rule.method, row.rule.k, row.rule.threshold) {
                (Method::Simhash, Some(k), _) => k.to_string(),
                (_, _, Some(t)) => format!("{t:.2}"),
                _ => String::new(),
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

    #[test]
    fn cascade_needs_both_tests() {
        let rule = Rule::new(Method::Cascade, 3, 0.5, Verify::Jaccard, 0.0);
        let scores = |distance, jaccard| Scores {
            distance,
            jaccard,
            containment: 1.0,
            minhash: 0.0,
            length_ratio: 1.0,
        };
        assert!(rule.flags(&scores(3, 0.5)));
        assert!(!rule.flags(&scores(4, 0.9)));
        assert!(!rule.flags(&scores(0, 0.4)));
        let rule = Rule::new(Method::Cascade, 3, 0.5, Verify::Containment, 0.0);
        assert!(rule.flags(&scores(0, 0.4)));
    }

    #[test]
    fn length_ratio_guard_needs_a_long_enough_partner() {
        let scores = |containment, length_ratio| Scores {
            distance: 30,
            jaccard: 0.0,
            containment,
            minhash: 0.0,
            length_ratio,
        };
        let guarded = Rule::new(Method::Containment, 3, 0.9, Verify::Jaccard, 0.2);
        assert_eq!(
            guarded.describe(),
            "max containment >= 0.90, length ratio >= 0.20"
        );
        assert!(guarded.flags(&scores(0.95, 0.2)), "the bound is inclusive");
        assert!(!guarded.flags(&scores(1.0, 0.19)));
        assert!(!guarded.flags(&scores(0.89, 0.5)));
        let off = Rule::new(Method::Containment, 3, 0.9, Verify::Jaccard, 0.0);
        assert!(off.flags(&scores(1.0, 0.01)));
        assert_eq!(off.describe(), "max containment >= 0.90");
        assert_eq!(length_ratio(20, 100), 0.2);
        assert_eq!(length_ratio(100, 20), 0.2);
        assert_eq!(length_ratio(0, 0), 1.0);
    }
}
