//! The dedup run itself.

use std::time::Instant;

use neardup_core::measure::FeatureSet;
use neardup_core::{Fingerprints, Simhash};
use serde::Serialize;

use crate::by_kept::{decide_by_kept, Sinks};
use crate::candidates::{accept_all, near_candidates, NearCandidates, Verifier};
use crate::clusters::{centred_clusters, Centred, Links};
use crate::documents::Documents;
use crate::error::DedupError;
use crate::exact::ExactGroups;
use crate::listed::ListBuilder;
use crate::options::DedupOptions;
use crate::outcome::{Outcome, RunOutcome};
use crate::policy::{Evidence, Kind, Method};
use crate::url_pairs::UrlPairs;

/// What the engine needs to know of one document.
#[derive(Debug, Clone)]
pub struct Item {
    /// The document's fingerprints (all items of one run come from one profile).
    pub fingerprints: Fingerprints,
    /// Length of its text in bytes (for [`KeepPolicy::Longest`](crate::KeepPolicy::Longest)).
    pub bytes: u64,
    /// When it was fetched, as Unix seconds (for [`KeepPolicy::Newest`](crate::KeepPolicy::Newest)).
    pub fetched_at: Option<i64>,
    /// Its canonical URL (for URL duplicates).
    pub url_key: Option<String>,
    /// Its shingle set (for verification).
    pub features: Option<FeatureSet>,
}

impl Item {
    /// An item with fingerprints and length only.
    pub fn new(fingerprints: Fingerprints, bytes: u64) -> Self {
        Item {
            fingerprints,
            bytes,
            fetched_at: None,
            url_key: None,
            features: None,
        }
    }
}

/// A pair of positions found to be duplicates, `a < b`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FoundPair {
    /// The earlier position.
    pub a: u32,
    /// The later position.
    pub b: u32,
    /// Why they are duplicates.
    pub kind: Kind,
    /// SimHash distance between the two.
    pub distance: u32,
    /// The measure that decided, its value and the policy's threshold for it.
    pub evidence: Evidence,
}

/// A document that is not kept, and the kept document it duplicates: the two were decided
/// duplicates directly, by the policy (never through a chain of other members).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Removal {
    /// The removed document's position.
    pub index: u32,
    /// The position of its cluster's representative (the kept document).
    pub of: u32,
    /// `Exact` when their digests are equal, `Url` when their canonical URLs are, else `Near`.
    pub kind: Kind,
    /// SimHash distance to the representative.
    pub distance: u32,
    /// The measure that decided the pair, its value and the policy's threshold for it.
    pub evidence: Evidence,
}

/// A phase of a run and the time it took.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Phase {
    /// What the phase did.
    pub name: &'static str,
    /// Wall time, in seconds.
    pub seconds: f64,
}

/// Where verification gets the shingle sets of the documents in candidate pairs.
///
/// Shingle sets are large (8 bytes per shingle, about one shingle per character for character
/// shingles), so a caller with a big corpus does not keep them: it computes them on demand,
/// for the documents that are in candidate pairs, e.g. by reading its inputs again. The engine
/// stores them within its [`Budget`](crate::Budget), spilling to disk beyond it.
pub trait FeatureSource {
    /// Hands the shingle sets of the documents at `positions` (ascending, distinct) to `sink`,
    /// one a document, in that order.
    fn feature_sets(
        &mut self,
        positions: &[u32],
        sink: &mut dyn FnMut(FeatureSet) -> Result<(), DedupError>,
    ) -> Result<(), DedupError>;
}

/// The shingle sets held in the items themselves ([`Item::features`]).
struct HeldFeatures<'a>(&'a [Item]);

impl FeatureSource for HeldFeatures<'_> {
    fn feature_sets(
        &mut self,
        positions: &[u32],
        sink: &mut dyn FnMut(FeatureSet) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        for &i in positions {
            let set = self.0[i as usize]
                .features
                .clone()
                .ok_or_else(|| missing_set(i))?;
            sink(set)?;
        }
        Ok(())
    }
}

