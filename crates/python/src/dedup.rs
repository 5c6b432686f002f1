//! `dedup`: the batch engine ([`neardup_dedup::dedup`]) over a list of texts.

use neardup_dedup::{DedupOptions, Evidence, Item, KeepPolicy};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use crate::convert;
use crate::error::{invalid, to_py};
use crate::policy::policy_arg;

/// Deduplicates `texts` (any iterable of str) by the policy, as `neardup dedup` does: exact
/// groups, candidates, verification, representative-centred clusters. `keep` is `first`,
/// `longest` or `newest` (with `fetched_at`, Unix seconds or None per text).
///
/// Returns a dict: `keep` (a bool per text), `duplicate_of` (the kept text's index, or None),
/// `removals` (per removed text: `index`, `duplicate_of`, `kind`, `distance`, `measure`,
/// `value`, `threshold`), `clusters` (`members`, `representative`), `pairs` (every accepted
/// pair: `a`, `b`, `kind`, `distance`, `measure`, `value`, `threshold`).
#[pyfunction]
#[pyo3(signature = (texts, policy = None, keep = "first", fetched_at = None))]
pub fn dedup(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, PyAny>>,
    keep: &str,
    fetched_at: Option<Vec<Option<i64>>>,
) -> PyResult<Py<PyAny>> {
    let options = DedupOptions {
        policy: policy_arg(policy)?,
        keep: convert::named::<KeepPolicy>(keep, "keep")?,
        url_dedup: false,
    };
    let texts = convert::texts(texts)?;
    if let Some(times) = &fetched_at {
        if times.len() != texts.len() {
            return Err(invalid(format!(
                "fetched_at has {} values for {} texts",
                times.len(),
                texts.len()
            )));
        }
    }
    let fingerprinter =
        neardup_core::Fingerprinter::new(options.policy.profile.clone()).map_err(to_py)?;
    let verifies = options.policy.verifies();
    let outcome = py.detach(|| {
        let items: Vec<Item> = texts
            .par_iter()
            .enumerate()
            .map(|(i, text)| {
                let mut item = Item::new(fingerprinter.fingerprint(text), text.len() as u64);
                item.features = verifies.then(|| fingerprinter.feature_set(text));
                item.fetched_at = fetched_at.as_ref().and_then(|t| t[i]);
                item
            })
            .collect();
        neardup_dedup::dedup(&items, &options)
    });
    let outcome = outcome.map_err(to_py)?;

    let mut duplicate_of: Vec<Option<u32>> = vec![None; outcome.kept.len()];
    let removals = pyo3::types::PyList::empty(py);
    for r in &outcome.removals {
        duplicate_of[r.index as usize] = Some(r.of);
        let d = evidence_dict(py, r.kind, r.distance, &r.evidence)?;
        d.set_item("index", r.index)?;
        d.set_item("duplicate_of", r.of)?;
        removals.append(d)?;
    }
    let pairs = pyo3::types::PyList::empty(py);
    for p in &outcome.pairs {
        let d = evidence_dict(py, p.kind, p.distance, &p.evidence)?;
        d.set_item("a", p.a)?;
        d.set_item("b", p.b)?;
        pairs.append(d)?;
    }
    let clusters = pyo3::types::PyList::empty(py);
    for c in &outcome.clusters {
        let d = PyDict::new(py);
        d.set_item("members", &c.members)?;
        d.set_item("representative", c.representative)?;
        clusters.append(d)?;
    }
    let result = PyDict::new(py);
    result.set_item("keep", &outcome.kept)?;
    result.set_item("duplicate_of", duplicate_of)?;
    result.set_item("removals", removals)?;
    result.set_item("clusters", clusters)?;
    result.set_item("pairs", pairs)?;
    Ok(result.into_any().unbind())
}

/// `kind`, `distance`, `measure`, `value`, `threshold` of a pair, as the CLI writes them.
fn evidence_dict<'py>(
    py: Python<'py>,
    kind: neardup_dedup::Kind,
    distance: u32,
    evidence: &Evidence,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", convert::serialize_to_python(py, &kind)?)?;
    d.set_item("distance", distance)?;
    d.set_item(
        "measure",
        convert::serialize_to_python(py, &evidence.measure)?,
    )?;
    d.set_item("value", evidence.value)?;
    d.set_item("threshold", evidence.threshold)?;
    Ok(d)
}
