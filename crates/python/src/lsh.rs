//! MinHash LSH over `neardup_index::MinHashLsh` and `candidate_pairs`.

use neardup_index::{candidate_pairs, LshParams};
use numpy::{PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use crate::compat::DatasketchMinHash;
use crate::error::{invalid, to_py};

/// A signature given as a `neardup.compat.MinHash`, a 1-D NumPy array of `uint32` or of
/// `uint64` values below 2^32 (datasketch's `hashvalues`), or a list of ints.
pub fn signature(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    if let Ok(m) = obj.cast::<DatasketchMinHash>() {
        return m.borrow().signature();
    }
    if let Ok(a) = obj.extract::<PyReadonlyArray1<'_, u32>>() {
        return Ok(a.as_array().to_vec());
    }
    let wide: Vec<u64> = match obj.extract::<PyReadonlyArray1<'_, u64>>() {
        Ok(a) => a.as_array().to_vec(),
        Err(_) => obj.extract()?,
    };
    wide.into_iter()
        .map(|v| {
            u32::try_from(v).map_err(|_| invalid(format!("signature value {v} is not below 2^32")))
        })
        .collect()
}

/// An online MinHash LSH index under int ids: `MinHashLsh(threshold=0.9, num_perm=128,
/// weights=(0.5, 0.5), params=None)`, banded as datasketch bands (`params=(bands, rows)` to
/// choose). `query` gives the ids of stored signatures sharing a band, ascending.
#[pyclass(module = "neardup")]
pub struct MinHashLsh {
    inner: neardup_index::MinHashLsh,
}

#[pymethods]
impl MinHashLsh {
    #[new]
    #[pyo3(signature = (threshold = 0.9, num_perm = 128, weights = (0.5, 0.5), params = None))]
    fn new(
        threshold: f64,
        num_perm: usize,
        weights: (f64, f64),
        params: Option<(usize, usize)>,
    ) -> PyResult<Self> {
        let params = match params {
            Some((bands, rows)) => LshParams { bands, rows },
            None => LshParams::optimal(threshold, num_perm, weights.0, weights.1).map_err(to_py)?,
        };
        Ok(MinHashLsh {
            inner: neardup_index::MinHashLsh::with_params(threshold, num_perm, params)
                .map_err(to_py)?,
        })
    }

    /// `(bands, rows)`: datasketch's `(b, r)`.
    #[getter]
    fn params(&self) -> (usize, usize) {
        let p = self.inner.params();
        (p.bands, p.rows)
    }

    /// Stores a signature under `id`; fails if `id` is stored already.
    fn insert(&mut self, id: u64, signature: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner
            .insert(id, &self::signature(signature)?)
            .map_err(to_py)
    }

    /// Stores the rows of a 2-D `uint32` array under `ids`.
    fn insert_many(
        &mut self,
        ids: Vec<u64>,
        signatures: PyReadonlyArray2<'_, u32>,
    ) -> PyResult<()> {
        let sigs = signatures.as_array();
        if sigs.nrows() != ids.len() {
            return Err(invalid(format!(
                "{} ids for {} signatures",
                ids.len(),
                sigs.nrows()
            )));
        }
        for (id, row) in ids.into_iter().zip(sigs.rows()) {
            self.inner.insert(id, &row.to_vec()).map_err(to_py)?;
        }
        Ok(())
    }

    /// Ids of stored signatures sharing at least one band with `signature`, ascending.
    fn query(&self, signature: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        self.inner
            .query(&self::signature(signature)?)
            .map_err(to_py)
    }

    /// Removes `id`; returns whether it was stored.
    fn remove(&mut self, id: u64) -> bool {
        self.inner.remove(id)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// Every pair of rows of `signatures` (a 2-D `uint32` array, one signature a row) that share a
/// band of the banding datasketch would choose for `threshold` (or of `params=(bands, rows)`),
/// as an `(m, 2)` array of row indexes, `a < b`, sorted; computed in parallel with the GIL
/// released.
#[pyfunction]
#[pyo3(signature = (signatures, threshold = 0.9, params = None))]
pub fn minhash_candidate_pairs<'py>(
    py: Python<'py>,
    signatures: PyReadonlyArray2<'py, u32>,
    threshold: f64,
    params: Option<(usize, usize)>,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let view = signatures.as_array();
    let num_perm = view.ncols();
    let params = match params {
        Some((bands, rows)) => LshParams { bands, rows },
        None => LshParams::optimal(threshold, num_perm, 0.5, 0.5).map_err(to_py)?,
    };
    let rows: Vec<&[u32]> = match signatures.as_slice() {
        Ok(flat) if num_perm > 0 => flat.chunks_exact(num_perm).collect(),
        _ => {
            return Err(invalid(
                "signatures must be a C-contiguous 2-D array with columns",
            ))
        }
    };
    let pairs = py
        .detach(|| candidate_pairs(&rows, params, None))
        .map_err(to_py)?;
    let flat: Vec<u32> = pairs.iter().flat_map(|p| [p.a, p.b]).collect();
    numpy::PyArray1::from_vec(py, flat).reshape([pairs.len(), 2])
}
