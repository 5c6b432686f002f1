//! The decision of the SimHash, MinHash and overlap methods in work linear in the corpus.
//!
//! Units (the first members of exact groups) are taken in keep order; each is searched for in
//! an index of the units already KEPT ([`crate::kept_index`]: by SimHash, exact within `k`; by
//! MinHash, the kept units sharing an LSH band whose estimate reaches the threshold; by the
//! overlap method, the kept units whose shingle-set prefixes share a shingle with its own), and
//! verified against what it finds, nearest first (SimHash distance under every method), until
//! one passes (it joins that one) or none does (it is kept and goes into the index). A family of m near copies so costs about m searches that find its
//! kept member and m verifications, however many of its pairs are within `k` (a family of m
//! distinct near values has about m²/2; the 4 GB test corpus has hundreds of millions).
//!
//! Units are taken component by component: [`ExternalPairs::components`] links every two units
//! within `k` (the batch search, merging each pair found without listing it; in memory while it
//! fits what the budget leaves, else from bucket files on disk; under MinHash, the units sharing
//! a band key are linked, [`band_components`]; under the overlap method, the units sharing a
//! shingle of their prefixes, [`prefix_components`]), and a unit can only ever
//! join a unit of its own component, so components are decided independently, each in keep
//! order, with the same result as one walk over the whole corpus in keep order (they are walked
//! in parallel, each by one thread, and their outcomes taken in component order). That keeps the
//! shingle sets a walk reads together: a component's sets are read from the spill file once and
//! stay in the cache while it is decided (the 4 GB test corpus read its sets hundreds of times
//! over in plain keep order, its families being spread over the whole file). Only the units the
//! search linked to another need shingle sets: a unit linked by accepted pairs only (URL
//! duplicates) is walked, but an accepted pair is never verified.
//!
//! The decision is the one [`crate::clusters::centred_clusters`] makes from every candidate
//! pair (the property tests compare the two on generated families, chains and exact copies).
//!
//! A unit alone in its component is kept without a search, and an index holds the kept units
//! of one component (a scan of them for a small component, [`neardup_index::ProbedBlocks`] sized for a large
//! one; one index a thread): the index no longer grows with the corpus (a global index of every kept unit
//! took 59% of the CPU on 3 million news leads, and about 70 bytes a kept unit).
//!
//! Memory, beyond the documents (their rows spilled beyond a share of the budget, the rows of
//! the units with a neighbour gathered for the walk) and the exact groups (8 bytes a copy,
//! [`ExactGroups`]): the search within what the budget leaves, 5 bytes a unit for its
//! components, then 8 more while each unit's component is named (its first unit), and about 40
//! a unit with a neighbour while the keep order is sorted, as long as the union-find fits an
//! eighth of what the budget leaves; beyond, none of these: the search writes links to sorted
//! runs, the components are found from them on disk ([`FoundLinks::components`]) and the walk
//! order is read from `(component, unit)` runs a component at a time (the units the search
//! linked listed, 4 bytes each, and a bit a unit marking those walked; with accepted pairs,
//! their components and the search's are joined in a second pass on disk). One byte a document for the
//! flags; 4 bytes a unit with a neighbour for the keep order; the index of each component walked
//! (one a thread: its units' SimHash values, signatures or prefixes, and its kept units), within
//! a share of the budget: a component whose index does not fit is walked in parts (see
//! [`Run::walk_component`]); and the shingle sets of the units the search linked (within the
//! budget, spilled beyond it).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use neardup_core::measure::FeatureSet;
use neardup_core::Simhash;
use neardup_index::{
    union_find_fits, Design, ExternalPairs, Fingerprint, FoundComponents, FoundLinks, LshParams,
    Runs, Sorted, SpillDir, UnionFind,
};

use crate::candidates::Verifier;
use crate::clusters::{gather, Joined, Units};
use crate::documents::Documents;
use crate::engine::{pair, FeatureSource, FoundPair, Phases, Removal};
use crate::error::DedupError;
use crate::exact::ExactGroups;
use crate::kept_index::{
    BandNear, KeptIndex, Near, Nearness, PrefixNear, Shifted, SimhashNear, SCAN_LIMIT,
};
use crate::listed::ListBuilder;
use crate::listing::{list_accepted, list_band_pairs, list_prefix_pairs, Listing, ListingSinks};
use crate::options::DedupOptions;
use crate::policy::{Evidence, Kind, Method};
use crate::prefixes::{Prefix, ShingleOrder};
use crate::url_pairs::UrlPairs;

/// What the linear decision found (its removals and the near pairs that decided them are added
/// to the lists it was given).
pub(crate) struct Decided {
    /// How many clusters the removals make.
    pub(crate) clusters: usize,
    /// Pairs of a unit and a kept unit within `k` that the decision looked at.
    pub(crate) candidates: usize,
    /// How many of them were verified on shingle sets.
    pub(crate) verified: usize,
    pub(crate) spilled_bytes: u64,
}

/// Where the linear decision writes what it decides, and the time of its phases.
pub(crate) struct Sinks<'a> {
    /// Every removed document, with its kept one.
    pub(crate) removals: &'a ListBuilder<Removal>,
    /// The near pairs that decided a removal.
    pub(crate) pairs: &'a ListBuilder<FoundPair>,
    pub(crate) phases: &'a mut Phases,
}

/// Decides `documents` in keep order against the kept units (see the module doc). `accepted`: the URL pairs,
/// sorted by `(a, b)`; the rows of their documents and of every exact group's first and kept
/// members are gathered already (see [`Documents::gather`]).
pub(crate) fn decide_by_kept(
    documents: &mut Documents,
    exact: &ExactGroups,
    accepted: &UrlPairs,
    options: &DedupOptions,
    source: &mut dyn FeatureSource,
    sinks: Sinks<'_>,
) -> Result<Decided, DedupError> {
    let Some(first) = exact.units().next() else {
        let units = Units::new(documents, exact, options.keep);
        let none = ListBuilder::within(&options.budget).finish()?;
        let clusters = gather(documents, &units, std::iter::empty(), &none, sinks.removals)?;
        return Ok(Decided {
            clusters,
            candidates: 0,
            verified: 0,
            spilled_bytes: 0,
        });
    };
    match options.policy.method {
        Method::Minhash => {
            return decide_by_bands(documents, exact, accepted, options, source, sinks)
        }
        Method::Overlap => {
            return decide_by_prefixes(documents, exact, accepted, options, source, sinks)
        }
        _ => {}
    }
    match documents.simhash(first) {
        Simhash::B64(_) => {
            decide_at_width(documents, exact, accepted, options, source, sinks, |s| {
                s.as_u128() as u64
            })
        }
        Simhash::B128(_) => {
            decide_at_width(documents, exact, accepted, options, source, sinks, |s| {
                s.as_u128()
            })
        }
    }
}

