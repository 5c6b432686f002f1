//! Conversions between Python objects and Rust values: texts, JSON-shaped data, and the
//! library's serde types named by strings.

use neardup_core::{Choice, Profile};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{invalid, to_py};

/// The texts of any iterable of `str` (a list, a tuple, a NumPy array of strings, a pandas
/// Series) or of a pyarrow string array (through its `to_pylist`), borrowed from the Python
/// strings so that the GIL can be released around the work.
pub fn texts(obj: &Bound<'_, PyAny>) -> PyResult<Vec<PyBackedStr>> {
    if obj.is_instance_of::<PyString>() {
        return Err(invalid(
            "expected an iterable of str, got one str (wrap it in a list)",
        ));
    }
    if obj.hasattr("to_pylist")? {
        return texts(&obj.call_method0("to_pylist")?);
    }
    let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
    for (i, item) in obj.try_iter()?.enumerate() {
        let item = item?;
        let text = item.extract::<PyBackedStr>().map_err(|_| {
            let type_name = item
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into());
            invalid(format!("text {i} is not a str (it is a {type_name})"))
        })?;
        out.push(text);
    }
    Ok(out)
}

/// A JSON value as the Python object `json.loads` would give.
pub fn to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any().unbind(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any().unbind(),
            _ => n
                .as_f64()
                .unwrap_or(f64::NAN)
                .into_pyobject(py)?
                .into_any()
                .unbind(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_python(py, v)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

/// A serialisable library value as a Python object (dicts, lists, numbers, strings).
pub fn serialize_to_python(py: Python<'_>, value: &impl serde::Serialize) -> PyResult<Py<PyAny>> {
    to_python(py, &serde_json::to_value(value).map_err(to_py)?)
}

/// A Python object (a dict, or a JSON string) as a library value.
pub fn from_python<T: DeserializeOwned>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    let json: String = if let Ok(text) = obj.cast::<PyString>() {
        text.to_cow()?.into_owned()
    } else {
        let dumps = obj.py().import("json")?.getattr("dumps")?;
        dumps.call1((obj,))?.extract()?
    };
    serde_json::from_str(&json).map_err(|e| invalid(format!("invalid {what}: {e}")))
}

/// A library option value named by its serde spelling (`"cascade"`, `"jaccard"`, `"first"`),
/// parsed by [`Choice::parse`]: the one spelling rule of every door, the names the library's,
/// not re-listed here; an error names `what` and lists the names.
pub fn named<T: Choice>(name: &str, what: &str) -> PyResult<T> {
    T::parse(name).map_err(|e| invalid(format!("invalid {what}: {e}")))
}

/// A profile: a built-in name (`"web"`), a JSON object as a string, or a dict.
pub fn profile(obj: &Bound<'_, PyAny>) -> PyResult<Profile> {
    let name = match obj.cast::<PyString>() {
        Ok(text) => Some(text.to_cow()?.into_owned()),
        Err(_) => None,
    };
    let profile: Profile = match name {
        Some(name) if !name.trim_start().starts_with('{') => {
            Profile::builtin(&name).map_err(to_py)?
        }
        _ => from_python(obj, "profile")?,
    };
    profile.validate().map_err(to_py)?;
    Ok(profile)
}

/// Bytes handed over from Python and read in place: a `bytes` object, or a one-dimensional
/// NumPy `uint8` array (`numpy.frombuffer` over an Arrow buffer: a column's texts where Arrow
/// holds them, without the copy that `bytes` would cost).
#[derive(FromPyObject)]
pub enum ByteView<'py> {
    /// A `bytes` object.
    Bytes(Bound<'py, PyBytes>),
    /// A contiguous NumPy `uint8` array.
    Array(PyReadonlyArray1<'py, u8>),
}

impl ByteView<'_> {
    /// The bytes, borrowed (fails on a NumPy array that is not contiguous).
    pub fn as_slice(&self) -> PyResult<&[u8]> {
        match self {
            ByteView::Bytes(bytes) => Ok(bytes.as_bytes()),
            ByteView::Array(array) => Ok(array.as_slice()?),
        }
    }
}

/// The values of an Arrow binary column given as its buffers: `offsets` (`len + 1` positions,
/// ascending, as Arrow's offsets buffer sliced to the column) into `data` (end to end).
/// Borrowed, one slice a row, without a Python object a value. Fails on offsets that do not
/// ascend within `data`.
pub fn arrow_bytes<'a>(offsets: &[i64], data: &'a [u8]) -> PyResult<Vec<&'a [u8]>> {
    offsets
        .windows(2)
        .enumerate()
        .map(
            |(i, w)| match (usize::try_from(w[0]), usize::try_from(w[1])) {
                (Ok(start), Ok(end)) if start <= end && end <= data.len() => Ok(&data[start..end]),
                _ => Err(invalid(format!(
                    "text {i}: offsets {}..{} outside {} bytes of text",
                    w[0],
                    w[1],
                    data.len()
                ))),
            },
        )
        .collect()
}

/// The texts of an Arrow string column given as its buffers ([`arrow_bytes`]), each checked
/// to be UTF-8. Fails on offsets that do not ascend within `data` or on a row that is not UTF-8.
pub fn arrow_texts<'a>(offsets: &[i64], data: &'a [u8]) -> PyResult<Vec<&'a str>> {
    arrow_bytes(offsets, data)?
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| {
            std::str::from_utf8(bytes).map_err(|e| invalid(format!("text {i} is not UTF-8: {e}")))
        })
        .collect()
}
