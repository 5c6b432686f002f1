//! Where a search's findings go: every pair into sorted runs, links merged into components, or
//! links written to sorted runs.
//!
//! One search ([`search_in_memory`], or the spilled one of [`crate::ExternalPairs`]) serves
//! all three: [`crate::all_pairs`]-style listing and [`crate::near_components`]-style merging,
//! which links the positions of one fingerprint, or of two fingerprints within `k`, by one merge
//! each (linear in the positions, however many pairs a family has). Links written to runs (for
//! components beyond memory, [`crate::FoundLinks`]) are first merged into the task's own small
//! union-find ([`LocalSets`]): only a link that joins two of its sets is written, a spanning
//! forest of what the task found (fewer links than the positions it saw).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::allpairs::{for_each_member_pair, for_each_value_pair, Groups, Pair};
use crate::cluster::UnionFind;
use crate::design::Design;
use crate::fingerprint::Fingerprint;
use crate::runs::{PairRuns, SpillError};

/// The in-memory search (as [`all_pairs`](crate::all_pairs)), what it finds handed to
/// `destination`.
pub(crate) fn search_in_memory<F: Fingerprint>(
    groups: &Groups<F>,
    k: u32,
    design: Design,
    destination: &Destination<'_>,
) -> Result<(), SpillError> {
    let mut identical = Sink::new(destination);
    identical.identical(groups);
    identical.finish()?;
    let links_only = destination.links_only();
    let sinks = for_each_value_pair(
        &groups.values,
        k,
        design,
        links_only,
        || Sink::new(destination),
        |sink, u, v, d| sink.near(groups.members(u), groups.members(v), d),
    )?;
    sinks.into_iter().try_for_each(Sink::finish)
}

/// Where the search's findings go.
pub(crate) enum Destination<'a> {
    /// Every pair of positions, into sorted runs.
    Runs(&'a PairRuns),
    /// Merged into the components of the positions: a link per position suffices.
    Components(&'a Mutex<UnionFind>),
    /// Links into sorted runs, only those that join two of a task's sets (see [`LocalSets`]):
    /// the components are found from them later ([`crate::FoundLinks::components`]).
    Links(&'a PairRuns),
}

impl Destination<'_> {
    /// True when a link a position suffices (components), not every pair.
    pub(crate) fn links_only(&self) -> bool {
        !matches!(self, Destination::Runs(_))
    }

    /// Links handed over at a time.
    fn batch(&self) -> usize {
        match self {
            Destination::Runs(runs) | Destination::Links(runs) => runs.batch(),
            Destination::Components(_) => 1 << 14,
        }
    }

    /// Hands `batch` over and empties it.
    fn add(&self, batch: &mut Vec<Pair>) -> Result<(), SpillError> {
        match self {
            Destination::Runs(runs) | Destination::Links(runs) => runs.add(batch),
            Destination::Components(merged) => {
                let mut components = merged.lock().unwrap_or_else(PoisonError::into_inner);
                for pair in batch.drain(..) {
                    components.union(pair.a, pair.b);
                }
                Ok(())
            }
        }
    }
}

/// What one task finds, handed to the destination in batches; the first error is kept.
pub(crate) struct Sink<'a> {
    destination: &'a Destination<'a>,
    batch: Vec<Pair>,
    /// The task's own sets, when links are written (else empty, unused).
    local: LocalSets,
    error: Option<SpillError>,
}

impl<'a> Sink<'a> {
    pub(crate) fn new(destination: &'a Destination<'a>) -> Self {
        Sink {
            destination,
            batch: Vec::new(),
            local: LocalSets::default(),
            error: None,
        }
    }

    /// The positions of each value of `groups` are within 0 of each other: every pair of them,
    /// or (for components) each linked to the first.
    pub(crate) fn identical<F: Fingerprint>(&mut self, groups: &Groups<F>) {
        let destination = self.destination;
        match destination {
            Destination::Runs(_) => groups.for_each_identical_pair(|pair| self.push(pair)),
            Destination::Components(_) | Destination::Links(_) => {
                for u in 0..groups.values.len() as u32 {
                    let members = groups.members(u);
                    for &b in &members[1..] {
                        self.push(Pair::new(members[0], b, 0));
                    }
                }
            }
        }
    }

    /// Positions `a` and `b` (of two values `distance` apart): every pair of one of each, or
    /// (for components, where each value's positions are linked already) one.
    pub(crate) fn near(&mut self, a: &[u32], b: &[u32], distance: u32) {
        let destination = self.destination;
        match destination {
            Destination::Runs(_) => for_each_member_pair(a, b, distance, |pair| self.push(pair)),
            Destination::Components(_) | Destination::Links(_) => {
                self.push(Pair::new(a[0], b[0], distance))
            }
        }
    }

    fn push(&mut self, pair: Pair) {
        if self.error.is_some() {
            return;
        }
        if matches!(self.destination, Destination::Links(_)) && !self.local.union(pair.a, pair.b) {
            return;
        }
        self.batch.push(pair);
        if self.batch.len() >= self.destination.batch() {
            if let Err(e) = self.destination.add(&mut self.batch) {
                self.error = Some(e);
            }
        }
    }

    pub(crate) fn finish(mut self) -> Result<(), SpillError> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.destination.add(&mut self.batch),
        }
    }
}

/// Most positions a task's [`LocalSets`] hold; beyond, they start again empty (correct: a link
/// that joins two sets already joined is only written twice), so that a task's memory is bounded
/// however many records it reads (a block of a bucket searched against the rest of its file).
const LOCAL_POSITIONS: usize = 1 << 18;

/// The sets of the positions one task linked so far: a union-find keyed by position (path
/// halving, the smaller root kept), over what the task saw only.
#[derive(Default)]
struct LocalSets {
    parent: HashMap<u32, u32>,
}

impl LocalSets {
    /// The root of `x`'s set (`x` itself if the task has not seen it).
    fn find(&mut self, mut x: u32) -> u32 {
        loop {
            let Some(&parent) = self.parent.get(&x) else {
                return x;
            };
            if parent == x {
                return x;
            }
            let grand = self.parent.get(&parent).copied().unwrap_or(parent);
            self.parent.insert(x, grand);
            x = grand;
        }
    }

    /// Merges the sets of `a` and `b`; false if they were one already.
    fn union(&mut self, a: u32, b: u32) -> bool {
        if self.parent.len() >= LOCAL_POSITIONS {
            self.parent.clear();
        }
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        self.parent.insert(ra.max(rb), ra.min(rb));
        true
    }
}