/// No shingle sets: the source for a policy that does not verify (asking it for a set fails
/// with [`DedupError::MissingData`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFeatures;

impl FeatureSource for NoFeatures {
    fn feature_sets(
        &mut self,
        positions: &[u32],
        _sink: &mut dyn FnMut(FeatureSet) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        positions.first().map_or(Ok(()), |&i| Err(missing_set(i)))
    }
}

/// The error of a source without the shingle set of document `i`.
fn missing_set(i: u32) -> DedupError {
    DedupError::MissingData(format!(
        "verification needs the shingle set of every candidate (document {i} has none)"
    ))
}

/// Runs deduplication over `items` (in input order), verifying with the shingle sets held in
/// the items.
pub fn dedup(items: &[Item], options: &DedupOptions) -> Result<Outcome, DedupError> {
    dedup_with(items, options, &mut HeldFeatures(items))
}

/// Runs deduplication over `items` (in input order), fetching shingle sets for verification
/// from `features` (only for documents in candidate pairs): [`dedup_documents`] over the
/// items' [`Documents`], its outcome read into memory.
pub fn dedup_with(
    items: &[Item],
    options: &DedupOptions,
    features: &mut dyn FeatureSource,
) -> Result<Outcome, DedupError> {
    let documents = &mut Documents::from_items(items, &options.budget)?;
    run(documents, options, features, Decision::Linear)?.into_outcome()
}

/// [`dedup`] by the decision from every candidate pair, whatever the method: each candidate
/// pair the search finds is a link to follow, verified when its turn comes (all of them with
/// [`DedupOptions::list_pairs`]), and every link is held in memory. The reference the linear
/// decision of every method is tested against (the same removals, clusters and kept
/// documents, and with `list_pairs` the same pairs); quadratic in a family of near copies, so
/// for tests and small inputs.
pub fn dedup_every_pair(items: &[Item], options: &DedupOptions) -> Result<Outcome, DedupError> {
    let documents = &mut Documents::from_items(items, &options.budget)?;
    run(
        documents,
        options,
        &mut HeldFeatures(items),
        Decision::EveryPair,
    )?
    .into_outcome()
}

/// How the near-duplicate decision is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    /// Linear in the corpus for the SimHash, MinHash and overlap methods ([`crate::by_kept`]),
    /// from every candidate pair for the exact method (which has none).
    Linear,
    /// From every candidate pair ([`dedup_every_pair`]).
    EveryPair,
}

/// Runs deduplication over `documents` (in input order), fetching shingle sets for
/// verification from `features` (only for documents in candidate pairs).
///
/// Clusters are representative-centred: documents are taken in keep order (first seen,
/// longest or newest); each joins the cluster of the nearest kept document it is a duplicate
/// of (exact, then the accepted pair of smallest SimHash distance), or is kept itself. So every
/// removed document is a duplicate of its kept document by the policy, never only through a
/// chain of other members; the clusters are those an online database gives when documents
/// arrive in that order.
///
/// The removals and pairs are lists within the budget ([`crate::Listed`]: a sixteenth of it each, on
/// disk beyond), the clusters read from the removals when asked ([`RunOutcome::clusters`]).
pub fn dedup_documents(
    documents: &mut Documents,
    options: &DedupOptions,
    features: &mut dyn FeatureSource,
) -> Result<RunOutcome, DedupError> {
    run(documents, options, features, Decision::Linear)
}

