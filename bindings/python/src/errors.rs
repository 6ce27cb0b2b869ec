//! Library errors and panics → Python exceptions.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyException, PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::PyErr;

/// A library error as a Python `Exception` carrying the library's message (HF raises plain
/// `Exception` for pipeline errors too).
pub fn tk_err(e: tokenkit::Error) -> PyErr {
    match e {
        // tiktoken raises ValueError for a disallowed special token.
        tokenkit::Error::DisallowedSpecialToken { message, .. } => PyValueError::new_err(message),
        e => PyException::new_err(e.to_string()),
    }
}

/// A `ValueError` (bad argument value).
pub fn value_err(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}

/// Runs `f`, turning a panic into an `Err` with its message (never unwinds into Python).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(panic_message)
}

/// The Python exception for a caught panic.
pub fn panic_err(msg: String) -> PyErr {
    PyException::new_err(format!("tokenkit internal error (Rust panic): {msg}"))
}

/// Runs a library call: panics and library errors both become Python exceptions.
pub fn guard<T>(f: impl FnOnce() -> tokenkit::Result<T>) -> pyo3::PyResult<T> {
    catch(f).map_err(panic_err)?.map_err(tk_err)
}

/// PyO3's message when CPython returns NULL where PyO3 expects an object (a list or tuple it
/// could not allocate).
const PYTHON_CALL_FAILED: &str = "Python API call failed";

/// A Python list of `items`. PyO3 panics when CPython cannot allocate a list or tuple (a list of
/// millions of offsets under a memory limit); that panic becomes a `MemoryError` here, and any
/// other panic the usual exception.
pub fn py_list<'py, T: IntoPyObject<'py>>(py: Python<'py>, items: impl ExactSizeIterator<Item = T>) -> PyResult<Bound<'py, PyList>> {
    let n = items.len();
    match catch(|| PyList::new(py, items)) {
        Ok(list) => list,
        Err(msg) if msg == PYTHON_CALL_FAILED => Err(PyMemoryError::new_err(format!("out of memory building a Python list of {n} items"))),
        Err(msg) => Err(panic_err(msg)),
    }
}
