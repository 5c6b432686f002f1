//! The native parts of `neardup.compat`: the PyPI `simhash` package's values (the
//! `python-simhash` profile), its `SimhashIndex` search, and datasketch's `MinHash` values.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use neardup_core::hash::HashAlgorithm;
use neardup_core::simhash::WeightedSums;
use neardup_core::{Bits, Fingerprinter, Profile};
use neardup_index::{BruteForce, Design, HammingIndex, PermutedTables};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;
use rayon::prelude::*;
use sha1::{Digest, Sha1};

use crate::convert;
use crate::error::{invalid, to_py};

/// The `python-simhash` profile's fingerprinter at `f` bits (64 or 128).
fn python_simhasher(f: u32) -> PyResult<&'static Fingerprinter> {
    static B64: OnceLock<Fingerprinter> = OnceLock::new();
    static B128: OnceLock<Fingerprinter> = OnceLock::new();
    let (cell, bits) = match f {
        64 => (&B64, Bits::B64),
        128 => (&B128, Bits::B128),
        _ => {
            return Err(invalid(format!(
                "f={f}: neardup's simhash compatibility supports f=64 and f=128"
            )))
        }
    };
    Ok(cell.get_or_init(|| {
        let profile = Profile {
            bits,
            ..Profile::python_simhash()
        };
        Fingerprinter::new(profile).expect("the python-simhash profile is valid")
    }))
}

/// `simhash.Simhash(text, f).value` of the PyPI package `simhash` 2.1.2.
#[pyfunction]
#[pyo3(signature = (text, f = 64))]
pub fn python_simhash(py: Python<'_>, text: &Bound<'_, PyString>, f: u32) -> PyResult<u128> {
    let fingerprinter = python_simhasher(f)?;
    let text = text.to_cow()?;
    let simhash = if text.len() > 1 << 16 {
        py.detach(|| fingerprinter.fingerprint(&text).simhash)
    } else {
        fingerprinter.fingerprint(&text).simhash
    };
    Ok(simhash.as_u128())
}

/// `Simhash(text, f=64).value` for many texts, as NumPy `uint64`, in parallel with the GIL
/// released.
#[pyfunction]
pub fn python_simhash_many<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let fingerprinter = python_simhasher(64)?;
    let texts = convert::texts(texts)?;
    let values: Vec<u64> = py.detach(|| {
        texts
            .par_iter()
            .map(|t| fingerprinter.fingerprint(t).simhash.as_u128() as u64)
            .collect()
    });
    Ok(PyArray1::from_vec(py, values))
}

/// `simhash.Simhash(features, f).value` for features given as str (weight 1, or as in the
/// package the weight of the last pair before it) or `(str, weight)` pairs: MD5 of each
/// feature's UTF-8 bytes read big-endian, weighted bit sums, a bit set when its sum is more
/// than half the total weight.
#[pyfunction]
#[pyo3(signature = (features, f = 64))]
pub fn python_simhash_features(features: &Bound<'_, PyAny>, f: u32) -> PyResult<u128> {
    let bits = python_simhasher(f)?.profile().bits;
    let hasher = HashAlgorithm::Md5.hasher();
    let mut sums = WeightedSums::new(bits);
    // As in the package, a bare str takes the weight of the last pair before it (1 at first).
    let mut weight = 1.0;
    for feature in features.try_iter()? {
        let feature = feature?;
        let name = match feature.extract::<PyBackedStr>() {
            Ok(name) => name,
            Err(_) => {
                let (name, w): (PyBackedStr, f64) = feature
                    .extract()
                    .map_err(|_| invalid("a feature is a str or a (str, weight) pair"))?;
                weight = w;
                name
            }
        };
        let hash = hasher.hash128(name.as_bytes());
        let hash = if bits == Bits::B64 {
            u128::from(hash as u64)
        } else {
            hash
        };
        sums.add(hash, weight);
    }
    Ok(sums.finish())
}

/// The search of the PyPI package's `SimhashIndex`: entries `(value, id)`, each once; a query
/// gives the ids of every entry within `k` bits (exact, as the package's pigeonhole buckets
/// are), each id once.
#[pyclass(module = "neardup.compat")]
pub struct SimhashIndexCore {
    k: u32,
    index: Box<dyn HammingIndex<u64> + Send + Sync>,
    entries: HashMap<(u64, String), u64>,
    ids: HashMap<u64, String>,
    next: u64,
}

