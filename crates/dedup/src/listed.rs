//! [`Listed`]: the removals or accepted pairs of a run, held within a share of the budget.
//!
//! A decided pair is the same shape whichever list it is in (a removal is the removed document
//! and its kept one, an accepted pair its two documents): two positions, the kind, the SimHash
//! distance and the evidence, 27 bytes on disk ([`Row`]), 32 in memory. A [`ListBuilder`] takes
//! them in any order (from several threads), in memory up to its share and as sorted runs on
//! disk beyond ([`neardup_index::Runs`]); [`ListBuilder::finish`] merges them once, ascending by
//! `(first, second, kind)` with one row for each `(first, second)`, and the [`Listed`] it
//! makes is read back in that order as often as a caller needs, from memory or from its one
//! file (an anonymous temporary file: nothing is left behind however the process ends).

use std::fs::File;
use std::io::{BufWriter, Write};

use neardup_index::{RunRecord, Runs, SpillDir};

use crate::budget::Budget;
use crate::engine::{FoundPair, Removal};
use crate::error::DedupError;
use crate::policy::{Evidence, Kind, Measure};
use crate::sets::read_at;

/// Bytes read from a list's file at a time.
const READ_BLOCK: usize = 1 << 16;

/// A decided pair as a list holds it: ordered by `(first, second, kind)`, the evidence's
/// numbers as their bits (exactly what was decided, and totally ordered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Row {
    first: u32,
    second: u32,
    kind: u8,
    distance: u8,
    measure: u8,
    value: u64,
    threshold: u64,
}

impl RunRecord for Row {
    const BYTES: usize = 27;

    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.first.to_le_bytes());
        out[4..8].copy_from_slice(&self.second.to_le_bytes());
        out[8] = self.kind;
        out[9] = self.distance;
        out[10] = self.measure;
        out[11..19].copy_from_slice(&self.value.to_le_bytes());
        out[19..27].copy_from_slice(&self.threshold.to_le_bytes());
    }

    fn decode(bytes: &[u8]) -> Self {
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
        let long = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        Row {
            first: word(0),
            second: word(4),
            kind: bytes[8],
            distance: bytes[9],
            measure: bytes[10],
            value: long(11),
            threshold: long(19),
        }
    }
}

const KINDS: [Kind; 3] = [Kind::Exact, Kind::Near, Kind::Url];
const MEASURES: [Measure; 7] = [
    Measure::Digest,
    Measure::SimhashDistance,
    Measure::MinhashEstimate,
    Measure::Jaccard,
    Measure::Containment,
    Measure::LengthRatio,
    Measure::Url,
];

impl Row {
    /// The row of a pair of `first` and `second`.
    pub(crate) fn new(
        first: u32,
        second: u32,
        kind: Kind,
        distance: u32,
        evidence: Evidence,
    ) -> Row {
        let code = |kind| KINDS.iter().position(|k| *k == kind).unwrap_or(0) as u8;
        let measure = MEASURES
            .iter()
            .position(|m| *m == evidence.measure)
            .unwrap_or(0) as u8;
        Row {
            first,
            second,
            kind: code(kind),
            // At most 128 bits apart.
            distance: distance.min(u32::from(u8::MAX)) as u8,
            measure,
            value: evidence.value.to_bits(),
            threshold: evidence.threshold.to_bits(),
        }
    }

    /// The first position.
    pub(crate) fn first(&self) -> u32 {
        self.first
    }

    /// The second position.
    pub(crate) fn second(&self) -> u32 {
        self.second
    }

    /// The kind and evidence, or an error for bytes no row was written as.
    pub(crate) fn parts(&self) -> Result<(Kind, Evidence), DedupError> {
        let (Some(&kind), Some(&measure)) = (
            KINDS.get(usize::from(self.kind)),
            MEASURES.get(usize::from(self.measure)),
        ) else {
            return Err(DedupError::MissingData(
                "a list of decisions read back from its temporary file is damaged".into(),
            ));
        };
        let evidence = Evidence {
            measure,
            value: f64::from_bits(self.value),
            threshold: f64::from_bits(self.threshold),
        };
        Ok((kind, evidence))
    }
}

/// The share of the budget each list of a run holds before it writes to disk: a sixteenth.
pub(crate) fn list_share(budget: &Budget) -> u64 {
    budget.memory / 16
}

/// What a list holds: a decided pair that reads back from its [`Row`].
pub(crate) trait ListItem: Sized {
    /// Its row.
    fn row(&self) -> Row;
    /// The item a row holds.
    fn from_row(row: Row) -> Result<Self, DedupError>;
}

