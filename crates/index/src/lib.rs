//! neardup-index: find near-duplicate fingerprints without comparing every pair.
//!
//! Comparing every pair of `n` fingerprints is O(n²). This crate makes it near-linear, exactly,
//! following seed 001's framework — brute force ([`BruteForce`]) → the bitwise inverted index
//! ([`BitInvertedIndex`]) → pigeonhole blocks — generalised to Manku et al.'s permuted tables
//! ([`PermutedTables`], [`Design`]), plus the lecture slides' approximate rotate-sort-compare
//! ([`rotate_pairs`]).
//!
//! * An index held in a store (seed 004's block keys): [`BlockKeys`] says which keys a
//!   fingerprint is stored under and which a query reads.
//! * Online Hamming search: the [`HammingIndex`] trait (insert, remove, query within `k`), for
//!   64- and 128-bit fingerprints ([`Fingerprint`] is `u64` or `u128`).
//! * Batch: [`all_pairs`] — every pair within `k`, once, identical values included, in parallel;
//!   [`ExternalPairs`] — the same answer within a memory budget, spilling to sorted files, and
//!   the components of "within `k`" from links in sorted runs when even a union-find of every
//!   position does not fit ([`FoundLinks`]).
//! * MinHash LSH for Jaccard thresholds ([`MinHashLsh`], [`candidate_pairs`], [`LshParams`]) and an
//!   exact-digest index ([`ExactIndex`], [`exact_groups`]).
//! * [`clusters`]: connected components over pairs, with a representative per cluster.
//!
//! The crate knows nothing of text: fingerprints are plain integers, MinHash signatures `&[u32]`,
//! ids `u64` chosen by the caller (online) or slice positions (batch).

mod allpairs;
mod bitwise;
mod block_keys;
mod brute;
mod cluster;
mod design;
mod error;
mod exact;
mod external;
mod fingerprint;
mod grouped;
mod hamming;
mod linked;
mod lsh;
mod permuted;
mod probed;
mod radix;
mod rotate;
mod runs;
mod sink;
mod slots;
pub mod synth;

pub use allpairs::{all_pairs, near_components, run_components, Pair};
pub use bitwise::BitInvertedIndex;
pub use block_keys::{BlockKeys, KEY_COST, PLANNED_LEN};
pub use brute::BruteForce;
pub use cluster::{clusters, Cluster, Representative, UnionFind};
pub use design::{Design, Table, MAX_TABLES};
pub use error::{IndexError, Result};
pub use exact::{exact_groups, ExactIndex};
pub use external::{union_find_fits, ExternalPairs, FoundComponents, FoundPairs};
pub use fingerprint::Fingerprint;
pub use grouped::Grouped;
pub use hamming::{HammingIndex, Match};
pub use linked::{by_component, FoundLinks, Labels};
pub use lsh::{candidate_pairs, estimated_jaccard, LshParams, MinHashLsh, SimilarPair};
pub use permuted::PermutedTables;
pub use probed::ProbedBlocks;
pub use rotate::{rotate_pairs, RotateParams};
pub use runs::{Merge, RunRecord, Runs, Sorted, SortedPairs, SpillDir, SpillError};
