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

impl KeepPolicy {
    /// The key document `i` (of `bytes` of text, fetched at `fetched_at`) is taken in, smaller
    /// first: the order in which this policy prefers documents (the document engine's, and
    /// the unit pass's below the document).
    pub fn rank_key(self, i: u32, bytes: u64, fetched_at: Option<i64>) -> (u64, i64, u32) {
        match self {
            KeepPolicy::First => (0, 0, i),
            KeepPolicy::Longest => (u64::MAX - bytes, 0, i),
            KeepPolicy::Newest => (0, -fetched_at.unwrap_or(i64::MIN + 1), i),
        }
    }

    /// Each of `count` documents' place in this policy's order (0 for the one taken first),
    /// by position; `of(i)` is document `i`'s bytes of text and fetch time.
    ///
    /// ```
    /// use neardup_dedup::KeepPolicy;
    /// let bytes = [3u64, 9, 5];
    /// let ranks = KeepPolicy::Longest.ranks(3, |i| (bytes[i as usize], None));
    /// assert_eq!(ranks, [2, 0, 1]);
    /// ```
    pub fn ranks(self, count: u32, of: impl Fn(u32) -> (u64, Option<i64>)) -> Vec<u32> {
        let mut order: Vec<u32> = (0..count).collect();
        order.sort_by_cached_key(|&i| {
            let (bytes, fetched_at) = of(i);
            self.rank_key(i, bytes, fetched_at)
        });
        let mut ranks = vec![0u32; order.len()];
        for (rank, &i) in order.iter().enumerate() {
            ranks[i as usize] = rank as u32;
        }
        ranks
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
    /// square of a family of near copies (with a SimHash method, found by a second search
    /// after the decision and listed within the budget: see [`crate::Listed`]). Off (the
    /// default), a document is verified only
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