#[pymethods]
impl SimhashIndexCore {
    #[new]
    #[pyo3(signature = (k, expected = 0))]
    fn new(k: u32, expected: usize) -> PyResult<Self> {
        let index: Box<dyn HammingIndex<u64> + Send + Sync> = if k <= 8 {
            let design = Design::for_expected_len(expected.max(1 << 16), k, 64);
            Box::new(PermutedTables::<u64>::new(design).map_err(to_py)?)
        } else {
            Box::new(BruteForce::<u64>::new())
        };
        Ok(SimhashIndexCore {
            k: k.min(64),
            index,
            entries: HashMap::new(),
            ids: HashMap::new(),
            next: 0,
        })
    }

    /// Adds the entry `(value, id)` (nothing if it is there already).
    fn add(&mut self, id: String, value: u64) -> PyResult<()> {
        if self.entries.contains_key(&(value, id.clone())) {
            return Ok(());
        }
        let handle = self.next;
        self.index.insert(handle, value).map_err(to_py)?;
        self.next += 1;
        self.ids.insert(handle, id.clone());
        self.entries.insert((value, id), handle);
        Ok(())
    }

    /// Removes the entry `(value, id)` if it is there.
    fn delete(&mut self, id: String, value: u64) {
        if let Some(handle) = self.entries.remove(&(value, id)) {
            self.index.remove(handle);
            self.ids.remove(&handle);
        }
    }

    /// The ids of the entries within `k` bits of `value`, each once, nearest first.
    fn get_near_dups(&self, value: u64) -> PyResult<Vec<String>> {
        let matches = self.index.query(value, self.k).map_err(to_py)?;
        let mut seen = std::collections::HashSet::new();
        Ok(matches
            .iter()
            .filter_map(|m| self.ids.get(&m.id))
            .filter(|id| seen.insert(id.as_str()))
            .cloned()
            .collect())
    }

    fn __len__(&self) -> usize {
        self.entries.len()
    }
}

/// datasketch's permutation schemes (`MinHash(scheme=...)`): `affine32`, its default since
/// 2.0.0; `legacy`, the only one before; `affine64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Scheme {
    Legacy,
    Affine32,
    Affine64,
}

impl Scheme {
    fn named(name: &str) -> PyResult<Scheme> {
        match name {
            "affine32" => Ok(Scheme::Affine32),
            "legacy" => Ok(Scheme::Legacy),
            "affine64" => Ok(Scheme::Affine64),
            _ => Err(invalid(format!(
                "scheme must be one of affine32, affine64, legacy, got {name:?}"
            ))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Scheme::Legacy => "legacy",
            Scheme::Affine32 => "affine32",
            Scheme::Affine64 => "affine64",
        }
    }

    /// The largest hash value, also the value of an empty signature.
    fn max_hash(self) -> u64 {
        match self {
            Scheme::Legacy | Scheme::Affine32 => MAX_HASH,
            Scheme::Affine64 => u64::MAX,
        }
    }
}

/// datasketch's hash-function family for a scheme, `num_perm` and `seed`: the `(a, b)` pairs
/// its `MinHash._init_permutations` draws with `numpy.random.RandomState(seed)`.
struct Permutations {
    a: Vec<u64>,
    b: Vec<u64>,
}

/// datasketch's `_mersenne_prime`, 2^61 − 1.
const MERSENNE_PRIME: u64 = (1 << 61) - 1;
/// datasketch's `_max_hash`, 2^32 − 1.
const MAX_HASH: u64 = u32::MAX as u64;

impl Permutations {
    /// The family, drawn once per `(scheme, num_perm, seed)` and shared.
    fn of(scheme: Scheme, num_perm: usize, seed: u32) -> Arc<Permutations> {
        type Cache = Mutex<HashMap<(Scheme, usize, u32), Arc<Permutations>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry((scheme, num_perm, seed))
            .or_insert_with(|| Arc::new(Permutations::draw(scheme, num_perm, seed)))
            .clone()
    }

