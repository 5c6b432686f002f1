//! The dedup run itself.

use std::collections::HashMap;
use std::time::Instant;

use neardup_core::measure::{BucketCounts, FeatureSet};
use neardup_core::{Fingerprints, Simhash};
use neardup_index::{
    all_pairs, candidate_pairs, exact_groups, Cluster, Design, Fingerprint, LshParams,
};
use rayon::prelude::*;
use serde::Serialize;

use crate::error::DedupError;
use crate::options::{DedupOptions, KeepPolicy};
use crate::policy::{Evidence, Kind, Measure, Method, Policy};

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

/// The result of a run.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Accepted pairs, sorted by `(a, b)`: with [`DedupOptions::list_pairs`], every candidate
    /// pair the policy accepts; without, the exact and URL pairs and the near pairs that
    /// decided a removal. An exact group of m copies contributes m − 1 pairs (each copy with the
    /// first), not m(m − 1)/2, and near pairs are listed between the first members of exact
    /// groups.
    pub pairs: Vec<FoundPair>,
    /// Clusters of two or more documents, ordered by their first member. Representative-centred:
    /// every member is a duplicate of the representative by the policy itself (see
    /// [`crate::dedup`]); connected components of [`Outcome::pairs`] may be larger.
    pub clusters: Vec<Cluster>,
    /// Every removed document, by position.
    pub removals: Vec<Removal>,
    /// `kept[i]`: whether document `i` is kept.
    pub kept: Vec<bool>,
    /// How many candidate pairs verification examined (0 without verification).
    pub verified_candidates: usize,
    /// How many candidate pairs the search found (among the first members of exact groups).
    pub candidates: usize,
}

impl Outcome {
    /// Connected components of the accepted pairs ([`Outcome::pairs`]), two or more members
    /// each, members ascending, ordered by their first member: the groups chained
    /// near-duplicates form (for topic clustering). Unlike [`Outcome::clusters`], a component
    /// can hold documents that are not duplicates of each other (A ~ B ~ C with A and C apart)
    /// and several kept documents.
    pub fn components(&self) -> Result<Vec<Vec<u32>>, DedupError> {
        let pairs = self.pairs.iter().map(|p| (p.a, p.b));
        let components = neardup_index::clusters(
            self.kept.len(),
            pairs,
            neardup_index::Representative::FirstSeen,
            false,
        )?;
        Ok(components.into_iter().map(|c| c.members).collect())
    }
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
///
/// Clusters are representative-centred: documents are taken in keep order (first seen,
/// longest or newest); each joins the cluster of the nearest kept document it is a duplicate
/// of (exact, then the accepted pair of smallest SimHash distance), or is kept itself. So every
/// removed document is a duplicate of its kept document by the policy, never only through a
/// chain of other members; the clusters are those an online database gives when documents
/// arrive in that order.
pub fn dedup_with(
    items: &[Item],
    options: &DedupOptions,
    features: &mut dyn FeatureSource,
) -> Result<Outcome, DedupError> {
    let policy = &options.policy;
    policy.validate()?;
    let n = u32::try_from(items.len())
        .map_err(|_| DedupError::InvalidOption("more than 4,294,967,295 documents".into()))?;
    let digests: Vec<&[u8]> = items
        .iter()
        .map(|i| i.fingerprints.digest.as_bytes())
        .collect();
    let groups = exact_groups(&digests);
    let mut pairs: Vec<FoundPair> = Vec::new();
    // The first member of each document's exact group (itself when it has no copy).
    let mut first_of: Vec<u32> = (0..n).collect();
    for group in &groups {
        for &member in &group[1..] {
            first_of[member as usize] = group[0];
            pairs.push(pair(items, group[0], member, Kind::Exact, Evidence::EXACT));
        }
    }
    // Near-duplicates among one representative (the first) of each exact group.
    let representatives: Vec<u32> = (0..n).filter(|&i| first_of[i as usize] == i).collect();
    let NearCandidates {
        candidates: found,
        verifier,
    } = near_candidates(items, &representatives, policy, features)?;
    let candidates = found.len();
    let (pending, mut verified_candidates) = if verifier.is_some() && !options.list_pairs {
        (found, 0)
    } else {
        let (accepted, verified) = accept_all(items, policy, &found, verifier.as_ref());
        pairs.extend(accepted);
        (Vec::new(), verified)
    };
    if options.url_dedup {
        pairs.extend(url_pairs(items));
    }
    pairs.sort_by_key(|p| (p.a, p.b, p.kind));
    pairs.dedup_by_key(|p| (p.a, p.b));
    let mut verify = |a: u32, b: u32| {
        verified_candidates += 1;
        verifier.as_ref()?.verify(items, policy, a, b)
    };
    let links = Links {
        accepted: &pairs,
        pending,
    };
    let (clusters, removals, decided) =
        centred_clusters(items, &groups, &first_of, links, options.keep, &mut verify);
    if !decided.is_empty() {
        pairs.extend(decided);
        pairs.sort_by_key(|p| (p.a, p.b, p.kind));
    }
    let mut kept = vec![true; items.len()];
    for removal in &removals {
        kept[removal.index as usize] = false;
    }
    Ok(Outcome {
        pairs,
        clusters,
        removals,
        kept,
        verified_candidates,
        candidates,
    })
}

/// Exact groups seen as units of clustering ("units", named by their first member): their
/// members, which member each keeps, and the order units are taken in.
struct Units<'a> {
    items: &'a [Item],
    members_of: HashMap<u32, &'a [u32]>,
    first_of: &'a [u32],
    keep: KeepPolicy,
}

