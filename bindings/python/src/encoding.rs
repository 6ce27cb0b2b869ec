//! `tokenkit.Encoding`: the result of encoding one input. Offsets are characters (Unicode
//! scalar values) of the input, as HF tokenizers reports them to Python.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::{json, Value};
use tokenkit::{Encoding, PaddingDirection, TruncationDirection};

use crate::errors::{guard, py_list, value_err};
use crate::pool;

/// The output of encoding one input (a sequence or a pair).
#[pyclass(module = "tokenkit", name = "Encoding")]
#[derive(Clone, Default)]
pub struct PyEncoding {
    slot: Slot,
}

/// Where an encoding lives: on its own, or in the batch it was encoded with.
///
/// A batch call makes one Python object per input, on the interpreter's thread while the pool
/// waits, and frees them there too. So the encodings of a batch stay in one shared [`Batch`]:
/// each object only points into it, is made without copying its encoding and is freed
/// without freeing its buffers. The first write to an encoding (`pad`, `truncate`, ...) gives
/// it a copy of its own. An encoding kept from a batch keeps the batch's memory until it goes.
#[derive(Clone)]
enum Slot {
    Own(Box<Encoding>),
    InBatch(Arc<Batch>, usize),
}

impl Default for Slot {
    fn default() -> Self {
        Slot::Own(Box::default())
    }
}

/// The encodings of one batch call.
struct Batch(Vec<Encoding>);

/// Batches of at least this many encodings are freed on a pool thread.
const FREE_IN_BACKGROUND: usize = 64;

impl Drop for Batch {
    /// Freeing a batch is thousands of frees, half of them of memory another thread made (the
    /// allocator queues those for their owner): on the interpreter's thread they would hold up
    /// the next call, so they go to the pool when it has threads to spare.
    fn drop(&mut self) {
        let encodings = std::mem::take(&mut self.0);
        if encodings.len() >= FREE_IN_BACKGROUND && pool::has_spare_threads() {
            rayon::spawn(move || drop(encodings));
        }
    }
}

impl From<Encoding> for PyEncoding {
    fn from(enc: Encoding) -> Self {
        Self { slot: Slot::Own(Box::new(enc)) }
    }
}

impl PyEncoding {
    /// One object per encoding of a batch, all sharing the batch (see [`Slot`]).
    pub fn batch(encodings: Vec<Encoding>) -> impl ExactSizeIterator<Item = PyEncoding> {
        let batch = Arc::new(Batch(encodings));
        (0..batch.0.len()).map(move |i| Self { slot: Slot::InBatch(batch.clone(), i) })
    }

    /// The encoding.
    pub fn enc(&self) -> &Encoding {
        match &self.slot {
            Slot::Own(enc) => enc,
            Slot::InBatch(batch, i) => &batch.0[*i],
        }
    }

    /// The encoding, to change: copied out of its batch first if it is in one.
    fn enc_mut(&mut self) -> &mut Encoding {
        if let Slot::InBatch(batch, i) = &self.slot {
            self.slot = Slot::Own(Box::new(batch.0[*i].clone()));
        }
        let Slot::Own(enc) = &mut self.slot else { unreachable!("moved out of its batch above") };
        enc
    }
}

pub fn padding_direction(s: &str) -> PyResult<PaddingDirection> {
    match s {
        "left" => Ok(PaddingDirection::Left),
        "right" => Ok(PaddingDirection::Right),
        other => Err(value_err(format!("Unknown `direction`: `{other}`"))),
    }
}

pub fn truncation_direction(s: &str) -> PyResult<TruncationDirection> {
    match s {
        "left" => Ok(TruncationDirection::Left),
        "right" => Ok(TruncationDirection::Right),
        other => Err(value_err(format!("Invalid truncation direction value : {other}"))),
    }
}

fn to_state(e: &Encoding) -> Value {
    let ranges: serde_json::Map<String, Value> =
        e.sequence_ranges().iter().map(|(k, r)| (k.to_string(), json!([r.start, r.end]))).collect();
    json!({
        "ids": e.get_ids(),
        "type_ids": e.get_type_ids(),
        "tokens": e.get_tokens(),
        "words": e.get_word_ids(),
        "offsets": e.get_offsets(),
        "special_tokens_mask": e.get_special_tokens_mask(),
        "attention_mask": e.get_attention_mask(),
        "overflowing": e.get_overflowing().iter().map(to_state).collect::<Vec<_>>(),
        "sequence_ranges": ranges,
    })
}

fn from_state(v: &Value) -> Result<Encoding, String> {
    fn field<T: serde::de::DeserializeOwned>(v: &Value, k: &str) -> Result<T, String> {
        serde_json::from_value(v.get(k).cloned().unwrap_or(Value::Null)).map_err(|e| format!("Encoding state, field `{k}`: {e}"))
    }
    let overflowing = match v.get("overflowing") {
        Some(Value::Array(a)) => a.iter().map(from_state).collect::<Result<Vec<_>, _>>()?,
        _ => Vec::new(),
    };
    let ranges: HashMap<String, (usize, usize)> = field(v, "sequence_ranges")?;
    let ranges = ranges
        .into_iter()
        .map(|(k, (s, e))| k.parse::<usize>().map(|k| (k, s..e)).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Encoding::new(
        field(v, "ids")?,
        field(v, "type_ids")?,
        field(v, "tokens")?,
        field(v, "words")?,
        field(v, "offsets")?,
        field(v, "special_tokens_mask")?,
        field(v, "attention_mask")?,
        overflowing,
        ranges,
    ))
}

