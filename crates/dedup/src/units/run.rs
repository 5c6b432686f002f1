//! [`UnitDedup`]: the rule below the document over a whole corpus, within a memory budget.
//!
//! One pass while the seen keys fit their share of the budget: each document, in input order,
//! is split and hashed (in parallel), its keys looked up and added to a set (in order), and
//! the document rewritten. When the set would outgrow its share, the keys held so far become
//! records `(key, 0)` of sorted runs on disk, and every later key a record
//! `(key, position)`; after the read the runs are merged: the first record of each key is its
//! first occurrence, the others are repeats, whose positions are sorted again; a second read
//! rewrites the documents from the one where the set overflowed, taking the repeats in order.
//! Both ways give the same output (a property test checks it against a brute-force set).
//!
//! In keep order ([`UnitDedup::in_keep_order`]: `--keep longest` or `newest`), a unit's first
//! occurrence is the one of the document the keep policy prefers, not the first read: the
//! records are `(key, place in keep order)` from the first document on (held in memory while
//! they fit, in sorted runs beyond), the repeats' places are turned back into input
//! positions, and the second read rewrites every document, in input order.

use std::io::{BufReader, Read, Seek, SeekFrom, Write};

use neardup_core::normalize::NormalizeOptions;
use neardup_index::{Runs, Sorted, SpillDir};
use neardup_ingest::{Body, Corpus, Document};
use rayon::prelude::*;
use serde::Serialize;

use super::report::{Rewritten, UnitReport};
use super::rewrite::{rewrite_in_order, Batches};
use super::seen::{set_bytes, KeySet, SeenFile};
use super::split::{DocumentUnits, UnitSplitter};
use super::UnitRule;
use crate::budget::{spill_file, Budget};
use crate::error::DedupError;

/// The figures of a run below the document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UnitFigures {
    /// Documents read.
    pub documents: u64,
    /// Documents dropped: too little left.
    pub documents_dropped: u64,
    /// Units of every document.
    pub units: u64,
    /// Units removed as repeats.
    pub units_removed: u64,
    /// Bytes of text (as extracted) read.
    pub text_bytes: u64,
    /// Bytes of text removed (dropped documents' remainders not counted).
    pub bytes_removed: u64,
    /// Keys read from the seen file of earlier runs.
    pub seen_loaded: u64,
    /// Reads of the corpus: 1, or 2 when the keys did not fit the budget.
    pub passes: u32,
    /// Bytes written to the temporary folder.
    pub spilled_bytes: u64,
}

impl UnitFigures {
    /// Counts a document of `text_bytes` bytes of text rewritten as `report` says.
    pub(super) fn count(&mut self, text_bytes: usize, report: &UnitReport) {
        self.documents += 1;
        self.documents_dropped += u64::from(report.dropped);
        self.units += report.units;
        self.units_removed += report.units_removed;
        self.text_bytes += text_bytes as u64;
        self.bytes_removed += report.bytes_removed;
    }

    /// Adds the document counts of `other` (documents, units, bytes).
    pub(super) fn add(&mut self, other: &UnitFigures) {
        self.documents += other.documents;
        self.documents_dropped += other.documents_dropped;
        self.units += other.units;
        self.units_removed += other.units_removed;
        self.text_bytes += other.text_bytes;
        self.bytes_removed += other.bytes_removed;
    }
}

/// Where the seen keys are.
enum State {
    /// In memory.
    Memory(KeySet),
    /// In sorted runs of `(key, position)` on disk, from the document `from` on (positions:
    /// [`position`], of the document's place in keep order; 0: seen before the run or before
    /// `from`).
    Runs {
        runs: Runs<(u64, u64)>,
        batch: Vec<(u64, u64)>,
        from: usize,
    },
}

/// Paragraph, line or sentence-span dedup of a corpus ([`super`] has the rule).
pub struct UnitDedup {
    rule: UnitRule,
    splitter: UnitSplitter,
    normalize: NormalizeOptions,
    spill: SpillDir,
    set_memory: u64,
    seen: Option<SeenFile>,
    /// Whether documents carry their input records ([`Document::raw`]).
    keep_raw: bool,
    /// The documents the rule runs over, by position (the others are passed over), when
    /// document-level dedup decided first ([`UnitDedup::over_kept`]).
    kept: Option<Vec<bool>>,
    /// The union of the seen keys and this run's, once the run is over.
    union: Option<Union>,
    /// The documents' places in keep order, when it is not input order
    /// ([`UnitDedup::in_keep_order`]).
    order: Option<Order>,
}