impl<'a> Units<'a> {
    fn new(
        items: &'a [Item],
        groups: &'a [Vec<u32>],
        first_of: &'a [u32],
        keep: KeepPolicy,
    ) -> Self {
        let members_of = groups.iter().map(|g| (g[0], g.as_slice())).collect();
        Units {
            items,
            members_of,
            first_of,
            keep,
        }
    }

    /// The members of `unit`: its exact group, or itself alone.
    fn members(&self, unit: u32) -> &[u32] {
        self.members_of
            .get(&unit)
            .copied()
            .unwrap_or(std::slice::from_ref(&self.first_of[unit as usize]))
    }

    /// The key documents are taken in, smaller first: the keep policy's order.
    fn rank(&self, i: u32) -> (u64, i64, u32) {
        let item = &self.items[i as usize];
        match self.keep {
            KeepPolicy::First => (0, 0, i),
            KeepPolicy::Longest => (u64::MAX - item.bytes, 0, i),
            KeepPolicy::Newest => (0, -item.fetched_at.unwrap_or(i64::MIN + 1), i),
        }
    }

    /// The member `unit` keeps.
    fn best(&self, unit: u32) -> u32 {
        self.members(unit)
            .iter()
            .copied()
            .min_by_key(|&m| self.rank(m))
            .unwrap_or(unit)
    }
}

/// A unit that joined a kept unit, and the accepted pair that joined them.
struct Joined {
    unit: u32,
    leader: u32,
    pair: FoundPair,
}

/// The pairs clustering may follow: those already accepted, and candidates not verified yet
/// (verified only when they could decide: see [`DedupOptions::list_pairs`]).
struct Links<'a> {
    accepted: &'a [FoundPair],
    /// Candidate pairs between first members of exact groups, `a < b`.
    pending: Vec<(u32, u32, f64)>,
}

/// How a unit could join an earlier one.
#[derive(Clone, Copy)]
enum Link {
    /// By an accepted pair (its position in [`Links::accepted`]).
    Accepted(u32),
    /// By the candidate pair of the two units, to verify.
    Pending,
}

/// Representative-centred clusters over exact groups and the pairs between them: units in keep
/// order, each joining the nearest unit already kept that it has an accepted pair with, or kept
/// itself. Candidates still pending are verified on the way, nearest first, only until one
/// passes; the near pairs so accepted are returned too.
///
/// Memory: one edge (16 bytes) a pair between units, kept only at the later of its two units in
/// keep order (the earlier one decides nothing by it), in one vector sorted by that unit.
fn centred_clusters(
    items: &[Item],
    groups: &[Vec<u32>],
    first_of: &[u32],
    links: Links<'_>,
    keep: KeepPolicy,
    verify: &mut dyn FnMut(u32, u32) -> Option<FoundPair>,
) -> (Vec<Cluster>, Vec<Removal>, Vec<FoundPair>) {
    let units = Units::new(items, groups, first_of, keep);
    let unit_pair = |a: u32, b: u32| (first_of[a as usize], first_of[b as usize]);
    let accepted_pairs = links.accepted.iter().map(|p| unit_pair(p.a, p.b));
    let pending_pairs = links.pending.iter().map(|&(a, b, _)| unit_pair(a, b));
    let mut order: Vec<u32> = accepted_pairs
        .chain(pending_pairs)
        .filter(|(ua, ub)| ua != ub)
        .flat_map(|(ua, ub)| [ua, ub])
        .chain(groups.iter().map(|g| g[0]))
        .collect();
    order.sort_unstable();
    order.dedup();
    order.sort_by_cached_key(|&u| units.rank(units.best(u)));
    let mut position = vec![u32::MAX; items.len()];
    for (at, &unit) in order.iter().enumerate() {
        position[unit as usize] = at as u32;
    }
    // (position of the later unit, the earlier unit, the link), sorted by the first.
    let mut edges: Vec<(u32, u32, Link)> = Vec::new();
    let mut add = |a: u32, b: u32, link: Link| {
        let (ua, ub) = unit_pair(a, b);
        if ua != ub {
            let (pa, pb) = (position[ua as usize], position[ub as usize]);
            edges.push(if pa < pb {
                (pb, ua, link)
            } else {
                (pa, ub, link)
            });
        }
    };
    for (at, p) in links.accepted.iter().enumerate() {
        add(p.a, p.b, Link::Accepted(at as u32));
    }
    for &(a, b, _) in &links.pending {
        add(a, b, Link::Pending);
    }
    drop(links.pending);
    edges.sort_unstable_by_key(|&(at, ..)| at);
    let joined = join_in_order(&units, &order, &edges, links.accepted, verify);
    let decided = joined
        .iter()
        .filter(|j| j.pair.kind == Kind::Near)
        .map(|j| j.pair)
        .filter(|p| {
            links
                .accepted
                .binary_search_by_key(&(p.a, p.b), |q| (q.a, q.b))
                .is_err()
        })
        .collect();
    let (clusters, removals) = gather(items, &units, &order, joined);
    (clusters, removals, decided)
}

