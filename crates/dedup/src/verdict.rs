//! The one vocabulary of a decision, written by every door: the batch engine's removed records,
//! a database's check, the HTTP API, `compare`, Python and Spark.
//!
//! A document is `unique` (nothing before it is a duplicate of it) or a `duplicate` of one
//! kept document, with the `kind` of duplicate (`exact`, `near`, `url`), the SimHash
//! `distance` between the two and the [`Evidence`] that decided (`measure`, `value`,
//! `threshold`):
//!
//! ```
//! use neardup_dedup::{DuplicateOf, Evidence, Kind, Measure, Verdict};
//!
//! let verdict = Verdict::Duplicate(DuplicateOf {
//!     duplicate_of: "council-budget",
//!     kind: Kind::Near,
//!     distance: 2,
//!     evidence: Evidence { measure: Measure::Jaccard, value: 0.95, threshold: 0.9 },
//! });
//! assert_eq!(
//!     serde_json::to_string(&verdict).unwrap(),
//!     r#"{"verdict":"duplicate","duplicate_of":"council-budget","kind":"near","distance":2,"measure":"jaccard","value":0.95,"threshold":0.9}"#
//! );
//! assert_eq!(serde_json::to_string(&Verdict::<&str>::Unique).unwrap(), r#"{"verdict":"unique"}"#);
//! ```

use serde::{Deserialize, Serialize};

use crate::policy::{Evidence, Kind};

/// Whether a document duplicates one that came before it, and which; `I` names documents (an
/// id, or a position).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict<I> {
    /// No document before it is a duplicate of it, by the policy.
    Unique,
    /// It duplicates a kept document.
    Duplicate(DuplicateOf<I>),
}

/// The kept document a duplicate duplicates, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DuplicateOf<I> {
    /// The kept document.
    pub duplicate_of: I,
    /// Exact (same normalised text), near (by the policy's measure) or url (same canonical URL).
    pub kind: Kind,
    /// SimHash distance between the two.
    pub distance: u32,
    /// The measure that decided, its value and the policy's threshold.
    #[serde(flatten)]
    pub evidence: Evidence,
}

impl<I> Verdict<I> {
    /// The kept document it duplicates, and why; `None` when unique.
    pub fn duplicate(&self) -> Option<&DuplicateOf<I>> {
        match self {
            Verdict::Unique => None,
            Verdict::Duplicate(of) => Some(of),
        }
    }

    /// Whether it is unique.
    pub fn is_unique(&self) -> bool {
        matches!(self, Verdict::Unique)
    }
}

/// One document and its verdict: a line of `neardup dedup --removed` (`{"id", "verdict",
/// "duplicate_of", "kind", "distance", "measure", "value", "threshold"}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentVerdict<I> {
    /// The document.
    pub id: I,
    /// Its verdict.
    #[serde(flatten)]
    pub verdict: Verdict<I>,
}

/// Two documents the policy accepts as duplicates, `a` the earlier: a line of `neardup dedup
/// --pairs` (`{"a", "b", "kind", "distance", "measure", "value", "threshold"}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceptedPair<I> {
    /// The earlier document.
    pub a: I,
    /// The later document.
    pub b: I,
    /// Exact, near or url.
    pub kind: Kind,
    /// SimHash distance between the two.
    pub distance: u32,
    /// The measure that decided, its value and the policy's threshold.
    #[serde(flatten)]
    pub evidence: Evidence,
}

/// A representative-centred cluster: a line of `neardup dedup --clusters` (`{"cluster",
/// "members", "representative"}`): every member is the representative or a duplicate of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterOf<I> {
    /// Its number, from 0 in the order of the first members.
    pub cluster: usize,
    /// Its members, in input order.
    pub members: Vec<I>,
    /// The kept member.
    pub representative: I,
}

/// A connected component of the accepted pairs: a line of `neardup dedup --components`
/// (`{"component", "members", "kept"}`): chained duplicates, with every member kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentOf<I> {
    /// Its number, from 0 in the order of the first members.
    pub component: usize,
    /// Its members, in input order.
    pub members: Vec<I>,
    /// The members kept.
    pub kept: Vec<I>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Measure;

    #[test]
    fn verdicts_round_trip_through_json() {
        let judged = DocumentVerdict {
            id: "b".to_string(),
            verdict: Verdict::Duplicate(DuplicateOf {
                duplicate_of: "a".to_string(),
                kind: Kind::Exact,
                distance: 0,
                evidence: Evidence::EXACT,
            }),
        };
        let json = serde_json::to_string(&judged).unwrap();
        assert_eq!(
            json,
            r#"{"id":"b","verdict":"duplicate","duplicate_of":"a","kind":"exact","distance":0,"measure":"digest","value":1.0,"threshold":1.0}"#
        );
        assert_eq!(
            serde_json::from_str::<DocumentVerdict<String>>(&json).unwrap(),
            judged
        );
        assert_eq!(Measure::Digest, Evidence::EXACT.measure);
    }
}
