//! [`Rows`]: each document's fixed columns (SimHash, text length, fetch time), within a share
//! of the budget.
//!
//! The engine reads these columns of every document in two places only: the candidate search
//! reads the SimHash of every unit, once, in position order; the keep order of the unit pass
//! reads every length and fetch time once. Everything else (the exact pairs, the walk, the
//! removals) reads the rows of the documents that have a duplicate or a neighbour, which a
//! phase knows before it starts. So the rows are held in memory, in columns, while they fit an
//! eighth of the budget; beyond it every later row goes, in position order, to a temporary
//! file (25 bytes a row at 64 bits, 33 at 128). A scan reads the file front to back; a phase
//! that needs some rows [gathers](Rows::gather) them first into a sparse copy (their positions
//! and their columns), which is what the engine holds of a spilled document from then on.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use neardup_core::Simhash;

use crate::budget::{spill_file, Budget};
use crate::error::DedupError;

/// Bytes of buffer for writing and reading the spilled rows.
const BUFFER: usize = 1 << 20;

/// One document's fixed columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    /// Its SimHash.
    pub(crate) simhash: Simhash,
    /// The length of its text in bytes.
    pub(crate) bytes: u64,
    /// When it was fetched, as Unix seconds, if known.
    pub(crate) fetched_at: Option<i64>,
}

/// SimHash values at the run's one width.
#[derive(Debug, Clone, Default)]
enum Simhashes {
    #[default]
    Empty,
    B64(Vec<u64>),
    B128(Vec<u128>),
}

/// Rows in columns, by index.
#[derive(Debug, Clone, Default)]
struct Columns {
    simhashes: Simhashes,
    bytes: Vec<u64>,
    /// Empty until a row has a fetch time, `None` for the rows before it.
    fetched_at: Vec<Option<i64>>,
}

impl Columns {
    fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Appends `row`; false (nothing added) if its SimHash width differs from the first row's.
    fn push(&mut self, row: Row) -> bool {
        match (&mut self.simhashes, row.simhash) {
            (Simhashes::Empty, Simhash::B64(v)) => self.simhashes = Simhashes::B64(vec![v]),
            (Simhashes::Empty, Simhash::B128(v)) => self.simhashes = Simhashes::B128(vec![v]),
            (Simhashes::B64(values), Simhash::B64(v)) => values.push(v),
            (Simhashes::B128(values), Simhash::B128(v)) => values.push(v),
            _ => return false,
        }
        let at = self.bytes.len();
        self.bytes.push(row.bytes);
        match row.fetched_at {
            Some(time) => {
                self.fetched_at.resize(at, None);
                self.fetched_at.push(Some(time));
            }
            None if !self.fetched_at.is_empty() => self.fetched_at.push(None),
            None => {}
        }
        true
    }

    /// [`Columns::push`], the columns reserved for `total` rows at the first (so that they
    /// are allocated once, at their size).
    fn push_reserving(&mut self, row: Row, total: usize) -> bool {
        let first = self.len() == 0;
        let added = self.push(row);
        if first && added {
            let more = total.saturating_sub(1);
            match &mut self.simhashes {
                Simhashes::Empty => {}
                Simhashes::B64(v) => v.reserve_exact(more),
                Simhashes::B128(v) => v.reserve_exact(more),
            }
            self.bytes.reserve_exact(more);
        }
        added
    }

    /// Row `at` (which exists).
    fn get(&self, at: usize) -> Row {
        Row {
            simhash: self.simhash(at),
            bytes: self.bytes[at],
            fetched_at: self.fetched_at(at),
        }
    }

    /// The SimHash of row `at` (one column read: the walk reads rows at random, where each
    /// column read is a cache miss).
    fn simhash(&self, at: usize) -> Simhash {
        match &self.simhashes {
            Simhashes::B64(v) => Simhash::B64(v[at]),
            Simhashes::B128(v) => Simhash::B128(v[at]),
            Simhashes::Empty => unreachable!("a row of empty columns"),
        }
    }

