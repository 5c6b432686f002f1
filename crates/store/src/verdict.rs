//! What a check answers: a verdict and the matching documents.

use neardup_dedup::{Evidence, Kind};
use serde::Serialize;

/// Whether a document has been seen before, or nearly: the one verdict of every door
/// ([`neardup_dedup::Verdict`]), naming documents by id. For a near duplicate, the stored
/// document is the nearest one (smallest SimHash distance, then first stored) that the policy
/// accepts.
pub type Verdict = neardup_dedup::Verdict<String>;

/// One stored document a check found a duplicate, by the database's policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocMatch {
    /// Its id.
    pub id: String,
    /// Its URL, if stored.
    pub url: Option<String>,
    /// Its title, if stored.
    pub title: Option<String>,
    /// Hamming distance between the SimHash fingerprints.
    pub distance: u32,
    /// Exact (same digest) or near.
    pub kind: Kind,
    /// The measure that decided, its value and the policy's threshold.
    #[serde(flatten)]
    pub evidence: Evidence,
}

/// The answer to a check, or to a check-and-insert.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckOutcome {
    /// The checked document's id (generated if the caller gave none).
    pub id: String,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// True if the document was inserted (durably).
    pub inserted: bool,
    /// The matches, by distance then id, at most [`crate::MAX_MATCHES`].
    pub matches: Vec<DocMatch>,
}

/// When a check-and-insert stores the document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsertMode {
    /// Only when the verdict is unique (the default).
    #[default]
    IfUnique,
    /// Whatever the verdict.
    Always,
    /// Never: a check only.
    Never,
}

impl neardup_core::Choice for InsertMode {
    const ALL: &'static [Self] = &[InsertMode::IfUnique, InsertMode::Always, InsertMode::Never];

    fn help(self) -> &'static str {
        match self {
            InsertMode::IfUnique => "insert only documents whose verdict is unique",
            InsertMode::Always => "insert every document, whatever its verdict",
            InsertMode::Never => "never insert: a check only",
        }
    }
}

impl InsertMode {
    /// Whether a document with `verdict` is to be inserted.
    pub fn inserts(self, verdict: &Verdict) -> bool {
        match self {
            InsertMode::IfUnique => *verdict == Verdict::Unique,
            InsertMode::Always => true,
            InsertMode::Never => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::Choice;

    use super::*;

    #[test]
    fn insert_modes_are_spelled_as_over_http() {
        neardup_core::choice::check_names::<InsertMode>().unwrap();
        assert_eq!(InsertMode::IfUnique.name(), "if_unique");
    }
}
