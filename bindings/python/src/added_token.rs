//! `tokenkit.AddedToken`.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokenkit::AddedToken;

/// A token added on top of the model's vocabulary. `normalized` defaults to `not special`.
#[pyclass(module = "tokenkit", name = "AddedToken")]
#[derive(Clone, Debug)]
pub struct PyAddedToken {
    #[pyo3(get, set)]
    pub content: String,
    #[pyo3(get)]
    pub single_word: bool,
    #[pyo3(get)]
    pub lstrip: bool,
    #[pyo3(get)]
    pub rstrip: bool,
    pub normalized: Option<bool>,
    #[pyo3(get, set)]
    pub special: bool,
}

impl PyAddedToken {
    /// The library token this describes.
    pub fn get_token(&self) -> AddedToken {
        AddedToken::from(self.content.clone(), self.special)
            .single_word(self.single_word)
            .lstrip(self.lstrip)
            .rstrip(self.rstrip)
            .normalized(self.normalized.unwrap_or(!self.special))
    }

    pub fn from_token(t: &AddedToken) -> Self {
        Self {
            content: t.content.clone(),
            single_word: t.single_word,
            lstrip: t.lstrip,
            rstrip: t.rstrip,
            normalized: Some(t.normalized),
            special: t.special,
        }
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

#[pymethods]
impl PyAddedToken {
    #[new]
    #[pyo3(signature = (content = None, *, single_word = false, lstrip = false, rstrip = false, normalized = None, special = false))]
    fn new(content: Option<String>, single_word: bool, lstrip: bool, rstrip: bool, normalized: Option<bool>, special: bool) -> Self {
        Self { content: content.unwrap_or_default(), single_word, lstrip, rstrip, normalized, special }
    }

    /// Whether the token is matched against the normalized text.
    #[getter]
    fn normalized(&self) -> bool {
        self.normalized.unwrap_or(!self.special)
    }

    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("content", &self.content)?;
        d.set_item("single_word", self.single_word)?;
        d.set_item("lstrip", self.lstrip)?;
        d.set_item("rstrip", self.rstrip)?;
        d.set_item("normalized", self.normalized())?;
        d.set_item("special", self.special)?;
        Ok(d)
    }

    fn __setstate__(&mut self, state: &Bound<'_, PyDict>) -> PyResult<()> {
        for (k, v) in state.iter() {
            match k.extract::<String>()?.as_str() {
                "content" => self.content = v.extract()?,
                "single_word" => self.single_word = v.extract()?,
                "lstrip" => self.lstrip = v.extract()?,
                "rstrip" => self.rstrip = v.extract()?,
                "normalized" => self.normalized = Some(v.extract()?),
                "special" => self.special = v.extract()?,
                _ => {}
            }
        }
        Ok(())
    }

    fn __str__(&self) -> &str {
        &self.content
    }

    fn __repr__(&self) -> String {
        format!(
            "AddedToken(\"{}\", rstrip={}, lstrip={}, single_word={}, normalized={}, special={})",
            self.content,
            py_bool(self.rstrip),
            py_bool(self.lstrip),
            py_bool(self.single_word),
            py_bool(self.normalized()),
            py_bool(self.special)
        )
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        let Ok(other) = other.extract::<PyRef<PyAddedToken>>() else {
            return py.NotImplemented();
        };
        let (a, b) = (self.get_token(), other.get_token());
        match op {
            CompareOp::Eq => (a == b).into_pyobject(py).unwrap().to_owned().into_any().unbind(),
            CompareOp::Ne => (a != b).into_pyobject(py).unwrap().to_owned().into_any().unbind(),
            _ => py.NotImplemented(),
        }
    }

    fn __hash__(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.content.hash(&mut h);
        h.finish()
    }
}
