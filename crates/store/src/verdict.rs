//! What a check answers: a verdict and the matching documents.

use serde::Serialize;

/// Whether a document has been seen before, or nearly.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing within the database's distance.
    Unique,
    /// A stored document has the same digest: the same normalised text.
    Duplicate {
        /// The first such document (by id).
        of: String,
    },
    /// A stored document's SimHash is within the database's distance `k`.
    NearDuplicate {
        /// The nearest such document (by distance, then id).
        of: String,
        /// Its Hamming distance.
        distance: u32,
        /// `1 - distance / bits`.
        similarity: f64,
    },
}

impl Verdict {
    /// The verdict's name: `unique`, `duplicate` or `near_duplicate`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Unique => "unique",
            Verdict::Duplicate { .. } => "duplicate",
            Verdict::NearDuplicate { .. } => "near_duplicate",
        }
    }
}

/// One stored document a check found.
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
    /// `1 - distance / bits`.
    pub similarity: f64,
}

/// The answer to a check, or to a check-and-insert.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
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
