//! Options of a dedup run.

use serde::{Deserialize, Serialize};

/// How near-duplicates are searched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Exact duplicates only (same digest of the normalised text).
    Exact,
    /// Exact duplicates, then SimHash fingerprints within `k` bits.
    Simhash,
    /// Exact duplicates, then MinHash LSH candidates with estimated Jaccard ≥ `threshold`.
    Minhash,
    /// Exact duplicates, then SimHash candidates, then verification by the true shingle-set
    /// measure (the default: fast, and precise where SimHash alone is not).
    Cascade,
}

/// The exact measure a candidate pair is verified with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMeasure {
    /// Jaccard resemblance |A ∩ B| / |A ∪ B|.
    Jaccard,
    /// The larger of the two containments |A ∩ B| / |A| and |A ∩ B| / |B|: finds a page
    /// quoted whole inside a longer one.
    Containment,
}

/// Which member of a cluster is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeepPolicy {
    /// The one seen first in the input.
    First,
    /// The longest (in bytes of text); ties to the first seen.
    Longest,
    /// The most recently fetched; ties, and documents without a date, to the first seen.
    Newest,
}

/// Everything a dedup run is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DedupOptions {
    /// The search method.
    pub method: Method,
    /// Largest SimHash distance of a near-duplicate.
    pub k: u32,
    /// Smallest similarity of a near-duplicate for MinHash and for verification.
    pub threshold: f64,
    /// Verify candidates with this measure (required data: each item's shingle set).
    pub verify: Option<VerifyMeasure>,
    /// Which cluster member is kept.
    pub keep: KeepPolicy,
    /// Treat equal canonical URLs as duplicates.
    pub url_dedup: bool,
    /// Verify and report every candidate pair. When false, candidates are verified nearest
    /// first and a pair whose documents are already in one cluster is not verified: the
    /// clusters and decisions are the same, the work is about one verification per document
    /// instead of one per candidate (quadratic in the size of a cluster), but
    /// [`crate::Outcome::pairs`] holds only the verified pairs that joined clusters.
    pub all_pairs: bool,
}

/// Default largest SimHash distance of a candidate pair.
///
/// Chosen on the labelled CopyCat pairs (BENCHMARKS.md, "Quality"): with the `web` profile and
/// Jaccard verification at 0.90, k = 6 gives F1 0.910 and k = 8 gives 0.926, but all-pairs
/// search at k = 8 costs about 5 times as much as at k = 6 (1M fingerprints: 9.7 s vs 2.0 s).
pub const DEFAULT_K: u32 = 6;

/// Default smallest verified Jaccard resemblance (and MinHash estimate) of a near-duplicate.
pub const DEFAULT_THRESHOLD: f64 = 0.9;

impl Default for DedupOptions {
    /// The cascade: SimHash candidates within [`DEFAULT_K`] bits, verified by Jaccard
    /// resemblance ≥ [`DEFAULT_THRESHOLD`]; the first seen of each cluster kept.
    fn default() -> Self {
        DedupOptions {
            method: Method::Cascade,
            k: DEFAULT_K,
            threshold: DEFAULT_THRESHOLD,
            verify: Some(VerifyMeasure::Jaccard),
            keep: KeepPolicy::First,
            url_dedup: false,
            all_pairs: false,
        }
    }
}

impl DedupOptions {
    /// Checks ranges and combinations.
    pub fn validate(&self) -> Result<(), crate::DedupError> {
        let invalid = |m: &str| Err(crate::DedupError::InvalidOption(m.to_string()));
        if !(0.0..=1.0).contains(&self.threshold) || self.threshold.is_nan() {
            return invalid("threshold must be between 0 and 1");
        }
        if self.method == Method::Cascade && self.verify.is_none() {
            return invalid(
                "the cascade method verifies candidates: choose a measure (jaccard or containment)",
            );
        }
        Ok(())
    }
}