#[pymethods]
impl PyEncoding {
    /// An empty encoding (used by pickle).
    #[new]
    fn new() -> Self {
        Self::default()
    }

    fn __getstate__(&self) -> String {
        to_state(self.enc()).to_string()
    }

    fn __setstate__(&mut self, state: &str) -> PyResult<()> {
        let v: Value = serde_json::from_str(state).map_err(|e| value_err(format!("Encoding state: {e}")))?;
        *self.enc_mut() = from_state(&v).map_err(value_err)?;
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "Encoding(num_tokens={}, attributes=[ids, type_ids, tokens, offsets, attention_mask, special_tokens_mask, overflowing])",
            self.enc().len()
        )
    }

    fn __len__(&self) -> usize {
        self.enc().len()
    }

    /// Merges encodings into one (`growing_offsets`: offsets of each continue after the previous).
    #[staticmethod]
    #[pyo3(signature = (encodings, growing_offsets = true))]
    fn merge(encodings: Vec<PyRef<PyEncoding>>, growing_offsets: bool) -> PyResult<PyEncoding> {
        let encs: Vec<Encoding> = encodings.iter().map(|e| e.enc().clone()).collect();
        guard(|| Ok(Encoding::merge(encs, growing_offsets))).map(Into::into)
    }

    /// Number of sequences (1, or 2 for a pair).
    #[getter]
    fn n_sequences(&self) -> usize {
        self.enc().n_sequences()
    }

    /// Marks every token as belonging to sequence `sequence_id`.
    fn set_sequence_id(&mut self, sequence_id: usize) {
        self.enc_mut().set_sequence_id(sequence_id);
    }

    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::ids::list(py, self.enc().get_ids())
    }
    // The per-token lists are built with `py_list`: a MemoryError, not a panic, when a huge
    // encoding's list cannot be allocated.
    #[getter]
    fn tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        py_list(py, self.enc().get_tokens().iter())
    }
    #[getter]
    fn words<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        py_list(py, self.enc().get_word_ids().iter())
    }
    #[getter]
    fn word_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        py_list(py, self.enc().get_word_ids().iter())
    }
    #[getter]
    fn sequence_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        py_list(py, self.enc().get_sequence_ids().into_iter())
    }
    #[getter]
    fn type_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        py_list(py, self.enc().get_type_ids().iter())
    }
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        py_list(py, self.enc().get_offsets().iter())
    }
    #[getter]
    fn special_tokens_mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        py_list(py, self.enc().get_special_tokens_mask().iter())
    }
    #[getter]
    fn attention_mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        py_list(py, self.enc().get_attention_mask().iter())
    }
    #[getter]
    fn overflowing<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self.enc().get_overflowing().iter().map(|o| Py::new(py, PyEncoding::from(o.clone()))).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Tokens `(start, end)` of word `word_index` in sequence `sequence_index`.
    #[pyo3(signature = (word_index, sequence_index = 0))]
    fn word_to_tokens(&self, word_index: u32, sequence_index: usize) -> Option<(usize, usize)> {
        self.enc().word_to_tokens(word_index, sequence_index)
    }
    /// Character offsets of word `word_index` in sequence `sequence_index`.
    #[pyo3(signature = (word_index, sequence_index = 0))]
    fn word_to_chars(&self, word_index: u32, sequence_index: usize) -> Option<(usize, usize)> {
        self.enc().word_to_chars(word_index, sequence_index)
    }
    /// The sequence a token belongs to.
    fn token_to_sequence(&self, token_index: usize) -> Option<usize> {
        self.enc().token_to_sequence(token_index)
    }
    /// Character offsets of a token (in its own sequence).
    fn token_to_chars(&self, token_index: usize) -> Option<(usize, usize)> {
        self.enc().token_to_chars(token_index).map(|(_, o)| o)
    }
    /// The word a token belongs to (in its own sequence).
    fn token_to_word(&self, token_index: usize) -> Option<u32> {
        self.enc().token_to_word(token_index).map(|(_, w)| w)
    }
    /// The token containing character `char_pos` of sequence `sequence_index`.
    #[pyo3(signature = (char_pos, sequence_index = 0))]
    fn char_to_token(&self, char_pos: usize, sequence_index: usize) -> Option<usize> {
        self.enc().char_to_token(char_pos, sequence_index)
    }
    /// The word containing character `char_pos` of sequence `sequence_index`.
    #[pyo3(signature = (char_pos, sequence_index = 0))]
    fn char_to_word(&self, char_pos: usize, sequence_index: usize) -> Option<u32> {
        self.enc().char_to_word(char_pos, sequence_index)
    }

    /// Pads in place to `length` tokens.
    #[pyo3(signature = (length, direction = "right", pad_id = 0, pad_type_id = 0, pad_token = "[PAD]"))]
    fn pad(&mut self, length: usize, direction: &str, pad_id: u32, pad_type_id: u32, pad_token: &str) -> PyResult<()> {
        let d = padding_direction(direction)?;
        let enc = self.enc_mut();
        guard(|| enc.pad(length, pad_id, pad_type_id, pad_token, d))
    }

    /// Truncates in place to `max_length` tokens; the rest goes to `overflowing`.
    #[pyo3(signature = (max_length, stride = 0, direction = "right"))]
    fn truncate(&mut self, max_length: usize, stride: usize, direction: &str) -> PyResult<()> {
        let d = truncation_direction(direction)?;
        let enc = self.enc_mut();
        guard(|| enc.truncate(max_length, stride, d))
    }
}
