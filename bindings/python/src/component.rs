//! Pipeline components built from their tokenizer.json objects.
//!
//! The Python classes in `tokenkit.normalizers`, `.pre_tokenizers`, `.models`, `.processors`
//! and `.decoders` hold a component's JSON object; [`PyComponent`] is the compiled form they
//! use for `normalize_str`, `pre_tokenize_str`, `decode`, `tokenize`, ..., and the `from_json`
//! helpers turn the JSON into the library's `*Wrapper` enums when a component is attached to a
//! tokenizer.

use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use tokenkit::decoders::DecoderWrapper;
use tokenkit::models::ModelWrapper;
use tokenkit::normalizers::NormalizerWrapper;
use tokenkit::pre_tokenizers::PreTokenizerWrapper;
use tokenkit::processors::{PostProcessorWrapper, SpecialToken, Template, TemplateProcessing, Tokens};
use tokenkit::tokenizer::OffsetReferential;
use tokenkit::{Decoder, Model, NormalizedString, Normalizer, OffsetType, PostProcessor, PreTokenizedString, PreTokenizer};

use crate::encoding::PyEncoding;
use crate::errors::guard;

/// Parses a component's JSON; the error names the component kind and the library's reason
/// (an unknown `type` means the component is not implemented).
pub fn parse_json<T: DeserializeOwned>(kind: &str, json: &str) -> PyResult<T> {
    serde_json::from_str(json).map_err(|e| PyException::new_err(format!("cannot build the {kind} from {json:.200}: {e}")))
}

/// The JSON object of a Python component: its `_tk_json()` method.
pub fn json_of(obj: &Bound<'_, PyAny>, kind: &str) -> PyResult<String> {
    let m = obj.getattr("_tk_json").map_err(|_| {
        PyTypeError::new_err(format!(
            "expected a tokenkit {kind}, got {}",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
        ))
    })?;
    m.call0()?.extract()
}

/// Builds a Python component object of `module` (e.g. "normalizers") from `value`.
pub fn to_python<'py, T: serde::Serialize>(py: Python<'py>, module: &str, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_string(value).map_err(|e| PyException::new_err(e.to_string()))?;
    py.import(format!("tokenkit.{module}"))?.getattr("_from_json")?.call1((json,))
}

#[allow(clippy::large_enum_variant)] // one per component object; boxing buys nothing
enum Compiled {
    Normalizer(NormalizerWrapper),
    PreTokenizer(PreTokenizerWrapper),
    Model(ModelWrapper),
    Processor(PostProcessorWrapper),
    Decoder(DecoderWrapper),
}

/// `(id, value, (start, end))` of a model token (byte offsets into the piece).
type ModelToken = (u32, String, (usize, usize));

/// A component compiled from its JSON (internal; used by the Python component classes).
#[pyclass(module = "tokenkit._tokenkit", name = "Component", frozen)]
pub struct PyComponent {
    inner: Compiled,
}

impl PyComponent {
    fn wrong(&self, what: &str) -> PyErr {
        PyTypeError::new_err(format!("this component has no `{what}`"))
    }
}

#[pymethods]
impl PyComponent {
    /// Compiles `json`; `kind` is one of normalizer, pre_tokenizer, model, processor, decoder.
    #[new]
    fn new(kind: &str, json: &str) -> PyResult<Self> {
        let inner = match kind {
            "normalizer" => Compiled::Normalizer(parse_json(kind, json)?),
            "pre_tokenizer" => Compiled::PreTokenizer(parse_json(kind, json)?),
            "model" => Compiled::Model(parse_json(kind, json)?),
            "processor" => Compiled::Processor(parse_json(kind, json)?),
            "decoder" => Compiled::Decoder(parse_json(kind, json)?),
            other => return Err(PyTypeError::new_err(format!("unknown component kind {other:?}"))),
        };
        Ok(Self { inner })
    }

    /// The JSON the library writes for this component.
    fn to_json(&self) -> PyResult<String> {
        let r = match &self.inner {
            Compiled::Normalizer(x) => serde_json::to_string(x),
            Compiled::PreTokenizer(x) => serde_json::to_string(x),
            Compiled::Model(x) => serde_json::to_string(x),
            Compiled::Processor(x) => serde_json::to_string(x),
            Compiled::Decoder(x) => serde_json::to_string(x),
        };
        r.map_err(|e| PyException::new_err(e.to_string()))
    }

    /// Normalizer: the normalized form of `sequence`.
    fn normalize_str(&self, py: Python<'_>, sequence: &str) -> PyResult<String> {
        let Compiled::Normalizer(n) = &self.inner else { return Err(self.wrong("normalize_str")) };
        py.allow_threads(|| {
            guard(|| {
                let mut s = NormalizedString::from(sequence);
                n.normalize(&mut s)?;
                Ok(s.get().to_owned())
            })
        })
    }

