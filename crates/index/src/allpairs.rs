//! Batch all-pairs: every pair of positions whose fingerprints are within distance `k`, exactly
//! once, identical fingerprints included.
//!
//! # Method
//! 1. Radix-sort `(fingerprint, position)` and group identical fingerprints. Every pair inside a
//!    group is reported at distance 0; the search below runs on the distinct values only, so a
//!    million copies of one value cost a sort, not a quadratic search.
//! 2. For each table of the [`Design`] (in parallel with rayon): pack `(table key, value)` into a
//!    `u64`, radix-sort, and scan runs of equal keys. Within a run, compare every pair. A pair
//!    found in table `t` is reported only if it does not agree on the mask of any earlier table —
//!    that table reports it — so no global hash set is needed.
//! 3. A run much longer than expected (skewed data: one block value shared by a large share of
//!    the set) is not compared pair by pair: its members already agree on the table's key bits, so
//!    their pairs within `k` differ only in the remaining bits, and the same pigeonhole search runs
//!    recursively on those bits with `k + 1` blocks — when that at least halves the comparisons
//!    (a dense cluster of near-identical values shares most blocks; it is compared pair by pair).
//!    The "earlier table" rule carries down.
//! 4. Expand value pairs to position pairs and sort them by `(a, b)`: the output is deterministic.

use rayon::prelude::*;

use std::sync::{Mutex, PoisonError};

use crate::cluster::UnionFind;
use crate::design::{choose_blocks, split, Design, Table};
use crate::error::{checked_len, Result};
use crate::fingerprint::Fingerprint;
use crate::hamming::check_k;
use crate::radix::{par_lsd_sort, sort_by_high_bits};
use crate::runs::SpillError;
use crate::sink::{search_in_memory, Destination};

/// Runs longer than this are searched recursively instead of pair by pair.
const RECURSE_MIN: usize = 256;
/// Runs longer than this are linked ([`Search::link`]) rather than compared pair by pair when
/// only links are wanted: a run the tables do not split further (at most [`RECURSE_MIN`]) costs
/// less compared (no allocation, each pair once under the table's filter, at most 32,640
/// comparisons) than grouped (an allocation a member, every pair compared where nothing links,
/// no filter). At 32, `neardup pairs --clusters` on 10 million fingerprints took 1.6 times the
/// CPU (BENCHMARKS.md, issue 17 step 12b).
const LINK_MIN: usize = RECURSE_MIN;

/// Two positions in the input slice, `a < b`, at Hamming distance `distance`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pair {
    /// The smaller position.
    pub a: u32,
    /// The larger position.
    pub b: u32,
    /// Hamming distance between the two fingerprints.
    pub distance: u32,
}

impl Pair {
    /// The pair of positions `x` and `y` (in either order) at `distance`.
    pub fn new(x: u32, y: u32, distance: u32) -> Pair {
        Pair {
            a: x.min(y),
            b: x.max(y),
            distance,
        }
    }
}

/// Every pair of positions in `fps` within distance `k`, each once, sorted by `(a, b)`.
///
/// Exact for `k ≤ design.max_k()`; fails with [`crate::IndexError::KTooLarge`] beyond that, or if
/// the design is invalid for `F`. Choose the design with [`Design::for_expected_len`] unless you
/// have a reason not to.
///
/// ```
/// use neardup_index::{all_pairs, Design, Pair};
/// let fps: Vec<u64> = vec![0b0000, 0b0111, 0b0000, 0xFF00];
/// let pairs = all_pairs(&fps, 3, Design::Tables4x16).unwrap();
/// assert_eq!(pairs, vec![Pair::new(0, 1, 3), Pair::new(0, 2, 0), Pair::new(1, 2, 3)]);
/// ```
pub fn all_pairs<F: Fingerprint>(fps: &[F], k: u32, design: Design) -> Result<Vec<Pair>> {
    checked_len(fps.len())?;
    let groups = Groups::new(fps);
    let found = for_each_value_pair(
        &groups.values,
        k,
        design,
        false,
        Vec::new,
        |out, u, v, d| {
            out.push((u, v, d));
        },
    )?;
    let mut pairs = groups.identical_pairs();
    for (u, v, distance) in found.into_iter().flatten() {
        for_each_member_pair(groups.members(u), groups.members(v), distance, |pair| {
            pairs.push(pair)
        });
    }
    pairs.par_sort_unstable();
    Ok(pairs)
}

