//! [`ExactGroups`]: the exact groups of a run, the units they make, and the member each keeps.
//!
//! A unit is the first member of an exact group, or a document without a copy: what the
//! candidate search and the decision take in place of documents. The engine asks three things
//! of every document or unit: the unit of a document, the units in order, and a unit's index
//! among them (the search numbers them so). All three follow from the copies (every member of
//! a group but its first) sorted by position, so nothing is held per document: 8 bytes a copy
//! and 4 a group, where a table of each document's unit and a list of the units took 8 bytes a
//! document.
//!
//! The rows of a group's members are never held together: the member each group keeps is
//! chosen in one scan of their rows in position order ([`ExactGroups::choose_kept`], 4 bytes a
//! group, none under [`KeepPolicy::First`]), and what the outcome says of each copy (its pair
//! with the first member, its removal) is written from another ([`ExactGroups::scan_members`]).
//! Only each group's first and kept members' rows are read into memory for the decision:
//! holding every member's took 20 bytes a copy (40 million identical lines, 1.5 GB).

use crate::documents::Documents;
use crate::error::DedupError;
use crate::options::KeepPolicy;
use crate::rows::Row;

/// Groups of positions as their firsts and copies: each group's first (smallest) position, and
/// `(member, first)` for every other member, 4 bytes a group and 8 a copy. The engine asks of a
/// group only its first, of a document only its group's first: holding the groups' members one
/// after another besides took 4 bytes a member more, and their sort by first a copy of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Groups {
    /// Each group's first position, ascending once [sorted](Groups::sorted).
    firsts: Vec<u32>,
    /// `(member, first)` for every member of a group but its first, by member once sorted.
    copies: Vec<(u32, u32)>,
}

impl Groups {
    /// Appends a group (two or more positions, ascending).
    pub(crate) fn push(&mut self, group: &[u32]) {
        if let Some((&first, copies)) = group.split_first() {
            self.firsts.push(first);
            self.copies
                .extend(copies.iter().map(|&member| (member, first)));
        }
    }

    /// How many groups there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.firsts.len()
    }

    /// The same groups, their firsts ascending and their copies by position (sorted in place).
    pub(crate) fn sorted(mut self) -> Groups {
        self.firsts.sort_unstable();
        self.copies.sort_unstable();
        self
    }

    /// Each group's members, groups ordered by their first (for tests: a vector a group).
    #[cfg(test)]
    pub(crate) fn to_vecs(&self) -> Vec<Vec<u32>> {
        let mut groups: Vec<Vec<u32>> = self.firsts.iter().map(|&first| vec![first]).collect();
        for &(member, first) in &self.copies {
            let at = self.firsts.binary_search(&first).unwrap();
            groups[at].push(member);
        }
        groups
    }
}

impl<'a> FromIterator<&'a [u32]> for Groups {
    /// The groups given, [sorted](Groups::sorted).
    fn from_iter<I: IntoIterator<Item = &'a [u32]>>(groups: I) -> Self {
        let mut all = Groups::default();
        for group in groups {
            all.push(group);
        }
        all.sorted()
    }
}

/// The exact groups of `len` documents and their units (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct ExactGroups {
    /// Groups of two or more positions with equal digests, [sorted](Groups::sorted): each
    /// group's first position searched for a unit's group (one cache line holds 16), the copies
    /// by position for a document's unit.
    groups: std::sync::Arc<Groups>,
    /// The member each group keeps, by group, when it is not always the first (see
    /// [`ExactGroups::choose_kept`]); else empty.
    kept: Vec<u32>,
    len: u32,
}

impl ExactGroups {
    /// The units of `len` documents whose exact groups are `groups` (as
    /// [`crate::Documents::exact_groups`] gives them: sorted).
    pub(crate) fn new(len: u32, groups: std::sync::Arc<Groups>) -> Self {
        ExactGroups {
            groups,
            kept: Vec::new(),
            len,
        }
    }

    /// Each group's first position, ascending.
    fn firsts_slice(&self) -> &[u32] {
        &self.groups.firsts
    }

    /// `(member, first)` of every member of a group but its first, by member.
    fn copies(&self) -> &[(u32, u32)] {
        &self.groups.copies
    }

