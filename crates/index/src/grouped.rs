//! [`Grouped`]: the records of a sorted stream gathered by the key they lead with (a cluster's
//! or a component's members sorted together by [`crate::Runs`] or [`crate::by_component`]).

use std::iter::Peekable;

/// The records of a stream sorted by a key, gathered by that key: each item is a group's first
/// record and `member` of each of its records (the first's included), in their order. Only one
/// group is held at a time.
///
/// A record that failed is an item of its own. One right after a group is reported instead of
/// the group, which it may have cut short; the groups after it follow.
///
/// ```
/// use neardup_index::Grouped;
/// let records: Vec<Result<(u32, char), ()>> = vec![Ok((1, 'a')), Ok((1, 'b')), Ok((4, 'c'))];
/// let groups: Vec<_> = Grouped::new(records.into_iter(), |r| r.0, |r| r.1).collect();
/// assert_eq!(groups, [Ok(((1, 'a'), vec!['a', 'b'])), Ok(((4, 'c'), vec!['c']))]);
/// ```
pub struct Grouped<I: Iterator, K, M> {
    records: Peekable<I>,
    key: K,
    member: M,
}

impl<I: Iterator, K, M> Grouped<I, K, M> {
    /// The groups of `records` (sorted, or at least with each key's records together) by
    /// `key`, each record read as `member`.
    pub fn new<R, E, Key, T>(records: I, key: K, member: M) -> Self
    where
        I: Iterator<Item = Result<R, E>>,
        K: FnMut(&R) -> Key,
        Key: PartialEq,
        M: FnMut(&R) -> T,
    {
        Grouped {
            records: records.peekable(),
            key,
            member,
        }
    }
}

impl<I, R, E, Key, K, T, M> Iterator for Grouped<I, K, M>
where
    I: Iterator<Item = Result<R, E>>,
    K: FnMut(&R) -> Key,
    Key: PartialEq,
    M: FnMut(&R) -> T,
{
    type Item = Result<(R, Vec<T>), E>;

    fn next(&mut self) -> Option<Self::Item> {
        let first = match self.records.next()? {
            Ok(record) => record,
            Err(e) => return Some(Err(e)),
        };
        let key = (self.key)(&first);
        let mut members = vec![(self.member)(&first)];
        while let Some(Ok(record)) = self
            .records
            .next_if(|r| r.as_ref().is_ok_and(|r| (self.key)(r) == key))
        {
            members.push((self.member)(&record));
        }
        if let Some(Err(e)) = self.records.next_if(Result::is_err) {
            return Some(Err(e));
        }
        Some(Ok((first, members)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups by the key alone (a member's other fields differ); a failure after a group
    /// stands for it, and the groups after the failure follow.
    #[test]
    fn a_failure_after_a_group_is_reported_instead_of_it() {
        let records: Vec<Result<(u32, u32), &str>> = vec![
            Err("first"),
            Ok((1, 10)),
            Ok((1, 11)),
            Ok((2, 20)),
            Ok((2, 21)),
            Err("cut"),
            Ok((2, 22)),
            Ok((3, 30)),
        ];
        let groups: Vec<_> = Grouped::new(records.into_iter(), |r| r.0, |r| r.1).collect();
        assert_eq!(
            groups,
            [
                Err("first"),
                Ok(((1, 10), vec![10, 11])),
                Err("cut"),
                Ok(((2, 22), vec![22])),
                Ok(((3, 30), vec![30])),
            ]
        );
    }
}
