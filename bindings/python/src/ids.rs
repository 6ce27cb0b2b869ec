//! Python lists of token ids, built from shared int objects.
//!
//! Beyond the encoding itself, most of what a per-line `encode` costs in Python is its list of
//! ids: every int above 256 is a new object (about 20 ns each). Ids repeat, so the int object of
//! each id is made once, kept here, and shared by every list (ints are immutable; CPython's own
//! cache of small ints does the same for 0..=256). The list is filled slot by slot through the
//! C API: a reference count and a store per id, where a list built through PyO3's iterator
//! (a `Bound` per id, then the list from it) cost about 80 instructions per id.

use std::sync::Mutex;

use pyo3::ffi;
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
    // A list of `ids.len()` empty slots (a failed allocation is the pending MemoryError), owned
    // from here on: an early return drops it, and CPython frees a list with empty slots.
    // SAFETY: the GIL is held (`py`); `PyList_New` returns a new reference or NULL.
    let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(ids.len() as ffi::Py_ssize_t))? };
    for (i, &id) in ids.iter().enumerate() {
        let int = match &mut ints[id as usize] {
            Some(int) => int.as_ptr(),
            slot => slot.insert(id.into_pyobject(py)?.into_any().unbind()).as_ptr(),
        };
        // SAFETY: `int` is a live object kept by the table; the list gets its own reference
        // (`PyList_SetItem` steals one), into slot `i` < the list's length, which is empty.
        unsafe {
            ffi::Py_INCREF(int);
            ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, int);
        }
    }
    // SAFETY: made by `PyList_New` above.
    Ok(unsafe { list.downcast_into_unchecked() })
}

/// A Python list of lists of ids.
pub fn lists<'py>(py: Python<'py>, rows: &[Vec<u32>]) -> PyResult<Bound<'py, PyList>> {
    let rows = rows.iter().map(|r| list(py, r)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, rows)
}
