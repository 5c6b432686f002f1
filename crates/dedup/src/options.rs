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
    /// Exact duplicates, then every pair whose shingle sets can overlap enough for the
    /// verification measure to reach `threshold` (prefix filtering on the shingle sets, exact:
    /// no pair that verification would accept is missed), then verification. Finds a short text
    /// contained in a longer one, which neither SimHash nor MinHash LSH can (their candidates
    /// need the two texts to be alike as a whole); it holds every document's shingle set while
    /// searching (8 bytes a shingle), so it is meant for corpora of short texts.
    Overlap,
}

/// The exact measure a candidate pair is verified with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMeasure {
    /// Jaccard resemblance |A ∩ B| / |A ∪ B|.
    Jaccard,
    /// The larger of the two containments |A ∩ B| / |A| and |A ∩ B| / |B|: finds a page
    /// quoted whole inside a longer one. Pair it with [`DedupOptions::min_length_ratio`]: alone it
    /// also takes a headline for a duplicate of the article it heads.
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
    /// Smallest length ratio of a verified near-duplicate: the size of the smaller shingle set
    /// over the size of the larger (0 turns the guard off, the default).
    ///
    /// Containment says that one text is (almost) wholly inside the other, not that the two are
    /// copies: a headline is contained in its article. The guard keeps a contained text a
    /// near-duplicate only when it is not much shorter than its container (at 0.2: not more
    /// than five times shorter), i.e. a re-post or a re-headlined copy rather than a quote. The
    /// sizes are those of the shingle sets, not of the texts in bytes or characters: they are
    /// what the measure is computed on, they are at hand wherever verification is (no text is
    /// kept for it), they ignore what normalisation drops (white space, case, markup
    /// left-overs) and repeated passages, and they count characters the same way in every
    /// script (a Chinese character is three bytes). For Jaccard the guard changes nothing
    /// unless it exceeds the threshold, since Jaccard ≤ the length ratio.
    #[serde(default)]
    pub min_length_ratio: f64,
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
            min_length_ratio: 0.0,
            keep: KeepPolicy::First,
            url_dedup: false,
            all_pairs: false,
        }
    }
}

impl DedupOptions {
    /// Whether two shingle sets of `len_a` and `len_b` distinct shingles pass the length-ratio
    /// guard ([`DedupOptions::min_length_ratio`]). Two empty sets pass.
    ///
    /// ```
    /// use neardup_dedup::DedupOptions;
    /// let guarded = DedupOptions { min_length_ratio: 0.2, ..DedupOptions::default() };
    /// assert!(guarded.length_ratio_passes(20, 100));
    /// assert!(!guarded.length_ratio_passes(100, 501));
    /// assert!(DedupOptions::default().length_ratio_passes(1, 1_000));
    /// ```
    pub fn length_ratio_passes(&self, len_a: usize, len_b: usize) -> bool {
        let (short, long) = (len_a.min(len_b), len_a.max(len_b));
        // The quotient, not `short ≥ r · long`: division rounds to the double nearest the true
        // ratio, so a ratio equal to the decimal `r` (7 / 100 against 0.07) passes, where the
        // product (0.07 · 100 = 7.000000000000001) would not.
        long == 0 || short as f64 / long as f64 >= self.min_length_ratio
    }

    /// Checks ranges and combinations.
    pub fn validate(&self) -> Result<(), crate::DedupError> {
        let invalid = |m: &str| Err(crate::DedupError::InvalidOption(m.to_string()));
        if !(0.0..=1.0).contains(&self.threshold) || self.threshold.is_nan() {
            return invalid("threshold must be between 0 and 1");
        }
        if matches!(self.method, Method::Cascade | Method::Overlap) && self.verify.is_none() {
            return invalid(
                "the cascade and overlap methods verify candidates: choose a measure (jaccard or containment)",
            );
        }
        if self.method == Method::Overlap && self.threshold == 0.0 {
            return invalid(
                "the overlap method needs a threshold above 0 (at 0 every pair is a candidate)",
            );
        }
        if !(0.0..=1.0).contains(&self.min_length_ratio) || self.min_length_ratio.is_nan() {
            return invalid("min_length_ratio must be between 0 and 1");
        }
        if self.min_length_ratio > 0.0 && self.verify.is_none() {
            return invalid(
                "min_length_ratio compares shingle-set sizes: it needs verification (jaccard or containment)",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_is_off_by_default_and_inclusive_at_its_bound() {
        let off = DedupOptions::default();
        assert_eq!(off.min_length_ratio, 0.0);
        assert!(off.length_ratio_passes(1, 1_000_000));
        assert!(off.length_ratio_passes(0, 0));
        let guarded = DedupOptions {
            min_length_ratio: 0.2,
            ..DedupOptions::default()
        };
        assert!(guarded.length_ratio_passes(20, 100));
        assert!(guarded.length_ratio_passes(100, 20), "symmetric");
        assert!(!guarded.length_ratio_passes(19, 100));
        assert!(!guarded.length_ratio_passes(0, 5));
        assert!(guarded.length_ratio_passes(0, 0));
        // A ratio equal to the decimal bound passes even where the product rounds up.
        let tight = DedupOptions {
            min_length_ratio: 0.07,
            ..DedupOptions::default()
        };
        assert!(tight.length_ratio_passes(7, 100));
        let whole = DedupOptions {
            min_length_ratio: 1.0,
            ..DedupOptions::default()
        };
        assert!(whole.length_ratio_passes(7, 7) && !whole.length_ratio_passes(7, 8));
    }

    #[test]
    fn invalid_guards_are_rejected() {
        let with = |min_length_ratio, verify| DedupOptions {
            min_length_ratio,
            verify,
            ..DedupOptions::default()
        };
        let containment = Some(VerifyMeasure::Containment);
        assert!(with(0.2, containment).validate().is_ok());
        assert!(with(1.0, containment).validate().is_ok());
        assert!(with(-0.1, containment).validate().is_err());
        assert!(with(1.01, containment).validate().is_err());
        assert!(with(f64::NAN, containment).validate().is_err());
        let unverified = DedupOptions {
            method: Method::Simhash,
            ..with(0.2, None)
        };
        assert!(unverified.validate().is_err());
        assert!(DedupOptions {
            min_length_ratio: 0.0,
            ..unverified
        }
        .validate()
        .is_ok());
    }
}