/// The connected components of "within `k`" over the positions of `fps` (identical values
/// included), as a [`UnionFind`]: what [`all_pairs`] would link, without listing the pairs. The
/// search is the same; each pair found is merged at once (in batches, under a lock shared by the
/// tables' tasks), so memory stays linear however many pairs there are (a family of m distinct
/// near values has about m²/2). A caller may merge more (other links) before reading it.
///
/// ```
/// use neardup_index::{near_components, Design};
/// let fps: Vec<u64> = vec![0b0000, 0b0111, 0xFF00, 0xFF00, 0x0F0F_0000, 0b11_1111];
/// let mut components = near_components(&fps, 3, Design::Tables4x16).unwrap();
/// let label: Vec<u32> = (0..6).map(|i| components.find(i)).collect();
/// assert_eq!(label[0], label[1]); // 3 bits apart
/// assert_eq!(label[1], label[5]); // a chain: 0 and 5 are 6 bits apart, both near 1
/// assert_eq!(label[2], label[3]); // identical
/// assert_ne!(label[0], label[2]);
/// assert_ne!(label[4], label[0]);
/// ```
pub fn near_components<F: Fingerprint>(fps: &[F], k: u32, design: Design) -> Result<UnionFind> {
    checked_len(fps.len())?;
    let merged = Mutex::new(UnionFind::new(fps.len())?);
    search_in_memory(
        &Groups::new(fps),
        k,
        design,
        &Destination::Components(&merged),
    )
    .map_err(|e| match e {
        SpillError::Index(e) => e,
        SpillError::Io { .. } => unreachable!("an in-memory search writes no file"),
    })?;
    Ok(merged.into_inner().unwrap_or_else(PoisonError::into_inner))
}

/// The connected components of "within `k`" over the positions of `fps`, as
/// [`near_components`] finds them, for a small set or one whose values agree on many bits (a
/// group of documents sharing a key of the permuted tables agrees on the table's key bits): the
/// set searched as one run of the search, in the calling thread, with no table design of its
/// own. Up to 256 values every pair is compared; beyond, the bits on which the values differ
/// are cut into `k + 1` blocks and searched as the search does a long run (recursively, each
/// table's runs linked or compared pair by pair), so the bits every value shares cost nothing.
/// Exact for any `fps` and `k`.
///
/// The Spark job links each group of a key this way: a group of a hundred documents costs
/// microseconds, where [`near_components`] builds its design's tables and tasks for each.
///
/// ```
/// use neardup_index::run_components;
/// let fps: Vec<u64> = vec![0b0000, 0b0111, 0xFF00, 0xFF00, 0x0F0F_0000, 0b11_1111];
/// let mut components = run_components(&fps, 3).unwrap();
/// let label: Vec<u32> = (0..6).map(|i| components.find(i)).collect();
/// assert_eq!(label[0], label[1]);
/// assert_eq!(label[1], label[5]);
/// assert_eq!(label[2], label[3]);
/// assert_ne!(label[0], label[2]);
/// assert_ne!(label[4], label[0]);
/// ```
pub fn run_components<F: Fingerprint>(fps: &[F], k: u32) -> Result<UnionFind> {
    checked_len(fps.len())?;
    let mut merged = UnionFind::new(fps.len())?;
    let Some(&first) = fps.first() else {
        return Ok(merged);
    };
    let differ = fps.iter().fold(F::ZERO, |acc, &fp| acc.or(fp.xor(first)));
    let free: Vec<u32> = (0..F::BITS)
        .rev()
        .filter(|&p| differ.and(F::bit(p)) != F::ZERO)
        .collect();
    let search = Search {
        vals: fps,
        k,
        links_only: true,
    };
    let run: Vec<(u32, F)> = fps
        .iter()
        .enumerate()
        .map(|(i, &fp)| (i as u32, fp))
        .collect();
    let filter = Filter {
        require: Vec::new(),
        exclude: Vec::new(),
    };
    let mut out = |u: u32, v: u32, _distance: u32| {
        merged.union(u, v);
    };
    if run.len() > RECURSE_MIN && free.len() > k as usize {
        search.recurse(&run, &free, &filter, &mut out);
    } else {
        search.compare(&run, |&(u, _)| u, &filter, &mut out);
    }
    Ok(merged)
}

