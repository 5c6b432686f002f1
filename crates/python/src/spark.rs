//! `SearchKeys`: what the Spark job (`neardup.spark`) runs in its executors, over Arrow
//! batches, before the engine decides ([`crate::spark_parts`]): the fingerprints and search
//! keys of each row ([`neardup_dedup::SearchKeys`], the engine's own tables or bands), and the
//! links that join the documents sharing a key into the components the engine decides
//! independently. Buffers go in and out as bytes and NumPy arrays, so that the Python side
//! builds Arrow arrays without a Python object per value.

use std::collections::HashMap;

use neardup_core::Fingerprinter;
use neardup_index::{run_components, Fingerprint, UnionFind};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::prelude::*;

use crate::convert;
use crate::error::{invalid, to_py};
use crate::policy::policy_arg;

/// SimHash values whose keys are cut at a time by one thread (`SearchKeys::parts`).
const KEYS_AT_A_TIME: usize = 4096;

/// Bytes of a key of the SimHash tables: the table's index (2 bytes) and its key (8).
const TABLE_KEY_BYTES: usize = 10;

/// The search keys of a policy over a corpus of about `expected_len` documents, and the
/// executors' first steps of the Spark job: `fingerprint`, `links`.
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

    /// The fingerprints and keys of the texts of an Arrow string column (`offsets`, NumPy
    /// int64, `len + 1`, into `data`: `bytes`, or a NumPy `uint8` view of the
    /// column's data buffer, read in place; see `neardup.spark`), in parallel with the GIL released:
    /// a dict of `digest` (the digests end to end, `digest_width` bytes each), `simhash` (the
    /// SimHash fingerprints end to end, big-endian), `keys` (every key end to end, `key_width`
    /// bytes each) and `key_offsets` (NumPy int32, `len + 1`: the keys of text `i` are keys
    /// `key_offsets[i]` to `key_offsets[i + 1]`).
    fn fingerprint<'py>(
        &self,
        py: Python<'py>,
        offsets: PyReadonlyArray1<'py, i64>,
        data: convert::ByteView<'py>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let texts = convert::arrow_texts(offsets.as_slice()?, data.as_slice()?)?;
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

    /// Whether the keys are cut from the SimHash fingerprints alone (`cut`): the SimHash
    /// methods' tables; not MinHash bands nor the `exact` method's digests.
    #[getter]
    fn cuts_from_simhash(&self) -> bool {
        self.keys.tests_simhash()
    }

    /// The keys of documents whose SimHash fingerprints are `simhashes` (end to end,
    /// `simhash_width` bytes each, big-endian, as `fingerprint` gives them), with the GIL
    /// released: a dict of `keys` and `key_offsets` as `fingerprint` gives them, for the
    /// SimHash methods only (`cuts_from_simhash`). The Spark job fingerprints each text once,
    /// while it counts the records, and cuts the keys once the corpus's size (which chooses
    /// the tables) is known.
    fn cut<'py>(&self, py: Python<'py>, simhashes: &[u8]) -> PyResult<Bound<'py, PyDict>> {
        let width = self.simhash_width();
        if !simhashes.len().is_multiple_of(width) {
            return Err(invalid(format!(
                "{} bytes of SimHash values are not a whole number of {width}-byte values",
                simhashes.len()
            )));
        }
        let per_value = py.detach(|| {
            simhashes
                .par_chunks(width)
                .map(|value| {
                    let mut be = [0u8; 16];
                    be[16 - width..].copy_from_slice(value);
                    let value = u128::from_be_bytes(be);
                    let simhash = match width {
                        8 => neardup_core::Simhash::B64(value as u64),
                        _ => neardup_core::Simhash::B128(value),
                    };
                    let mut keys = Vec::new();
                    let count = self.keys.write_simhash(simhash, &mut keys)?;
                    Ok((keys, count))
                })
                .collect::<Result<Vec<_>, neardup_dedup::DedupError>>()
        });
        let per_value = per_value.map_err(to_py)?;
        let mut keys = Vec::new();
        let mut offsets = Vec::with_capacity(per_value.len() + 1);
        offsets.push(0i32);
        for (value_keys, count) in &per_value {
            keys.extend_from_slice(value_keys);
            let total = offsets[offsets.len() - 1] as usize + count;
            offsets.push(i32::try_from(total).map_err(|_| invalid("too many keys in one batch"))?);
        }
        let out = PyDict::new(py);
        out.set_item("keys", PyBytes::new(py, &keys))?;
        out.set_item("key_offsets", PyArray1::from_vec(py, offsets))?;
        Ok(out)
    }

    /// Links within groups of documents that share a key: group `g` is members `offsets[g]` to
    /// `offsets[g + 1]` of `rows` (NumPy int64 row numbers) and `simhashes` (their SimHash
    /// fingerprints end to end). Returns `(a, b)`, `a < b`: at most one link a member, which
    /// join the members exactly as every candidate pair of the group would (under a SimHash
    /// method the pairs within `k`, found by the engine's own search ([`run_components`]); under
    /// MinHash every pair of the group, each member linked to the group's first). So a group
    /// of m near-identical documents gives m − 1 links, never m(m − 1)/2 pairs.
    #[allow(clippy::type_complexity)]
    fn links<'py>(
        &self,
        py: Python<'py>,
        rows: PyReadonlyArray1<'py, i64>,
        simhashes: &[u8],
        offsets: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)> {
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
            let mut value = [0u8; 16];
            value[16 - width..].copy_from_slice(&simhashes[i * width..(i + 1) * width]);
            u128::from_be_bytes(value)
        };
        let found = py.detach(|| {
            let groups: Vec<(usize, usize)> = offsets
                .windows(2)
                .map(|w| (w[0] as usize, w[1] as usize))
                .filter(|(start, end)| end - start > 1)
                .collect();
            let per_group = groups
                .par_iter()
                .map(|&(start, end)| {
                    let values: Vec<u128> = (start..end).map(simhash).collect();
                    Ok(group_links(&rows[start..end], &self.group_labels(&values)?))
                })
                .collect::<Result<Vec<_>, neardup_dedup::DedupError>>()?;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for links in per_group {
                for (x, y) in links {
                    a.push(x);
                    b.push(y);
                }
            }
            Ok::<_, neardup_dedup::DedupError>((a, b))
        });
        let (a, b) = found.map_err(to_py)?;
        Ok((PyArray1::from_vec(py, a), PyArray1::from_vec(py, b)))
    }

    /// The parts of a corpus whose SimHash fingerprints are all in one process (the Spark
    /// job's driver, for a corpus small enough): `rows` (NumPy int64 row numbers) and their
    /// `simhashes` (end to end, `simhash_width` bytes each, as `fingerprint` gives them).
    /// Every key of every row is cut (`cut`), the keys sorted, each run of one key linked as
    /// `links` links it, and the components of the links found as [`link_components`] finds
    /// them: `(node, root)` for every row in a part of two or more, `root` the smallest row of
    /// its part, the same parts as the executors' keys, links and components give. The SimHash
    /// methods only (`cuts_from_simhash`). With the GIL released, in parallel.
    #[allow(clippy::type_complexity)]
    fn parts<'py>(
        &self,
        py: Python<'py>,
        rows: PyReadonlyArray1<'py, i64>,
        simhashes: &[u8],
    ) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)> {
        let rows = rows.as_slice()?;
        let width = self.simhash_width();
        if simhashes.len() != rows.len() * width {
            return Err(invalid(format!(
                "{} bytes of SimHash fingerprints for {} rows of {width} bytes",
                simhashes.len(),
                rows.len()
            )));
        }
        if u32::try_from(rows.len()).is_err() {
            return Err(invalid("more than 4,294,967,295 rows in one process"));
        }
        let found = py.detach(|| {
            let values: Vec<u128> = simhashes.chunks(width).map(be_value).collect();
            self.corpus_parts(rows, &values)
        });
        let (nodes, roots) = found.map_err(to_py)?;
        Ok((PyArray1::from_vec(py, nodes), PyArray1::from_vec(py, roots)))
    }

    fn __repr__(&self) -> String {
        format!(
            "SearchKeys({}; {} bytes a key)",
            self.policy.describe(),
            self.keys.width()
        )
    }
}

