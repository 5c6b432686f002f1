//! What a run decided: [`RunOutcome`], its removals and pairs held within the budget (what
//! [`crate::dedup_documents`] gives, and the CLI writes from), and [`Outcome`], the same read
//! into memory (what [`crate::dedup`] gives: the library's and Python's small runs).
//!
//! The clusters are not held: a cluster is a kept document and every removal that names it,
//! so [`RunOutcome::clusters`] reads them from the removals by two sorts within the budget
//! ([`neardup_index::Runs`]), one cluster at a time. The components of the accepted pairs are
//! found one way for both ([`components_within`]): within the run's budget for
//! [`RunOutcome::components`], unbounded (in memory) for [`Outcome::components`].

use neardup_index::{by_component, Cluster, FoundLinks, Grouped, IndexError, Runs, SpillDir};

use crate::budget::Budget;
use crate::engine::{FoundPair, Phase, Removal};
use crate::error::DedupError;
use crate::listed::{list_share, Listed};

/// The result of a run, in memory: what [`crate::dedup`] and [`crate::dedup_with`] give
/// ([`RunOutcome::into_outcome`]).
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Accepted pairs, sorted by `(a, b)`: with [`crate::DedupOptions::list_pairs`], every candidate
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
    /// How many candidate pairs the search found (among the first members of exact groups):
    /// every pair within the search's reach with [`crate::DedupOptions::list_pairs`] or a MinHash or
    /// overlap search; else (the SimHash methods) the pairs of a document and a KEPT document
    /// within `k` that the decision looked at, which grows with the corpus, not with the square
    /// of its families.
    pub candidates: usize,
    /// Bytes written to disk because they did not fit the budget: whole digests, the candidate
    /// search's fingerprints and buckets, shingle sets.
    pub spilled_bytes: u64,
    /// The engine's phases and the time each took, in order.
    pub phases: Vec<Phase>,
}

impl Outcome {
    /// Connected components of the accepted pairs ([`Outcome::pairs`]), two or more members
    /// each, members ascending, ordered by their first member: the groups chained
    /// near-duplicates form (for topic clustering). Unlike [`Outcome::clusters`], a component
    /// can hold documents that are not duplicates of each other (A ~ B ~ C with A and C apart)
    /// and several kept documents.
    ///
    /// Found as [`RunOutcome::components`] finds them, with no bound on memory (the outcome is
    /// held in memory already): the links, their components and the members sorted by
    /// component are held in memory (about 64 bytes a pair, nothing a document in no pair) and
    /// nothing is written to disk. Fails if a pair names a document past [`Outcome::kept`].
    pub fn components(&self) -> Result<Vec<Vec<u32>>, DedupError> {
        let pairs = self.pairs.iter().map(|p| Ok((p.a, p.b)));
        components_within(pairs, self.kept.len(), &UNBOUNDED)?.collect()
    }
}

/// The budget of [`Outcome::components`]: no bound, so that its sorts and components stay in
/// memory, as the rest of an [`Outcome`] does.
const UNBOUNDED: Budget = Budget {
    memory: u64::MAX,
    tmp_dir: None,
    held_before: None,
};

/// The result of a run within its budget ([`crate::dedup_documents`]): the removals and
/// accepted pairs as [`Listed`] (in memory within a sixteenth of the budget each, in a
/// temporary file beyond), the clusters read from the removals when asked.
pub struct RunOutcome {
    /// Accepted pairs, ascending by `(a, b)`, as [`Outcome::pairs`] lists them.
    pub pairs: Listed<FoundPair>,
    /// Every removed document, by position.
    pub removals: Listed<Removal>,
    /// How many clusters (of two or more documents) the removals make.
    pub cluster_count: usize,
    /// `kept[i]`: whether document `i` is kept.
    pub kept: Vec<bool>,
    /// How many candidate pairs verification examined (see [`Outcome::verified_candidates`]).
    pub verified_candidates: usize,
    /// How many candidate pairs the search found (see [`Outcome::candidates`]).
    pub candidates: usize,
    /// Bytes written to disk because they did not fit the budget: whole digests, the candidate
    /// search's fingerprints and buckets, shingle sets, the lists.
    pub spilled_bytes: u64,
    /// The engine's phases and the time each took, in order.
    pub phases: Vec<Phase>,
    pub(crate) budget: Budget,
}

