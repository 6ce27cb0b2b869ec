//! Steps as data: one step with its options (a JSON object, `{"step": "clean", ...}`), and a
//! pipeline of steps run one after the other, each reading the previous one's output.
//!
//! ```json
//! {"steps": [
//!   {"step": "clean", "html": true, "quality": true},
//!   {"step": "lang", "keep": ["eng"], "min_confidence": 0.5},
//!   {"step": "pii", "dictionaries": {"NAME": "names.txt"}, "patterns": {"STAFF_ID": "E[0-9]{6}"}},
//!   {"step": "dedup", "near": true, "threshold": 0.8},
//!   {"step": "split", "fractions": "train=0.98,validation=0.01,test=0.01"}
//! ]}
//! ```
//!
//! Each step's options are those of its `tokenkit corpus` subcommand (see [`StepConfig`]).
//! Every step but the last writes `OUTPUT.N-STEP.jsonl` beside the final output (kept: each is
//! a corpus in its own right, and a step can be rerun from it); the last writes the output (a
//! directory for `split`). `stats` writes nothing and passes its input on.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{clean, dedup, lang, pii, split, CorpusOptions, Report};
use crate::data::Progress;
use crate::utils::byte_size::ByteSize;
use crate::{Error, Result};

/// Near-duplicate parameters (see [`dedup::MinHashOptions::from_params`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DedupConfig {
    pub near: bool,
    pub threshold: Option<f64>,
    pub num_perm: usize,
    pub bands: Option<usize>,
    pub rows: Option<usize>,
    pub shingle: String,
    pub ngram: usize,
    pub seed: u64,
    /// Exact deduplication of documents, or of lines or paragraphs across the corpus.
    pub unit: dedup::Unit,
    /// Lines or paragraphs shorter than this many characters are always kept.
    pub unit_min_chars: usize,
    /// Hashes or band keys held in memory before they go to disk.
    pub memory_limit: ByteSize,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig {
            near: false,
            threshold: None,
            num_perm: 128,
            bands: None,
            rows: None,
            shingle: "word".into(),
            ngram: 5,
            seed: 1,
            unit: dedup::Unit::Document,
            unit_min_chars: 20,
            memory_limit: ByteSize(dedup::LSH_MEMORY),
        }
    }
}

impl DedupConfig {
    /// The MinHash options, `None` for exact deduplication.
    pub fn minhash(&self) -> Result<Option<dedup::MinHashOptions>> {
        if self.near && self.unit != dedup::Unit::Document {
            return Err(Error::invalid("near deduplication compares whole documents: it takes no line or paragraph unit"));
        }
        self.near
            .then(|| {
                dedup::MinHashOptions::from_params(
                    self.threshold,
                    self.num_perm,
                    self.bands,
                    self.rows,
                    &self.shingle,
                    self.ngram,
                    self.seed,
                )
            })
            .transpose()
    }
}

/// Split parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SplitConfig {
    /// `NAME=FRACTION,...`.
    pub fractions: String,
    pub seed: u64,
    /// `NAME.parquet` per split instead of `NAME.jsonl`.
    pub parquet: bool,
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig { fractions: "train=0.98,validation=0.01,test=0.01".into(), seed: 0, parquet: false }
    }
}

/// Statistics parameters.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StatsConfig {
    /// Count documents per language.
    pub lang: bool,
}

/// One step and its options.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "step", rename_all = "lowercase")]
pub enum StepConfig {
    Clean(clean::CleanOptions),
    Pii(pii::PiiOptions),
    Dedup(DedupConfig),
    Lang(lang::LangOptions),
    Split(SplitConfig),
    Stats(StatsConfig),
}

