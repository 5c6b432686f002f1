//! `Fingerprinter`, `Fingerprint` and the batch `FingerprintBatch`.

use std::sync::Arc;

use neardup_core::minhash::MinHasher;
use neardup_core::{Bits, Fingerprints};
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::convert;
use crate::error::{invalid, to_py};

/// Turns texts into fingerprints under one profile: `Fingerprinter(profile="web")`, where the
/// profile is a built-in name (`web`, `zh`, `zh-short`, `python-simhash`), a dict or a JSON
/// string (the fields of `neardup fingerprint --show-profile`).
#[pyclass(module = "neardup", frozen)]
pub struct Fingerprinter {
    pub(crate) inner: Arc<neardup_core::Fingerprinter>,
}

impl Fingerprinter {
    /// A fingerprinter for a profile given as [`convert::profile`] reads it.
    pub fn from_profile_arg(profile: &Bound<'_, PyAny>) -> PyResult<Self> {
        let profile = convert::profile(profile)?;
        Ok(Fingerprinter {
            inner: Arc::new(neardup_core::Fingerprinter::new(profile).map_err(to_py)?),
        })
    }
}

#[pymethods]
impl Fingerprinter {
    #[new]
    #[pyo3(signature = (profile = None))]
    fn new(py: Python<'_>, profile: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        match profile {
            Some(p) => Self::from_profile_arg(p),
            None => Self::from_profile_arg(pyo3::types::PyString::new(py, "web").as_any()),
        }
    }

    /// The profile, as a dict.
    #[getter]
    fn profile(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        convert::serialize_to_python(py, self.inner.profile())
    }

    /// The fingerprints of one text.
    fn fingerprint(&self, py: Python<'_>, text: &str) -> Fingerprint {
        let fingerprints = if text.len() > 1 << 16 {
            py.detach(|| self.inner.fingerprint(text))
        } else {
            self.inner.fingerprint(text)
        };
        Fingerprint(fingerprints)
    }

    /// The fingerprints of many texts (a list, a NumPy array of str, a pandas Series, a pyarrow
    /// string array), computed in parallel with the GIL released.
    fn fingerprint_many(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
    ) -> PyResult<FingerprintBatch> {
        let texts = convert::texts(texts)?;
        let inner = &self.inner;
        let items = py.detach(|| {
            texts
                .par_iter()
                .map(|t| inner.fingerprint(t))
                .collect::<Vec<_>>()
        });
        Ok(FingerprintBatch {
            items,
            bits: inner.profile().bits,
        })
    }

    /// The MinHash signatures of many texts alone, as NumPy `uint32` of shape
    /// `(n, num_perm)`: the same values as `fingerprint_many(texts).minhash`, without the
    /// SimHash and the digest (each distinct feature folded in once). In parallel, with the GIL
    /// released; the profile must make MinHash signatures.
    fn minhash_many<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let Some(options) = self.inner.profile().minhash else {
            return Err(invalid(
                "the profile makes no MinHash signatures (\"minhash\": {\"num_perm\": 128, \"seed\": 1})",
            ));
        };
        let texts = convert::texts(texts)?;
        let minhasher = MinHasher::new(options);
        let inner = &self.inner;
        let values: Vec<u32> = py.detach(|| {
            let mut values = vec![0u32; texts.len() * options.num_perm];
            values
                .par_chunks_mut(options.num_perm)
                .zip(texts.par_iter())
                .for_each(|(row, text)| {
                    row.fill(u32::MAX);
                    for &hash in inner.feature_set(text).as_slice() {
                        minhasher.update(row, hash);
                    }
                });
            values
        });
        PyArray1::from_vec(py, values).reshape([texts.len(), options.num_perm])
    }

    /// The text as fingerprinting sees it (normalised).
    fn normalize(&self, text: &str) -> String {
        self.inner.normalize(text)
    }

    /// The sorted, distinct 64-bit hashes of the text's features: the set Jaccard resemblance
    /// and containment are measured on.
    fn feature_set<'py>(&self, py: Python<'py>, text: &str) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, self.inner.feature_set(text).as_slice())
    }

    fn __repr__(&self) -> String {
        format!("Fingerprinter(profile={:?})", self.inner.profile().name)
    }
}

/// The fingerprints of one text: `simhash` (an int), `digest` (hex), `minhash` (a list of
/// ints, when the profile makes MinHash signatures), `features` (how many went in).
#[pyclass(module = "neardup", frozen, eq)]
#[derive(PartialEq)]
pub struct Fingerprint(pub(crate) Fingerprints);

