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

use neardup_index::{Design, ExternalPairs, Fingerprint, LshParams, Runs, SpillDir};

use crate::candidates::{accept_all, Verifier};
use crate::documents::Documents;
use crate::engine::{simhash_similarity, FoundPair};
use crate::error::DedupError;
use crate::listed::ListBuilder;
use crate::options::DedupOptions;
use crate::prefixes::{each_prefix_pair, Prefix, ShingleOrder};

/// Pairs verified at a time (in parallel).
const BATCH: usize = 1 << 16;

/// What listing found.
pub(crate) struct Listing {
    /// Candidate pairs of units.
    pub(crate) candidates: usize,
    /// How many of them were verified on shingle sets.
    pub(crate) verified: usize,
    /// Bytes the search wrote to disk.
    pub(crate) spilled_bytes: u64,
}

/// Where a listing sends what it found.
pub(crate) struct ListingSinks<'a> {
    /// The shingle sets the decision stored, when the policy verifies.
    pub(crate) verifier: Option<&'a Verifier>,
    /// The accepted pairs.
    pub(crate) pairs: &'a ListBuilder<FoundPair>,
}

/// Adds to `sinks.pairs` every pair of `units` (ascending) within the policy's `k` that the
/// policy accepts, searching within what the budget leaves once `held` bytes are held;
/// `fingerprint`: a unit's SimHash value.
pub(crate) fn list_accepted<F: Fingerprint>(
    documents: &Documents,
    units: &[u32],
    options: &DedupOptions,
    held: u64,
    sinks: ListingSinks<'_>,
    fingerprint: impl Fn(u32) -> F,
) -> Result<Listing, DedupError> {
    let (policy, budget) = (&options.policy, &options.budget);
    let mut search = ExternalPairs::<F>::new(budget.for_search(held), &budget.spill_dir());
    for &unit in units {
        search.push(fingerprint(unit))?;
    }
    let design = Design::for_expected_len(units.len(), policy.k, F::BITS);
    let mut found = search.finish(policy.k, design)?;
    let mut accepting = Accepting::new(documents, options, sinks);
    for pair in found.by_ref() {
        let pair = pair?;
        let (a, b) = (units[pair.a as usize], units[pair.b as usize]);
        accepting.push((a, b, simhash_similarity(documents, a, b)))?;
    }
    accepting.finish(found.spilled_bytes())
}

/// Adds to `sinks.pairs` every MinHash LSH candidate pair of `units` (ascending) that the
/// policy accepts: every two units equal in a band of `params` whose estimated Jaccard reaches
/// the threshold, as [`neardup_index::candidate_pairs`] finds them. `(band key, unit)` of every
/// band of every unit is sorted within what the budget leaves once `held` bytes are held (on
/// disk beyond); the units of each key are read in, with their signatures, and their pairs
/// reported there if that band is the first the two share (so each pair once).
pub(crate) fn list_band_pairs(
    documents: &Documents,
    units: &[u32],
    options: &DedupOptions,
    held: u64,
    sinks: ListingSinks<'_>,
    params: LshParams,
) -> Result<Listing, DedupError> {
    let budget = &options.budget;
    let spill = SpillDir::new(&budget.spill_dir());
    let keyed: Runs<(u64, u64)> = Runs::new(spill.clone(), budget.for_search(held));
    let signatures = documents.signatures();
    signatures.band_keys_into(units.iter().copied(), params, &keyed)?;
    let mut accepting = Accepting::new(documents, options, sinks);
    let bucket = |key: u64, members: &[u32], accepting: &mut Accepting<'_>| {
        if members.len() < 2 {
            return Ok(());
        }
        let read = signatures.read_many(members)?;
        for (i, x) in read.iter().enumerate() {
            for (j, y) in read.iter().enumerate().skip(i + 1) {
                let Some(first) = params.first_shared_band(x, y) else {
                    continue;
                };
                // Reported where the first band they share is keyed (a key met by a hash
                // collision of another band is not that one).
                if params.band_keys(x).nth(first) != Some(key) {
                    continue;
                }
                let estimate = neardup_index::estimated_jaccard(x, y);
                if estimate >= options.policy.threshold {
                    accepting.push((members[i], members[j], estimate))?;
                }
            }
        }
        Ok::<_, DedupError>(())
    };
    let mut members = Vec::new();
    let mut current = None;
    for record in keyed.into_sorted()? {
        let (key, at) = record?;
        if current != Some(key) {
            if let Some(current) = current {
                bucket(current, &members, &mut accepting)?;
            }
            members.clear();
            current = Some(key);
        }
        // A unit twice under one key (two of its bands' keys collide) is one member.
        if members.last() != Some(&units[at as usize]) {
            members.push(units[at as usize]);
        }
    }
    if let Some(current) = current {
        bucket(current, &members, &mut accepting)?;
    }
    accepting.finish(spill.written())
}

