//! Candidate pairs: the SimHash, MinHash LSH or overlap search over the first members of exact
//! groups, and their verification on shingle sets held within the budget.

use std::sync::Arc;
use std::time::Instant;

use neardup_core::measure::FeatureSet;
use neardup_core::Simhash;
use neardup_index::{all_pairs, candidate_pairs, Design, Fingerprint};
use rayon::prelude::*;

use crate::budget::Budget;
use crate::documents::Documents;
use crate::engine::{distance, pair, simhash_similarity, FeatureSource, FoundPair};
use crate::error::DedupError;
use crate::policy::{Evidence, Kind, Measure, Method, Policy};
use crate::prefixes::{each_prefix_pair, ShingleOrder};
use crate::sets::{SetStore, Summary};

/// The near-duplicate candidates among some documents, and what verifying them needs.
pub(crate) struct NearCandidates {
    /// Candidate pairs `(a, b, similarity)`, `a < b`.
    pub(crate) candidates: Vec<(u32, u32, f64)>,
    /// The shingle sets of the documents in candidates, when the policy verifies.
    pub(crate) verifier: Option<Verifier>,
}

/// Verification of candidate pairs on the shingle sets of the documents in them.
pub(crate) struct Verifier {
    sets: SetStore,
}

impl Verifier {
    /// Stores the shingle sets of `positions` (ascending) from `source` within `memory` bytes,
    /// spilling to `spill_dir` beyond them.
    pub(crate) fn fetch(
        source: &mut dyn FeatureSource,
        positions: &[u32],
        memory: u64,
        spill_dir: &std::path::Path,
    ) -> Result<Self, DedupError> {
        let started = Instant::now();
        let last = positions.last().copied().unwrap_or(0);
        let mut sets = SetStore::new(memory, positions.len(), last, spill_dir);
        let mut at = 0;
        // No set wanted, no read (the CLI's source reads its whole corpus again).
        if !positions.is_empty() {
            source.feature_sets(positions, &mut |set| {
                let position = *positions.get(at).ok_or_else(|| too_many(positions.len()))?;
                at += 1;
                sets.push(position, &set)
            })?;
        }
        if at != positions.len() {
            return Err(DedupError::MissingData(format!(
                "asked for {} shingle sets, got {at}",
                positions.len()
            )));
        }
        sets.finish()?;
        tracing::info!(
            documents = sets.len(),
            shingles = sets.shingles(),
            spilled_bytes = sets.spilled_bytes(),
            seconds = started.elapsed().as_secs_f64(),
            "shingle sets of the candidate documents stored"
        );
        Ok(Verifier { sets })
    }

    /// The bytes of memory the sets may hold.
    pub(crate) fn share(&self) -> u64 {
        self.sets.share()
    }

    /// Bytes of shingle sets written to disk.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.sets.spilled_bytes()
    }

    /// The set of the document at `position` (read back through the cache when spilled), or
    /// `None` if it was not stored.
    pub(crate) fn set(&self, position: u32) -> Result<Option<Arc<FeatureSet>>, DedupError> {
        self.sets.get(position)
    }

    /// The size of the set of the document at `position` (held in memory, whatever is
    /// spilled), or `None` if it was not stored.
    pub(crate) fn set_len(&self, position: u32) -> Option<usize> {
        self.sets.summary(position).map(|summary| summary.len)
    }

    /// Drops the set of the document at `position` from the cache: it will not be asked for
    /// again.
    pub(crate) fn forget(&self, position: u32) {
        self.sets.forget(position);
    }

    /// The pair `(a, b)` if the policy's verification accepts it. The sets' sizes and bucket
    /// counts, held in memory, rule out most failing pairs before a set is read (exactly: the
    /// bound is never below the true intersection).
    pub(crate) fn verify(
        &self,
        documents: &Documents,
        policy: &Policy,
        a: u32,
        b: u32,
    ) -> Result<Option<FoundPair>, DedupError> {
        let (Some(x), Some(y)) = (self.sets.summary(a), self.sets.summary(b)) else {
            return Ok(None);
        };
        if !could_pass(policy, &x, &y) {
            return Ok(None);
        }
        self.verify_sets(documents, policy, a, b)
    }

    /// For each of `others`, whether its pair with `unit` could pass verification on the sets'
    /// sizes and bucket counts alone, into `passes` (`false` where a set was not stored): what
    /// [`Verifier::verify`] checks before it reads the sets, for many pairs at once, their
    /// summaries read together ([`SetStore::summaries`]).
    pub(crate) fn screen(
        &self,
        policy: &Policy,
        unit: u32,
        others: &[u32],
        passes: &mut Vec<bool>,
    ) {
        passes.clear();
        let Some(own) = self.sets.summary(unit) else {
            passes.resize(others.len(), false);
            return;
        };
        let mut summaries = Vec::with_capacity(others.len());
        self.sets.summaries(others, &mut summaries);
        passes.extend(
            summaries
                .iter()
                .map(|other| other.is_some_and(|other| could_pass(policy, &own, &other))),
        );
    }

    /// The pair `(a, b)` if the policy's verification accepts it, decided on the sets
    /// themselves (read back when spilled): for a pair [`Verifier::screen`] let through.
    pub(crate) fn verify_sets(
        &self,
        documents: &Documents,
        policy: &Policy,
        a: u32,
        b: u32,
    ) -> Result<Option<FoundPair>, DedupError> {
        let (Some(x), Some(y)) = (self.sets.get(a)?, self.sets.get(b)?) else {
            return Ok(None);
        };
        Ok(policy
            .verify(&x, &y, None)
            .map(|evidence| pair(documents, a, b, Kind::Near, evidence)))
    }
}

