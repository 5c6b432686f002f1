//! Dedup below the document: the paragraphs, lines or sentence spans that repeat across a
//! corpus, removed from every document but the first that has them (in input order, or in
//! the keep order of the document-level decision: [`UnitDedup::in_keep_order`]).
//!
//! The rule, as CCNet applies it to paragraphs (and datatrove to spans of three sentences):
//! 1. a document's text is cut into **units** ([`Unit`]): paragraphs (blocks of lines
//!    separated by blank lines; in HTML, block elements), lines, or sentences;
//! 2. each unit is normalised by the policy's profile ([`neardup_core::normalize`], the one
//!    normaliser: NFKC, lower case, white space collapsed for `web`), and a **key** is hashed:
//!    one key a paragraph or line, one key per window of `n` consecutive sentences for
//!    `sentences:n` (the normalised sentences joined by a newline; a document of fewer
//!    sentences has one key of them all);
//! 3. the key is the 64-bit XXH3 of the normalised bytes ([`KEY_BITS`]): with `n` distinct
//!    units, the expected number of colliding pairs is n² / 2⁶⁵ (0.03 for a billion units;
//!    CCNet keeps 8 bytes of SHA-1, the same width);
//! 4. a key already seen, in an earlier document or earlier in the same one, removes the
//!    units it covers; the first occurrence stays. With a saved set of keys ([`SeenFile`]),
//!    keys of earlier runs count as seen before the first document. Under the fraction rule
//!    ([`NgramRule`], dolma's), a paragraph's or line's keys are its n-grams of words, and it
//!    goes when at least a threshold of them were seen ([`DocumentUnits::removed`]);
//! 5. the document is the original text with the removed units cut out, each with the blank
//!    (or white space) that follows it; it is dropped when fewer than
//!    [`UnitRule::min_chars`] characters (other than white space) are left.
//!
//! [`UnitDedup`] runs the rule over a [`neardup_ingest::Corpus`] within a [`crate::Budget`]:
//! the seen keys are held in memory while they fit; beyond, the run goes on in two passes
//! through sorted runs on disk ([`neardup_index::Runs`]), with the same answer.

mod record;
mod report;
mod rewrite;
mod run;
mod seen;
mod split;

use serde::{Deserialize, Serialize};

use crate::error::DedupError;

pub use record::rewrite_record;
pub use report::{rewrite_repeats, Rewritten, UnitReport};
pub use run::{UnitDedup, UnitFigures};
pub use seen::SeenFile;
pub use split::{Cover, DocumentUnits, Segment, UnitSplitter};

/// Bits of a unit's key: the 64-bit XXH3 of its normalised text.
pub const KEY_BITS: u32 = 64;

/// What a document is cut into (`--granularity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Blocks of non-blank lines separated by blank lines; in text extracted from HTML
    /// (`--html main` or `all`), which has one block element (`p`, `li`, `h1`, `div`, ...) a
    /// line, each block element.
    Paragraph,
    /// Each non-blank line (CCNet's "paragraph": a line of WET text).
    Line,
    /// Windows of this many consecutive sentences (datatrove's rule at 3). A sentence ends at
    /// `.`, `!`, `?` or `…` (with closing quotes or brackets) before white space, at
    /// `。`, `！` or `？`, and at a line break.
    Sentences(u32),
}

