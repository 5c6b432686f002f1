//! # neardup-python
//!
//! The native half of the Python package `neardup` (imported as `neardup._neardup`; the
//! Python half, under `python/neardup`, adapts inputs such as pandas and Arrow data and holds
//! the HTTP client). Thin over the Rust API: every decision is [`neardup_dedup::Policy`]'s,
//! every fingerprint [`neardup_core::Fingerprinter`]'s, every search `neardup-index`'s; this
//! crate only converts between Python objects and Rust values, releases the GIL around the
//! work, and turns every library error into a Python exception with the library's message.

use pyo3::prelude::*;

mod compat;
mod convert;
mod dedup;
mod error;
mod fingerprint;
mod lsh;
mod policy;
mod spark;
mod spark_parts;
mod spark_read;
mod spark_units;

/// The module `neardup._neardup`.
#[pymodule]
fn _neardup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NeardupError", m.py().get_type::<error::NeardupError>())?;
    m.add_class::<fingerprint::Fingerprinter>()?;
    m.add_class::<fingerprint::Fingerprint>()?;
    m.add_class::<fingerprint::FingerprintBatch>()?;
    m.add_class::<policy::Policy>()?;
    m.add_function(wrap_pyfunction!(policy::compare, m)?)?;
    m.add_function(wrap_pyfunction!(dedup::dedup, m)?)?;
    m.add_class::<spark::SearchKeys>()?;
    m.add_class::<spark_parts::PartEngine>()?;
    m.add_class::<spark_units::UnitKeys>()?;
    m.add_class::<spark_read::JsonlLines>()?;
    m.add_function(wrap_pyfunction!(spark::link_components, m)?)?;
    m.add_class::<lsh::MinHashLsh>()?;
    m.add_function(wrap_pyfunction!(lsh::minhash_candidate_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(compat::python_simhash, m)?)?;
    m.add_function(wrap_pyfunction!(compat::python_simhash_many, m)?)?;
    m.add_function(wrap_pyfunction!(compat::python_simhash_features, m)?)?;
    m.add_class::<compat::SimhashIndexCore>()?;
    m.add_class::<compat::DatasketchMinHash>()?;
    Ok(())
}