    fn fetched_at(&self, at: usize) -> Option<i64> {
        self.fetched_at.get(at).copied().flatten()
    }

    /// Gives back the room reserved for rows that will not come (the held columns stop growing
    /// once rows spill).
    fn shrink_to_fit(&mut self) {
        match &mut self.simhashes {
            Simhashes::Empty => {}
            Simhashes::B64(v) => v.shrink_to_fit(),
            Simhashes::B128(v) => v.shrink_to_fit(),
        }
        self.bytes.shrink_to_fit();
        self.fetched_at.shrink_to_fit();
    }

    fn held_bytes(&self) -> u64 {
        let simhashes = match &self.simhashes {
            Simhashes::Empty => 0,
            Simhashes::B64(v) => v.capacity() * 8,
            Simhashes::B128(v) => v.capacity() * 16,
        };
        (simhashes + self.bytes.capacity() * 8 + self.fetched_at.capacity() * 16) as u64
    }
}

/// The rows written to disk, from position `from` on.
struct Spilled {
    file: BufWriter<tempfile::NamedTempFile>,
    from: u32,
    /// Bytes of one row on disk.
    width: usize,
}

/// Every document's [`Row`], by position (see the module documentation).
pub(crate) struct Rows {
    /// The rows of positions `0..held.len()`.
    held: Columns,
    /// The rows after them, once the held rows reached `cap`.
    spilled: Option<Spilled>,
    len: u32,
    cap: u64,
    dir: PathBuf,
    /// Spilled rows read back for a phase: their positions, ascending, and their columns.
    gathered_at: Vec<u32>,
    gathered: Columns,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows")
            .field("len", &self.len)
            .field("held", &self.held.len())
            .field("gathered", &self.gathered_at.len())
            .finish()
    }
}

impl Rows {
    /// No rows yet; held up to an eighth of `budget`, spilled to its folder beyond.
    pub(crate) fn within(budget: &Budget) -> Self {
        Self::new(budget.memory / 8, budget.spill_dir())
    }

    /// No rows yet; held up to `cap` bytes, spilled to `dir` beyond.
    pub(crate) fn new(cap: u64, dir: PathBuf) -> Self {
        Rows {
            held: Columns::default(),
            spilled: None,
            len: 0,
            cap,
            dir,
            gathered_at: Vec::new(),
            gathered: Columns::default(),
        }
    }

    /// How many rows there are.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Appends the next document's row; `Ok(false)` (nothing added) if its SimHash width
    /// differs from the first row's.
    pub(crate) fn push(&mut self, row: Row) -> Result<bool, DedupError> {
        if self.len == u32::MAX {
            return Err(DedupError::InvalidOption(
                "more than 4,294,967,295 documents".into(),
            ));
        }
        if self.spilled.is_none() && self.held.len() > 0 && self.held.held_bytes() >= self.cap {
            self.spill_from_here(row.simhash)?;
        }
        let added = match &mut self.spilled {
            None => self.held.push(row),
            Some(spilled) => write_row(spilled, row)?,
        };
        self.len += u32::from(added);
        Ok(added)
    }

    /// Opens the spill file: every row from this one on goes there.
    fn spill_from_here(&mut self, first: Simhash) -> Result<(), DedupError> {
        let file = spill_file(&self.dir)?;
        self.spilled = Some(Spilled {
            file: BufWriter::with_capacity(BUFFER, file),
            from: self.len,
            width: row_width(first),
        });
        self.held.shrink_to_fit();
        Ok(())
    }

    /// The SimHash of row `i`, held, or gathered before (see [`Rows::locate`]).
    pub(crate) fn simhash(&self, i: u32) -> Simhash {
        let (columns, at) = self.locate(i);
        columns.simhash(at)
    }

    /// The text length of row `i`, held, or gathered before (see [`Rows::locate`]).
    pub(crate) fn bytes(&self, i: u32) -> u64 {
        let (columns, at) = self.locate(i);
        columns.bytes[at]
    }

