//! `UnitKeys`: the pass below the document in the Spark job's executors
//! (`neardup.spark_units`), over Arrow buffers: the keys of each kept text
//! ([`neardup_dedup::units::UnitSplitter`], the CLI's), and each text rewritten from the
//! indexes of its repeated keys ([`neardup_dedup::units::rewrite_repeats`]), and the seen file
//! of earlier runs ([`neardup_dedup::units::SeenFile`], the CLI's `--seen`) read in ranges and
//! written from sorted chunks. What stays in Spark is the rule's distributed half: the first
//! position of each key, by a shuffle.

use std::path::PathBuf;

use neardup_dedup::units::{rewrite_repeats, SeenFile, UnitRule, UnitSplitter};
use neardup_dedup::DedupError;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::prelude::*;

use crate::convert;
use crate::dedup::units::{replace_seen, Below};
use crate::error::{invalid, to_py};
use crate::policy::policy_arg;

/// Two NumPy int64 arrays.
type Int64Pair<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// The rule below the document of a policy (with `granularity` and the other arguments of
/// `neardup.dedup`), and the executors' steps of `neardup.spark_units.dedup_units`.
#[pyclass(module = "neardup", frozen)]
pub struct UnitKeys {
    rule: UnitRule,
    splitter: UnitSplitter,
    policy: neardup_dedup::Policy,
}

impl UnitKeys {
    /// The seen file at `path` for this rule's keys.
    fn seen_file(&self, path: &std::path::Path) -> PyResult<SeenFile> {
        SeenFile::new(path, &self.rule, self.policy.profile.normalize).map_err(to_py)
    }
}

