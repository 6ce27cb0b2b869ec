//! `tokenkit.Tokenizer`: HF tokenizers' `Tokenizer` over the library's [`Tokenizer`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use tokenkit::models::ModelWrapper;
use tokenkit::{
    AddedToken, EncodeInput, Encoding, InputSequence, PaddingParams, PaddingStrategy, Tokenizer, TruncationDirection, TruncationParams,
    TruncationStrategy,
};

use crate::added_token::PyAddedToken;
use crate::component::{json_of, parse_json, to_python};
use crate::counts::PyWordCounts;
use crate::encoding::{padding_direction, truncation_direction, PyEncoding};
use crate::errors::{guard, tk_err, value_err};
use crate::numpy;
use crate::pool::{run_interruptible, run_one, run_released as run};
use crate::text;
use crate::train;

/// A tokenizer: the pipeline (normalizer → pre-tokenizer → model → post-processor, and the
/// decoder), the added vocabulary, padding and truncation.
///
/// The library tokenizer is behind an `Arc`: encode calls take a clone and release both the GIL
/// and the Python borrow, so setters called meanwhile from other threads never fail with
/// "already borrowed" (they copy-on-write instead).
#[pyclass(module = "tokenkit", name = "Tokenizer", subclass)]
pub struct PyTokenizer {
    pub tok: Arc<Tokenizer>,
}

impl PyTokenizer {
    fn new_from(tok: Tokenizer) -> Self {
        Self { tok: Arc::new(tok) }
    }
    fn tok_mut(&mut self) -> &mut Tokenizer {
        Arc::make_mut(&mut self.tok)
    }
}

fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// A str sequence (not pre-tokenized).
fn text_sequence<'a>(o: &'a Bound<'_, PyAny>) -> PyResult<InputSequence<'a>> {
    match o.downcast::<PyString>() {
        Ok(s) => Ok(InputSequence::Raw(text::utf8(s)?)),
        Err(_) => Err(PyTypeError::new_err(format!("TextInputSequence must be str, got {}", type_name(o)))),
    }
}

/// A pre-tokenized sequence: a list or tuple of str.
fn pretokenized_sequence(o: &Bound<'_, PyAny>) -> PyResult<InputSequence<'static>> {
    if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
        if let Ok(words) = o.extract::<Vec<String>>() {
            return Ok(InputSequence::PreTokenized(words.into_iter().map(Cow::Owned).collect()));
        }
    }
    Err(PyTypeError::new_err(format!("PreTokenizedInputSequence must be Union[List[str], Tuple[str]], got {}", type_name(o))))
}

fn sequence<'a>(o: &'a Bound<'_, PyAny>, is_pretokenized: bool) -> PyResult<InputSequence<'a>> {
    if is_pretokenized {
        pretokenized_sequence(o)
    } else {
        text_sequence(o)
    }
}

/// A sequence that owns its text (for text read from an object that is not held).
fn owned(s: InputSequence<'_>) -> InputSequence<'static> {
    match s {
        InputSequence::Raw(t) => InputSequence::Raw(Cow::Owned(t.into_owned())),
        InputSequence::PreTokenized(words) => InputSequence::PreTokenized(words.into_iter().map(|w| Cow::Owned(w.into_owned())).collect()),
    }
}

/// One item of `encode_batch`: a sequence, or a pair as a 2-tuple/list. A str item is
/// borrowed (the caller holds it); the two sides of a pair are copied, since another thread
/// could change a list while the GIL is released.
fn batch_item<'a>(o: &'a Bound<'_, PyAny>, is_pretokenized: bool) -> PyResult<EncodeInput<'a>> {
    if let Ok(s) = sequence(o, is_pretokenized) {
        return Ok(EncodeInput::Single(s));
    }
    if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
        if let Ok(n) = o.len() {
            if n == 2 {
                let (a, b) = (o.get_item(0)?, o.get_item(1)?);
                if let (Ok(a), Ok(b)) = (sequence(&a, is_pretokenized), sequence(&b, is_pretokenized)) {
                    return Ok(EncodeInput::Dual(owned(a), owned(b)));
                }
            }
        }
    }
    Err(PyTypeError::new_err(if is_pretokenized {
        "PreTokenizedEncodeInput must be Union[PreTokenizedInputSequence, Tuple[PreTokenizedInputSequence, PreTokenizedInputSequence]]"
    } else {
        "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]"
    }))
}