impl ListItem for Removal {
    fn row(&self) -> Row {
        Row::new(self.index, self.of, self.kind, self.distance, self.evidence)
    }

    fn from_row(row: Row) -> Result<Self, DedupError> {
        let (kind, evidence) = row.parts()?;
        Ok(Removal {
            index: row.first,
            of: row.second,
            kind,
            distance: u32::from(row.distance),
            evidence,
        })
    }
}

impl ListItem for FoundPair {
    fn row(&self) -> Row {
        Row::new(self.a, self.b, self.kind, self.distance, self.evidence)
    }

    fn from_row(row: Row) -> Result<Self, DedupError> {
        let (kind, evidence) = row.parts()?;
        Ok(FoundPair {
            a: row.first,
            b: row.second,
            kind,
            distance: u32::from(row.distance),
            evidence,
        })
    }
}

/// The items of a list as they are decided, in any order, from any thread.
pub(crate) struct ListBuilder<T> {
    runs: Runs<Row>,
    spill: SpillDir,
    item: std::marker::PhantomData<fn() -> T>,
}

impl<T: ListItem> ListBuilder<T> {
    /// An empty list holding up to its share of `budget` ([`list_share`]) before it writes
    /// sorted runs to the budget's folder.
    pub(crate) fn within(budget: &Budget) -> Self {
        let spill = SpillDir::new(&budget.spill_dir());
        ListBuilder {
            runs: Runs::new(spill.clone(), list_share(budget)),
            spill,
            item: std::marker::PhantomData,
        }
    }

    /// How many items a caller gathers before [`ListBuilder::add`].
    pub(crate) fn batch(&self) -> usize {
        self.runs.batch()
    }

    /// Adds `batch` (emptied).
    pub(crate) fn add(&self, batch: &mut Vec<T>) -> Result<(), DedupError> {
        let mut rows: Vec<Row> = batch.drain(..).map(|item| item.row()).collect();
        Ok(self.runs.add(&mut rows)?)
    }

    /// Adds every item of `items`, a batch at a time; stops at the first error.
    pub(crate) fn extend(
        &self,
        items: impl IntoIterator<Item = Result<T, DedupError>>,
    ) -> Result<(), DedupError> {
        let mut batch = Vec::with_capacity(self.batch());
        for item in items {
            batch.push(item?);
            if batch.len() >= self.batch() {
                self.add(&mut batch)?;
            }
        }
        self.add(&mut batch)
    }

    /// The list, ascending, one item for each `(first, second)` (the one of the smallest kind).
    pub(crate) fn finish(self) -> Result<Listed<T>, DedupError> {
        let ListBuilder { runs, spill, .. } = self;
        let mut last: Option<(u32, u32)> = None;
        let mut distinct = |row: &Result<Row, neardup_index::SpillError>| match row {
            Ok(row) => {
                let key = Some((row.first, row.second));
                let new = last != key;
                last = key;
                new
            }
            Err(_) => true,
        };
        let rows = match runs.into_sorted()? {
            neardup_index::Sorted::Memory(rows) => {
                let rows: Vec<Row> = rows.map(Ok).filter(&mut distinct).flatten().collect();
                Held::Memory(rows)
            }
            merged => {
                let file = tempfile::tempfile_in(spill.dir())
                    .map_err(|e| DedupError::spill("cannot create a list's file", e))?;
                let mut out = BufWriter::with_capacity(READ_BLOCK, file);
                let mut encoded = [0u8; Row::BYTES];
                let mut len = 0u64;
                for row in merged.filter(&mut distinct) {
                    row?.encode(&mut encoded);
                    out.write_all(&encoded)
                        .map_err(|e| DedupError::spill("cannot write a list", e))?;
                    len += 1;
                }
                let file = out
                    .into_inner()
                    .map_err(|e| DedupError::spill("cannot write a list", e.into_error()))?;
                spill.count(len * Row::BYTES as u64);
                Held::File { file, len }
            }
        };
        Ok(Listed {
            rows,
            spilled_bytes: spill.written(),
            decode: T::from_row,
        })
    }
}

/// Where a list's rows are.
enum Held {
    Memory(Vec<Row>),
    File { file: File, len: u64 },
}

/// A run's removals or accepted pairs, ascending by their two positions: in memory, or in a
/// temporary file when they did not fit their share of the budget; read with
/// [`Listed::iter`] as often as needed.
pub struct Listed<T> {
    rows: Held,
    spilled_bytes: u64,
    decode: fn(Row) -> Result<T, DedupError>,
}