/// [`decide_by_kept`] with the SimHash values as `F` (`fingerprint` makes one of a SimHash).
fn decide_at_width<F: Fingerprint>(
    documents: &mut Documents,
    exact: &ExactGroups,
    accepted: &UrlPairs,
    options: &DedupOptions,
    source: &mut dyn FeatureSource,
    sinks: Sinks<'_>,
    fingerprint: impl Fn(Simhash) -> F + Sync + Copy,
) -> Result<Decided, DedupError> {
    let held = held_bytes(documents, exact, accepted);
    let linked = search_components(documents, exact, accepted, options, held, fingerprint)?;
    let run = Run {
        exact,
        accepted,
        options,
    };
    run.walk(
        documents,
        linked,
        Sets::Fetch(source),
        sinks,
        |documents| SimhashNear {
            fingerprint: move |i| fingerprint(documents.simhash(i)),
            k: options.policy.k,
        },
        |documents, walked, held, listing_sinks| {
            list_accepted(documents, &walked.near, options, held, listing_sinks, |i| {
                fingerprint(documents.simhash(i))
            })
        },
    )
}

/// [`decide_by_kept`] under the MinHash method: the units linked by their LSH band keys (each
/// unit's band keys written to sorted runs within what the budget leaves, each run of equal
/// keys linking its units to its first, their components found by [`FoundLinks`]), then walked
/// as the SimHash methods are, each unit's candidates among the kept units of its component
/// being those sharing a band whose estimated Jaccard reaches the threshold ([`BandNear`]);
/// every candidate pair listed after it when the options ask ([`list_band_pairs`]).
fn decide_by_bands(
    documents: &mut Documents,
    exact: &ExactGroups,
    accepted: &UrlPairs,
    options: &DedupOptions,
    source: &mut dyn FeatureSource,
    sinks: Sinks<'_>,
) -> Result<Decided, DedupError> {
    let width = documents.signatures().require()?;
    let params = options.policy.lsh_params(width)?;
    let held = held_bytes(documents, exact, accepted);
    let linked = band_components(documents, exact, accepted, options, held, params)?;
    let run = Run {
        exact,
        accepted,
        options,
    };
    run.walk(
        documents,
        linked,
        Sets::Fetch(source),
        sinks,
        |documents| BandNear {
            documents,
            params,
            threshold: options.policy.threshold,
        },
        |documents, walked, held, listing_sinks| {
            list_band_pairs(
                documents,
                &walked.near,
                options,
                held,
                listing_sinks,
                params,
            )
        },
    )
}

/// Links the units that share a band key (see [`decide_by_bands`]): `(key, unit index)` of
/// every band of every unit sorted within half of what the budget leaves (on disk beyond),
/// each run of one key linking its units to its first within the other half. Keys equal by a
/// hash collision only link units that are no candidates: their component is larger, the
/// decision the same.
fn band_components(
    documents: &Documents,
    exact: &ExactGroups,
    accepted: &UrlPairs,
    options: &DedupOptions,
    held: u64,
    params: LshParams,
) -> Result<Linked, DedupError> {
    let budget = &options.budget;
    let memory = budget.for_search(held);
    let dir = budget.spill_dir();
    let spill = SpillDir::new(&dir);
    let keyed: Runs<(u64, u64)> = Runs::new(spill.clone(), memory / 2);
    documents
        .signatures()
        .band_keys_into(exact.units(), params, &keyed)?;
    let links = FoundLinks::within(memory / 2, &dir);
    link_each_key(keyed, &links, |index| (index as u32, true))?;
    let mut linked = linked_components(links, exact, accepted, &dir, memory)?;
    linked.spilled_bytes += spill.written();
    Ok(linked)
}

/// Links the units of each key of `keyed` (`(key, value)` records, `member` telling a value's
/// unit index and whether it may head its key's units) to the key's first record, if that may
/// head them; a key whose first record may not links nothing. So a key whose records that may
/// head sort first links all its units to one of them, or none if it has none.
fn link_each_key(
    keyed: Runs<(u64, u64)>,
    links: &FoundLinks,
    member: impl Fn(u64) -> (u32, bool),
) -> Result<(), DedupError> {
    let batch = links.batch();
    let mut pairs = Vec::with_capacity(batch);
    let mut first: Option<(u64, Option<u32>)> = None;
    for record in keyed.into_sorted()? {
        let (key, value) = record?;
        let (index, may_head) = member(value);
        match first {
            Some((current, head)) if current == key => {
                if let Some(head) = head {
                    pairs.push((head, index));
                }
            }
            _ => first = Some((key, may_head.then_some(index))),
        }
        if pairs.len() >= batch {
            links.link(&mut pairs)?;
        }
    }
    Ok(links.link(&mut pairs)?)
}

/// [`decide_by_kept`] under the overlap method: every unit's shingle set stored within half of
/// what the budget leaves (on disk beyond), a count-min sketch of their shingles made on the
/// way ([`ShingleOrder`]); the units linked by the shingles of their prefixes in its order
/// ([`prefix_components`]), then walked as the other methods are, each unit's candidates among
/// the kept units of its component being those whose prefixes share a shingle with its own
/// ([`PrefixNear`]); every candidate pair of each component listed after it when the options
/// ask ([`list_prefix_pairs`]).
fn decide_by_prefixes(
    documents: &mut Documents,
    exact: &ExactGroups,
    accepted: &UrlPairs,
    options: &DedupOptions,
    source: &mut dyn FeatureSource,
    sinks: Sinks<'_>,
) -> Result<Decided, DedupError> {
    let (policy, budget) = (&options.policy, &options.budget);
    let units: Vec<u32> = exact.units().collect();
    let mut order = ShingleOrder::for_sets(units.len());
    let held = held_bytes(documents, exact, accepted) + order.held_bytes();
    let memory = budget.left(held) / 2;
    let mut counting = Counting {
        source,
        order: &mut order,
    };
    let sets = Arc::new(Verifier::fetch(
        &mut counting,
        &units,
        memory,
        &budget.spill_dir(),
    )?);
    sinks.phases.end("shingle sets");
    let linked = prefix_components(
        &sets,
        &order,
        &units,
        exact,
        accepted,
        options,
        held + memory,
    )?;
    drop(units);
    let run = Run {
        exact,
        accepted,
        options,
    };
    let stored = Sets::Stored(Arc::clone(&sets));
    run.walk(
        documents,
        linked,
        stored,
        sinks,
        |documents| PrefixNear {
            documents,
            sets,
            order: &order,
            policy,
        },
        |documents, walked, held, listing_sinks| {
            let components = walked.components();
            list_prefix_pairs(documents, &components, options, held, listing_sinks, &order)
        },
    )
}

/// A source of shingle sets that counts each set it hands over into a [`ShingleOrder`].
struct Counting<'a> {
    source: &'a mut dyn FeatureSource,
    order: &'a mut ShingleOrder,
}

impl FeatureSource for Counting<'_> {
    fn feature_sets(
        &mut self,
        positions: &[u32],
        sink: &mut dyn FnMut(FeatureSet) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        let order = &mut *self.order;
        self.source.feature_sets(positions, &mut |set| {
            order.count(&set);
            sink(set)
        })
    }
}

/// Units whose prefixes are made at a time (in parallel) while their keys are written.
const PREFIX_BATCH: usize = 4096;

