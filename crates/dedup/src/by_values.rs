//! The decision of the SimHash methods in work linear in the corpus.
//!
//! The search groups the first members of exact groups ("units") by SimHash value and lists the
//! pairs of distinct values within `k` ([`neardup_index::near_values`]): a family of m near
//! copies sharing a few values costs a few entries, not m(m − 1)/2 candidate pairs. Units are
//! then taken in keep order; each looks only at the units already KEPT under its own value and
//! the values near it, nearest first, and verifies until one passes (joining it) or none does
//! (kept, and listed under its value). A family of m copies so costs about m verifications.
//!
//! The decision is the one [`crate::clusters::centred_clusters`] makes from every candidate
//! pair (the property tests compare the two on generated families, chains and exact copies).
//!
//! Memory, beyond the items: 12 bytes a unit for the grouping, 4 for the keep order, 5 for the
//! kept lists, 16 a pair of near values, and the shingle sets of the units that have a near
//! value or share theirs (within the budget, spilled beyond it).

use std::collections::HashMap;

use neardup_core::Simhash;
use neardup_index::{near_values, Cluster, Design, Fingerprint, NearValues};

use crate::candidates::Verifier;
use crate::clusters::{gather, Joined, Units};
use crate::engine::{pair, FeatureSource, FoundPair, Item, Phases, Removal};
use crate::error::DedupError;
use crate::options::DedupOptions;
use crate::policy::{Evidence, Kind, Measure};

/// No unit: the end of a kept list.
const NONE: u32 = u32::MAX;

/// What the linear decision found.
pub(crate) struct Decided {
    pub(crate) clusters: Vec<Cluster>,
    pub(crate) removals: Vec<Removal>,
    /// Near pairs that decided a removal.
    pub(crate) decided: Vec<FoundPair>,
    /// Pairs of a unit and a kept unit within `k` that the decision looked at.
    pub(crate) candidates: usize,
    /// How many of them were verified on shingle sets.
    pub(crate) verified: usize,
    pub(crate) spilled_bytes: u64,
}

/// The exact groups, as the engine found them.
pub(crate) struct ExactGroups<'a> {
    pub(crate) groups: &'a [Vec<u32>],
    /// The first member of each document's exact group.
    pub(crate) first_of: &'a [u32],
    /// The units: first members, ascending.
    pub(crate) representatives: &'a [u32],
}

/// Decides `items` with a SimHash method (see the module doc). `accepted`: the exact and URL
/// pairs, sorted by `(a, b)`.
pub(crate) fn decide_by_values(
    items: &[Item],
    exact: &ExactGroups<'_>,
    accepted: &[FoundPair],
    options: &DedupOptions,
    source: &mut dyn FeatureSource,
    phases: &mut Phases,
) -> Result<Decided, DedupError> {
    let Some(&first) = exact.representatives.first() else {
        let units = Units::new(items, exact.groups, exact.first_of, options.keep);
        let (clusters, removals) = gather(items, &units, &[], Vec::new());
        return Ok(Decided {
            clusters,
            removals,
            decided: Vec::new(),
            candidates: 0,
            verified: 0,
            spilled_bytes: 0,
        });
    };
    let run = Run {
        items,
        exact,
        accepted,
        options,
    };
    match items[first as usize].fingerprints.simhash {
        Simhash::B64(_) => run.decide(source, phases, |i| {
            items[i as usize].fingerprints.simhash.as_u128() as u64
        }),
        Simhash::B128(_) => run.decide(source, phases, |i| {
            items[i as usize].fingerprints.simhash.as_u128()
        }),
    }
}

/// The values near each value: `near`'s pairs in both directions, by value.
struct ValueGraph<F> {
    near: NearValues<F>,
    /// `neighbours[starts[v]..starts[v + 1]]`: `(value, distance)` near value `v`.
    starts: Vec<u32>,
    neighbours: Vec<(u32, u32)>,
}

impl<F: Fingerprint> ValueGraph<F> {
    fn new(near: NearValues<F>) -> Self {
        let values = near.values().len();
        let mut degree = vec![0u32; values + 1];
        for &(u, v, _) in near.pairs() {
            degree[u as usize] += 1;
            degree[v as usize] += 1;
        }
        let mut starts = Vec::with_capacity(values + 1);
        let mut total = 0u32;
        for d in &degree {
            starts.push(total);
            total += d;
        }
        let mut fill = starts.clone();
        let mut neighbours = vec![(0u32, 0u32); total as usize];
        for &(u, v, d) in near.pairs() {
            for (from, to) in [(u, v), (v, u)] {
                neighbours[fill[from as usize] as usize] = (to, d);
                fill[from as usize] += 1;
            }
        }
        ValueGraph {
            near,
            starts,
            neighbours,
        }
    }