    /// Chooses the member each group keeps: the first in `keep`'s order (the earliest of
    /// those equal in it). Under [`KeepPolicy::First`] that is the group's first member and
    /// nothing is read or held; else every member's row is read once, in position order, and 4
    /// bytes a group are held.
    pub(crate) fn choose_kept(
        &mut self,
        documents: &Documents,
        keep: KeepPolicy,
    ) -> Result<(), DedupError> {
        self.kept = Vec::new();
        if keep == KeepPolicy::First || self.firsts_slice().is_empty() {
            return Ok(());
        }
        // Each group's best rank so far; a group's first member comes before its copies.
        let mut best: Vec<(u64, i64, u32)> = Vec::with_capacity(self.firsts_slice().len());
        self.scan_members(documents, |member, first, row| {
            let rank = keep.rank_key(member, row.bytes, row.fetched_at);
            match member == first {
                true => best.push(rank),
                false => {
                    let group = self.firsts_slice().binary_search(&first).ok();
                    let Some(best) = group.and_then(|group| best.get_mut(group)) else {
                        return Err(DedupError::MissingData(format!(
                            "copy {member} scanned before its group's first {first}"
                        )));
                    };
                    *best = (*best).min(rank);
                }
            }
            Ok(())
        })?;
        self.kept = best.into_iter().map(|(.., member)| member).collect();
        Ok(())
    }

    /// The member `unit`'s group keeps ([`ExactGroups::choose_kept`]), or `unit` alone.
    pub(crate) fn kept_member(&self, unit: u32) -> u32 {
        match self.firsts_slice().binary_search(&unit) {
            Ok(at) => self.kept.get(at).copied().unwrap_or(unit),
            Err(_) => unit,
        }
    }

    /// Each group's first and kept members (a group's once when they are the same), ascending:
    /// the members whose rows the decision and the outcome read.
    pub(crate) fn firsts_and_kept(&self) -> Vec<u32> {
        let mut read: Vec<u32> = self
            .firsts_slice()
            .iter()
            .chain(&self.kept)
            .copied()
            .collect();
        read.sort_unstable();
        read.dedup();
        read
    }