/// Links the `units` (ascending) whose prefixes share a shingle in the index prefix of one of them
/// (see [`decide_by_prefixes`]; every candidate pair is so linked): `(shingle, role and unit
/// index)` of every shingle of every unit's probe prefix sorted within half of what the budget
/// leaves once `held` bytes are held (on disk beyond), the index prefix's first, each shingle
/// linking its units to the first whose index prefix holds it within the other half.
fn prefix_components(
    sets: &Verifier,
    order: &ShingleOrder,
    units: &[u32],
    exact: &ExactGroups,
    accepted: &UrlPairs,
    options: &DedupOptions,
    held: u64,
) -> Result<Linked, DedupError> {
    let (policy, budget) = (&options.policy, &options.budget);
    let memory = budget.for_search(held);
    let dir = budget.spill_dir();
    let spill = SpillDir::new(&dir);
    let keyed: Runs<(u64, u64)> = Runs::new(spill.clone(), memory / 2);
    let mut batch = Vec::with_capacity(keyed.batch());
    for (chunk, start) in units
        .chunks(PREFIX_BATCH)
        .zip((0u32..).step_by(PREFIX_BATCH))
    {
        let prefixes: Vec<Prefix> = chunk
            .par_iter()
            .map(|&unit| {
                let set = sets.set(unit)?.unwrap_or_default();
                // Read in position order once: not cached for the walk.
                sets.forget(unit);
                Ok(order.prefix(&set, policy))
            })
            .collect::<Result<_, DedupError>>()?;
        for (index, prefix) in (start..).zip(&prefixes) {
            let keys = prefix.shingles().map(|(shingle, in_index)| {
                // The index prefix's records first under each shingle.
                (shingle, (u64::from(!in_index) << 32) | u64::from(index))
            });
            batch.extend(keys);
            if batch.len() >= keyed.batch() {
                keyed.add(&mut batch)?;
            }
        }
    }
    keyed.add(&mut batch)?;
    let links = FoundLinks::within(memory / 2, &dir);
    link_each_key(keyed, &links, |value| (value as u32, value >> 32 == 0))?;
    let mut linked = linked_components(links, exact, accepted, &dir, memory)?;
    linked.spilled_bytes += spill.written();
    Ok(linked)
}

/// What the batch search found: each unit's component, and whether it has a neighbour.
struct Linked {
    components: Components,
    /// The units the search linked to another, ascending: those whose shingle sets verification
    /// may read (a unit linked by accepted pairs only is in a component of two or more, walked,
    /// but never verified).
    near: Vec<u32>,
    spilled_bytes: u64,
}

/// The units' components, as the search found them.
enum Components {
    /// Merged in memory: a union-find of every unit (by its index among the units), the
    /// accepted pairs not merged yet.
    Merged(UnionFind),
    /// Found from links on disk, the accepted pairs among them: `(component, unit index)` of
    /// each unit in a component of two or more, a component named by its first unit's index,
    /// in sorted runs, and their folder.
    Sorted(Runs<(u64, u64)>, SpillDir),
}

/// Links every two units within `k`, the units' SimHash values read in position order (spilled
/// rows front to back): merged into a union-find of the units ([`ExternalPairs::components`])
/// while it fits its share of what the budget leaves ([`union_find_fits`]), else written as
/// links and their components found on disk ([`linked_components`]).
fn search_components<F: Fingerprint>(
    documents: &mut Documents,
    exact: &ExactGroups,
    accepted: &UrlPairs,
    options: &DedupOptions,
    held: u64,
    fingerprint: impl Fn(Simhash) -> F,
) -> Result<Linked, DedupError> {
    let (policy, budget) = (&options.policy, &options.budget);
    let units = exact.unit_count();
    let merged = union_find_fits(units as usize, budget.left(held));
    // The search holds what is left besides the walk's state and the components (5 bytes a
    // unit when merged), working from disk beyond it.
    let memory = if merged {
        budget.for_search(held + u64::from(units) * 5)
    } else {
        budget.for_search(held)
    };
    let mut search = ExternalPairs::<F>::new(memory, &budget.spill_dir());
    documents.scan_simhashes(exact.units(), |simhash| {
        search.push(fingerprint(simhash))?;
        Ok(())
    })?;
    let design = Design::for_expected_len(units as usize, policy.k, F::BITS);
    if !merged {
        let links = search.links(policy.k, design)?;
        return linked_components(links, exact, accepted, &budget.spill_dir(), memory);
    }
    let FoundComponents {
        mut components,
        spilled_bytes,
    } = search.components(policy.k, design)?;
    let near = exact
        .units()
        .zip(in_groups_of_two_or_more(&mut components))
        .filter(|&(_, near)| near)
        .map(|(unit, _)| unit)
        .collect();
    Ok(Linked {
        components: Components::Merged(components),
        near,
        spilled_bytes,
    })
}

/// The components of the units from the search's `links` and the accepted pairs between units
/// (URL duplicates), found on disk within `memory` ([`FoundLinks::components`]), resorted by
/// component for the walk; `near` lists the units the search linked (a unit whose only links
/// are accepted pairs needs no shingle set: an accepted pair is never verified).
fn linked_components(
    links: FoundLinks,
    exact: &ExactGroups,
    accepted: &UrlPairs,
    dir: &Path,
    memory: u64,
) -> Result<Linked, DedupError> {
    // Without accepted pairs, every unit labelled was linked by the search.
    let (mut labels, near, searched_spilled) = match accepted.is_empty() {
        true => (links.components()?, None, 0),
        false => {
            let (joined, near, spilled) = with_accepted(links, exact, accepted, dir, memory)?;
            (joined.components()?, Some(near), spilled)
        }
    };
    let name_near = near.is_none();
    let mut near = near.unwrap_or_default();
    let spill = SpillDir::new(dir);
    let by_component = Runs::new(spill.clone(), memory / 8);
    let mut batch = Vec::new();
    for label in labels.by_ref() {
        let (index, component) = label?;
        if name_near {
            near.push(exact.unit_at(index));
        }
        batch.push((u64::from(component), u64::from(index)));
        if batch.len() >= by_component.batch() {
            by_component.add(&mut batch)?;
        }
    }
    by_component.add(&mut batch)?;
    tracing::debug!(rounds = labels.rounds(), "components found on disk");
    Ok(Linked {
        spilled_bytes: searched_spilled + labels.spilled_bytes() + spill.written(),
        components: Components::Sorted(by_component, spill),
        near,
    })
}

/// The search's `links` joined with the accepted pairs between units: the search's components
/// found first, naming the units it linked (ascending), then each of those units linked to its
/// component's first beside the accepted pairs, in new links within `memory`; and the bytes
/// the first pass wrote. A second pass over as many links as the units the search linked and
/// the accepted pairs: one pass over both would not tell which units need a shingle set.
fn with_accepted(
    links: FoundLinks,
    exact: &ExactGroups,
    accepted: &UrlPairs,
    dir: &Path,
    memory: u64,
) -> Result<(FoundLinks, Vec<u32>, u64), DedupError> {
    let joined = FoundLinks::within(memory, dir);
    let mut batch = Vec::with_capacity(joined.batch());
    let link = |pair: (u32, u32), batch: &mut Vec<(u32, u32)>| {
        batch.push(pair);
        match batch.len() >= joined.batch() {
            true => joined.link(batch),
            false => Ok(()),
        }
    };
    let mut near = Vec::new();
    let mut searched = links.components()?;
    for label in searched.by_ref() {
        let (index, first) = label?;
        near.push(exact.unit_at(index));
        link((index, first), &mut batch)?;
    }
    for pair in unit_links(exact, accepted) {
        link(pair, &mut batch)?;
    }
    joined.link(&mut batch)?;
    Ok((joined, near, searched.spilled_bytes()))
}

