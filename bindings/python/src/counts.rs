//! `tokenkit.WordCounts`: the word (pre-token) counts training starts from, as a value that
//! crosses processes: counted per batch with `Tokenizer.count_words` anywhere (a Ray block, a
//! Spark partition), added up, pickled or saved as a count file (`tokenkit count`'s format), and
//! trained on with `Tokenizer.train_from_counts`.

use std::path::PathBuf;

use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyType};
use tokenkit::trainers::counts::{count_file_bytes, merge_count_files, read_count_bytes, write_count_file, CountInfo, Counted};
use tokenkit::trainers::WordCounts;

use crate::errors::{guard, py_list, value_err};
use crate::pool::run_released as run;
use crate::tokenizer::PyTokenizer;

/// Word counts: each distinct word (as the tokenizer's normalizer and pre-tokenizer cut it) and
/// how many times it was seen, with how it was cut when a tokenizer counted it.
///
/// `WordCounts(pairs)` takes a dict or an iterable of `(word, count)` pairs (equal words add
/// up), such as a Spark `reduceByKey` result; `a + b` adds two counts; `==` compares the words
/// and counts.
#[pyclass(module = "tokenkit", name = "WordCounts")]
#[derive(Clone, Default)]
pub struct PyWordCounts {
    pub counts: WordCounts,
    /// How the words were cut, the inputs and sequences counted (`None`: given as pairs).
    pub info: Option<CountInfo>,
}

impl PyWordCounts {
    /// Adds `other` into these; counts cut another way are an error.
    fn absorb(&mut self, other: PyWordCounts) -> PyResult<()> {
        match (&mut self.info, other.info) {
            (Some(mine), Some(theirs)) => {
                if !mine.same_cutting(&theirs) {
                    return Err(value_err(format!(
                        "cannot add word counts cut by another normalizer or pre-tokenizer ({} / {} vs {} / {})",
                        mine.normalizer, mine.pre_tokenizer, theirs.normalizer, theirs.pre_tokenizer
                    )));
                }
                mine.add(theirs);
            }
            (mine @ None, theirs) => *mine = theirs,
            (Some(_), None) => {}
        }
        tokenkit::trainers::add_counts(&mut self.counts, other.counts);
        Ok(())
    }

    /// The count-file form: the information (`null` normalizer and pre-tokenizer when none is
    /// recorded) and the counts, which `Counted::into_sorted` puts in byte order.
    fn file_parts(&self) -> (CountInfo, Counted) {
        let info = self.info.clone().unwrap_or_else(|| CountInfo::new(serde_json::Value::Null, serde_json::Value::Null, Vec::new(), 0));
        (info, Counted::Memory(self.counts.clone()))
    }

    /// A count file records how its words were cut: counts given as pairs must be told.
    fn check_recorded(&self, what: &str) -> PyResult<()> {
        if self.info.is_none() {
            return Err(value_err(format!(
                "{what}: these counts do not record the normalizer and pre-tokenizer that cut their words (they were \
                 given as pairs); make them with WordCounts(pairs, tokenizer=...) or Tokenizer.count_words"
            )));
        }
        Ok(())
    }

    fn bytes_of<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (info, counted) = self.file_parts();
        let (bytes, _) = run(py, || count_file_bytes(info, counted.into_sorted()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Counts from a dict or an iterable of `(word, count)` pairs.
    pub fn from_pairs(pairs: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut counts = WordCounts::default();
        let mut add = |word: String, count: u64| *counts.entry(word).or_insert(0) += count;
        if let Ok(dict) = pairs.downcast::<PyDict>() {
            for (w, c) in dict.iter() {
                add(w.extract()?, c.extract()?);
            }
        } else {
            for item in
                pairs.try_iter().map_err(|_| PyTypeError::new_err("WordCounts takes a dict or an iterable of (word, count) pairs"))?
            {
                let (w, c): (String, u64) =
                    item?.extract().map_err(|_| PyTypeError::new_err("WordCounts takes a dict or an iterable of (word, count) pairs"))?;
                add(w, c);
            }
        }
        Ok(PyWordCounts { counts, info: None })
    }
}

/// What `__reduce__` returns: `WordCounts._restore` and its arguments.
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>, bool));

#[pymethods]
impl PyWordCounts {
    #[new]
    #[pyo3(signature = (pairs = None, tokenizer = None))]
    fn new(pairs: Option<&Bound<'_, PyAny>>, tokenizer: Option<PyRef<'_, PyTokenizer>>) -> PyResult<Self> {
        let mut counts = match pairs {
            Some(p) if !p.is_none() => Self::from_pairs(p)?,
            _ => Self::default(),
        };
        if let Some(tok) = tokenizer {
            counts.info = Some(guard(|| tok.tok.word_count_info(Vec::new(), 0))?);
        }
        Ok(counts)
    }

