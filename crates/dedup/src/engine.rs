//! The dedup run itself.

use std::collections::HashMap;
use std::time::Instant;

use neardup_core::measure::{
    containment, containment_needed, jaccard_at_least, jaccard_needed, BucketCounts, FeatureSet,
};
use neardup_core::{Fingerprints, Simhash};
use neardup_index::{
    all_pairs, candidate_pairs, clusters, exact_groups, Cluster, Design, Fingerprint, LshParams,
    Representative, UnionFind,
};
use rayon::prelude::*;
use serde::Serialize;

use crate::error::DedupError;
use crate::options::{DedupOptions, KeepPolicy, Method, VerifyMeasure};

/// What the engine needs to know of one document.
#[derive(Debug, Clone)]
pub struct Item {
    /// The document's fingerprints (all items of one run come from one profile).
    pub fingerprints: Fingerprints,
    /// Length of its text in bytes (for [`KeepPolicy::Longest`]).
    pub bytes: u64,
    /// When it was fetched, as Unix seconds (for [`KeepPolicy::Newest`]).
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

/// Why two documents are duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Same normalised text.
    Exact,
    /// Similar text (SimHash distance, MinHash estimate, verified measure).
    Near,
    /// Same canonical URL.
    Url,
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
    /// Similarity: the verified measure, the MinHash estimate, or `1 - distance / f`.
    pub similarity: f64,
}

/// A document that is not kept, and the kept document it duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Removal {
    /// The removed document's position.
    pub index: u32,
    /// The position of its cluster's representative (the kept document).
    pub of: u32,
    /// `Exact` when their digests are equal, `Url` when only their URLs are, else `Near`.
    pub kind: Kind,
    /// SimHash distance to the representative (may exceed `k` when the two are linked through
    /// other members of the cluster).
    pub distance: u32,
    /// `1 - distance / f`.
    pub similarity: f64,
}

/// The result of a run.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Every accepted pair, sorted by `(a, b)`. An exact group of m copies contributes m − 1
    /// pairs (each copy with the first), not m(m − 1)/2.
    pub pairs: Vec<FoundPair>,
    /// Clusters of two or more documents, ordered by their first member.
    pub clusters: Vec<Cluster>,
    /// Every removed document, by position.
    pub removals: Vec<Removal>,
    /// `kept[i]`: whether document `i` is kept.
    pub kept: Vec<bool>,
    /// How many candidate pairs verification examined (0 without verification).
    pub verified_candidates: usize,
}

/// Where verification gets the shingle sets of the documents in candidate pairs.
///
/// Shingle sets are large (8 bytes per shingle, about one shingle per character for character
/// shingles), so a caller with a big corpus does not keep them: it computes them on demand,
/// for the documents that are in candidate pairs, e.g. by reading its inputs again.
pub trait FeatureSource {
    /// The shingle sets of the documents at `positions` (ascending, distinct), in that order.
    fn feature_sets(&mut self, positions: &[u32]) -> Result<Vec<FeatureSet>, DedupError>;
}

/// The shingle sets held in the items themselves ([`Item::features`]).
struct HeldFeatures<'a>(&'a [Item]);

impl FeatureSource for HeldFeatures<'_> {
    fn feature_sets(&mut self, positions: &[u32]) -> Result<Vec<FeatureSet>, DedupError> {
        positions
            .iter()
            .map(|&i| {
                self.0[i as usize].features.clone().ok_or_else(|| {
                    DedupError::MissingData(format!(
                        "verification needs the shingle set of every candidate (document {i} has none)"
                    ))
                })
            })
            .collect()
    }
}

/// Runs deduplication over `items` (in input order), verifying with the shingle sets held in
/// the items.
pub fn dedup(items: &[Item], options: &DedupOptions) -> Result<Outcome, DedupError> {
    dedup_with(items, options, &mut HeldFeatures(items))
}