impl Unit {
    /// Parses a `--granularity` value: `document` (no unit: documents are decided whole),
    /// `paragraph`, `line`, or `sentences:N` with N from 1 to 64.
    ///
    /// ```
    /// use neardup_dedup::units::Unit;
    /// assert_eq!(Unit::parse_granularity("sentences:3").unwrap(), Some(Unit::Sentences(3)));
    /// assert_eq!(Unit::parse_granularity("document").unwrap(), None);
    /// assert!(Unit::parse_granularity("sentences:0").is_err());
    /// ```
    pub fn parse_granularity(text: &str) -> Result<Option<Unit>, DedupError> {
        let invalid = || {
            DedupError::InvalidOption(format!(
                "granularity {text:?}: expected document, paragraph, line or sentences:N (N from 1 to 64)"
            ))
        };
        Ok(Some(match text {
            "document" => return Ok(None),
            "paragraph" => Unit::Paragraph,
            "line" => Unit::Line,
            _ => {
                let n = text.strip_prefix("sentences:").ok_or_else(invalid)?;
                let n: u32 = n.parse().map_err(|_| invalid())?;
                if !(1..=64).contains(&n) {
                    return Err(invalid());
                }
                Unit::Sentences(n)
            }
        }))
    }

    /// Sentences a key covers: 1 for paragraphs and lines.
    pub fn window(self) -> usize {
        match self {
            Unit::Paragraph | Unit::Line => 1,
            Unit::Sentences(n) => n as usize,
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unit::Paragraph => f.write_str("paragraph"),
            Unit::Line => f.write_str("line"),
            Unit::Sentences(n) => write!(f, "sentences:{n}"),
        }
    }
}

impl TryFrom<String> for Unit {
    type Error = DedupError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Unit::parse_granularity(&text)?.ok_or_else(|| {
            DedupError::InvalidOption(
                "a unit rule needs a unit: paragraph, line or sentences:N (document is no unit)"
                    .into(),
            )
        })
    }
}

impl From<Unit> for String {
    fn from(unit: Unit) -> String {
        unit.to_string()
    }
}

impl Serialize for Unit {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Unit {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Unit::try_from(text).map_err(serde::de::Error::custom)
    }
}

/// `policy` with the rule below the document `unit` names (`None`, `--granularity document`:
/// none), keeping `min_chars` characters at least, removing units by the fraction of their
/// n-grams seen when `ngrams` is given: what `--granularity`, `--min-chars`, `--ngrams` and
/// `--ngram-threshold` do to a policy. `min_chars` and `ngrams` not given are the policy's
/// rule's when it has one (else [`UnitRule::DEFAULT_MIN_CHARS`] and the exact rule).
pub fn with_units(
    policy: crate::Policy,
    unit: Option<Unit>,
    min_chars: Option<u64>,
    ngrams: Option<NgramRule>,
) -> Result<crate::Policy, DedupError> {
    if unit.is_none() && ngrams.is_some() {
        return Err(DedupError::InvalidOption(
            "the n-gram rule needs a unit below the document (paragraph or line)".into(),
        ));
    }
    // Each one given replaces the policy's rule's; the others are kept (or default).
    let base = policy.units;
    let units = unit.map(|unit| UnitRule {
        unit,
        min_chars: min_chars
            .or(base.map(|rule| rule.min_chars))
            .unwrap_or(UnitRule::DEFAULT_MIN_CHARS),
        ngrams: ngrams.or(base.and_then(|rule| rule.ngrams)),
    });
    crate::PolicyChanges {
        units: Some(units),
        ..Default::default()
    }
    .apply(policy)
}

/// The rule below the document, a field of the [`crate::Policy`] (`units`): which unit, the
/// least a document must keep, and how a unit is found seen before (its whole key, or the
/// fraction of its n-grams).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitRule {
    /// What documents are cut into.
    pub unit: Unit,
    /// A document is dropped when fewer characters than this (white space not counted) are
    /// left once its repeated units are removed. 1, the default, drops only documents left
    /// empty (CCNet's rule).
    #[serde(default = "UnitRule::default_min_chars")]
    pub min_chars: u64,
    /// The fraction rule (dolma's): a unit goes when at least a threshold of its n-grams
    /// were seen before it. `None` (the default, left out of the JSON): the exact rule, a
    /// unit goes when its whole normalised text was seen before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ngrams: Option<NgramRule>,
}

