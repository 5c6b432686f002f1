//! # neardup-dedup
//!
//! The batch half of neardup: given the fingerprints of a corpus (one [`Item`] per document, in
//! input order), find the exact and near-duplicate pairs, verify them if asked, group them into
//! clusters, choose what to keep, and say why every other document goes.
//!
//! The steps, each exact where it claims to be:
//! 1. exact duplicates: documents with the same digest of their normalised text;
//! 2. near-duplicate candidates among one representative per exact group: all pairs of SimHash
//!    fingerprints within `k` bits (permuted tables, exact), MinHash LSH bands, or every pair
//!    whose shingle sets can overlap enough (prefix filtering, exact: [`Method::Overlap`]);
//! 3. optional verification of each candidate by the true Jaccard resemblance or containment of
//!    the two shingle sets, with an optional length-ratio guard
//!    ([`Policy::min_length_ratio`]);
//! 4. optional URL duplicates (equal canonical URLs);
//! 5. representative-centred clusters: documents in keep order, each removed as a duplicate of
//!    the nearest kept document it has an accepted pair with, or kept itself.
//!
//! Below the document, [`units`] removes the paragraphs, lines or sentence spans that repeat
//! across a corpus (the rule of CCNet and datatrove), within the same budget.
//!
//! Beside them, [`mirrors`] finds host (or host/path-prefix) pairs that serve the same content
//! under the same relative paths, from `(url, content key)` pairs.
//!
//! Steps 1 to 3 are the [`Policy`]: the one decision that `compare`, `eval`, the online
//! database and its service apply too ([`Policy::decide`] for one pair).
//!
//! Everything is deterministic: the same items and options give the same outcome, whatever the
//! number of threads.
//!
//! ```
//! use neardup_core::{Fingerprinter, Profile};
//! use neardup_dedup::{dedup, DedupOptions, Item};
//! let fingerprinter = Fingerprinter::new(Profile::web()).unwrap();
//! let texts = [
//!     "The city council approved the new budget on Tuesday after a long debate.",
//!     "The city council approved the new budget on Tuesday after a long debate!",
//!     "Forecasters expect heavy rain across the region on Monday and Tuesday.",
//! ];
//! let items: Vec<Item> = texts
//!     .iter()
//!     .map(|t| {
//!         let mut item = Item::new(fingerprinter.fingerprint(t), t.len() as u64);
//!         item.features = Some(fingerprinter.feature_set(t)); // for verification
//!         item
//!     })
//!     .collect();
//! let outcome = dedup(&items, &DedupOptions::default()).unwrap();
//! assert_eq!(outcome.kept, [true, false, true]);
//! assert_eq!(outcome.removals[0].of, 0);
//! ```

mod budget;
mod by_kept;
mod candidates;
mod clusters;
mod corpus_features;
mod digests;
mod documents;
mod engine;
mod error;
mod exact;
mod kept_index;
mod keys;
mod listed;
mod listing;
pub mod mirrors;
mod names;
mod options;
mod outcome;
mod policy;
mod prefixes;
mod ranked;
mod rows;
mod sets;
mod signatures;
pub mod units;
mod url_keys;
mod url_pairs;
mod verdict;

pub use budget::{peak_resident_bytes, resident_bytes, Budget};
pub use corpus_features::CorpusFeatures;
pub use documents::Documents;
pub use engine::{
    dedup, dedup_documents, dedup_every_pair, dedup_with, FeatureSource, Item, NoFeatures, Phase,
    Removal,
};
pub use error::DedupError;
pub use keys::SearchKeys;
pub use listed::Listed;
pub use names::{NameReader, Names};
pub use neardup_index::{Cluster, Pair};
pub use options::{DedupOptions, KeepPolicy};
pub use outcome::{Outcome, RunOutcome};
pub use policy::{
    length_ratio, Bounds, Decision, Evidence, Kind, Measure, Method, Policy, PolicyChanges, Side,
    VerifyMeasure, DEFAULT_K, DEFAULT_THRESHOLD,
};
pub use verdict::{AcceptedPair, ClusterOf, ComponentOf, DocumentVerdict, DuplicateOf, Verdict};

/// A pair of documents found to be duplicates.
pub use engine::FoundPair;
