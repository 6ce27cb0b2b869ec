//! `tokenkit.data`: dataset jobs (`tokenize_files`, the library's `tokenkit::data`) and ids
//! as `pyarrow` arrays without a Python object per token.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyString};
use tokenkit::data::{self, DocEncoder, OutputFormat, SeparatorChoice, TextDocs, TokenizeOptions};

use crate::errors::value_err;
use crate::pool::run_interruptible as run;
use crate::tiktoken::PyTiktokenCore;
use crate::tokenizer::PyTokenizer;

/// A `pyarrow.ListArray` of `list<uint32>` holding `rows`: the ids and offsets are written once
/// into two `bytearray`s that pyarrow wraps without copying.
pub fn list_array<'py>(py: Python<'py>, rows: &[Vec<u32>]) -> PyResult<Bound<'py, PyAny>> {
    let total: usize = rows.iter().map(Vec::len).sum();
    let offsets: Vec<i64> = std::iter::once(0)
        .chain(rows.iter().scan(0i64, |end, r| {
            *end += r.len() as i64;
            Some(*end)
        }))
        .collect();
    let values = PyByteArray::new_with(py, total * 4, |buf| {
        for (out, id) in buf.chunks_exact_mut(4).zip(rows.iter().flatten()) {
            out.copy_from_slice(&id.to_le_bytes());
        }
        Ok(())
    })?;
    let offsets = PyByteArray::new_with(py, offsets.len() * 8, |buf| {
        for (out, o) in buf.chunks_exact_mut(8).zip(&offsets) {
            out.copy_from_slice(&o.to_le_bytes());
        }
        Ok(())
    })?;
    let pa = py.import("pyarrow")?;
    let none = py.None();
    let values = pa.getattr("Array")?.call_method1(
        "from_buffers",
        (pa.call_method0("uint32")?, total, vec![none.clone_ref(py).into_bound(py), pa.call_method1("py_buffer", (values,))?]),
    )?;
    // A large_list's int64 offsets cannot overflow; cast to the plain list<uint32> people expect
    // when it fits.
    let ty = pa.call_method1("large_list", (pa.call_method0("uint32")?,))?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("children", vec![values])?;
    let array = pa.getattr("Array")?.call_method(
        "from_buffers",
        (ty, rows.len(), vec![none.into_bound(py), pa.call_method1("py_buffer", (offsets,))?]),
        Some(&kwargs),
    )?;
    if total < i32::MAX as usize {
        return array.call_method1("cast", (pa.call_method1("list_", (pa.call_method0("uint32")?,))?,));
    }
    Ok(array)
}

/// Tokenizes files into training shards (see `tokenkit tokenize --help`); returns the summary
/// as a dict.
#[pyfunction]
#[pyo3(signature = (inputs, output, *, tokenizer = None, encoding = None, format = "bin", field = "text", text_docs = "line",
    keep_columns = Vec::new(), separator = None, eos = true, add_special_tokens = true, val_fraction = 0.0, strict = false,
    threads = None, chunk_bytes = None, progress = false, name = None))]
#[allow(clippy::too_many_arguments)]
pub fn tokenize_files<'py>(
    py: Python<'py>,
    inputs: Vec<String>,
    output: PathBuf,
    tokenizer: Option<PyRef<'py, PyTokenizer>>,
    encoding: Option<PyRef<'py, PyTiktokenCore>>,
    format: &str,
    field: &str,
    text_docs: &str,
    keep_columns: Vec<String>,
    separator: Option<String>,
    eos: bool,
    add_special_tokens: bool,
    val_fraction: f64,
    strict: bool,
    threads: Option<usize>,
    chunk_bytes: Option<usize>,
    progress: bool,
    name: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let default_name = encoding.as_ref().map_or("tokenizer".to_owned(), |e| e.encoding().name().to_owned());
    let encoder = doc_encoder(tokenizer, encoding, add_special_tokens)?;
    let name = name.unwrap_or(default_name);
    let mut opts = TokenizeOptions::new(inputs, output, name);
    opts.format = OutputFormat::parse(format).map_err(crate::errors::tk_err)?;
    opts.read.field = field.to_owned();
    opts.read.text_docs = text_docs_of(text_docs)?;
    opts.read.keep = keep_columns;
    opts.separator = match (eos, separator) {
        (false, _) => SeparatorChoice::None,
        (true, Some(t)) => SeparatorChoice::Token(t),
        (true, None) => SeparatorChoice::Default,
    };
    opts.val_fraction = val_fraction;
    opts.strict = strict;
    if let Some(c) = chunk_bytes {
        opts.chunk_bytes = c;
    }
    let summary = run(py, move || {
        let job = || {
            #[allow(unused_mut)]
            let mut bar = progress.then(data::progress_bar::DataProgressBar::new);
            let r = data::tokenize_files(&encoder, &opts, &mut |p| {
                if let Some(b) = bar.as_mut() {
                    b.update(p)
                }
            });
            if let Some(b) = &bar {
                b.finish();
            }
            r
        };
        crate::pool::on_threads(threads, job)
    })?;
    let json = serde_json::to_string(&summary).map_err(|e| value_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (json,))?.downcast_into::<PyDict>().map_err(Into::into)
}