/// A keep order: each document's place, and the document at each place.
struct Order {
    rank: Vec<u32>,
    document: Vec<u32>,
}

/// The position of the key `key` of the document at `place` (its input position, or its
/// place in keep order): ascending with the place, then the key; 0 is left for keys seen
/// before the run.
fn position(place: usize, key: usize) -> u64 {
    (((place as u64) << 32) | key as u64) + 1
}

/// The keys seen, once the run is over.
enum Union {
    Memory(KeySet),
    File(tempfile::NamedTempFile),
}

impl UnitDedup {
    /// The rule `rule`, normalising as `normalize` says, within `budget`: the seen keys may
    /// hold half of it in memory.
    pub fn new(rule: UnitRule, normalize: NormalizeOptions, budget: &Budget) -> Self {
        UnitDedup {
            rule,
            splitter: UnitSplitter::of_rule(&rule, normalize),
            normalize,
            spill: SpillDir::new(&budget.spill_dir()),
            set_memory: budget.memory / 2,
            seen: None,
            keep_raw: false,
            kept: None,
            union: None,
            order: None,
        }
    }

    /// The bytes the seen keys may hold in memory (half the budget by default); beyond, they
    /// go to disk. For tests of the spilled path, and tuning.
    pub fn with_set_memory(mut self, bytes: u64) -> Self {
        self.set_memory = bytes;
        self
    }

    /// Keys of earlier runs, from `path` (none if it does not exist yet): they count as seen
    /// before the first document, and [`UnitDedup::write_seen`] saves them with this run's.
    pub fn with_seen(mut self, path: &std::path::Path) -> Result<Self, DedupError> {
        self.seen = Some(SeenFile::new(path, &self.rule, self.normalize)?);
        Ok(self)
    }

    /// Documents handed to the sink carry their input records ([`Document::raw`]), to be
    /// written back rewritten ([`super::rewrite_record`]).
    pub fn with_records(mut self) -> Self {
        self.keep_raw = true;
        self
    }

    /// Runs the rule over the documents whose entry in `kept` is true only (a document-level
    /// decision's, by position in the input): the others add no key and are not handed to
    /// the sink, as if the input held the kept documents alone. A read that finds another
    /// number of documents than `kept` has is an error.
    pub fn over_kept(mut self, kept: Vec<bool>) -> Self {
        self.kept = Some(kept);
        self
    }

    /// Takes the documents in the order `ranks` gives (each document's place, by position in
    /// the input: [`crate::KeepPolicy::ranks`], the document engine's keep order) instead of
    /// input order: the first occurrence of a unit is then the one of the document taken
    /// first. The documents are still handed to the sink in input order, after a second
    /// read. A `ranks` of another length than the input is an error.
    pub fn in_keep_order(mut self, ranks: Vec<u32>) -> Self {
        if ranks.iter().enumerate().all(|(i, &r)| i == r as usize) {
            self.order = None;
            return self;
        }
        let mut document = vec![0u32; ranks.len()];
        for (i, &rank) in ranks.iter().enumerate() {
            document[rank as usize] = i as u32;
        }
        self.order = Some(Order {
            rank: ranks,
            document,
        });
        self
    }

    /// The place of the document at `position` in the order the rule takes documents in.
    fn place(&self, position: usize) -> usize {
        self.order
            .as_ref()
            .map_or(position, |order| order.rank[position] as usize)
    }

    /// Whether the document at `position` is one the rule runs over.
    fn includes(&self, position: usize) -> bool {
        self.kept
            .as_ref()
            .is_none_or(|kept| kept.get(position).copied().unwrap_or(false))
    }

    /// Fails when a read found `read` documents and [`UnitDedup::over_kept`] or
    /// [`UnitDedup::in_keep_order`] was given another number.
    fn same_documents(&self, read: usize) -> Result<(), DedupError> {
        let decided = [
            self.kept.as_ref().map(Vec::len),
            self.order.as_ref().map(|order| order.rank.len()),
        ];
        match decided.into_iter().flatten().find(|&n| n != read) {
            Some(n) => Err(DedupError::InvalidOption(format!(
                "the inputs changed between reads ({read} documents, {n} decided)"
            ))),
            None => Ok(()),
        }
    }

    /// The splitter of this rule (units and keys of one text).
    pub fn splitter(&self) -> &UnitSplitter {
        &self.splitter
    }