/// Whether two sets with summaries `x` and `y` could pass the policy's verification: their
/// sizes first (the smaller size bounds the intersection too: a pair they rule out costs no
/// read of the counts), then the bound of their bucket counts.
fn could_pass(policy: &Policy, x: &Summary<'_>, y: &Summary<'_>) -> bool {
    policy.could_pass(x.len, y.len, Some(x.len.min(y.len)))
        && policy.could_pass(x.len, y.len, Some(x.intersection_bound(y)))
}

fn too_many(asked: usize) -> DedupError {
    DedupError::MissingData(format!("asked for {asked} shingle sets, got more"))
}

/// Near-duplicate candidates among `positions` (ascending), with the shingle sets of the
/// documents in them when the policy verifies.
pub(crate) fn near_candidates(
    documents: &Documents,
    positions: &[u32],
    policy: &Policy,
    source: &mut dyn FeatureSource,
    budget: &Budget,
) -> Result<NearCandidates, DedupError> {
    let started = Instant::now();
    // The overlap search needs every shingle set; verification then takes them from there.
    let mut held: Option<Vec<FeatureSet>> = None;
    let candidates: Vec<(u32, u32, f64)> = match policy.method {
        Method::Exact => Vec::new(),
        Method::Simhash | Method::Cascade => simhash_candidates(documents, positions, policy.k)?,
        Method::Minhash => minhash_candidates(documents, positions, policy)?,
        Method::Overlap => {
            let sets = fetch(source, positions)?;
            let candidates = overlap_candidates(positions, &sets, policy)?;
            held = Some(sets);
            candidates
        }
    };
    tracing::info!(
        method = ?policy.method,
        documents = positions.len(),
        candidates = candidates.len(),
        seconds = started.elapsed().as_secs_f64(),
        "candidate pairs found"
    );
    if !policy.verifies() || candidates.is_empty() {
        return Ok(NearCandidates {
            candidates,
            verifier: None,
        });
    }
    let memory = budget.left(held_bytes(documents, candidates.len()));
    let spill_dir = budget.spill_dir();
    let verifier = match held {
        // The overlap search held every set already: they are stored as they are.
        Some(sets) => {
            let mut source = HeldSets(sets);
            Verifier::fetch(&mut source, positions, memory, &spill_dir)?
        }
        None => {
            let mut involved: Vec<u32> = candidates.iter().flat_map(|&(a, b, _)| [a, b]).collect();
            involved.sort_unstable();
            involved.dedup();
            Verifier::fetch(source, &involved, memory, &spill_dir)?
        }
    };
    Ok(NearCandidates {
        candidates,
        verifier: Some(verifier),
    })
}

/// Bytes the engine holds before shingle sets: the documents and the candidate pairs (an
/// estimate; [`Budget::left`] takes what the run holds, measured, when that is larger).
fn held_bytes(documents: &Documents, candidates: usize) -> u64 {
    documents.held_bytes() + candidates as u64 * 40
}

/// Sets already in memory, handed over in order.
struct HeldSets(Vec<FeatureSet>);

impl FeatureSource for HeldSets {
    fn feature_sets(
        &mut self,
        _positions: &[u32],
        sink: &mut dyn FnMut(FeatureSet) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        std::mem::take(&mut self.0).into_iter().try_for_each(sink)
    }
}