impl SearchKeys {
    /// The parts of a whole corpus (`rows`, their SimHash `values`): `(node, root)` as
    /// [`components`] gives them for the links of every key's group. One table at a time: its
    /// key of every row cut (the row's keys, [`neardup_dedup::SearchKeys::write_simhash`], one a
    /// table in table order), the `(key, position)` entries sorted, each run of one key linked
    /// as [`SearchKeys::links`] links a group and the links merged at once into a union-find
    /// of the positions: about 40 bytes a row (its value, its entry, its set), whatever the
    /// links.
    fn corpus_parts(
        &self,
        rows: &[i64],
        values: &[u128],
    ) -> Result<(Vec<i64>, Vec<i64>), neardup_dedup::DedupError> {
        let key_width = self.keys.width();
        let width = self.simhash_width();
        let tables = match values.first() {
            Some(&first) => {
                let mut keys = Vec::new();
                self.keys
                    .write_simhash(simhash_of(first, width), &mut keys)?
            }
            None => 0,
        };
        if key_width != TABLE_KEY_BYTES && tables > 0 {
            return Err(neardup_dedup::DedupError::InvalidOption(format!(
                "keys of {key_width} bytes are not the SimHash tables' (parts: the SimHash methods only)"
            )));
        }
        let mut components = UnionFind::new(values.len())?;
        let mut entries: Vec<(u64, u32)> = Vec::with_capacity(values.len());
        for table in 0..tables {
            entries.clear();
            let chunks = values
                .par_chunks(KEYS_AT_A_TIME)
                .enumerate()
                .map(|(chunk, values)| {
                    let mut keys = Vec::new();
                    let mut cut = Vec::with_capacity(values.len());
                    for (i, &value) in values.iter().enumerate() {
                        keys.clear();
                        self.keys
                            .write_simhash(simhash_of(value, width), &mut keys)?;
                        let at = table * TABLE_KEY_BYTES;
                        let key = keys.get(at + 2..at + TABLE_KEY_BYTES).ok_or_else(|| {
                            neardup_dedup::DedupError::InvalidOption(
                                "fewer keys than tables".into(),
                            )
                        })?;
                        let key = u64::from_be_bytes(key.try_into().expect("8 bytes"));
                        cut.push((key, (chunk * KEYS_AT_A_TIME + i) as u32));
                    }
                    Ok(cut)
                })
                .collect::<Result<Vec<_>, neardup_dedup::DedupError>>()?;
            for chunk in chunks {
                entries.extend(chunk);
            }
            entries.par_sort_unstable();
            let mut groups = Vec::new();
            let mut start = 0;
            for end in 1..=entries.len() {
                if end == entries.len() || entries[end].0 != entries[start].0 {
                    if end - start > 1 {
                        groups.push((start, end));
                    }
                    start = end;
                }
            }
            let per_group = groups
                .par_iter()
                .map(|&(start, end)| {
                    let members = &entries[start..end];
                    let group_values: Vec<u128> =
                        members.iter().map(|&(_, m)| values[m as usize]).collect();
                    let positions: Vec<i64> = members.iter().map(|&(_, m)| i64::from(m)).collect();
                    Ok(group_links(&positions, &self.group_labels(&group_values)?))
                })
                .collect::<Result<Vec<_>, neardup_dedup::DedupError>>()?;
            for (a, b) in per_group.into_iter().flatten() {
                components.union(a as u32, b as u32);
            }
        }
        // Every position with another in its set is in a part; its root is the set's smallest row.
        let sets: Vec<u32> = (0..values.len() as u32)
            .map(|i| components.find(i))
            .collect();
        let mut size = vec![0u32; values.len()];
        let mut smallest = vec![i64::MAX; values.len()];
        for (i, &set) in sets.iter().enumerate() {
            size[set as usize] += 1;
            smallest[set as usize] = smallest[set as usize].min(rows[i]);
        }
        let mut parts: Vec<(i64, i64)> = sets
            .iter()
            .enumerate()
            .filter(|&(_, &set)| size[set as usize] > 1)
            .map(|(i, &set)| (rows[i], smallest[set as usize]))
            .collect();
        parts.par_sort_unstable();
        Ok(parts.into_iter().unzip())
    }