    /// Reads `corpus` (twice when the keys outgrow the budget: open it to be read again),
    /// deciding each document in input order on this thread, while the documents decided are
    /// rewritten and rendered with `render` in parallel on the pool, and handed to `sink` in
    /// input order on a thread of their own.
    pub fn run<R, E>(
        &mut self,
        corpus: &Corpus,
        render: impl Fn(Document, Rewritten) -> Result<R, E> + Sync,
        sink: impl FnMut(R) -> Result<(), E> + Send,
    ) -> Result<UnitFigures, E>
    where
        R: Send,
        E: From<DedupError> + From<neardup_ingest::CorpusError> + Send,
    {
        let min_chars = self.rule.min_chars;
        let ((seen_loaded, passes), mut figures) =
            rewrite_in_order(min_chars, &render, sink, |batches| {
                self.decide_corpus(corpus, batches)
            })?;
        figures.seen_loaded = seen_loaded;
        figures.passes = passes;
        figures.spilled_bytes = self.spill.written();
        Ok(figures)
    }

    /// Reads `corpus` and decides its documents in input order, pushing them to `batches`
    /// (reading it again when the keys outgrow the budget). Returns the keys loaded from the
    /// seen file and the reads.
    fn decide_corpus<E: From<DedupError> + From<neardup_ingest::CorpusError>>(
        &mut self,
        corpus: &Corpus,
        batches: &mut Batches,
    ) -> Result<(u64, u32), E> {
        let mut state = match self.order {
            // Decided after the read: nothing is decided in input order.
            Some(_) => self.runs_from(0),
            None => State::Memory(KeySet::default()),
        };
        let mut seen_loaded = 0;
        if let Some(seen) = self.seen.clone().filter(SeenFile::exists) {
            seen_loaded = seen.read(|key| self.add_prior(&mut state, key))?;
        }
        let mut index = 0usize;
        corpus.for_each_document(
            "removing repeated units",
            self.keep_raw,
            |i, doc, text| {
                (self.includes(i) && i < self.documents_decided()).then(|| self.split(doc, text))
            },
            |doc, split| {
                let position = index;
                index += 1;
                let Some(split) = split else {
                    return Ok(());
                };
                if let Some(flags) = self.decide(&mut state, position, &split.0)? {
                    batches.push(doc, split, flags)?;
                }
                Ok::<_, E>(())
            },
        )?;
        self.same_documents(index)?;
        match state {
            State::Memory(set) => {
                self.union = Some(Union::Memory(set));
                Ok((seen_loaded, 1))
            }
            State::Runs {
                runs,
                mut batch,
                from,
            } => {
                runs.add(&mut batch).map_err(DedupError::from)?;
                let repeats = self.repeats(runs)?;
                self.second_pass::<E>(corpus, from, repeats, batches)?;
                Ok((seen_loaded, 2))
            }
        }
    }

    /// How many documents a keep order was given for (any number without one): a document
    /// beyond is not split (the read then fails, [`UnitDedup::same_documents`]).
    fn documents_decided(&self) -> usize {
        self.order
            .as_ref()
            .map_or(usize::MAX, |order| order.rank.len())
    }

    /// A document's units and keys, with its text when it is not the body (extracted HTML).
    fn split(&self, doc: &Document, text: &str) -> (DocumentUnits, Option<String>) {
        let units = self.splitter.split_as(text, doc.body.is_html());
        let owned = match &doc.body {
            Body::Text(body) if std::ptr::eq(body.as_str(), text) => None,
            _ => Some(text.to_string()),
        };
        (units, owned)
    }

    /// `text` rewritten by its keys' flags, counted in `figures`.
    fn rewrite(
        &self,
        figures: &mut UnitFigures,
        text: &str,
        units: &DocumentUnits,
        flags: &[bool],
    ) -> Rewritten {
        let rewritten = Rewritten::new(text, units, flags, self.rule.min_chars);
        figures.count(text.len(), &rewritten.report);
        rewritten
    }