    /// The index of value `fp` (a unit's fingerprint, so present).
    fn value(&self, fp: F) -> u32 {
        self.near.values().partition_point(|&v| v < fp) as u32
    }

    fn neighbours(&self, value: u32) -> &[(u32, u32)] {
        let v = value as usize;
        &self.neighbours[self.starts[v] as usize..self.starts[v + 1] as usize]
    }

    /// Whether a unit of `value` can meet another unit within `k`: only those need shingle sets.
    fn may_pair(&self, value: u32) -> bool {
        self.near.members(value).len() > 1 || !self.neighbours(value).is_empty()
    }
}

/// One way a unit could join a kept unit.
struct Choice {
    other: u32,
    distance: u32,
    kind: Kind,
    /// The accepted pair (exact or URL) that links them, or `None`: a candidate to verify.
    accepted: Option<u32>,
}

/// The inputs of one decision.
struct Run<'a> {
    items: &'a [Item],
    exact: &'a ExactGroups<'a>,
    accepted: &'a [FoundPair],
    options: &'a DedupOptions,
}

impl Run<'_> {
    fn decide<F: Fingerprint>(
        &self,
        source: &mut dyn FeatureSource,
        phases: &mut Phases,
        fp_of: impl Fn(u32) -> F,
    ) -> Result<Decided, DedupError> {
        let policy = &self.options.policy;
        let budget = &self.options.budget;
        let representatives = self.exact.representatives;
        let fps: Vec<F> = representatives.iter().map(|&r| fp_of(r)).collect();
        let design = Design::for_expected_len(fps.len(), policy.k, F::BITS);
        let graph = ValueGraph::new(near_values(&fps, policy.k, design)?);
        drop(fps);
        phases.end("candidate search");
        let verifier = if policy.verifies() {
            let involved: Vec<u32> = representatives
                .iter()
                .copied()
                .filter(|&r| graph.may_pair(graph.value(fp_of(r))))
                .collect();
            let held = self.held_bytes(&graph);
            let memory = budget.left_after(held);
            tracing::info!(
                units = representatives.len(),
                values = graph.near.values().len(),
                value_pairs = graph.near.pairs().len(),
                with_sets = involved.len(),
                held_bytes = held,
                set_bytes = memory,
                "near values found"
            );
            Some(Verifier::fetch(
                source,
                &involved,
                memory,
                &budget.spill_dir(),
            )?)
        } else {
            None
        };
        phases.end("shingle sets");
        let units = Units::new(
            self.items,
            self.exact.groups,
            self.exact.first_of,
            self.options.keep,
        );
        let mut order = representatives.to_vec();
        order.sort_by_cached_key(|&u| units.rank(units.best(u)));
        let mut state = Walk::new(self.items.len(), graph.near.values().len(), self.accepted);
        for &unit in &order {
            let value = graph.value(fp_of(unit));
            let choices = state.choices(&units, &graph, unit, value);
            let found =
                self.first_passing(unit, choices, verifier.as_ref(), &mut state.verified)?;
            state.settle(unit, value, found);
        }
        let spilled_bytes = verifier.as_ref().map_or(0, Verifier::spilled_bytes);
        let decided = state
            .joined
            .iter()
            .filter(|j| j.pair.kind == Kind::Near)
            .map(|j| j.pair)
            // A pair listed already (by URL) stays listed once.
            .filter(|p| {
                self.accepted
                    .binary_search_by_key(&(p.a, p.b), |q| (q.a, q.b))
                    .is_err()
            })
            .collect();
        let (clusters, removals) = gather(self.items, &units, &order, state.joined);
        Ok(Decided {
            clusters,
            removals,
            decided,
            candidates: state.candidates,
            verified: state.verified,
            spilled_bytes,
        })
    }

    /// The first of `choices` (in order) whose pair the policy accepts, with that pair.
    fn first_passing(
        &self,
        unit: u32,
        choices: Vec<Choice>,
        verifier: Option<&Verifier>,
        verified: &mut usize,
    ) -> Result<Option<(u32, FoundPair)>, DedupError> {
        let policy = &self.options.policy;
        for choice in choices {
            let (a, b) = (unit.min(choice.other), unit.max(choice.other));
            let pair = match (choice.accepted, verifier) {
                (Some(i), _) => Some(self.accepted[i as usize]),
                (None, Some(verifier)) => {
                    *verified += 1;
                    verifier.verify(self.items, policy, a, b)?
                }
                (None, None) => Some(pair(
                    self.items,
                    a,
                    b,
                    Kind::Near,
                    Evidence {
                        measure: Measure::SimhashDistance,
                        value: f64::from(choice.distance),
                        threshold: f64::from(policy.k),
                    },
                )),
            };
            if let Some(pair) = pair {
                return Ok(Some((choice.other, pair)));
            }
        }
        Ok(None)
    }

    /// Bytes held besides the shingle sets: the items, the grouping and the walk's state (an
    /// estimate that sets the sets' share of the budget; the summary reports the measured peak).
    fn held_bytes<F>(&self, graph: &ValueGraph<F>) -> u64 {
        let items = self.items.len() as u64 * (std::mem::size_of::<Item>() as u64 + 16);
        let walk = self.items.len() as u64 * 9 + self.exact.representatives.len() as u64 * 4;
        let graph_bytes = graph.near.memory_bytes() + graph.neighbours.len() * 8;
        items + walk + graph_bytes as u64
    }
}

