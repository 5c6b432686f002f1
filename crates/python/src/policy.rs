//! `Policy` (the one decision) and `compare` (the decision for one pair, with its evidence).

use neardup_dedup::{Method, Side, VerifyMeasure};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert;
use crate::error::to_py;

/// The near-duplicate decision, whole: the same as the CLI's `--policy-file` and
/// `--show-policy`, the same as every database records.
///
/// `Policy(profile=None, method=None, k=None, threshold=None, verify=None,
/// min_length_ratio=None, bits=None)`: every argument left out keeps the default
/// (`Policy.default()`), as the CLI's options do; naming a `method` also picks its own
/// verification unless `verify` is given (`"jaccard"`, `"containment"` or `"none"`).
#[pyclass(module = "neardup", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct Policy {
    pub(crate) inner: neardup_dedup::Policy,
}

impl Policy {
    /// A policy read from outside (a dict or JSON), validated as every door validates it.
    fn checked(inner: neardup_dedup::Policy) -> PyResult<Self> {
        inner.validate().map_err(to_py)?;
        Ok(Policy { inner })
    }
}

#[pymethods]
impl Policy {
    #[new]
    #[pyo3(signature = (profile = None, method = None, k = None, threshold = None, verify = None, min_length_ratio = None, bits = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        profile: Option<&Bound<'_, PyAny>>,
        method: Option<&str>,
        k: Option<u32>,
        threshold: Option<f64>,
        verify: Option<&str>,
        min_length_ratio: Option<f64>,
        bits: Option<u32>,
    ) -> PyResult<Self> {
        let changes = neardup_dedup::PolicyChanges {
            profile: profile.map(convert::profile).transpose()?,
            bits: bits
                .map(|bits| convert::named(&bits.to_string(), "bits"))
                .transpose()?,
            method: method
                .map(|method| convert::named::<Method>(method, "method"))
                .transpose()?,
            verify: verify
                .map(|verify| match verify {
                    "none" => Ok(None),
                    name => convert::named::<VerifyMeasure>(name, "verify").map(Some),
                })
                .transpose()?,
            k,
            threshold,
            min_length_ratio,
            units: None,
        };
        // `apply` validates what it makes.
        let inner = changes
            .apply(neardup_dedup::Policy::default())
            .map_err(to_py)?;
        Ok(Policy { inner })
    }

    /// The default policy: the `web` profile, SimHash candidates within 6 bits, verified by
    /// Jaccard resemblance ≥ 0.9 of the shingle sets.
    #[staticmethod]
    fn default() -> Self {
        Policy {
            inner: neardup_dedup::Policy::default(),
        }
    }

    /// A policy from a dict or a JSON string (the CLI's `--show-policy` output).
    #[staticmethod]
    fn from_json(policy: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::checked(convert::from_python(policy, "policy")?)
    }

    /// A policy from a dict (what `to_dict` gives).
    #[staticmethod]
    fn from_dict(policy: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::from_json(policy)
    }

    /// The policy as JSON (what `--policy-file` reads).
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.inner).map_err(to_py)
    }

    /// The policy as a dict.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        convert::serialize_to_python(py, &self.inner)
    }

    /// The decision for two texts: `neardup.compare(a, b, policy)`.
    fn compare(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyString>,
        b: &Bound<'_, PyString>,
    ) -> PyResult<Py<PyAny>> {
        decide(py, &self.inner, a, b)
    }

    /// One line saying what the policy decides.
    fn describe(&self) -> String {
        self.inner.describe()
    }

    /// The profile's name.
    #[getter]
    fn profile(&self) -> String {
        self.inner.profile.name.clone()
    }

    /// How candidates are searched: exact, simhash, minhash, cascade or overlap.
    #[getter]
    fn method(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        convert::serialize_to_python(py, &self.inner.method)
    }

    /// Largest SimHash distance of a candidate.
    #[getter]
    fn k(&self) -> u32 {
        self.inner.k
    }

    /// Smallest verified similarity (or MinHash estimate) of a near-duplicate.
    #[getter]
    fn threshold(&self) -> f64 {
        self.inner.threshold
    }

    /// The verification measure (jaccard, containment), or None.
    #[getter]
    fn verify(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        convert::serialize_to_python(py, &self.inner.verify)
    }

    /// Smallest length ratio of a verified near-duplicate (0: off).
    #[getter]
    fn min_length_ratio(&self) -> f64 {
        self.inner.min_length_ratio
    }

    fn __repr__(&self) -> String {
        format!("Policy({})", self.inner.describe())
    }
}

/// The policy a Python argument names: None (the default), a `Policy`, a dict of `Policy`'s
/// keyword arguments (what is left out keeps the default), or a whole policy as a JSON string.
pub fn policy_arg(policy: Option<&Bound<'_, PyAny>>) -> PyResult<neardup_dedup::Policy> {
    let Some(p) = policy.filter(|p| !p.is_none()) else {
        return Ok(neardup_dedup::Policy::default());
    };
    if let Ok(policy) = p.cast::<Policy>() {
        return Ok(policy.get().inner.clone());
    }
    if let Ok(kwargs) = p.cast::<PyDict>() {
        let policy = p.py().get_type::<Policy>().call((), Some(kwargs))?;
        return Ok(policy.cast::<Policy>()?.get().inner.clone());
    }
    Ok(Policy::from_json(p)?.inner)
}

/// Whether `a` and `b` are duplicates by the policy, and why: the decision of
/// `neardup compare --json` (`verdict`: duplicate or unique; `kind`: exact or near for a
/// duplicate; the `measure` that decided, its `value` and the policy's `threshold`).
#[pyfunction]
#[pyo3(signature = (a, b, policy = None))]
pub fn compare(
    py: Python<'_>,
    a: &Bound<'_, PyString>,
    b: &Bound<'_, PyString>,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    decide(py, &policy_arg(policy)?, a, b)
}

/// [`neardup_dedup::Policy::decide`] on two texts, as a dict.
fn decide(
    py: Python<'_>,
    policy: &neardup_dedup::Policy,
    a: &Bound<'_, PyString>,
    b: &Bound<'_, PyString>,
) -> PyResult<Py<PyAny>> {
    let fingerprinter = neardup_core::Fingerprinter::new(policy.profile.clone()).map_err(to_py)?;
    let (a, b) = (a.to_cow()?, b.to_cow()?);
    let side = |text: &str| side(policy, &fingerprinter, text);
    let ((fa, sa), (fb, sb)) = (side(&a), side(&b));
    let decision = policy
        .decide(&Side::new(&fa, sa.as_ref()), &Side::new(&fb, sb.as_ref()))
        .map_err(to_py)?;
    convert::serialize_to_python(py, &decision)
}

/// What [`neardup_dedup::Policy::decide`] needs of one text: its fingerprints, and its shingle
/// set when the policy verifies.
pub fn side(
    policy: &neardup_dedup::Policy,
    fingerprinter: &neardup_core::Fingerprinter,
    text: &str,
) -> (
    neardup_core::Fingerprints,
    Option<neardup_core::measure::FeatureSet>,
) {
    let features = policy.verifies().then(|| fingerprinter.feature_set(text));
    (fingerprinter.fingerprint(text), features)
}