impl RunOutcome {
    /// The clusters of two or more documents, ordered by their first member, members
    /// ascending, as [`Outcome::clusters`] lists them: each removal grouped with the kept
    /// document it names, by two sorts of 16-byte records within a sixteenth of the budget
    /// each (on disk beyond); one cluster is held at a time.
    pub fn clusters(
        &self,
    ) -> Result<impl Iterator<Item = Result<Cluster, DedupError>> + '_, DedupError> {
        let spill = SpillDir::new(&self.budget.spill_dir());
        let share = list_share(&self.budget);
        // (kept, removed), ascending: a cluster's records together, its first removal first.
        let by_kept: Runs<(u64, u64)> = Runs::new(spill.clone(), share);
        let mut batch = Vec::with_capacity(by_kept.batch());
        for removal in self.removals.iter() {
            let removal = removal?;
            batch.push((u64::from(removal.of), u64::from(removal.index)));
            if batch.len() >= by_kept.batch() {
                by_kept.add(&mut batch)?;
            }
        }
        by_kept.add(&mut batch)?;
        // (first member << 32 | member, kept) of every member, the kept one included.
        let by_first: Runs<(u64, u64)> = Runs::new(spill, share);
        let mut current = None;
        for record in by_kept.into_sorted()? {
            let (of, index) = record?;
            if current.is_none_or(|(kept, _)| kept != of) {
                let first = of.min(index);
                current = Some((of, first));
                batch.push((first << 32 | of, of));
            }
            let first = current.map_or(index, |(_, first)| first);
            batch.push((first << 32 | index, of));
            if batch.len() >= by_first.batch() {
                by_first.add(&mut batch)?;
            }
        }
        by_first.add(&mut batch)?;
        let members = by_first.into_sorted()?;
        let clusters = Grouped::new(members, |&(key, _)| key >> 32, |&(key, _)| key as u32);
        Ok(clusters.map(|cluster| {
            let ((_, representative), members) = cluster?;
            Ok(Cluster {
                members,
                representative: representative as u32,
            })
        }))
    }

    /// Connected components of the accepted pairs, as [`Outcome::components`] lists them
    /// (two or more members each, members ascending, ordered by their first member), one
    /// component held at a time: the pairs' components found within an eighth of the budget
    /// ([`FoundLinks`]: merged in memory while the pairs fit, on disk beyond), their members
    /// sorted by component within a sixteenth.
    pub fn components(
        &self,
    ) -> Result<impl Iterator<Item = Result<Vec<u32>, DedupError>> + '_, DedupError> {
        let pairs = self.pairs.iter().map(|p| p.map(|p| (p.a, p.b)));
        components_within(pairs, self.kept.len(), &self.budget)
    }

    /// The outcome in memory: the lists read back, the clusters formed.
    pub fn into_outcome(self) -> Result<Outcome, DedupError> {
        let clusters = self.clusters()?.collect::<Result<_, _>>()?;
        Ok(Outcome {
            pairs: self.pairs.to_vec()?,
            clusters,
            removals: self.removals.to_vec()?,
            kept: self.kept,
            verified_candidates: self.verified_candidates,
            candidates: self.candidates,
            spilled_bytes: self.spilled_bytes,
            phases: self.phases,
        })
    }
}

