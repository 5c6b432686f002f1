//! Clusters: connected components of the near-duplicate graph, each with a representative.
//!
//! Pairs from any method (all-pairs, LSH, exact groups) are merged with a union-find (path
//! compression and union by rank). Every cluster lists its members ascending and names one
//! representative by a stated policy; clusters come out ordered by their smallest member, so the
//! output depends only on the input, not on the order pairs arrive in.

use crate::error::{IndexError, Result};

/// Disjoint sets over `0..n` with path compression (halving) and union by rank.
#[derive(Debug, Clone)]
pub struct UnionFind {
    parent: Vec<u32>,
    rank: Vec<u8>,
}

impl UnionFind {
    /// `n` singleton sets. Fails if `n` does not fit in `u32`.
    pub fn new(n: usize) -> Result<Self> {
        crate::error::checked_len(n)?;
        Ok(UnionFind {
            parent: (0..n as u32).collect(),
            rank: vec![0; n],
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True if there are no elements.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The root of `x`'s set (`x < n`).
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Merges the sets of `a` and `b`; returns false if they were already one.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        let (low, high) = if self.rank[ra as usize] < self.rank[rb as usize] {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[low as usize] = high;
        if self.rank[low as usize] == self.rank[high as usize] {
            self.rank[high as usize] += 1;
        }
        true
    }

    /// Each element of a set of two or more with its set's smallest element, `(x, smallest)`,
    /// ascending by `x` (a set's smallest element comes with itself); singletons are left out.
    /// Holds 4 bytes an element besides the sets.
    ///
    /// ```
    /// use neardup_index::UnionFind;
    /// let mut sets = UnionFind::new(5).unwrap();
    /// sets.union(3, 1);
    /// sets.union(4, 3);
    /// let labels: Vec<(u32, u32)> = sets.labels().collect();
    /// assert_eq!(labels, vec![(1, 1), (3, 1), (4, 1)]);
    /// ```
    pub fn labels(&mut self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut smallest = vec![u32::MAX; self.len()];
        (0..self.len() as u32).filter_map(move |x| {
            let root = self.find(x) as usize;
            // A root's rank grows with its first union: rank 0 is a set of one.
            if self.rank[root] == 0 {
                return None;
            }
            if smallest[root] == u32::MAX {
                smallest[root] = x;
            }
            Some((x, smallest[root]))
        })
    }
}

/// How to pick a cluster's representative. Ties go to the lowest position.
#[derive(Debug, Clone, Copy)]
pub enum Representative<'a> {
    /// The member seen first (lowest position).
    FirstSeen,
    /// The member with the greatest length; `lengths[i]` is position `i`'s length.
    Longest(&'a [u64]),
    /// The member with the greatest timestamp; `timestamps[i]` is position `i`'s time.
    Newest(&'a [i64]),
}

/// One connected component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// Member positions, ascending.
    pub members: Vec<u32>,
    /// The member chosen by the [`Representative`] policy.
    pub representative: u32,
}

/// Connected components of the graph on `0..n` with edges `pairs`.
///
/// Clusters are ordered by their smallest member; singletons are included only if
/// `include_singletons`. Fails if a pair names a position `≥ n` or a policy's slice is not `n`
/// long.
///
/// ```
/// use neardup_index::{clusters, Cluster, Representative};
/// let lengths = [10, 50, 20, 5];
/// let found = clusters(4, [(2, 0), (0, 1)], Representative::Longest(&lengths), false).unwrap();
/// assert_eq!(found, vec![Cluster { members: vec![0, 1, 2], representative: 1 }]);
/// ```
pub fn clusters(
    n: usize,
    pairs: impl IntoIterator<Item = (u32, u32)>,
    policy: Representative<'_>,
    include_singletons: bool,
) -> Result<Vec<Cluster>> {
    let side_len = match policy {
        Representative::FirstSeen => n,
        Representative::Longest(v) => v.len(),
        Representative::Newest(v) => v.len(),
    };
    if side_len != n {
        return Err(IndexError::InvalidParam(format!(
            "the representative policy has {side_len} values for {n} items"
        )));
    }
    let mut sets = UnionFind::new(n)?;
    for (a, b) in pairs {
        for x in [a, b] {
            if x as usize >= n {
                return Err(IndexError::OutOfRange {
                    index: x as usize,
                    n,
                });
            }
        }
        sets.union(a, b);
    }
    // Number clusters in order of their smallest member, then fill them in position order.
    let mut slot_of_root = vec![u32::MAX; n];
    let mut members: Vec<Vec<u32>> = Vec::new();
    for x in 0..n as u32 {
        let root = sets.find(x) as usize;
        if slot_of_root[root] == u32::MAX {
            slot_of_root[root] = members.len() as u32;
            members.push(Vec::new());
        }
        members[slot_of_root[root] as usize].push(x);
    }
    Ok(members
        .into_iter()
        .filter(|m| include_singletons || m.len() > 1)
        .map(|members| {
            let representative = pick(&members, policy);
            Cluster {
                members,
                representative,
            }
        })
        .collect())
}

/// The representative of `members` (ascending, non-empty) under `policy`.
fn pick(members: &[u32], policy: Representative<'_>) -> u32 {
    // `max_by_key` keeps the last maximum; iterating in reverse makes that the lowest position.
    let best = match policy {
        Representative::FirstSeen => members.first().copied(),
        Representative::Longest(lengths) => members
            .iter()
            .rev()
            .copied()
            .max_by_key(|&m| lengths[m as usize]),
        Representative::Newest(times) => members
            .iter()
            .rev()
            .copied()
            .max_by_key(|&m| times[m as usize]),
    };
    best.unwrap_or_default()
}