    /// The fetch time of row `i`, held, or gathered before (see [`Rows::locate`]).
    pub(crate) fn fetched_at(&self, i: u32) -> Option<i64> {
        let (columns, at) = self.locate(i);
        columns.fetched_at(at)
    }

    /// The columns that hold row `i` (held, or gathered before), and its index in them.
    ///
    /// # Panics
    /// If row `i` was spilled and not [gathered](Rows::gather): the engine gathers what each
    /// phase reads before the phase starts, so this is a defect of the engine, never of input.
    fn locate(&self, i: u32) -> (&Columns, usize) {
        if (i as usize) < self.held.len() {
            return (&self.held, i as usize);
        }
        match self.gathered_at.binary_search(&i) {
            Ok(at) => (&self.gathered, at),
            Err(_) => panic!("row {i} was spilled and not gathered before it was read"),
        }
    }

    /// Whether every row is in memory (held, none spilled).
    pub(crate) fn all_held(&self) -> bool {
        self.spilled.is_none()
    }

    /// Reads back the spilled rows among `positions` (ascending), so that the readers find
    /// them; rows gathered before stay.
    ///
    /// The rows read go straight into columns reserved once for them (a position and a row's
    /// columns: 20 bytes at 64 bits without fetch times), merged with those gathered before
    /// when there are any: gathering the members of 40 million exact copies held their rows
    /// three times over as `(position, Row)` tuples of 40 bytes, 6 GB at its peak.
    pub(crate) fn gather(&mut self, positions: &[u32]) -> Result<(), DedupError> {
        self.flush()?;
        let held = self.held.len() as u32;
        let len = self.len;
        let gathered_at = std::mem::take(&mut self.gathered_at);
        let wanted = || {
            positions
                .iter()
                .copied()
                .filter(|&i| i >= held && i < len && gathered_at.binary_search(&i).is_err())
        };
        let count = wanted().count();
        if count == 0 {
            self.gathered_at = gathered_at;
            return Ok(());
        }
        let mut found_at = Vec::with_capacity(count);
        let mut found = Columns::default();
        let read = self.scan(wanted(), |i, row| {
            found_at.push(i);
            found.push_reserving(row, count);
            Ok(())
        });
        if let Err(e) = read {
            self.gathered_at = gathered_at;
            return Err(e);
        }
        if gathered_at.is_empty() {
            self.gathered_at = found_at;
            self.gathered = found;
            return Ok(());
        }
        let old = std::mem::take(&mut self.gathered);
        let total = gathered_at.len() + found_at.len();
        let mut merged_at = Vec::with_capacity(total);
        let mut merged = Columns::default();
        let (mut a, mut b) = (0, 0);
        while a < gathered_at.len() || b < found_at.len() {
            let from_old =
                b == found_at.len() || (a < gathered_at.len() && gathered_at[a] < found_at[b]);
            if from_old {
                merged_at.push(gathered_at[a]);
                merged.push_reserving(old.get(a), total);
                a += 1;
            } else {
                merged_at.push(found_at[b]);
                merged.push_reserving(found.get(b), total);
                b += 1;
            }
        }
        self.gathered_at = merged_at;
        self.gathered = merged;
        Ok(())
    }

    /// Hands the rows at `positions` (ascending, each below [`Rows::len`]) to `visit`, in
    /// order: held rows from memory, spilled rows read front to back from the file (written out
    /// by [`Rows::flush`] first: else an error).
    pub(crate) fn scan(
        &self,
        positions: impl Iterator<Item = u32>,
        mut visit: impl FnMut(u32, Row) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        let held = self.held.len() as u32;
        let mut reader: Option<SpillReader> = None;
        for i in positions {
            if i < held {
                visit(i, self.held.get(i as usize))?;
                continue;
            }
            let reader = match &mut reader {
                Some(reader) => reader,
                None => reader.insert(self.reader()?),
            };
            visit(i, reader.row(i)?)?;
        }
        Ok(())
    }

