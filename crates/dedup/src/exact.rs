//! [`ExactGroups`]: the exact groups of a run, and the units they make.
//!
//! A unit is the first member of an exact group, or a document without a copy: what the
//! candidate search and the decision take in place of documents. The engine asks three things
//! of every document or unit: the unit of a document, the units in order, and a unit's index
//! among them (the search numbers them so). All three follow from the copies (every member of
//! a group but its first) sorted by position, so nothing is held per document: 8 bytes a copy
//! and 4 a group, where a table of each document's unit and a list of the units took 8 bytes a
//! document.

/// Groups of positions held one after another: 4 bytes a member and 4 a group, where a vector a
/// group took 24 bytes and an allocation more (about 60 bytes a group).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Groups {
    /// Every group's members, group after group.
    members: Vec<u32>,
    /// Where each group ends in `members`.
    ends: Vec<u32>,
}

impl Groups {
    /// Appends a group.
    pub(crate) fn push(&mut self, group: impl IntoIterator<Item = u32>) {
        self.members.extend(group);
        self.ends.push(self.members.len() as u32);
    }

    /// How many groups there are.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The group at `at`.
    pub(crate) fn get(&self, at: usize) -> &[u32] {
        let start = match at {
            0 => 0,
            _ => self.ends[at - 1] as usize,
        };
        &self.members[start..self.ends[at] as usize]
    }

    /// The groups, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        (0..self.len()).map(|at| self.get(at))
    }

    /// The same groups, ordered by their first member (each group nonempty).
    pub(crate) fn sorted_by_first(self) -> Groups {
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        order.sort_unstable_by_key(|&at| self.get(at as usize)[0]);
        let mut sorted = Groups {
            members: Vec::with_capacity(self.members.len()),
            ends: Vec::with_capacity(self.len()),
        };
        for at in order {
            sorted.push(self.get(at as usize).iter().copied());
        }
        sorted
    }
}

impl<'a> FromIterator<&'a [u32]> for Groups {
    fn from_iter<I: IntoIterator<Item = &'a [u32]>>(groups: I) -> Self {
        let mut all = Groups::default();
        for group in groups {
            all.push(group.iter().copied());
        }
        all
    }
}

/// The exact groups of `len` documents and their units (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct ExactGroups {
    /// Groups of two or more positions with equal digests, each ascending, ordered by their
    /// first position.
    groups: std::sync::Arc<Groups>,
    /// Each group's first position, in order: searched for a unit's group in place of the
    /// groups themselves (one cache line holds 16, where each group is a pointer away).
    firsts: Vec<u32>,
    /// `(member, first)` for every member of a group but its first, by member.
    copies: Vec<(u32, u32)>,
    len: u32,
}

impl ExactGroups {
    /// The units of `len` documents whose exact groups are `groups` (as
    /// [`crate::Documents::exact_groups`] gives them).
    pub(crate) fn new(len: u32, groups: std::sync::Arc<Groups>) -> Self {
        let mut copies: Vec<(u32, u32)> = groups
            .iter()
            .flat_map(|group| group[1..].iter().map(|&member| (member, group[0])))
            .collect();
        copies.sort_unstable();
        let firsts = groups.iter().map(|group| group[0]).collect();
        ExactGroups {
            groups,
            firsts,
            copies,
            len,
        }
    }

    /// The groups, ordered by their first position.
    pub(crate) fn groups(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.groups.iter()
    }

    /// The unit (first member of the exact group) of document `doc`: itself when it has no
    /// earlier copy.
    pub(crate) fn first_of(&self, doc: u32) -> u32 {
        match self
            .copies
            .binary_search_by_key(&doc, |&(member, _)| member)
        {
            Ok(at) => self.copies[at].1,
            Err(_) => doc,
        }
    }

    /// How many units there are.
    pub(crate) fn unit_count(&self) -> u32 {
        self.len - self.copies.len() as u32
    }

    /// The units, ascending.
    pub(crate) fn units(&self) -> impl Iterator<Item = u32> + '_ {
        let mut copies = self.copies.iter().map(|&(member, _)| member).peekable();
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
        unit - self.copies.partition_point(|&(member, _)| member < unit) as u32
    }

    /// The unit at `index` among the units.
    pub(crate) fn unit_at(&self, index: u32) -> u32 {
        // The copy at j has `member - j` units before it, a count that never decreases: the
        // unit at `index` comes after every copy with at most `index` units before it.
        let (mut low, mut high) = (0, self.copies.len());
        while low < high {
            let mid = low + (high - low) / 2;
            if self.copies[mid].0 - mid as u32 <= index {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        index + low as u32
    }

    /// The members of `unit`'s group, or `unit` alone.
    pub(crate) fn members(&self, unit: u32) -> Option<&[u32]> {
        self.firsts
            .binary_search(&unit)
            .ok()
            .map(|at| self.groups.get(at))
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
                let members = groups.iter().find(|group| group[0] == unit).map(Vec::as_slice);
                prop_assert_eq!(exact.members(unit), members);
            }
        }
    }
}
