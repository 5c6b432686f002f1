//! [`Policy`]: the one near-duplicate decision, and the evidence it gives.
//!
//! A policy fixes everything between two texts and the answer "duplicate or not": the profile
//! (text → features → fingerprints), how candidates are searched (exact digests only, SimHash
//! within `k` bits, MinHash LSH, or every pair whose shingle sets can overlap enough), and how a
//! candidate is verified (Jaccard or containment of the shingle sets, a threshold, a length-ratio
//! guard). Every door decides through it: the batch engine ([`crate::dedup`]), `compare`,
//! `eval`, the online database and its service. [`Policy::decide`] is the rule for one pair;
//! the batch engine searches candidates at scale and verifies each with the same
//! [`Policy::verify`], so for any pair the two give the same answer (a property test checks it).

use neardup_core::measure::{
    containment, containment_needed, jaccard, jaccard_at_least, jaccard_needed, BucketCounts,
    FeatureSet,
};
use neardup_core::minhash::{estimate_jaccard, MinHashOptions};
use neardup_core::{Choice, Fingerprints, Profile, Simhash};
use serde::{Deserialize, Serialize};

use crate::error::DedupError;
use crate::units::UnitRule;

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

impl Choice for Method {
    const ALL: &'static [Self] = &[
        Method::Cascade,
        Method::Simhash,
        Method::Minhash,
        Method::Overlap,
        Method::Exact,
    ];

    fn help(self) -> &'static str {
        match self {
            Method::Exact => "exact duplicates only",
            Method::Simhash => "SimHash distance <= k",
            Method::Minhash => "MinHash LSH, estimated Jaccard >= threshold",
            Method::Cascade => "SimHash candidates within k, verified on the shingle sets",
            Method::Overlap => "every pair whose shingle sets can overlap enough, verified",
        }
    }
}

impl Choice for VerifyMeasure {
    const ALL: &'static [Self] = &[VerifyMeasure::Jaccard, VerifyMeasure::Containment];

    fn help(self) -> &'static str {
        match self {
            VerifyMeasure::Jaccard => "Jaccard resemblance of the shingle sets",
            VerifyMeasure::Containment => "the larger of the two containments of the shingle sets",
        }
    }
}

/// Default largest SimHash distance of a candidate pair.
///
/// Chosen on the labelled CopyCat pairs (BENCHMARKS.md, "Quality"): with the `web` profile and
/// Jaccard verification at 0.90, k = 6 gives F1 0.910 and k = 8 gives 0.926, but all-pairs
/// search at k = 8 costs about 5 times as much as at k = 6 (1M fingerprints: 9.7 s vs 2.0 s).
pub const DEFAULT_K: u32 = 6;

/// Default smallest verified Jaccard resemblance (and MinHash estimate) of a near-duplicate.
pub const DEFAULT_THRESHOLD: f64 = 0.9;

