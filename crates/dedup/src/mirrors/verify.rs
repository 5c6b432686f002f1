//! The verification pass of mirror detection: a join on the relative path of every page under
//! every prefix, counting for each candidate pair the paths both prefixes have and those with
//! the same content.

use neardup_index::Sorted;

use super::records::{pair_of, pair_word, PathRecord};
use crate::error::DedupError;

/// What the join counts.
pub(super) struct Verified {
    /// Per candidate (in the order given): (shared paths, shared paths with the same key).
    pub overlaps: Vec<(usize, usize)>,
    /// Per prefix: its distinct relative paths.
    pub paths: Vec<u32>,
}

/// Joins `records` (sorted by relative path, prefix, page) on the relative path. The first page
/// of a path under a prefix gives its key (later ones are the same URL again); only the
/// candidates' prefixes of one path are held at a time.
pub(super) fn verify(
    records: Sorted<PathRecord>,
    candidates: &[u64],
    prefixes: usize,
) -> Result<Verified, DedupError> {
    let mut is_candidate = vec![false; prefixes];
    for &word in candidates {
        let (a, b) = pair_of(word);
        is_candidate[a as usize] = true;
        is_candidate[b as usize] = true;
    }
    let mut verified = Verified {
        overlaps: vec![(0, 0); candidates.len()],
        paths: vec![0; prefixes],
    };
    // The candidates' prefixes under the current path, with their key, by prefix.
    let mut under: Vec<(u32, u64)> = Vec::new();
    let (mut previous, mut path) = (None, None);
    for record in records {
        let record = record?;
        if previous == Some((record.rest, record.prefix)) {
            continue;
        }
        previous = Some((record.rest, record.prefix));
        verified.paths[record.prefix as usize] += 1;
        if path != Some(record.rest) {
            count_path(&under, candidates, &mut verified.overlaps);
            under.clear();
            path = Some(record.rest);
        }
        if is_candidate[record.prefix as usize] {
            under.push((record.prefix, record.key));
        }
    }
    count_path(&under, candidates, &mut verified.overlaps);
    Ok(verified)
}

/// Counts one path for every candidate pair whose prefixes both have it.
fn count_path(under: &[(u32, u64)], candidates: &[u64], overlaps: &mut [(usize, usize)]) {
    if under.len() < 2 {
        return;
    }
    for (n, &(a, a_key)) in under.iter().enumerate() {
        let first = candidates.partition_point(|&w| w < pair_word(a, 0));
        let end = candidates.partition_point(|&w| w <= pair_word(a, u32::MAX));
        for (i, &word) in candidates[first..end].iter().enumerate() {
            let b = pair_of(word).1;
            if let Ok(at) = under[n + 1..].binary_search_by_key(&b, |&(p, _)| p) {
                let overlap = &mut overlaps[first + i];
                overlap.0 += 1;
                overlap.1 += usize::from(a_key == under[n + 1 + at].1);
            }
        }
    }
}