/// [`dedup_documents`] by `decision`.
fn run(
    documents: &mut Documents,
    options: &DedupOptions,
    features: &mut dyn FeatureSource,
    decision: Decision,
) -> Result<RunOutcome, DedupError> {
    let policy = &options.policy;
    policy.validate()?;
    let n = u32::try_from(documents.len())
        .map_err(|_| DedupError::InvalidOption("more than 4,294,967,295 documents".into()))?;
    documents.flush()?;
    let mut phases = Phases::start();
    let mut exact = ExactGroups::new(n, documents.exact_groups()?);
    exact.choose_kept(documents, options.keep)?;
    let linear = decision == Decision::Linear
        && matches!(
            policy.method,
            Method::Simhash | Method::Cascade | Method::Minhash | Method::Overlap
        );
    // The rows read before the search: each exact group's first and kept members and the
    // documents sharing a canonical URL (the copies' rows are read as they are listed); every
    // row for a decision from every candidate pair.
    let url_links = match options.url_dedup {
        true => documents.url_links()?,
        false => Vec::new(),
    };
    if linear {
        let mut read = exact.firsts_and_kept();
        read.extend(url_links.iter().flat_map(|&(a, b)| [a, b]));
        read.sort_unstable();
        read.dedup();
        documents.gather(&read)?;
    } else {
        documents.gather_all()?;
    }
    let removals = ListBuilder::within(&options.budget);
    let listed = ListBuilder::within(&options.budget);
    let url_pairs = UrlPairs::new(documents, url_links);
    phases.end("exact duplicates");
    // Each copy with the first of its group is listed; near-duplicates are searched among the
    // units (the first member of each group, and every document without a copy).
    let found = if linear {
        let mut batch = Vec::with_capacity(listed.batch());
        exact_pairs(documents, &exact, |pair| {
            batch.push(pair);
            match batch.len() >= listed.batch() {
                true => listed.add(&mut batch),
                false => Ok(()),
            }
        })?;
        listed.add(&mut batch)?;
        let sinks = Sinks {
            removals: &removals,
            pairs: &listed,
            phases: &mut phases,
        };
        let decided = decide_by_kept(documents, &exact, &url_pairs, options, features, sinks)?;
        url_pairs.list_into(&listed)?;
        Found {
            clusters: decided.clusters,
            candidates: decided.candidates,
            verified: decided.verified,
            spilled_bytes: decided.spilled_bytes,
        }
    } else {
        let mut pairs: Vec<FoundPair> = Vec::new();
        exact_pairs(documents, &exact, |pair| {
            pairs.push(pair);
            Ok(())
        })?;
        pairs.extend(url_pairs.iter());
        pairs.sort_by_key(|p| (p.a, p.b, p.kind));
        pairs.dedup_by_key(|p| (p.a, p.b));
        let found = decide_by_pairs(
            documents,
            &exact,
            &mut pairs,
            options,
            features,
            &removals,
            &mut phases,
        )?;
        listed.add(&mut pairs)?;
        found
    };
    let removals = removals.finish()?;
    let pairs = listed.finish()?;
    phases.end(match linear && options.list_pairs {
        // The decision ended its phase before it listed every pair.
        true => "every accepted pair listed",
        false => "verification and clusters",
    });
    let mut kept = vec![true; documents.len()];
    for removal in removals.iter() {
        kept[removal?.index as usize] = false;
    }
    Ok(RunOutcome {
        spilled_bytes: found.spilled_bytes
            + documents.spilled_bytes()
            + removals.spilled_bytes()
            + pairs.spilled_bytes(),
        pairs,
        cluster_count: found.clusters,
        removals,
        kept,
        verified_candidates: found.verified,
        candidates: found.candidates,
        phases: phases.into_vec(),
        budget: options.budget.clone(),
    })
}

/// Each copy of an exact group with the group's first member, handed to `sink` in position
/// order: the copies' rows read in one scan ([`ExactGroups::scan_members`]), the firsts' held or
/// gathered.
fn exact_pairs(
    documents: &Documents,
    exact: &ExactGroups,
    mut sink: impl FnMut(FoundPair) -> Result<(), DedupError>,
) -> Result<(), DedupError> {
    exact.scan_members(documents, |member, first, row| {
        if first == member {
            return Ok(());
        }
        sink(FoundPair {
            a: first,
            b: member,
            kind: Kind::Exact,
            distance: simhash_distance(documents.simhash(first), row.simhash),
            evidence: Evidence::EXACT,
        })
    })
}

/// What a decision found.
struct Found {
    clusters: usize,
    candidates: usize,
    verified: usize,
    spilled_bytes: u64,
}

