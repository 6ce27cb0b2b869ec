//! `SentencePieceTrainer.train`: sentencepiece's trainer options in, `PREFIX.model` and
//! `PREFIX.vocab` (or the serialized model) out, with the GIL released while training.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tokenkit::trainers::spm::{self, SpmTrainerSpec};

use crate::errors::guard;

/// Trains a SentencePiece model. `options` are sentencepiece's `(name, value)` pairs in their
/// text form; `sentences`, when given, replace `--input`. Writes `model_prefix.model` and
/// `.vocab` when `write` is true; returns the serialized `ModelProto`.
#[pyfunction]
#[pyo3(signature = (options, sentences=None, write=true))]
pub fn train_sentencepiece<'py>(
    py: Python<'py>,
    options: Vec<(String, String)>,
    sentences: Option<Vec<String>>,
    write: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py.allow_threads(|| {
        guard(|| {
            let mut spec = SpmTrainerSpec::default();
            for (k, v) in &options {
                spec.set(k, v)?;
            }
            let proto = match sentences {
                Some(s) => spm::train(&spec, s.into_iter().map(Ok))?.0,
                None => spm::train_files(&spec)?,
            };
            if write {
                if spec.model_prefix.is_empty() {
                    return Err(tokenkit::Error::invalid("sentencepiece trainer: --model_prefix is empty"));
                }
                spm::save(&proto, &spec.model_prefix)?;
            }
            Ok(spm::model_bytes(&proto))
        })
    })?;
    Ok(PyBytes::new(py, &bytes))
}
