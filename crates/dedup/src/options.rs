//! Options of a dedup run.

use serde::{Deserialize, Serialize};

use neardup_core::Choice;

use crate::budget::Budget;
use crate::policy::Policy;

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

impl Choice for KeepPolicy {
    const ALL: &'static [Self] = &[KeepPolicy::First, KeepPolicy::Longest, KeepPolicy::Newest];

    fn help(self) -> &'static str {
        match self {
            KeepPolicy::First => "the one seen first in the input",
            KeepPolicy::Longest => "the longest text; ties to the first seen",
            KeepPolicy::Newest => "the most recently fetched; ties and undated to the first seen",
        }
    }
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
    /// List every accepted pair in [`crate::Outcome::pairs`] (what `--pairs` and
    /// `--components` write): every candidate pair is then verified, which grows with the
    /// square of a family of near copies. Off (the default), a document is verified only
    /// against the kept documents it could duplicate, nearest first, until one passes: a family
    /// of m copies costs about m verifications, and the pairs listed are those that decided.
    /// The clusters, removals and kept documents are the same either way.
    #[serde(default)]
    pub list_pairs: bool,
    /// The memory the run may hold and where it spills (not part of a policy file: a property
    /// of the machine, not of the decision).
    #[serde(skip)]
    pub budget: Budget,
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