    /// Pre-tokenizer: the pieces of `sequence` with their character offsets.
    fn pre_tokenize_str(&self, py: Python<'_>, sequence: &str) -> PyResult<Vec<(String, (usize, usize))>> {
        let Compiled::PreTokenizer(p) = &self.inner else { return Err(self.wrong("pre_tokenize_str")) };
        py.allow_threads(|| {
            guard(|| {
                let mut s = PreTokenizedString::from(sequence);
                p.pre_tokenize(&mut s)?;
                Ok(s.get_splits(OffsetReferential::Original, OffsetType::Char).into_iter().map(|(s, o, _)| (s.to_owned(), o)).collect())
            })
        })
    }

    /// Decoder: the text of `tokens`.
    fn decode(&self, py: Python<'_>, tokens: Vec<String>) -> PyResult<String> {
        let Compiled::Decoder(d) = &self.inner else { return Err(self.wrong("decode")) };
        py.allow_threads(|| guard(|| d.decode(tokens)))
    }

    /// Model: `(id, value, (start, end))` of each token of `sequence` (byte offsets).
    fn tokenize(&self, py: Python<'_>, sequence: &str) -> PyResult<Vec<ModelToken>> {
        let Compiled::Model(m) = &self.inner else { return Err(self.wrong("tokenize")) };
        py.allow_threads(|| guard(|| Ok(m.tokenize(sequence)?.into_iter().map(|t| (t.id, t.value, t.offsets)).collect())))
    }

    /// Model: the id of `token`.
    fn token_to_id(&self, token: &str) -> PyResult<Option<u32>> {
        let Compiled::Model(m) = &self.inner else { return Err(self.wrong("token_to_id")) };
        guard(|| Ok(m.token_to_id(token)))
    }

    /// Model: the token of `id`.
    fn id_to_token(&self, id: u32) -> PyResult<Option<String>> {
        let Compiled::Model(m) = &self.inner else { return Err(self.wrong("id_to_token")) };
        guard(|| Ok(m.id_to_token(id).map(str::to_owned)))
    }

    /// Model: the vocabulary size.
    fn get_vocab_size(&self) -> PyResult<usize> {
        let Compiled::Model(m) = &self.inner else { return Err(self.wrong("get_vocab_size")) };
        guard(|| Ok(m.get_vocab_size()))
    }

    /// Post-processor: how many tokens it adds.
    fn num_special_tokens_to_add(&self, is_pair: bool) -> PyResult<usize> {
        let Compiled::Processor(p) = &self.inner else { return Err(self.wrong("num_special_tokens_to_add")) };
        guard(|| Ok(p.added_tokens(is_pair)))
    }

    /// Post-processor: applies it to an encoding (and its pair).
    #[pyo3(signature = (encoding, pair = None, add_special_tokens = true))]
    fn process(&self, encoding: PyRef<PyEncoding>, pair: Option<PyRef<PyEncoding>>, add_special_tokens: bool) -> PyResult<PyEncoding> {
        let Compiled::Processor(p) = &self.inner else { return Err(self.wrong("process")) };
        let (e, pr) = (encoding.enc().clone(), pair.map(|p| p.enc().clone()));
        guard(|| p.process(e, pr, add_special_tokens)).map(Into::into)
    }
}

/// The JSON of a `TemplateProcessing` from template strings (or lists of pieces) and the
/// special tokens as `{"id","ids","tokens"}` objects; the library parses and checks them.
#[pyfunction]
#[pyo3(signature = (single, pair, special_tokens_json))]
pub fn template_processing_json(single: &Bound<'_, PyAny>, pair: &Bound<'_, PyAny>, special_tokens_json: &str) -> PyResult<String> {
    fn template(t: &Bound<'_, PyAny>) -> PyResult<Option<Template>> {
        if t.is_none() {
            return Ok(None);
        }
        let r = if let Ok(s) = t.extract::<String>() {
            Template::try_from(s)
        } else if let Ok(v) = t.extract::<Vec<String>>() {
            Template::try_from(v)
        } else {
            return Err(PyTypeError::new_err("a template must be a str or a list of str"));
        };
        guard(|| r).map(Some)
    }
    let specials: Vec<SpecialToken> = parse_json("special tokens", special_tokens_json)?;
    let mut b = TemplateProcessing::builder().special_tokens(Tokens::from(specials));
    if let Some(s) = template(single)? {
        b = b.single(s);
    }
    if let Some(p) = template(pair)? {
        b = b.pair(p);
    }
    let t = guard(|| b.build())?;
    serde_json::to_string(&PostProcessorWrapper::Template(t)).map_err(|e| PyException::new_err(e.to_string()))
}

/// The 256 characters ByteLevel maps bytes to.
#[pyfunction]
pub fn byte_level_alphabet() -> Vec<String> {
    let mut v: Vec<String> = (0u8..=255).map(|b| tokenkit::utils::byte_level::BYTES_CHAR[b as usize].to_string()).collect();
    v.sort();
    v
}