    /// Runs the rule over plain texts held in memory, in order (with
    /// [`UnitDedup::over_kept`], over the texts it keeps; with [`UnitDedup::in_keep_order`],
    /// in that order): the rewrite of each, by position, `None` for a text passed over, and
    /// the figures. The keys are held in memory whatever the budget
    /// (8 to 30 bytes a unit, fewer than the texts already held); the seen file is read and
    /// [`UnitDedup::write_seen`] saves the union, as with [`UnitDedup::run`], whose answer
    /// this is for a corpus of these texts.
    pub fn run_texts<S: AsRef<str> + Sync>(
        &mut self,
        texts: &[S],
    ) -> Result<(Vec<Option<Rewritten>>, UnitFigures), DedupError> {
        /// Texts split at a time (in parallel), then decided in order.
        const CHUNK: usize = 4096;
        self.same_documents(texts.len())?;
        let mut figures = UnitFigures {
            passes: 1,
            ..UnitFigures::default()
        };
        let mut set = KeySet::default();
        if let Some(seen) = self.seen.clone().filter(SeenFile::exists) {
            figures.seen_loaded = seen.read(|key| {
                set.insert(key);
                Ok(())
            })?;
        }
        let mut sequence: Vec<usize> = (0..texts.len()).collect();
        if let Some(order) = &self.order {
            sequence = order.document.iter().map(|&i| i as usize).collect();
        }
        let mut out: Vec<Option<Rewritten>> = vec![None; texts.len()];
        for some in sequence.chunks(CHUNK) {
            let split: Vec<Option<DocumentUnits>> = some
                .par_iter()
                .map(|&i| {
                    let included = self.includes(i);
                    included.then(|| self.splitter.split(texts[i].as_ref()))
                })
                .collect();
            for (&i, units) in some.iter().zip(split) {
                out[i] = units.map(|units| {
                    let flags = seen_flags(&mut set, &units);
                    self.rewrite(&mut figures, texts[i].as_ref(), &units, &flags)
                });
            }
        }
        self.union = Some(Union::Memory(set));
        Ok((out, figures))
    }

    /// A key seen before the run.
    fn add_prior(&self, state: &mut State, key: u64) -> Result<(), DedupError> {
        if let State::Memory(set) = state {
            if self.outgrows(set, 1) {
                self.to_runs(state, 0)?;
            }
        }
        match state {
            State::Memory(set) => {
                set.insert(key);
            }
            State::Runs { runs, batch, .. } => push(runs, batch, (key, 0))?,
        }
        Ok(())
    }

    /// The seen flag of each key of document `index`, or `None` once the keys are on disk
    /// (the second read decides).
    fn decide(
        &self,
        state: &mut State,
        index: usize,
        units: &DocumentUnits,
    ) -> Result<Option<Vec<bool>>, DedupError> {
        if let State::Memory(set) = state {
            if self.outgrows(set, units.keys.len()) {
                self.to_runs(state, index)?;
            }
        }
        match state {
            State::Memory(set) => Ok(Some(seen_flags(set, units))),
            State::Runs { runs, batch, .. } => {
                let place = self.place(index);
                for (i, &key) in units.keys.iter().enumerate() {
                    push(runs, batch, (key, position(place, i)))?;
                }
                Ok(None)
            }
        }
    }

    /// Whether adding `more` keys would take the set above its share.
    fn outgrows(&self, set: &KeySet, more: usize) -> bool {
        let len = set.len() + more;
        len > set.capacity() && set_bytes(len) > self.set_memory
    }

    /// Moves the keys held in memory to sorted runs: the documents from `from` on are decided
    /// after the read.
    fn to_runs(&self, state: &mut State, from: usize) -> Result<(), DedupError> {
        let State::Memory(set) = state else {
            return Ok(());
        };
        let set = std::mem::take(set);
        tracing::info!(
            "{} distinct units outgrow {} MiB: the rest of the run spills to {}",
            set.len(),
            self.set_memory >> 20,
            self.spill.dir().display()
        );
        let mut runs = self.runs_from(from);
        if let State::Runs { runs, batch, .. } = &mut runs {
            for key in set {
                push(runs, batch, (key, 0))?;
            }
        }
        *state = runs;
        Ok(())
    }

    /// Empty sorted runs, for the documents from `from` on.
    fn runs_from(&self, from: usize) -> State {
        let runs = Runs::new(self.spill.clone(), self.set_memory);
        let batch = Vec::with_capacity(runs.batch());
        State::Runs { runs, batch, from }
    }

