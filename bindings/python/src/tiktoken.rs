//! `tokenkit._tokenkit.TiktokenCore`: the Rust side of `tokenkit.tiktoken.Encoding` (the
//! counterpart of tiktoken's `CoreBPE`). The special-token policy is applied here, in one pass
//! over the text; decoding to `str` with Python's error modes happens on the Python side.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use tokenkit::tiktoken::{Encoding, SpecialTokens};

use crate::errors::{catch, guard, panic_err, tk_err, value_err};
use crate::pool::{self, run_interruptible as run, run_on_text, run_one};
use crate::{ids, numpy, text};

/// A tiktoken encoding: its pattern, ranks and special tokens, compiled.
#[pyclass(module = "tokenkit", name = "TiktokenCore", frozen)]
pub struct PyTiktokenCore {
    enc: Arc<Encoding>,
}

/// `"all"` or a collection of special-token strings; `None` (the argument not given) is
/// `default`, tiktoken's default of the argument (`set()` allowed, `"all"` disallowed).
fn special_set(o: Option<&Bound<'_, PyAny>>, what: &str, default: SpecialTokens) -> PyResult<SpecialTokens> {
    let Some(o) = o else { return Ok(default) };
    if let Ok(s) = o.downcast::<PyString>() {
        if s.to_cow()? == "all" {
            return Ok(SpecialTokens::All);
        }
        return Err(PyTypeError::new_err(format!("{what} must be \"all\" or a collection of str, got a str")));
    }
    let mut set = std::collections::BTreeSet::new();
    for item in o.try_iter().map_err(|_| PyTypeError::new_err(format!("{what} must be \"all\" or a collection of str")))? {
        set.insert(item?.extract::<String>()?);
    }
    Ok(SpecialTokens::Set(set))
}

/// The `allowed_special` and `disallowed_special` arguments of an encode call, tiktoken's
/// defaults where not given.
fn special_policy(
    allowed_special: Option<&Bound<'_, PyAny>>,
    disallowed_special: Option<&Bound<'_, PyAny>>,
) -> PyResult<(SpecialTokens, SpecialTokens)> {
    Ok((
        special_set(allowed_special, "allowed_special", SpecialTokens::Set(Default::default()))?,
        special_set(disallowed_special, "disallowed_special", SpecialTokens::All)?,
    ))
}

/// tiktoken's KeyError for an id with no token.
fn decode_err(e: tokenkit::Error) -> PyErr {
    match e {
        tokenkit::Error::IdOutOfRange { id, .. } => PyKeyError::new_err(format!("Invalid token for decoding: {id}")),
        e => tk_err(e),
    }
}

/// The text of each str of a batch (held by the caller for the call).
fn utf8_all<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<std::borrow::Cow<'a, str>>> {
    texts.iter().map(text::utf8).collect()
}

impl PyTiktokenCore {
    /// The library encoding (shared).
    pub fn encoding(&self) -> Arc<Encoding> {
        self.enc.clone()
    }

    /// The ids of `text` with tiktoken's special-token policy, as a vector.
    fn encode_ids(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<u32>> {
        let (allowed, disallowed) = special_policy(allowed_special, disallowed_special)?;
        let (enc, text) = (self.enc.clone(), text::utf8_surrogates_replaced(text)?);
        run_on_text(py, text.len(), || enc.encode(&text, &allowed, &disallowed))
    }

    /// `encode_ordinary` of each text, in parallel (for the list and the arrow forms).
    fn ordinary_rows(&self, py: Python<'_>, texts: &[Bound<'_, PyString>]) -> PyResult<Vec<Vec<u32>>> {
        let (enc, texts) = (self.enc.clone(), utf8_all(texts)?);
        run(py, || {
            let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
            enc.encode_ordinary_batch(&refs)
        })
    }
}

#[pymethods]
impl PyTiktokenCore {
    /// An encoding from its parts, as tiktoken's `Encoding(name, pat_str=, mergeable_ranks=,
    /// special_tokens=, explicit_n_vocab=)`.
    #[new]
    #[pyo3(signature = (name, pat_str, mergeable_ranks, special_tokens, explicit_n_vocab = None))]
    fn new(
        py: Python<'_>,
        name: &str,
        pat_str: &str,
        mergeable_ranks: HashMap<Vec<u8>, u32>,
        special_tokens: HashMap<String, u32>,
        explicit_n_vocab: Option<u32>,
    ) -> PyResult<Self> {
        let ranks = tokenkit::formats::tiktoken::Ranks::from_pairs(mergeable_ranks).map_err(tk_err)?;
        let mut specials: Vec<(String, u32)> = special_tokens.into_iter().collect();
        specials.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        let (name, pat_str) = (name.to_owned(), pat_str.to_owned());
        // tiktoken checks `if explicit_n_vocab:`, so 0 is no check.
        let explicit_n_vocab = explicit_n_vocab.filter(|&n| n != 0);
        let enc = py.allow_threads(|| guard(|| Encoding::new(&name, &pat_str, ranks, &specials, explicit_n_vocab)))?;
        Ok(Self { enc: Arc::new(enc) })
    }