/// Bytes held besides the shingle sets: the documents, the URL pairs (with the walk's links
/// between their units, 16 bytes a pair: [`AcceptedByUnit`]) and the walk's state (an
/// estimate; [`crate::Budget`] takes what the run holds, measured, when that is larger). The
/// indexes of kept units (one a component walked, one a thread at a time) are not counted here:
/// the walk gives them a share of its own ([`Run::decide`]).
fn held_bytes(documents: &Documents, exact: &ExactGroups, accepted: &UrlPairs) -> u64 {
    let walk = documents.len() as u64 + u64::from(exact.unit_count()) * 8;
    let url = accepted.held_bytes() + accepted.len() as u64 * 16;
    documents.held_bytes() + url + walk
}

/// The accepted pairs that link two units beyond the search (URL duplicates: an exact pair
/// links two members of one unit), as the units' indexes.
fn unit_links<'a>(
    exact: &'a ExactGroups,
    accepted: &'a UrlPairs,
) -> impl Iterator<Item = (u32, u32)> + 'a {
    let at = |doc: u32| exact.index_of(exact.first_of(doc));
    accepted.iter().map(move |p| (at(p.a), at(p.b)))
}

/// One way a unit could join a kept unit of its component.
struct Choice {
    /// The kept unit, by its place in the component's keep order.
    other: u32,
    /// Where it comes among the unit's choices: nearest first (distance, kind, keep order).
    key: ChoiceKey,
    /// The accepted pair (exact or URL) that links them, or `None`: a candidate to verify.
    accepted: Option<u32>,
    /// What accepts a candidate when the policy does not verify (the SimHash distance, or the
    /// MinHash estimate).
    evidence: Evidence,
}

/// The order of a unit's choices: SimHash distance, kind, the kept unit's place in the
/// component's keep order (the order of the keep ranks of the units' best members: see
/// [`WalkOrder`]).
type ChoiceKey = (u32, Kind, u32);

impl Choice {
    /// A candidate to verify.
    fn near(near: Near) -> Self {
        Choice {
            other: near.place,
            key: (near.distance, Kind::Near, near.place),
            accepted: None,
            evidence: near.evidence,
        }
    }

    /// The accepted pair `accepted.get(i)`, to the kept unit at `other`.
    fn accepted(other: u32, accepted: &UrlPairs, i: u32) -> Self {
        let pair = accepted.get(i);
        Choice {
            other,
            key: (pair.distance, pair.kind, other),
            accepted: Some(i),
            evidence: pair.evidence,
        }
    }
}

/// The choice a unit joins, and the pair that decided it.
struct Found {
    key: ChoiceKey,
    /// The unit joined (a unit, not a place in the component).
    other: u32,
    pair: FoundPair,
}

/// What a unit's search among some kept units found.
#[derive(Default)]
struct Searched {
    found: Option<Found>,
    /// Choices looked at, and how many of them were verified on shingle sets.
    candidates: usize,
    verified: usize,
}

impl Searched {
    /// The key of the choice found, if one was: a later search looks only before it.
    fn key(&self) -> Option<ChoiceKey> {
        self.found.as_ref().map(|found| found.key)
    }
}

/// The inputs of one decision.
struct Run<'a> {
    exact: &'a ExactGroups,
    accepted: &'a UrlPairs,
    options: &'a DedupOptions,
}

/// What a walk decided, and what listing every accepted pair after it reads.
struct Walked {
    decided: Decided,
    /// The shingle sets, kept only when every accepted pair is listed next.
    verifier: Option<Arc<Verifier>>,
    /// The units the search linked, ascending, when every accepted pair is listed next (else
    /// emptied).
    near: Vec<u32>,
    /// The components walked, when every accepted pair is listed next.
    walk_order: Option<WalkOrder>,
}

impl Walked {
    /// The components walked (none unless every accepted pair is listed next), each in keep
    /// order.
    fn components(&self) -> Vec<&[u32]> {
        self.walk_order
            .as_ref()
            .map_or_else(Vec::new, |walk| walk.components().collect())
    }
}

/// Where the walk's verification gets its shingle sets.
enum Sets<'a> {
    /// From the caller's source, for the units with a neighbour, once the search found them.
    Fetch(&'a mut dyn FeatureSource),
    /// Stored already (the overlap search read every unit's).
    Stored(Arc<Verifier>),
}