impl<T> Listed<T> {
    /// How many items the list holds.
    pub fn len(&self) -> usize {
        match &self.rows {
            Held::Memory(rows) => rows.len(),
            Held::File { len, .. } => *len as usize,
        }
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the list wrote to disk (its runs and its file).
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    /// The items, ascending.
    pub fn iter(&self) -> impl Iterator<Item = Result<T, DedupError>> + '_ {
        let rows: Box<dyn Iterator<Item = Result<Row, DedupError>> + '_> = match &self.rows {
            Held::Memory(rows) => Box::new(rows.iter().copied().map(Ok)),
            Held::File { file, len } => Box::new(FileRows::new(file, *len)),
        };
        rows.map(|row| (self.decode)(row?))
    }

    /// Every item, in memory.
    pub fn to_vec(&self) -> Result<Vec<T>, DedupError> {
        self.iter().collect()
    }
}

/// The rows of a list's file, read a block at a time at their own offset (so that several
/// readers of one list do not share a position).
struct FileRows<'a> {
    file: &'a File,
    left: u64,
    offset: u64,
    block: Vec<u8>,
    at: usize,
}

impl<'a> FileRows<'a> {
    fn new(file: &'a File, len: u64) -> Self {
        FileRows {
            file,
            left: len,
            offset: 0,
            block: Vec::new(),
            at: 0,
        }
    }

    fn refill(&mut self) -> Result<(), DedupError> {
        let rows = (READ_BLOCK / Row::BYTES) as u64;
        let bytes = self.left.min(rows) as usize * Row::BYTES;
        self.block.resize(bytes, 0);
        read_at(self.file, &mut self.block, self.offset)
            .map_err(|e| DedupError::spill("cannot read a list back", e))?;
        self.offset += bytes as u64;
        self.at = 0;
        Ok(())
    }
}

impl Iterator for FileRows<'_> {
    type Item = Result<Row, DedupError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        if self.at == self.block.len() {
            if let Err(e) = self.refill() {
                self.left = 0;
                return Some(Err(e));
            }
        }
        let row = Row::decode(&self.block[self.at..self.at + Row::BYTES]);
        self.at += Row::BYTES;
        self.left -= 1;
        Some(Ok(row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` removals in a scrambled order, some of them twice.
    fn scrambled(count: u32) -> Vec<Removal> {
        let kinds = [Kind::Exact, Kind::Near, Kind::Url];
        (0..count)
            .map(|i| i.wrapping_mul(2_654_435_761) % count)
            .chain((0..count).step_by(7))
            .map(|index| Removal {
                index,
                of: index / 3,
                kind: kinds[index as usize % 3],
                distance: index % 65,
                evidence: Evidence {
                    measure: MEASURES[index as usize % MEASURES.len()],
                    value: f64::from(index) / 7.0,
                    threshold: 0.9,
                },
            })
            .collect()
    }

    /// Added from two threads beyond its share (several runs on disk), a list reads back
    /// ascending, one item a position, the same twice, equal to the items sorted in memory.
    #[test]
    fn a_list_beyond_its_share_reads_back_sorted_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(Budget::MIN_MEMORY, Some(dir.path().into())).unwrap();
        let items = scrambled(200_000);
        let list = ListBuilder::within(&budget);
        std::thread::scope(|scope| {
            for half in items.chunks(items.len() / 2 + 1) {
                let list = &list;
                scope.spawn(move || {
                    for chunk in half.chunks(list.batch()) {
                        list.add(&mut chunk.to_vec()).unwrap();
                    }
                });
            }
        });
        let listed = list.finish().unwrap();
        assert!(listed.spilled_bytes() > 0, "the list did not go to disk");
        let mut expected = items.clone();
        expected.sort_by_key(|r| r.index);
        expected.dedup_by_key(|r| r.index);
        assert_eq!(listed.len(), expected.len());
        assert_eq!(listed.to_vec().unwrap(), expected);
        assert_eq!(listed.to_vec().unwrap(), expected);
        drop(listed);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Pairs of the same two documents are listed once, with the smallest kind.
    #[test]
    fn a_pair_listed_twice_keeps_its_first_kind() {
        let budget = Budget::default();
        let pair = |kind, evidence| FoundPair {
            a: 3,
            b: 9,
            kind,
            distance: 2,
            evidence,
        };
        let list = ListBuilder::within(&budget);
        list.add(&mut vec![
            pair(Kind::Url, Evidence::URL),
            pair(Kind::Exact, Evidence::EXACT),
        ])
        .unwrap();
        let listed = list.finish().unwrap();
        assert_eq!(
            listed.to_vec().unwrap(),
            [pair(Kind::Exact, Evidence::EXACT)]
        );
    }
}
