//! The decision of the SimHash methods in work linear in the corpus.
//!
//! Units (the first members of exact groups) are taken in keep order; each is searched for in
//! an index of the units already KEPT ([`ProbedBlocks`], exact within `k`), and verified against
//! what it finds, nearest first, until one passes (it joins that one) or none does (it is kept
//! and goes into the index). A family of m near copies so costs about m searches that find its
//! kept member and m verifications, however many of its pairs are within `k` (a family of m
//! distinct near values has about m²/2; the 4 GB test corpus has hundreds of millions).
//!
//! Units are taken component by component: [`ExternalPairs::components`] links every two units
//! within `k` (the batch search, merging each pair found without listing it; in memory while it
//! fits what the budget leaves, else from bucket files on disk), and a unit can only ever
//! join a unit of its own component, so components are decided independently, each in keep
//! order, with the same result as one walk over the whole corpus in keep order (they are walked
//! in parallel, each by one thread, and their outcomes taken in component order). That keeps the
//! shingle sets a walk reads together: a component's sets are read from the spill file once and
//! stay in the cache while it is decided (the 4 GB test corpus read its sets hundreds of times
//! over in plain keep order, its families being spread over the whole file). Only units in a
//! component of two or more need shingle sets.
//!
//! The decision is the one [`crate::clusters::centred_clusters`] makes from every candidate
//! pair (the property tests compare the two on generated families, chains and exact copies).
//!
//! A unit alone in its component is kept without a search, and an index holds the kept units
//! of one component (a scan of them for a small component, [`ProbedBlocks`] sized for a large
//! one; one index a thread): the index no longer grows with the corpus (a global index of every kept unit
//! took 59% of the CPU on 3 million news leads, and about 70 bytes a kept unit).
//!
//! Memory, beyond the documents: the search within what the budget leaves, 5 bytes a unit for
//! its components; one byte a document for the flags, 4 a unit for the keep order (8 while it
//! is made), the index and kept marks of each component walked (one a thread), and the
//! shingle sets of the units with a neighbour (within the budget, spilled beyond it).

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use neardup_core::Simhash;
use neardup_index::{
    BruteForce, Cluster, Design, ExternalPairs, Fingerprint, FoundComponents, HammingIndex,
    ProbedBlocks, UnionFind,
};

use crate::candidates::Verifier;
use crate::clusters::{gather, Joined, Units};
use crate::documents::Documents;
use crate::engine::{pair, FeatureSource, FoundPair, Phases, Removal};
use crate::error::DedupError;
use crate::options::DedupOptions;
use crate::policy::{Evidence, Kind, Measure};

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

/// Decides `documents` with a SimHash method (see the module doc). `accepted`: the exact and URL
/// pairs, sorted by `(a, b)`.
pub(crate) fn decide_by_kept(
    documents: &Documents,
    exact: &ExactGroups<'_>,
    accepted: &[FoundPair],
    options: &DedupOptions,
    source: &mut dyn FeatureSource,
    phases: &mut Phases,
) -> Result<Decided, DedupError> {
    let Some(&first) = exact.representatives.first() else {
        let units = Units::new(documents, exact.groups, exact.first_of, options.keep);
        let (clusters, removals) = gather(documents, &units, std::iter::empty(), Vec::new());
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
        documents,
        exact,
        accepted,
        options,
    };
    match documents.simhash(first) {
        Simhash::B64(_) => run.decide(source, phases, |i| documents.simhash(i).as_u128() as u64),
        Simhash::B128(_) => run.decide(source, phases, |i| documents.simhash(i).as_u128()),
    }
}

/// One way a unit could join a kept unit.
struct Choice {
    other: u32,
    /// Where it comes among the unit's choices: nearest first (distance, kind, keep order).
    key: ChoiceKey,
    /// The accepted pair (exact or URL) that links them, or `None`: a candidate to verify.
    accepted: Option<u32>,
}

/// The order of a unit's choices: SimHash distance, kind, the keep rank of the kept unit.
type ChoiceKey = (u32, Kind, (u64, i64, u32));

impl Choice {
    fn new(
        units: &Units<'_>,
        other: u32,
        distance: u32,
        kind: Kind,
        accepted: Option<u32>,
    ) -> Self {
        Choice {
            other,
            key: (distance, kind, units.rank(units.best(other))),
            accepted,
        }
    }
}