fn batch_items<'py>(input: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if input.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("encode_batch expects a list of inputs, got a str"));
    }
    input.try_iter()?.collect()
}

/// The inputs of `encode_batch`, borrowing the text of `items` (the batch's items, held for
/// the call: the batch list itself may change while the GIL is released).
fn batch_inputs<'a>(items: &'a [Bound<'_, PyAny>], is_pretokenized: bool) -> PyResult<Vec<EncodeInput<'a>>> {
    items.iter().map(|item| batch_item(item, is_pretokenized)).collect()
}

/// Tokens given to add_tokens / add_special_tokens: str or AddedToken.
fn added_tokens(tokens: &Bound<'_, PyAny>, special: bool) -> PyResult<Vec<AddedToken>> {
    if tokens.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("expected a list of str or AddedToken, got a str"));
    }
    tokens
        .try_iter()?
        .map(|item| {
            let item = item?;
            if let Ok(s) = item.downcast::<PyString>() {
                Ok(AddedToken::from(s.to_cow()?.into_owned(), special))
            } else if let Ok(t) = item.extract::<PyRef<PyAddedToken>>() {
                let mut t = t.clone();
                if special {
                    t.special = true;
                }
                Ok(t.get_token())
            } else {
                Err(PyTypeError::new_err(format!("expected str or AddedToken, got {}", type_name(&item))))
            }
        })
        .collect()
}

fn ids_list(o: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    o.extract::<Vec<u32>>().map_err(|_| PyTypeError::new_err(format!("expected a list of int ids, got {}", type_name(o))))
}