impl Run<'_> {
    /// Ends the search's phase, reads the rows of the units with a neighbour (the first and kept
    /// members of exact groups and the documents of accepted pairs are gathered already) and walks their
    /// components, searched by the `nearness` made over the documents; then, when the options
    /// ask, `list` lists every accepted pair ([`Run::with_every_pair`]).
    fn walk<'d, N: Nearness>(
        &self,
        documents: &'d mut Documents,
        linked: Linked,
        sets: Sets<'_>,
        mut sinks: Sinks<'_>,
        nearness: impl FnOnce(&'d Documents) -> N,
        list: impl FnOnce(&'d Documents, &Walked, u64, ListingSinks<'_>) -> Result<Listing, DedupError>,
    ) -> Result<Decided, DedupError> {
        sinks.phases.end("candidate search");
        documents.gather(&linked.near)?;
        let documents = &*documents;
        let walked = self.decide(documents, linked, sets, &mut sinks, &nearness(documents))?;
        self.with_every_pair(
            documents,
            walked,
            &mut sinks,
            |walked, held, listing_sinks| list(documents, walked, held, listing_sinks),
        )
    }

    /// `walked`'s decision, with every accepted pair of its units with a neighbour listed after
    /// it by `list` (given them, the bytes held, and where the pairs go) when the options ask:
    /// the decision is the same, its candidates become every pair listed, each verified once
    /// more.
    fn with_every_pair(
        &self,
        documents: &Documents,
        walked: Walked,
        sinks: &mut Sinks<'_>,
        list: impl FnOnce(&Walked, u64, ListingSinks<'_>) -> Result<Listing, DedupError>,
    ) -> Result<Decided, DedupError> {
        if !self.options.list_pairs {
            return Ok(walked.decided);
        }
        sinks.phases.end("verification and clusters");
        let listing_sinks = ListingSinks {
            verifier: walked.verifier.as_deref(),
            pairs: sinks.pairs,
        };
        let listing = list(
            &walked,
            held_bytes(documents, self.exact, self.accepted),
            listing_sinks,
        )?;
        let mut decided = walked.decided;
        decided.candidates = listing.candidates;
        decided.verified += listing.verified;
        decided.spilled_bytes += listing.spilled_bytes;
        Ok(decided)
    }

    /// Walks the components `linked` found, each unit searched for among its component's kept
    /// units by `nearness`; the removals and the near pairs that decided them go to `sinks`.
    fn decide<N: Nearness>(
        &self,
        documents: &Documents,
        linked: Linked,
        sets: Sets<'_>,
        sinks: &mut Sinks<'_>,
        nearness: &N,
    ) -> Result<Walked, DedupError> {
        let policy = &self.options.policy;
        let budget = &self.options.budget;
        let Linked {
            components,
            mut near,
            spilled_bytes: search_spilled,
        } = linked;
        let mut search_spilled = search_spilled;
        let units = Units::new(documents, self.exact, self.options.keep);
        let walk = match components {
            Components::Merged(components) => {
                let component = self.components_with_links(components);
                WalkOrder::new(self.exact, &component, &units)
            }
            Components::Sorted(by_component, spill) => {
                let before = spill.written();
                let walk = WalkOrder::from_sorted(self.exact, by_component.into_sorted()?, &units)?;
                search_spilled += spill.written() - before;
                walk
            }
        };
        // What the indexes of the components walked at once would hold whole: one a thread, of
        // the largest.
        let threads = rayon::current_num_threads().max(1) as u64;
        let largest = walk
            .components()
            .map(|component| index_bytes(component, nearness))
            .max()
            .unwrap_or(0);
        let indexes = largest.saturating_mul(threads);
        let held = held_bytes(documents, self.exact, self.accepted);
        let (verifier, indexes) = match sets {
            Sets::Stored(verifier) => {
                let left = budget.left(held + verifier.share());
                (Some(verifier), indexes.min(left))
            }
            Sets::Fetch(source) => {
                // The indexes take what they need of an eighth of what is left, the sets the
                // rest.
                let left = budget.left(held);
                let indexes = indexes.min(left / 8);
                let verifier = if policy.verifies() {
                    let memory = left - indexes;
                    tracing::info!(
                        units = self.exact.unit_count(),
                        with_sets = near.len(),
                        set_bytes = memory,
                        index_bytes = indexes,
                        "units with a neighbour found"
                    );
                    let fetched = Verifier::fetch(source, &near, memory, &budget.spill_dir())?;
                    Some(Arc::new(fetched))
                } else {
                    None
                };
                sinks.phases.end("shingle sets");
                (verifier, indexes)
            }
        };
        if !self.options.list_pairs {
            near = Vec::new();
        }
        let share = indexes / threads;
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
        let links = AcceptedByUnit::new(self.exact, self.accepted);
        // Components are independent: they are decided in parallel, each adding the units it
        // joined to one list (in any order: it is sorted).
        let joined = ListBuilder::within(budget);
        let (candidates, verified) = walk
            .chunks(WALK_CHUNK)
            .into_par_iter()
            .flat_map_iter(|chunk| chunk)
            .map(|component| {
                let mut outcome = self.walk_component(
                    documents,
                    component,
                    &links,
                    verifier.as_deref(),
                    nearness,
                    share,
                )?;
                if !outcome.joined.is_empty() {
                    joined.add(&mut outcome.joined)?;
                }
                Ok::<_, DedupError>((outcome.candidates, outcome.verified))
            })
            .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))?;
        let sets_spilled = verifier.as_deref().map_or(0, Verifier::spilled_bytes);
        // The sets leave memory before the lists are merged, unless every pair is listed next.
        let verifier = verifier.filter(|_| self.options.list_pairs);
        let joined = joined.finish()?;
        // A pair listed already (by URL) stays listed once.
        let listed = |pair: &FoundPair| self.accepted.contains(pair.a, pair.b);
        sinks
            .pairs
            .extend(joined.iter().filter_map(|join| match join {
                Ok(join) => join.near_pair(documents).filter(|p| !listed(p)).map(Ok),
                Err(e) => Some(Err(e)),
            }))?;
        let heads = walk.order.iter().chain(&walk.alone_groups).copied();
        let clusters = gather(documents, &units, heads, &joined, sinks.removals)?;
        Ok(Walked {
            decided: Decided {
                clusters,
                candidates,
                verified,
                spilled_bytes: search_spilled + sets_spilled + joined.spilled_bytes(),
            },
            verifier,
            near,
            walk_order: self.options.list_pairs.then_some(walk),
        })
    }

    /// Decides the units of one component (`component`: in keep order), each against the kept
    /// units before it, its index holding at most `share` bytes ([`Nearness::unit_bytes`]).
    ///
    /// Units are taken in batches: each unit of a batch is searched for among the units kept
    /// before the batch, in parallel (the index and the kept marks are only read), then, in keep
    /// order, among the units the batch kept before it, closer in the order of choices than
    /// what the first search found. The first passing choice of the union is the one a walk
    /// unit by unit finds: the same decisions, with the searches and verifications of a
    /// component (one component holds most units of a crawl of templates) on every thread.
    ///
    /// A component whose index does not fit `share` is walked in parts ([`parts`]), each with
    /// an index of its own units; before a part is walked, its units are searched for among the
    /// units the earlier parts kept, in chunks that fit the share
    /// ([`Run::search_kept_before`]), and what a unit finds there bounds its search in its part
    /// (only a nearer choice can come first). The same decisions again: only more pairs
    /// verified (a chunk's choices are verified before a nearer one in a later chunk is known).
    fn walk_component<N: Nearness>(
        &self,
        documents: &Documents,
        component: &[u32],
        links: &AcceptedByUnit<'_>,
        verifier: Option<&Verifier>,
        nearness: &N,
        share: u64,
    ) -> Result<Outcome, DedupError> {
        let batch = batch_len(component.len());
        let parts = parts(component, nearness, share, batch);
        if parts.len() > 1 {
            tracing::info!(
                units = component.len(),
                parts = parts.len(),
                share_bytes = share,
                "a component walked in parts: its index does not fit its share of the budget"
            );
        }
        let index = |part: &Range<u32>| -> Result<_, DedupError> {
            let members = &component[part.start as usize..part.end as usize];
            Ok(Shifted::new(nearness.index(members)?, part.start))
        };
        let mut walk = Walk::new(component, index(&parts[0])?, links, self.accepted);
        if parts.len() > 1 {
            walk.kept_places = Some(Vec::new());
        }
        for (at, part) in parts.iter().enumerate() {
            if at > 0 {
                walk.index = index(part)?;
            }
            let mut prior =
                self.search_kept_before(documents, &walk, part.clone(), nearness, verifier, share)?;
            for start in part.clone().step_by(batch) {
                let batch = start..(start + batch as u32).min(part.end);
                let search = |place: u32| {
                    let until = prior
                        .get((place - part.start) as usize)
                        .and_then(Searched::key);
                    let choices = walk.choices_before(place)?;
                    self.first_passing(documents, &walk, place, choices, until, verifier)
                };
                let before: Vec<Searched> = if batch.len() >= PARALLEL_BATCH {
                    batch
                        .clone()
                        .into_par_iter()
                        .map(search)
                        .collect::<Result<_, _>>()?
                } else {
                    batch.clone().map(search).collect::<Result<_, _>>()?
                };
                for (place, before) in batch.zip(before) {
                    let unit = component[place as usize];
                    let prior = prior
                        .get_mut((place - part.start) as usize)
                        .map(std::mem::take)
                        .unwrap_or_default();
                    let found_before = before.found.or(prior.found);
                    let choices = walk.choices_in_batch(place)?;
                    let until = found_before.as_ref().map(|f| f.key);
                    let within =
                        self.first_passing(documents, &walk, place, choices, until, verifier)?;
                    walk.outcome.candidates +=
                        prior.candidates + before.candidates + within.candidates;
                    walk.outcome.verified += prior.verified + before.verified + within.verified;
                    let found = within.found.or(found_before);
                    if let (Some(_), Some(verifier)) = (&found, verifier) {
                        // A unit that joins another is never a candidate again: its set leaves
                        // the cache, which so holds the kept units' sets that later units are
                        // verified on.
                        verifier.forget(unit);
                    }
                    walk.settle(place, found);
                }
                walk.end_batch()?;
            }
        }
        Ok(walk.outcome)
    }

    /// For each unit of `part` (places of `walk`'s component after its earlier parts, walked
    /// already), the first passing of its choices among the units those parts kept: they are
    /// taken in chunks whose index, with the part's units, fits `share`
    /// ([`Nearness::unit_bytes`]), each chunk indexed once and searched by every unit of the
    /// part in parallel, a unit's search in a chunk bounded by what it found in the chunks
    /// before. Empty (nothing found for any unit) when no part before kept a unit.
    fn search_kept_before<N: Nearness>(
        &self,
        documents: &Documents,
        walk: &Walk<'_, Shifted<N::Index>>,
        part: Range<u32>,
        nearness: &N,
        verifier: Option<&Verifier>,
        share: u64,
    ) -> Result<Vec<Searched>, DedupError> {
        let kept = walk.kept_places.as_deref().unwrap_or_default();
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        let mut found: Vec<Searched> = part.clone().map(|_| Searched::default()).collect();
        let len = walk.component.len();
        let part_units = part.clone().map(|place| walk.unit(place));
        let part_bytes: u64 = part_units
            .clone()
            .map(|unit| nearness.unit_bytes(unit, len))
            .sum();
        let mut rest = kept;
        while !rest.is_empty() {
            let room = share.saturating_sub(part_bytes);
            let chunk = within(rest, room, |place| {
                nearness.unit_bytes(walk.unit(place), len)
            });
            rest = &rest[chunk.len()..];
            let members: Vec<u32> = chunk
                .iter()
                .map(|&place| walk.unit(place))
                .chain(part_units.clone())
                .collect();
            let mut index = nearness.index(&members)?;
            for local in 0..chunk.len() as u32 {
                index.insert(local)?;
            }
            let first = chunk.len() as u32;
            found
                .par_iter_mut()
                .zip(part.clone().into_par_iter())
                .try_for_each(|(searched, place)| {
                    let near = index.near(first + place - part.start)?;
                    let choices = near.into_iter().map(|mut near| {
                        near.place = chunk[near.place as usize];
                        Choice::near(near)
                    });
                    let until = searched.key();
                    let more = self.first_passing(
                        documents,
                        walk,
                        place,
                        sorted(choices.collect()),
                        until,
                        verifier,
                    )?;
                    searched.candidates += more.candidates;
                    searched.verified += more.verified;
                    if more.found.is_some() {
                        searched.found = more.found;
                    }
                    Ok::<_, DedupError>(())
                })?;
        }
        Ok(found)
    }

    /// The first of `choices` (sorted by key) of the unit at `place` in `walk`'s component
    /// whose pair the policy accepts, among those before `until` (all when `None`).
    ///
    /// Choices are taken [`SCREEN_WINDOW`] at a time: the candidates of a window are screened
    /// on their sets' summaries together ([`Verifier::screen`]), then the window is gone through
    /// in order, as one by one (the same choice found, the same verifications counted), reading
    /// sets only for the pairs the screen let through.
    fn first_passing<I: KeptIndex>(
        &self,
        documents: &Documents,
        walk: &Walk<'_, I>,
        place: u32,
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
        let before = choices
            .iter()
            .take_while(|choice| until.is_none_or(|until| choice.key < until))
            .count();
        let unit = walk.unit(place);
        let (mut others, mut passes) = (Vec::new(), Vec::new());
        for window in choices[..before].chunks(SCREEN_WINDOW) {
            if let Some(verifier) = verifier {
                others.clear();
                others.extend(window.iter().map(|choice| walk.unit(choice.other)));
                verifier.screen(policy, unit, &others, &mut passes);
            }
            for (at, choice) in window.iter().enumerate() {
                let other = walk.unit(choice.other);
                let (a, b) = (unit.min(other), unit.max(other));
                let pair = match (choice.accepted, verifier) {
                    (Some(i), _) => Some(self.accepted.get(i)),
                    (None, Some(verifier)) => {
                        searched.verified += 1;
                        if passes[at] {
                            verifier.verify_sets(documents, policy, a, b)?
                        } else {
                            None
                        }
                    }
                    (None, None) => Some(pair(documents, a, b, Kind::Near, choice.evidence)),
                };
                if let Some(pair) = pair {
                    searched.found = Some(Found {
                        key: choice.key,
                        other,
                        pair,
                    });
                    return Ok(searched);
                }
            }
        }
        Ok(searched)
    }

    /// Each unit's component (by its index among the units), named by its first
    /// unit: the near components, merged further by the accepted pairs between units (URL
    /// duplicates), since a unit may join a kept unit by those too.
    fn components_with_links(&self, mut components: UnionFind) -> Vec<u32> {
        let exact = self.exact;
        for (a, b) in unit_links(exact, self.accepted) {
            components.union(a, b);
        }
        // Each root's first unit, then each unit's: a second find is a step or two, cheaper
        // than holding every root.
        let n = exact.unit_count();
        let mut first = vec![u32::MAX; n as usize];
        for i in 0..n {
            let root = components.find(i) as usize;
            first[root] = first[root].min(i);
        }
        (0..n).map(|i| first[components.find(i) as usize]).collect()
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
    /// `component`: each unit's component (by its index among the units), named by its first
    /// unit.
    fn new(exact: &ExactGroups, component: &[u32], units: &Units<'_>) -> Self {
        let mut size = vec![0u32; component.len()];
        for &c in component {
            size[c as usize] += 1;
        }
        let shared = |at: usize| size[component[at] as usize] > 1;
        let mut walked: Vec<u32> = (0..component.len() as u32)
            .filter(|&at| shared(at as usize))
            .collect();
        walked.sort_by_cached_key(|&at| {
            let unit = exact.unit_at(at);
            (component[at as usize], units.rank(units.best(unit)))
        });
        let order = walked.into_iter().map(|at| exact.unit_at(at)).collect();
        let alone_groups = exact
            .firsts()
            .filter(|&first| !shared(exact.index_of(first) as usize))
            .collect();
        // Component names ascend with their first unit, as the sort above takes them.
        let spans = size.into_iter().filter(|&len| len > 1).collect();
        WalkOrder {
            order,
            spans,
            alone_groups,
        }
    }

    /// The walk order from `by_component`: `(component, unit index)` of each unit in a
    /// component of two or more, ascending, a component named by its first unit's index. One
    /// component's units are held at a time while put in keep order, and a bit a unit marks
    /// those walked.
    fn from_sorted(
        exact: &ExactGroups,
        by_component: Sorted<(u64, u64)>,
        units: &Units<'_>,
    ) -> Result<Self, DedupError> {
        let mut order = Vec::new();
        let mut spans = Vec::new();
        let mut component = Vec::new();
        let mut walked = vec![0u64; (exact.unit_count() as usize).div_ceil(64)];
        let mut current = None;
        let mut end_component = |component: &mut Vec<u32>| {
            if !component.is_empty() {
                component.sort_by_cached_key(|&unit| units.rank(units.best(unit)));
                spans.push(component.len() as u32);
                order.append(component);
            }
        };
        for record in by_component {
            let (name, index) = record?;
            if current != Some(name) {
                end_component(&mut component);
                current = Some(name);
            }
            walked[index as usize / 64] |= 1 << (index % 64);
            component.push(exact.unit_at(index as u32));
        }
        end_component(&mut component);
        order.shrink_to_fit();
        let is_walked = |first: u32| {
            let index = exact.index_of(first) as usize;
            walked[index / 64] & (1 << (index % 64)) != 0
        };
        let alone_groups = exact.firsts().filter(|&first| !is_walked(first)).collect();
        Ok(WalkOrder {
            order,
            spans,
            alone_groups,
        })
    }

    /// The units walked, a slice a component.
    fn components(&self) -> ComponentSlices<'_> {
        ComponentSlices {
            order: &self.order,
            spans: &self.spans,
        }
    }

    /// The components walked, in chunks of whole components of at least `units` units each
    /// (the last possibly fewer): what the walk hands its threads, a few slices where one a
    /// component would take 16 bytes each (a million components of three units: 16 MB).
    fn chunks(&self, units: usize) -> Vec<ComponentSlices<'_>> {
        let mut chunks = Vec::new();
        let (mut order, mut spans) = (self.order.as_slice(), self.spans.as_slice());
        while !spans.is_empty() {
            let (mut len, mut count) = (0, 0);
            while count < spans.len() && len < units.max(1) {
                len += spans[count] as usize;
                count += 1;
            }
            let chunk;
            (chunk, order) = order.split_at(len);
            chunks.push(ComponentSlices {
                order: chunk,
                spans: &spans[..count],
            });
            spans = &spans[count..];
        }
        chunks
    }
}