    /// A named encoding (`cl100k_base`, ...) read from the rank-file data directories.
    #[staticmethod]
    fn get(py: Python<'_>, name: &str) -> PyResult<Self> {
        let name = name.to_owned();
        let enc = py.allow_threads(|| guard(|| Encoding::get(&name)))?;
        Ok(Self { enc: Arc::new(enc) })
    }

    /// A rank file read with the pattern and special tokens of encoding `name` (or of the
    /// encoding its file name stands for).
    #[staticmethod]
    #[pyo3(signature = (path, name = None))]
    fn from_file(py: Python<'_>, path: std::path::PathBuf, name: Option<String>) -> PyResult<Self> {
        let enc = py.allow_threads(|| guard(|| Encoding::from_file(&path, name.as_deref())))?;
        Ok(Self { enc: Arc::new(enc) })
    }

    #[getter]
    fn name(&self) -> &str {
        self.enc.name()
    }
    #[getter]
    fn pat_str(&self) -> &str {
        self.enc.pat_str()
    }
    #[getter]
    fn n_vocab(&self) -> usize {
        self.enc.n_vocab()
    }
    #[getter]
    fn max_token_value(&self) -> u32 {
        self.enc.max_token_value()
    }
    /// Special token → id.
    #[getter]
    fn special_tokens(&self) -> HashMap<String, u32> {
        self.enc.special_tokens().iter().map(|(k, &v)| (k.clone(), v)).collect()
    }

    /// The ids of `text`; special tokens are ordinary text, lone surrogates U+FFFD (as in
    /// tiktoken). The Python `Encoding` calls it directly, without a Python frame.
    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &Bound<'_, PyString>) -> PyResult<Bound<'py, PyList>> {
        let (enc, text) = (self.enc.clone(), text::utf8_surrogates_replaced(text)?);
        ids::list(py, &run_on_text(py, text.len(), || enc.encode_ordinary(&text))?)
    }