fn encodings_to_py(py: Python<'_>, encs: Vec<Encoding>) -> PyResult<Bound<'_, PyList>> {
    PyList::new(py, PyEncoding::batch(encs))
}

#[pymethods]
impl PyTokenizer {
    /// A tokenizer around `model` (a `tokenkit.models` model).
    #[new]
    fn py_new(model: &Bound<'_, PyAny>) -> PyResult<Self> {
        let m: ModelWrapper = parse_json("model", &json_of(model, "model")?)?;
        Ok(Self::new_from(Tokenizer::new(m)))
    }

    /// Loads a tokenizer file: tokenizer.json (also BERT vocab.txt, GPT-2 vocab.json+merges.txt).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        run(py, || tokenkit::load(&path)).map(Self::new_from)
    }

    /// Parses tokenizer.json content.
    #[staticmethod]
    fn from_str(py: Python<'_>, json: &str) -> PyResult<Self> {
        run(py, || Tokenizer::from_json(json)).map(Self::new_from)
    }

    /// Parses tokenizer.json content given as bytes.
    #[staticmethod]
    fn from_buffer(py: Python<'_>, buffer: &Bound<'_, PyBytes>) -> PyResult<Self> {
        let s =
            std::str::from_utf8(buffer.as_bytes()).map_err(|e| PyException::new_err(format!("tokenizer.json is not valid UTF-8: {e}")))?;
        Self::from_str(py, s)
    }

    /// Downloads `tokenizer.json` of a Hub repository (needs `huggingface_hub`) and loads it.
    #[staticmethod]
    #[pyo3(signature = (identifier, revision = "main", token = None))]
    fn from_pretrained(py: Python<'_>, identifier: &str, revision: &str, token: Option<&str>) -> PyResult<Self> {
        let hub = py.import("huggingface_hub").map_err(|_| PyException::new_err("from_pretrained needs the `huggingface_hub` package"))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("revision", revision)?;
        kwargs.set_item("token", token)?;
        let path: std::path::PathBuf = hub.getattr("hf_hub_download")?.call((identifier, "tokenizer.json"), Some(&kwargs))?.extract()?;
        Self::from_file(py, path)
    }

    /// The tokenizer.json content.
    #[pyo3(signature = (pretty = false))]
    fn to_str(&self, pretty: bool) -> PyResult<String> {
        guard(|| self.tok.to_json(pretty))
    }

    /// Writes tokenizer.json to `path`.
    #[pyo3(signature = (path, pretty = true))]
    fn save(&self, path: std::path::PathBuf, pretty: bool) -> PyResult<()> {
        guard(|| self.tok.save(&path, pretty))
    }

    /// The pickled state: the tokenizer.json content (its built tables stored in the table
    /// cache, so that unpickling in a worker process reads them instead of building them) and
    /// whether special tokens are encoded as text (not in tokenizer.json).
    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, bool)> {
        let json = guard(|| self.tok.to_json_cached())?;
        Ok((PyBytes::new(py, json.as_bytes()), self.tok.get_added_vocabulary().get_encode_special_tokens()))
    }

    fn __setstate__(&mut self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        // A tuple (json, encode_special_tokens); a pickle of an earlier version is the json alone.
        let (json, enc_special) = match state.downcast::<PyTuple>() {
            Ok(t) if t.len() == 2 => (t.get_item(0)?, Some(t.get_item(1)?.extract::<bool>()?)),
            _ => (state.clone(), None),
        };
        let json: String = match json.downcast::<PyBytes>() {
            Ok(b) => String::from_utf8(b.as_bytes().to_vec()).map_err(|e| value_err(e.to_string()))?,
            Err(_) => json.extract()?,
        };
        let mut t = run(py, || Tokenizer::from_json(&json))?;
        t.set_encode_special_tokens(enc_special.unwrap_or(false));
        self.tok = Arc::new(t);
        Ok(())
    }

    fn __getnewargs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let model = py.import("tokenkit.models")?.getattr("WordLevel")?.call0()?;
        PyTuple::new(py, [model])
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!("Tokenizer.from_str({:.200}...)", self.to_str(false)?))
    }

    /// Encodes one sequence (or a pair). Offsets are character offsets.
    #[pyo3(signature = (sequence, pair = None, is_pretokenized = false, add_special_tokens = true))]
    fn encode(
        slf: &Bound<'_, Self>,
        sequence: &Bound<'_, PyAny>,
        pair: Option<&Bound<'_, PyAny>>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let a = self::sequence(sequence, is_pretokenized)?;
        let input = match pair {
            Some(p) if !p.is_none() => EncodeInput::Dual(a, self::sequence(p, is_pretokenized)?),
            _ => EncodeInput::Single(a),
        };
        let (py, tok) = (slf.py(), slf.borrow().tok.clone());
        run_one(py, move || tok.encode_char_offsets(input, add_special_tokens)).map(Into::into)
    }

    /// Encodes many inputs in parallel (GIL released). Offsets are character offsets.
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true))]
    fn encode_batch<'py>(
        slf: &Bound<'py, Self>,
        input: &Bound<'py, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let items = batch_items(input)?;
        let inputs = batch_inputs(&items, is_pretokenized)?;
        let (py, tok) = (slf.py(), slf.borrow().tok.clone());
        let encs = run_interruptible(py, move || tok.encode_batch_char_offsets(inputs, add_special_tokens))?;
        encodings_to_py(py, encs)
    }

    /// Like `encode_batch`, but offsets are UTF-8 byte offsets (as HF's `encode_batch_fast`).
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true))]
    fn encode_batch_fast<'py>(
        slf: &Bound<'py, Self>,
        input: &Bound<'py, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let items = batch_items(input)?;
        let inputs = batch_inputs(&items, is_pretokenized)?;
        let (py, tok) = (slf.py(), slf.borrow().tok.clone());
        let encs = run_interruptible(py, move || tok.encode_batch(inputs, add_special_tokens))?;
        encodings_to_py(py, encs)
    }

    /// Encodes one sequence (or a pair) and returns its ids as a 1-D `numpy.uint32` array.
    #[pyo3(signature = (sequence, pair = None, is_pretokenized = false, add_special_tokens = true))]
    fn encode_to_numpy(
        slf: &Bound<'_, Self>,
        sequence: &Bound<'_, PyAny>,
        pair: Option<&Bound<'_, PyAny>>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<PyObject> {
        let enc = Self::encode(slf, sequence, pair, is_pretokenized, add_special_tokens)?;
        let ids = enc.enc().get_ids();
        numpy::u32_array(slf.py(), ids, &[ids.len()])
    }

    /// Encodes many inputs in parallel (GIL released) and returns `(ids, attention_mask)`, two
    /// `numpy.uint32` arrays of shape `(len(input), longest)`, with no Python object per token.
    ///
    /// With padding enabled the rows are padded as `encode_batch` pads them; otherwise short rows
    /// are filled with `pad_id` (default 0) and a 0 in the attention mask.
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true, pad_id = None))]
    fn encode_batch_to_numpy(
        slf: &Bound<'_, Self>,
        input: &Bound<'_, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
        pad_id: Option<u32>,
    ) -> PyResult<(PyObject, PyObject)> {
        let items = batch_items(input)?;
        let inputs = batch_inputs(&items, is_pretokenized)?;
        let (py, tok) = (slf.py(), slf.borrow().tok.clone());
        let fill = pad_id.or_else(|| tok.get_padding().map(|p| p.pad_id)).unwrap_or(0);
        let ((ids, shape), (mask, _)) = run_interruptible(py, move || {
            let encs = tok.encode_batch(inputs, add_special_tokens)?;
            Ok((
                numpy::rectangular(encs.iter().map(Encoding::get_ids), fill),
                numpy::rectangular(encs.iter().map(Encoding::get_attention_mask), 0),
            ))
        })?;
        Ok((numpy::u32_array(py, &ids, &shape)?, numpy::u32_array(py, &mask, &shape)?))
    }

    /// Encodes many inputs in parallel (GIL released) and returns their ids as a
    /// `pyarrow.ListArray` of uint32 (no Python object per token), for dataframe engines.
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true))]
    fn encode_batch_to_arrow<'py>(
        slf: &Bound<'py, Self>,
        input: &Bound<'py, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let items = batch_items(input)?;
        let inputs = batch_inputs(&items, is_pretokenized)?;
        let (py, tok) = (slf.py(), slf.borrow().tok.clone());
        let rows = run_interruptible(py, move || {
            Ok(tok.encode_batch(inputs, add_special_tokens)?.iter().map(|e| e.get_ids().to_vec()).collect::<Vec<_>>())
        })?;
        crate::data::list_array(py, &rows)
    }

    /// Trains the model on text files (one sequence per line) with `trainer` (a
    /// `tokenkit.trainers` trainer; by default the model kind's default trainer). The
    /// normalizer and pre-tokenizer are applied; the model is replaced by the trained one.
    #[pyo3(signature = (files, trainer = None))]
    fn train(slf: &Bound<'_, Self>, files: Vec<std::path::PathBuf>, trainer: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mut tok = (*slf.borrow().tok).clone();
        let trainer = train::trainer_from_python(trainer, tok.get_model())?;
        let input = tokenkit::trainers::TrainInput::Files(files);
        run(slf.py(), || tok.train_with_progress(&trainer, &input, &*train::progress(&trainer)).map(|_| ()))?;
        slf.borrow_mut().tok = Arc::new(tok);
        Ok(())
    }

    /// Trains the model on the strings of `iterator` (strings or batches of strings; read as
    /// they come, so it may be larger than memory). `length` is accepted for compatibility.
    #[pyo3(signature = (iterator, trainer = None, length = None))]
    fn train_from_iterator(
        slf: &Bound<'_, Self>,
        iterator: &Bound<'_, PyAny>,
        trainer: Option<&Bound<'_, PyAny>>,
        length: Option<usize>,
    ) -> PyResult<()> {
        let _ = length;
        let mut tok = (*slf.borrow().tok).clone();
        let trainer = train::trainer_from_python(trainer, tok.get_model())?;
        let iter = iterator.try_iter()?.unbind();
        let error = std::sync::Mutex::new(None);
        let progress = train::progress(&trainer);
        let result = run(slf.py(), || {
            tok.train_from_iterator_with_progress(&trainer, train::PySequences::new(iter, &error), &*progress).map(|_| ())
        });
        if let Some(e) = error.into_inner().ok().flatten() {
            return Err(e);
        }
        result?;
        slf.borrow_mut().tok = Arc::new(tok);
        Ok(())
    }

    /// Counts the words of `iterator` (strings, or batches of strings) as training would see
    /// them: normalized, then pre-tokenized. The counts of several batches (other processes,
    /// Ray blocks, Spark partitions) add up with `+`; `train_from_counts` trains on them.
    fn count_words(&self, py: Python<'_>, iterator: &Bound<'_, PyAny>) -> PyResult<PyWordCounts> {
        let tok = self.tok.clone();
        let progress = tokenkit::trainers::NoProgress;
        let texts: Option<Vec<String>> = iterator.downcast::<PyList>().ok().and_then(|list| list.extract().ok());
        let (counts, sequences) = if let Some(texts) = texts {
            run(py, || tok.count_words_from_iterator(texts.iter(), &progress))?
        } else {
            let iter = iterator.try_iter()?.unbind();
            let error = std::sync::Mutex::new(None);
            let result = run(py, || tok.count_words_from_iterator(train::PySequences::new(iter, &error), &progress));
            if let Some(e) = error.into_inner().ok().flatten() {
                return Err(e);
            }
            result?
        };
        let info = guard(|| tok.word_count_info(Vec::new(), sequences))?;
        Ok(PyWordCounts { counts, info: Some(info) })
    }

    /// Trains the model on word counts (`WordCounts`, a dict or `(word, count)` pairs) with
    /// `trainer`, as `train_from_iterator` would on the text they were counted from. Counts that
    /// record how they were cut must have been cut by this tokenizer's normalizer and
    /// pre-tokenizer.
    #[pyo3(signature = (counts, trainer = None))]
    fn train_from_counts(slf: &Bound<'_, Self>, counts: &Bound<'_, PyAny>, trainer: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        // A copy: training runs without the GIL, and frees its counts as soon as it can.
        let counts = match counts.extract::<PyRef<'_, PyWordCounts>>() {
            Ok(c) => c.clone(),
            Err(_) => PyWordCounts::from_pairs(counts)?,
        };
        let mut tok = (*slf.borrow().tok).clone();
        if let Some(info) = &counts.info {
            guard(|| tok.check_word_cutting(info))?;
        }
        let trainer = train::trainer_from_python(trainer, tok.get_model())?;
        let progress = train::progress(&trainer);
        let mut report = tokenkit::trainers::TrainReport {
            input: tokenkit::trainers::InputStats { sequences: counts.info.as_ref().map_or(0, |i| i.sequences), ..Default::default() },
            ..Default::default()
        };
        let words = counts.counts;
        run(slf.py(), || tok.train_from_word_counts(&trainer, words, &*progress, &mut report))?;
        slf.borrow_mut().tok = Arc::new(tok);
        Ok(())
    }

    /// Decodes ids to text.
    #[pyo3(signature = (ids, skip_special_tokens = true))]
    fn decode(slf: &Bound<'_, Self>, ids: &Bound<'_, PyAny>, skip_special_tokens: bool) -> PyResult<String> {
        let ids = ids_list(ids)?;
        let (py, tok) = (slf.py(), slf.borrow().tok.clone());
        run_one(py, move || tok.decode(&ids, skip_special_tokens))
    }

    /// Decodes many id lists in parallel.
    #[pyo3(signature = (sequences, skip_special_tokens = true))]
    fn decode_batch(slf: &Bound<'_, Self>, sequences: &Bound<'_, PyAny>, skip_special_tokens: bool) -> PyResult<Vec<String>> {
        let seqs = sequences.try_iter()?.map(|s| ids_list(&s?)).collect::<PyResult<Vec<_>>>()?;
        let (py, tok) = (slf.py(), slf.borrow().tok.clone());
        run_interruptible(py, move || {
            let refs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
            tok.decode_batch(&refs, skip_special_tokens)
        })
    }

    /// Truncation, post-processing and padding of an encoding (and its pair), as `encode` does.
    #[pyo3(signature = (encoding, pair = None, add_special_tokens = true))]
    fn post_process(
        slf: &Bound<'_, Self>,
        encoding: PyRef<PyEncoding>,
        pair: Option<PyRef<PyEncoding>>,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let (e, p) = (encoding.enc().clone(), pair.map(|p| p.enc().clone()));
        let (py, tok) = (slf.py(), slf.borrow().tok.clone());
        run_one(py, move || tok.post_process(e, p, add_special_tokens)).map(Into::into)
    }

    /// How many special tokens the post-processor adds to a single sequence or a pair.
    fn num_special_tokens_to_add(&self, is_pair: bool) -> PyResult<usize> {
        guard(|| Ok(self.tok.get_n_added_tokens(is_pair)))
    }

    /// The id of `token` (added tokens first), or None.
    fn token_to_id(&self, token: &str) -> PyResult<Option<u32>> {
        guard(|| Ok(self.tok.token_to_id(token)))
    }

    /// The token of `id`, or None.
    fn id_to_token(&self, id: u32) -> PyResult<Option<String>> {
        guard(|| Ok(self.tok.id_to_token(id).map(str::to_owned)))
    }

    /// token → id.
    #[pyo3(signature = (with_added_tokens = true))]
    fn get_vocab(&self, with_added_tokens: bool) -> PyResult<HashMap<String, u32>> {
        guard(|| Ok(self.tok.get_vocab(with_added_tokens)))
    }

    /// The vocabulary size.
    #[pyo3(signature = (with_added_tokens = true))]
    fn get_vocab_size(&self, with_added_tokens: bool) -> PyResult<usize> {
        guard(|| Ok(self.tok.get_vocab_size(with_added_tokens)))
    }

    /// id → AddedToken of the added vocabulary.
    fn get_added_tokens_decoder(&self) -> HashMap<u32, PyAddedToken> {
        self.tok.get_added_vocabulary().get_added_tokens_decoder().iter().map(|(id, t)| (*id, PyAddedToken::from_token(t))).collect()
    }

    /// Adds tokens (str or AddedToken); returns how many were new.
    fn add_tokens(&mut self, tokens: &Bound<'_, PyAny>) -> PyResult<usize> {
        let tokens = added_tokens(tokens, false)?;
        let tok = self.tok_mut();
        guard(|| tok.add_tokens(&tokens))
    }

    /// Adds special tokens (str or AddedToken); returns how many were new.
    fn add_special_tokens(&mut self, tokens: &Bound<'_, PyAny>) -> PyResult<usize> {
        let tokens = added_tokens(tokens, true)?;
        let tok = self.tok_mut();
        guard(|| tok.add_tokens(&tokens))
    }

    /// Whether special tokens in the input are encoded as plain text.
    /// The encode plan this tokenizer runs: "general", "byte-level", "sentencepiece" or
    /// "bert" (`TOKENKIT_PLAN=general` in the environment forces the general path).
    #[getter]
    fn plan_name(&self) -> &'static str {
        self.tok.plan_name()
    }
    #[getter]
    fn get_encode_special_tokens(&self) -> bool {
        self.tok.get_added_vocabulary().get_encode_special_tokens()
    }
    #[setter]
    fn set_encode_special_tokens(&mut self, value: bool) {
        self.tok_mut().set_encode_special_tokens(value);
    }

    /// Pads every encoding (to the longest of a batch, or to `length`).
    #[pyo3(signature = (direction = "right", pad_id = 0, pad_type_id = 0, pad_token = "[PAD]", length = None, pad_to_multiple_of = None))]
    fn enable_padding(
        &mut self,
        direction: &str,
        pad_id: u32,
        pad_type_id: u32,
        pad_token: &str,
        length: Option<usize>,
        pad_to_multiple_of: Option<usize>,
    ) -> PyResult<()> {
        let params = PaddingParams {
            strategy: length.map_or(PaddingStrategy::BatchLongest, PaddingStrategy::Fixed),
            direction: padding_direction(direction)?,
            pad_to_multiple_of,
            pad_id,
            pad_type_id,
            pad_token: pad_token.to_owned(),
        };
        let tok = self.tok_mut();
        guard(|| tok.with_padding(Some(params)).map(|_| ()))
    }

    /// Disables padding.
    fn no_padding(&mut self) -> PyResult<()> {
        let tok = self.tok_mut();
        guard(|| tok.with_padding(None).map(|_| ()))
    }

    /// The padding settings as a dict, or None.
    #[getter]
    fn padding<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(p) = self.tok.get_padding() else { return Ok(None) };
        let d = PyDict::new(py);
        d.set_item(
            "length",
            match p.strategy {
                PaddingStrategy::Fixed(n) => Some(n),
                PaddingStrategy::BatchLongest => None,
            },
        )?;
        d.set_item("pad_to_multiple_of", p.pad_to_multiple_of)?;
        d.set_item("pad_id", p.pad_id)?;
        d.set_item("pad_token", &p.pad_token)?;
        d.set_item("pad_type_id", p.pad_type_id)?;
        d.set_item("direction", if p.direction == tokenkit::PaddingDirection::Left { "left" } else { "right" })?;
        Ok(Some(d))
    }

    /// Truncates every encoding to `max_length` tokens (special tokens included).
    #[pyo3(signature = (max_length, stride = 0, strategy = "longest_first", direction = "right"))]
    fn enable_truncation(&mut self, max_length: usize, stride: usize, strategy: &str, direction: &str) -> PyResult<()> {
        let strategy = match strategy {
            "longest_first" => TruncationStrategy::LongestFirst,
            "only_first" => TruncationStrategy::OnlyFirst,
            "only_second" => TruncationStrategy::OnlySecond,
            other => {
                return Err(value_err(format!("Unknown `strategy`: `{other}`. Use one of `longest_first`, `only_first`, or `only_second`")))
            }
        };
        let direction = truncation_direction(direction)?;
        let params = TruncationParams { direction, max_length, strategy, stride };
        let tok = self.tok_mut();
        guard(|| tok.with_truncation(Some(params)).map(|_| ()))
    }

    /// Disables truncation.
    fn no_truncation(&mut self) -> PyResult<()> {
        let tok = self.tok_mut();
        guard(|| tok.with_truncation(None).map(|_| ()))
    }

    /// The truncation settings as a dict, or None.
    #[getter]
    fn truncation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(t) = self.tok.get_truncation() else { return Ok(None) };
        let d = PyDict::new(py);
        d.set_item("max_length", t.max_length)?;
        d.set_item("stride", t.stride)?;
        d.set_item(
            "strategy",
            match t.strategy {
                TruncationStrategy::LongestFirst => "longest_first",
                TruncationStrategy::OnlyFirst => "only_first",
                TruncationStrategy::OnlySecond => "only_second",
            },
        )?;
        d.set_item("direction", if t.direction == TruncationDirection::Left { "left" } else { "right" })?;
        Ok(Some(d))
    }

    /// The normalizer (a `tokenkit.normalizers` object, a copy), or None.
    #[getter]
    fn get_normalizer<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.tok.get_normalizer().map(|n| to_python(py, "normalizers", n)).transpose()
    }
    #[setter]
    fn set_normalizer(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let n = match value {
            Some(v) if !v.is_none() => Some(parse_json("normalizer", &json_of(v, "normalizer")?)?),
            _ => None,
        };
        self.tok_mut().with_normalizer(n).map_err(tk_err)?;
        Ok(())
    }

    /// The pre-tokenizer (a copy), or None.
    #[getter]
    fn get_pre_tokenizer<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.tok.get_pre_tokenizer().map(|n| to_python(py, "pre_tokenizers", n)).transpose()
    }
    #[setter]
    fn set_pre_tokenizer(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let n = match value {
            Some(v) if !v.is_none() => Some(parse_json("pre_tokenizer", &json_of(v, "pre_tokenizer")?)?),
            _ => None,
        };
        self.tok_mut().with_pre_tokenizer(n);
        Ok(())
    }

    /// The model (a copy).
    #[getter]
    fn get_model<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, "models", self.tok.get_model())
    }
    #[setter]
    fn set_model(&mut self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let m: ModelWrapper = parse_json("model", &json_of(value, "model")?)?;
        self.tok_mut().with_model(m);
        Ok(())
    }

    /// The post-processor (a copy), or None.
    #[getter]
    fn get_post_processor<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.tok.get_post_processor().map(|n| to_python(py, "processors", n)).transpose()
    }
    #[setter]
    fn set_post_processor(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let n = match value {
            Some(v) if !v.is_none() => Some(parse_json("post_processor", &json_of(v, "post-processor")?)?),
            _ => None,
        };
        self.tok_mut().with_post_processor(n);
        Ok(())
    }

    /// The decoder (a copy), or None.
    #[getter]
    fn get_decoder<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.tok.get_decoder().map(|n| to_python(py, "decoders", n)).transpose()
    }
    #[setter]
    fn set_decoder(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let n = match value {
            Some(v) if !v.is_none() => Some(parse_json("decoder", &json_of(v, "decoder")?)?),
            _ => None,
        };
        self.tok_mut().with_decoder(n);
        Ok(())
    }
}
