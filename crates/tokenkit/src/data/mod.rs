//! Dataset jobs: tokenize whole corpora (text, JSONL, Parquet; plain, gz, zst; files,
//! directories, globs) into training shards (a flat token file, Megatron-LM's indexed dataset,
//! Parquet), streaming with bounded memory.
//!
//! The shape: a reader thread cuts the input into chunks of documents (by a fixed number of
//! text bytes, so the cuts depend on the input only), the calling thread encodes each chunk
//! on the rayon pool, and a writer thread appends the results in input order and records in a
//! journal, after each chunk, how far the input and every output file are (on a pool of one
//! thread, that thread does the three in turn). The output is
//! therefore the same bytes for any thread count, and a job killed at any moment continues,
//! when the same command runs again, from its last recorded chunk (the temporary files are
//! cut back to the recorded lengths and the input is read again up to the recorded record).
//! Outputs carry their final names only once complete (see [`output`]).

pub mod encoder;
pub mod input;
pub mod output;
#[cfg(feature = "progress")]
pub mod progress_bar;
pub mod stats;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::Arc;
use std::time::{Instant, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use encoder::{DocEncoder, SeparatorChoice};
pub use input::{ReadOptions, Record, TextDocs};
pub use output::{Dtype, OutputFormat};

use output::{SplitState, SplitWriter};

use crate::utils::atomic_file::{write_atomic, AtomicFiles};
use crate::{Error, Result};

/// Chunks of about this many bytes of text are encoded at a time (a few are in flight: the
/// reader's queue, the one being encoded, the writer's queue).
pub const CHUNK_BYTES: usize = 8 << 20;

/// How many bad records are quoted in the summary.
const MAX_EXAMPLES: usize = 5;

/// What a dataset job does.
#[derive(Debug, Clone)]
pub struct TokenizeOptions {
    /// Files, directories and globs, in order.
    pub inputs: Vec<String>,
    /// The output prefix: `PREFIX.bin`, `PREFIX.json`, ...
    pub output: PathBuf,
    /// The output format.
    pub format: OutputFormat,
    /// How documents are read.
    pub read: ReadOptions,
    /// The token after each document.
    pub separator: SeparatorChoice,
    /// The share of documents (chosen by a hash of their text) written to the validation
    /// split `PREFIX.val.*`; 0 for none.
    pub val_fraction: f64,
    /// Whether a bad record (invalid JSON, missing field, invalid UTF-8) is an error instead
    /// of being counted and skipped.
    pub strict: bool,
    /// Text bytes per chunk ([`CHUNK_BYTES`]; smaller in tests).
    pub chunk_bytes: usize,
    /// What the tokenizer is (a file's path, size and time, or an encoding's name): recorded
    /// in the metadata and checked before a job resumes.
    pub tokenizer: String,
    /// What identifies the tokenizer for resuming (the CLI adds a file's sha256), checked
    /// with the options before a job continues.
    pub tokenizer_id: String,
}

impl TokenizeOptions {
    /// Options with the defaults: `bin`, field `text`, one document per line, the tokenizer's
    /// separator, no validation split, bad records skipped.
    pub fn new(inputs: Vec<String>, output: impl Into<PathBuf>, tokenizer: impl Into<String>) -> Self {
        let tokenizer = tokenizer.into();
        TokenizeOptions {
            tokenizer_id: tokenizer.clone(),
            inputs,
            output: output.into(),
            format: OutputFormat::Bin,
            read: ReadOptions { field: "text".into(), text_docs: TextDocs::Line, keep: Vec::new() },
            separator: SeparatorChoice::Default,
            val_fraction: 0.0,
            strict: false,
            chunk_bytes: CHUNK_BYTES,
            tokenizer,
        }
    }
}

/// Counts of one split.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SplitSummary {
    /// The files written.
    pub files: Vec<PathBuf>,
    /// Documents.
    pub documents: u64,
    /// Tokens, separators included.
    pub tokens: u64,
    /// sha256 of the token file (Parquet: of the Parquet file).
    pub sha256: String,
}

/// What a job did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// The training split (all documents without `val_fraction`).
    pub train: SplitSummary,
    /// The validation split, when asked for.
    pub val: Option<SplitSummary>,
    /// The metadata file.
    pub metadata: PathBuf,
    /// The token type of the token files.
    pub dtype: &'static str,
    /// Blank lines and empty texts (no document).
    pub empty: u64,
    /// Bad records skipped.
    pub skipped: u64,
    /// The first few bad records, as `file:line: reason`.
    pub skip_examples: Vec<String>,
    /// UTF-8 bytes of the documents' text.
    pub text_bytes: u64,
    /// Documents already written by an earlier run that this one continued.
    pub resumed_documents: u64,
    /// Seconds this run took.
    pub seconds: f64,
}