    fn __len__(&self) -> usize {
        self.counts.len()
    }

    fn __contains__(&self, word: &str) -> bool {
        self.counts.contains_key(word)
    }

    fn __getitem__(&self, word: &str) -> PyResult<u64> {
        self.counts.get(word).copied().ok_or_else(|| PyKeyError::new_err(word.to_owned()))
    }

    /// The count of `word`, or `default`.
    #[pyo3(signature = (word, default = None))]
    fn get(&self, word: &str, default: Option<u64>) -> Option<u64> {
        self.counts.get(word).copied().or(default)
    }

    /// `(word, count)` pairs, in no particular order.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        py_list(py, self.counts.iter().map(|(w, &c)| (w.as_str(), c)))
    }

    /// The words, in no particular order.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        py_list(py, self.counts.keys().map(String::as_str))
    }

    /// The sum of the counts (words counted).
    #[getter]
    fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Sequences counted (0 for counts given as pairs).
    #[getter]
    fn sequences(&self) -> u64 {
        self.info.as_ref().map_or(0, |i| i.sequences)
    }

    /// The normalizer the words went through, as tokenizer.json's JSON (`None`: not recorded).
    #[getter]
    fn normalizer(&self) -> Option<String> {
        self.info.as_ref().map(|i| i.normalizer.to_string())
    }

    /// The pre-tokenizer that cut them, as tokenizer.json's JSON (`None`: not recorded).
    #[getter]
    fn pre_tokenizer(&self) -> Option<String> {
        self.info.as_ref().map(|i| i.pre_tokenizer.to_string())
    }

    fn __add__(&self, other: PyWordCounts) -> PyResult<PyWordCounts> {
        let mut sum = self.clone();
        sum.absorb(other)?;
        Ok(sum)
    }

    fn __iadd__(&mut self, other: PyWordCounts) -> PyResult<()> {
        self.absorb(other)
    }

    /// Adds `other` (WordCounts, a dict or `(word, count)` pairs) into these.
    fn update(&mut self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let other = match other.extract::<PyWordCounts>() {
            Ok(o) => o,
            Err(_) => Self::from_pairs(other)?,
        };
        self.absorb(other)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.extract::<PyRef<'_, PyWordCounts>>().is_ok_and(|o| o.counts == self.counts)
    }

    fn __repr__(&self) -> String {
        format!("WordCounts({} words, {} occurrences)", self.counts.len(), self.total())
    }

    /// The counts as a count file's bytes (`tokenkit count`'s format).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.check_recorded("to_bytes")?;
        self.bytes_of(py)
    }

    /// Counts from [`to_bytes`](Self::to_bytes)'s bytes.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let (info, counts) = run(py, || read_count_bytes(&data))?;
        Ok(PyWordCounts { counts, info: Some(info) })
    }

    /// Writes a count file (as `tokenkit count`; `tokenkit train --from-counts` reads it),
    /// atomically: `path` appears only complete.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        self.check_recorded("save")?;
        let (info, counted) = self.file_parts();
        run(py, || write_count_file(&path, info, counted.into_sorted()).map(|_| ()))
    }

    /// The counts of one or more count files (`tokenkit count`, `WordCounts.save`), added up.
    #[classmethod]
    #[pyo3(signature = (*paths))]
    fn load(_cls: &Bound<'_, PyType>, py: Python<'_>, paths: Vec<PathBuf>) -> PyResult<Self> {
        let (info, counts) = run(py, || {
            let (info, counted) = merge_count_files(&paths)?;
            let counts = counted.into_sorted().collect::<tokenkit::Result<WordCounts>>()?;
            Ok((info, counts))
        })?;
        Ok(PyWordCounts { counts, info: Some(info) })
    }

    /// Pickles as the count-file bytes, and whether the cutting is recorded.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let restore = slf.get_type().getattr("_restore")?;
        let this = slf.borrow();
        Ok((restore, (this.bytes_of(slf.py())?, this.info.is_some())))
    }

    #[classmethod]
    fn _restore(cls: &Bound<'_, PyType>, py: Python<'_>, data: Vec<u8>, recorded: bool) -> PyResult<Self> {
        let mut counts = Self::from_bytes(cls, py, data)?;
        if !recorded {
            counts.info = None;
        }
        Ok(counts)
    }
}
