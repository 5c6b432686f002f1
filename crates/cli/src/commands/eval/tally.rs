//! What `eval` keeps of the pairs scored: counts only (confusion counts for the policy and each
//! swept policy, pairs per label, histogram bins), so memory does not grow with the pairs.

use neardup_dedup::{Method, Policy, VerifyMeasure};

use super::{Class, LabelFlags, Metrics, Scored};
use crate::plot::Histograms;

/// What one scored pair contributes: its class and label, whether the policy and each swept
/// policy flag it, and its score for the plot.
pub(super) struct Outcome {
    class: Option<Class>,
    label: f64,
    flagged: bool,
    swept: Vec<bool>,
    score: f64,
}

impl Outcome {
    /// The outcome of `pair` under `policy`, each of `sweep`, and (for a plot) its score.
    pub fn of(pair: &Scored, policy: &Policy, sweep: &[Policy], plot: bool) -> Self {
        Outcome {
            class: pair.class,
            label: pair.label,
            flagged: pair.flagged(policy),
            swept: sweep.iter().map(|swept| pair.flagged(swept)).collect(),
            score: if plot { pair.score(policy) } else { 0.0 },
        }
    }
}

/// Confusion counts.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Confusion {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
}

impl Confusion {
    /// Counts a pair of `class` that the rule `flagged` (or not); unclassed pairs do not count.
    fn add(&mut self, class: Option<Class>, flagged: bool) {
        match (class, flagged) {
            (Some(Class::Positive), true) => self.tp += 1,
            (Some(Class::Positive), false) => self.fn_ += 1,
            (Some(Class::Negative), true) => self.fp += 1,
            (Some(Class::Negative), false) => self.tn += 1,
            (None, _) => {}
        }
    }

    /// The metrics of these counts.
    pub fn metrics(&self) -> Metrics {
        Metrics::from_counts(self.tp, self.fp, self.fn_, self.tn)
    }
}

/// The counts of every pair scored so far.
pub(super) struct Tally {
    /// Of the policy.
    pub confusion: Confusion,
    /// Of each swept policy.
    pub sweep: Vec<Confusion>,
    /// Pairs and flagged pairs per label, in the order labels were first seen.
    by_label: Vec<LabelFlags>,
    /// The score histograms, with a plot.
    pub plot: Option<PlotTally>,
}

impl Tally {
    /// Nothing counted yet, for `sweeps` swept policies and a plot of `policy` if `plot`.
    pub fn new(policy: &Policy, sweeps: usize, plot: bool) -> Self {
        Tally {
            confusion: Confusion::default(),
            sweep: vec![Confusion::default(); sweeps],
            by_label: Vec::new(),
            plot: plot.then(|| PlotTally::new(policy)),
        }
    }

    /// Counts one pair's outcome.
    pub fn add(&mut self, outcome: &Outcome) {
        self.confusion.add(outcome.class, outcome.flagged);
        for (confusion, &flagged) in self.sweep.iter_mut().zip(&outcome.swept) {
            confusion.add(outcome.class, flagged);
        }
        let flagged = usize::from(outcome.flagged);
        match self.by_label.iter_mut().find(|l| l.label == outcome.label) {
            Some(entry) => {
                entry.pairs += 1;
                entry.flagged += flagged;
            }
            None => self.by_label.push(LabelFlags {
                label: outcome.label,
                pairs: 1,
                flagged,
            }),
        }
        if let (Some(plot), Some(class)) = (&mut self.plot, outcome.class) {
            plot.add(class == Class::Positive, outcome.score);
        }
    }

    /// Pairs and flagged pairs per numeric label, every label included, in label order.
    pub fn by_label(&mut self) -> Vec<LabelFlags> {
        let mut by_label = std::mem::take(&mut self.by_label);
        by_label.sort_by(|a, b| a.label.total_cmp(&b.label));
        by_label
    }
}

/// The histograms of the score of positives and negatives, with the policy's threshold.
pub(super) struct PlotTally {
    /// The bins (the title is set when the metrics are known).
    pub histograms: Histograms,
    /// The largest score counted as such (SimHash distances: half the width).
    most: Option<f64>,
}

impl PlotTally {
    /// Empty histograms on the axis of `policy`'s score.
    fn new(policy: &Policy) -> Self {
        let bits = policy.profile.bits.count();
        if policy.verify.is_none() && policy.method != Method::Minhash {
            // One bin per distance, up to half the width (beyond it, fingerprints are unrelated).
            let bins = bits as usize / 2 + 1;
            let label = "SimHash Hamming distance";
            let mut histograms = Histograms::new(String::new(), label, 0.0, bins as f64, bins);
            histograms.threshold = Some(f64::from(policy.k) + 1.0);
            PlotTally {
                histograms,
                most: Some(f64::from(bits / 2)),
            }
        } else {
            let label = match policy.verify {
                None => "MinHash-estimated Jaccard",
                Some(VerifyMeasure::Containment) => "max containment",
                Some(VerifyMeasure::Jaccard) => "Jaccard",
            };
            let mut histograms = Histograms::new(String::new(), label, 0.0, 1.0, 20);
            histograms.threshold = Some(policy.threshold);
            PlotTally {
                histograms,
                most: None,
            }
        }
    }

    fn add(&mut self, positive: bool, score: f64) {
        let score = self.most.map_or(score, |most| score.min(most));
        self.histograms.add(positive, score);
    }
}