/// The near-duplicate decision, whole: serialisable (`neardup … --show-policy`,
/// `--policy-file`), stored by every database, and the same behind every door.
///
/// ```
/// use neardup_core::Fingerprinter;
/// use neardup_dedup::{Policy, Side};
/// let policy = Policy::default();
/// let fingerprinter = Fingerprinter::new(policy.profile.clone()).unwrap();
/// let side = |text: &str| (fingerprinter.fingerprint(text), fingerprinter.feature_set(text));
/// let (a, sa) = side("The city council approved the new budget on Tuesday after a long debate.");
/// let (b, sb) = side("The city council approved the new budget on Tuesday after a long debate!");
/// let decision = policy.decide(&Side::new(&a, Some(&sa)), &Side::new(&b, Some(&sb))).unwrap();
/// assert!(decision.is_duplicate());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The profile: text → features → fingerprints.
    pub profile: Profile,
    /// How near-duplicate candidates are searched for.
    pub method: Method,
    /// Largest SimHash distance of a candidate (`simhash`, `cascade`).
    pub k: u32,
    /// Smallest similarity of a near-duplicate: the verified measure, or the MinHash estimate
    /// for `minhash` without verification.
    pub threshold: f64,
    /// The exact measure candidates are verified with; `None` takes candidates as they are.
    pub verify: Option<VerifyMeasure>,
    /// Smallest length ratio of a verified near-duplicate: the size of the smaller shingle set
    /// over the size of the larger (0 turns the guard off, the default).
    ///
    /// Containment says that one text is (almost) wholly inside the other, not that the two are
    /// copies: a headline is contained in its article. The guard keeps a contained text a
    /// near-duplicate only when it is not much shorter than its container (at 0.2: not more
    /// than five times shorter), i.e. a re-post or a re-headlined copy rather than a quote. The
    /// sizes are those of the shingle sets: they are what the measure is computed on, they
    /// ignore what normalisation drops, and they count characters the same way in every
    /// script. For Jaccard the guard changes nothing unless it exceeds the threshold, since
    /// Jaccard ≤ the length ratio.
    #[serde(default)]
    pub min_length_ratio: f64,
    /// Dedup below the document: the paragraphs, lines or sentence spans that repeat are
    /// removed from every document but the first that has them ([`crate::units`]); `None`
    /// (the default, left out of the JSON) decides whole documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitRule>,
}

impl Default for Policy {
    /// The cascade: the `web` profile, SimHash candidates within [`DEFAULT_K`] bits, verified by
    /// Jaccard resemblance ≥ [`DEFAULT_THRESHOLD`] of the shingle sets.
    fn default() -> Self {
        Policy {
            profile: Profile::web(),
            method: Method::Cascade,
            k: DEFAULT_K,
            threshold: DEFAULT_THRESHOLD,
            verify: Some(VerifyMeasure::Jaccard),
            min_length_ratio: 0.0,
            units: None,
        }
    }
}

/// Changes to a policy as every door takes them (the CLI's options, the Python package's
/// keyword arguments): each given field replaces the policy's, in one order, with what naming a
/// method implies (its own verification, [`Method::default_verify`], unless `verify` is given
/// too; MinHash signatures in the profile for `minhash`).
///
/// ```
/// use neardup_dedup::{Method, Policy, PolicyChanges};
/// let changes = PolicyChanges { method: Some(Method::Overlap), ..Default::default() };
/// let policy = changes.apply(Policy::default()).unwrap();
/// assert_eq!(policy.verify, Some(neardup_dedup::VerifyMeasure::Containment));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyChanges {
    /// A whole profile.
    pub profile: Option<Profile>,
    /// The profile's fingerprint width.
    pub bits: Option<neardup_core::Bits>,
    /// The search method (and its own verification).
    pub method: Option<Method>,
    /// The verification measure; `Some(None)` turns verification off.
    pub verify: Option<Option<VerifyMeasure>>,
    /// Largest SimHash distance of a candidate.
    pub k: Option<u32>,
    /// Smallest similarity of a near-duplicate.
    pub threshold: Option<f64>,
    /// Smallest length ratio of a verified pair.
    pub min_length_ratio: Option<f64>,
    /// The rule below the document; `Some(None)` decides whole documents.
    pub units: Option<Option<UnitRule>>,
}

impl PolicyChanges {
    /// `base` with every given change applied, validated.
    pub fn apply(self, mut base: Policy) -> Result<Policy, DedupError> {
        if let Some(profile) = self.profile {
            base.profile = profile;
        }
        if let Some(bits) = self.bits {
            base.profile.bits = bits;
        }
        if let Some(method) = self.method {
            base.method = method;
            base.verify = method.default_verify();
        }
        if base.method == Method::Minhash && base.profile.minhash.is_none() {
            base.profile.minhash = Some(MinHashOptions::default());
        }
        if let Some(verify) = self.verify {
            base.verify = verify;
        }
        base.k = self.k.unwrap_or(base.k);
        base.threshold = self.threshold.unwrap_or(base.threshold);
        base.min_length_ratio = self.min_length_ratio.unwrap_or(base.min_length_ratio);
        if let Some(units) = self.units {
            base.units = units;
        }
        base.validate()?;
        Ok(base)
    }
}