/// The decision from every candidate pair: the reference ([`dedup_every_pair`]) and the exact
/// method. `pairs`: the exact and
/// URL pairs, sorted; the near pairs accepted are added, the removals to `removals`.
fn decide_by_pairs(
    documents: &Documents,
    exact: &ExactGroups,
    pairs: &mut Vec<FoundPair>,
    options: &DedupOptions,
    features: &mut dyn FeatureSource,
    removals: &ListBuilder<Removal>,
    phases: &mut Phases,
) -> Result<Found, DedupError> {
    let policy = &options.policy;
    let NearCandidates {
        candidates: found,
        verifier,
    } = near_candidates(
        documents,
        &exact.units().collect::<Vec<_>>(),
        policy,
        features,
        &options.budget,
    )?;
    phases.end("candidate search and shingle sets");
    let candidates = found.len();
    let (pending, mut verified) = if verifier.is_some() && !options.list_pairs {
        (found, 0)
    } else {
        let (accepted, verified) = accept_all(documents, policy, &found, verifier.as_ref())?;
        pairs.extend(accepted);
        pairs.sort_by_key(|p| (p.a, p.b, p.kind));
        pairs.dedup_by_key(|p| (p.a, p.b));
        (Vec::new(), verified)
    };
    let mut verify = |a: u32, b: u32| {
        verified += 1;
        match &verifier {
            Some(verifier) => verifier.verify(documents, policy, a, b),
            None => Ok(None),
        }
    };
    let links = Links {
        accepted: pairs,
        pending,
    };
    let budget = &options.budget;
    let Centred { clusters, decided } = centred_clusters(
        documents,
        exact,
        links,
        options.keep,
        budget,
        removals,
        &mut verify,
    )?;
    pairs.extend(decided);
    Ok(Found {
        clusters,
        candidates,
        verified,
        spilled_bytes: verifier.as_ref().map_or(0, Verifier::spilled_bytes),
    })
}

/// The time each phase of a run took, in order.
#[derive(Debug)]
pub(crate) struct Phases {
    done: Vec<Phase>,
    since: Instant,
}

impl Phases {
    /// Starts the first phase now.
    fn start() -> Self {
        Phases {
            done: Vec::new(),
            since: Instant::now(),
        }
    }

    /// Ends the phase `name`, begun when the last one ended, and starts the next, the memory the
    /// phase freed given back to the system first ([`crate::budget::release_free_memory`]: the
    /// next phase's share of the budget is measured by the process's resident memory).
    pub(crate) fn end(&mut self, name: &'static str) {
        crate::budget::release_free_memory();
        let now = Instant::now();
        self.done.push(Phase {
            name,
            seconds: now.duration_since(self.since).as_secs_f64(),
        });
        self.since = now;
    }

    fn into_vec(self) -> Vec<Phase> {
        self.done
    }
}

pub(crate) fn distance(documents: &Documents, a: u32, b: u32) -> u32 {
    simhash_distance(documents.simhash(a), documents.simhash(b))
}

/// The distance of two SimHash values of one run.
pub(crate) fn simhash_distance(x: Simhash, y: Simhash) -> u32 {
    // Widths are equal within a run (`Documents::push` refuses a second one).
    x.distance(y).unwrap_or(x.bits().count())
}

pub(crate) fn simhash_similarity(documents: &Documents, a: u32, b: u32) -> f64 {
    let bits = documents.simhash(a).bits().count();
    1.0 - f64::from(distance(documents, a, b)) / f64::from(bits)
}

pub(crate) fn pair(
    documents: &Documents,
    a: u32,
    b: u32,
    kind: Kind,
    evidence: Evidence,
) -> FoundPair {
    FoundPair {
        a,
        b,
        kind,
        distance: distance(documents, a, b),
        evidence,
    }
}

pub(crate) fn removal(
    documents: &Documents,
    index: u32,
    of: u32,
    kind: Kind,
    evidence: Evidence,
) -> Removal {
    Removal {
        index,
        of,
        kind,
        distance: distance(documents, index, of),
        evidence,
    }
}
