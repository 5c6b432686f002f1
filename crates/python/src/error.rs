//! Errors as Python exceptions: every library error becomes a [`NeardupError`] (a
//! `ValueError`) carrying the library's message.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

create_exception!(
    _neardup,
    NeardupError,
    PyValueError,
    "An error of the neardup library (a ValueError), with the library's message."
);

/// The library error `e` as a [`NeardupError`].
pub fn to_py(e: impl std::fmt::Display) -> PyErr {
    NeardupError::new_err(e.to_string())
}

/// A [`NeardupError`] with `message`.
pub fn invalid(message: impl Into<String>) -> PyErr {
    NeardupError::new_err(message.into())
}
