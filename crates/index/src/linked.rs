//! Connected components beyond memory: from links in sorted runs, within a fixed budget.
//!
//! [`crate::ExternalPairs::links`] writes the links of the components to sorted runs instead of
//! merging them into a union-find of every position; [`FoundLinks::components`] then names each
//! linked position's component by its smallest position, as a stream sorted by position.
//!
//! # Method
//! While the links left fit a quarter of the budget (about [`IN_MEMORY_LINK_BYTES`] a link),
//! they are read into memory and merged with a [`UnionFind`] over the positions they name. Beyond,
//! the alternating algorithm of Kiveris et al., "Connected Components in MapReduce and Beyond"
//! (SoCC 2014) runs over the sorted runs, each step one sort and one pass, each position's
//! neighbours read in ascending order (so the smallest comes first and nothing a position is held):
//! * large-star: each position `u` links each larger neighbour to `m(u)`, the smallest of `u` and
//!   its neighbours;
//! * small-star: each position `u` links itself and each smaller neighbour to the smallest of
//!   those.
//!
//! Both keep the components; a large-star then a small-star is a round. A round that changes
//! nothing (every position has at most one smaller neighbour, and none with a larger neighbour
//! has a smaller one) leaves stars: each component's smallest position linked to each other
//! one. The paper proves O(log² n) rounds for `n` positions (a path, the worst case for label
//! propagation, takes O(log n)); rounds stop earlier as soon as the links left fit memory.
//!
//! Memory: two sorted runs' buffers (an eighth of the budget each), one link at a time in a pass.
//! Runs are anonymous temporary files ([`crate::runs`]): nothing is left behind.

use std::path::Path;

use crate::allpairs::Pair;
use crate::cluster::UnionFind;
use crate::runs::{PairRuns, SortedPairs, SpillDir, SpillError};

/// Bytes a link takes in the in-memory finish: the link (12), its two positions listed (8), their
/// union-find (10) and their labels (24), rounded up.
pub(crate) const IN_MEMORY_LINK_BYTES: u64 = 64;

/// Links gathered by a search ([`crate::ExternalPairs::links`]) and any added by the caller,
/// in sorted runs: the components of the positions they name, within a budget.
///
/// ```
/// use neardup_index::{Design, ExternalPairs};
/// let fps: Vec<u64> = vec![0b0000, 0b0111, 0xFF00, 0b0001, 0xFF0F];
/// let dir = std::env::temp_dir();
/// let mut search = ExternalPairs::new(1 << 12, &dir);
/// for &fp in &fps {
///     search.push(fp).unwrap();
/// }
/// let links = search.links(3, Design::Tables4x16).unwrap();
/// links.link(&mut vec![(2, 4)]).unwrap(); // an extra link, from elsewhere
/// let labels: Vec<(u32, u32)> = links.components().unwrap().map(Result::unwrap).collect();
/// assert_eq!(labels, vec![(0, 0), (1, 0), (2, 2), (3, 0), (4, 2)]);
/// ```
pub struct FoundLinks {
    runs: PairRuns,
    spill: SpillDir,
    memory: u64,
}

impl FoundLinks {
    /// No links yet, within a budget of `memory` bytes (runs of an eighth of it), spilling to
    /// `spill`.
    pub(crate) fn new(spill: SpillDir, memory: u64) -> Self {
        FoundLinks {
            runs: PairRuns::new(spill.clone(), memory / 8),
            spill,
            memory,
        }
    }

    /// No links yet, within a budget of `memory` bytes, spilling to temporary files in `dir`:
    /// the components of links a caller adds ([`FoundLinks::link`]), not a search's.
    pub fn within(memory: u64, dir: &Path) -> Self {
        Self::new(SpillDir::new(dir), memory)
    }

    /// The runs the links go to.
    pub(crate) fn runs(&self) -> &PairRuns {
        &self.runs
    }

    /// How many links a caller gathers before [`FoundLinks::link`]: the batch of the sorted runs
    /// they go to ([`crate::Runs::batch`]: an eighth of a run, at most 16,384), so that a batch
    /// held beside a run stays small next to the budget, and a run's lock is taken once a batch.
    pub fn batch(&self) -> usize {
        self.runs.batch()
    }

