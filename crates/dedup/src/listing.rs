//! Every accepted near pair, listed within the budget (`--pairs`, `--components`).
//!
//! The linear decision ([`crate::by_kept`]) verifies a unit only against the kept units it
//! could join, so it never sees most pairs of a family. A caller who asks for every accepted
//! pair gets them from a second search over the units with a neighbour: the batch search of
//! every pair within `k` ([`ExternalPairs::finish`]: in memory while it fits what the budget
//! leaves, from bucket files beyond, the pairs merged from sorted runs), each pair verified on
//! the shingle sets the decision stored already, a batch at a time on every thread, and the
//! accepted ones added to the run's list of pairs (its share of the budget, then disk). The
//! pairs and their evidence are those the search over every candidate pair gave; the removals
//! are the decision's, so listing changes no decision.
//!
//! Memory: the search's share of what is left, one batch of pairs ([`BATCH`]: 64 Ki pairs,
//! about 1.5 MB with their verdicts); the pairs are never held all at once.

use neardup_index::{Design, ExternalPairs, Fingerprint};

use crate::candidates::{accept_all, Verifier};
use crate::documents::Documents;
use crate::engine::{simhash_similarity, FoundPair};
use crate::error::DedupError;
use crate::listed::ListBuilder;
use crate::options::DedupOptions;

/// Pairs verified at a time (in parallel).
const BATCH: usize = 1 << 16;

/// What listing found.
pub(crate) struct Listing {
    /// Pairs of units within `k`.
    pub(crate) candidates: usize,
    /// How many of them were verified on shingle sets.
    pub(crate) verified: usize,
    /// Bytes the search wrote to disk.
    pub(crate) spilled_bytes: u64,
}

/// Adds to `pairs` every pair of `units` (ascending) within the policy's `k` that the policy
/// accepts (verified by `verifier` when it verifies), searching within what the budget leaves
/// once `held` bytes are held; `fingerprint`: a unit's SimHash value.
pub(crate) fn list_accepted<F: Fingerprint>(
    documents: &Documents,
    units: &[u32],
    options: &DedupOptions,
    held: u64,
    verifier: Option<&Verifier>,
    pairs: &ListBuilder<FoundPair>,
    fingerprint: impl Fn(u32) -> F,
) -> Result<Listing, DedupError> {
    let (policy, budget) = (&options.policy, &options.budget);
    let mut search = ExternalPairs::<F>::new(budget.for_search(held), &budget.spill_dir());
    for &unit in units {
        search.push(fingerprint(unit))?;
    }
    let design = Design::for_expected_len(units.len(), policy.k, F::BITS);
    let mut found = search.finish(policy.k, design)?;
    let mut listing = Listing {
        candidates: 0,
        verified: 0,
        spilled_bytes: 0,
    };
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        batch.clear();
        for pair in found.by_ref().take(BATCH) {
            let pair = pair?;
            let (a, b) = (units[pair.a as usize], units[pair.b as usize]);
            batch.push((a, b, simhash_similarity(documents, a, b)));
        }
        if batch.is_empty() {
            break;
        }
        listing.candidates += batch.len();
        let (mut accepted, verified) = accept_all(documents, policy, &batch, verifier)?;
        listing.verified += verified;
        pairs.add(&mut accepted)?;
    }
    listing.spilled_bytes = found.spilled_bytes();
    tracing::info!(
        candidates = listing.candidates,
        verified = listing.verified,
        spilled_bytes = listing.spilled_bytes,
        "every accepted pair listed"
    );
    Ok(listing)
}