/// Progress of a running job.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Input bytes read (compressed files: compressed bytes) and the total to read.
    pub read_bytes: u64,
    pub total_bytes: u64,
    /// Documents and tokens written so far (this run and the ones it continues).
    pub documents: u64,
    pub tokens: u64,
}

/// The journal of a job: what it is, and how far it got.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    version: u32,
    /// Everything that decides the output (options, tokenizer, input files' identity).
    job: Value,
    /// Records of the input consumed.
    records: u64,
    empty: u64,
    skipped: u64,
    skip_examples: Vec<String>,
    text_bytes: u64,
    splits: Vec<SplitState>,
    /// Set once every temporary file is complete: the renames still to do and the metadata.
    finishing: Option<Finishing>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Finishing {
    renames: Vec<(PathBuf, PathBuf)>,
    metadata: String,
    shas: Vec<String>,
}

/// A chunk of records on its way from the reader to the writer.
struct Chunk {
    records: Vec<Record>,
    /// Encoded ids of each document record (`None` for the others).
    ids: Vec<Option<Vec<u32>>>,
}

/// The identity of the input files: path, size and modification time.
fn input_identity(files: &[PathBuf]) -> Result<Value> {
    let mut ids = Vec::new();
    for f in files {
        let m = std::fs::metadata(f).map_err(|source| Error::Io { path: f.clone(), source })?;
        let mtime = m.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as u64);
        ids.push(json!([f.display().to_string(), m.len(), mtime]));
    }
    Ok(Value::Array(ids))
}

/// The metadata file's path.
pub fn metadata_path(prefix: &Path) -> PathBuf {
    PathBuf::from(format!("{}.json", prefix.display()))
}

/// The journal's path.
pub fn journal_path(prefix: &Path) -> PathBuf {
    PathBuf::from(format!("{}.journal", prefix.display()))
}

/// Whether a document goes to the validation split: a hash of its text (xxh64, seed 0) below
/// `fraction` of the hash range, so the split depends on the text only.
pub fn is_val(text: &str, fraction: f64) -> bool {
    fraction > 0.0 && (twox_hash::XxHash64::oneshot(0, text.as_bytes()) >> 11) as f64 / (1u64 << 53) as f64 <= fraction
}

/// Tokenizes the inputs of `opts` with `encoder` into the files of `opts.format`, calling
/// `on_progress` after each chunk. Reruns of the same job (same options, tokenizer and input
/// files) continue from the journal an interrupted run left; anything else starts over.
pub fn tokenize_files(encoder: &DocEncoder, opts: &TokenizeOptions, on_progress: &mut dyn FnMut(&Progress)) -> Result<Summary> {
    let start = Instant::now();
    if !(0.0..1.0).contains(&opts.val_fraction) {
        return Err(Error::invalid(format!("the validation fraction must be in [0, 1), not {}", opts.val_fraction)));
    }
    if !opts.read.keep.is_empty() && opts.format != OutputFormat::Parquet {
        return Err(Error::invalid("kept columns go to Parquet output only (--format parquet)"));
    }
    let files = input::expand_inputs(&opts.inputs)?;
    let separator = encoder.separator(&opts.separator)?;
    let dtype = Dtype::for_ids(opts.format, encoder.id_space());
    let prefix = &opts.output;
    let job = json!({
        "format": opts.format,
        "field": opts.read.field,
        "text_docs": opts.read.text_docs,
        "keep": opts.read.keep,
        "separator": separator,
        "val_fraction": opts.val_fraction,
        "strict": opts.strict,
        "tokenizer": opts.tokenizer_id,
        "id_space": encoder.id_space(),
        "dtype": dtype,
        "inputs": input_identity(&files)?,
    });
    let splits = if opts.val_fraction > 0.0 { 2 } else { 1 };
    let journal_file = journal_path(prefix);
    let resumed: Option<Journal> = std::fs::read(&journal_file)
        .ok()
        .and_then(|b| serde_json::from_slice::<Journal>(&b).ok())
        .filter(|j| j.version == 1 && j.job == job && j.splits.len() == splits)
        .filter(|j| {
            j.finishing.is_some() || j.splits.iter().enumerate().all(|(k, s)| SplitWriter::can_resume(prefix, k == 1, opts.format, s))
        });
    let mut journal = match resumed {
        Some(j) => j,
        None => Journal {
            version: 1,
            job,
            records: 0,
            empty: 0,
            skipped: 0,
            skip_examples: Vec::new(),
            text_bytes: 0,
            splits: vec![SplitState::default(); splits],
            finishing: None,
        },
    };
    let resumed_documents = journal.splits.iter().map(|s| s.documents).sum();
    let summarize = |j: &Journal, shas: &[String]| -> Summary {
        let split = |k: usize| SplitSummary {
            files: output::split_paths(prefix, k == 1, opts.format),
            documents: j.splits[k].documents,
            tokens: j.splits[k].tokens,
            sha256: shas.get(k).cloned().unwrap_or_default(),
        };
        Summary {
            train: split(0),
            val: (splits == 2).then(|| split(1)),
            metadata: metadata_path(prefix),
            dtype: dtype.name(),
            empty: j.empty,
            skipped: j.skipped,
            skip_examples: j.skip_examples.clone(),
            text_bytes: j.text_bytes,
            resumed_documents,
            seconds: start.elapsed().as_secs_f64(),
        }
    };
    if journal.finishing.is_none() {
        let mut writers = (0..splits)
            .map(|k| {
                let resume = (resumed_documents > 0 || journal.records > 0).then_some(&journal.splits[k]);
                SplitWriter::open(prefix, k == 1, opts.format, dtype, &opts.read.keep, resume)
            })
            .collect::<Result<Vec<_>>>()?;
        // A fresh start: no journal of an earlier, different job may stay behind.
        write_journal(&journal_file, &journal)?;
        run_chunks(encoder, opts, files, separator.as_ref().map(|s| s.1), &mut journal, &mut writers, on_progress)?;
        let mut renames = Vec::new();
        let mut shas = Vec::new();
        for w in writers {
            let (r, sha) = w.finish()?;
            renames.extend(r);
            shas.push(sha);
        }
        let metadata = metadata_json(opts, encoder, &separator, dtype, &summarize(&journal, &shas));
        journal.finishing = Some(Finishing { renames, metadata, shas });
        write_atomic(&journal_file, &serde_json::to_vec(&journal).map_err(|e| Error::invalid(e.to_string()))?)?;
    }
    let finishing = journal.finishing.clone().expect("set above or by the earlier run");
    for (temp, fin) in &finishing.renames {
        // Renamed already when an earlier run stopped between two renames.
        if temp.exists() || !fin.exists() {
            std::fs::rename(temp, fin).map_err(|source| Error::Io { path: fin.clone(), source })?;
        }
    }
    let mut meta = AtomicFiles::new();
    meta.write(metadata_path(prefix), finishing.metadata.as_bytes())?;
    meta.commit()?;
    for k in 0..splits {
        SplitWriter::cleanup(prefix, k == 1, opts.format);
    }
    let _ = std::fs::remove_file(&journal_file);
    Ok(summarize(&journal, &finishing.shas))
}

