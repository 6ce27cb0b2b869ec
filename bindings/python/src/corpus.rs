//! `tokenkit.corpus`: corpus preparation steps (the library's `tokenkit::corpus`) over lists of
//! strings and over files.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokenkit::corpus::dedup::{self, MinHashOptions};
use tokenkit::corpus::{self, pii, CorpusOptions};

use crate::errors::value_err;
use crate::pool::run_interruptible as run;

/// Texts and `(placeholder, count)` pairs.
type Redacted = (Vec<String>, Vec<(String, u64)>);

/// The texts with their personal data replaced by placeholders, and the counts per
/// placeholder.
#[pyfunction]
pub fn corpus_pii(py: Python<'_>, texts: Vec<String>) -> PyResult<Redacted> {
    let results = run(py, || tokenkit::utils::parallel::try_map(&texts, |t| t.len(), |t| Ok::<_, tokenkit::Error>(pii::redact(t))))?;
    let mut counts = [0u64; pii::PiiKind::ALL.len()];
    let mut out = Vec::with_capacity(texts.len());
    for ((text, c), original) in results.into_iter().zip(&texts) {
        for (k, kind) in pii::PiiKind::ALL.iter().enumerate() {
            counts[k] += c.get(*kind);
        }
        out.push(text.unwrap_or_else(|| original.clone()));
    }
    let counts = pii::PiiKind::ALL.iter().zip(counts).map(|(k, n)| (k.placeholder().to_owned(), n)).collect();
    Ok((out, counts))
}

/// The personal data of one text: `(placeholder, start, end)` in characters.
#[pyfunction]
pub fn corpus_find_pii(text: &str) -> Vec<(String, usize, usize)> {
    pii::find(text)
        .into_iter()
        .map(|f| {
            let start = text[..f.span.start].chars().count();
            let end = start + text[f.span.clone()].chars().count();
            (f.kind.placeholder().to_owned(), start, end)
        })
        .collect()
}

/// The cluster of each text (the index of its first text): exact duplicates, or near ones
/// (MinHash + LSH) with `near`.
#[pyfunction]
#[pyo3(signature = (texts, *, near = false, threshold = None, num_perm = 128, bands = None, rows = None, shingle = "word", ngram = 5, seed = 1))]
#[allow(clippy::too_many_arguments)]
pub fn corpus_clusters(
    py: Python<'_>,
    texts: Vec<String>,
    near: bool,
    threshold: Option<f64>,
    num_perm: usize,
    bands: Option<usize>,
    rows: Option<usize>,
    shingle: &str,
    ngram: usize,
    seed: u64,
) -> PyResult<Vec<u32>> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    if !near {
        return Ok(dedup::exact_clusters(&refs));
    }
    let opts = MinHashOptions::from_params(threshold, num_perm, bands, rows, shingle, ngram, seed).map_err(crate::errors::tk_err)?;
    run(py, || dedup::near_clusters(&refs, &opts))
}

/// Runs a step (`pii` or `dedup`) over files into a JSON lines file (see `tokenkit corpus
/// --help`); returns the report as a dict.
#[pyfunction]
#[pyo3(signature = (step, inputs, output, *, field = "text", strict = false, near = false, threshold = None, num_perm = 128,
    bands = None, rows = None, shingle = "word", ngram = 5, seed = 1, threads = None))]
#[allow(clippy::too_many_arguments)]
pub fn corpus_files<'py>(
    py: Python<'py>,
    step: &str,
    inputs: Vec<String>,
    output: PathBuf,
    field: &str,
    strict: bool,
    near: bool,
    threshold: Option<f64>,
    num_perm: usize,
    bands: Option<usize>,
    rows: Option<usize>,
    shingle: &str,
    ngram: usize,
    seed: u64,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut opts = CorpusOptions::new(inputs, output);
    opts.field = field.to_owned();
    opts.strict = strict;
    let near = near
        .then(|| MinHashOptions::from_params(threshold, num_perm, bands, rows, shingle, ngram, seed))
        .transpose()
        .map_err(crate::errors::tk_err)?;
    let step = step.to_owned();
    if step != "pii" && step != "dedup" {
        return Err(value_err(format!("step must be \"pii\" or \"dedup\", not {step:?}")));
    }
    let report = run(py, move || {
        let job = || match step.as_str() {
            "pii" => corpus::pii_files(&opts, &mut |_| {}),
            _ => corpus::dedup_files(&opts, near.as_ref(), &mut |_| {}),
        };
        match threads {
            Some(n) => {
                rayon::ThreadPoolBuilder::new().num_threads(n).build().map_err(|e| tokenkit::Error::invalid(e.to_string()))?.install(job)
            }
            None => job(),
        }
    })?;
    let json = serde_json::to_string(&report).map_err(|e| value_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (json,))?.downcast_into::<PyDict>().map_err(Into::into)
}
