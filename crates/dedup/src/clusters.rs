//! Representative-centred clusters: exact groups as units, taken in keep order, each joining
//! the nearest kept unit it is a duplicate of, or kept itself.

use crate::budget::Budget;
use crate::documents::Documents;
use crate::engine::{distance, pair, removal, simhash_distance, FoundPair, Removal};
use crate::error::DedupError;
use crate::exact::ExactGroups;
use crate::listed::{ListBuilder, ListItem, Listed, Row};
use crate::options::KeepPolicy;
use crate::policy::{Evidence, Kind};

/// Exact groups seen as units of clustering ("units", named by their first member): their
/// members, which member each keeps, and the order units are taken in.
pub(crate) struct Units<'a> {
    documents: &'a Documents,
    exact: &'a ExactGroups,
    keep: KeepPolicy,
}

impl<'a> Units<'a> {
    pub(crate) fn new(documents: &'a Documents, exact: &'a ExactGroups, keep: KeepPolicy) -> Self {
        Units {
            documents,
            exact,
            keep,
        }
    }

    /// The key documents are taken in, smaller first: the keep policy's order.
    pub(crate) fn rank(&self, i: u32) -> (u64, i64, u32) {
        let documents = self.documents;
        self.keep
            .rank_key(i, documents.bytes(i), documents.fetched_at(i))
    }

    /// The member `unit` keeps ([`ExactGroups::choose_kept`]).
    pub(crate) fn best(&self, unit: u32) -> u32 {
        self.exact.kept_member(unit)
    }
}

/// A unit that joined a kept unit, and the kind and evidence of the accepted pair that joined
/// them (a near pair joins the two units themselves; an exact or URL pair, members of theirs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Joined {
    pub(crate) unit: u32,
    pub(crate) leader: u32,
    pub(crate) kind: Kind,
    pub(crate) evidence: Evidence,
}

impl Joined {
    /// The unit `unit` joined `leader` by `pair`.
    pub(crate) fn new(unit: u32, leader: u32, pair: &FoundPair) -> Self {
        Joined {
            unit,
            leader,
            kind: pair.kind,
            evidence: pair.evidence,
        }
    }

    /// The near pair of the two units that decided the join, if it was one.
    pub(crate) fn near_pair(&self, documents: &Documents) -> Option<FoundPair> {
        let (a, b) = (self.unit.min(self.leader), self.unit.max(self.leader));
        (self.kind == Kind::Near).then(|| pair(documents, a, b, Kind::Near, self.evidence))
    }
}

impl ListItem for Joined {
    fn row(&self) -> Row {
        Row::new(self.unit, self.leader, self.kind, 0, self.evidence)
    }

    fn from_row(row: Row) -> Result<Self, DedupError> {
        let (kind, evidence) = row.parts()?;
        Ok(Joined {
            unit: row.first(),
            leader: row.second(),
            kind,
            evidence,
        })
    }
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
/// passes; the near pairs so accepted are returned too, the removals added to `removals`.
///
/// Memory: one edge (16 bytes) a pair between units, kept only at the later of its two units in
/// keep order (the earlier one decides nothing by it), in one vector sorted by that unit.
pub(crate) fn centred_clusters(
    documents: &Documents,
    exact: &ExactGroups,
    links: Links<'_>,
    keep: KeepPolicy,
    budget: &Budget,
    removals: &ListBuilder<Removal>,
    verify: &mut dyn FnMut(u32, u32) -> Result<Option<FoundPair>, DedupError>,
) -> Result<Centred, DedupError> {
    let units = Units::new(documents, exact, keep);
    let unit_pair = |a: u32, b: u32| (exact.first_of(a), exact.first_of(b));
    let accepted_pairs = links.accepted.iter().map(|p| unit_pair(p.a, p.b));
    let pending_pairs = links.pending.iter().map(|&(a, b, _)| unit_pair(a, b));
    let mut order: Vec<u32> = accepted_pairs
        .chain(pending_pairs)
        .filter(|(ua, ub)| ua != ub)
        .flat_map(|(ua, ub)| [ua, ub])
        .chain(exact.firsts())
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
    let mut joined = join_in_order(&units, &order, &edges, links.accepted, verify)?;
    let decided = joined
        .iter()
        .filter_map(|j| j.near_pair(documents))
        .filter(|p| {
            links
                .accepted
                .binary_search_by_key(&(p.a, p.b), |q| (q.a, q.b))
                .is_err()
        })
        .collect();
    let list = ListBuilder::within(budget);
    list.add(&mut joined)?;
    let clusters = gather(
        documents,
        &units,
        order.iter().copied(),
        &list.finish()?,
        removals,
    )?;
    Ok(Centred { clusters, decided })
}

/// How many clusters there are, and the near pairs verified on the way that decided a removal.
pub(crate) struct Centred {
    pub(crate) clusters: usize,
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
            joined.push(Joined::new(unit, leader, &pair));
        }
    }
    Ok(joined)
}

