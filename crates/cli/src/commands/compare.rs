//! `neardup compare`: whether two documents are duplicates by the policy (the same decision as
//! `dedup`, `eval` and the database), how similar they are by every measure, and which
//! features make the difference. Each is read as `dedup` reads an input (the library's
//! `read_one_document`: the same formats, the same `--html` text of a page).

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use neardup_core::measure::{containment, cosine, jaccard, token_edit_distance};
use neardup_core::Fingerprinter;
use neardup_dedup::{Decision, Policy, Side};
use neardup_ingest::read_one_document;
use serde::Serialize;

use crate::documents::ReadArgs;
use crate::policy_args::PolicyArgs;

/// Arguments of `neardup compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// First document: a file of one document in any input format (text, HTML, a JSONL or
    /// WARC file of one record, ...), read as `dedup` reads it; `-` for standard input.
    a: PathBuf,
    /// Second document.
    b: PathBuf,
    #[command(flatten)]
    policy: PolicyArgs,
    /// How many of the features that differ most to show.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// How the documents are read.
    #[command(flatten)]
    read: ReadArgs,
    /// Write one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Everything `compare` reports.
#[derive(Debug, Serialize)]
struct Comparison {
    profile: String,
    /// The policy, in words.
    policy: String,
    /// The policy's decision, with the measure that decided, its value and threshold.
    decision: Decision,
    a: Text,
    b: Text,
    distance: u32,
    bits: u32,
    similarity: f64,
    jaccard: f64,
    containment_a_in_b: f64,
    containment_b_in_a: f64,
    cosine: f64,
    /// `None` when the texts are too long for the quadratic algorithm.
    token_edit_distance: Option<usize>,
    differences: Vec<Difference>,
}

#[derive(Debug, Serialize)]
struct Text {
    path: String,
    bytes: usize,
    features: u64,
    simhash: String,
    digest: String,
}

/// A feature whose weight differs between the two texts.
#[derive(Debug, Serialize)]
struct Difference {
    feature: String,
    weight_a: f64,
    weight_b: f64,
}

/// Runs `neardup compare`.
pub fn run(args: CompareArgs) -> anyhow::Result<()> {
    let policy = args.policy.policy()?;
    if args.policy.show(&policy)? {
        return Ok(());
    }
    let fingerprinter = Fingerprinter::new(policy.profile.clone())?;
    let options = args.read.options();
    let (_, text_a) = read_one_document(&args.a, &options)?;
    let (_, text_b) = read_one_document(&args.b, &options)?;
    let comparison = compare(&policy, &fingerprinter, &args, &text_a, &text_b)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &comparison)?;
        writeln!(out)?;
    } else {
        print_table(&mut out, &comparison)?;
    }
    Ok(())
}

fn compare(
    policy: &Policy,
    fingerprinter: &Fingerprinter,
    args: &CompareArgs,
    a: &str,
    b: &str,
) -> anyhow::Result<Comparison> {
    let (fa, fb) = (fingerprinter.fingerprint(a), fingerprinter.fingerprint(b));
    let distance = fa.simhash.distance(fb.simhash)?;
    let (set_a, set_b) = (fingerprinter.feature_set(a), fingerprinter.feature_set(b));
    let (weights_a, weights_b) = (
        fingerprinter.weighted_features(a),
        fingerprinter.weighted_features(b),
    );
    let vector = |features: &[neardup_core::WeightedFeature]| -> HashMap<u64, f64> {
        features.iter().map(|f| (f.hash, f.weight)).collect()
    };
    let (vector_a, vector_b) = (vector(&weights_a), vector(&weights_b));
    let decision = policy.decide(&Side::new(&fa, Some(&set_a)), &Side::new(&fb, Some(&set_b)))?;
    let side = |path: &PathBuf, text: &str, f: &neardup_core::Fingerprints| Text {
        path: path.display().to_string(),
        bytes: text.len(),
        features: f.features,
        simhash: f.simhash.to_string(),
        digest: f.digest.to_string(),
    };
    Ok(Comparison {
        profile: fingerprinter.profile().name.clone(),
        policy: policy.describe(),
        decision,
        a: side(&args.a, a, &fa),
        b: side(&args.b, b, &fb),
        distance,
        bits: fa.simhash.bits().count(),
        similarity: fa.simhash.similarity(fb.simhash)?,
        jaccard: jaccard(&set_a, &set_b),
        containment_a_in_b: containment(&set_a, &set_b),
        containment_b_in_a: containment(&set_b, &set_a),
        cosine: cosine(&vector_a, &vector_b),
        token_edit_distance: token_edit_distance(
            &fingerprinter.token_hashes(a),
            &fingerprinter.token_hashes(b),
        ),
        differences: differences(&weights_a, &weights_b, args.top),
    })
}