#[pymethods]
impl UnitKeys {
    #[new]
    #[pyo3(signature = (policy = None, granularity = None, min_chars = None, ngrams = None,
                        ngram_threshold = None))]
    fn new(
        policy: Option<&Bound<'_, PyAny>>,
        granularity: Option<&str>,
        min_chars: Option<u64>,
        ngrams: Option<u32>,
        ngram_threshold: Option<f64>,
    ) -> PyResult<Self> {
        let below = Below {
            granularity,
            min_chars,
            ngrams,
            ngram_threshold,
            seen: None,
            units_only: false,
        };
        let policy = below.policy(policy_arg(policy)?)?;
        let rule = policy
            .units
            .ok_or_else(|| invalid("a rule below the document is needed: give a granularity"))?;
        Ok(UnitKeys {
            splitter: UnitSplitter::of_rule(&rule, policy.profile.normalize),
            rule,
            policy,
        })
    }

    /// The policy, with its rule below the document, as JSON.
    #[getter]
    fn policy_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.policy).map_err(|e| invalid(e.to_string()))
    }

    /// The keys of the texts of an Arrow string column (`offsets`, NumPy int64, `len + 1`,
    /// into `data`), in parallel with the GIL released: `(key_offsets, keys)`, the keys of
    /// text `i` being `keys[key_offsets[i]..key_offsets[i + 1]]` (NumPy int64, the 64-bit
    /// keys' bits).
    fn keys<'py>(
        &self,
        py: Python<'py>,
        offsets: PyReadonlyArray1<'py, i64>,
        data: &[u8],
    ) -> PyResult<Int64Pair<'py>> {
        let texts = convert::arrow_texts(offsets.as_slice()?, data)?;
        let per_text: Vec<Vec<u64>> = py.detach(|| {
            texts
                .par_iter()
                .map(|text| self.splitter.split(text).keys)
                .collect()
        });
        let mut key_offsets = Vec::with_capacity(per_text.len() + 1);
        key_offsets.push(0i64);
        let mut keys = Vec::with_capacity(per_text.iter().map(Vec::len).sum());
        for text in per_text {
            keys.extend(text.into_iter().map(|key| key as i64));
            key_offsets.push(keys.len() as i64);
        }
        Ok((
            PyArray1::from_vec(py, key_offsets),
            PyArray1::from_vec(py, keys),
        ))
    }

    /// The texts of an Arrow string column (`offsets`, `data`) rewritten: the repeated keys
    /// of text `i` are `repeats[repeat_offsets[i]..repeat_offsets[i + 1]]` (NumPy int64
    /// offsets, `len + 1`; int32 key indexes). Returns a dict of `text_offsets` (int64, `len +
    /// 1`) into `text` (the rewritten texts end to end; empty for a dropped one), per text
    /// `units`, `units_removed`, `bytes_removed` (int64) and `dropped` (bool), and the
    /// removed byte ranges: those of text `i` are `spans[2 * span_offsets[i]..2 *
    /// span_offsets[i + 1]]`, start and end in turn (int64).
    fn rewrite<'py>(
        &self,
        py: Python<'py>,
        offsets: PyReadonlyArray1<'py, i64>,
        data: &[u8],
        repeat_offsets: PyReadonlyArray1<'py, i64>,
        repeats: PyReadonlyArray1<'py, i32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let texts = convert::arrow_texts(offsets.as_slice()?, data)?;
        let (bounds, repeats) = (repeat_offsets.as_slice()?, repeats.as_slice()?);
        if bounds.len() != texts.len() + 1 {
            return Err(invalid(
                "repeat_offsets needs one offset a text and one more",
            ));
        }
        let of_text = |i: usize| -> PyResult<Vec<u32>> {
            let (start, end) = (usize::try_from(bounds[i]), usize::try_from(bounds[i + 1]));
            match (start, end) {
                (Ok(start), Ok(end)) if start <= end && end <= repeats.len() => {
                    Ok(repeats[start..end].iter().map(|&r| r as u32).collect())
                }
                _ => Err(invalid(format!("text {i}: repeat offsets out of range"))),
            }
        };
        let wanted = (0..texts.len())
            .map(of_text)
            .collect::<PyResult<Vec<_>>>()?;
        let min_chars = self.rule.min_chars;
        let rewritten = py.detach(|| {
            texts
                .par_iter()
                .zip(&wanted)
                .map(|(text, repeats)| rewrite_repeats(&self.splitter, text, repeats, min_chars))
                .collect::<Result<Vec<_>, _>>()
        });
        let rewritten = rewritten.map_err(to_py)?;
        let mut text = Vec::new();
        let mut text_offsets = vec![0i64];
        let (mut units, mut removed, mut bytes, mut dropped) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut spans, mut span_offsets) = (Vec::new(), vec![0i64]);
        for done in &rewritten {
            for span in &done.report.removed_spans {
                spans.extend(span.iter().map(|&at| at as i64));
            }
            span_offsets.push(spans.len() as i64 / 2);
            text.extend_from_slice(done.text.as_bytes());
            text_offsets.push(text.len() as i64);
            units.push(done.report.units as i64);
            removed.push(done.report.units_removed as i64);
            bytes.push(done.report.bytes_removed as i64);
            dropped.push(done.report.dropped);
        }
        let out = PyDict::new(py);
        out.set_item("text", PyBytes::new(py, &text))?;
        out.set_item("text_offsets", PyArray1::from_vec(py, text_offsets))?;
        out.set_item("units", PyArray1::from_vec(py, units))?;
        out.set_item("units_removed", PyArray1::from_vec(py, removed))?;
        out.set_item("bytes_removed", PyArray1::from_vec(py, bytes))?;
        out.set_item("dropped", PyArray1::from_vec(py, dropped))?;
        out.set_item("span_offsets", PyArray1::from_vec(py, span_offsets))?;
        out.set_item("spans", PyArray1::from_vec(py, spans))?;
        Ok(out)
    }

    /// How many keys the seen file at `path` holds (the CLI's `--seen` format), after checking
    /// that its keys are this rule's.
    fn seen_count(&self, path: PathBuf) -> PyResult<u64> {
        self.seen_file(&path)?.key_count().map_err(to_py)
    }

    /// Keys `first..first + count` of the seen file at `path` (fewer at its end), as NumPy
    /// int64 (the 64-bit keys' bits), after checking that its keys are this rule's.
    fn read_seen<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        first: u64,
        count: u64,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let file = self.seen_file(&path)?;
        let keys = py.detach(|| file.read_range(first, count)).map_err(to_py)?;
        Ok(PyArray1::from_vec(
            py,
            keys.into_iter().map(|key| key as i64).collect(),
        ))
    }

    /// Replaces the seen file at `path` (written beside it, then renamed) by the keys of
    /// `chunks`, an iterable of NumPy int64 arrays (the keys' bits) ascending as unsigned
    /// 64-bit numbers: a key equal to the one before it is written once, a smaller one is an
    /// error. Returns how many keys were written.
    fn write_seen(&self, path: PathBuf, chunks: &Bound<'_, PyAny>) -> PyResult<u64> {
        let file = self.seen_file(&path)?;
        let mut chunks = chunks.try_iter()?;
        // A Python error while iterating, handed back once the writer stops.
        let mut python_error = None;
        let (mut chunk, mut at, mut last) = (Vec::new(), 0usize, None);
        let keys = std::iter::from_fn(|| loop {
            if let Some(&key) = chunk.get(at) {
                at += 1;
                if last == Some(key) {
                    continue;
                }
                last = Some(key);
                return Some(Ok(key));
            }
            let next = chunks.next()?.and_then(|array| {
                let array: PyReadonlyArray1<'_, i64> = array.extract()?;
                Ok(array.as_slice()?.iter().map(|&key| key as u64).collect())
            });
            match next {
                Ok(keys) => (chunk, at) = (keys, 0),
                Err(e) => {
                    python_error = Some(e);
                    return Some(Err(DedupError::InvalidOption(
                        "a chunk of keys failed".into(),
                    )));
                }
            }
        });
        let written = replace_seen(&path, |out| file.write(out, keys).map_err(to_py));
        match python_error {
            Some(e) => Err(e),
            None => written,
        }
    }
}