    /// Each group's first position (its unit), ascending.
    pub(crate) fn firsts(&self) -> impl Iterator<Item = u32> + '_ {
        self.firsts_slice().iter().copied()
    }

    /// The unit (first member of the exact group) of document `doc`: itself when it has no
    /// earlier copy.
    pub(crate) fn first_of(&self, doc: u32) -> u32 {
        let copies = self.copies();
        match copies.binary_search_by_key(&doc, |&(member, _)| member) {
            Ok(at) => copies[at].1,
            Err(_) => doc,
        }
    }

    /// How many units there are.
    pub(crate) fn unit_count(&self) -> u32 {
        self.len - self.copies().len() as u32
    }

    /// The units, ascending.
    pub(crate) fn units(&self) -> impl Iterator<Item = u32> + '_ {
        let mut copies = self.copies().iter().map(|&(member, _)| member).peekable();
        (0..self.len).filter(move |&doc| {
            if copies.peek() == Some(&doc) {
                copies.next();
                false
            } else {
                true
            }
        })
    }

    /// The index of `unit` among the units (the number of units before it).
    pub(crate) fn index_of(&self, unit: u32) -> u32 {
        unit - self.copies().partition_point(|&(member, _)| member < unit) as u32
    }

    /// The unit at `index` among the units.
    pub(crate) fn unit_at(&self, index: u32) -> u32 {
        // The copy at j has `member - j` units before it, a count that never decreases: the
        // unit at `index` comes after every copy with at most `index` units before it.
        let (mut low, mut high) = (0, self.copies().len());
        while low < high {
            let mid = low + (high - low) / 2;
            if self.copies()[mid].0 - mid as u32 <= index {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        index + low as u32
    }

    /// Whether `unit` is the first member of a group (it has copies).
    pub(crate) fn is_group(&self, unit: u32) -> bool {
        self.firsts_slice().binary_search(&unit).is_ok()
    }

    /// Hands every member of every group to `visit` in position order, with its group's first
    /// member and its row, read from the documents' columns front to back.
    pub(crate) fn scan_members(
        &self,
        documents: &Documents,
        mut visit: impl FnMut(u32, u32, Row) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        // Firsts and copies merged by position (never equal: a copy is no group's first), each
        // with its first: once for the positions the scan reads, once beside it for the firsts.
        let members = || {
            let mut firsts = self
                .firsts_slice()
                .iter()
                .map(|&first| (first, first))
                .peekable();
            let mut copies = self.copies().iter().copied().peekable();
            std::iter::from_fn(move || match (firsts.peek(), copies.peek()) {
                (Some(first), Some(copy)) if first.0 < copy.0 => firsts.next(),
                (_, Some(_)) => copies.next(),
                (_, None) => firsts.next(),
            })
        };
        let mut beside = members();
        documents.scan_rows(members().map(|(member, _)| member), |member, row| {
            let first = beside.next().map_or(member, |(_, first)| first);
            visit(member, first, row)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every question against the tables the engine held before: each document's unit,
        /// and the list of units (documents with a digest class each; a class of two or more
        /// is a group).
        #[test]
        fn units_agree_with_the_tables_they_replace(classes in proptest::collection::vec(0u32..12, 0..60)) {
            let len = classes.len() as u32;
            let mut groups: Vec<Vec<u32>> = (0..12)
                .map(|class| (0..len).filter(|&i| classes[i as usize] == class).collect::<Vec<_>>())
                .filter(|group| group.len() > 1)
                .collect();
            groups.sort_unstable_by_key(|group| group[0]);
            let exact = ExactGroups::new(len, groups.iter().map(Vec::as_slice).collect::<Groups>().into());
            let mut first_of: Vec<u32> = (0..len).collect();
            for group in &groups {
                for &member in &group[1..] {
                    first_of[member as usize] = group[0];
                }
            }
            let units: Vec<u32> = (0..len).filter(|&i| first_of[i as usize] == i).collect();
            prop_assert_eq!(exact.units().collect::<Vec<_>>(), units.clone());
            prop_assert_eq!(exact.unit_count() as usize, units.len());
            for doc in 0..len {
                prop_assert_eq!(exact.first_of(doc), first_of[doc as usize]);
            }
            for (index, &unit) in units.iter().enumerate() {
                prop_assert_eq!(exact.index_of(unit), index as u32);
                prop_assert_eq!(exact.unit_at(index as u32), unit);
                prop_assert_eq!(exact.is_group(unit), groups.iter().any(|group| group[0] == unit));
            }
        }

        /// The member each group keeps is the first of its members in the keep order, and a
        /// scan hands over every member once, in position order, with its group and its own
        /// row: documents with a digest class each, their rows held or spilled.
        #[test]
        fn the_kept_member_is_the_first_in_keep_order(
            docs in proptest::collection::vec((0u8..6, 0u64..4, proptest::option::of(0i64..3)), 0..80),
            spill in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            // No room: every row but the first is spilled.
            let budget = crate::Budget {
                memory: if spill { 0 } else { 1 << 30 },
                tmp_dir: Some(dir.path().to_path_buf()),
                held_before: None,
            };
            let mut documents = Documents::within(&budget);
            for (i, &(class, bytes, fetched_at)) in docs.iter().enumerate() {
                let fingerprints = neardup_core::Fingerprints {
                    simhash: neardup_core::Simhash::B64(i as u64 * 0x9e37_79b9),
                    minhash: None,
                    digest: neardup_core::digest::Digest::of(
                        neardup_core::digest::DigestAlgorithm::Blake3,
                        &[class],
                    ),
                    features: 1,
                };
                let mut item = crate::Item::new(fingerprints, bytes);
                item.fetched_at = fetched_at;
                documents.push(item).unwrap();
            }
            documents.flush().unwrap();
            let len = docs.len() as u32;
            let mut exact = ExactGroups::new(len, documents.exact_groups().unwrap());
            let groups = documents.exact_groups().unwrap().to_vecs();
            let mut scanned = Vec::new();
            exact
                .scan_members(&documents, |member, first, row| {
                    scanned.push((member, first, row.bytes, row.fetched_at));
                    Ok(())
                })
                .unwrap();
            let mut expected: Vec<_> = groups
                .iter()
                .flat_map(|members| members.iter().map(move |&m| (m, members[0])))
                .map(|(m, first)| (m, first, docs[m as usize].1, docs[m as usize].2))
                .collect();
            expected.sort_unstable();
            prop_assert_eq!(scanned, expected);
            for keep in [KeepPolicy::First, KeepPolicy::Longest, KeepPolicy::Newest] {
                exact.choose_kept(&documents, keep).unwrap();
                for group in &groups {
                    let best = group
                        .iter()
                        .copied()
                        .min_by_key(|&m| {
                            let (_, bytes, fetched_at) = docs[m as usize];
                            keep.rank_key(m, bytes, fetched_at)
                        })
                        .unwrap();
                    prop_assert_eq!(exact.kept_member(group[0]), best, "{:?} {:?}", keep, group);
                }
                let alone = (0..len).find(|&i| !exact.is_group(i) && exact.first_of(i) == i);
                if let Some(alone) = alone {
                    prop_assert_eq!(exact.kept_member(alone), alone);
                }
            }
        }
    }
}
