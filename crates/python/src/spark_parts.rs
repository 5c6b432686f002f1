//! `PartEngine`: the last step of the Spark job (`neardup.spark`), in its executors. Rows come
//! in Arrow batches sorted by part (a component of exact copies and links between documents
//! that share a search key: no decision crosses a part) and by row number within a part; each
//! part, once whole, is decided by the engine itself ([`neardup_dedup::dedup_with`], the
//! linear decision of `neardup dedup`) and its answer goes out as row numbers.
//!
//! Memory is bounded whatever the size of a part: a part holds its rows' fingerprints (about
//! 200 bytes a row); its texts stay in memory up to [`TEXTS_IN_MEMORY`] and go to a temporary
//! file beyond, from which the engine reads the shingle sets it verifies with (within its own
//! budget, spilling as `neardup dedup` does). A family of 200,000 near copies of one template
//! so never needs its texts in memory at once.

use std::borrow::Cow;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;

use neardup_core::digest::Digest;
use neardup_core::measure::FeatureSet;
use neardup_core::{Fingerprinter, Fingerprints};
use neardup_dedup::{DedupError, DedupOptions, FeatureSource, Item, KeepPolicy, Outcome};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::convert;
use crate::error::{invalid, to_py};
use crate::policy::policy_arg;
use crate::spark::{be_value, simhash_of};

/// Bytes of a part's texts held in memory by default; the rest go to a temporary file.
const TEXTS_IN_MEMORY: usize = 64 << 20;

/// Rows of whole parts gathered for one run of the engine, at least (a part is never split).
const ROWS_AT_A_TIME: usize = 50_000;

/// Texts whose shingle sets are made at a time when the engine asks for them.
const SETS_AT_A_TIME: usize = 1024;

/// Per row: its row number, the row number of its cluster's kept row (-1: its own) and of the
/// kept row it duplicates (-1: kept).
type Answers<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);

/// The engine over the parts of one task's rows (see the module doc): `feed` each Arrow batch
/// in order, then `finish`; each returns the answers of the parts completed so far.
#[pyclass(module = "neardup")]
pub struct PartEngine {
    options: DedupOptions,
    fingerprinter: Fingerprinter,
    /// Bytes of a part's texts held in memory.
    texts_in_memory: usize,
    /// The threads the engine's parallel work runs on (`None`: rayon's global pool, one a
    /// processor).
    pool: Option<rayon::ThreadPool>,
    part: Option<Part>,
    done: Done,
}

/// The answers of the parts decided, not yet handed out.
#[derive(Default)]
struct Done {
    rows: Vec<i64>,
    cluster: Vec<i64>,
    duplicate_of: Vec<i64>,
}

/// The rows of the parts gathered for the next run of the engine (whole parts, in order).
struct Part {
    /// The part of the last row.
    id: i64,
    rows: Vec<i64>,
    items: Vec<Item>,
    texts: Texts,
}

#[pymethods]
impl PartEngine {
    /// The engine under `policy` and `keep` (`first`, `longest` or `newest`), holding up to
    /// `texts_in_memory` bytes of a part's texts in memory (the rest in a temporary file), and
    /// deciding parts within `memory` bytes (`neardup dedup --memory`; `None`: its default,
    /// 2 GiB), spilling to the system's temporary folder beyond it. Each run of the engine (a
    /// batch of whole parts) may add `memory` to the process's resident memory when the run
    /// began (what the worker, its batches and the runs before hold is not the run's:
    /// `neardup_dedup::Budget::new`); with `whole_process`, `memory` bounds
    /// the whole process instead, the worker's own memory included (for a hard limit on the
    /// worker, such as `spark.executor.pyspark.memory`). Its parallel work (fingerprints,
    /// shingle sets, the search and verification) runs on `threads` threads of its own
    /// (`None`: rayon's global pool, one thread a processor); the answers are the same
    /// whatever their number.
    #[new]
    #[pyo3(signature = (policy = None, keep = "first", texts_in_memory = TEXTS_IN_MEMORY, memory = None, whole_process = false, threads = None))]
    fn new(
        policy: Option<&Bound<'_, PyAny>>,
        keep: &str,
        texts_in_memory: usize,
        memory: Option<u64>,
        whole_process: bool,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let pool = match threads {
            Some(0) => return Err(invalid("threads must be at least 1")),
            Some(n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .thread_name(|i| format!("neardup-part-{i}"))
                    .build()
                    .map_err(|e| invalid(format!("cannot start {n} threads: {e}")))?,
            ),
            None => None,
        };
        let policy = policy_arg(policy)?;
        let memory = memory.unwrap_or(neardup_dedup::Budget::DEFAULT_MEMORY);
        let budget = match whole_process {
            true => neardup_dedup::Budget::whole_process(memory, None),
            false => neardup_dedup::Budget::new(memory, None),
        }
        .map_err(to_py)?;
        Ok(PartEngine {
            fingerprinter: Fingerprinter::new(policy.profile.clone()).map_err(to_py)?,
            options: DedupOptions {
                policy,
                keep: convert::named::<KeepPolicy>(keep, "keep")?,
                url_dedup: false,
                // The linear decision (`neardup dedup`'s): no list of every accepted pair.
                list_pairs: false,
                budget,
            },
            texts_in_memory,
            pool,
            part: None,
            done: Done::default(),
        })
    }

