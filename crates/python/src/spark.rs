//! `SearchKeys`: what the Spark job (`neardup.spark`) runs in its executors, over Arrow
//! batches: the fingerprints and search keys of each row ([`neardup_dedup::SearchKeys`], the
//! engine's own tables or bands), the candidate pairs of the documents that share a key, and
//! the policy's decision on each pair ([`neardup_dedup::Policy::decide`]). Buffers go in and
//! out as bytes and NumPy arrays, so that the Python side builds Arrow arrays without a Python
//! object per value.

use neardup_core::{Fingerprinter, Simhash};
use neardup_dedup::Side;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::prelude::*;

use crate::convert;
use crate::error::{invalid, to_py};
use crate::policy::{policy_arg, side};

/// The search keys of a policy over a corpus of about `expected_len` documents, and the
/// executors' steps of the Spark job: `fingerprint`, `pairs`, `decide`.
#[pyclass(module = "neardup", frozen)]
pub struct SearchKeys {
    keys: neardup_dedup::SearchKeys,
    policy: neardup_dedup::Policy,
    fingerprinter: Fingerprinter,
}

#[pymethods]
impl SearchKeys {
    #[new]
    #[pyo3(signature = (policy = None, expected_len = 0))]
    fn new(policy: Option<&Bound<'_, PyAny>>, expected_len: usize) -> PyResult<Self> {
        let policy = policy_arg(policy)?;
        Ok(SearchKeys {
            keys: neardup_dedup::SearchKeys::new(&policy, expected_len).map_err(to_py)?,
            fingerprinter: Fingerprinter::new(policy.profile.clone()).map_err(to_py)?,
            policy,
        })
    }

    /// Bytes of one search key (0: the policy searches exact duplicates only).
    #[getter]
    fn key_width(&self) -> usize {
        self.keys.width()
    }

    /// Bytes of one SimHash fingerprint (8 or 16, big-endian).
    #[getter]
    fn simhash_width(&self) -> usize {
        self.policy.profile.bits.count() as usize / 8
    }