impl StepConfig {
    /// The step's name.
    pub fn name(&self) -> &'static str {
        match self {
            StepConfig::Clean(_) => "clean",
            StepConfig::Pii(_) => "pii",
            StepConfig::Dedup(_) => "dedup",
            StepConfig::Lang(_) => "lang",
            StepConfig::Split(_) => "split",
            StepConfig::Stats(_) => "stats",
        }
    }

    /// Checks the options (before any input is read).
    pub fn check(&self) -> Result<()> {
        match self {
            StepConfig::Dedup(d) => d.minhash().map(drop),
            StepConfig::Lang(l) => l.check(),
            StepConfig::Pii(p) => pii::Redactor::new(p).map(drop),
            StepConfig::Split(s) => split::Splits::parse(&s.fractions, s.seed).map(drop),
            _ => Ok(()),
        }
    }

    /// Runs the step over the corpus of `opts` (writing `opts.output`: a file, a directory for
    /// `split`, nothing for `stats`).
    pub fn run(&self, opts: &CorpusOptions, on_progress: &mut dyn FnMut(&Progress)) -> Result<Report> {
        match self {
            StepConfig::Clean(c) => super::clean_files(opts, c, on_progress),
            StepConfig::Pii(p) => super::pii_files(opts, p, on_progress),
            StepConfig::Dedup(d) => match d.minhash()? {
                Some(mh) => super::dedup_files(opts, Some(&mh), d.memory_limit.0, on_progress),
                None => super::dedup_units_files(opts, d.unit, d.unit_min_chars, d.memory_limit.0, on_progress),
            },
            StepConfig::Lang(l) => super::lang_files(opts, l, on_progress),
            StepConfig::Split(s) => super::split_files(opts, &split::Splits::parse(&s.fractions, s.seed)?, s.parquet, on_progress),
            StepConfig::Stats(s) => super::stats_files(opts, s.lang, on_progress),
        }
    }
}

/// A pipeline file: `{"steps": [...]}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    pub steps: Vec<StepConfig>,
}

impl Pipeline {
    /// The steps, checked: at least one, `split` only last, each step's options.
    pub fn new(steps: Vec<StepConfig>) -> Result<Self> {
        if steps.is_empty() {
            return Err(Error::invalid("no steps"));
        }
        if let Some(k) = steps[..steps.len() - 1].iter().position(|s| matches!(s, StepConfig::Split(_))) {
            return Err(Error::invalid(format!("split writes a directory, so it must be the last step (it is step {})", k + 1)));
        }
        for s in &steps {
            s.check()?;
        }
        Ok(Pipeline { steps })
    }

    /// Reads and checks a pipeline file.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::invalid(format!("cannot read {}: {e}", path.display())))?;
        let p: Pipeline = serde_json::from_str(&text).map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
        Pipeline::new(p.steps).map_err(|e| Error::invalid(format!("{}: {e}", path.display())))
    }

    /// Runs the steps over the corpus of `opts`, each on the previous one's output (see the
    /// module docs); returns each step's report.
    pub fn run(&self, opts: &CorpusOptions, on_progress: &mut dyn FnMut(&Progress)) -> Result<Vec<Report>> {
        let mut reports = Vec::new();
        let mut inputs = opts.inputs.clone();
        let last = self.steps.iter().rposition(|s| !matches!(s, StepConfig::Stats(_))).unwrap_or(0);
        for (k, step) in self.steps.iter().enumerate() {
            let output = match step {
                StepConfig::Stats(_) => PathBuf::new(),
                _ if k == last => opts.output.clone(),
                _ => intermediate(&opts.output, k, step.name()),
            };
            let step_opts = CorpusOptions { inputs: inputs.clone(), output: output.clone(), ..opts.clone() };
            reports.push(step.run(&step_opts, on_progress)?);
            if !matches!(step, StepConfig::Stats(_)) {
                inputs = vec![output.display().to_string()];
            }
        }
        Ok(reports)
    }
}

/// The file step `k` writes before the last: `OUT.N-STEP.jsonl` beside `OUT`.
fn intermediate(output: &Path, k: usize, name: &str) -> PathBuf {
    let stem = output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    output.with_file_name(format!("{stem}.{}-{name}.jsonl", k + 1))
}