    /// Reads one batch: per row its `parts` id, its `rows` number, its text (an Arrow string
    /// column's `offsets` into `data`: `bytes`, or a NumPy `uint8` view of its data buffer)
    /// and, when `fetched_at` is given, its time (Unix seconds;
    /// `dated[i]` false for a null). Rows must come sorted by part, then by row number. Returns
    /// the answers of the parts this batch completed (`rows`, `cluster`, `duplicate_of`).
    ///
    /// With `simhash` and `digest` (each row's SimHash fingerprint and digest end to end, as
    /// `SearchKeys.fingerprint` made them from the same texts under the same policy: `bytes`
    /// or NumPy `uint8`), the rows are not fingerprinted again: the texts then serve for their
    /// lengths and shingle sets only. For a profile without MinHash signatures (`takes_fingerprints`).
    /// The first row of the batch is fingerprinted again and checked: fingerprints that are not
    /// their texts' (rows out of step with their fingerprints) are an error.
    #[pyo3(signature = (parts, rows, offsets, data, fetched_at = None, dated = None, simhash = None, digest = None))]
    #[allow(clippy::too_many_arguments)]
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        parts: PyReadonlyArray1<'py, i64>,
        rows: PyReadonlyArray1<'py, i64>,
        offsets: PyReadonlyArray1<'py, i64>,
        data: convert::ByteView<'py>,
        fetched_at: Option<PyReadonlyArray1<'py, i64>>,
        dated: Option<PyReadonlyArray1<'py, bool>>,
        simhash: Option<convert::ByteView<'py>>,
        digest: Option<convert::ByteView<'py>>,
    ) -> PyResult<Answers<'py>> {
        let (parts, rows) = (parts.as_slice()?, rows.as_slice()?);
        let texts = convert::arrow_texts(offsets.as_slice()?, data.as_slice()?)?;
        let times = match (&fetched_at, &dated) {
            (Some(t), Some(d)) => Some((t.as_slice()?, d.as_slice()?)),
            _ => None,
        };
        let lengths_agree = parts.len() == rows.len()
            && texts.len() == rows.len()
            && times.is_none_or(|(t, d)| t.len() == rows.len() && d.len() == rows.len());
        if !lengths_agree {
            return Err(invalid(
                "parts, rows, texts and times of one batch differ in length",
            ));
        }
        let carried = match (&simhash, &digest) {
            (Some(s), Some(d)) => Some(self.carried(s.as_slice()?, d.as_slice()?, &texts)?),
            (None, None) => None,
            _ => return Err(invalid("simhash and digest are given together")),
        };
        let pool = self.pool.take();
        let fed = py.detach(|| {
            in_pool(pool.as_ref(), || {
                let fingerprints: Vec<_> = match carried {
                    Some(carried) => carried,
                    None => texts
                        .par_iter()
                        .map(|t| self.fingerprinter.fingerprint(t))
                        .collect(),
                };
                for (i, fingerprints) in fingerprints.into_iter().enumerate() {
                    let mut item = Item::new(fingerprints, texts[i].len() as u64);
                    item.fetched_at = times.and_then(|(t, d)| d[i].then_some(t[i]));
                    self.push(parts[i], rows[i], item, texts[i])?;
                }
                Ok::<_, DedupError>(())
            })
        });
        self.pool = pool;
        fed.map_err(to_py)?;
        Ok(self.take(py))
    }

    /// Decides the last part; returns the answers not handed out yet.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Answers<'py>> {
        let pool = self.pool.take();
        let decided = py.detach(|| {
            in_pool(pool.as_ref(), || match self.part.take() {
                Some(part) => self.decide(part),
                None => Ok(()),
            })
        });
        self.pool = pool;
        decided.map_err(to_py)?;
        Ok(self.take(py))
    }

    /// Whether `feed` takes the rows' fingerprints made elsewhere (`simhash`, `digest`): when
    /// the policy's profile asks for no MinHash signature, which they do not carry.
    #[getter]
    fn takes_fingerprints(&self) -> bool {
        self.options.policy.profile.minhash.is_none()
    }

    /// The threads the engine's parallel work runs on: its own pool's, or rayon's global
    /// pool's (one a processor, or `RAYON_NUM_THREADS`).
    #[getter]
    fn threads(&self) -> usize {
        self.pool.as_ref().map_or_else(
            rayon::current_num_threads,
            rayon::ThreadPool::current_num_threads,
        )
    }
}