/// Runs deduplication over `items` (in input order), fetching shingle sets for verification
/// from `features` (only for documents in candidate pairs).
pub fn dedup_with(
    items: &[Item],
    options: &DedupOptions,
    features: &mut dyn FeatureSource,
) -> Result<Outcome, DedupError> {
    options.validate()?;
    let n = u32::try_from(items.len())
        .map_err(|_| DedupError::InvalidOption("more than 4,294,967,295 documents".into()))?;
    let digests: Vec<&[u8]> = items
        .iter()
        .map(|i| i.fingerprints.digest.as_bytes())
        .collect();
    let groups = exact_groups(&digests);
    let mut pairs: Vec<FoundPair> = Vec::new();
    let mut is_copy = vec![false; n as usize];
    for group in &groups {
        for &member in &group[1..] {
            is_copy[member as usize] = true;
            pairs.push(exact_pair(items, group[0], member));
        }
    }
    // Near-duplicates among one representative (the first) of each exact group.
    let representatives: Vec<u32> = (0..n).filter(|&i| !is_copy[i as usize]).collect();
    let (near, verified_candidates) = near_pairs(items, &representatives, options, features)?;
    pairs.extend(near);
    if options.url_dedup {
        pairs.extend(url_pairs(items));
    }
    pairs.sort_by_key(|p| (p.a, p.b, p.kind));
    pairs.dedup_by_key(|p| (p.a, p.b));

    let lengths: Vec<u64>;
    let times: Vec<i64>;
    let policy = match options.keep {
        KeepPolicy::First => Representative::FirstSeen,
        KeepPolicy::Longest => {
            lengths = items.iter().map(|i| i.bytes).collect();
            Representative::Longest(&lengths)
        }
        KeepPolicy::Newest => {
            times = items
                .iter()
                .map(|i| i.fetched_at.unwrap_or(i64::MIN))
                .collect();
            Representative::Newest(&times)
        }
    };
    let clusters = clusters(items.len(), pairs.iter().map(|p| (p.a, p.b)), policy, false)?;
    let mut kept = vec![true; items.len()];
    let mut removals = Vec::new();
    for cluster in &clusters {
        let representative = cluster.representative;
        for &member in cluster.members.iter().filter(|&&m| m != representative) {
            kept[member as usize] = false;
            removals.push(removal(items, member, representative));
        }
    }
    removals.sort_by_key(|r| r.index);
    Ok(Outcome {
        pairs,
        clusters,
        removals,
        kept,
        verified_candidates,
    })
}

fn distance(items: &[Item], a: u32, b: u32) -> u32 {
    let (x, y) = (
        items[a as usize].fingerprints.simhash,
        items[b as usize].fingerprints.simhash,
    );
    // Widths are equal within a run; a mismatch would be a caller bug, shown as maximal distance.
    x.distance(y).unwrap_or(x.bits().count())
}

fn simhash_similarity(items: &[Item], a: u32, b: u32) -> f64 {
    let bits = items[a as usize].fingerprints.simhash.bits().count();
    1.0 - f64::from(distance(items, a, b)) / f64::from(bits)
}

fn exact_pair(items: &[Item], a: u32, b: u32) -> FoundPair {
    FoundPair {
        a,
        b,
        kind: Kind::Exact,
        distance: distance(items, a, b),
        similarity: 1.0,
    }
}

fn removal(items: &[Item], index: u32, of: u32) -> Removal {
    let (this, kept) = (&items[index as usize], &items[of as usize]);
    let kind = if this.fingerprints.digest == kept.fingerprints.digest {
        Kind::Exact
    } else if this.url_key.is_some() && this.url_key == kept.url_key {
        Kind::Url
    } else {
        Kind::Near
    };
    Removal {
        index,
        of,
        kind,
        distance: distance(items, index, of),
        similarity: simhash_similarity(items, index, of),
    }
}