/// The choice a unit joins, and the pair that decided it.
struct Found {
    key: ChoiceKey,
    other: u32,
    pair: FoundPair,
}

/// What a unit's search among some kept units found.
struct Searched {
    found: Option<Found>,
    /// Choices looked at, and how many of them were verified on shingle sets.
    candidates: usize,
    verified: usize,
}

/// The inputs of one decision.
struct Run<'a> {
    documents: &'a Documents,
    exact: &'a ExactGroups<'a>,
    accepted: &'a [FoundPair],
    options: &'a DedupOptions,
}

impl Run<'_> {
    fn decide<F: Fingerprint>(
        &self,
        source: &mut dyn FeatureSource,
        phases: &mut Phases,
        fp_of: impl Fn(u32) -> F + Sync,
    ) -> Result<Decided, DedupError> {
        let policy = &self.options.policy;
        let budget = &self.options.budget;
        let representatives = self.exact.representatives;
        // The search holds what is left besides the walk's state and the components (5 bytes a
        // unit), working from disk beyond it.
        let held = self.held_bytes() + representatives.len() as u64 * 5;
        let mut search = ExternalPairs::<F>::new(budget.for_search(held), &budget.spill_dir());
        for &r in representatives {
            search.push(fp_of(r))?;
        }
        let design = Design::for_expected_len(representatives.len(), policy.k, F::BITS);
        let FoundComponents {
            mut components,
            spilled_bytes: search_spilled,
        } = search.components(policy.k, design)?;
        let near = in_groups_of_two_or_more(&mut components);
        phases.end("candidate search");
        let verifier = if policy.verifies() {
            let involved: Vec<u32> = representatives
                .iter()
                .zip(&near)
                .filter(|(_, &near)| near)
                .map(|(&r, _)| r)
                .collect();
            let memory = budget.left(self.held_bytes());
            tracing::info!(
                units = representatives.len(),
                with_sets = involved.len(),
                set_bytes = memory,
                "units with a neighbour found"
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
        drop(near);
        phases.end("shingle sets");
        let units = Units::new(
            self.documents,
            self.exact.groups,
            self.exact.first_of,
            self.options.keep,
        );
        let component = self.components_with_links(components, &units);
        let walk = WalkOrder::new(representatives, &component, self.exact.groups, &units);
        drop(component);
        tracing::info!(
            components = walk.spans.len(),
            units = walk.order.len(),
            largest = walk.spans.iter().max().copied().unwrap_or(0),
            units_in_probed = walk
                .spans
                .iter()
                .filter(|&&len| len as usize > SCAN_LIMIT)
                .sum::<u32>(),
            "components to walk"
        );
        let links = AcceptedByDoc::new(self.accepted);
        // Components are independent: they are decided in parallel, and their outcomes taken
        // in component order, as one walk over them in turn would give them.
        let outcomes: Vec<Outcome> = walk
            .components()
            .par_iter()
            .map(|component| {
                self.walk_component(component, &units, &links, verifier.as_ref(), &fp_of)
            })
            .collect::<Result<_, _>>()?;
        let mut state = Outcome::default();
        for outcome in outcomes {
            state.joined.extend(outcome.joined);
            state.candidates += outcome.candidates;
            state.verified += outcome.verified;
        }
        let spilled_bytes = search_spilled + verifier.as_ref().map_or(0, Verifier::spilled_bytes);
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
        let heads = walk.order.iter().chain(&walk.alone_groups).copied();
        let (clusters, removals) = gather(self.documents, &units, heads, state.joined);
        Ok(Decided {
            clusters,
            removals,
            decided,
            candidates: state.candidates,
            verified: state.verified,
            spilled_bytes,
        })
    }

    /// Decides the units of one component (`component`: in keep order), each against the kept
    /// units before it.
    ///
    /// Units are taken in batches: each unit of a batch is searched for among the units kept
    /// before the batch, in parallel (the index and the kept marks are only read), then, in keep
    /// order, among the units the batch kept before it, closer in the order of choices than
    /// what the first search found. The first passing choice of the union is the one a walk
    /// unit by unit finds: the same decisions, with the searches and verifications of a
    /// component (one component holds most units of a crawl of templates) on every thread.
    fn walk_component<F: Fingerprint>(
        &self,
        component: &[u32],
        units: &Units<'_>,
        links: &AcceptedByDoc,
        verifier: Option<&Verifier>,
        fp_of: &(impl Fn(u32) -> F + Sync),
    ) -> Result<Outcome, DedupError> {
        let mut walk = Walk::new(component.len(), self.options.policy.k, links, self.accepted)?;
        for batch in component.chunks(batch_len(component.len())) {
            let search = |&unit: &u32| {
                let choices = walk.choices_before(units, unit, fp_of(unit))?;
                self.first_passing(unit, choices, None, verifier)
            };
            let before: Vec<Searched> = if batch.len() >= PARALLEL_BATCH {
                batch.par_iter().map(search).collect::<Result<_, _>>()?
            } else {
                batch.iter().map(search).collect::<Result<_, _>>()?
            };
            for (&unit, before) in batch.iter().zip(before) {
                let fp = fp_of(unit);
                let choices = walk.choices_in_batch(units, unit, fp);
                let within = self.first_passing(
                    unit,
                    choices,
                    before.found.as_ref().map(|f| f.key),
                    verifier,
                )?;
                walk.outcome.candidates += before.candidates + within.candidates;
                walk.outcome.verified += before.verified + within.verified;
                let found = within.found.or(before.found);
                if let (Some(_), Some(verifier)) = (&found, verifier) {
                    // A unit that joins another is never a candidate again: its set leaves the
                    // cache, which so holds the kept units' sets that later units are verified
                    // on.
                    verifier.forget(unit);
                }
                walk.settle(unit, fp, found);
            }
            walk.end_batch()?;
        }
        Ok(walk.outcome)
    }

    /// The first of `choices` (sorted by key) whose pair the policy accepts, among those before
    /// `until` (all when `None`).
    fn first_passing(
        &self,
        unit: u32,
        choices: Vec<Choice>,
        until: Option<ChoiceKey>,
        verifier: Option<&Verifier>,
    ) -> Result<Searched, DedupError> {
        let policy = &self.options.policy;
        let mut searched = Searched {
            found: None,
            candidates: choices.iter().filter(|c| c.accepted.is_none()).count(),
            verified: 0,
        };
        for choice in choices {
            if until.is_some_and(|until| choice.key >= until) {
                break;
            }
            let (a, b) = (unit.min(choice.other), unit.max(choice.other));
            let pair = match (choice.accepted, verifier) {
                (Some(i), _) => Some(self.accepted[i as usize]),
                (None, Some(verifier)) => {
                    searched.verified += 1;
                    verifier.verify(self.documents, policy, a, b)?
                }
                (None, None) => Some(pair(
                    self.documents,
                    a,
                    b,
                    Kind::Near,
                    Evidence {
                        measure: Measure::SimhashDistance,
                        value: f64::from(choice.key.0),
                        threshold: f64::from(policy.k),
                    },
                )),
            };
            if let Some(pair) = pair {
                searched.found = Some(Found {
                    key: choice.key,
                    other: choice.other,
                    pair,
                });
                break;
            }
        }
        Ok(searched)
    }

    /// Each unit's component (by its index among the representatives), named by its first
    /// unit: the near components, merged further by the accepted pairs between units (URL
    /// duplicates), since a unit may join a kept unit by those too.
    fn components_with_links(&self, mut components: UnionFind, units: &Units<'_>) -> Vec<u32> {
        let representatives = self.exact.representatives;
        let at = |doc: u32| representatives.partition_point(|&r| r < units.first_of(doc)) as u32;
        for p in self.accepted.iter().filter(|p| p.kind != Kind::Exact) {
            components.union(at(p.a), at(p.b));
        }
        let n = representatives.len() as u32;
        let mut first = vec![u32::MAX; representatives.len()];
        let roots: Vec<u32> = (0..n).map(|i| components.find(i)).collect();
        for (i, &root) in roots.iter().enumerate() {
            first[root as usize] = first[root as usize].min(i as u32);
        }
        roots.iter().map(|&root| first[root as usize]).collect()
    }

    /// Bytes held besides the shingle sets: the documents and the walk's state (an estimate;
    /// [`crate::Budget`] takes the measured peak when that is larger). The indexes of kept units
    /// (one a component walked, one a thread at a time) are not counted here.
    fn held_bytes(&self) -> u64 {
        let walk = self.documents.len() as u64 + self.exact.representatives.len() as u64 * 8;
        self.documents.held_bytes() + walk
    }
}

/// The order of the walk: the units with a neighbour, component by component (in the order of
/// their first units), each component in keep order. A unit alone in its component joins
/// nothing and is kept without a search.
struct WalkOrder {
    /// The units walked.
    order: Vec<u32>,
    /// The length of each component in `order`, in turn.
    spans: Vec<u32>,
    /// The first members of exact groups alone in their component (kept, heading a cluster of
    /// their copies).
    alone_groups: Vec<u32>,
}

impl WalkOrder {
    /// `component`: each unit's component (by index among `representatives`), named by its
    /// first unit.
    fn new(
        representatives: &[u32],
        component: &[u32],
        groups: &[Vec<u32>],
        units: &Units<'_>,
    ) -> Self {
        let mut size = vec![0u32; component.len()];
        for &c in component {
            size[c as usize] += 1;
        }
        let shared = |at: usize| size[component[at] as usize] > 1;
        let mut walked: Vec<u32> = (0..component.len() as u32)
            .filter(|&at| shared(at as usize))
            .collect();
        walked.sort_by_cached_key(|&at| {
            let unit = representatives[at as usize];
            (component[at as usize], units.rank(units.best(unit)))
        });
        let order = walked
            .into_iter()
            .map(|at| representatives[at as usize])
            .collect();
        let alone_groups = groups
            .iter()
            .map(|group| group[0])
            .filter(|&first| !shared(representatives.partition_point(|&r| r < first)))
            .collect();
        // Component names ascend with their first unit, as the sort above takes them.
        let spans = size.into_iter().filter(|&len| len > 1).collect();
        WalkOrder {
            order,
            spans,
            alone_groups,
        }
    }

    /// The units walked, a slice a component.
    fn components(&self) -> Vec<&[u32]> {
        let mut rest = self.order.as_slice();
        self.spans
            .iter()
            .map(|&len| {
                let (component, after) = rest.split_at(len as usize);
                rest = after;
                component
            })
            .collect()
    }
}

/// Components up to this many units are searched by a scan of their kept units: cheaper than the
/// probes of a [`ProbedBlocks`] query (64 comparisons a probe, 68 probes a table set at k = 6).
const SCAN_LIMIT: usize = 4096;

/// The most units of a component decided together (see [`Run::walk_component`]): enough to
/// keep every thread busy, few enough that the units a batch keeps, searched by a scan, stay
/// few. A component of fewer than four times as many takes batches of a quarter of its units
/// (at least 8), so that small components too are decided in several batches.
const WALK_BATCH: usize = 256;

/// Batches smaller than this are searched on one thread (the components themselves are walked
/// in parallel).
const PARALLEL_BATCH: usize = 16;

/// The units of a component of `len` decided together.
fn batch_len(len: usize) -> usize {
    (len / 4).clamp(8, WALK_BATCH)
}

/// The accepted pairs between two units (exact pairs are within one), by document: `(other
/// document, index in the accepted pairs)`.
struct AcceptedByDoc(HashMap<u32, Vec<(u32, u32)>>);

impl AcceptedByDoc {
    fn new(accepted: &[FoundPair]) -> Self {
        let mut links: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
        for (i, p) in accepted.iter().enumerate() {
            if p.kind != Kind::Exact {
                links.entry(p.a).or_default().push((p.b, i as u32));
                links.entry(p.b).or_default().push((p.a, i as u32));
            }
        }
        AcceptedByDoc(links)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn of(&self, doc: u32) -> &[(u32, u32)] {
        self.0.get(&doc).map_or(&[][..], Vec::as_slice)
    }
}

/// What the walk of one component decided.
#[derive(Default)]
struct Outcome {
    joined: Vec<Joined>,
    /// Pairs of a unit and a kept unit within `k` that the decision looked at.
    candidates: usize,
    /// How many of them were verified on shingle sets.
    verified: usize,
}

/// The state of the walk of one component in keep order: its kept units, by batch.
struct Walk<'a, F> {
    /// The units kept before the current batch, by their SimHash (a unit can only find kept
    /// units of its own component).
    index: Box<dyn HammingIndex<F> + Send + Sync>,
    /// Every unit kept so far, when accepted pairs link units (else empty: never read).
    kept: HashSet<u32>,
    /// The units the current batch kept so far, with their SimHash.
    batch_kept: Vec<(u32, F)>,
    k: u32,
    links: &'a AcceptedByDoc,
    accepted: &'a [FoundPair],
    outcome: Outcome,
}

impl<'a, F: Fingerprint> Walk<'a, F> {
    /// The walk of a component of `len` units: an empty index, sized for it.
    fn new(
        len: usize,
        k: u32,
        links: &'a AcceptedByDoc,
        accepted: &'a [FoundPair],
    ) -> Result<Self, DedupError> {
        let index: Box<dyn HammingIndex<F> + Send + Sync> = if len <= SCAN_LIMIT {
            Box::new(BruteForce::new())
        } else {
            let blocks = ProbedBlocks::<F>::blocks_for(len, k);
            Box::new(ProbedBlocks::with_capacity(blocks, k, len)?)
        };
        Ok(Walk {
            index,
            kept: HashSet::new(),
            batch_kept: Vec::new(),
            k,
            links,
            accepted,
            outcome: Outcome::default(),
        })
    }

    /// The units kept before the current batch that `unit` (of SimHash `fp`) could join, in
    /// the order of choices.
    fn choices_before(
        &self,
        units: &Units<'_>,
        unit: u32,
        fp: F,
    ) -> Result<Vec<Choice>, DedupError> {
        let near = self
            .index
            .query(fp, self.k)?
            .into_iter()
            .map(|found| Choice::new(units, found.id as u32, found.distance, Kind::Near, None));
        let choices = near.chain(self.linked(units, unit, |other| self.kept.contains(&other)));
        Ok(sorted(choices.collect()))
    }

    /// The units the current batch kept so far that `unit` (of SimHash `fp`) could join, in
    /// the order of choices.
    fn choices_in_batch(&self, units: &Units<'_>, unit: u32, fp: F) -> Vec<Choice> {
        let near = self.batch_kept.iter().filter_map(|&(other, other_fp)| {
            let distance = fp.xor(other_fp).ones();
            (distance <= self.k).then(|| Choice::new(units, other, distance, Kind::Near, None))
        });
        let in_batch = |other: u32| self.batch_kept.iter().any(|&(kept, _)| kept == other);
        sorted(near.chain(self.linked(units, unit, in_batch)).collect())
    }

    /// The kept units (as `kept` says) an accepted pair links to `unit`.
    fn linked(&self, units: &Units<'_>, unit: u32, kept: impl Fn(u32) -> bool) -> Vec<Choice> {
        let mut choices = Vec::new();
        for &member in units.members(unit) {
            for &(doc, i) in self.links.of(member) {
                let other = units.first_of(doc);
                if other != unit && kept(other) {
                    let p = &self.accepted[i as usize];
                    choices.push(Choice::new(units, other, p.distance, p.kind, Some(i)));
                }
            }
        }
        choices
    }

    /// Records the decision on `unit`: joined to a kept unit by a pair, or kept (indexed by its
    /// SimHash `fp` when the batch ends).
    fn settle(&mut self, unit: u32, fp: F, found: Option<Found>) {
        match found {
            Some(found) => self.outcome.joined.push(Joined {
                unit,
                leader: found.other,
                pair: found.pair,
            }),
            None => {
                if !self.links.is_empty() {
                    // Read only to follow accepted pairs: without any, not held.
                    self.kept.insert(unit);
                }
                self.batch_kept.push((unit, fp));
            }
        }
    }

    /// Ends a batch: the units it kept go into the index.
    fn end_batch(&mut self) -> Result<(), DedupError> {
        for (unit, fp) in self.batch_kept.drain(..) {
            self.index.insert(u64::from(unit), fp)?;
        }
        Ok(())
    }
}

/// `choices` in the order of choices (a stable sort: the accepted pairs between the same two
/// units stay in the order they were listed).
fn sorted(mut choices: Vec<Choice>) -> Vec<Choice> {
    choices.sort_by_key(|c| c.key);
    choices
}

/// For each element of `components`, whether its component has another element.
fn in_groups_of_two_or_more(components: &mut UnionFind) -> Vec<bool> {
    let n = components.len() as u32;
    let roots: Vec<u32> = (0..n).map(|i| components.find(i)).collect();
    let mut size = vec![0u32; roots.len()];
    for &root in &roots {
        size[root as usize] += 1;
    }
    roots.iter().map(|&root| size[root as usize] > 1).collect()
}
