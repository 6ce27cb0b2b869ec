//! numpy output without a Python object per token: ids are written once into a `bytearray`,
//! which `numpy.frombuffer` wraps without copying (the array is writable and owns no other
//! reference to Rust memory).

use pyo3::prelude::*;
use pyo3::types::PyByteArray;

/// A `numpy.uint32` array of `shape` holding `values` (row-major).
pub fn u32_array(py: Python<'_>, values: &[u32], shape: &[usize]) -> PyResult<PyObject> {
    let bytes = PyByteArray::new_with(py, values.len() * 4, |buf| {
        for (out, v) in buf.chunks_exact_mut(4).zip(values) {
            out.copy_from_slice(&v.to_ne_bytes());
        }
        Ok(())
    })?;
    let np = py.import("numpy")?;
    let flat = np.call_method1("frombuffer", (bytes, np.getattr("uint32")?))?;
    Ok(flat.call_method1("reshape", (shape.to_vec(),))?.unbind())
}

/// Rows of different lengths as one `rows × longest` matrix, short rows filled with `fill`.
pub fn rectangular<'a>(rows: impl ExactSizeIterator<Item = &'a [u32]> + Clone, fill: u32) -> (Vec<u32>, [usize; 2]) {
    let n = rows.len();
    let width = rows.clone().map(<[u32]>::len).max().unwrap_or(0);
    let mut out = Vec::with_capacity(n * width);
    for row in rows {
        out.extend_from_slice(row);
        out.resize(out.len() + width - row.len(), fill);
    }
    (out, [n, width])
}