/// The `top` features whose weights differ most between the texts, largest difference first
/// (ties by feature text).
fn differences(
    a: &[neardup_core::WeightedFeature],
    b: &[neardup_core::WeightedFeature],
    top: usize,
) -> Vec<Difference> {
    let mut by_text: HashMap<&str, (f64, f64)> = HashMap::new();
    for f in a {
        by_text.entry(&f.text).or_default().0 += f.weight;
    }
    for f in b {
        by_text.entry(&f.text).or_default().1 += f.weight;
    }
    let mut differences: Vec<Difference> = by_text
        .into_iter()
        .filter(|(_, (wa, wb))| wa != wb)
        .map(|(feature, (weight_a, weight_b))| Difference {
            feature: feature.to_string(),
            weight_a,
            weight_b,
        })
        .collect();
    differences.sort_by(|x, y| {
        let gap = |d: &Difference| (d.weight_a - d.weight_b).abs();
        gap(y)
            .total_cmp(&gap(x))
            .then_with(|| x.feature.cmp(&y.feature))
    });
    differences.truncate(top);
    differences
}

fn print_table(out: &mut impl Write, c: &Comparison) -> std::io::Result<()> {
    let evidence = c.decision.evidence();
    let verdict = match c.decision {
        Decision::Duplicate {
            kind: neardup_dedup::Kind::Exact,
            ..
        } => "exact duplicate (same normalised text)".to_string(),
        Decision::Duplicate { .. } => format!(
            "near-duplicate ({} {:.3}, threshold {})",
            measure_name(evidence.measure),
            evidence.value,
            evidence.threshold
        ),
        Decision::Unique { .. } => format!(
            "not a near-duplicate ({} {}, threshold {})",
            measure_name(evidence.measure),
            round3(evidence.value),
            evidence.threshold
        ),
    };
    writeln!(out, "policy             {}", c.policy)?;
    for (name, side) in [("A", &c.a), ("B", &c.b)] {
        writeln!(
            out,
            "{name}                  {}  ({} bytes, {} features, simhash {})",
            side.path, side.bytes, side.features, side.simhash
        )?;
    }
    writeln!(
        out,
        "hamming distance   {} of {} bits (similarity {:.3})",
        c.distance, c.bits, c.similarity
    )?;
    writeln!(out, "verdict            {verdict}")?;
    writeln!(out, "jaccard            {:.3}", c.jaccard)?;
    writeln!(
        out,
        "containment        A in B {:.3}, B in A {:.3}",
        c.containment_a_in_b, c.containment_b_in_a
    )?;
    writeln!(out, "cosine             {:.3}", c.cosine)?;
    match c.token_edit_distance {
        Some(d) => writeln!(out, "token edit dist.   {d}")?,
        None => writeln!(out, "token edit dist.   not computed (texts too long)")?,
    }
    if !c.differences.is_empty() {
        writeln!(out, "\nfeatures that weigh most in the difference:")?;
        writeln!(out, "  {:>8} {:>8}  feature", "weight A", "weight B")?;
        for d in &c.differences {
            let shown: String = d.feature.chars().take(70).collect();
            writeln!(
                out,
                "  {:>8.3} {:>8.3}  {:?}",
                d.weight_a, d.weight_b, shown
            )?;
        }
    }
    Ok(())
}

/// A measure as the table names it.
fn measure_name(measure: neardup_dedup::Measure) -> String {
    serde_json::to_value(measure)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_default()
}

/// A value with at most three decimals (a distance shows as an integer).
fn round3(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value}")
    } else {
        format!("{value:.3}")
    }
}