    /// The label of each member of a key's group (`values`: their SimHash fingerprints): the
    /// members of one component of the group's candidate pairs share a label. Under MinHash
    /// one component (every pair sharing a band is a candidate). Under a SimHash method the
    /// pairs within `k` (the policy's candidate test, [`neardup_dedup::Policy::simhash_evidence`])
    /// searched among the group's distinct values (exact copies, frequent in a crawl, share a
    /// value and so a label) as one run ([`labels`]).
    fn group_labels(&self, values: &[u128]) -> Result<Vec<u32>, neardup_dedup::DedupError> {
        if !self.keys.tests_simhash() {
            return Ok(vec![0; values.len()]);
        }
        let mut distinct = values.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let labels = if self.simhash_width() == 8 {
            let fps: Vec<u64> = distinct.iter().map(|&v| v as u64).collect();
            labels(&fps, self.policy.k)?
        } else {
            labels(&distinct, self.policy.k)?
        };
        Ok(values
            .iter()
            .map(|v| labels[distinct.binary_search(v).unwrap_or(0)])
            .collect())
    }
}

/// The label of each of `fps` (the index of a member of its component): its component among
/// them of pairs within `k`, searched as one run ([`run_components`]: the bits the group's
/// members share, its key's at least, cost nothing; no table design of its own).
fn labels<F: Fingerprint>(fps: &[F], k: u32) -> Result<Vec<u32>, neardup_dedup::DedupError> {
    let mut components = run_components(fps, k)?;
    Ok((0..fps.len() as u32).map(|i| components.find(i)).collect())
}