/// Takes `order`'s units one by one: each joins the nearest kept unit it has an accepted pair
/// with (smallest distance, then kind, then keep order), or is kept. A pending candidate is
/// verified when its turn in that order comes, so a unit's candidates after the first that
/// passes are never verified. `edges`: each unit's links to earlier units, by its position.
fn join_in_order(
    units: &Units<'_>,
    order: &[u32],
    edges: &[(u32, u32, Link)],
    accepted: &[FoundPair],
    verify: &mut dyn FnMut(u32, u32) -> Option<FoundPair>,
) -> Vec<Joined> {
    let mut kept = vec![false; units.items.len()];
    let mut joined = Vec::new();
    let mut next = 0;
    for (at, &unit) in order.iter().enumerate() {
        let start = next;
        while next < edges.len() && edges[next].0 == at as u32 {
            next += 1;
        }
        let mut options: Vec<(u32, Link)> = edges[start..next]
            .iter()
            .filter(|&&(_, other, _)| kept[other as usize])
            .map(|&(_, other, link)| (other, link))
            .collect();
        let key = |&(other, link): &(u32, Link)| {
            let (distance, kind) = match link {
                Link::Accepted(i) => (accepted[i as usize].distance, accepted[i as usize].kind),
                Link::Pending => (distance(units.items, unit, other), Kind::Near),
            };
            (distance, kind, units.rank(units.best(other)))
        };
        options.sort_by_cached_key(key);
        let found = options.into_iter().find_map(|(other, link)| match link {
            Link::Accepted(i) => Some((other, accepted[i as usize])),
            Link::Pending => verify(unit.min(other), unit.max(other)).map(|pair| (other, pair)),
        });
        kept[unit as usize] = found.is_none();
        if let Some((leader, pair)) = found {
            joined.push(Joined { unit, leader, pair });
        }
    }
    joined
}