/// Runs the search over the distinct `values` (ascending), one table of `design` a task in
/// parallel, handing every pair of value indices within `k` to `found` with the table's own
/// state (made by `state`); returns the states. Each pair is found by exactly one table; with
/// `links_only`, only enough pairs to connect what every pair connects (see [`Search`]).
pub(crate) fn for_each_value_pair<F: Fingerprint, S: Send>(
    values: &[F],
    k: u32,
    design: Design,
    links_only: bool,
    state: impl Fn() -> S + Sync,
    found: impl Fn(&mut S, u32, u32, u32) + Sync,
) -> Result<Vec<S>> {
    check_k(k, design.max_k())?;
    let tables = design.tables::<F>()?;
    checked_len(values.len())?;
    let search = Search {
        vals: values,
        k,
        links_only,
    };
    let all: Vec<u32> = (0..values.len() as u32).collect();
    let free: Vec<u32> = (0..F::BITS).rev().collect();
    let masks: Vec<F> = tables.iter().map(Table::mask).collect();
    Ok(tables
        .par_iter()
        .enumerate()
        .map(|(t, table)| {
            let mut own = state();
            let filter = Filter {
                require: Vec::new(),
                exclude: masks[..t].to_vec(),
            };
            search.table(&all, table, &free, &filter, &mut |u, v, d| {
                found(&mut own, u, v, d)
            });
            own
        })
        .collect())
}

/// Input positions grouped by identical fingerprint: distinct values ascending.
pub(crate) struct Groups<F> {
    /// Distinct fingerprints, ascending.
    pub(crate) values: Vec<F>,
    /// `positions[starts[u]..starts[u + 1]]`: the positions holding `values[u]`, ascending.
    starts: Vec<u32>,
    positions: Vec<u32>,
}

impl<F> Groups<F> {
    /// Positions holding distinct value `u`.
    pub(crate) fn members(&self, u: u32) -> &[u32] {
        &self.positions[self.starts[u as usize] as usize..self.starts[u as usize + 1] as usize]
    }
}

impl<F: Fingerprint> Groups<F> {
    /// The fingerprints of `fps`, each at its index.
    fn new(fps: &[F]) -> Self {
        Self::from_positions(
            fps.iter()
                .enumerate()
                .map(|(i, &fp)| (fp, i as u32))
                .collect(),
        )
    }

    /// Fingerprints at the positions given with them (positions ascending).
    pub(crate) fn from_positions(mut order: Vec<(F, u32)>) -> Self {
        par_lsd_sort(&mut order, F::BITS, |&(fp, _), shift| {
            fp.field(shift, 8) as usize
        });
        let mut values = Vec::new();
        let mut starts = Vec::new();
        for (i, &(fp, _)) in order.iter().enumerate() {
            if values.last() != Some(&fp) {
                values.push(fp);
                starts.push(i as u32);
            }
        }
        starts.push(order.len() as u32);
        let positions = order.into_iter().map(|(_, p)| p).collect();
        Groups {
            values,
            starts,
            positions,
        }
    }

    /// Every pair of positions holding the same value (distance 0).
    fn identical_pairs(&self) -> Vec<Pair> {
        let mut pairs = Vec::new();
        self.for_each_identical_pair(|pair| pairs.push(pair));
        pairs
    }

    /// Hands every pair of positions holding the same value (distance 0) to `found`.
    pub(crate) fn for_each_identical_pair(&self, mut found: impl FnMut(Pair)) {
        for u in 0..self.values.len() as u32 {
            let members = self.members(u);
            for (i, &a) in members.iter().enumerate() {
                for &b in &members[i + 1..] {
                    found(Pair::new(a, b, 0));
                }
            }
        }
    }
}