/// Components of a walk order, a slice of units each.
#[derive(Clone, Copy)]
struct ComponentSlices<'a> {
    /// Their units, component after component.
    order: &'a [u32],
    /// The length of each component in `order`, in turn.
    spans: &'a [u32],
}

impl<'a> Iterator for ComponentSlices<'a> {
    type Item = &'a [u32];

    fn next(&mut self) -> Option<&'a [u32]> {
        let (&len, spans) = self.spans.split_first()?;
        let component;
        (component, self.order) = self.order.split_at(len as usize);
        self.spans = spans;
        Some(component)
    }
}

/// Units of whole components a thread of the walk takes at a time (see [`WalkOrder::chunks`]).
const WALK_CHUNK: usize = 4096;

/// The most units of a component decided together (see [`Run::walk_component`]): enough to
/// keep every thread busy, few enough that the units a batch keeps, searched by a scan, stay
/// few. A component of fewer than four times as many takes batches of a quarter of its units
/// (at least 8), so that small components too are decided in several batches.
const WALK_BATCH: usize = 256;

/// Batches smaller than this are searched on one thread (the components themselves are walked
/// in parallel).
const PARALLEL_BATCH: usize = 16;

/// Choices screened on their sets' summaries together ([`Run::first_passing`]): enough for
/// their memory reads to overlap, few enough that a unit joining its first choice screens
/// little for nothing.
const SCREEN_WINDOW: usize = 16;