    /// Writes out the rows still buffered for the spill file, so that [`Rows::scan`] can read
    /// them: called once every row is pushed (and again after any later push).
    pub(crate) fn flush(&mut self) -> Result<(), DedupError> {
        match &mut self.spilled {
            Some(spilled) => spilled
                .file
                .flush()
                .map_err(|e| DedupError::spill("cannot write document rows", e)),
            None => Ok(()),
        }
    }

    /// A reader of the spill file, its writes [flushed](Rows::flush) before.
    fn reader(&self) -> Result<SpillReader, DedupError> {
        let spilled = self.spilled.as_ref().ok_or_else(|| {
            DedupError::MissingData("a row past the documents held, with none spilled".into())
        })?;
        if !spilled.file.buffer().is_empty() {
            return Err(DedupError::MissingData(
                "document rows read before they were written out".into(),
            ));
        }
        let file = spilled
            .file
            .get_ref()
            .reopen()
            .map_err(|e| DedupError::spill("cannot read document rows back", e))?;
        Ok(SpillReader {
            file: BufReader::with_capacity(BUFFER, file),
            from: spilled.from,
            width: spilled.width,
            wide: spilled.width == row_width(Simhash::B128(0)),
            at: 0,
            record: Vec::new(),
        })
    }

    /// Bytes held in memory: the held rows, the gathered ones and the write buffer.
    pub(crate) fn held_bytes(&self) -> u64 {
        let buffer = if self.spilled.is_some() { BUFFER } else { 0 };
        self.held.held_bytes()
            + self.gathered.held_bytes()
            + self.gathered_at.capacity() as u64 * 4
            + buffer as u64
    }

    /// Bytes written to disk.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.spilled
            .as_ref()
            .map_or(0, |s| u64::from(self.len - s.from) * s.width as u64)
    }
}

/// Bytes of a row on disk: the SimHash, the length, a flag and the fetch time.
fn row_width(simhash: Simhash) -> usize {
    let simhash = match simhash {
        Simhash::B64(_) => 8,
        Simhash::B128(_) => 16,
    };
    simhash + 8 + 1 + 8
}

/// Writes `row` at the end of the spill file; false if its width is not the file's.
fn write_row(spilled: &mut Spilled, row: Row) -> Result<bool, DedupError> {
    if row_width(row.simhash) != spilled.width {
        return Ok(false);
    }
    let mut record = [0u8; 33];
    let simhash_len = match row.simhash {
        Simhash::B64(v) => {
            record[..8].copy_from_slice(&v.to_le_bytes());
            8
        }
        Simhash::B128(v) => {
            record[..16].copy_from_slice(&v.to_le_bytes());
            16
        }
    };
    let rest = &mut record[simhash_len..];
    rest[..8].copy_from_slice(&row.bytes.to_le_bytes());
    if let Some(time) = row.fetched_at {
        rest[8] = 1;
        rest[9..17].copy_from_slice(&time.to_le_bytes());
    }
    spilled
        .file
        .write_all(&record[..spilled.width])
        .map_err(|e| DedupError::spill("cannot write document rows", e))?;
    Ok(true)
}

/// Reads spilled rows, forward.
struct SpillReader {
    file: BufReader<File>,
    from: u32,
    width: usize,
    wide: bool,
    /// The index in the file of the next row the reader's position is at.
    at: u64,
    record: Vec<u8>,
}

