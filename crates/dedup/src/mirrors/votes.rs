//! The vote pass of mirror detection: pages with the same content and last segment vote for the
//! prefix pairs that align them; prefix pairs with enough votes are the candidates.

use neardup_index::{Runs, Sorted, SpillDir};

use super::records::{pair_word, VoteRecord};
use crate::error::DedupError;

/// The candidate prefix pairs ([`pair_word`]s, ascending) with at least `min_votes` votes.
///
/// `records` come sorted by group (content key, last segment), so one group is held at a time,
/// and only while it could be small enough to vote (at most `max_group_size` pages, each with
/// at most `depths` splits). Within a group, the splits of two pages with the same relative
/// path (the same number of segments and the same hash) under different prefixes vote for
/// those prefixes. Votes go to sorted runs (in memory up to `share` bytes, on disk beyond) and
/// are counted by a merge.
pub(super) fn candidates(
    records: Sorted<VoteRecord>,
    max_group_size: usize,
    depths: usize,
    min_votes: u64,
    spill: &SpillDir,
    share: u64,
) -> Result<Vec<u64>, DedupError> {
    let votes = Runs::<u64>::new(spill.clone(), share);
    let mut ballot = Ballot {
        votes: &votes,
        batch: Vec::with_capacity(votes.batch()),
    };
    let most_records = max_group_size.saturating_mul(depths);
    let mut group: Vec<VoteRecord> = Vec::new();
    let (mut current, mut pages, mut too_big) = (None, 0usize, false);
    for record in records {
        let record = record?;
        let id = (record.key, record.last_segment);
        if current != Some(id) {
            if !too_big && (2..=max_group_size).contains(&pages) {
                ballot.group(&group)?;
            }
            (current, pages, too_big) = (Some(id), 0, false);
            group.clear();
        }
        pages += usize::from(record.first);
        // More records than `max_group_size` pages can have: too big, whatever comes next.
        too_big |= pages > max_group_size || group.len() >= most_records;
        if too_big {
            group.clear();
        } else {
            group.push(record);
        }
    }
    if !too_big && (2..=max_group_size).contains(&pages) {
        ballot.group(&group)?;
    }
    ballot.flush()?;
    drop(ballot);
    count(votes.into_sorted()?, min_votes)
}

/// Where votes go: a batch, handed to the runs when full.
struct Ballot<'a> {
    votes: &'a Runs<u64>,
    batch: Vec<u64>,
}

impl Ballot<'_> {
    /// The votes of one group: every two splits with the same relative path under different
    /// prefixes (sorted by prefix, so the pair comes out ordered).
    fn group(&mut self, group: &[VoteRecord]) -> Result<(), DedupError> {
        for same_path in group.chunk_by(|x, y| (x.tail, x.rest) == (y.tail, y.rest)) {
            for (n, x) in same_path.iter().enumerate() {
                for y in &same_path[n + 1..] {
                    if x.prefix != y.prefix {
                        self.batch.push(pair_word(x.prefix, y.prefix));
                    }
                }
                if self.batch.len() >= self.votes.batch() {
                    self.flush()?;
                }
            }
        }
        Ok(())
    }

    /// Hands the batch to the runs.
    fn flush(&mut self) -> Result<(), DedupError> {
        Ok(self.votes.add(&mut self.batch)?)
    }
}

/// The distinct words of `votes` (ascending) that occur at least `min_votes` times.
fn count(votes: Sorted<u64>, min_votes: u64) -> Result<Vec<u64>, DedupError> {
    let mut found = Vec::new();
    let mut current: Option<(u64, u64)> = None;
    for vote in votes {
        let vote = vote?;
        match &mut current {
            Some((word, n)) if *word == vote => *n += 1,
            _ => {
                if let Some((word, n)) = current.replace((vote, 1)) {
                    if n >= min_votes {
                        found.push(word);
                    }
                }
            }
        }
    }
    if let Some((word, n)) = current {
        if n >= min_votes {
            found.push(word);
        }
    }
    Ok(found)
}
