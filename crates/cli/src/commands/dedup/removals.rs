//! The removals of `dedup --index`, held within the budget: each written as it is produced (in
//! input order) to a spillable list ([`Names`]: in memory within an eighth of the budget, on
//! disk in the run's temporary folder beyond it), and the outputs written from it: `--removed`
//! and `--pairs` in input order, `--clusters` from sorted runs ([`Runs`]) grouped by the kept
//! document, in the order of each cluster's first duplicate in the input.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

use neardup_dedup::{
    AcceptedPair, Budget, ClusterOf, DocumentVerdict, DuplicateOf, Kind, NameReader, Names, Verdict,
};
use neardup_index::{Grouped, Runs, SpillDir};
use serde::{Deserialize, Serialize};

use crate::output::Outputs;

use super::write_lines;

/// A document of `dedup --index` found a duplicate of one in the index.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct IndexRemoval {
    /// Its id.
    pub id: String,
    /// The document of the index it duplicates, and why.
    pub duplicate: DuplicateOf<String>,
}

/// The removals of a run, as they are produced.
pub(super) struct Removals {
    list: Names,
    exact: usize,
    near: usize,
}

/// The removals of a run, written: read back by position.
pub(super) struct Written {
    list: NameReader,
    /// Exact duplicates removed.
    pub exact: usize,
    /// Near duplicates removed.
    pub near: usize,
}

impl Removals {
    /// An empty list, within `budget`.
    pub fn within(budget: &Budget) -> Removals {
        Removals {
            list: Names::within(budget),
            exact: 0,
            near: 0,
        }
    }

    /// Adds `removal` (the next in input order).
    pub fn push(&mut self, removal: &IndexRemoval) -> anyhow::Result<()> {
        match removal.duplicate.kind {
            Kind::Exact => self.exact += 1,
            _ => self.near += 1,
        }
        self.list.push(&serde_json::to_vec(removal)?)?;
        Ok(())
    }

    /// The list, to be read back.
    pub fn finish(self) -> anyhow::Result<Written> {
        Ok(Written {
            list: self.list.finish()?,
            exact: self.exact,
            near: self.near,
        })
    }
}

impl Written {
    /// Removals in all.
    pub fn len(&self) -> usize {
        self.exact + self.near
    }

    /// The removal at `position`.
    fn get(&self, position: usize) -> anyhow::Result<IndexRemoval> {
        let text = self.list.get(u32::try_from(position)?)?;
        Ok(serde_json::from_str(&text)?)
    }

    /// Every removal, in input order.
    fn each(&self) -> impl Iterator<Item = anyhow::Result<IndexRemoval>> + '_ {
        (0..self.len()).map(|position| self.get(position))
    }

    /// Writes `--removed` (one verdict a removal, in input order) to `path`.
    pub fn write_removed(&self, outputs: &mut Outputs, path: &Path) -> anyhow::Result<()> {
        write_lines(
            outputs,
            path,
            self.each().map(|removal| {
                let removal = removal?;
                Ok(DocumentVerdict {
                    id: removal.id,
                    verdict: Verdict::Duplicate(removal.duplicate),
                })
            }),
        )
    }

    /// Writes `--pairs` (the document of the index, then the removed one) to `path`.
    pub fn write_pairs(&self, outputs: &mut Outputs, path: &Path) -> anyhow::Result<()> {
        write_lines(
            outputs,
            path,
            self.each().map(|removal| {
                let removal = removal?;
                let duplicate = removal.duplicate;
                Ok(AcceptedPair {
                    a: duplicate.duplicate_of,
                    b: removal.id,
                    kind: duplicate.kind,
                    distance: duplicate.distance,
                    evidence: duplicate.evidence,
                })
            }),
        )
    }

    /// Calls `each(first, position)` for every removal, `first` the position of the first
    /// removal of the same document of the index: one sort of runs within `budget`, by (hash of
    /// that document's id, position).
    fn with_firsts(
        &self,
        budget: &Budget,
        spill: &SpillDir,
        mut each: impl FnMut(u64, u64) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let by_hash: Runs<(u64, u64)> = Runs::new(spill.clone(), budget.memory / 8);
        let mut batch = Vec::with_capacity(by_hash.batch());
        for (position, removal) in self.each().enumerate() {
            batch.push((hash(&removal?.duplicate.duplicate_of), position as u64));
            if batch.len() == batch.capacity() {
                by_hash.add(&mut batch)?;
            }
        }
        by_hash.add(&mut batch)?;
        // The groups of the current hash: a document's id and its first removal (two only
        // when two ids share a hash).
        let mut firsts: Vec<(String, u64)> = Vec::new();
        let mut current = None;
        for record in by_hash.into_sorted()? {
            let (key, position) = record?;
            if current != Some(key) {
                (current, firsts) = (Some(key), Vec::new());
            }
            let of = self.get(position as usize)?.duplicate.duplicate_of;
            let first = match firsts.iter().find(|(id, _)| *id == of) {
                Some(&(_, first)) => first,
                None => {
                    firsts.push((of, position));
                    position
                }
            };
            each(first, position)?;
        }
        Ok(())
    }

    /// The removals grouped by the document of the index they duplicate: `(first, position)`
    /// for each (see [`Written::with_firsts`]), sorted again within `budget` by the group's
    /// first position.
    fn grouped(&self, budget: &Budget, spill: &SpillDir) -> anyhow::Result<Runs<(u64, u64)>> {
        let by_first: Runs<(u64, u64)> = Runs::new(spill.clone(), budget.memory / 8);
        let mut batch = Vec::with_capacity(by_first.batch());
        self.with_firsts(budget, spill, |first, position| {
            batch.push((first, position));
            if batch.len() == batch.capacity() {
                by_first.add(&mut batch)?;
            }
            Ok(())
        })?;
        by_first.add(&mut batch)?;
        Ok(by_first)
    }

    /// Writes `--clusters` to `path` (a document of the index with the documents of this run
    /// that duplicate it, one cluster at a time); returns their number.
    pub fn write_clusters(
        &self,
        outputs: &mut Outputs,
        path: Option<&Path>,
        budget: &Budget,
    ) -> anyhow::Result<usize> {
        let spill = SpillDir::new(&budget.spill_dir());
        let Some(path) = path else {
            // Only their number: a cluster a document of the index, the first sort is enough.
            let mut count = 0;
            self.with_firsts(budget, &spill, |first, position| {
                count += usize::from(first == position);
                Ok(())
            })?;
            return Ok(count);
        };
        // `(first, position)` ascending: a cluster's removals together, its first one first.
        let sorted = self.grouped(budget, &spill)?.into_sorted()?;
        let mut count = 0;
        let clusters = Grouped::new(sorted, |&(first, _)| first, |&(_, position)| position).map(
            |cluster| -> anyhow::Result<ClusterOf<String>> {
                let ((_, head), positions) = cluster?;
                let head = self.get(head as usize)?;
                let mut members = vec![head.duplicate.duplicate_of.clone(), head.id];
                for &position in positions.iter().skip(1) {
                    members.push(self.get(position as usize)?.id);
                }
                let cluster = ClusterOf {
                    cluster: count,
                    representative: head.duplicate.duplicate_of,
                    members,
                };
                count += 1;
                Ok(cluster)
            },
        );
        write_lines(outputs, path, clusters)?;
        Ok(count)
    }
}

/// A 64-bit hash of `id`, the same in every run.
fn hash(id: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    id.hash(&mut hasher);
    hasher.finish()
}