    /// The fingerprints and keys of `texts`, in parallel with the GIL released: a dict of
    /// `digest` (the digests end to end, `digest_width` bytes each), `simhash` (the SimHash
    /// fingerprints end to end, big-endian), `keys` (every key end to end, `key_width` bytes
    /// each) and `key_offsets` (NumPy int32, `len(texts) + 1`: the keys of text `i` are keys
    /// `key_offsets[i]` to `key_offsets[i + 1]`).
    fn fingerprint<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let texts = convert::texts(texts)?;
        let simhash_width = self.simhash_width();
        let per_text = py.detach(|| {
            texts
                .par_iter()
                .map(|text| {
                    let fingerprints = self.fingerprinter.fingerprint(text);
                    let mut keys = Vec::new();
                    let count = self.keys.write(&fingerprints, &mut keys)?;
                    Ok((fingerprints, keys, count))
                })
                .collect::<Result<Vec<_>, neardup_dedup::DedupError>>()
        });
        let per_text = per_text.map_err(to_py)?;
        let digest_width = per_text
            .first()
            .map_or(0, |(f, _, _)| f.digest.as_bytes().len());
        let (mut digests, mut simhashes, mut keys) = (Vec::new(), Vec::new(), Vec::new());
        let mut offsets = Vec::with_capacity(per_text.len() + 1);
        offsets.push(0i32);
        for (fingerprints, row_keys, count) in &per_text {
            digests.extend_from_slice(fingerprints.digest.as_bytes());
            let simhash = fingerprints.simhash.as_u128().to_be_bytes();
            simhashes.extend_from_slice(&simhash[16 - simhash_width..]);
            keys.extend_from_slice(row_keys);
            let total = offsets[offsets.len() - 1] as usize + count;
            offsets.push(i32::try_from(total).map_err(|_| invalid("too many keys in one batch"))?);
        }
        let out = PyDict::new(py);
        out.set_item("digest", PyBytes::new(py, &digests))?;
        out.set_item("digest_width", digest_width)?;
        out.set_item("simhash", PyBytes::new(py, &simhashes))?;
        out.set_item("keys", PyBytes::new(py, &keys))?;
        out.set_item("key_offsets", PyArray1::from_vec(py, offsets))?;
        Ok(out)
    }

    /// Candidate pairs within groups of documents that share a key: group `g` is members
    /// `offsets[g]` to `offsets[g + 1]` of `rows` (NumPy int64 row numbers) and `simhashes`
    /// (their SimHash fingerprints end to end). Every pair of a group that passes the SimHash
    /// test (`k`, under a SimHash method) is returned as `(smaller row, larger row)`.
    ///
    /// Bounded: it stops after the member whose pairs take the count past `budget` and returns
    /// `(a, b, cursor)`, where `cursor` (group, member) is where the next call starts, or
    /// `None` when every group is done.
    #[pyo3(signature = (rows, simhashes, offsets, cursor = (0, 0), budget = 1 << 20))]
    #[allow(clippy::type_complexity)]
    fn pairs<'py>(
        &self,
        py: Python<'py>,
        rows: PyReadonlyArray1<'py, i64>,
        simhashes: &[u8],
        offsets: PyReadonlyArray1<'py, i64>,
        cursor: (usize, usize),
        budget: usize,
    ) -> PyResult<(
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
        Option<(usize, usize)>,
    )> {
        let (rows, offsets) = (rows.as_slice()?, offsets.as_slice()?);
        let width = self.simhash_width();
        if simhashes.len() != rows.len() * width {
            return Err(invalid(format!(
                "{} bytes of SimHash fingerprints for {} rows of {width} bytes",
                simhashes.len(),
                rows.len()
            )));
        }
        let bounds_ok = offsets.windows(2).all(|w| 0 <= w[0] && w[0] <= w[1])
            && offsets.last().is_none_or(|&end| end as usize <= rows.len());
        if !bounds_ok {
            return Err(invalid("group offsets must ascend within the rows"));
        }
        let simhash = |i: usize| {
            let bytes = &simhashes[i * width..(i + 1) * width];
            let mut value = [0u8; 16];
            value[16 - width..].copy_from_slice(bytes);
            let value = u128::from_be_bytes(value);
            if width == 8 {
                Simhash::B64(value as u64)
            } else {
                Simhash::B128(value)
            }
        };
        let found = py.detach(|| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let (mut group, mut member) = cursor;
            while group + 1 < offsets.len() {
                let (start, end) = (offsets[group] as usize, offsets[group + 1] as usize);
                let mut i = start + member;
                while i < end {
                    for j in i + 1..end {
                        if self.keys.simhash_candidate(simhash(i), simhash(j))? {
                            a.push(rows[i].min(rows[j]));
                            b.push(rows[i].max(rows[j]));
                        }
                    }
                    i += 1;
                    if a.len() >= budget {
                        let next = if i < end {
                            (group, i - start)
                        } else {
                            (group + 1, 0)
                        };
                        return Ok((a, b, Some(next)));
                    }
                }
                group += 1;
                member = 0;
            }
            Ok::<_, neardup_dedup::DedupError>((a, b, None))
        });
        let (a, b, next) = found.map_err(to_py)?;
        Ok((PyArray1::from_vec(py, a), PyArray1::from_vec(py, b), next))
    }

    /// The policy's decision on pairs of texts (`texts_a[i]` with `texts_b[i]`):
    /// [`neardup_dedup::Policy::decide`], as `neardup.compare` gives it, in parallel with the
    /// GIL released. A NumPy bool array: whether each pair is a duplicate.
    fn decide<'py>(
        &self,
        py: Python<'py>,
        texts_a: &Bound<'py, PyAny>,
        texts_b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let (texts_a, texts_b) = (convert::texts(texts_a)?, convert::texts(texts_b)?);
        if texts_a.len() != texts_b.len() {
            return Err(invalid(format!(
                "{} texts to pair with {} texts",
                texts_a.len(),
                texts_b.len()
            )));
        }
        let side = |text: &str| side(&self.policy, &self.fingerprinter, text);
        let verdicts = py.detach(|| {
            texts_a
                .par_iter()
                .zip(texts_b.par_iter())
                .map(|(a, b)| {
                    let ((fa, sa), (fb, sb)) = (side(a), side(b));
                    let decision = self
                        .policy
                        .decide(&Side::new(&fa, sa.as_ref()), &Side::new(&fb, sb.as_ref()))?;
                    Ok(decision.is_duplicate())
                })
                .collect::<Result<Vec<bool>, neardup_dedup::DedupError>>()
        });
        Ok(PyArray1::from_vec(py, verdicts.map_err(to_py)?))
    }

    fn __repr__(&self) -> String {
        format!(
            "SearchKeys({}; {} bytes a key)",
            self.policy.describe(),
            self.keys.width()
        )
    }
}