/// Near-duplicate pairs among `positions` (ascending), and how many candidates were verified.
fn near_pairs(
    items: &[Item],
    positions: &[u32],
    options: &DedupOptions,
    source: &mut dyn FeatureSource,
) -> Result<(Vec<FoundPair>, usize), DedupError> {
    let started = Instant::now();
    // The overlap search needs every shingle set; verification then takes them from there.
    let mut held: Option<Vec<FeatureSet>> = None;
    let candidates: Vec<(u32, u32, f64)> = match options.method {
        Method::Exact => return Ok((Vec::new(), 0)),
        Method::Simhash | Method::Cascade => simhash_candidates(items, positions, options.k)?,
        Method::Minhash => minhash_candidates(items, positions, options.threshold)?,
        Method::Overlap => {
            let sets = fetch(source, positions)?;
            let candidates = overlap_candidates(positions, &sets, options);
            held = Some(sets);
            candidates
        }
    };
    tracing::info!(
        method = ?options.method,
        documents = positions.len(),
        candidates = candidates.len(),
        seconds = started.elapsed().as_secs_f64(),
        "candidate pairs found"
    );
    let Some(measure) = options.verify else {
        let pairs = candidates
            .into_iter()
            .map(|(a, b, similarity)| near_pair(items, a, b, similarity))
            .collect();
        return Ok((pairs, 0));
    };
    let (involved, sets) = match held {
        Some(sets) => (positions.to_vec(), sets),
        None => {
            let mut involved: Vec<u32> = candidates.iter().flat_map(|&(a, b, _)| [a, b]).collect();
            involved.sort_unstable();
            involved.dedup();
            let started = Instant::now();
            let sets = fetch(source, &involved)?;
            tracing::info!(
                documents = involved.len(),
                shingles = sets.iter().map(FeatureSet::len).sum::<usize>(),
                seconds = started.elapsed().as_secs_f64(),
                "shingle sets of the candidate documents fetched"
            );
            (involved, sets)
        }
    };
    // Bucket counts rule out most failing pairs without a merge (exactly: the bound is never
    // below the true intersection).
    let counts: Vec<BucketCounts> = sets.par_iter().map(BucketCounts::of).collect();
    let at = |i: u32| involved.binary_search(&i).ok();
    let check = |&(a, b, _): &(u32, u32, f64)| {
        let (at_a, at_b) = (at(a)?, at(b)?);
        let (fa, fb) = (&sets[at_a], &sets[at_b]);
        if !options.length_ratio_passes(fa.len(), fb.len()) {
            return None;
        }
        let needed = match measure {
            VerifyMeasure::Jaccard => jaccard_needed(fa.len(), fb.len(), options.threshold),
            VerifyMeasure::Containment => {
                containment_needed(fa.len().min(fb.len()), options.threshold)
            }
        };
        if counts[at_a].intersection_bound(&counts[at_b]) < needed {
            return None;
        }
        let similarity = match measure {
            VerifyMeasure::Jaccard => jaccard_at_least(fa, fb, options.threshold)?,
            VerifyMeasure::Containment => containment(fa, fb).max(containment(fb, fa)),
        };
        (similarity >= options.threshold).then(|| near_pair(items, a, b, similarity))
    };
    if options.all_pairs {
        let examined = candidates.len();
        let verified = candidates.par_iter().filter_map(check).collect();
        return Ok((verified, examined));
    }
    // Nearest first: they are the likeliest to pass, and once they join two documents the
    // farther candidates inside the same cluster need no check. Batches keep the work parallel
    // and the result independent of the thread count.
    let started = Instant::now();
    let mut candidates = candidates;
    candidates.sort_by(|x, y| y.2.total_cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    let mut components = UnionFind::new(items.len())?;
    let (mut verified, mut examined) = (Vec::new(), 0);
    for batch in candidates.chunks(VERIFY_BATCH) {
        let open: Vec<(u32, u32, f64)> = batch
            .iter()
            .filter(|&&(a, b, _)| components.find(a) != components.find(b))
            .copied()
            .collect();
        examined += open.len();
        let passed: Vec<FoundPair> = open.par_iter().filter_map(check).collect();
        verified.extend(passed.into_iter().filter(|p| components.union(p.a, p.b)));
    }
    tracing::info!(
        examined,
        joined = verified.len(),
        seconds = started.elapsed().as_secs_f64(),
        "candidates verified"
    );
    Ok((verified, examined))
}

/// The shingle sets of `positions` from `source`, checked for number.
fn fetch(source: &mut dyn FeatureSource, positions: &[u32]) -> Result<Vec<FeatureSet>, DedupError> {
    let sets = source.feature_sets(positions)?;
    if sets.len() != positions.len() {
        return Err(DedupError::MissingData(format!(
            "asked for {} shingle sets, got {}",
            positions.len(),
            sets.len()
        )));
    }
    Ok(sets)
}

/// Candidates verified in parallel between two updates of the clusters.
const VERIFY_BATCH: usize = 4096;

fn near_pair(items: &[Item], a: u32, b: u32, similarity: f64) -> FoundPair {
    FoundPair {
        a,
        b,
        kind: Kind::Near,
        distance: distance(items, a, b),
        similarity,
    }
}

/// SimHash pairs within `k` among `positions`, mapped back to item positions, with
/// `1 - d/f` as similarity.
fn simhash_candidates(
    items: &[Item],
    positions: &[u32],
    k: u32,
) -> Result<Vec<(u32, u32, f64)>, DedupError> {
    let Some(&first) = positions.first() else {
        return Ok(Vec::new());
    };
    let pairs = match items[first as usize].fingerprints.simhash {
        Simhash::B64(_) => {
            let fps: Vec<u64> = positions
                .iter()
                .map(|&i| items[i as usize].fingerprints.simhash.as_u128() as u64)
                .collect();
            pairs_of(&fps, k)?
        }
        Simhash::B128(_) => {
            let fps: Vec<u128> = positions
                .iter()
                .map(|&i| items[i as usize].fingerprints.simhash.as_u128())
                .collect();
            pairs_of(&fps, k)?
        }
    };
    Ok(pairs
        .into_iter()
        .map(|(a, b)| {
            let (a, b) = (positions[a as usize], positions[b as usize]);
            (a, b, simhash_similarity(items, a, b))
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

/// MinHash LSH candidates among `positions` whose estimated Jaccard is at least `threshold`.
fn minhash_candidates(
    items: &[Item],
    positions: &[u32],
    threshold: f64,
) -> Result<Vec<(u32, u32, f64)>, DedupError> {
    let signatures: Vec<&[u32]> = positions
        .iter()
        .map(|&i| {
            items[i as usize].fingerprints.minhash.as_deref().ok_or_else(|| {
                DedupError::MissingData(
                    "the minhash method needs a profile with MinHash signatures (\"minhash\": {\"num_perm\": 128, \"seed\": 1})".into(),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let Some(num_perm) = signatures.first().map(|s| s.len()) else {
        return Ok(Vec::new());
    };
    let params = LshParams::optimal(threshold, num_perm, 0.5, 0.5)?;
    Ok(candidate_pairs(&signatures, params, Some(threshold))?
        .into_iter()
        .map(|p| {
            (
                positions[p.a as usize],
                positions[p.b as usize],
                p.similarity,
            )
        })
        .collect())
}

/// Every pair among `positions` (with their shingle sets `sets`) that verification could
/// accept: the smaller set of the pair shares at least `⌈threshold · |smaller|⌉` shingles with
/// the larger (what containment ≥ threshold needs, and Jaccard ≥ threshold too), and the two
/// pass the length-ratio guard. Each pair once, `a < b`, with the ratio of the set sizes as
/// its similarity (verification orders by it and then computes the true measure).
///
/// Prefix filtering (Chaudhuri et al. 2006; Bayardo et al. 2007): order every set's shingles
/// rarest first (document frequency, then hash). If |A ∩ B| ≥ α, the first shared shingle in
/// that order is among the first |A| − α + 1 shingles of A and among the first |B| − α + 1 of
/// B, since everything before it in either set is unshared. So each set is indexed by its
/// first |A| − α(|A|) + 1 shingles (as the smaller side of a pair), and probed with its first
/// |B| − α_min + 1 (as the larger side; α_min is the α of the smallest partner the length
/// guard allows). Rarest first keeps the posting lists short: a common shingle is seldom among
/// a set's rarest. Exact: no pair is missed. Empty sets take part in no pair.
fn overlap_candidates(
    positions: &[u32],
    sets: &[FeatureSet],
    options: &DedupOptions,
) -> Vec<(u32, u32, f64)> {
    let mut frequency: HashMap<u64, u32> = HashMap::new();
    for set in sets {
        for &shingle in set.as_slice() {
            *frequency.entry(shingle).or_default() += 1;
        }
    }
    let ordered: Vec<Vec<u64>> = sets
        .par_iter()
        .map(|set| {
            let mut shingles = set.as_slice().to_vec();
            shingles.sort_by_key(|s| (frequency[s], *s));
            shingles
        })
        .collect();
    let needed = |len: usize| shared_needed(len, options.threshold);
    let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
    for (at, shingles) in ordered.iter().enumerate() {
        // `needed` is between 1 and the size for a positive threshold (validated).
        let prefix = shingles.len() + 1 - needed(shingles.len()).max(1);
        for &shingle in &shingles[..prefix.min(shingles.len())] {
            postings.entry(shingle).or_default().push(at as u32);
        }
    }
    let size = |at: usize| sets[at].len();
    let per_document: Vec<Vec<(u32, u32, f64)>> = (0..sets.len())
        .into_par_iter()
        .map(|b| {
            let len_b = size(b);
            if len_b == 0 {
                return Vec::new();
            }
            // The smallest partner the guard allows, and the overlap it would need.
            let smallest = (1..=len_b)
                .find(|&len| options.length_ratio_passes(len, len_b))
                .unwrap_or(len_b);
            let probe = len_b + 1 - needed(smallest).clamp(1, len_b);
            let mut partners: Vec<u32> = ordered[b][..probe]
                .iter()
                .filter_map(|shingle| postings.get(shingle))
                .flatten()
                .copied()
                .filter(|&a| {
                    let len_a = size(a as usize);
                    // `a` is the smaller side (ties: the earlier), and the guard holds.
                    (len_a, a) < (len_b, b as u32) && options.length_ratio_passes(len_a, len_b)
                })
                .collect();
            partners.sort_unstable();
            partners.dedup();
            partners
                .into_iter()
                .map(|a| {
                    let (x, y) = (positions[a as usize], positions[b]);
                    let ratio = size(a as usize) as f64 / len_b as f64;
                    (x.min(y), x.max(y), ratio)
                })
                .collect()
        })
        .collect();
    per_document.into_iter().flatten().collect()
}

/// The fewest shared shingles for which a set of `len` shingles is contained at `threshold`:
/// the smallest `m` with `m / len ≥ threshold`, computed as verification compares (in floating
/// point), so that the search and the verification agree at the boundary.
fn shared_needed(len: usize, threshold: f64) -> usize {
    if len == 0 {
        return 0;
    }
    let passes = |m: usize| m as f64 / len as f64 >= threshold;
    let mut m = ((threshold * len as f64).ceil() as usize).min(len);
    while m > 0 && passes(m - 1) {
        m -= 1;
    }
    while m < len && !passes(m) {
        m += 1;
    }
    m
}

/// Pairs of documents with the same canonical URL: each with the first of its URL.
fn url_pairs(items: &[Item]) -> Vec<FoundPair> {
    let mut first: HashMap<&str, u32> = HashMap::new();
    let mut pairs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(key) = item.url_key.as_deref() else {
            continue;
        };
        let i = i as u32;
        match first.get(key) {
            Some(&a) => pairs.push(FoundPair {
                a,
                b: i,
                kind: Kind::Url,
                distance: distance(items, a, i),
                similarity: simhash_similarity(items, a, i),
            }),
            None => {
                first.insert(key, i);
            }
        }
    }
    pairs
}