/// Replaces the journal: a temporary file renamed over it, so a killed process leaves the old
/// journal or the new one. Not synced (see [`SplitWriter::sync`]); the journal that lists the
/// final renames is written with [`write_atomic`], which is.
fn write_journal(path: &Path, journal: &Journal) -> Result<()> {
    let temp = output::beside(path, "tmp");
    let bytes = serde_json::to_vec(journal).map_err(|e| Error::invalid(e.to_string()))?;
    std::fs::write(&temp, bytes).map_err(|source| Error::Io { path: temp.clone(), source })?;
    std::fs::rename(&temp, path).map_err(|source| Error::Io { path: path.to_owned(), source })
}

/// The metadata file's text.
fn metadata_json(opts: &TokenizeOptions, encoder: &DocEncoder, separator: &Option<(String, u32)>, dtype: Dtype, s: &Summary) -> String {
    let split = |s: &SplitSummary| {
        json!({
            "files": s.files.iter().map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned())).collect::<Vec<_>>(),
            "documents": s.documents,
            "tokens": s.tokens,
            "sha256": s.sha256,
        })
    };
    let mut m = json!({
        "format": opts.format,
        "tokenizer": opts.tokenizer,
        "dtype": dtype.name(),
        "vocab_size": encoder.id_space(),
        "separator": separator.as_ref().map(|(t, id)| json!({"token": t, "id": id})),
        "add_special_tokens": matches!(encoder, DocEncoder::Tokenizer { add_special_tokens: true, .. }),
        "documents": s.train.documents,
        "tokens": s.train.tokens,
        "sha256": s.train.sha256,
        "files": split(&s.train)["files"],
        "empty": s.empty,
        "skipped": s.skipped,
        "text_bytes": s.text_bytes,
    });
    if let Some(v) = &s.val {
        m["val_fraction"] = json!(opts.val_fraction);
        m["val"] = split(v);
    }
    let mut text = serde_json::to_string_pretty(&m).expect("JSON values serialize");
    text.push('\n');
    text
}

