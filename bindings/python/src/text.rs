//! The UTF-8 of Python `str` objects, borrowed rather than copied.
//!
//! The package is built for the stable ABI of CPython 3.9, where pyo3 reads a `str` by encoding
//! it into a new `bytes` object and then copying that into Rust: two copies and two allocations
//! per text, all with the GIL held, which on a batch of short lines cost as much as a good part
//! of the encoding itself. `PyUnicode_AsUTF8AndSize` gives the UTF-8 the `str` keeps (an ASCII
//! `str` stores it as its own data; any other builds it once and caches it), valid as long as
//! the object lives. It is in the stable ABI from 3.10 and exported by every CPython 3 library
//! before that, so on Unix it is declared here and used on 3.9 as well. (Windows links the
//! stable ABI through python3.dll, which only exports it from 3.10: there the copy stays.)

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PyString;

#[cfg(unix)]
extern "C" {
    fn PyUnicode_AsUTF8AndSize(unicode: *mut pyo3::ffi::PyObject, size: *mut pyo3::ffi::Py_ssize_t) -> *const std::os::raw::c_char;
}

/// The text of `s`, borrowed from the object when it can be (for as long as `s` is held).
pub fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    #[cfg(unix)]
    {
        let mut len: pyo3::ffi::Py_ssize_t = 0;
        // SAFETY: `s` is a live `str` (the GIL is held through `Bound`). On success the
        // pointer is to `len` bytes of valid UTF-8 owned by `s`, which outlive the borrow of
        // `s` ('a): the object is immutable and kept alive by the reference `s` holds.
        let data = unsafe { PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut len) };
        if !data.is_null() {
            let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len as usize) };
            return Ok(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) }));
        }
        // Not encodable (a lone surrogate): clear the error and let pyo3 report it as usual.
        let _ = PyErr::take(s.py());
    }
    s.to_cow()
}

/// The text of `s` as tiktoken encodes it: [`utf8`], or when `s` holds lone surrogates (which
/// UTF-8 cannot carry) a copy with each replaced by U+FFFD, as tiktoken's own fallback
/// (`text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")`) does.
pub fn utf8_surrogates_replaced<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    if let Ok(text) = utf8(s) {
        return Ok(text);
    }
    let fixed = s.call_method1("encode", ("utf-16", "surrogatepass"))?.call_method1("decode", ("utf-16", "replace"))?;
    Ok(Cow::Owned(fixed.downcast::<PyString>()?.to_cow()?.into_owned()))
}