    /// Merges the runs: writes the union of the keys (the first record of each) to a file,
    /// and returns the positions of the repeats (in input order), ascending.
    fn repeats(&mut self, runs: Runs<(u64, u64)>) -> Result<Sorted<u64>, DedupError> {
        let repeats = Runs::<u64>::new(self.spill.clone(), self.set_memory);
        let mut batch = Vec::with_capacity(repeats.batch());
        let file = spill_file(self.spill.dir())?;
        let mut union = std::io::BufWriter::with_capacity(1 << 16, file.as_file());
        let mut last = None;
        let mut written = 0u64;
        for record in runs.into_sorted()? {
            let (key, position) = record?;
            if last == Some(key) {
                push(&repeats, &mut batch, self.input_position(position))?;
            } else {
                union
                    .write_all(&key.to_le_bytes())
                    .map_err(|e| DedupError::spill("cannot write the seen units", e))?;
                written += 8;
                last = Some(key);
            }
        }
        union
            .flush()
            .map_err(|e| DedupError::spill("cannot write the seen units", e))?;
        drop(union);
        self.spill.count(written);
        self.union = Some(Union::File(file));
        repeats.add(&mut batch)?;
        Ok(repeats.into_sorted()?)
    }

    /// The input position of a key at `at`, a position of its document's place in keep order.
    fn input_position(&self, at: u64) -> u64 {
        match &self.order {
            None => at,
            Some(order) => {
                let at = at - 1;
                let place = (at >> 32) as usize;
                position(
                    order.document[place] as usize,
                    (at & u64::from(u32::MAX)) as usize,
                )
            }
        }
    }

    /// The second read: the documents from `from` on, decided by the repeats' positions.
    fn second_pass<E: From<DedupError> + From<neardup_ingest::CorpusError>>(
        &self,
        corpus: &Corpus,
        from: usize,
        mut repeats: Sorted<u64>,
        batches: &mut Batches,
    ) -> Result<(), E> {
        let mut next_repeat = repeats.next().transpose().map_err(DedupError::from)?;
        let mut index = 0usize;
        corpus.for_each_document(
            "removing repeated units (second read)",
            self.keep_raw,
            |i, doc, text| (i >= from && self.includes(i)).then(|| self.split(doc, text)),
            |doc, split| {
                let document = index;
                index += 1;
                let Some(split) = split else {
                    return Ok(());
                };
                let keys = split.0.keys.len();
                let mut flags = Vec::with_capacity(keys);
                for i in 0..keys {
                    let seen = next_repeat == Some(position(document, i));
                    if seen {
                        next_repeat = repeats.next().transpose().map_err(DedupError::from)?;
                    }
                    flags.push(seen);
                }
                batches.push(doc, split, flags)?;
                Ok::<_, E>(())
            },
        )?;
        Ok(())
    }

    /// Writes the keys seen (those of the seen file and this run's) to `out` in the seen
    /// file's format, after [`UnitDedup::run`]; returns how many. Fails without `with_seen`.
    pub fn write_seen(&mut self, out: &mut impl Write) -> Result<u64, DedupError> {
        let seen = self.seen.as_ref().ok_or_else(|| {
            DedupError::InvalidOption("no seen file was named (with_seen)".into())
        })?;
        match self.union.as_mut() {
            None => Err(DedupError::InvalidOption(
                "the keys are saved after the run".into(),
            )),
            Some(Union::Memory(set)) => {
                let mut keys: Vec<u64> = set.iter().copied().collect();
                keys.sort_unstable();
                seen.write(out, keys.into_iter().map(Ok))
            }
            Some(Union::File(file)) => {
                let failed = |e| DedupError::spill("cannot read the seen units back", e);
                let file = file.as_file_mut();
                file.seek(SeekFrom::Start(0)).map_err(failed)?;
                let mut input = BufReader::with_capacity(1 << 16, &*file);
                let keys = std::iter::from_fn(move || {
                    let mut key = [0u8; 8];
                    match input.read_exact(&mut key) {
                        Ok(()) => Some(Ok(u64::from_le_bytes(key))),
                        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => None,
                        Err(e) => Some(Err(failed(e))),
                    }
                });
                seen.write(out, keys)
            }
        }
    }
}

/// The seen flag of each key of `units`, adding the keys to `set`.
fn seen_flags(set: &mut KeySet, units: &DocumentUnits) -> Vec<bool> {
    units.keys.iter().map(|k| !set.insert(*k)).collect()
}

/// Adds `record` to `batch`, handing the batch to `runs` when full.
fn push<R: neardup_index::RunRecord>(
    runs: &Runs<R>,
    batch: &mut Vec<R>,
    record: R,
) -> Result<(), DedupError> {
    batch.push(record);
    if batch.len() >= runs.batch() {
        runs.add(batch)?;
    }
    Ok(())
}
