//! `dedup(..., granularity=...)`: the rule below the document ([`neardup_dedup::units`]) over
//! the texts, after the document-level decision, as `neardup dedup --granularity` runs it.

use std::io::Write;
use std::path::PathBuf;

use neardup_dedup::units::{with_units, NgramRule, Unit, UnitDedup};
use neardup_dedup::{DedupOptions, Policy};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert;
use crate::error::{invalid, to_py};

/// The arguments of the pass below the document.
pub struct Below<'a> {
    /// `paragraph`, `line`, `sentences:N` or `document` (`--granularity`).
    pub granularity: Option<&'a str>,
    /// `--min-chars`.
    pub min_chars: Option<u64>,
    /// `--ngrams`: the fraction rule's n.
    pub ngrams: Option<u32>,
    /// `--ngram-threshold`: the fraction rule's threshold.
    pub ngram_threshold: Option<f64>,
    /// `--seen`: the keys of earlier runs, replaced by the union with this run's.
    pub seen: Option<PathBuf>,
    /// `--units-only`: no document-level decision.
    pub units_only: bool,
}

impl Below<'_> {
    /// `policy` with the rule `granularity`, `min_chars`, `ngrams` and `ngram_threshold` name
    /// (as `--granularity`, `--min-chars`, `--ngrams` and `--ngram-threshold` change it); the
    /// other arguments need a rule.
    pub fn policy(&self, policy: Policy) -> PyResult<Policy> {
        let ngrams = NgramRule::from_options(self.ngrams, self.ngram_threshold);
        let policy = match self.granularity {
            None if self.min_chars.is_some() || ngrams.is_some() => {
                return Err(invalid(
                    "min_chars, ngrams and ngram_threshold need a granularity",
                ))
            }
            None => policy,
            Some(text) => {
                let unit = Unit::parse_granularity(text).map_err(to_py)?;
                with_units(policy, unit, self.min_chars, ngrams).map_err(to_py)?
            }
        };
        if policy.units.is_none() && (self.seen.is_some() || self.units_only) {
            return Err(invalid("seen and units_only need a granularity"));
        }
        Ok(policy)
    }
}

/// `units_only`: every text kept whole, its units deduplicated.
pub fn units_only<S: AsRef<str> + Sync>(
    py: Python<'_>,
    texts: &[S],
    options: &DedupOptions,
    below: &Below<'_>,
) -> PyResult<Py<PyAny>> {
    let result = PyDict::new(py);
    let none: Vec<Option<u32>> = vec![None; texts.len()];
    result.set_item("keep", vec![true; texts.len()])?;
    result.set_item("duplicate_of", none)?;
    for name in ["removals", "clusters", "pairs"] {
        result.set_item(name, Vec::<u32>::new())?;
    }
    add_units(
        py,
        &result,
        texts,
        options,
        below,
        vec![true; texts.len()],
        None,
    )?;
    Ok(result.into_any().unbind())
}

/// Adds `texts`, `units` and `unit_figures` to `result`: the rule of the policy over the texts
/// `kept` says, in input order or in the keep order `ranks` gives (each text's place), the
/// seen file read and replaced (atomically) when named.
pub fn add_units<S: AsRef<str> + Sync>(
    py: Python<'_>,
    result: &Bound<'_, PyDict>,
    texts: &[S],
    options: &DedupOptions,
    below: &Below<'_>,
    kept: Vec<bool>,
    ranks: Option<Vec<u32>>,
) -> PyResult<()> {
    let rule = options
        .policy
        .units
        .ok_or_else(|| invalid("no rule below the document"))?;
    let mut dedup =
        UnitDedup::new(rule, options.policy.profile.normalize, &options.budget).over_kept(kept);
    if let Some(ranks) = ranks {
        dedup = dedup.in_keep_order(ranks);
    }
    if let Some(path) = &below.seen {
        dedup = dedup.with_seen(path).map_err(to_py)?;
    }
    let (rewrites, figures) = py.detach(|| dedup.run_texts(texts)).map_err(to_py)?;
    if let Some(path) = &below.seen {
        replace_seen(path, |file| dedup.write_seen(file).map_err(to_py))?;
    }
    let mut new_texts: Vec<Option<String>> = Vec::with_capacity(rewrites.len());
    let mut reports = Vec::with_capacity(rewrites.len());
    for rewrite in rewrites {
        match rewrite {
            Some(rewrite) => {
                new_texts.push((!rewrite.report.dropped).then_some(rewrite.text));
                reports.push(Some(rewrite.report));
            }
            None => {
                new_texts.push(None);
                reports.push(None);
            }
        }
    }
    result.set_item("texts", new_texts)?;
    result.set_item("units", convert::serialize_to_python(py, &reports)?)?;
    result.set_item("unit_figures", convert::serialize_to_python(py, &figures)?)?;
    Ok(())
}

/// Replaces the seen file at `path` by what `write` writes (a temporary file beside it,
/// renamed once written whole); returns what `write` returns (the keys written).
pub fn replace_seen(
    path: &std::path::Path,
    write: impl FnOnce(&mut std::fs::File) -> PyResult<u64>,
) -> PyResult<u64> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => std::path::Path::new("."),
    };
    let cannot = |e: std::io::Error| invalid(format!("cannot write {}: {e}", path.display()));
    let mut file = tempfile::NamedTempFile::new_in(folder).map_err(cannot)?;
    let count = write(file.as_file_mut())?;
    file.as_file_mut().flush().map_err(cannot)?;
    file.persist(path).map_err(|e| cannot(e.error))?;
    Ok(count)
}