/// The state of the walk in keep order: which units are kept, under which value.
struct Walk<'a> {
    kept: Vec<bool>,
    /// The last kept unit of each value, and each kept unit's previous one of its value.
    kept_head: Vec<u32>,
    kept_next: Vec<u32>,
    /// Accepted pairs between two units, by unit: `(other unit, index in accepted)`.
    links: HashMap<u32, Vec<(u32, u32)>>,
    accepted: &'a [FoundPair],
    joined: Vec<Joined>,
    candidates: usize,
    verified: usize,
}

impl<'a> Walk<'a> {
    fn new(documents: usize, values: usize, accepted: &'a [FoundPair]) -> Self {
        Walk {
            kept: vec![false; documents],
            kept_head: vec![NONE; values],
            kept_next: vec![NONE; documents],
            links: HashMap::new(),
            accepted,
            joined: Vec::new(),
            candidates: 0,
            verified: 0,
        }
        .with_links()
    }

    /// Indexes the accepted pairs between different units (exact pairs are within one).
    fn with_links(mut self) -> Self {
        for (i, p) in self.accepted.iter().enumerate() {
            if p.kind != Kind::Exact {
                self.links.entry(p.a).or_default().push((p.b, i as u32));
                self.links.entry(p.b).or_default().push((p.a, i as u32));
            }
        }
        self
    }

    /// The kept units `unit` could join, nearest first (distance, kind, keep order).
    fn choices<F: Fingerprint>(
        &mut self,
        units: &Units<'_>,
        graph: &ValueGraph<F>,
        unit: u32,
        value: u32,
    ) -> Vec<Choice> {
        let mut choices = Vec::new();
        let near = std::iter::once((value, 0)).chain(graph.neighbours(value).iter().copied());
        for (other_value, distance) in near {
            let mut other = self.kept_head[other_value as usize];
            while other != NONE {
                choices.push(Choice {
                    other,
                    distance,
                    kind: Kind::Near,
                    accepted: None,
                });
                other = self.kept_next[other as usize];
            }
        }
        self.candidates += choices.len();
        for member in units.members(unit) {
            for &(doc, i) in self.links.get(member).map_or(&[][..], Vec::as_slice) {
                let other = units.first_of(doc);
                if other != unit && self.kept[other as usize] {
                    let p = &self.accepted[i as usize];
                    choices.push(Choice {
                        other,
                        distance: p.distance,
                        kind: p.kind,
                        accepted: Some(i),
                    });
                }
            }
        }
        choices.sort_by_cached_key(|c| (c.distance, c.kind, units.rank(units.best(c.other))));
        choices
    }

    /// Records the decision on `unit`: joined to a kept unit by a pair, or kept under `value`.
    fn settle(&mut self, unit: u32, value: u32, found: Option<(u32, FoundPair)>) {
        match found {
            Some((leader, pair)) => self.joined.push(Joined { unit, leader, pair }),
            None => {
                self.kept[unit as usize] = true;
                self.kept_next[unit as usize] = self.kept_head[value as usize];
                self.kept_head[value as usize] = unit;
            }
        }
    }
}