/// The units of a component of `len` decided together.
fn batch_len(len: usize) -> usize {
    (len / 4).clamp(8, WALK_BATCH)
}

/// The bytes `nearness`'s index of `component` (its units in keep order) holds at most
/// ([`Nearness::unit_bytes`]).
fn index_bytes<N: Nearness>(component: &[u32], nearness: &N) -> u64 {
    let len = component.len();
    component
        .iter()
        .map(|&unit| nearness.unit_bytes(unit, len))
        .sum()
}

/// The parts a component (its units in keep order) is walked in, as ranges of places: one when
/// its index fits `share` bytes ([`index_bytes`]); else parts of consecutive places that fit
/// half of it each, their index and each unit's search state (the search of the units kept
/// before a part holds the part's index and a chunk of those), in whole batches of `batch`
/// units: as many as fit, at least one.
fn parts<N: Nearness>(
    component: &[u32],
    nearness: &N,
    share: u64,
    batch: usize,
) -> Vec<Range<u32>> {
    let len = component.len();
    if index_bytes(component, nearness) <= share {
        return std::iter::once(0..len as u32).collect();
    }
    let bytes = |unit: u32| nearness.unit_bytes(unit, len) + std::mem::size_of::<Searched>() as u64;
    let mut parts = Vec::new();
    let mut start = 0;
    while start < len {
        let rest = &component[start..];
        let fit = within(rest, share / 2, bytes).len();
        let take = match fit == rest.len() {
            true => fit,
            false => (fit / batch).max(1) * batch,
        };
        let end = (start + take).min(len);
        parts.push(start as u32..end as u32);
        start = end;
    }
    parts
}

/// The longest start of `items` (units, or places) whose `bytes` add up to at most `room`, but
/// at least one.
fn within(items: &[u32], room: u64, bytes: impl Fn(u32) -> u64) -> &[u32] {
    let mut total = 0;
    let fit = items
        .iter()
        .take_while(|&&item| {
            total += bytes(item);
            total <= room
        })
        .count();
    &items[..fit.max(1).min(items.len())]
}

/// The accepted pairs between two units (exact pairs are within one), by unit: `(unit, index in
/// the accepted pairs)` of each pair's documents' units, both ways, sorted: 16 bytes a pair (the
/// other unit is read from the pair when asked), where a map of a vector a document took more
/// (3 million records sharing URLs peaked 202 MB lower with it: BENCHMARKS.md, issue 17 step
/// 18). Keyed by unit, a unit's links are found without its exact group's members.
struct AcceptedByUnit<'a> {
    exact: &'a ExactGroups,
    accepted: &'a UrlPairs,
    by_unit: Vec<(u32, u32)>,
}

impl<'a> AcceptedByUnit<'a> {
    fn new(exact: &'a ExactGroups, accepted: &'a UrlPairs) -> Self {
        let mut by_unit: Vec<(u32, u32)> = accepted
            .iter()
            .zip(0u32..)
            .flat_map(|(p, i)| [(exact.first_of(p.a), i), (exact.first_of(p.b), i)])
            .collect();
        by_unit.sort_unstable();
        AcceptedByUnit {
            exact,
            accepted,
            by_unit,
        }
    }

    fn is_empty(&self) -> bool {
        self.by_unit.is_empty()
    }