/// What the decision needs of one side of a pair: its fingerprints, and its shingle set when
/// the policy verifies.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The fingerprints (digest, SimHash, MinHash signature when the profile makes one).
    pub fingerprints: &'a Fingerprints,
    /// The shingle set ([`neardup_core::Fingerprinter::feature_set`]).
    pub features: Option<&'a FeatureSet>,
}

impl<'a> Side<'a> {
    /// A side from its parts.
    pub fn new(fingerprints: &'a Fingerprints, features: Option<&'a FeatureSet>) -> Self {
        Side {
            fingerprints,
            features,
        }
    }
}

/// Why two documents are duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Same normalised text.
    Exact,
    /// Similar text, as the policy measures it.
    Near,
    /// Same canonical URL.
    Url,
}

/// The measure that decided a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// The digests of the normalised texts (1 when equal).
    Digest,
    /// SimHash Hamming distance (passes at or under the threshold `k`).
    SimhashDistance,
    /// The MinHash estimate of the Jaccard resemblance.
    MinhashEstimate,
    /// Jaccard resemblance of the shingle sets.
    Jaccard,
    /// The larger of the two containments of the shingle sets.
    Containment,
    /// The smaller shingle set's size over the larger's.
    LengthRatio,
    /// The canonical URLs (1 when equal).
    Url,
}

impl Measure {
    /// Whether `value` passes `threshold` for this measure: at or under for a distance, at or
    /// over for the others.
    pub fn passes(self, value: f64, threshold: f64) -> bool {
        match self {
            Measure::SimhashDistance => value <= threshold,
            _ => value >= threshold,
        }
    }
}

/// A measured value beside the threshold it was held against: why a pair was decided as it was.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What was measured.
    pub measure: Measure,
    /// Its value for the pair.
    pub value: f64,
    /// The policy's bound for it.
    pub threshold: f64,
}

impl Evidence {
    /// Equal digests: an exact duplicate.
    pub const EXACT: Evidence = Evidence {
        measure: Measure::Digest,
        value: 1.0,
        threshold: 1.0,
    };

    /// Equal canonical URLs.
    pub const URL: Evidence = Evidence {
        measure: Measure::Url,
        value: 1.0,
        threshold: 1.0,
    };

    /// Whether the value passes the threshold.
    pub fn passes(&self) -> bool {
        self.measure.passes(self.value, self.threshold)
    }
}

/// The answer for one pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Decision {
    /// The two are duplicates.
    Duplicate {
        /// Exact (same normalised text) or near.
        kind: Kind,
        /// The measure that decided, its value and its threshold.
        #[serde(flatten)]
        evidence: Evidence,
    },
    /// The two are not duplicates: the second is unique beside the first.
    Unique {
        /// The first test the pair failed.
        #[serde(flatten)]
        evidence: Evidence,
    },
}

impl Decision {
    /// Whether the pair is a duplicate (exact or near).
    pub fn is_duplicate(&self) -> bool {
        matches!(self, Decision::Duplicate { .. })
    }

    /// The evidence of the decision.
    pub fn evidence(&self) -> Evidence {
        match *self {
            Decision::Duplicate { evidence, .. } | Decision::Unique { evidence } => evidence,
        }
    }
}

/// Optional per-set summaries that let [`Policy::verify`] rule out a pair without a merge.
pub type Bounds<'a> = Option<(&'a BucketCounts, &'a BucketCounts)>;

impl Policy {
    /// The classic decision: SimHash distance ≤ `k` under `profile`, nothing verified.
    pub fn simhash(profile: Profile, k: u32) -> Policy {
        Policy {
            profile,
            method: Method::Simhash,
            k,
            threshold: DEFAULT_THRESHOLD,
            verify: None,
            min_length_ratio: 0.0,
            units: None,
        }
    }