/// The clusters (kept units with their followers, and exact groups alone) and the removals
/// (each member but the kept one, with the evidence that removed it).
fn gather(
    items: &[Item],
    units: &Units<'_>,
    order: &[u32],
    joined: Vec<Joined>,
) -> (Vec<Cluster>, Vec<Removal>) {
    let mut followers_of: HashMap<u32, Vec<u32>> = HashMap::new();
    for join in &joined {
        followers_of.entry(join.leader).or_default().push(join.unit);
    }
    let followers: std::collections::HashSet<u32> = joined.iter().map(|j| j.unit).collect();
    let mut removals = Vec::new();
    let mut clusters = Vec::new();
    for &unit in order.iter().filter(|unit| !followers.contains(unit)) {
        let followers = followers_of.remove(&unit).unwrap_or_default();
        if followers.is_empty() && units.members(unit).len() < 2 {
            continue;
        }
        let representative = units.best(unit);
        let mut cluster: Vec<u32> = units.members(unit).to_vec();
        for &m in units.members(unit).iter().filter(|&&m| m != representative) {
            removals.push(removal(
                items,
                m,
                representative,
                Kind::Exact,
                Evidence::EXACT,
            ));
        }
        for follower in followers {
            cluster.extend_from_slice(units.members(follower));
        }
        cluster.sort_unstable();
        clusters.push(Cluster {
            members: cluster,
            representative,
        });
    }
    for join in joined {
        let representative = units.best(join.leader);
        for &m in units.members(join.unit) {
            removals.push(removal(
                items,
                m,
                representative,
                join.pair.kind,
                join.pair.evidence,
            ));
        }
    }
    clusters.sort_by_key(|c| c.members[0]);
    removals.sort_by_key(|r| r.index);
    (clusters, removals)
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

fn pair(items: &[Item], a: u32, b: u32, kind: Kind, evidence: Evidence) -> FoundPair {
    FoundPair {
        a,
        b,
        kind,
        distance: distance(items, a, b),
        evidence,
    }
}

fn removal(items: &[Item], index: u32, of: u32, kind: Kind, evidence: Evidence) -> Removal {
    Removal {
        index,
        of,
        kind,
        distance: distance(items, index, of),
        evidence,
    }
}

/// The near-duplicate candidates among some documents, and what verifying them needs.
struct NearCandidates {
    /// Candidate pairs `(a, b, similarity)`, `a < b`.
    candidates: Vec<(u32, u32, f64)>,
    /// The shingle sets of the documents in candidates, when the policy verifies.
    verifier: Option<Verifier>,
}

/// The shingle sets of the documents in candidate pairs, and their bucket counts.
struct Verifier {
    /// The documents, ascending.
    involved: Vec<u32>,
    sets: Vec<FeatureSet>,
    counts: Vec<BucketCounts>,
}

impl Verifier {
    /// The pair `(a, b)` if the policy's verification accepts it. Bucket counts rule out most
    /// failing pairs without a merge (exactly: the bound is never below the true intersection).
    fn verify(&self, items: &[Item], policy: &Policy, a: u32, b: u32) -> Option<FoundPair> {
        let at = |i: u32| self.involved.binary_search(&i).ok();
        let (at_a, at_b) = (at(a)?, at(b)?);
        let bounds = Some((&self.counts[at_a], &self.counts[at_b]));
        let evidence = policy.verify(&self.sets[at_a], &self.sets[at_b], bounds)?;
        Some(pair(items, a, b, Kind::Near, evidence))
    }
}

/// Near-duplicate candidates among `positions` (ascending), with the shingle sets of the
/// documents in them when the policy verifies.
fn near_candidates(
    items: &[Item],
    positions: &[u32],
    policy: &Policy,
    source: &mut dyn FeatureSource,
) -> Result<NearCandidates, DedupError> {
    let started = Instant::now();
    // The overlap search needs every shingle set; verification then takes them from there.
    let mut held: Option<Vec<FeatureSet>> = None;
    let candidates: Vec<(u32, u32, f64)> = match policy.method {
        Method::Exact => Vec::new(),
        Method::Simhash | Method::Cascade => simhash_candidates(items, positions, policy.k)?,
        Method::Minhash => minhash_candidates(items, positions, policy.threshold)?,
        Method::Overlap => {
            let sets = fetch(source, positions)?;
            let candidates = overlap_candidates(positions, &sets, policy);
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
    let counts = sets.par_iter().map(BucketCounts::of).collect();
    Ok(NearCandidates {
        candidates,
        verifier: Some(Verifier {
            involved,
            sets,
            counts,
        }),
    })
}

/// Every candidate the policy accepts (all verified, in parallel, when it verifies), and how
/// many were verified.
fn accept_all(
    items: &[Item],
    policy: &Policy,
    candidates: &[(u32, u32, f64)],
    verifier: Option<&Verifier>,
) -> (Vec<FoundPair>, usize) {
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
                        value: f64::from(distance(items, a, b)),
                        threshold: f64::from(policy.k),
                    },
                };
                pair(items, a, b, Kind::Near, evidence)
            })
            .collect();
        return (pairs, 0);
    };
    let started = Instant::now();
    let verified: Vec<FoundPair> = candidates
        .par_iter()
        .filter_map(|&(a, b, _)| verifier.verify(items, policy, a, b))
        .collect();
    tracing::info!(
        examined = candidates.len(),
        accepted = verified.len(),
        seconds = started.elapsed().as_secs_f64(),
        "candidates verified"
    );
    (verified, candidates.len())
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
    policy: &Policy,
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
    let needed = |len: usize| shared_needed(len, policy.threshold);
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
                .find(|&len| policy.length_ratio_passes(len, len_b))
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
                    (len_a, a) < (len_b, b as u32) && policy.length_ratio_passes(len_a, len_b)
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
            Some(&a) => pairs.push(pair(items, a, i, Kind::Url, Evidence::URL)),
            None => {
                first.insert(key, i);
            }
        }
    }
    pairs
}