impl SpillReader {
    /// Row `i` (spilled).
    fn row(&mut self, i: u32) -> Result<Row, DedupError> {
        let index = u64::from(i - self.from);
        let read_error = |e| DedupError::spill("cannot read document rows back", e);
        if index != self.at {
            let offset = index * self.width as u64;
            if index > self.at {
                let ahead = (index - self.at) * self.width as u64;
                self.file.seek_relative(ahead as i64).map_err(read_error)?;
            } else {
                self.file
                    .seek(SeekFrom::Start(offset))
                    .map_err(read_error)?;
            }
        }
        self.record.resize(self.width, 0);
        self.file.read_exact(&mut self.record).map_err(read_error)?;
        self.at = index + 1;
        let r = &self.record;
        let (simhash, rest) = if self.wide {
            let value = u128::from_le_bytes(r[..16].try_into().expect("16 bytes"));
            (Simhash::B128(value), &r[16..])
        } else {
            let value = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
            (Simhash::B64(value), &r[8..])
        };
        let bytes = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
        let fetched_at =
            (rest[8] == 1).then(|| i64::from_le_bytes(rest[9..17].try_into().expect("8 bytes")));
        Ok(Row {
            simhash,
            bytes,
            fetched_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row `i` read back column by column.
    fn read(rows: &Rows, i: u32) -> Row {
        Row {
            simhash: rows.simhash(i),
            bytes: rows.bytes(i),
            fetched_at: rows.fetched_at(i),
        }
    }

    fn row(i: u32) -> Row {
        Row {
            simhash: Simhash::B64(u64::from(i) * 0x9e37_79b9),
            bytes: u64::from(i) * 3,
            fetched_at: (i % 3 == 1).then_some(-i64::from(i)),
        }
    }

    /// Rows past the cap go to disk; a scan reads every row, held or spilled, and gathered rows
    /// come back by position.
    #[test]
    fn rows_past_the_cap_spill_and_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = Rows::new(64, dir.path().to_path_buf());
        for i in 0..100 {
            assert!(rows.push(row(i)).unwrap());
        }
        assert!(!rows.all_held());
        assert!(rows.spilled_bytes() > 0);
        let mut seen = Vec::new();
        let unwritten = rows.scan(0..100, |_, _| Ok(()));
        assert!(
            matches!(unwritten, Err(DedupError::MissingData(_))),
            "rows still buffered are not read"
        );
        rows.flush().unwrap();
        rows.scan(0..100, |i, r| {
            seen.push((i, r));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, (0..100).map(|i| (i, row(i))).collect::<Vec<_>>());
        rows.gather(&[3, 50, 99]).unwrap();
        rows.gather(&[10, 50, 70]).unwrap();
        for i in [3, 10, 50, 70, 99] {
            assert_eq!(read(&rows, i), row(i));
        }
        assert_eq!(read(&rows, 0), row(0), "held");
        // A row of another width is refused, spilled or not.
        assert!(!rows
            .push(Row {
                simhash: Simhash::B128(1),
                ..row(0)
            })
            .unwrap());
        assert_eq!(rows.len(), 100);
        drop(rows);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// 128-bit rows, all spilled (no room at all), read back out of order by two scans.
    #[test]
    fn wide_rows_spill_from_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = Rows::new(0, dir.path().to_path_buf());
        let wide = |i: u32| Row {
            simhash: Simhash::B128(u128::from(i) << 70 | 5),
            ..row(i)
        };
        for i in 0..20 {
            rows.push(wide(i)).unwrap();
        }
        rows.gather(&[15, 19]).unwrap();
        rows.gather(&[2]).unwrap();
        assert_eq!(
            [read(&rows, 2), read(&rows, 15), read(&rows, 19)],
            [wide(2), wide(15), wide(19)]
        );
    }

    proptest::proptest! {
        /// Rows gathered in several rounds (positions held, spilled, gathered before, repeated)
        /// read back as pushed, at any cap.
        #[test]
        fn gathered_rounds_read_back_as_pushed(
            cap in 0u64..400,
            rounds in proptest::collection::vec(proptest::collection::vec(0u32..60, 0..20), 1..5),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut rows = Rows::new(cap, dir.path().to_path_buf());
            for i in 0..60 {
                rows.push(row(i)).unwrap();
            }
            let mut gathered = std::collections::BTreeSet::new();
            for mut round in rounds {
                round.sort_unstable();
                round.dedup();
                rows.gather(&round).unwrap();
                gathered.extend(round);
                for &i in &gathered {
                    proptest::prop_assert_eq!(read(&rows, i), row(i));
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "not gathered")]
    fn a_spilled_row_not_gathered_is_a_defect() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = Rows::new(0, dir.path().to_path_buf());
        for i in 0..3 {
            rows.push(row(i)).unwrap();
        }
        rows.bytes(2);
    }
}