/// The streaming part of a job: read, encode, write, journal, chunk by chunk. With more
/// than one worker thread, reading and writing run on two threads of their own beside the
/// encoding; with one, that thread does the three in turn (so `--threads 1` is one thread).
fn run_chunks(
    encoder: &DocEncoder,
    opts: &TokenizeOptions,
    files: Vec<PathBuf>,
    separator: Option<u32>,
    journal: &mut Journal,
    writers: &mut [SplitWriter],
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<()> {
    let total_bytes = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let mut records = input::Records::new(files, opts.read.clone());
    let read_bytes = records.bytes_read.clone();
    let next = move || {
        Ok(records.next_record()?.map(|r| {
            let len = input::text_len(&r);
            (r, len)
        }))
    };
    let mut reader = input::Chunks::new(next, journal.records, opts.chunk_bytes);
    let mut writer = ChunkWriter {
        journal,
        writers,
        journal_file: journal_path(&opts.output),
        separator,
        val_fraction: opts.val_fraction,
        written: Arc::new((AtomicU64::new(0), AtomicU64::new(0))),
    };
    writer.count_written();
    let written = writer.written.clone();
    let mut progress = || {
        on_progress(&Progress {
            read_bytes: read_bytes.load(Ordering::Relaxed),
            total_bytes,
            documents: written.0.load(Ordering::Relaxed),
            tokens: written.1.load(Ordering::Relaxed),
        })
    };
    let encode = |chunk: &mut Chunk| -> Result<()> {
        if opts.strict {
            if let Some(Record::Bad(why)) = chunk.records.iter().find(|r| matches!(r, Record::Bad(_))) {
                return Err(Error::invalid(format!("{why} (--strict)")));
            }
        }
        chunk.ids = crate::utils::parallel::try_map(
            chunk.records.iter(),
            |r| input::text_len(r),
            |r| match r {
                Record::Doc { text, .. } => encoder.encode(text).map(Some),
                _ => Ok(None),
            },
        )?;
        Ok(())
    };
    if rayon::current_num_threads() <= 1 {
        while let Some(records) = reader.next_chunk()? {
            let mut chunk = Chunk { records, ids: Vec::new() };
            encode(&mut chunk)?;
            writer.write(chunk)?;
            progress();
        }
        progress();
        return Ok(());
    }
    std::thread::scope(|scope| -> Result<()> {
        let (read_tx, read_rx) = sync_channel::<Result<Vec<Record>>>(2);
        let (write_tx, write_rx) = sync_channel::<Chunk>(2);
        scope.spawn(move || reader.send(&read_tx));
        let writing = scope.spawn(move || -> Result<()> { write_rx.into_iter().try_for_each(|chunk| writer.write(chunk)) });
        let mut failed = Ok(());
        for chunk in read_rx {
            let chunk = chunk.map(|records| Chunk { records, ids: Vec::new() });
            match chunk.and_then(|mut chunk| encode(&mut chunk).map(|()| chunk)) {
                Ok(chunk) => {
                    if write_tx.send(chunk).is_err() {
                        break;
                    }
                    progress();
                }
                Err(e) => {
                    failed = Err(e);
                    break;
                }
            }
        }
        drop(write_tx);
        let wrote = writing.join().unwrap_or_else(|_| Err(Error::invalid("the writer thread panicked")));
        failed.and(wrote)
    })?;
    progress();
    Ok(())
}

/// Appends encoded chunks to the outputs in input order and journals each.
struct ChunkWriter<'a> {
    journal: &'a mut Journal,
    writers: &'a mut [SplitWriter],
    journal_file: PathBuf,
    separator: Option<u32>,
    val_fraction: f64,
    /// Documents and tokens written so far, for the progress report.
    written: Arc<(AtomicU64, AtomicU64)>,
}

impl ChunkWriter<'_> {
    fn write(&mut self, chunk: Chunk) -> Result<()> {
        let (journal, writers) = (&mut *self.journal, &mut *self.writers);
        for (record, ids) in chunk.records.into_iter().zip(chunk.ids) {
            match record {
                Record::Doc { text, keep } => {
                    let k = usize::from(writers.len() == 2 && is_val(&text, self.val_fraction));
                    journal.text_bytes += text.len() as u64;
                    let ids = ids.expect("every document is encoded");
                    let n = ids.len() as u64 + u64::from(self.separator.is_some());
                    self.written.1.fetch_add(n, Ordering::Relaxed);
                    writers[k].push(ids, self.separator, keep)?;
                }
                Record::Empty => journal.empty += 1,
                Record::Bad(why) => {
                    journal.skipped += 1;
                    if journal.skip_examples.len() < MAX_EXAMPLES {
                        journal.skip_examples.push(why);
                    }
                }
            }
            journal.records += 1;
        }
        for w in writers.iter_mut() {
            w.sync()?;
        }
        journal.splits = writers.iter().map(|w| w.state.clone()).collect();
        self.count_written();
        write_journal(&self.journal_file, self.journal)
    }

    /// Sets the progress report's counts from the journal.
    fn count_written(&self) {
        self.written.0.store(self.journal.splits.iter().map(|s| s.documents).sum(), Ordering::Relaxed);
        self.written.1.store(self.journal.splits.iter().map(|s| s.tokens).sum(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests;
