//! `dedup`: the batch engine ([`neardup_dedup::dedup`]) over a list of texts.

use neardup_dedup::{
    AcceptedPair, ClusterOf, DedupOptions, DocumentVerdict, DuplicateOf, Item, KeepPolicy, Verdict,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use crate::convert;
use crate::error::{invalid, to_py};
use crate::policy::policy_arg;

pub(crate) mod units;

/// Deduplicates `texts` (any iterable of str) by the policy, as `neardup dedup` does: exact
/// groups, candidates, verification, representative-centred clusters. `keep` is `first`,
/// `longest` or `newest` (with `fetched_at`, Unix seconds or None per text).
///
/// Returns a dict: `keep` (a bool per text), `duplicate_of` (the kept text's index, or None),
/// and the records `neardup dedup` writes, each text named by its index: `removals` (per
/// removed text: `id`, `verdict`, `duplicate_of`, `kind`, `distance`, `measure`, `value`,
/// `threshold`), `clusters` (`cluster`, `members`, `representative`), `pairs` (every accepted
/// pair: `a`, `b`, `kind`, `distance`, `measure`, `value`, `threshold`).
///
/// With `granularity` (`paragraph`, `line`, `sentences:N`; or a policy with `units`), as
/// `neardup dedup --granularity` (see [`units`]): also `texts` (each kept text rewritten, None
/// for a removed or dropped one), `units` (per text the unit pass read, the report of
/// `--removed-spans`, else None) and `unit_figures`. `ngrams` and `ngram_threshold`: the
/// fraction rule (`--ngrams`, `--ngram-threshold`).
#[pyfunction]
#[pyo3(signature = (texts, policy = None, keep = "first", fetched_at = None, granularity = None,
                    min_chars = None, seen = None, units_only = false, ngrams = None,
                    ngram_threshold = None))]
#[allow(clippy::too_many_arguments)]
pub fn dedup(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, PyAny>>,
    keep: &str,
    fetched_at: Option<Vec<Option<i64>>>,
    granularity: Option<&str>,
    min_chars: Option<u64>,
    seen: Option<std::path::PathBuf>,
    units_only: bool,
    ngrams: Option<u32>,
    ngram_threshold: Option<f64>,
) -> PyResult<Py<PyAny>> {
    let below = units::Below {
        granularity,
        min_chars,
        ngrams,
        ngram_threshold,
        seen,
        units_only,
    };
    let options = DedupOptions {
        policy: below.policy(policy_arg(policy)?)?,
        keep: convert::named::<KeepPolicy>(keep, "keep")?,
        url_dedup: false,
        // The result lists every accepted pair (`pairs`).
        list_pairs: true,
        // The texts are in memory already; the shingle sets fit the default budget or spill.
        // The budget counts what the call adds to the interpreter's peak, not what it held.
        budget: neardup_dedup::Budget::default(),
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
    if options.policy.units.is_some() && units_only {
        if options.keep != KeepPolicy::First {
            return Err(invalid(
                "keep: with units_only the first occurrence of a unit is kept",
            ));
        }
        return units::units_only(py, &texts, &options, &below);
    }
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
    for r in &outcome.removals {
        duplicate_of[r.index as usize] = Some(r.of);
    }
    // The records every door writes (`neardup dedup --removed/--pairs/--clusters`), texts named
    // by their index.
    let removals: Vec<DocumentVerdict<u32>> = outcome
        .removals
        .iter()
        .map(|r| DocumentVerdict {
            id: r.index,
            verdict: Verdict::Duplicate(DuplicateOf {
                duplicate_of: r.of,
                kind: r.kind,
                distance: r.distance,
                evidence: r.evidence,
            }),
        })
        .collect();
    let pairs: Vec<AcceptedPair<u32>> = outcome
        .pairs
        .iter()
        .map(|p| AcceptedPair {
            a: p.a,
            b: p.b,
            kind: p.kind,
            distance: p.distance,
            evidence: p.evidence,
        })
        .collect();
    let clusters: Vec<ClusterOf<u32>> = outcome
        .clusters
        .iter()
        .enumerate()
        .map(|(i, c)| ClusterOf {
            cluster: i,
            members: c.members.clone(),
            representative: c.representative,
        })
        .collect();
    let removals = convert::serialize_to_python(py, &removals)?;
    let pairs = convert::serialize_to_python(py, &pairs)?;
    let clusters = convert::serialize_to_python(py, &clusters)?;
    let result = PyDict::new(py);
    result.set_item("keep", &outcome.kept)?;
    result.set_item("duplicate_of", duplicate_of)?;
    result.set_item("removals", removals)?;
    result.set_item("clusters", clusters)?;
    result.set_item("pairs", pairs)?;
    if options.policy.units.is_some() {
        // In the order `keep` prefers the texts in, as the document engine took them.
        let ranks = (options.keep != KeepPolicy::First).then(|| {
            let times = fetched_at.as_deref();
            options.keep.ranks(texts.len() as u32, |i| {
                let i = i as usize;
                (texts[i].len() as u64, times.and_then(|t| t[i]))
            })
        });
        let kept = outcome.kept.clone();
        units::add_units(py, &result, &texts, &options, &below, kept, ranks)?;
    }
    Ok(result.into_any().unbind())
}