    /// Adds the links `(x, y)` of `batch` (emptied), in either order; a link of a position to
    /// itself is ignored.
    pub fn link(&self, batch: &mut Vec<(u32, u32)>) -> Result<(), SpillError> {
        let mut pairs: Vec<Pair> = batch
            .drain(..)
            .filter(|&(x, y)| x != y)
            .map(|(x, y)| Pair::new(x, y, 0))
            .collect();
        self.runs.add(&mut pairs)
    }

    /// Bytes written to the temporary folder so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.spill.written()
    }

    /// Each linked position with its component's smallest position, `(position, smallest)`,
    /// ascending by position (a component's smallest position comes with itself). Positions no
    /// link names are alone and not listed.
    pub fn components(self) -> Result<Labels, SpillError> {
        let FoundLinks {
            runs,
            spill,
            memory,
        } = self;
        let fits = usize::try_from(memory / 4 / IN_MEMORY_LINK_BYTES).unwrap_or(usize::MAX);
        let mut links = Distinct::new(runs.into_sorted()?);
        let mut rounds = 0;
        loop {
            let mut held = Vec::new();
            for link in links.by_ref() {
                held.push(link?);
                if held.len() > fits {
                    break;
                }
            }
            if held.len() <= fits {
                let labels = in_memory(held)?;
                return Ok(Labels {
                    labels: Distinct::new(SortedPairs::Memory(labels.into_iter())),
                    spill,
                    rounds,
                });
            }
            let all = held.into_iter().map(Ok).chain(links);
            let (large, large_changed) = star(all, Star::Large, &spill, memory)?;
            let (small, small_changed) = star(large, Star::Small, &spill, memory)?;
            rounds += 1;
            if !large_changed && !small_changed {
                return Ok(Labels {
                    labels: stars_to_labels(small, &spill, memory)?,
                    spill,
                    rounds,
                });
            }
            links = small;
        }
    }
}

/// The members of each component from `labels` (`(position, smallest)`: [`Labels`] or
/// [`UnionFind::labels`]), as `(smallest, position)` pairs ascending: a component's members
/// together and ascending, components in the order of their smallest position. Sorted in runs
/// of an eighth of `memory` bytes in `spill`, so no component is ever held whole.
///
/// ```
/// use neardup_index::{by_component, FoundLinks, SpillDir};
/// let dir = std::env::temp_dir();
/// let links = FoundLinks::within(1 << 20, &dir);
/// links.link(&mut vec![(4, 1), (3, 0), (1, 2)]).unwrap();
/// let members = by_component(links.components().unwrap(), &SpillDir::new(&dir), 1 << 20).unwrap();
/// let members: Vec<(u32, u32)> = members.map(|p| p.map(|p| (p.a, p.b)).unwrap()).collect();
/// assert_eq!(members, vec![(0, 0), (0, 3), (1, 1), (1, 2), (1, 4)]);
/// ```
pub fn by_component(
    labels: impl IntoIterator<Item = Result<(u32, u32), SpillError>>,
    spill: &SpillDir,
    memory: u64,
) -> Result<SortedPairs, SpillError> {
    let runs = PairRuns::new(spill.clone(), memory / 8);
    let mut batch = Vec::new();
    for label in labels {
        let (position, smallest) = label?;
        // `smallest <= position`: the pair keeps that order.
        batch.push(Pair::new(smallest, position, 0));
        if batch.len() >= runs.batch() {
            runs.add(&mut batch)?;
        }
    }
    runs.add(&mut batch)?;
    runs.into_sorted()
}

/// Each linked position's component, named by its smallest position: `(position, smallest)`,
/// ascending by position; an item fails if a sorted run cannot be read back.
pub struct Labels {
    labels: Distinct,
    spill: SpillDir,
    rounds: u32,
}

impl Labels {
    /// Rounds of large-star and small-star steps run on disk (0: the links fitted memory).
    pub fn rounds(&self) -> u32 {
        self.rounds
    }

    /// Bytes written to the temporary folder so far (the search's files and the runs).
    pub fn spilled_bytes(&self) -> u64 {
        self.spill.written()
    }
}

impl Iterator for Labels {
    type Item = Result<(u32, u32), SpillError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.labels.next().map(|link| link.map(|l| (l.a, l.b)))
    }
}

/// Sorted links, each once (runs may hold a link several times).
struct Distinct {
    sorted: SortedPairs,
    last: Option<(u32, u32)>,
}