/// Connected components of `pairs` over `len` documents, two or more members each, members
/// ascending, ordered by their first member, one component held at a time: the components
/// found within an eighth of `budget` ([`FoundLinks`]: merged in memory while the pairs fit, on
/// disk beyond), their members sorted by component within a sixteenth. Fails if a pair names
/// a document `len` or past it.
fn components_within(
    pairs: impl Iterator<Item = Result<(u32, u32), DedupError>>,
    len: usize,
    budget: &Budget,
) -> Result<impl Iterator<Item = Result<Vec<u32>, DedupError>>, DedupError> {
    let dir = budget.spill_dir();
    let share = list_share(budget);
    let links = FoundLinks::within(share * 2, &dir);
    let mut batch = Vec::with_capacity(links.batch());
    for pair in pairs {
        let (a, b) = pair?;
        if let Some(index) = [a, b].into_iter().find(|&x| x as usize >= len) {
            let index = index as usize;
            return Err(IndexError::OutOfRange { index, n: len }.into());
        }
        batch.push((a, b));
        if batch.len() >= links.batch() {
            links.link(&mut batch)?;
        }
    }
    links.link(&mut batch)?;
    // `(first member, member)` ascending: a component's first member with itself first.
    let members = by_component(links.components()?, &SpillDir::new(&dir), share * 8)?;
    let components = Grouped::new(members, |p| p.a, |p| p.b);
    Ok(components.map(|component| Ok(component?.1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listed::ListBuilder;
    use crate::policy::{Evidence, Kind};
    use neardup_index::Representative;

    /// The clusters read from the removals by sorts on disk are those of grouping them in
    /// memory: every kept document with the documents that name it, by first member.
    #[test]
    fn clusters_from_removals_on_disk_are_the_groups_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(Budget::MIN_MEMORY, Some(dir.path().into())).unwrap();
        let n = 300_000u32;
        // Document i is kept when i % 5 == 0 or i % 7 == 0; a removed one names a kept one
        // before or after it (a later kept document when the keep order is not first seen).
        let kept = |i: u32| i.is_multiple_of(5) || i.is_multiple_of(7);
        let removals: Vec<Removal> = (0..n)
            .filter(|&i| !kept(i))
            .map(|i| {
                let of = match i % 3 {
                    0 => (i / 5) * 5,
                    1 => ((i / 7) * 7 + 7).min(n - 7 - n % 7),
                    _ => (i % 1000) * 35,
                };
                Removal {
                    index: i,
                    of,
                    kind: Kind::Exact,
                    distance: 0,
                    evidence: Evidence::EXACT,
                }
            })
            .collect();
        let mut expected: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for r in &removals {
            expected
                .entry(r.of)
                .or_insert_with(|| vec![r.of])
                .push(r.index);
        }
        let mut expected: Vec<Cluster> = expected
            .into_iter()
            .map(|(representative, mut members)| {
                members.sort_unstable();
                Cluster {
                    members,
                    representative,
                }
            })
            .collect();
        expected.sort_by_key(|c| c.members[0]);
        let mut outcome = outcome_of(Vec::new(), removals, budget);
        outcome.kept = (0..n).map(kept).collect();
        assert!(
            outcome.removals.spilled_bytes() > 0,
            "the removals did not go to disk"
        );
        let clusters: Vec<Cluster> = outcome.clusters().unwrap().map(Result::unwrap).collect();
        assert_eq!(clusters, expected);
    }

    /// The components of pairs beyond memory (their links found on disk, their members sorted
    /// on disk) and of the same pairs in an [`Outcome`] (in memory) are those of a union-find
    /// of every document ([`neardup_index::clusters`]): chains, stars, pairs listed in any
    /// order, documents in no pair.
    #[test]
    fn components_on_disk_and_in_memory_are_those_of_a_union_find() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(Budget::MIN_MEMORY, Some(dir.path().into())).unwrap();
        let n = 400_000u32;
        // Chains of 1 to 40 links (i with i + 1 inside a block of a pseudo-random length),
        // and every 997th document also linked to a document far before it.
        let mut pairs: Vec<FoundPair> = Vec::new();
        let mut start = 0u32;
        while start < n {
            let len = (start.wrapping_mul(2_654_435_761) >> 27) + 1;
            let end = (start + len).min(n);
            pairs.extend((start..end - 1).map(|i| pair(i, i + 1)));
            start = end + 1;
        }
        pairs.extend((50_000..n).step_by(997).map(|i| pair(i - 49_999, i)));
        pairs.sort_by_key(|p| (p.a, p.b));
        pairs.dedup_by_key(|p| (p.a, p.b));
        let links = pairs.iter().map(|p| (p.a, p.b));
        let expected: Vec<Vec<u32>> =
            neardup_index::clusters(n as usize, links, Representative::FirstSeen, false)
                .unwrap()
                .into_iter()
                .map(|c| c.members)
                .collect();
        assert!(expected.len() > 1_000, "{}", expected.len());
        let in_memory = Outcome {
            pairs: pairs.clone(),
            kept: vec![true; n as usize],
            ..Outcome::default()
        };
        assert_eq!(in_memory.components().unwrap(), expected);
        // At the least budget, the links' share holds 8,192 links in memory (64 bytes each in
        // a quarter of 2 MiB): these 390,000 are merged by rounds on disk.
        let mut outcome = outcome_of(pairs, Vec::new(), budget);
        outcome.kept = vec![true; n as usize];
        assert!(
            outcome.pairs.spilled_bytes() > 0,
            "the pairs did not go to disk"
        );
        let found: Vec<Vec<u32>> = outcome.components().unwrap().map(Result::unwrap).collect();
        assert_eq!(found, expected);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// A pair naming a document past the outcome's documents is an error, not a component.
    #[test]
    fn components_of_a_pair_past_the_documents_fail() {
        let outcome = Outcome {
            pairs: vec![pair(0, 1), pair(1, 3)],
            kept: vec![true; 3],
            ..Outcome::default()
        };
        let error = outcome.components().unwrap_err();
        assert!(
            matches!(
                error,
                DedupError::Index(IndexError::OutOfRange { index: 3, n: 3 })
            ),
            "{error:?}"
        );
    }

    /// An outcome of `pairs` and `removals` listed within `budget` (nothing kept).
    fn outcome_of(
        mut pairs: Vec<FoundPair>,
        mut removals: Vec<Removal>,
        budget: Budget,
    ) -> RunOutcome {
        let (pair_list, removal_list) =
            (ListBuilder::within(&budget), ListBuilder::within(&budget));
        pair_list.add(&mut pairs).unwrap();
        removal_list.add(&mut removals).unwrap();
        RunOutcome {
            pairs: pair_list.finish().unwrap(),
            removals: removal_list.finish().unwrap(),
            cluster_count: 0,
            kept: Vec::new(),
            verified_candidates: 0,
            candidates: 0,
            spilled_bytes: 0,
            phases: Vec::new(),
            budget,
        }
    }

    fn pair(a: u32, b: u32) -> FoundPair {
        FoundPair {
            a,
            b,
            kind: Kind::Near,
            distance: 1,
            evidence: Evidence::EXACT,
        }
    }
}
