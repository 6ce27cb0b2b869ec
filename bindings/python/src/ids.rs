//! Python lists of token ids, built from shared int objects.
//!
//! Beyond the encoding itself, most of what a per-line `encode` costs in Python is its list of
//! ids: every int above 256 is a new object (about 20 ns each). Ids repeat, so the int object of
//! each id is made once, kept here, and shared by every list (ints are immutable; CPython's own
//! cache of small ints does the same for 0..=256).

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::errors::py_list;

/// The int object of each id seen so far, indexed by id. Only touched with the GIL held, so the
/// lock is never contended; a process forked while it was held (it cannot be, the GIL is held
/// around it) would still not wait: [`list`] falls back to fresh ints.
static INTS: Mutex<Vec<Option<Py<PyAny>>>> = Mutex::new(Vec::new());

/// Ids from this one up get fresh ints: the table is one pointer per id below it (32 MiB at most).
const SHARED_BELOW: u32 = 1 << 22;

/// A Python list of `ids`.
pub fn list<'py>(py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
    let Ok(mut ints) = INTS.try_lock() else { return py_list(py, ids.iter()) };
    let Some(&max) = ids.iter().max() else { return Ok(PyList::empty(py)) };
    if max >= SHARED_BELOW {
        return py_list(py, ids.iter());
    }
    if ints.len() <= max as usize {
        ints.resize_with(max as usize + 1, || None);
    }
    let mut items = Vec::with_capacity(ids.len());
    for &id in ids {
        let int = match &mut ints[id as usize] {
            Some(int) => int.bind(py).clone(),
            slot => slot.insert(id.into_pyobject(py)?.into_any().unbind()).bind(py).clone(),
        };
        items.push(int);
    }
    py_list(py, items.into_iter())
}

/// A Python list of lists of ids.
pub fn lists<'py>(py: Python<'py>, rows: &[Vec<u32>]) -> PyResult<Bound<'py, PyList>> {
    let rows = rows.iter().map(|r| list(py, r)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, rows)
}