#[pymethods]
impl Fingerprint {
    /// The SimHash fingerprint as an unsigned int (64 or 128 bits).
    #[getter]
    fn simhash(&self) -> u128 {
        self.0.simhash.as_u128()
    }

    /// The SimHash fingerprint as hexadecimal digits (16 or 32), as the CLI writes it.
    #[getter]
    fn simhash_hex(&self) -> String {
        self.0.simhash.to_string()
    }

    /// The fingerprint's width in bits.
    #[getter]
    fn bits(&self) -> u32 {
        self.0.simhash.bits().count()
    }

    /// The digest of the normalised text, in hexadecimal: equal digests are exact duplicates.
    #[getter]
    fn digest(&self) -> String {
        self.0.digest.to_string()
    }

    /// The MinHash signature, or None when the profile makes none.
    #[getter]
    fn minhash(&self) -> Option<Vec<u32>> {
        self.0.minhash.clone()
    }

    /// How many features went into the fingerprint.
    #[getter]
    fn features(&self) -> u64 {
        self.0.features
    }

    /// The Hamming distance between the two SimHash fingerprints.
    fn distance(&self, other: &Fingerprint) -> PyResult<u32> {
        self.0.simhash.distance(other.0.simhash).map_err(to_py)
    }

    fn __repr__(&self) -> String {
        format!(
            "Fingerprint(simhash=0x{}, digest={:?}, features={})",
            self.0.simhash, self.0.digest, self.0.features
        )
    }
}

/// The fingerprints of many texts, in input order: `simhash` as a NumPy array, `len()`, and
/// `batch[i]` for one `Fingerprint`.
#[pyclass(module = "neardup", frozen)]
pub struct FingerprintBatch {
    pub(crate) items: Vec<Fingerprints>,
    bits: Bits,
}

#[pymethods]
impl FingerprintBatch {
    /// SimHash fingerprints as NumPy `uint64`: shape `(n,)` for 64-bit profiles, `(n, 2)`
    /// (high half, low half) for 128-bit ones.
    #[getter]
    fn simhash<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.bits {
            Bits::B64 => {
                let values: Vec<u64> = self
                    .items
                    .iter()
                    .map(|f| f.simhash.as_u128() as u64)
                    .collect();
                Ok(PyArray1::from_vec(py, values).into_any())
            }
            Bits::B128 => {
                let mut values = Vec::with_capacity(self.items.len() * 2);
                for f in &self.items {
                    let v = f.simhash.as_u128();
                    values.extend([(v >> 64) as u64, v as u64]);
                }
                let array = PyArray1::from_vec(py, values);
                Ok(array.reshape([self.items.len(), 2])?.into_any())
            }
        }
    }

    /// MinHash signatures as NumPy `uint32` of shape `(n, num_perm)`, or None when the profile
    /// makes none.
    #[getter]
    fn minhash<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<u32>>>> {
        let Some(width) = self
            .items
            .first()
            .and_then(|f| f.minhash.as_ref())
            .map(Vec::len)
        else {
            return Ok(None);
        };
        let mut values = Vec::with_capacity(self.items.len() * width);
        for f in &self.items {
            values.extend_from_slice(f.minhash.as_deref().unwrap_or_default());
        }
        Ok(Some(
            PyArray1::from_vec(py, values).reshape([self.items.len(), width])?,
        ))
    }

    /// Digests of the normalised texts, in hexadecimal.
    #[getter]
    fn digests(&self) -> Vec<String> {
        self.items.iter().map(|f| f.digest.to_string()).collect()
    }

    /// How many features went into each fingerprint, as NumPy `uint64`.
    #[getter]
    fn features<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_iter(py, self.items.iter().map(|f| f.features))
    }

    fn __len__(&self) -> usize {
        self.items.len()
    }

    fn __getitem__(&self, index: isize) -> PyResult<Fingerprint> {
        let n = self.items.len() as isize;
        let i = if index < 0 { index + n } else { index };
        if !(0..n).contains(&i) {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "index {index} out of range for {n} fingerprints"
            )));
        }
        Ok(Fingerprint(self.items[i as usize].clone()))
    }

    fn __repr__(&self) -> String {
        format!("FingerprintBatch({} texts)", self.items.len())
    }
}
