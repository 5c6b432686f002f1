//! Representative-centred clusters: exact groups as units, taken in keep order, each joining
//! the nearest kept unit it is a duplicate of, or kept itself.

use std::collections::HashMap;

use neardup_index::Cluster;

use crate::documents::Documents;
use crate::engine::{distance, removal, FoundPair, Removal};
use crate::error::DedupError;
use crate::options::KeepPolicy;
use crate::policy::{Evidence, Kind};

/// Exact groups seen as units of clustering ("units", named by their first member): their
/// members, which member each keeps, and the order units are taken in.
pub(crate) struct Units<'a> {
    documents: &'a Documents,
    members_of: HashMap<u32, &'a [u32]>,
    first_of: &'a [u32],
    keep: KeepPolicy,
}

impl<'a> Units<'a> {
    pub(crate) fn new(
        documents: &'a Documents,
        groups: &'a [Vec<u32>],
        first_of: &'a [u32],
        keep: KeepPolicy,
    ) -> Self {
        let members_of = groups.iter().map(|g| (g[0], g.as_slice())).collect();
        Units {
            documents,
            members_of,
            first_of,
            keep,
        }
    }

    /// The unit (first member of the exact group) of document `doc`.
    pub(crate) fn first_of(&self, doc: u32) -> u32 {
        self.first_of[doc as usize]
    }

    /// The members of `unit`: its exact group, or itself alone.
    pub(crate) fn members(&self, unit: u32) -> &[u32] {
        self.members_of
            .get(&unit)
            .copied()
            .unwrap_or(std::slice::from_ref(&self.first_of[unit as usize]))
    }

    /// The key documents are taken in, smaller first: the keep policy's order.
    pub(crate) fn rank(&self, i: u32) -> (u64, i64, u32) {
        let documents = self.documents;
        self.keep
            .rank_key(i, documents.bytes(i), documents.fetched_at(i))
    }

    /// The member `unit` keeps.
    pub(crate) fn best(&self, unit: u32) -> u32 {
        self.members(unit)
            .iter()
            .copied()
            .min_by_key(|&m| self.rank(m))
            .unwrap_or(unit)
    }
}

/// A unit that joined a kept unit, and the accepted pair that joined them.
pub(crate) struct Joined {
    pub(crate) unit: u32,
    pub(crate) leader: u32,
    pub(crate) pair: FoundPair,
}

/// The pairs clustering may follow: those already accepted, and candidates not verified yet
/// (verified only when they could decide: see [`DedupOptions::list_pairs`]).
pub(crate) struct Links<'a> {
    pub(crate) accepted: &'a [FoundPair],
    /// Candidate pairs between first members of exact groups, `a < b`.
    pub(crate) pending: Vec<(u32, u32, f64)>,
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
pub(crate) fn centred_clusters(
    documents: &Documents,
    groups: &[Vec<u32>],
    first_of: &[u32],
    links: Links<'_>,
    keep: KeepPolicy,
    verify: &mut dyn FnMut(u32, u32) -> Result<Option<FoundPair>, DedupError>,
) -> Result<Centred, DedupError> {
    let units = Units::new(documents, groups, first_of, keep);
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
    let mut position = vec![u32::MAX; documents.len()];
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
    let joined = join_in_order(&units, &order, &edges, links.accepted, verify)?;
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
    let (clusters, removals) = gather(documents, &units, order.iter().copied(), joined);
    Ok(Centred {
        clusters,
        removals,
        decided,
    })
}

/// The clusters, the removals, and the near pairs verified on the way that decided one.
pub(crate) struct Centred {
    pub(crate) clusters: Vec<Cluster>,
    pub(crate) removals: Vec<Removal>,
    pub(crate) decided: Vec<FoundPair>,
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
    verify: &mut dyn FnMut(u32, u32) -> Result<Option<FoundPair>, DedupError>,
) -> Result<Vec<Joined>, DedupError> {
    let mut kept = vec![false; units.documents.len()];
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
                Link::Pending => (distance(units.documents, unit, other), Kind::Near),
            };
            (distance, kind, units.rank(units.best(other)))
        };
        options.sort_by_cached_key(key);
        let mut found = None;
        for (other, link) in options {
            let pair = match link {
                Link::Accepted(i) => Some(accepted[i as usize]),
                Link::Pending => verify(unit.min(other), unit.max(other))?,
            };
            if let Some(pair) = pair {
                found = Some((other, pair));
                break;
            }
        }
        kept[unit as usize] = found.is_none();
        if let Some((leader, pair)) = found {
            joined.push(Joined { unit, leader, pair });
        }
    }
    Ok(joined)
}

/// The clusters (kept units with their followers, and exact groups alone) and the removals
/// (each member but the kept one, with the evidence that removed it). `heads`: every unit that
/// can head a cluster (each unit walked, and every exact group), each once, in any order.
pub(crate) fn gather(
    documents: &Documents,
    units: &Units<'_>,
    heads: impl Iterator<Item = u32>,
    joined: Vec<Joined>,
) -> (Vec<Cluster>, Vec<Removal>) {
    let mut followers_of: HashMap<u32, Vec<u32>> = HashMap::new();
    for join in &joined {
        followers_of.entry(join.leader).or_default().push(join.unit);
    }
    let followers: std::collections::HashSet<u32> = joined.iter().map(|j| j.unit).collect();
    let mut removals = Vec::new();
    let mut clusters = Vec::new();
    for unit in heads.filter(|unit| !followers.contains(unit)) {
        let followers = followers_of.remove(&unit).unwrap_or_default();
        if followers.is_empty() && units.members(unit).len() < 2 {
            continue;
        }
        let representative = units.best(unit);
        let mut cluster: Vec<u32> = units.members(unit).to_vec();
        for &m in units.members(unit).iter().filter(|&&m| m != representative) {
            removals.push(removal(
                documents,
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
                documents,
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