/// Every candidate the policy accepts (all verified, in parallel, when it verifies), and how
/// many were verified.
pub(crate) fn accept_all(
    documents: &Documents,
    policy: &Policy,
    candidates: &[(u32, u32, f64)],
    verifier: Option<&Verifier>,
) -> Result<(Vec<FoundPair>, usize), DedupError> {
    let Some(verifier) = verifier else {
        let pairs = candidates
            .iter()
            .map(|&(a, b, value)| {
                let evidence = match policy.method {
                    Method::Minhash => Evidence {
                        measure: Measure::MinhashEstimate,
                        value,
                        threshold: policy.threshold,
                    },
                    _ => Evidence {
                        measure: Measure::SimhashDistance,
                        value: f64::from(distance(documents, a, b)),
                        threshold: f64::from(policy.k),
                    },
                };
                pair(documents, a, b, Kind::Near, evidence)
            })
            .collect();
        return Ok((pairs, 0));
    };
    let started = Instant::now();
    let verified: Vec<Option<FoundPair>> = candidates
        .par_iter()
        .map(|&(a, b, _)| verifier.verify(documents, policy, a, b))
        .collect::<Result<_, _>>()?;
    let verified: Vec<FoundPair> = verified.into_iter().flatten().collect();
    // At debug: the listing calls this once a batch and logs its totals itself.
    tracing::debug!(
        examined = candidates.len(),
        accepted = verified.len(),
        seconds = started.elapsed().as_secs_f64(),
        "candidates verified"
    );
    Ok((verified, candidates.len()))
}

/// The shingle sets of `positions` from `source`, all in memory (what the overlap search
/// needs), checked for number.
fn fetch(source: &mut dyn FeatureSource, positions: &[u32]) -> Result<Vec<FeatureSet>, DedupError> {
    let mut sets = Vec::with_capacity(positions.len());
    source.feature_sets(positions, &mut |set| {
        sets.push(set);
        Ok(())
    })?;
    if sets.len() != positions.len() {
        return Err(DedupError::MissingData(format!(
            "asked for {} shingle sets, got {}",
            positions.len(),
            sets.len()
        )));
    }
    Ok(sets)
}

/// SimHash pairs within `k` among `positions`, mapped back to item positions, with
/// `1 - d/f` as similarity.
fn simhash_candidates(
    documents: &Documents,
    positions: &[u32],
    k: u32,
) -> Result<Vec<(u32, u32, f64)>, DedupError> {
    let Some(&first) = positions.first() else {
        return Ok(Vec::new());
    };
    let pairs = match documents.simhash(first) {
        Simhash::B64(_) => {
            let fps: Vec<u64> = positions
                .iter()
                .map(|&i| documents.simhash(i).as_u128() as u64)
                .collect();
            pairs_of(&fps, k)?
        }
        Simhash::B128(_) => {
            let fps: Vec<u128> = positions
                .iter()
                .map(|&i| documents.simhash(i).as_u128())
                .collect();
            pairs_of(&fps, k)?
        }
    };
    Ok(pairs
        .into_iter()
        .map(|(a, b)| {
            let (a, b) = (positions[a as usize], positions[b as usize]);
            (a, b, simhash_similarity(documents, a, b))
        })
        .collect())
}

fn pairs_of<F: Fingerprint>(fps: &[F], k: u32) -> Result<Vec<(u32, u32)>, DedupError> {
    let design = Design::for_expected_len(fps.len(), k, F::BITS);
    Ok(all_pairs(fps, k, design)?
        .into_iter()
        .map(|p| (p.a, p.b))
        .collect())
}

/// MinHash LSH candidates among `positions` whose estimated Jaccard is at least `threshold`
/// (every signature read into memory: the decision from every candidate pair).
fn minhash_candidates(
    documents: &Documents,
    positions: &[u32],
    policy: &Policy,
) -> Result<Vec<(u32, u32, f64)>, DedupError> {
    let signatures = documents.signatures().read_many(positions)?;
    let Some(num_perm) = signatures.first().map(Vec::len) else {
        return Ok(Vec::new());
    };
    let params = policy.lsh_params(num_perm)?;
    Ok(
        candidate_pairs(&signatures, params, Some(policy.threshold))?
            .into_iter()
            .map(|p| {
                (
                    positions[p.a as usize],
                    positions[p.b as usize],
                    p.similarity,
                )
            })
            .collect(),
    )
}

/// Every candidate pair of the overlap search among `positions` (with their shingle sets
/// `sets`): those whose prefixes in the order of every set's shingles share a shingle
/// ([`crate::prefixes`]; exact: every pair verification can accept), each once, `a < b`, with
/// the ratio of the set sizes as its similarity (verification then computes the true measure).
fn overlap_candidates(
    positions: &[u32],
    sets: &[FeatureSet],
    policy: &Policy,
) -> Result<Vec<(u32, u32, f64)>, DedupError> {
    let mut order = ShingleOrder::for_sets(sets.len());
    sets.iter().for_each(|set| order.count(set));
    let prefix_of = |at: usize| Ok(order.prefix(&sets[at], policy));
    let mut candidates = Vec::new();
    each_prefix_pair(
        sets.len(),
        u64::MAX,
        policy,
        prefix_of,
        |a, b, (len_a, len_b)| {
            let ratio = len_a.min(len_b) as f64 / len_a.max(len_b) as f64;
            candidates.push((positions[a], positions[b], ratio));
            Ok::<_, DedupError>(())
        },
    )?;
    Ok(candidates)
}