    /// The ids of `text` with tiktoken's special-token policy (`"all"` or a collection each;
    /// tiktoken's defaults when not given), lone surrogates U+FFFD. The Python `Encoding` calls
    /// it directly, without a Python frame.
    #[pyo3(signature = (text, /, *, allowed_special = None, disallowed_special = None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'_, PyString>,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        ids::list(py, &self.encode_ids(py, text, allowed_special, disallowed_special)?)
    }

    /// `encode` as a 1-D `numpy.uint32` array.
    #[pyo3(signature = (text, /, *, allowed_special = None, disallowed_special = None))]
    fn encode_to_numpy(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let ids = self.encode_ids(py, text, allowed_special, disallowed_special)?;
        numpy::u32_array(py, &ids, &[ids.len()])
    }

    /// The number of tokens `encode` would give, without building the ids (called directly,
    /// as `encode`).
    #[pyo3(signature = (text, /, *, allowed_special = None, disallowed_special = None))]
    fn count(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let (allowed, disallowed) = special_policy(allowed_special, disallowed_special)?;
        let (enc, text) = (self.enc.clone(), text::utf8_surrogates_replaced(text)?);
        run_on_text(py, text.len(), || enc.count(&text, &allowed, &disallowed))
    }

    /// `encode_ordinary` of each text, in parallel.
    fn encode_ordinary_batch<'py>(&self, py: Python<'py>, texts: Vec<Bound<'py, PyString>>) -> PyResult<Bound<'py, PyList>> {
        ids::lists(py, &self.ordinary_rows(py, &texts)?)
    }

    /// `encode_ordinary` of each text, in parallel, as a `pyarrow.ListArray` of uint32 (no
    /// Python object per token).
    fn encode_ordinary_batch_to_arrow<'py>(&self, py: Python<'py>, texts: Vec<Bound<'py, PyString>>) -> PyResult<Bound<'py, PyAny>> {
        crate::data::list_array(py, &self.ordinary_rows(py, &texts)?)
    }

    /// `encode` of each text, in parallel.
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (allowed, disallowed) = special_policy(Some(allowed_special), Some(disallowed_special))?;
        let (enc, texts) = (self.enc.clone(), utf8_all(&texts)?);
        let rows = run(py, || {
            let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
            enc.encode_batch(&refs, &allowed, &disallowed)
        })?;
        ids::lists(py, &rows)
    }

    /// tiktoken's `encode_with_unstable`: the stable ids and the possible completions
    /// (sorted lists of ids).
    fn encode_with_unstable(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<u32>, Vec<Vec<u32>>)> {
        let (allowed, disallowed) = special_policy(Some(allowed_special), Some(disallowed_special))?;
        let (enc, text) = (self.enc.clone(), text::utf8(text)?);
        run_one(py, || enc.encode_with_unstable(&text, &allowed, &disallowed))
    }

    /// BPE of the bytes as one piece, no regex split, no special tokens.
    fn encode_single_piece(&self, py: Python<'_>, piece: &[u8]) -> PyResult<Vec<u32>> {
        let enc = self.enc.clone();
        run_one(py, || enc.encode_single_piece(piece))
    }

    /// Ordinary encoding of bytes that may end inside a UTF-8 sequence.
    fn encode_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<Vec<u32>> {
        let enc = self.enc.clone();
        run_one(py, || enc.encode_bytes(data))
    }

    /// The id of the token with these bytes (KeyError when there is none).
    fn encode_single_token(&self, py: Python<'_>, token: &[u8]) -> PyResult<u32> {
        catch(|| self.enc.encode_single_token(token)).map_err(panic_err)?.map_err(|_| PyKeyError::new_err(PyBytes::new(py, token).unbind()))
    }

    /// The concatenated bytes of the tokens (KeyError for an id with no token).
    fn decode_bytes<'py>(&self, py: Python<'py>, tokens: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let enc = self.enc.clone();
        let bytes = pool::released(py, || enc.decode_bytes(&tokens))?.map_err(decode_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The bytes of each token list, in parallel.
    fn decode_bytes_batch<'py>(&self, py: Python<'py>, batch: Vec<Vec<u32>>) -> PyResult<Bound<'py, PyList>> {
        let enc = self.enc.clone();
        let out = py
            .allow_threads(|| {
                catch(|| {
                    pool::run(|| {
                        use rayon::prelude::*;
                        batch.par_iter().map(|ids| enc.decode_bytes(ids)).collect::<tokenkit::Result<Vec<_>>>()
                    })
                })
            })
            .map_err(panic_err)?
            .map_err(decode_err)?;
        PyList::new(py, out.iter().map(|b| PyBytes::new(py, b)))
    }

    /// The bytes of one token (KeyError for an id with no token).
    fn decode_single_token_bytes<'py>(&self, py: Python<'py>, token: u32) -> PyResult<Bound<'py, PyBytes>> {
        let bytes =
            catch(|| self.enc.decode_single_token_bytes(token)).map_err(panic_err)?.map_err(|_| PyKeyError::new_err(token.to_string()))?;
        Ok(PyBytes::new(py, bytes))
    }

    /// The bytes of every mergeable token, in rank order.
    fn token_byte_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.enc.token_byte_values().into_iter().map(|b| PyBytes::new(py, b)))
    }

    /// Whether `token` is a special token's id.
    fn is_special_token(&self, token: u32) -> bool {
        self.enc.is_special_token(token)
    }
}

/// Parses the content of a `.tiktoken` rank file (`base64(token) rank` lines) into
/// `{token bytes: rank}`, as `tiktoken.load.load_tiktoken_bpe`; errors name `origin` and the line.
#[pyfunction]
pub fn parse_rank_file<'py>(py: Python<'py>, data: &[u8], origin: &str) -> PyResult<Bound<'py, PyDict>> {
    let ranks = py.allow_threads(|| tokenkit::formats::tiktoken::parse_rank_file(data, origin)).map_err(|e| value_err(e.to_string()))?;
    let out = PyDict::new(py);
    for (rank, token) in ranks.iter() {
        out.set_item(PyBytes::new(py, token), rank)?;
    }
    Ok(out)
}

/// The named encodings; with `available_only`, those whose rank file is found (with its
/// published hash), so that `get_encoding` loads them.
#[pyfunction]
#[pyo3(signature = (available_only = false))]
pub fn tiktoken_encoding_names(py: Python<'_>, available_only: bool) -> Vec<&'static str> {
    let names = tokenkit::formats::tiktoken::ENCODING_NAMES;
    py.allow_threads(|| names.iter().copied().filter(|n| !available_only || tokenkit::formats::tiktoken::is_available(n)).collect())
}

/// The directories searched for rank files, in order (`$TOKENKIT_TIKTOKEN_DIR`, the user
/// cache, `./.fixtures/tiktoken`).
#[pyfunction]
pub fn tiktoken_data_dirs() -> Vec<std::path::PathBuf> {
    tokenkit::formats::tiktoken::data_dirs()
}