    /// Checks ranges and combinations (the profile included).
    pub fn validate(&self) -> Result<(), DedupError> {
        let invalid = |m: &str| Err(DedupError::InvalidOption(m.to_string()));
        self.profile
            .validate()
            .map_err(|e| DedupError::InvalidOption(e.to_string()))?;
        if !(0.0..=1.0).contains(&self.threshold) || self.threshold.is_nan() {
            return invalid("threshold must be between 0 and 1");
        }
        if self.k > self.profile.bits.count() {
            return invalid("k must be at most the fingerprint width");
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
        if self.method == Method::Minhash && self.profile.minhash.is_none() {
            return invalid(
                "the minhash method needs a profile with MinHash signatures (\"minhash\": {\"num_perm\": 128, \"seed\": 1})",
            );
        }
        if !(0.0..=1.0).contains(&self.min_length_ratio) || self.min_length_ratio.is_nan() {
            return invalid("min_length_ratio must be between 0 and 1");
        }
        if let Some(units) = &self.units {
            units.validate()?;
        }
        if self.min_length_ratio > 0.0 && self.verify.is_none() {
            return invalid(
                "min_length_ratio compares shingle-set sizes: it needs verification (jaccard or containment)",
            );
        }
        Ok(())
    }

    /// The MinHash LSH banding of the policy's search over signatures of `num_perm` values:
    /// the bands and rows that best separate pairs above and below the threshold, false
    /// positives and false negatives weighed alike (what every door bands by).
    pub fn lsh_params(&self, num_perm: usize) -> Result<neardup_index::LshParams, DedupError> {
        Ok(neardup_index::LshParams::optimal(
            self.threshold,
            num_perm,
            0.5,
            0.5,
        )?)
    }

    /// Whether the policy verifies candidates with their shingle sets.
    pub fn verifies(&self) -> bool {
        self.verify.is_some()
    }

    /// Whether two shingle sets of `len_a` and `len_b` distinct shingles pass the length-ratio
    /// guard ([`Policy::min_length_ratio`]). Two empty sets pass.
    ///
    /// ```
    /// use neardup_dedup::Policy;
    /// let guarded = Policy { min_length_ratio: 0.2, ..Policy::default() };
    /// assert!(guarded.length_ratio_passes(20, 100));
    /// assert!(!guarded.length_ratio_passes(100, 501));
    /// assert!(Policy::default().length_ratio_passes(1, 1_000));
    /// ```
    pub fn length_ratio_passes(&self, len_a: usize, len_b: usize) -> bool {
        // The quotient, not `short ≥ r · long`: division rounds to the double nearest the true
        // ratio, so a ratio equal to the decimal `r` (7 / 100 against 0.07) passes, where the
        // product (0.07 · 100 = 7.000000000000001) would not.
        length_ratio(len_a, len_b) >= self.min_length_ratio
    }

    /// The pair's candidate test alone: `None` when the pair is a candidate, else the evidence
    /// of the test it failed. The overlap search finds every pair verification can accept, so
    /// for it verification alone decides.
    pub fn candidate(
        &self,
        a: &Fingerprints,
        b: &Fingerprints,
    ) -> Result<Option<Evidence>, DedupError> {
        let failed = |e: Evidence| Ok((!e.passes()).then_some(e));
        match self.method {
            Method::Exact => Ok(Some(Evidence {
                value: 0.0,
                ..Evidence::EXACT
            })),
            Method::Simhash | Method::Cascade => failed(self.distance_evidence(a, b)?),
            Method::Minhash => failed(self.minhash_evidence(a, b)?),
            Method::Overlap => Ok(None),
        }
    }

    /// The SimHash distance of two fingerprints against `k`.
    pub fn distance_evidence(
        &self,
        a: &Fingerprints,
        b: &Fingerprints,
    ) -> Result<Evidence, DedupError> {
        self.simhash_evidence(a.simhash, b.simhash)
    }

    /// The SimHash distance of two SimHash fingerprints against `k` (fails when their widths
    /// differ).
    pub fn simhash_evidence(&self, a: Simhash, b: Simhash) -> Result<Evidence, DedupError> {
        let distance = a
            .distance(b)
            .map_err(|e| DedupError::MissingData(e.to_string()))?;
        Ok(Evidence {
            measure: Measure::SimhashDistance,
            value: f64::from(distance),
            threshold: f64::from(self.k),
        })
    }

    fn minhash_evidence(&self, a: &Fingerprints, b: &Fingerprints) -> Result<Evidence, DedupError> {
        let (Some(x), Some(y)) = (a.minhash.as_deref(), b.minhash.as_deref()) else {
            return Err(DedupError::MissingData(
                "the minhash method needs MinHash signatures on both sides".into(),
            ));
        };
        Ok(Evidence {
            measure: Measure::MinhashEstimate,
            value: estimate_jaccard(x, y),
            threshold: self.threshold,
        })
    }

    /// Verification of a candidate pair by its shingle sets: the evidence when it passes,
    /// `None` when it does not (early exits: the length guard, the bucket bound when given,
    /// and a merge that stops once the threshold is out of reach). The one test every door
    /// applies; [`Policy::verification_evidence`] gives the full value for explanations.
    ///
    /// # Panics
    /// Never; with no verification measure every pair passes with a value of 1.
    pub fn verify(&self, a: &FeatureSet, b: &FeatureSet, bounds: Bounds<'_>) -> Option<Evidence> {
        let Some(measure) = self.verify else {
            return Some(Evidence {
                measure: Measure::Jaccard,
                value: 1.0,
                threshold: 0.0,
            });
        };
        let bound = bounds.map(|(x, y)| x.intersection_bound(y));
        if !self.could_pass(a.len(), b.len(), bound) {
            return None;
        }
        let value = match measure {
            VerifyMeasure::Jaccard => jaccard_at_least(a, b, self.threshold)?,
            VerifyMeasure::Containment => containment(a, b).max(containment(b, a)),
        };
        (value >= self.threshold).then_some(Evidence {
            measure: measure.into(),
            value,
            threshold: self.threshold,
        })
    }

    /// Whether two sets of `len_a` and `len_b` elements, whose intersection has at most
    /// `intersection_bound` elements when that is known, could pass verification: the length
    /// guard and the bound, the early exits of [`Policy::verify`], without the sets themselves
    /// (a caller that holds only their sizes and [`BucketCounts`] rules pairs out before it
    /// reads the sets).
    pub fn could_pass(
        &self,
        len_a: usize,
        len_b: usize,
        intersection_bound: Option<usize>,
    ) -> bool {
        let Some(measure) = self.verify else {
            return true;
        };
        if !self.length_ratio_passes(len_a, len_b) {
            return false;
        }
        let needed = match measure {
            VerifyMeasure::Jaccard => jaccard_needed(len_a, len_b, self.threshold),
            VerifyMeasure::Containment => containment_needed(len_a.min(len_b), self.threshold),
        };
        intersection_bound.is_none_or(|bound| bound >= needed)
    }

    /// The verification's evidence for a pair, passing or not, with the full value (the
    /// length ratio's when the guard fails first). Decides exactly as [`Policy::verify`].
    pub fn verification_evidence(&self, a: &FeatureSet, b: &FeatureSet) -> Option<Evidence> {
        self.verify?;
        Some(
            self.verify(a, b, None)
                .unwrap_or_else(|| self.failed_verification(a, b)),
        )
    }

    /// Why verification refused a pair: the length guard, or the measure's full value.
    fn failed_verification(&self, a: &FeatureSet, b: &FeatureSet) -> Evidence {
        if !self.length_ratio_passes(a.len(), b.len()) {
            return Evidence {
                measure: Measure::LengthRatio,
                value: length_ratio(a.len(), b.len()),
                threshold: self.min_length_ratio,
            };
        }
        let measure = self.verify.unwrap_or(VerifyMeasure::Jaccard);
        let value = match measure {
            VerifyMeasure::Jaccard => jaccard(a, b),
            VerifyMeasure::Containment => containment(a, b).max(containment(b, a)),
        };
        Evidence {
            measure: measure.into(),
            value,
            threshold: self.threshold,
        }
    }

    /// The decision for one pair: exact duplicates by digest, then the candidate test, then
    /// verification. Fails only when a side lacks what the policy needs (a shingle set to
    /// verify, a MinHash signature).
    pub fn decide(&self, a: &Side<'_>, b: &Side<'_>) -> Result<Decision, DedupError> {
        if a.fingerprints.digest == b.fingerprints.digest {
            return Ok(Decision::Duplicate {
                kind: Kind::Exact,
                evidence: Evidence::EXACT,
            });
        }
        if let Some(evidence) = self.candidate(a.fingerprints, b.fingerprints)? {
            return Ok(Decision::Unique { evidence });
        }
        if !self.verifies() {
            let evidence = match self.method {
                Method::Minhash => self.minhash_evidence(a.fingerprints, b.fingerprints)?,
                _ => self.distance_evidence(a.fingerprints, b.fingerprints)?,
            };
            return Ok(Decision::Duplicate {
                kind: Kind::Near,
                evidence,
            });
        }
        let (Some(fa), Some(fb)) = (a.features, b.features) else {
            return Err(DedupError::MissingData(
                "verification needs the shingle sets of both documents".into(),
            ));
        };
        Ok(match self.verify(fa, fb, None) {
            Some(evidence) => Decision::Duplicate {
                kind: Kind::Near,
                evidence,
            },
            None => Decision::Unique {
                evidence: self.failed_verification(fa, fb),
            },
        })
    }

    /// One line saying what the policy decides, for reports.
    pub fn describe(&self) -> String {
        let verify = |m: VerifyMeasure| match m {
            VerifyMeasure::Jaccard => "jaccard",
            VerifyMeasure::Containment => "containment",
        };
        let t = self.threshold;
        let search = match self.method {
            Method::Exact => "equal digests".to_string(),
            Method::Simhash | Method::Cascade => format!("simhash distance <= {}", self.k),
            Method::Minhash => format!("minhash estimate >= {t:.2}"),
            Method::Overlap => "shingle overlap".to_string(),
        };
        let mut rule = format!("profile {}: {search}", self.profile.name);
        if let Some(measure) = self.verify.filter(|_| self.method != Method::Exact) {
            rule += &format!(", then {} >= {t:.2}", verify(measure));
        }
        if self.min_length_ratio > 0.0 && self.method != Method::Exact {
            rule += &format!(", length ratio >= {:.2}", self.min_length_ratio);
        }
        if let Some(units) = self.units {
            rule += &format!("; below the document: {}", units.describe());
        }
        rule
    }
}

impl From<VerifyMeasure> for Measure {
    fn from(measure: VerifyMeasure) -> Measure {
        match measure {
            VerifyMeasure::Jaccard => Measure::Jaccard,
            VerifyMeasure::Containment => Measure::Containment,
        }
    }
}

/// The smaller size over the larger; 1 for two empty sets.
pub fn length_ratio(len_a: usize, len_b: usize) -> f64 {
    let (short, long) = (len_a.min(len_b), len_a.max(len_b));
    if long == 0 {
        1.0
    } else {
        short as f64 / long as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_choice_is_spelled_by_its_serde_name() {
        neardup_core::choice::check_names::<Method>().unwrap();
        neardup_core::choice::check_names::<VerifyMeasure>().unwrap();
        neardup_core::choice::check_names::<crate::KeepPolicy>().unwrap();
        assert_eq!(Method::Cascade.name(), "cascade");
        assert_eq!(Method::ALL.len(), 5, "a new method is listed to users");
    }

    #[test]
    fn the_guard_is_off_by_default_and_inclusive_at_its_bound() {
        let off = Policy::default();
        assert_eq!(off.min_length_ratio, 0.0);
        assert!(off.length_ratio_passes(1, 1_000_000));
        assert!(off.length_ratio_passes(0, 0));
        let guarded = Policy {
            min_length_ratio: 0.2,
            ..Policy::default()
        };
        assert!(guarded.length_ratio_passes(20, 100));
        assert!(guarded.length_ratio_passes(100, 20), "symmetric");
        assert!(!guarded.length_ratio_passes(19, 100));
        assert!(!guarded.length_ratio_passes(0, 5));
        assert!(guarded.length_ratio_passes(0, 0));
        let tight = Policy {
            min_length_ratio: 0.07,
            ..Policy::default()
        };
        assert!(tight.length_ratio_passes(7, 100));
        let whole = Policy {
            min_length_ratio: 1.0,
            ..Policy::default()
        };
        assert!(whole.length_ratio_passes(7, 7) && !whole.length_ratio_passes(7, 8));
    }

    #[test]
    fn invalid_policies_are_rejected() {
        let with = |min_length_ratio, verify| Policy {
            min_length_ratio,
            verify,
            ..Policy::default()
        };
        let containment = Some(VerifyMeasure::Containment);
        assert!(with(0.2, containment).validate().is_ok());
        assert!(with(1.0, containment).validate().is_ok());
        assert!(with(-0.1, containment).validate().is_err());
        assert!(with(1.01, containment).validate().is_err());
        assert!(with(f64::NAN, containment).validate().is_err());
        let unverified = Policy {
            method: Method::Simhash,
            ..with(0.2, None)
        };
        assert!(unverified.validate().is_err());
        assert!(Policy {
            min_length_ratio: 0.0,
            ..unverified
        }
        .validate()
        .is_ok());
        let minhash = Policy {
            method: Method::Minhash,
            ..Policy::default()
        };
        assert!(minhash
            .validate()
            .unwrap_err()
            .to_string()
            .contains("MinHash"));
        assert!(Policy {
            k: 65,
            ..Policy::default()
        }
        .validate()
        .is_err());
    }

    #[test]
    fn a_policy_round_trips_through_json() {
        let policy = Policy {
            min_length_ratio: 0.2,
            verify: Some(VerifyMeasure::Containment),
            ..Policy::default()
        };
        let json = serde_json::to_string(&policy).unwrap();
        assert_eq!(serde_json::from_str::<Policy>(&json).unwrap(), policy);
        let typo = json.replace("\"threshold\"", "\"treshold\"");
        assert!(serde_json::from_str::<Policy>(&typo).is_err());
    }

    #[test]
    fn evidence_names_the_failing_test() {
        let policy = Policy::default();
        let fingerprinter = neardup_core::Fingerprinter::new(policy.profile.clone()).unwrap();
        let text_a = "Forecasters expect heavy rain across the region on Monday and Tuesday.";
        let text_b = "The city council approved the new budget on Tuesday after a long debate.";
        let (a, b) = (
            fingerprinter.fingerprint(text_a),
            fingerprinter.fingerprint(text_b),
        );
        let (sa, sb) = (
            fingerprinter.feature_set(text_a),
            fingerprinter.feature_set(text_b),
        );
        let decision = policy
            .decide(&Side::new(&a, Some(&sa)), &Side::new(&b, Some(&sb)))
            .unwrap();
        assert!(!decision.is_duplicate());
        assert_eq!(decision.evidence().measure, Measure::SimhashDistance);
        assert!(decision.evidence().value > 6.0);
        let same = policy
            .decide(&Side::new(&a, Some(&sa)), &Side::new(&a, Some(&sa)))
            .unwrap();
        assert_eq!(
            same,
            Decision::Duplicate {
                kind: Kind::Exact,
                evidence: Evidence::EXACT
            }
        );
    }
}
