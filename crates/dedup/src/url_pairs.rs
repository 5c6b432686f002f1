//! [`UrlPairs`]: the pairs of documents that share a canonical URL (`--url-dedup`), accepted
//! without verification, held as 9 bytes a pair: the two positions and their SimHash distance.
//! A pair's [`FoundPair`] (40 bytes) is made when it is read: every such pair's kind and evidence
//! are the same, so holding them whole held 31 bytes a pair for nothing (80 MB of 3 million
//! records sharing URLs, BENCHMARKS.md, issue 17 step 20).

use crate::documents::Documents;
use crate::engine::{distance, FoundPair};
use crate::error::DedupError;
use crate::listed::ListBuilder;
use crate::policy::{Evidence, Kind};

/// The pairs of documents sharing a canonical URL, ascending by `(a, b)` with `a < b`, each
/// once.
#[derive(Debug, Default)]
pub(crate) struct UrlPairs {
    links: Vec<(u32, u32)>,
    /// The SimHash distance of each pair (at most 128).
    distances: Vec<u8>,
}

impl UrlPairs {
    /// The pairs of `links` (each two documents, in either order), their distances read from
    /// `documents` (whose rows must be held or gathered).
    pub(crate) fn new(documents: &Documents, mut links: Vec<(u32, u32)>) -> Self {
        for link in &mut links {
            *link = (link.0.min(link.1), link.0.max(link.1));
        }
        links.sort_unstable();
        links.dedup();
        let distances = links
            .iter()
            .map(|&(a, b)| {
                let d = distance(documents, a, b);
                // A SimHash is 64 or 128 bits wide: a distance fits a byte.
                u8::try_from(d).unwrap_or(u8::MAX)
            })
            .collect();
        UrlPairs { links, distances }
    }

    /// How many pairs there are.
    pub(crate) fn len(&self) -> usize {
        self.links.len()
    }

    /// True when there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The pair at `i`.
    pub(crate) fn get(&self, i: u32) -> FoundPair {
        let (a, b) = self.links[i as usize];
        FoundPair {
            a,
            b,
            kind: Kind::Url,
            distance: u32::from(self.distances[i as usize]),
            evidence: Evidence::URL,
        }
    }

    /// Every pair, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = FoundPair> + '_ {
        (0..self.len() as u32).map(|i| self.get(i))
    }

    /// Whether `a` and `b` (`a < b`) are a pair.
    pub(crate) fn contains(&self, a: u32, b: u32) -> bool {
        self.links.binary_search(&(a, b)).is_ok()
    }

    /// Adds every pair to `list`, a batch at a time.
    pub(crate) fn list_into(&self, list: &ListBuilder<FoundPair>) -> Result<(), DedupError> {
        let mut batch = Vec::with_capacity(list.batch().min(self.len()));
        for pair in self.iter() {
            batch.push(pair);
            if batch.len() >= list.batch() {
                list.add(&mut batch)?;
            }
        }
        list.add(&mut batch)
    }

    /// Bytes held.
    pub(crate) fn held_bytes(&self) -> u64 {
        (self.links.capacity() * 8 + self.distances.capacity()) as u64
    }
}