    /// `(other unit, index in the accepted pairs)` of each accepted pair of `unit`'s documents.
    fn of(&self, unit: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let start = self.by_unit.partition_point(|&(u, _)| u < unit);
        self.by_unit[start..]
            .iter()
            .take_while(move |&&(u, _)| u == unit)
            .map(move |&(_, i)| {
                let pair = self.accepted.get(i);
                let (a, b) = (self.exact.first_of(pair.a), self.exact.first_of(pair.b));
                (if a == unit { b } else { a }, i)
            })
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
///
/// Units are named by their place in the component's keep order: a unit's SimHash (or
/// signature) is read once into the component's index, and the order of two kept units is that
/// of their places, where the keep rank of a unit's best member took a search among its group's
/// members and a read of their rows at every choice (7% of a run on 3 million news leads with
/// their rows spilled).
struct Walk<'a, I> {
    /// The component's units in keep order.
    component: &'a [u32],
    /// The places kept before the current batch (a unit can only find kept units of its own
    /// component).
    index: I,
    /// When accepted pairs link units: each unit's place, and the places kept so far (else
    /// both empty: never read).
    place_of: HashMap<u32, u32>,
    kept: HashSet<u32>,
    /// The places the current batch kept so far.
    batch_kept: Vec<u32>,
    /// When the component is walked in parts: the places kept before the current batch,
    /// ascending (4 bytes a kept unit), which the later parts search in chunks.
    kept_places: Option<Vec<u32>>,
    links: &'a AcceptedByUnit<'a>,
    accepted: &'a UrlPairs,
    outcome: Outcome,
}

impl<'a, I: KeptIndex> Walk<'a, I> {
    /// The walk of `component` (its units in keep order) with `index`, empty, sized for it.
    fn new(
        component: &'a [u32],
        index: I,
        links: &'a AcceptedByUnit<'a>,
        accepted: &'a UrlPairs,
    ) -> Self {
        let place_of = if links.is_empty() {
            HashMap::new()
        } else {
            (0..component.len() as u32)
                .map(|place| (component[place as usize], place))
                .collect()
        };
        Walk {
            component,
            index,
            place_of,
            kept: HashSet::new(),
            batch_kept: Vec::new(),
            kept_places: None,
            links,
            accepted,
            outcome: Outcome::default(),
        }
    }

    /// The unit at `place`.
    fn unit(&self, place: u32) -> u32 {
        self.component[place as usize]
    }

    /// The units kept before the current batch that the unit at `place` could join, in the
    /// order of choices.
    fn choices_before(&self, place: u32) -> Result<Vec<Choice>, DedupError> {
        let near = self.index.near(place)?.into_iter().map(Choice::near);
        let choices = near.chain(self.linked(place, |other| self.kept.contains(&other)));
        Ok(sorted(choices.collect()))
    }

    /// The units the current batch kept so far that the unit at `place` could join, in the
    /// order of choices.
    fn choices_in_batch(&self, place: u32) -> Result<Vec<Choice>, DedupError> {
        let near = self
            .index
            .near_among(place, &self.batch_kept)?
            .into_iter()
            .map(Choice::near);
        let in_batch = |other: u32| self.batch_kept.contains(&other);
        Ok(sorted(near.chain(self.linked(place, in_batch)).collect()))
    }

    /// The kept units (as `kept` says of their places) an accepted pair links to the unit at
    /// `place`.
    fn linked(&self, place: u32, kept: impl Fn(u32) -> bool) -> Vec<Choice> {
        let mut choices = Vec::new();
        for (unit, i) in self.links.of(self.unit(place)) {
            // The components were merged by the accepted pairs: the other unit is in this one.
            let Some(&other) = self.place_of.get(&unit) else {
                continue;
            };
            if other != place && kept(other) {
                choices.push(Choice::accepted(other, self.accepted, i));
            }
        }
        choices
    }

    /// Records the decision on the unit at `place`: joined to a kept unit by a pair, or kept
    /// (indexed by its SimHash when the batch ends).
    fn settle(&mut self, place: u32, found: Option<Found>) {
        match found {
            Some(found) => {
                let unit = self.unit(place);
                self.index.joined(place);
                self.outcome
                    .joined
                    .push(Joined::new(unit, found.other, &found.pair));
            }
            None => {
                if !self.links.is_empty() {
                    // Read only to follow accepted pairs: without any, not held.
                    self.kept.insert(place);
                }
                self.batch_kept.push(place);
            }
        }
    }

    /// Ends a batch: the units it kept go into the index.
    fn end_batch(&mut self) -> Result<(), DedupError> {
        if let Some(kept) = &mut self.kept_places {
            kept.extend_from_slice(&self.batch_kept);
        }
        for place in self.batch_kept.drain(..) {
            self.index.insert(place)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A nearness whose index holds `bytes` a unit (its index is never made here).
    struct Sized {
        bytes: u64,
    }

    impl Nearness for Sized {
        type Index = Shifted<crate::kept_index::SimhashKept<u64>>;

        fn index(&self, _component: &[u32]) -> Result<Self::Index, DedupError> {
            unreachable!("parts only measure")
        }

        fn unit_bytes(&self, _unit: u32, _len: usize) -> u64 {
            self.bytes
        }
    }

    #[test]
    fn a_component_is_walked_in_parts_only_when_its_index_does_not_fit() {
        let component: Vec<u32> = (0..1000).collect();
        let nearness = Sized { bytes: 100 };
        // Fits whole: one part.
        let whole = parts(&component, &nearness, 100_000, 256);
        assert_eq!((whole.len(), whole[0].clone()), (1, 0..1000));
        // A byte short and less: parts of whole batches that fit half the share with their
        // search state (or one batch), the rest in one part once it fits.
        let unit = 100 + std::mem::size_of::<Searched>() as u64;
        for (share, batch) in [(99_999, 256), (99_999, 64), (400 * unit, 128), (0, 256)] {
            let split = parts(&component, &nearness, share, batch);
            assert!(split.len() > 1, "{share} {batch}: {split:?}");
            assert_eq!(split[0].start, 0);
            assert_eq!(split.last().unwrap().end, 1000);
            for pair in split.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
            }
            for part in &split {
                let last = part.end == 1000;
                assert!(
                    last || part.len() % batch == 0,
                    "{share} {batch}: {split:?}"
                );
                let bytes = part.len() as u64 * unit;
                let one_batch = part.len() <= batch;
                assert!(
                    one_batch || bytes <= share / 2,
                    "{share} {batch}: {split:?}"
                );
            }
        }
        // 500 units' worth: 250 fit a half, three batches of 64 a part, then the 232 left.
        let split = parts(&component, &nearness, 500 * unit, 64);
        assert_eq!(split, [0..192, 192..384, 384..576, 576..768, 768..1000]);
    }

    #[test]
    fn within_takes_at_least_one_and_stops_at_the_room() {
        let places = [0u32, 1, 2, 3];
        assert_eq!(within(&places, 0, |_| 10), [0]);
        assert_eq!(within(&places, 25, |_| 10), [0, 1]);
        assert_eq!(within(&places, 1000, |_| 10), places);
    }
}