    fn draw(scheme: Scheme, num_perm: usize, seed: u32) -> Permutations {
        let mut mt = LegacyRandomState::new(seed);
        match scheme {
            Scheme::Legacy => {
                // Pairs: randint(1, prime) then randint(0, prime), one pair at a time.
                let (mut a, mut b) = (Vec::with_capacity(num_perm), Vec::with_capacity(num_perm));
                for _ in 0..num_perm {
                    a.push(1 + mt.bounded64(MERSENNE_PRIME - 2));
                    b.push(mt.bounded64(MERSENNE_PRIME - 1));
                }
                Permutations { a, b }
            }
            Scheme::Affine32 => {
                // randint(0, 2^31, n) * 2 + 1, then randint(0, 2^32, n), as uint32.
                let a = (0..num_perm)
                    .map(|_| u64::from(mt.bounded32(u32::MAX >> 1)) * 2 + 1)
                    .collect();
                let b = (0..num_perm).map(|_| u64::from(mt.next_u32())).collect();
                Permutations { a, b }
            }
            Scheme::Affine64 => {
                let a = (0..num_perm)
                    .map(|_| mt.bounded64(u64::MAX >> 1).wrapping_mul(2).wrapping_add(1))
                    .collect();
                let b = (0..num_perm).map(|_| mt.next_u64()).collect();
                Permutations { a, b }
            }
        }
    }
}

/// The MurmurHash3 32-bit finalizer (datasketch's `_fmix` at width 32).
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The MurmurHash3 64-bit finalizer (datasketch's `_fmix` at width 64).
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// NumPy's legacy `RandomState`: MT19937 seeded by `init_genrand` (the `rand_mt` crate's `Mt`),
/// with NumPy's 64-bit draws and its masked rejection sampling for bounded integers.
struct LegacyRandomState {
    mt: rand_mt::Mt,
}

impl LegacyRandomState {
    fn new(seed: u32) -> Self {
        LegacyRandomState {
            mt: rand_mt::Mt::new(seed),
        }
    }

    fn next_u32(&mut self) -> u32 {
        self.mt.next_u32()
    }

    fn next_u64(&mut self) -> u64 {
        let high = u64::from(self.next_u32());
        (high << 32) | u64::from(self.next_u32())
    }

    /// A value in `0..=range`, by NumPy's masked rejection sampling (`range` < 2^32).
    fn bounded32(&mut self, range: u32) -> u32 {
        let mask = u32::MAX >> range.leading_zeros();
        loop {
            let value = self.next_u32() & mask;
            if value <= range {
                return value;
            }
        }
    }

    /// A value in `0..=range`, by NumPy's masked rejection sampling (`range` ≥ 2^32).
    fn bounded64(&mut self, range: u64) -> u64 {
        let mask = u64::MAX >> range.leading_zeros();
        loop {
            let value = self.next_u64() & mask;
            if value <= range {
                return value;
            }
        }
    }
}

/// datasketch's `MinHash(num_perm=128, seed=1, scheme="affine32")` with its default hash
/// (the first 4 bytes of SHA-1, little-endian; 8 for `affine64`) and its permutation family:
/// the same `hashvalues` for the same `update` calls, in every scheme.
#[pyclass(module = "neardup.compat", name = "MinHash")]
#[derive(Clone)]
pub struct DatasketchMinHash {
    scheme: Scheme,
    seed: u32,
    permutations: Arc<Permutations>,
    values: Vec<u64>,
}

impl DatasketchMinHash {
    /// The signature as `u32` values; fails for `affine64` signatures.
    pub fn signature(&self) -> PyResult<Vec<u32>> {
        if self.scheme == Scheme::Affine64 {
            return Err(invalid(
                "neardup's MinHash LSH takes 32-bit signatures (scheme affine32 or legacy)",
            ));
        }
        Ok(self.values.iter().map(|&v| v as u32).collect())
    }

    fn update_one(&mut self, data: &[u8]) {
        let digest = Sha1::digest(data);
        let hv32 = u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]]);
        let Permutations { a, b } = &*self.permutations;
        let slots = self.values.iter_mut().zip(a).zip(b);
        match self.scheme {
            Scheme::Legacy => {
                let hv = u64::from(hv32);
                for ((slot, &a), &b) in slots {
                    let phv = (a.wrapping_mul(hv).wrapping_add(b) % MERSENNE_PRIME) & MAX_HASH;
                    *slot = (*slot).min(phv);
                }
            }
            Scheme::Affine32 => {
                let hv = fmix32(hv32);
                for ((slot, &a), &b) in slots {
                    let phv = (a as u32).wrapping_mul(hv).wrapping_add(b as u32);
                    *slot = (*slot).min(u64::from(phv));
                }
            }
            Scheme::Affine64 => {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(&digest[..8]);
                let hv = fmix64(u64::from_le_bytes(bytes));
                for ((slot, &a), &b) in slots {
                    *slot = (*slot).min(a.wrapping_mul(hv).wrapping_add(b));
                }
            }
        }
    }

    fn check_peer(&self, other: &DatasketchMinHash, what: &str) -> PyResult<()> {
        if self.scheme != other.scheme {
            return Err(invalid(format!(
                "cannot {what} MinHash with different permutation schemes"
            )));
        }
        if self.seed != other.seed {
            return Err(invalid(format!(
                "cannot {what} MinHash with different seeds"
            )));
        }
        if self.values.len() != other.values.len() {
            return Err(invalid(format!(
                "cannot {what} MinHash with different numbers of permutation functions"
            )));
        }
        Ok(())
    }
}

