//! [`RankedPositions`]: a set of document positions, added in ascending order, that gives each
//! one's rank among them (its slot in a list kept beside it) in one cache line: a bit a position
//! up to the last added, and the count of set bits before each line (a rank directory), about
//! 1.14 bits a position.
//!
//! It replaced a table of a `u32` slot a position (32 bits a document, whatever the share of
//! documents stored), and is as quick as that table for a look-up: one line read, where a
//! binary search over the positions stored misses the cache a dozen times.

/// Positions a [`Line`] covers: its seven words of bits.
const PER_LINE: u32 = 7 * 64;

/// One cache line: the count of positions in the lines before it, and seven words of bits.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line {
    before: u64,
    words: [u64; 7],
}

/// Positions added in ascending order, each one's rank among them found in one cache line.
#[derive(Debug, Default)]
pub(crate) struct RankedPositions {
    lines: Vec<Line>,
    len: u32,
    /// One past the last position added (0 when none was).
    end: u64,
}

impl RankedPositions {
    /// An empty set, its lines reserved for positions below `end` (a hint: it grows past it).
    pub(crate) fn with_end(end: u32) -> Self {
        RankedPositions {
            lines: Vec::with_capacity(end.div_ceil(PER_LINE) as usize),
            len: 0,
            end: 0,
        }
    }

    /// Adds `position`, which must be above every position added before (else `false`,
    /// nothing added); its rank is the number of positions added before it.
    pub(crate) fn push(&mut self, position: u32) -> bool {
        if u64::from(position) < self.end {
            return false;
        }
        let line = (position / PER_LINE) as usize;
        while self.lines.len() <= line {
            self.lines.push(Line {
                before: u64::from(self.len),
                words: [0; 7],
            });
        }
        let within = position % PER_LINE;
        self.lines[line].words[(within / 64) as usize] |= 1 << (within % 64);
        self.len += 1;
        self.end = u64::from(position) + 1;
        true
    }

    /// The rank of `position` among the positions added (how many were added before it), or
    /// `None` if it was not added.
    pub(crate) fn rank(&self, position: u32) -> Option<u32> {
        let line = self.lines.get((position / PER_LINE) as usize)?;
        let within = position % PER_LINE;
        let (word, bit) = ((within / 64) as usize, within % 64);
        if line.words[word] >> bit & 1 == 0 {
            return None;
        }
        let full: u32 = line.words[..word].iter().map(|w| w.count_ones()).sum();
        let below = (line.words[word] & ((1u64 << bit) - 1)).count_ones();
        Some(line.before as u32 + full + below)
    }

    /// Bytes held (the lines reserved).
    pub(crate) fn held_bytes(&self) -> u64 {
        (self.lines.capacity() * std::mem::size_of::<Line>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_line_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Line>(), 64);
        assert_eq!(std::mem::align_of::<Line>(), 64);
    }

    #[test]
    fn positions_out_of_order_are_refused() {
        let mut ranked = RankedPositions::default();
        assert!(ranked.push(10));
        assert!(!ranked.push(10), "a repeat");
        assert!(!ranked.push(3), "below the last");
        assert!(ranked.push(u32::MAX - 1));
        assert_eq!(ranked.rank(10), Some(0));
        assert_eq!(ranked.rank(u32::MAX - 1), Some(1));
        assert_eq!(ranked.rank(u32::MAX), None);
    }

    proptest! {
        /// Every position's rank is its index in the ascending list of positions added, and
        /// every other position has none: gaps within a word, across words and lines, at
        /// every offset of a line.
        #[test]
        fn ranks_are_indexes_in_the_sorted_positions(
            gaps in proptest::collection::vec(prop_oneof![1u32..3, 1u32..70, 400u32..1500], 0..800),
            first in 0u32..1000,
        ) {
            let positions: Vec<u32> = gaps
                .iter()
                .scan(first, |at, gap| { let p = *at; *at += gap; Some(p) })
                .collect();
            let end = positions.last().map_or(0, |p| p + 1);
            let mut ranked = RankedPositions::with_end(end / 2);
            for &p in &positions {
                prop_assert!(ranked.push(p));
            }
            for probe in 0..end + 2 * PER_LINE {
                let want = positions.binary_search(&probe).ok().map(|i| i as u32);
                prop_assert_eq!(ranked.rank(probe), want, "position {}", probe);
            }
        }
    }
}