/// A tokenizer as `stats_files` takes it: its name and the tokenizer or the tiktoken encoding.
type NamedEncoder<'py> = (String, Option<PyRef<'py, PyTokenizer>>, Option<PyRef<'py, PyTiktokenCore>>);

/// Measures tokenizers on corpora (see `tokenkit stats --help`); returns one dict per
/// tokenizer, as `tokenkit stats --json` prints them. `encoders` holds `(name, tokenizer,
/// encoding)` with one of the two set.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (corpora, encoders, *, field = "text", text_docs = "line", lang_field = None, add_special_tokens = false,
    threads = None))]
pub fn stats_files<'py>(
    py: Python<'py>,
    corpora: Vec<String>,
    encoders: Vec<NamedEncoder<'py>>,
    field: &str,
    text_docs: &str,
    lang_field: Option<String>,
    add_special_tokens: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut named = Vec::with_capacity(encoders.len());
    for (name, tokenizer, encoding) in encoders {
        named.push((name, doc_encoder(tokenizer, encoding, add_special_tokens)?));
    }
    let mut options = data::stats::StatsOptions::new(field);
    options.read.text_docs = text_docs_of(text_docs)?;
    options.lang_field = lang_field;
    let reports = run(py, move || {
        let job = || data::stats::measure(&named, &corpora, &options, |_| {});
        crate::pool::on_threads(threads, job)
    })?;
    let json = serde_json::to_string(&reports).map_err(|e| value_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (json,))
}

/// The encoder of `tokenizer` or `encoding` (exactly one of them given).
fn doc_encoder(
    tokenizer: Option<PyRef<'_, PyTokenizer>>,
    encoding: Option<PyRef<'_, PyTiktokenCore>>,
    add_special_tokens: bool,
) -> PyResult<DocEncoder> {
    match (tokenizer, encoding) {
        (Some(t), None) => DocEncoder::tokenizer(&t.tok, add_special_tokens).map_err(crate::errors::tk_err),
        (None, Some(e)) => Ok(DocEncoder::Tiktoken(e.encoding())),
        _ => Err(value_err("give either tokenizer= (a tokenkit.Tokenizer) or encoding= (a tokenkit.tiktoken.Encoding)")),
    }
}

/// `text_docs="line"|"file"`.
fn text_docs_of(text_docs: &str) -> PyResult<TextDocs> {
    match text_docs {
        "line" => Ok(TextDocs::Line),
        "file" => Ok(TextDocs::File),
        other => Err(value_err(format!("text_docs must be \"line\" or \"file\", not {other:?}"))),
    }
}

/// The encoder of a dataset job, for engines that run the encoding themselves (Ray Data's
/// `map_batches`, Spark's `mapInArrow`, `datasets.map`): each document's ids followed by the
/// separator, exactly as `tokenize_files` writes them.
#[pyclass(module = "tokenkit", name = "_DocumentEncoder", frozen)]
pub struct PyDocumentEncoder {
    enc: DocEncoder,
    separator: Option<(String, u32)>,
}

#[pymethods]
impl PyDocumentEncoder {
    #[new]
    #[pyo3(signature = (*, tokenizer = None, encoding = None, separator = None, eos = true, add_special_tokens = true))]
    fn new(
        tokenizer: Option<PyRef<'_, PyTokenizer>>,
        encoding: Option<PyRef<'_, PyTiktokenCore>>,
        separator: Option<String>,
        eos: bool,
        add_special_tokens: bool,
    ) -> PyResult<Self> {
        let enc = doc_encoder(tokenizer, encoding, add_special_tokens)?;
        let choice = match (eos, separator) {
            (false, _) => SeparatorChoice::None,
            (true, Some(t)) => SeparatorChoice::Token(t),
            (true, None) => SeparatorChoice::Default,
        };
        let separator = enc.separator(&choice).map_err(crate::errors::tk_err)?;
        Ok(PyDocumentEncoder { enc, separator })
    }

    /// The separator as `(token, id)`, or `None`.
    #[getter]
    fn separator(&self) -> Option<(String, u32)> {
        self.separator.clone()
    }

    /// One more than the largest id.
    #[getter]
    fn id_space(&self) -> usize {
        self.enc.id_space()
    }

    /// The ids of each document and the separator, as a `pyarrow.ListArray` of uint32.
    fn encode_batch_to_arrow<'py>(&self, py: Python<'py>, texts: Vec<Bound<'py, PyString>>) -> PyResult<Bound<'py, PyAny>> {
        let texts = texts.iter().map(crate::text::utf8).collect::<PyResult<Vec<_>>>()?;
        let (enc, sep) = (self.enc.clone(), self.separator.as_ref().map(|s| s.1));
        let rows = run(py, move || {
            let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
            enc.encode_documents(&refs, sep)
        })?;
        list_array(py, &rows)
    }
}
