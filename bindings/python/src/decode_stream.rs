//! `tokenkit.decoders.DecodeStream`: HF's streaming decoder. The library's `DecodeStream`
//! borrows its tokenizer; here the tokenizer is passed to each `step`, so the same algorithm is
//! kept with owned state.

use pyo3::prelude::*;

use crate::errors::guard;
use crate::tokenizer::PyTokenizer;

/// Incremental decoding: feed ids one (or a few) at a time, get text once it is complete.
#[pyclass(module = "tokenkit.decoders", name = "DecodeStream")]
#[derive(Clone)]
pub struct PyDecodeStream {
    skip_special_tokens: bool,
    /// The ids still needed to decode the next chunk.
    ids: Vec<u32>,
    /// The text `ids[..prefix_index]` decode to (None: not computed yet, after a prefill).
    prefix: Option<String>,
    prefix_index: usize,
}

#[pymethods]
impl PyDecodeStream {
    /// `ids` pre-fills the stream with context that is not returned (HF 0.23's signature:
    /// `DecodeStream(ids=None, skip_special_tokens=False)`; a lone bool is taken as
    /// `skip_special_tokens`, the older signature).
    #[new]
    #[pyo3(signature = (ids = None, skip_special_tokens = false))]
    fn new(ids: Option<&Bound<'_, PyAny>>, skip_special_tokens: Option<bool>) -> PyResult<Self> {
        let mut skip = skip_special_tokens.unwrap_or(false);
        let mut prefill = Vec::new();
        if let Some(ids) = ids {
            if let Ok(b) = ids.downcast::<pyo3::types::PyBool>() {
                skip = b.is_true();
            } else if !ids.is_none() {
                prefill = ids.extract::<Vec<u32>>()?;
            }
        }
        let prefix = if prefill.is_empty() { Some(String::new()) } else { None };
        Ok(Self { skip_special_tokens: skip, ids: prefill, prefix, prefix_index: 0 })
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// Adds the next id (or list of ids); returns the new text, or None while incomplete.
    fn step(&mut self, py: Python<'_>, tokenizer: PyRef<PyTokenizer>, id: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let new_ids: Vec<u32> = match id.extract::<u32>() {
            Ok(i) => vec![i],
            Err(_) => id.extract()?,
        };
        let tok = tokenizer.tok.clone();
        drop(tokenizer);
        let skip = self.skip_special_tokens;
        py.allow_threads(|| {
            guard(|| {
                if self.prefix.is_none() {
                    // Pre-filled context: its text is the prefix, unless it ends inside a
                    // character (then the first chunk includes it, as HF does).
                    let p = tok.decode(&self.ids, skip)?;
                    self.prefix = Some(if p.ends_with('\u{FFFD}') { String::new() } else { p });
                }
                self.ids.extend(new_ids);
                let prefix = self.prefix.as_deref().unwrap_or("");
                let text = tok.decode(&self.ids, skip)?;
                if text.len() > prefix.len() && !text.ends_with('\u{FFFD}') {
                    if !text.starts_with(prefix) {
                        return Err(tokenkit::Error::invalid("decode stream: the decoded text no longer starts with the previous prefix"));
                    }
                    let new_text = text[prefix.len()..].to_owned();
                    let new_prefix_index = self.ids.len() - self.prefix_index;
                    self.ids.drain(..self.prefix_index);
                    self.prefix = Some(tok.decode(&self.ids, skip)?);
                    self.prefix_index = new_prefix_index;
                    Ok(Some(new_text))
                } else {
                    Ok(None)
                }
            })
        })
    }
}
