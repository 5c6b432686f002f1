//! The records mirror detection writes per page, as sorted runs ([`neardup_index::Runs`]): held
//! in memory while they fit their share of the budget, on disk beyond it.

use neardup_index::RunRecord;

/// One split of a page (its prefix at one depth), for the votes: ordered by the group of pages
/// that vote together (content key, last segment), then by the relative path (its number of
/// segments and its hash), then by prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct VoteRecord {
    /// The page's content key.
    pub key: u64,
    /// The hash of the page's last path segment.
    pub last_segment: u64,
    /// Path segments in the relative path (the page's segments less the depth).
    pub tail: u32,
    /// The hash of the relative path.
    pub rest: u64,
    /// The prefix (interned id).
    pub prefix: u32,
    /// Whether this is the page's first split (depth 0: the host): counts the group's pages.
    pub first: bool,
}

/// A `VoteRecord`: key, last segment, tail, rest, prefix, first (33 bytes, little-endian).
impl RunRecord for VoteRecord {
    const BYTES: usize = 33;

    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.key.to_le_bytes());
        out[8..16].copy_from_slice(&self.last_segment.to_le_bytes());
        out[16..20].copy_from_slice(&self.tail.to_le_bytes());
        out[20..28].copy_from_slice(&self.rest.to_le_bytes());
        out[28..32].copy_from_slice(&self.prefix.to_le_bytes());
        out[32] = u8::from(self.first);
    }

    fn decode(bytes: &[u8]) -> Self {
        VoteRecord {
            key: u64_at(bytes, 0),
            last_segment: u64_at(bytes, 8),
            tail: u32_at(bytes, 16),
            rest: u64_at(bytes, 20),
            prefix: u32_at(bytes, 28),
            first: bytes[32] != 0,
        }
    }
}

/// One split of a page, for verification: ordered by relative path, then prefix, then page
/// (the order pages were added: the first page of a path under a prefix gives its key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct PathRecord {
    /// The hash of the relative path.
    pub rest: u64,
    /// The prefix (interned id).
    pub prefix: u32,
    /// The page's number, in the order pages were added.
    pub page: u32,
    /// The page's content key.
    pub key: u64,
}

/// A `PathRecord`: rest, prefix, page, key (24 bytes, little-endian).
impl RunRecord for PathRecord {
    const BYTES: usize = 24;

    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.rest.to_le_bytes());
        out[8..12].copy_from_slice(&self.prefix.to_le_bytes());
        out[12..16].copy_from_slice(&self.page.to_le_bytes());
        out[16..24].copy_from_slice(&self.key.to_le_bytes());
    }

    fn decode(bytes: &[u8]) -> Self {
        PathRecord {
            rest: u64_at(bytes, 0),
            prefix: u32_at(bytes, 8),
            page: u32_at(bytes, 12),
            key: u64_at(bytes, 16),
        }
    }
}

/// A pair of prefix ids as one word (`a` high, `b` low): a vote's record, sorted by `(a, b)`.
pub(super) fn pair_word(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// The prefix ids of a [`pair_word`].
pub(super) fn pair_of(word: u64) -> (u32, u32) {
    ((word >> 32) as u32, word as u32)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default())
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_as_written() {
        let vote = VoteRecord {
            key: u64::MAX - 3,
            last_segment: 7,
            tail: 3,
            rest: 1 << 60,
            prefix: 42,
            first: true,
        };
        let mut bytes = [0u8; VoteRecord::BYTES];
        vote.encode(&mut bytes);
        assert_eq!(VoteRecord::decode(&bytes), vote);
        let path = PathRecord {
            rest: 9,
            prefix: u32::MAX,
            page: 5,
            key: 1 << 63,
        };
        let mut bytes = [0u8; PathRecord::BYTES];
        path.encode(&mut bytes);
        assert_eq!(PathRecord::decode(&bytes), path);
        assert_eq!(pair_of(pair_word(3, u32::MAX)), (3, u32::MAX));
    }
}