impl UnitRule {
    /// The default least number of characters a document keeps: 1.
    pub const DEFAULT_MIN_CHARS: u64 = 1;

    fn default_min_chars() -> u64 {
        Self::DEFAULT_MIN_CHARS
    }

    /// The exact rule for `unit` with the default minimum.
    pub fn new(unit: Unit) -> UnitRule {
        UnitRule {
            unit,
            min_chars: Self::DEFAULT_MIN_CHARS,
            ngrams: None,
        }
    }

    /// Checks the rule: a sentence span of 1 to 64 sentences; the n-gram rule over
    /// paragraphs or lines, with n and the threshold in range.
    pub fn validate(&self) -> Result<(), DedupError> {
        let invalid = |what: &str| Err(DedupError::InvalidOption(what.into()));
        if let Unit::Sentences(n) = self.unit {
            if !(1..=64).contains(&n) {
                return invalid("a sentence span has 1 to 64 sentences");
            }
        }
        if let Some(ngrams) = self.ngrams {
            if matches!(self.unit, Unit::Sentences(_)) {
                return invalid(
                    "the n-gram rule applies to paragraphs or lines, not sentence spans",
                );
            }
            if !(1..=NgramRule::MAX_N).contains(&ngrams.n) {
                return invalid("an n-gram has 1 to 64 words");
            }
            if !(ngrams.threshold > 0.0 && ngrams.threshold <= 1.0) {
                return invalid("the n-gram threshold is a fraction above 0, at most 1");
            }
        }
        Ok(())
    }

    /// One line saying what the rule does, for reports.
    pub fn describe(&self) -> String {
        let rule = match self.ngrams {
            None => "a repeat of a normalised unit (xxh3-64) seen earlier is removed".to_string(),
            Some(ngrams) => format!(
                "a unit is removed when at least {} of its {}-grams of words were seen earlier (a unit of fewer than {} words: when its whole text was)",
                ngrams.threshold,
                ngrams.n,
                ngrams.n + 1
            ),
        };
        format!(
            "{} units: {rule}; documents left with under {} characters are dropped",
            self.unit, self.min_chars
        )
    }
}

/// The fraction rule of dolma's paragraph dedup (its `by_ngram`): each unit's n-grams of
/// words (UAX #29 words of its normalised text, as dolma's tokens; every n-gram, stride 1)
/// are keys, and a unit is removed when at least `threshold` of them were seen before it. A
/// unit with fewer than two n-grams (fewer than `n + 1` words) has one key, its whole
/// normalised text, as in dolma.
///
/// "Seen before" does not depend on which units were removed: an n-gram is seen before a
/// unit when its first occurrence (by document, then by position in the document) is
/// earlier, whether or not the unit that had it was removed (dolma inserts every n-gram into
/// its filter). A repeat inside one unit counts as seen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NgramRule {
    /// Words an n-gram has.
    pub n: u32,
    /// The least fraction of a unit's n-grams seen before for it to be removed.
    pub threshold: f64,
}

impl NgramRule {
    /// The default n: 13 words (dolma has no default n: its `ngram_length` 0 means whole
    /// paragraphs; 13-grams are the n-gram of the dedup and decontamination literature).
    pub const DEFAULT_N: u32 = 13;
    /// The default threshold: 1.0, dolma's `overlap_threshold` default (every n-gram seen).
    pub const DEFAULT_THRESHOLD: f64 = 1.0;
    /// The largest n.
    pub const MAX_N: u32 = 64;

    /// The rule `--ngrams` and `--ngram-threshold` name: `None` when neither is given, else
    /// each one given with the other's default.
    pub fn from_options(n: Option<u32>, threshold: Option<f64>) -> Option<NgramRule> {
        (n.is_some() || threshold.is_some()).then(|| NgramRule {
            n: n.unwrap_or(Self::DEFAULT_N),
            threshold: threshold.unwrap_or(Self::DEFAULT_THRESHOLD),
        })
    }
}