/// Hands every pair of one position of `a` and one of `b` (two values `distance` apart) to
/// `found`.
pub(crate) fn for_each_member_pair(
    a: &[u32],
    b: &[u32],
    distance: u32,
    mut found: impl FnMut(Pair),
) {
    for &x in a {
        for &y in b {
            found(Pair::new(x, y, distance));
        }
    }
}

/// Which tables' masks a reported pair must agree on (`require`) and must not (`exclude`).
#[derive(Clone)]
pub(crate) struct Filter<F> {
    pub(crate) require: Vec<F>,
    pub(crate) exclude: Vec<F>,
}

impl<F: Fingerprint> Filter<F> {
    /// True if a pair whose xor is `diff` belongs to the table being searched.
    #[inline]
    pub(crate) fn accepts(&self, diff: F) -> bool {
        self.require.iter().all(|&m| diff.and(m) == F::ZERO)
            && self.exclude.iter().all(|&m| diff.and(m) != F::ZERO)
    }
}

/// The recursive pigeonhole search over distinct values.
pub(crate) struct Search<'a, F> {
    pub(crate) vals: &'a [F],
    pub(crate) k: u32,
    /// Report only pairs that link what is not linked yet within a run (each member with one
    /// member of every group of the run it is within `k` of), not every pair: the components
    /// are the same, and a dense family of m values costs about m comparisons a run instead
    /// of m²/2 (the search of components, where every pair within `k` may link, whichever
    /// table finds it).
    pub(crate) links_only: bool,
}

/// The members of one search, sorted by one table's key, with their values alongside.
struct Sorted<F> {
    /// `(key << idx_bits | position in members, value)`, sorted by key.
    items: Vec<(u64, F)>,
    idx_bits: u32,
    /// Number of key bits used (the key may be cut short to leave room for the position).
    width: u32,
}

impl<F: Fingerprint> Sorted<F> {
    /// Runs of items with equal keys.
    fn runs(&self) -> impl Iterator<Item = &[(u64, F)]> {
        let shift = self.idx_bits;
        self.items
            .chunk_by(move |x, y| x.0 >> shift == y.0 >> shift)
    }

    /// Pairs compared if every run is compared pair by pair (about).
    fn cost(&self) -> usize {
        self.runs().map(|r| r.len() * r.len()).sum()
    }
}