/// Runs `work` on `pool`'s threads (its parallel iterators use them), or on rayon's global
/// pool when there is none.
fn in_pool<T: Send>(pool: Option<&rayon::ThreadPool>, work: impl FnOnce() -> T + Send) -> T {
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

impl PartEngine {
    /// The fingerprints of a batch's rows from their SimHash values and digests (`simhash`,
    /// `digest`: end to end, one a row of `texts`), with the first row's checked against its
    /// text fingerprinted again. `features` (a count for explanations, which no decision
    /// reads) is not carried: 0.
    fn carried(
        &self,
        simhash: &[u8],
        digest: &[u8],
        texts: &[&str],
    ) -> PyResult<Vec<Fingerprints>> {
        let profile = &self.options.policy.profile;
        if !self.takes_fingerprints() {
            return Err(invalid(
                "the profile asks for MinHash signatures: fingerprints are not taken",
            ));
        }
        let simhash_width = profile.bits.count() as usize / 8;
        let digest_width = profile.digest.width();
        if simhash.len() != texts.len() * simhash_width
            || digest.len() != texts.len() * digest_width
        {
            return Err(invalid(format!(
                "{} bytes of SimHash values and {} of digests for {} rows of {simhash_width} and {digest_width} bytes",
                simhash.len(),
                digest.len(),
                texts.len()
            )));
        }
        let fingerprints: Vec<Fingerprints> = simhash
            .chunks_exact(simhash_width)
            .zip(digest.chunks_exact(digest_width))
            .map(|(value, digest)| {
                Ok(Fingerprints {
                    simhash: simhash_of(be_value(value), simhash_width),
                    minhash: None,
                    digest: Digest::from_bytes(profile.digest, digest)
                        .ok_or_else(|| invalid("a digest of the wrong width"))?,
                    features: 0,
                })
            })
            .collect::<PyResult<_>>()?;
        if let (Some(text), Some(given)) = (texts.first(), fingerprints.first()) {
            let made = self.fingerprinter.fingerprint(text);
            if made.simhash != given.simhash || made.digest != given.digest {
                return Err(invalid(
                    "the fingerprints given are not their texts' (the first row's differ)",
                ));
            }
        }
        Ok(fingerprints)
    }

    /// Adds one row to its part. Parts are gathered whole into one run of the engine up to
    /// [`ROWS_AT_A_TIME`] rows or the texts' memory limit: no decision crosses a part, so the
    /// engine's answer on several parts is its answer on each (and one run saves its setup per
    /// part: the parts of a corpus are mostly of two or three documents).
    fn push(&mut self, id: i64, row: i64, item: Item, text: &str) -> Result<(), DedupError> {
        if let Some(part) = self.part.as_ref().filter(|p| p.id != id) {
            if id < part.id {
                return Err(DedupError::InvalidOption(format!(
                    "the rows must come sorted by part: part {id} after part {}",
                    part.id
                )));
            }
            if part.rows.len() >= ROWS_AT_A_TIME || part.texts.spilled() {
                let part = self.part.take().expect("a part is open");
                self.decide(part)?;
            }
        }
        let part = self.part.get_or_insert_with(|| Part {
            id,
            rows: Vec::new(),
            items: Vec::new(),
            texts: Texts::new(self.texts_in_memory),
        });
        if part.id == id && part.rows.last().is_some_and(|&last| last >= row) {
            return Err(DedupError::InvalidOption(format!(
                "the rows of part {id} must come in ascending row order"
            )));
        }
        part.id = id;
        part.rows.push(row);
        part.items.push(item);
        part.texts.push(text)
    }

    /// Runs the engine on whole parts and records its answer: a run of its own under the
    /// budget (what the runs before it freed is the process's to reuse, not this run's).
    fn decide(&mut self, mut part: Part) -> Result<(), DedupError> {
        self.options.budget.restart();
        let outcome = neardup_dedup::dedup_with(
            &part.items,
            &self.options,
            &mut PartSets {
                texts: &mut part.texts,
                fingerprinter: &self.fingerprinter,
            },
        )?;
        self.record(&part.rows, &outcome);
        Ok(())
    }

    /// The engine's `outcome` on a part of `rows`, as row numbers.
    fn record(&mut self, rows: &[i64], outcome: &Outcome) {
        let mut cluster = vec![-1; rows.len()];
        for c in &outcome.clusters {
            for &m in &c.members {
                cluster[m as usize] = rows[c.representative as usize];
            }
        }
        let mut duplicate_of = vec![-1; rows.len()];
        for r in &outcome.removals {
            duplicate_of[r.index as usize] = rows[r.of as usize];
        }
        self.done.rows.extend_from_slice(rows);
        self.done.cluster.extend(cluster);
        self.done.duplicate_of.extend(duplicate_of);
    }

    /// The answers recorded so far, handed out.
    fn take<'py>(&mut self, py: Python<'py>) -> Answers<'py> {
        let done = std::mem::take(&mut self.done);
        (
            PyArray1::from_vec(py, done.rows),
            PyArray1::from_vec(py, done.cluster),
            PyArray1::from_vec(py, done.duplicate_of),
        )
    }
}

