//! Options of a dedup run.

use serde::{Deserialize, Serialize};

use crate::policy::Policy;

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
    /// Exact duplicates, then every pair whose shingle sets can overlap enough for the
    /// verification measure to reach `threshold` (prefix filtering on the shingle sets, exact:
    /// no pair that verification would accept is missed), then verification. Finds a short text
    /// contained in a longer one, which neither SimHash nor MinHash LSH can (their candidates
    /// need the two texts to be alike as a whole); it holds every document's shingle set while
    /// searching (8 bytes a shingle), so it is meant for corpora of short texts.
    Overlap,
}

impl Method {
    /// The verification the method implies when none is named: Jaccard for the cascade,
    /// containment for the overlap search (what it is for), none for the others.
    pub fn default_verify(self) -> Option<VerifyMeasure> {
        match self {
            Method::Cascade => Some(VerifyMeasure::Jaccard),
            Method::Overlap => Some(VerifyMeasure::Containment),
            Method::Exact | Method::Simhash | Method::Minhash => None,
        }
    }
}

/// The exact measure a candidate pair is verified with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMeasure {
    /// Jaccard resemblance |A ∩ B| / |A ∪ B|.
    Jaccard,
    /// The larger of the two containments |A ∩ B| / |A| and |A ∩ B| / |B|: finds a page
    /// quoted whole inside a longer one. Pair it with [`Policy::min_length_ratio`]: alone it
    /// also takes a headline for a duplicate of the article it heads.
    Containment,
}

/// Which member of a cluster is kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeepPolicy {
    /// The one seen first in the input.
    #[default]
    First,
    /// The longest (in bytes of text); ties to the first seen.
    Longest,
    /// The most recently fetched; ties, and documents without a date, to the first seen.
    Newest,
}

/// Everything a dedup run is told: the decision ([`Policy`]) and what to do with its clusters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DedupOptions {
    /// The near-duplicate decision.
    pub policy: Policy,
    /// Which cluster member is kept.
    pub keep: KeepPolicy,
    /// Treat equal canonical URLs as duplicates.
    pub url_dedup: bool,
}

impl DedupOptions {
    /// Options that decide by `policy` and keep the first seen of each cluster.
    pub fn new(policy: Policy) -> Self {
        DedupOptions {
            policy,
            ..DedupOptions::default()
        }
    }
}