/// Adds to `sinks.pairs` every candidate pair of the overlap search ([`crate::prefixes`]) within
/// each of `components` (units in keep order) that the policy accepts, from the sets the
/// decision stored: a component's prefixes indexed in blocks that fit what the budget leaves
/// once `held` bytes are held ([`each_prefix_pair`]; one block held at a time).
pub(crate) fn list_prefix_pairs(
    documents: &Documents,
    components: &[&[u32]],
    options: &DedupOptions,
    held: u64,
    sinks: ListingSinks<'_>,
    order: &ShingleOrder,
) -> Result<Listing, DedupError> {
    let (policy, budget) = (&options.policy, &options.budget);
    let memory = budget.for_search(held);
    let sets = sinks.verifier.ok_or_else(|| {
        DedupError::MissingData("the overlap search lists pairs from shingle sets".into())
    })?;
    let mut accepting = Accepting::new(documents, options, sinks);
    for component in components {
        let prefix_of = |at: usize| -> Result<Prefix, DedupError> {
            let set = sets.set(component[at])?.unwrap_or_default();
            Ok(order.prefix(&set, policy))
        };
        each_prefix_pair(component.len(), memory, policy, prefix_of, |a, b, lens| {
            let (x, y) = (component[a], component[b]);
            let ratio = lens.0.min(lens.1) as f64 / lens.0.max(lens.1).max(1) as f64;
            accepting.push((x.min(y), x.max(y), ratio))
        })?;
    }
    accepting.finish(0)
}

/// Candidates verified a batch at a time on every thread, the accepted ones added to the
/// list of pairs.
struct Accepting<'a> {
    documents: &'a Documents,
    options: &'a DedupOptions,
    sinks: ListingSinks<'a>,
    batch: Vec<(u32, u32, f64)>,
    listing: Listing,
}

impl<'a> Accepting<'a> {
    fn new(documents: &'a Documents, options: &'a DedupOptions, sinks: ListingSinks<'a>) -> Self {
        Accepting {
            documents,
            options,
            sinks,
            batch: Vec::with_capacity(BATCH),
            listing: Listing {
                candidates: 0,
                verified: 0,
                spilled_bytes: 0,
            },
        }
    }

    /// Adds the candidate `(a, b, similarity)`, `a < b`.
    fn push(&mut self, candidate: (u32, u32, f64)) -> Result<(), DedupError> {
        self.batch.push(candidate);
        match self.batch.len() >= BATCH {
            true => self.accept(),
            false => Ok(()),
        }
    }

    fn accept(&mut self) -> Result<(), DedupError> {
        let policy = &self.options.policy;
        let verifier = self.sinks.verifier;
        let (mut accepted, verified) = accept_all(self.documents, policy, &self.batch, verifier)?;
        self.listing.candidates += self.batch.len();
        self.listing.verified += verified;
        self.batch.clear();
        self.sinks.pairs.add(&mut accepted)?;
        Ok(())
    }

    /// The listing, once the last batch is verified; `spilled_bytes`: what the search wrote.
    fn finish(mut self, spilled_bytes: u64) -> Result<Listing, DedupError> {
        self.accept()?;
        self.listing.spilled_bytes = spilled_bytes;
        tracing::info!(
            candidates = self.listing.candidates,
            verified = self.listing.verified,
            spilled_bytes = self.listing.spilled_bytes,
            "every accepted pair listed"
        );
        Ok(self.listing)
    }
}
