//! `tokenkit.corpus`: corpus preparation steps (the library's `tokenkit::corpus`) over lists of
//! strings and over files.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyList;
use tokenkit::corpus::pipeline::{DedupConfig, Pipeline, StepConfig};
use tokenkit::corpus::{clean, dedup, lang, pii, split, CorpusOptions};

use crate::errors::value_err;
use crate::pool::run_interruptible as run;

/// Texts and `(placeholder, count)` pairs.
type Redacted = (Vec<String>, Vec<(String, u64)>);

/// The texts with their personal data replaced by placeholders, and the counts per
/// placeholder (`config`: a pii step's JSON options, user dictionaries and patterns).
#[pyfunction]
#[pyo3(signature = (texts, config = "{}"))]
pub fn corpus_pii(py: Python<'_>, texts: Vec<String>, config: &str) -> PyResult<Redacted> {
    let redactor = redactor(config)?;
    let results = run(py, || tokenkit::utils::parallel::try_map(&texts, |t| t.len(), |t| Ok::<_, tokenkit::Error>(redactor.redact(t))))?;
    let mut counts: Vec<(String, u64)> = pii::PiiKind::ALL.iter().map(|k| (redactor.placeholder(*k).to_owned(), 0)).collect();
    let mut out = Vec::with_capacity(texts.len());
    for ((text, c), original) in results.into_iter().zip(&texts) {
        for (kind, n) in c.iter() {
            let name = redactor.placeholder(kind);
            match counts.iter_mut().find(|(k, _)| k == name) {
                Some((_, total)) => *total += n,
                None => counts.push((name.to_owned(), n)),
            }
        }
        out.push(text.unwrap_or_else(|| original.clone()));
    }
    Ok((out, counts))
}

/// The personal data of one text: `(placeholder, start, end)` in characters.
#[pyfunction]
#[pyo3(signature = (text, config = "{}"))]
pub fn corpus_find_pii(text: &str, config: &str) -> PyResult<Vec<(String, usize, usize)>> {
    let redactor = redactor(config)?;
    Ok(redactor
        .find(text)
        .into_iter()
        .map(|f| {
            let start = text[..f.span.start].chars().count();
            let end = start + text[f.span.clone()].chars().count();
            (redactor.placeholder(f.kind).to_owned(), start, end)
        })
        .collect())
}

/// The redactor of a pii step's JSON options.
fn redactor(config: &str) -> PyResult<pii::Redactor> {
    pii::Redactor::new(&options("pii", config)?).map_err(crate::errors::tk_err)
}

/// Parses a step's options (JSON) into `T`, naming the step in the error.
fn options<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> PyResult<T> {
    serde_json::from_str(json).map_err(|e| value_err(format!("{what} options: {e}")))
}

/// The cluster of each text (the index of its first text): exact duplicates, or near ones
/// (MinHash + LSH) with `near` in the options (a dedup step's JSON options).
#[pyfunction]
pub fn corpus_clusters(py: Python<'_>, texts: Vec<String>, config: &str) -> PyResult<Vec<u32>> {
    let config: DedupConfig = options("dedup", config)?;
    if config.unit != dedup::Unit::Document {
        return Err(value_err("clusters are of whole texts: `unit` is for dedup_files"));
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    match config.minhash().map_err(crate::errors::tk_err)? {
        None => Ok(dedup::exact_clusters(&refs)),
        Some(opts) => run(py, || dedup::near_clusters(&refs, &opts)),
    }
}

/// Each text's LSH bucket key in every band (a dedup step's JSON options with `near`), as
/// signed 64-bit integers (the same bits; Arrow int64 and Spark's LongType have no unsigned form).
#[pyfunction]
pub fn corpus_band_keys(py: Python<'_>, texts: Vec<String>, config: &str) -> PyResult<Vec<Vec<i64>>> {
    let config: DedupConfig = options("dedup", config)?;
    let Some(opts) = config.minhash().map_err(crate::errors::tk_err)? else {
        return Err(value_err("band keys are for near deduplication: MinHash options only"));
    };
    opts.check().map_err(crate::errors::tk_err)?;
    let hasher = dedup::MinHasher::new(&opts);
    run(py, || {
        tokenkit::utils::parallel::try_map(
            &texts,
            |t| t.len(),
            |t| Ok::<_, tokenkit::Error>(hasher.band_keys(t).into_iter().map(|k| k as i64).collect()),
        )
    })
}

/// Each text cleaned (`None`: removed) and the rule that removed it (a clean step's JSON
/// options).
#[pyfunction]
pub fn corpus_clean(py: Python<'_>, texts: Vec<String>, config: &str) -> PyResult<Vec<(Option<String>, Option<&'static str>)>> {
    let opts: clean::CleanOptions = options("clean", config)?;
    let results =
        run(py, || tokenkit::utils::parallel::try_map(&texts, |t| t.len(), |t| Ok::<_, tokenkit::Error>(clean::clean(t, &opts))))?;
    Ok(results
        .into_iter()
        .zip(&texts)
        .map(|(r, original)| match r {
            clean::Cleaned::Kept(text, _) => (Some(text.unwrap_or_else(|| original.clone())), None),
            clean::Cleaned::Removed(rule, _) => (None, Some(rule)),
        })
        .collect())
}

/// The language of each text (ISO 639-3, or `und`) and whatlang's confidence.
#[pyfunction]
pub fn corpus_detect_lang(py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<(&'static str, f64)>> {
    let results = run(py, || tokenkit::utils::parallel::try_map(&texts, |t| t.len(), |t| Ok::<_, tokenkit::Error>(lang::detect(t))))?;
    Ok(results.into_iter().map(|d| (d.lang, d.confidence)).collect())
}

/// The split name of each text (`fractions` as `NAME=FRACTION,...`).
#[pyfunction]
#[pyo3(signature = (texts, fractions, seed = 0))]
pub fn corpus_split_of(texts: Vec<String>, fractions: &str, seed: u64) -> PyResult<Vec<String>> {
    let splits = split::Splits::parse(fractions, seed).map_err(crate::errors::tk_err)?;
    let names: Vec<&str> = splits.names().collect();
    Ok(texts.iter().map(|t| names[splits.of(t)].to_owned()).collect())
}

/// Runs a step (its JSON options, `{"step": "clean", ...}`) or a pipeline (`{"steps":
/// [...]}`) over files (see `tokenkit corpus --help`); returns the reports as dicts.
#[pyfunction]
#[pyo3(signature = (config, inputs, output, *, field = "text", strict = false, threads = None))]
pub fn corpus_files<'py>(
    py: Python<'py>,
    config: &str,
    inputs: Vec<String>,
    output: PathBuf,
    field: &str,
    strict: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyList>> {
    let value: serde_json::Value = options("step", config)?;
    let steps = if value.get("steps").is_some() {
        options::<Pipeline>("pipeline", config)?.steps
    } else {
        vec![options::<StepConfig>("step", config)?]
    };
    let pipeline = Pipeline::new(steps).map_err(crate::errors::tk_err)?;
    let mut opts = CorpusOptions::new(inputs, output);
    opts.field = field.to_owned();
    opts.strict = strict;
    let reports = run(py, move || {
        let job = || pipeline.run(&opts, &mut |_| {});
        crate::pool::on_threads(threads, job)
    })?;
    let json = serde_json::to_string(&reports).map_err(|e| value_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (json,))?.downcast_into::<PyList>().map_err(Into::into)
}