/// A part's texts: the newest in memory up to a limit, the older ones in a temporary file
/// (removed when dropped).
struct Texts {
    /// Bytes held in memory at most (beyond, they go to the file).
    limit: usize,
    /// Per text, its start in the stream of all texts and its length.
    spans: Vec<(u64, usize)>,
    /// The texts after the first `in_file` bytes of the stream.
    memory: Vec<u8>,
    file: Option<File>,
    in_file: u64,
}

impl Texts {
    fn new(limit: usize) -> Self {
        Texts {
            limit,
            spans: Vec::new(),
            memory: Vec::new(),
            file: None,
            in_file: 0,
        }
    }

    fn push(&mut self, text: &str) -> Result<(), DedupError> {
        let start = self.in_file + self.memory.len() as u64;
        self.spans.push((start, text.len()));
        self.memory.extend_from_slice(text.as_bytes());
        if self.memory.len() > self.limit {
            let spill = |e: std::io::Error| DedupError::spill("a part's texts", e);
            if self.file.is_none() {
                self.file = Some(tempfile::tempfile().map_err(spill)?);
            }
            let file = self.file.as_mut().expect("just made");
            file.write_all(&self.memory).map_err(spill)?;
            self.in_file += self.memory.len() as u64;
            self.memory.clear();
        }
        Ok(())
    }

    /// Whether some texts went to the file (the memory limit was reached).
    fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// Text `i`.
    fn get(&self, i: u32) -> Result<Cow<'_, str>, DedupError> {
        let (start, len) = self.spans[i as usize];
        if start >= self.in_file {
            let at = (start - self.in_file) as usize;
            let bytes = &self.memory[at..at + len];
            return Ok(Cow::Borrowed(std::str::from_utf8(bytes).map_err(corrupt)?));
        }
        let mut bytes = vec![0; len];
        let file = self
            .file
            .as_ref()
            .expect("texts before in_file are in the file");
        file.read_exact_at(&mut bytes, start)
            .map_err(|e| DedupError::spill("reading a part's texts back", e))?;
        Ok(Cow::Owned(String::from_utf8(bytes).map_err(corrupt)?))
    }
}

/// A text read back is not the UTF-8 written.
fn corrupt(e: impl std::fmt::Display) -> DedupError {
    DedupError::Spill {
        what: format!("a part's text read back is not UTF-8: {e}"),
        source: None,
    }
}

/// The shingle sets of a part's texts, made when the engine asks for them.
struct PartSets<'a> {
    texts: &'a mut Texts,
    fingerprinter: &'a Fingerprinter,
}

impl FeatureSource for PartSets<'_> {
    fn feature_sets(
        &mut self,
        positions: &[u32],
        sink: &mut dyn FnMut(FeatureSet) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        for chunk in positions.chunks(SETS_AT_A_TIME) {
            let texts = chunk
                .iter()
                .map(|&i| self.texts.get(i))
                .collect::<Result<Vec<_>, _>>()?;
            let sets: Vec<FeatureSet> = texts
                .par_iter()
                .map(|t| self.fingerprinter.feature_set(t))
                .collect();
            for set in sets {
                sink(set)?;
            }
        }
        Ok(())
    }
}