impl<F: Fingerprint> Search<'_, F> {
    /// Reports (as value indices) every pair of `members` within `k` that agrees on `table`'s
    /// mask and passes `filter`. `free` lists the bits the members may still differ in.
    pub(crate) fn table(
        &self,
        members: &[u32],
        table: &Table<F>,
        free: &[u32],
        filter: &Filter<F>,
        out: &mut dyn FnMut(u32, u32, u32),
    ) {
        let sorted = self.sort(members, table);
        self.scan(members, table, &sorted, free, filter, out);
    }

    /// Sorts `members` by `table`'s key, values alongside, so that runs can be compared without
    /// jumping around memory.
    fn sort(&self, members: &[u32], table: &Table<F>) -> Sorted<F> {
        let idx_bits = (usize::BITS - members.len().leading_zeros()).max(1);
        let width = table.key_bits().min(64 - idx_bits);
        let mut items: Vec<(u64, F)> = members
            .iter()
            .enumerate()
            .map(|(i, &u)| {
                let fp = self.vals[u as usize];
                ((table.key(fp, width) << idx_bits) | i as u64, fp)
            })
            .collect();
        sort_by_high_bits(&mut items, idx_bits, idx_bits + width, |item| item.0);
        Sorted {
            items,
            idx_bits,
            width,
        }
    }

    /// Compares within every run of `sorted` (see [`Search::table`]), recursing into long runs.
    fn scan(
        &self,
        members: &[u32],
        table: &Table<F>,
        sorted: &Sorted<F>,
        free: &[u32],
        filter: &Filter<F>,
        out: &mut dyn FnMut(u32, u32, u32),
    ) {
        // A key cut short groups pairs that may disagree on the rest of the mask: check it.
        let mut filter = filter.clone();
        if sorted.width < table.key_bits() {
            filter.require.push(table.mask());
        }
        let index_mask = (1u64 << sorted.idx_bits) - 1;
        let fixed = &table.positions()[..sorted.width as usize];
        let rest: Vec<u32> = free
            .iter()
            .copied()
            .filter(|p| !fixed.contains(p))
            .collect();
        let member = |item: &(u64, F)| members[(item.0 & index_mask) as usize];
        for run in sorted.runs() {
            if run.len() > RECURSE_MIN && rest.len() > self.k as usize {
                let run_members: Vec<(u32, F)> = run.iter().map(|x| (member(x), x.1)).collect();
                self.recurse(&run_members, &rest, &filter, out);
            } else {
                // Positions are looked up for reported pairs only.
                self.compare(run, member, &filter, out);
            }
        }
    }

    /// Searches `run` (members that agree on every bit outside `free`, with their values) with
    /// `k + 1` tables keyed on blocks of `free` — if that at least halves the comparisons; dense
    /// clusters (every block shared by most members) are compared pair by pair instead.
    fn recurse(
        &self,
        run: &[(u32, F)],
        free: &[u32],
        filter: &Filter<F>,
        out: &mut dyn FnMut(u32, u32, u32),
    ) {
        let members: Vec<u32> = run.iter().map(|&(u, _)| u).collect();
        let tables: Vec<Table<F>> = choose_blocks(&split(free, self.k + 1), 1)
            .iter()
            .map(|set| Table::new(set))
            .collect();
        let sorted: Vec<Sorted<F>> = tables.iter().map(|t| self.sort(&members, t)).collect();
        let cost: usize = sorted.iter().map(Sorted::cost).sum();
        if cost * 2 > run.len() * run.len() {
            self.compare(run, |&(u, _)| u, filter, out);
            return;
        }
        for (s, (table, sorted)) in tables.iter().zip(&sorted).enumerate() {
            let mut sub = filter.clone();
            sub.exclude.extend(tables[..s].iter().map(Table::mask));
            self.scan(&members, table, sorted, free, &sub, out);
        }
    }

    /// Compares every pair of `run`: items holding a value (second field) and naming a value
    /// index through `member`.
    fn compare<T>(
        &self,
        run: &[(T, F)],
        member: impl Fn(&(T, F)) -> u32,
        filter: &Filter<F>,
        out: &mut dyn FnMut(u32, u32, u32),
    ) {
        if self.links_only && run.len() > LINK_MIN {
            return self.link(run, member, out);
        }
        for (i, x) in run.iter().enumerate() {
            for y in &run[i + 1..] {
                let diff = x.1.xor(y.1);
                let distance = diff.ones();
                if distance <= self.k && filter.accepts(diff) {
                    out(member(x), member(y), distance);
                }
            }
        }
    }

    /// Reports pairs of `run` within `k` that connect its members as every such pair does:
    /// the run's members are gathered into groups as they come, each new member compared with
    /// the members of every group until one is within `k` (a pair reported, the groups so
    /// reached merged). Exact for connectivity; about one comparison a member in a dense family,
    /// every pair (as [`Search::compare`]) where nothing links. Every pair within `k` may
    /// link, so no table's filter applies.
    fn link<T>(
        &self,
        run: &[(T, F)],
        member: impl Fn(&(T, F)) -> u32,
        out: &mut dyn FnMut(u32, u32, u32),
    ) {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, x) in run.iter().enumerate() {
            let mut joined: Option<usize> = None;
            for g in 0..groups.len() {
                let near = groups[g].iter().find_map(|&j| {
                    let distance = x.1.xor(run[j].1).ones();
                    (distance <= self.k).then_some((j, distance))
                });
                let Some((j, distance)) = near else {
                    continue;
                };
                out(member(x), member(&run[j]), distance);
                match joined {
                    None => {
                        groups[g].push(i);
                        joined = Some(g);
                    }
                    Some(first) => {
                        let merged = std::mem::take(&mut groups[g]);
                        groups[first].extend(merged);
                    }
                }
            }
            if joined.is_none() {
                groups.push(vec![i]);
            }
            groups.retain(|group| !group.is_empty());
        }
    }
}
