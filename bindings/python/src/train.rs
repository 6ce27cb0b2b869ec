//! `Tokenizer.train` / `Tokenizer.train_from_iterator`: the library's trainers, fed from files or
//! from a Python iterator of strings (or of batches of strings), with the GIL released while
//! counting and merging.

use std::collections::VecDeque;
use std::sync::Mutex;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyIterator, PyString};
use tokenkit::models::ModelWrapper;
use tokenkit::trainers::{
    BpeTrainer, NoProgress, Progress, ProgressBars, TrainerWrapper, UnigramTrainer, WordLevelTrainer, WordPieceTrainer,
};

use crate::errors::value_err;

/// The trainer given from Python (a `tokenkit.trainers` object), or the default trainer of the
/// tokenizer's model kind, as HF's `model.get_trainer()`.
pub fn trainer_from_python(trainer: Option<&Bound<'_, PyAny>>, model: &ModelWrapper) -> PyResult<TrainerWrapper> {
    match trainer {
        Some(t) if !t.is_none() => {
            let json: String = t
                .call_method0("_tk_json")
                .and_then(|j| j.extract())
                .map_err(|_| PyTypeError::new_err("trainer must be a tokenkit.trainers trainer"))?;
            serde_json::from_str(&json).map_err(|e| value_err(format!("invalid trainer options: {e}")))
        }
        _ => Ok(match model {
            ModelWrapper::BPE(_) => BpeTrainer::default().into(),
            ModelWrapper::WordPiece(_) => WordPieceTrainer::default().into(),
            ModelWrapper::WordLevel(_) => WordLevelTrainer::default().into(),
            ModelWrapper::Unigram(_) => UnigramTrainer::default().into(),
            ModelWrapper::SentencePiece(_) => {
                return Err(value_err("a SentencePiece .model tokenizer cannot be trained; build a Unigram or BPE model"))
            }
        }),
    }
}

/// Progress bars on standard error when the trainer's `show_progress` is on (HF's default;
/// indicatif hides them when standard error is not a terminal), otherwise nothing.
pub fn progress(trainer: &TrainerWrapper) -> Box<dyn Progress> {
    if trainer.show_progress() {
        Box::new(ProgressBars::new())
    } else {
        Box::new(NoProgress)
    }
}

/// The sequences of a Python iterator whose items are strings or iterables of strings,
/// pulled with the GIL taken for each item only. The first Python error ends the iteration
/// and is kept in `error`.
pub struct PySequences<'a> {
    iter: Py<PyIterator>,
    pending: VecDeque<String>,
    error: &'a Mutex<Option<PyErr>>,
}

impl<'a> PySequences<'a> {
    /// Iterates over `iter`, recording the first error in `error`.
    pub fn new(iter: Py<PyIterator>, error: &'a Mutex<Option<PyErr>>) -> Self {
        Self { iter, pending: VecDeque::new(), error }
    }

    fn fail(&self, e: PyErr) -> Option<String> {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(e);
        }
        None
    }
}

impl Iterator for PySequences<'_> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        if let Some(s) = self.pending.pop_front() {
            return Some(s);
        }
        Python::with_gil(|py| loop {
            let item = match self.iter.bind(py).clone().next()? {
                Ok(item) => item,
                Err(e) => return self.fail(e),
            };
            if let Ok(s) = item.downcast::<PyString>() {
                return match s.to_cow() {
                    Ok(s) => Some(s.into_owned()),
                    Err(e) => self.fail(e),
                };
            }
            let batch = match item.try_iter() {
                Ok(batch) => batch,
                Err(_) => {
                    let kind = item.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                    return self.fail(PyTypeError::new_err(format!(
                        "train_from_iterator: items must be str or batches (lists) of str, got {kind}"
                    )));
                }
            };
            for s in batch {
                match s.and_then(|s| s.extract::<String>()) {
                    Ok(s) => self.pending.push_back(s),
                    Err(e) => return self.fail(e),
                }
            }
            if let Some(s) = self.pending.pop_front() {
                return Some(s);
            }
        })
    }
}