#[pymethods]
impl DatasketchMinHash {
    #[new]
    #[pyo3(signature = (num_perm = 128, seed = 1, hashvalues = None, scheme = None))]
    fn new(
        num_perm: usize,
        seed: u64,
        hashvalues: Option<Vec<u64>>,
        scheme: Option<&str>,
    ) -> PyResult<Self> {
        let seed =
            u32::try_from(seed).map_err(|_| invalid("Seed must be between 0 and 2**32 - 1"))?;
        if hashvalues.is_some() && scheme.is_none() {
            return Err(invalid(
                "scheme must be specified explicitly when initializing from existing hash values",
            ));
        }
        let scheme = Scheme::named(scheme.unwrap_or("affine32"))?;
        let num_perm = hashvalues.as_ref().map_or(num_perm, Vec::len);
        if num_perm == 0 || num_perm > 1 << 16 {
            return Err(invalid("num_perm must be between 1 and 65536"));
        }
        if let Some(v) = hashvalues
            .as_ref()
            .and_then(|v| v.iter().find(|&&v| v > scheme.max_hash()))
        {
            return Err(invalid(format!(
                "hash value {v} out of range for scheme {}",
                scheme.name()
            )));
        }
        Ok(DatasketchMinHash {
            scheme,
            seed,
            permutations: Permutations::of(scheme, num_perm, seed),
            values: hashvalues.unwrap_or_else(|| vec![scheme.max_hash(); num_perm]),
        })
    }

    /// Folds one value (bytes) into the signature.
    fn update(&mut self, data: &[u8]) {
        self.update_one(data);
    }

    /// Folds many values (an iterable of bytes) into the signature.
    fn update_batch(&mut self, data: &Bound<'_, PyAny>) -> PyResult<()> {
        for item in data.try_iter()? {
            let item = item?;
            self.update_one(item.extract::<&[u8]>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err("update_batch takes bytes values")
            })?);
        }
        Ok(())
    }

    /// The estimated Jaccard resemblance: the share of equal signature values.
    fn jaccard(&self, other: &DatasketchMinHash) -> PyResult<f64> {
        self.check_peer(other, "compute Jaccard similarity of")?;
        let equal = self
            .values
            .iter()
            .zip(&other.values)
            .filter(|(a, b)| a == b)
            .count();
        Ok(equal as f64 / self.values.len() as f64)
    }

    /// The estimated number of distinct values folded in (datasketch's `count`).
    fn count(&self) -> f64 {
        let k = self.values.len() as f64;
        let max = self.scheme.max_hash() as f64;
        k / self.values.iter().map(|&v| v as f64 / max).sum::<f64>() - 1.0
    }

    /// Merges `other` in: the signature of the union.
    fn merge(&mut self, other: &DatasketchMinHash) -> PyResult<()> {
        self.check_peer(other, "merge")?;
        for (a, &b) in self.values.iter_mut().zip(&other.values) {
            *a = (*a).min(b);
        }
        Ok(())
    }

    /// The signature, a NumPy array (a copy): `uint32` for `affine32`, else `uint64`.
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        if self.scheme == Scheme::Affine32 {
            PyArray1::from_iter(py, self.values.iter().map(|&v| v as u32)).into_any()
        } else {
            PyArray1::from_slice(py, &self.values).into_any()
        }
    }

    /// The signature (datasketch's attribute; a copy here, as `digest()`).
    #[getter]
    fn hashvalues<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.digest(py)
    }

    /// The permutation scheme: affine32, affine64 or legacy.
    #[getter]
    fn scheme(&self) -> &'static str {
        self.scheme.name()
    }

    /// The seed.
    #[getter]
    fn seed(&self) -> u32 {
        self.seed
    }

    /// Whether nothing was folded in.
    fn is_empty(&self) -> bool {
        self.values.iter().all(|&v| v == self.scheme.max_hash())
    }

    /// Forgets every value folded in.
    fn clear(&mut self) {
        self.values.fill(self.scheme.max_hash());
    }

    /// A copy.
    fn copy(&self) -> Self {
        self.clone()
    }

    fn __len__(&self) -> usize {
        self.values.len()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<DatasketchMinHash>().is_ok_and(|o| {
            let o = o.borrow();
            o.scheme == self.scheme && o.seed == self.seed && o.values == self.values
        })
    }
}