/// The removals (each member of a cluster but its kept one, with the evidence that removed
/// it), added to `removals`; returns how many clusters there are (kept units with followers,
/// and exact groups). `heads`: every unit that can head a cluster (each unit walked, and every
/// exact group), each once, in any order; `joined`: the units that joined a kept unit.
///
/// A unit alone that joined is removed here; the members of exact groups are removed in one
/// scan of their rows in position order ([`ExactGroups::scan_members`]), against the kept
/// member of the unit their group joined, or else of their own group.
///
/// Memory: two marks a document (the units that joined, the units joined), a bit each, and the
/// joins of the exact groups that joined; the removals go to their list as they are made (its
/// share of the budget, then disk).
pub(crate) fn gather(
    documents: &Documents,
    units: &Units<'_>,
    heads: impl Iterator<Item = u32>,
    joined: &Listed<Joined>,
    removals: &ListBuilder<Removal>,
) -> Result<usize, DedupError> {
    let exact = units.exact;
    let mut followers = Marks::new(documents.len());
    let mut leaders = Marks::new(documents.len());
    for join in joined.iter() {
        let join = join?;
        followers.set(join.unit);
        leaders.set(join.leader);
    }
    let clusters = heads
        .filter(|&unit| !followers.get(unit))
        .filter(|&unit| leaders.get(unit) || exact.is_group(unit))
        .count();
    let mut batch = Vec::with_capacity(removals.batch());
    let mut add = |removal: Removal| {
        batch.push(removal);
        match batch.len() >= removals.batch() {
            true => removals.add(&mut batch),
            false => Ok(()),
        }
    };
    // The exact groups that joined, by their first member.
    let mut groups_joined = Vec::new();
    for join in joined.iter() {
        let join = join?;
        match exact.is_group(join.unit) {
            true => groups_joined.push(join),
            false => add(removal(
                documents,
                join.unit,
                units.best(join.leader),
                join.kind,
                join.evidence,
            ))?,
        }
    }
    groups_joined.sort_unstable_by_key(|join| join.unit);
    exact.scan_members(documents, |member, unit, row| {
        let (of, kind, evidence) = match groups_joined.binary_search_by_key(&unit, |join| join.unit)
        {
            Ok(at) => {
                let join = &groups_joined[at];
                (units.best(join.leader), join.kind, join.evidence)
            }
            Err(_) => (units.best(unit), Kind::Exact, Evidence::EXACT),
        };
        if member == of {
            return Ok(());
        }
        add(Removal {
            index: member,
            of,
            kind,
            distance: simhash_distance(row.simhash, documents.simhash(of)),
            evidence,
        })
    })?;
    removals.add(&mut batch)?;
    Ok(clusters)
}

/// A mark a document, a bit each.
struct Marks(Vec<u64>);

impl Marks {
    fn new(len: usize) -> Self {
        Marks(vec![0; len.div_ceil(64)])
    }

    fn set(&mut self, at: u32) {
        self.0[at as usize / 64] |= 1 << (at % 64);
    }

    fn get(&self, at: u32) -> bool {
        self.0[at as usize / 64] & (1 << (at % 64)) != 0
    }
}