/// Links `(a, b)`, `a < b`, from the smallest row of each label's component to each other row
/// of it: a spanning star of each component.
fn group_links(rows: &[i64], labels: &[u32]) -> Vec<(i64, i64)> {
    let mut first: HashMap<u32, i64> = HashMap::new();
    for (&row, &label) in rows.iter().zip(labels) {
        let head = first.entry(label).or_insert(row);
        *head = (*head).min(row);
    }
    rows.iter()
        .zip(labels)
        .filter_map(|(&row, label)| {
            let head = first[label];
            (head != row).then_some((head, row))
        })
        .collect()
}

/// Connected components of the links `(a[i], b[i])` (row numbers), for a set of links small
/// enough for one process (the Spark job's driver): `(node, root)` for every node of a link,
/// `root` the smallest node of its component. Union-find ([`UnionFind`]) over the nodes
/// numbered densely.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn link_components<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, i64>,
    b: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)> {
    let (a, b) = (a.as_slice()?, b.as_slice()?);
    if a.len() != b.len() {
        return Err(invalid(format!(
            "{} link ends to pair with {}",
            a.len(),
            b.len()
        )));
    }
    let (nodes, roots) = py.detach(|| components(a, b)).map_err(to_py)?;
    Ok((PyArray1::from_vec(py, nodes), PyArray1::from_vec(py, roots)))
}

/// The components of the links `(a[i], b[i])`: `(node, root)` for every node of a link, in
/// ascending order, `root` the smallest node of its component (union-find over the nodes
/// numbered densely).
fn components(a: &[i64], b: &[i64]) -> Result<(Vec<i64>, Vec<i64>), neardup_dedup::DedupError> {
    let mut nodes: Vec<i64> = a.iter().chain(b).copied().collect();
    nodes.par_sort_unstable();
    nodes.dedup();
    let at = |row: &i64| nodes.binary_search(row).map_or(0, |i| i as u32);
    let mut components = UnionFind::new(nodes.len())?;
    for (x, y) in a.iter().zip(b) {
        components.union(at(x), at(y));
    }
    let roots: Vec<u32> = (0..nodes.len() as u32)
        .map(|i| components.find(i))
        .collect();
    // Nodes ascend, so the first node met of each component is its smallest.
    let mut smallest = vec![u32::MAX; nodes.len()];
    for (i, &root) in roots.iter().enumerate() {
        smallest[root as usize] = smallest[root as usize].min(i as u32);
    }
    let root_rows = roots
        .iter()
        .map(|&r| nodes[smallest[r as usize] as usize])
        .collect();
    Ok((nodes, root_rows))
}

/// A SimHash value (`width` bytes: 8 or 16) as the core's type.
pub(crate) fn simhash_of(value: u128, width: usize) -> neardup_core::Simhash {
    match width {
        8 => neardup_core::Simhash::B64(value as u64),
        _ => neardup_core::Simhash::B128(value),
    }
}

/// A big-endian SimHash value of 8 or 16 bytes as a `u128`.
pub(crate) fn be_value(value: &[u8]) -> u128 {
    let mut be = [0u8; 16];
    be[16 - value.len()..].copy_from_slice(value);
    u128::from_be_bytes(be)
}