impl Distinct {
    fn new(sorted: SortedPairs) -> Self {
        Distinct { sorted, last: None }
    }
}

impl Iterator for Distinct {
    type Item = Result<Pair, SpillError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let link = match self.sorted.next()? {
                Ok(link) => link,
                Err(e) => return Some(Err(e)),
            };
            if self.last != Some((link.a, link.b)) {
                self.last = Some((link.a, link.b));
                return Some(Ok(link));
            }
        }
    }
}

/// The components of `links` in memory: each position they name with its component's smallest
/// position, ascending.
fn in_memory(links: Vec<Pair>) -> Result<Vec<Pair>, SpillError> {
    let mut positions: Vec<u32> = links.iter().flat_map(|l| [l.a, l.b]).collect();
    positions.sort_unstable();
    positions.dedup();
    let mut sets = UnionFind::new(positions.len())?;
    let at = |x: u32| positions.binary_search(&x).unwrap_or_default() as u32;
    for link in links {
        sets.union(at(link.a), at(link.b));
    }
    // Positions ascend: the first of a set met is its smallest.
    let mut smallest = vec![u32::MAX; positions.len()];
    Ok((0..positions.len())
        .map(|i| {
            let root = sets.find(i as u32) as usize;
            if smallest[root] == u32::MAX {
                smallest[root] = positions[i];
            }
            label(positions[i], smallest[root])
        })
        .collect())
}

/// The record `(position, smallest)` of a label.
fn label(position: u32, smallest: u32) -> Pair {
    Pair {
        a: position,
        b: smallest,
        distance: 0,
    }
}

/// The two steps of a round.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Star {
    Large,
    Small,
}

/// One step over `links` (each `a < b`, each once): the links it gives, sorted (maybe repeated),
/// and whether they differ from `links`.
fn star(
    links: impl Iterator<Item = Result<Pair, SpillError>>,
    step: Star,
    spill: &SpillDir,
    memory: u64,
) -> Result<(Distinct, bool), SpillError> {
    // Each link from its larger end (the smaller neighbours); for large-star from both ends.
    let directed = PairRuns::new(spill.clone(), memory / 8);
    let mut batch = Vec::new();
    for link in links {
        let link = link?;
        batch.push(label(link.b, link.a));
        if step == Star::Large {
            batch.push(label(link.a, link.b));
        }
        if batch.len() >= directed.batch() {
            directed.add(&mut batch)?;
        }
    }
    directed.add(&mut batch)?;
    let out = PairRuns::new(spill.clone(), memory / 8);
    let mut changed = false;
    // The position whose neighbours are read, the smallest of it and them, and how many
    // smaller neighbours it has.
    let mut at: Option<(u32, u32, u32)> = None;
    for edge in directed.into_sorted()? {
        let edge = edge?;
        let (u, v) = (edge.a, edge.b);
        let (m, smaller) = match at {
            Some((current, m, smaller)) if current == u => (m, smaller),
            _ => (u.min(v), 0),
        };
        let smaller = smaller + u32::from(v < u);
        at = Some((u, m, smaller));
        match step {
            Star::Large if v > u => {
                changed |= m < u;
                batch.push(Pair::new(m, v, 0));
            }
            Star::Large => {}
            Star::Small if smaller == 1 => batch.push(Pair::new(m, u, 0)),
            Star::Small => {
                changed = true;
                batch.push(Pair::new(m, v, 0));
            }
        }
        if batch.len() >= out.batch() {
            out.add(&mut batch)?;
        }
    }
    out.add(&mut batch)?;
    Ok((Distinct::new(out.into_sorted()?), changed))
}

/// The labels of stars (each link `(smallest, other)` of a component): sorted by position.
fn stars_to_labels(stars: Distinct, spill: &SpillDir, memory: u64) -> Result<Distinct, SpillError> {
    let labels = PairRuns::new(spill.clone(), memory / 8);
    let mut batch = Vec::new();
    for link in stars {
        let link = link?;
        batch.push(label(link.b, link.a));
        batch.push(label(link.a, link.a));
        if batch.len() >= labels.batch() {
            labels.add(&mut batch)?;
        }
    }
    labels.add(&mut batch)?;
    Ok(Distinct::new(labels.into_sorted()?))
}
