//! Corpus preparation: steps over the documents of a corpus (de-identification, exact and
//! near deduplication), streamed from the dataset jobs' reader ([`crate::data::input`]: text,
//! JSONL, Parquet; plain, `.gz`, `.zst`; files, directories, globs) to a JSON lines file.
//!
//! The frame: a reader thread cuts the input into chunks, the calling thread runs a step's
//! per-document function on the rayon pool, and a writer thread takes each chunk's results in
//! input order, lets the step decide (keep, replace the text, drop) and writes the lines. The
//! output is the same bytes for any thread count.
//!
//! What is written for each input record:
//! - a JSON line with a document: the line itself, byte for byte, with only the JSON value of
//!   the text field replaced when a step changes the text (other fields, their order, spacing
//!   and escapes are untouched); dropped when a step removes the document;
//! - a text line or a Parquet row: `{"FIELD": text}`;
//! - a JSON line whose text is empty: the line unchanged (no step applies);
//! - a blank line: nothing (counted as empty);
//! - a bad record (invalid JSON, not an object, no text field or not a string, invalid
//!   UTF-8, a line too long): nothing, counted in the report's `skipped` with the first few
//!   quoted (a step cannot mask what it cannot read, so passing it through could leak it);
//!   with `strict` it is an error and no output is written.
//!
//! The output file carries its final name only once complete. An output named `*.parquet` is
//! written as JSON lines beside it (`OUT.parquet.jsonl`), then converted to Parquet (the columns
//! and their types inferred from all lines, zstd-compressed) and the JSON lines removed.

pub mod clean;
pub mod dedup;
pub mod lang;
pub mod pii;
pub mod pipeline;
pub mod split;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use serde::Serialize;

use crate::data::input::{self, RawLine, ReadOptions, Record, Records, TextDocs};
use crate::data::Progress;
use crate::utils::atomic_file::AtomicWriter;
use crate::{Error, Result};

/// How many bad records are quoted in the report.
const MAX_EXAMPLES: usize = 5;

/// What a corpus job reads and writes.
#[derive(Debug, Clone)]
pub struct CorpusOptions {
    /// Files, directories and globs, in order.
    pub inputs: Vec<String>,
    /// The JSON lines file written.
    pub output: PathBuf,
    /// The JSON field / Parquet column holding the text.
    pub field: String,
    /// Whether a bad record is an error instead of being counted and left out.
    pub strict: bool,
    /// Text bytes per chunk ([`CHUNK_BYTES`]; smaller in tests).
    pub chunk_bytes: usize,
}

/// Text bytes per chunk of a corpus step. Up to six chunks are in flight (two read ahead, one
/// mapped, two waiting for the writer, one written), each held as its texts and its raw lines:
/// about 25 MiB at 2 MiB, where 8 MiB chunks (the dataset jobs') gave peaks of 60 to 160 MiB
/// for the same work, depending on how full the queues ran. 2 MiB is still hundreds of documents
/// for the threads to share.
pub const CHUNK_BYTES: usize = 2 << 20;

impl CorpusOptions {
    /// Options with the defaults: field `text`, bad records counted and left out.
    pub fn new(inputs: Vec<String>, output: impl Into<PathBuf>) -> Self {
        CorpusOptions { inputs, output: output.into(), field: "text".into(), strict: false, chunk_bytes: CHUNK_BYTES }
    }

    fn read_options(&self) -> ReadOptions {
        ReadOptions { field: self.field.clone(), text_docs: TextDocs::Line, keep: Vec::new() }
    }
}

/// What a step did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The step.
    pub step: String,
    /// Documents read, and their text bytes.
    pub documents_in: u64,
    pub bytes_in: u64,
    /// Documents written, and their text bytes.
    pub documents_out: u64,
    pub bytes_out: u64,
    /// Documents whose text the step changed.
    pub changed: u64,
    /// Documents the step removed.
    pub removed: u64,
    /// Blank lines and empty texts (no document; JSON lines with an empty text are written
    /// unchanged).
    pub empty: u64,
    /// Bad records left out.
    pub skipped: u64,
    /// The first few bad records, as `file:line: reason`.
    pub skip_examples: Vec<String>,
    /// The step's own counts (PII found per type, duplicate clusters, ...).
    pub counts: BTreeMap<String, u64>,
    /// The file written and its size.
    pub output: PathBuf,
    pub output_bytes: u64,
    /// Seconds the step took.
    pub seconds: f64,
}

impl Report {
    fn new(step: &str, opts: &CorpusOptions) -> Self {
        Report { step: step.to_owned(), output: opts.output.clone(), ..Default::default() }
    }

    /// Adds `n` to the count `name`.
    pub fn add(&mut self, name: &str, n: u64) {
        if n > 0 {
            *self.counts.entry(name.to_owned()).or_default() += n;
        }
    }
}

/// A step's decision on one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Written unchanged.
    Keep,
    /// Written with this text.
    Replace(String),
    /// Written with these members added at the end of its JSON object (`"key":value,...`, no
    /// leading comma). A JSON line that already has one of the keys has it twice; readers
    /// (Python's `json`, serde_json, pandas) take the last, the one added.
    Label(String),
    /// Written unchanged to the output of this index (the first is 0).
    To(usize),
    /// Not written.
    Drop,
    /// Stop reading: nothing of the step's outputs is written (they keep their names'
    /// previous contents); the step decides what to do next.
    Stop,
}

/// One record and the line it came from.
struct Item {
    record: Record,
    line: Option<RawLine>,
}

/// Runs a step over the corpus of `opts`: `map` on every document's text in parallel, then
/// `decide` on the results in input order (it sees the report to add its counts), writing the
/// kept documents to `outputs` (the first unless the verdict names another; none: nothing is
/// written, a first pass). `on_progress` is called after each chunk.
pub fn run_step<T: Send>(
    opts: &CorpusOptions,
    report: &mut Report,
    outputs: &[PathBuf],
    map: impl Fn(&str) -> T + Sync,
    mut decide: impl FnMut(T, &mut Report) -> Verdict + Send,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<()> {
    let start = Instant::now();
    let files = input::expand_inputs(&opts.inputs)?;
    let total_bytes = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let mut outs = outputs.iter().map(|p| AtomicWriter::create(jsonl_sink(p))).collect::<Result<Vec<_>>>()?;
    let mut records = Records::new(files, opts.read_options());
    let read_bytes = records.bytes_read.clone();
    let documents = AtomicU64::new(0);
    let field_key = serde_json::to_string(&opts.field).expect("strings serialize");
    let (report_w, outs_w, documents_w) = (&mut *report, &mut outs, &documents);
    let stopped = std::thread::scope(|scope| -> Result<bool> {
        let (read_tx, read_rx) = sync_channel::<Result<Vec<Item>>>(2);
        let (write_tx, write_rx) = sync_channel::<(Vec<Item>, Vec<Option<T>>)>(2);
        scope.spawn(move || {
            let next = || {
                Ok(records.next_record()?.map(|record| {
                    let len = input::text_len(&record);
                    (Item { line: records.line(), record }, len)
                }))
            };
            input::Chunks::new(next, 0, opts.chunk_bytes).send(&read_tx);
        });
        // Whether a verdict stopped the step.
        let writer = scope.spawn(move || -> Result<bool> {
            let mut bufs = vec![Vec::new(); outs_w.len().max(1)];
            for (items, results) in write_rx {
                bufs.iter_mut().for_each(Vec::clear);
                for (item, result) in items.into_iter().zip(results) {
                    match item.record {
                        Record::Doc { text, .. } => {
                            report_w.documents_in += 1;
                            report_w.bytes_in += text.len() as u64;
                            let verdict = decide(result.expect("every document is mapped"), report_w);
                            let (text, label, to) = match &verdict {
                                Verdict::Keep => (&text, None, 0),
                                Verdict::Replace(t) => {
                                    report_w.changed += 1;
                                    (t, None, 0)
                                }
                                Verdict::Label(l) => (&text, Some(l.as_str()), 0),
                                Verdict::To(k) => (&text, None, *k),
                                Verdict::Drop => {
                                    report_w.removed += 1;
                                    continue;
                                }
                                Verdict::Stop => return Ok(true),
                            };
                            report_w.documents_out += 1;
                            report_w.bytes_out += text.len() as u64;
                            let buf = &mut bufs[to];
                            match (&item.line, &verdict) {
                                (Some(RawLine { line, span: Some(span) }), Verdict::Replace(_)) => {
                                    buf.extend_from_slice(&line.as_bytes()[..span.start]);
                                    serde_json::to_writer(&mut *buf, text).expect("writes to memory");
                                    buf.extend_from_slice(&line.as_bytes()[span.end..]);
                                }
                                (Some(RawLine { line, span: Some(_) }), _) => {
                                    let line = line.trim_end();
                                    match label {
                                        // The line is an object: its last byte is its `}`.
                                        Some(label) => {
                                            buf.extend_from_slice(&line.as_bytes()[..line.len() - 1]);
                                            buf.push(b',');
                                            buf.extend_from_slice(label.as_bytes());
                                            buf.push(b'}');
                                        }
                                        None => buf.extend_from_slice(line.as_bytes()),
                                    }
                                }
                                _ => {
                                    buf.push(b'{');
                                    buf.extend_from_slice(field_key.as_bytes());
                                    buf.push(b':');
                                    serde_json::to_writer(&mut *buf, text).expect("writes to memory");
                                    if let Some(label) = label {
                                        buf.push(b',');
                                        buf.extend_from_slice(label.as_bytes());
                                    }
                                    buf.push(b'}');
                                }
                            }
                            buf.push(b'\n');
                        }
                        Record::Empty => {
                            report_w.empty += 1;
                            if let Some(l) = item.line.filter(|l| !l.line.trim().is_empty()) {
                                bufs[0].extend_from_slice(l.line.as_bytes());
                                bufs[0].push(b'\n');
                            }
                        }
                        Record::Bad(why) => {
                            report_w.skipped += 1;
                            if report_w.skip_examples.len() < MAX_EXAMPLES {
                                report_w.skip_examples.push(why);
                            }
                        }
                    }
                }
                for (out, buf) in outs_w.iter_mut().zip(&bufs) {
                    out.write(buf)?;
                }
                documents_w.store(report_w.documents_out, Ordering::Relaxed);
            }
            Ok(false)
        });
        let mut failed = Ok(());
        for chunk in read_rx {
            let items = match chunk {
                Ok(items) => items,
                Err(e) => {
                    failed = Err(e);
                    break;
                }
            };
            if opts.strict {
                if let Some(Record::Bad(why)) = items.iter().map(|i| &i.record).find(|r| matches!(r, Record::Bad(_))) {
                    failed = Err(Error::invalid(format!("{why} (--strict)")));
                    break;
                }
            }
            let results = crate::utils::parallel::try_map(
                items.iter(),
                |i| input::text_len(&i.record),
                |i| {
                    Ok::<_, Error>(match &i.record {
                        Record::Doc { text, .. } => Some(map(text)),
                        _ => None,
                    })
                },
            );
            match results {
                Ok(results) => {
                    if write_tx.send((items, results)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    failed = Err(e);
                    break;
                }
            }
            on_progress(&Progress {
                read_bytes: read_bytes.load(Ordering::Relaxed),
                total_bytes,
                documents: documents.load(Ordering::Relaxed),
                tokens: 0,
            });
        }
        drop(write_tx);
        let wrote = writer.join().unwrap_or_else(|_| Err(Error::invalid("the writer thread panicked")));
        failed.and(wrote)
    })?;
    if stopped {
        // The writers' temporary files are removed as they drop.
        report.seconds += start.elapsed().as_secs_f64();
        return Ok(());
    }
    for (out, path) in outs.into_iter().zip(outputs) {
        let written = out.written;
        out.finish()?;
        report.output_bytes += if is_parquet(path) { jsonl_to_parquet(&jsonl_sink(path), path, &opts.field)? } else { written };
    }
    report.seconds += start.elapsed().as_secs_f64();
    Ok(())
}

/// Whether `path` names a Parquet output.
fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// The JSON lines file a step writes for the output `path`: `path` itself, or `path.jsonl`
/// beside a Parquet output.
fn jsonl_sink(path: &Path) -> PathBuf {
    if is_parquet(path) {
        let mut name = path.as_os_str().to_owned();
        name.push(".jsonl");
        PathBuf::from(name)
    } else {
        path.to_owned()
    }
}

/// Converts the JSON lines file `jsonl` to the Parquet file `out` (the columns inferred from
/// all lines; only `field` when there are none), which carries its name once complete, and
/// removes `jsonl` (kept, and named in the error, when the conversion fails). Returns the bytes
/// written.
fn jsonl_to_parquet(jsonl: &Path, out: &Path, field: &str) -> Result<u64> {
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use std::io::BufReader;
    use std::sync::Arc;

    let open = || std::fs::File::open(jsonl).map(BufReader::new).map_err(|source| Error::Io { path: jsonl.to_owned(), source });
    // The JSON lines stay where they are on a failure: nothing written is lost.
    let bad = |e: &dyn std::fmt::Display| {
        Error::invalid(format!("{} (converting to Parquet): {e}; the output is kept as JSON lines in {}", out.display(), jsonl.display()))
    };
    let (mut schema, _) = arrow_json::reader::infer_json_schema_from_seekable(open()?, None).map_err(|e| bad(&e))?;
    if schema.fields().is_empty() {
        schema = Schema::new(vec![Field::new(field, DataType::Utf8, true)]);
    }
    let schema = Arc::new(schema);
    let reader = arrow_json::ReaderBuilder::new(schema.clone())
        .with_coerce_primitive(true)
        .with_batch_size(8192)
        .build(open()?)
        .map_err(|e| bad(&e))?;
    let mut w =
        ArrowWriter::try_new(AtomicWriter::create(out)?, schema, Some(crate::data::output::parquet_props())).map_err(|e| bad(&e))?;
    for batch in reader {
        w.write(&batch.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
        // Row groups of about 64 MiB: memory stays bounded whatever the row count.
        if w.in_progress_size() > 64 << 20 {
            w.flush().map_err(|e| bad(&e))?;
        }
    }
    let sink = w.into_inner().map_err(|e| bad(&e))?;
    let written = sink.written;
    sink.finish()?;
    std::fs::remove_file(jsonl).map_err(|source| Error::Io { path: jsonl.to_owned(), source })?;
    Ok(written)
}

/// Replaces the PII of every document (see [`pii`]; the built-in types and the user-supplied
/// entries of `pii_opts`) and writes the corpus.
pub fn pii_files(opts: &CorpusOptions, pii_opts: &pii::PiiOptions, on_progress: &mut dyn FnMut(&Progress)) -> Result<Report> {
    let redactor = pii::Redactor::new(pii_opts)?;
    let mut report = Report::new("pii", opts);
    run_step(
        opts,
        &mut report,
        std::slice::from_ref(&opts.output),
        |text| redactor.redact(text),
        |(text, counts): (Option<String>, pii::Counts), report: &mut Report| {
            for (kind, n) in counts.iter() {
                report.add(redactor.placeholder(kind), n);
            }
            text.map_or(Verdict::Keep, Verdict::Replace)
        },
        on_progress,
    )?;
    Ok(report)
}

/// Keeps the first of a cluster; drops (and counts) a duplicate.
fn keep_or_drop(first: bool, report: &mut Report) -> Verdict {
    if first {
        Verdict::Keep
    } else {
        report.add("duplicates", 1);
        Verdict::Drop
    }
}

/// Where spilled runs go: a temporary directory beside the output.
fn spill_dir(opts: &CorpusOptions) -> &Path {
    crate::utils::atomic_file::parent_dir(&opts.output)
}

/// Runs an exact deduplication step and returns its report: `decide` gets each document's
/// mapped value and `first`, which says whether a unit's hash is the first of its kind in the
/// corpus (asked in input order). One pass while the hashes seen fit in `memory_limit` bytes;
/// past that (or when the output is a pipe, which cannot be taken back), the input is read
/// twice with the same result (see [`dedup::ExactDedup`]).
fn exact_dedup_step<T: Send>(
    opts: &CorpusOptions,
    memory_limit: u64,
    map: impl Fn(&str) -> T + Sync,
    mut decide: impl FnMut(T, &mut Report, &mut dyn FnMut(u128) -> bool) -> Verdict + Send,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Report> {
    let mut pass = |seen: &mut dedup::ExactDedup, report: &mut Report, outputs: &[PathBuf]| {
        let answer = |t: T, report: &mut Report| {
            let verdict = decide(t, report, &mut |h| seen.first(h));
            if seen.stopped() {
                Verdict::Stop
            } else {
                verdict
            }
        };
        run_step(opts, report, outputs, &map, answer, on_progress)
    };
    let output = std::slice::from_ref(&opts.output);
    let mut report = Report::new("dedup", opts);
    if !crate::utils::atomic_file::writes_in_place(&opts.output) {
        let mut seen = dedup::ExactDedup::in_memory(memory_limit);
        pass(&mut seen, &mut report, output)?;
        if !seen.stopped() {
            seen.finish()?;
            return Ok(report);
        }
    }
    let mut seen = dedup::ExactDedup::recording(memory_limit, spill_dir(opts));
    let mut first = Report::new("dedup", opts);
    pass(&mut seen, &mut first, &[])?;
    let runs = seen.runs();
    let mut seen = seen.replay()?;
    let seconds = report.seconds + first.seconds;
    report = Report::new("dedup", opts);
    report.seconds = seconds;
    pass(&mut seen, &mut report, output)?;
    seen.finish()?;
    report.counts.insert("passes".into(), 2);
    if runs > 0 {
        report.counts.insert("hash runs spilled".into(), runs as u64);
    }
    Ok(report)
}

/// Writes the corpus without its duplicates (see [`dedup`]): exact (`near` `None`) or near,
/// with the MinHash options. At most about `memory_limit` bytes of hashes or band keys are held
/// in memory; past that, the input is read twice and the rest spilled in sorted runs to a
/// temporary directory beside the output ([`dedup::ExactDedup`], [`dedup::Lsh`]). Near
/// deduplication always reads the input twice (band keys, then the kept documents).
pub fn dedup_files(
    opts: &CorpusOptions,
    near: Option<&dedup::MinHashOptions>,
    memory_limit: u64,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Report> {
    let mut report = Report::new("dedup", opts);
    match near {
        None => {
            report = exact_dedup_step(
                opts,
                memory_limit,
                dedup::text_hash,
                |h, report: &mut Report, first: &mut dyn FnMut(u128) -> bool| keep_or_drop(first(h), report),
                on_progress,
            )?;
        }
        Some(mh) => {
            mh.check()?;
            let hasher = dedup::MinHasher::new(mh);
            let mut lsh = dedup::Lsh::new(mh, memory_limit, spill_dir(opts));
            let mut failed = None;
            run_step(
                opts,
                &mut report,
                &[],
                |t| hasher.band_keys(t),
                |keys, _: &mut Report| {
                    if failed.is_none() {
                        failed = lsh.add(&keys).err();
                    }
                    Verdict::Keep
                },
                on_progress,
            )?;
            if let Some(e) = failed {
                return Err(e);
            }
            let runs = lsh.runs();
            let cluster_ids = lsh.cluster_ids()?;
            let clusters = dedup::clusters_of_several(&cluster_ids);
            let mut report2 = Report::new("dedup", opts);
            report2.seconds = report.seconds;
            let mut k = 0usize;
            run_step(
                opts,
                &mut report2,
                std::slice::from_ref(&opts.output),
                |_| (),
                |(), report: &mut Report| {
                    // A document the first pass did not see (the input changed) is kept; the
                    // count is checked below.
                    let kept = cluster_ids.get(k).is_none_or(|&first| first as usize == k);
                    k += 1;
                    keep_or_drop(kept, report)
                },
                on_progress,
            )?;
            if k != cluster_ids.len() {
                return Err(Error::invalid(format!(
                    "the input changed between the two passes ({} documents, then {k})",
                    cluster_ids.len()
                )));
            }
            report2.add("clusters", clusters as u64);
            report2.counts.insert("bands".into(), mh.bands as u64);
            report2.counts.insert("rows".into(), mh.rows as u64);
            if runs > 0 {
                report2.counts.insert("key runs spilled".into(), runs as u64);
            }
            report = report2;
        }
    }
    Ok(report)
}

/// Writes the corpus with every line or paragraph (`unit`; see [`dedup::Unit`]) that appeared
/// earlier in the corpus removed; a document left with nothing but blank lines is removed.
/// Units shorter than `min_chars` characters are always kept. Memory as for [`dedup_files`].
pub fn dedup_units_files(
    opts: &CorpusOptions,
    unit: dedup::Unit,
    min_chars: usize,
    memory_limit: u64,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Report> {
    let name = match unit {
        dedup::Unit::Document => return dedup_files(opts, None, memory_limit, on_progress),
        dedup::Unit::Line => "duplicate lines",
        dedup::Unit::Paragraph => "duplicate paragraphs",
    };
    exact_dedup_step(
        opts,
        memory_limit,
        |text| {
            let segments = dedup::segments(text, unit, min_chars);
            // The text only where a unit may be removed.
            let text = segments.iter().any(|s| s.1.is_some()).then(|| text.to_owned());
            (text, segments)
        },
        |(text, segments): (Option<String>, Vec<dedup::Segment>), report: &mut Report, first: &mut dyn FnMut(u128) -> bool| {
            let Some(text) = text else { return Verdict::Keep };
            let mut out = String::new();
            let mut removed = 0;
            for (range, hash) in segments {
                match hash {
                    Some(h) if !first(h) => removed += 1,
                    _ => out.push_str(&text[range]),
                }
            }
            report.add(name, removed);
            if removed == 0 {
                Verdict::Keep
            } else if out.trim().is_empty() {
                report.add("documents emptied", 1);
                Verdict::Drop
            } else {
                Verdict::Replace(out)
            }
        },
        on_progress,
    )
}

/// Cleans every document (see [`clean`]) and writes the corpus without the removed ones.
pub fn clean_files(opts: &CorpusOptions, clean_opts: &clean::CleanOptions, on_progress: &mut dyn FnMut(&Progress)) -> Result<Report> {
    let mut report = Report::new("clean", opts);
    run_step(
        opts,
        &mut report,
        std::slice::from_ref(&opts.output),
        |t| clean::clean(t, clean_opts),
        |cleaned, report: &mut Report| {
            let (verdict, changes) = match cleaned {
                clean::Cleaned::Kept(text, changes) => (text.map_or(Verdict::Keep, Verdict::Replace), changes),
                clean::Cleaned::Removed(rule, changes) => {
                    report.add(&format!("removed: {rule}"), 1);
                    (Verdict::Drop, changes)
                }
            };
            for (name, changed) in changes.iter() {
                report.add(&format!("changed: {name}"), u64::from(changed));
            }
            verdict
        },
        on_progress,
    )?;
    Ok(report)
}

/// Labels, filters and samples documents by language (see [`lang`]).
pub fn lang_files(opts: &CorpusOptions, lang_opts: &lang::LangOptions, on_progress: &mut dyn FnMut(&Progress)) -> Result<Report> {
    lang_opts.check()?;
    let mut report = Report::new("lang", opts);
    let rates = if lang_opts.proportions.is_empty() {
        None
    } else {
        // A first pass counts the documents of each language that pass the filter.
        let mut counts = BTreeMap::<String, u64>::new();
        let mut first = Report::new("lang", opts);
        run_step(
            opts,
            &mut first,
            &[],
            lang::detect,
            |d, _: &mut Report| {
                if lang_opts.passes(&d) {
                    *counts.entry(d.lang.to_owned()).or_default() += 1;
                }
                Verdict::Keep
            },
            on_progress,
        )?;
        report.seconds = first.seconds;
        for l in lang_opts.proportions.keys().filter(|l| !counts.contains_key(*l)) {
            // Its share cannot be met: the others keep theirs relative to each other.
            report.add(&format!("absent: {l}"), 1);
        }
        Some(lang::keep_rates(&lang_opts.proportions, &counts))
    };
    run_step(
        opts,
        &mut report,
        std::slice::from_ref(&opts.output),
        |t| {
            let d = lang::detect(t);
            let sampled = rates.as_ref().is_none_or(|r| dedup::unit_hash(t, lang_opts.seed) < r.get(d.lang).copied().unwrap_or(0.0));
            (d, sampled)
        },
        |(d, sampled), report: &mut Report| {
            report.add(&format!("detected: {}", d.lang), 1);
            if !lang_opts.passes(&d) {
                report.add("removed: filter", 1);
                return Verdict::Drop;
            }
            if !sampled {
                report.add("removed: sampling", 1);
                return Verdict::Drop;
            }
            report.add(&format!("kept: {}", d.lang), 1);
            lang_opts.label_members(&d).map_or(Verdict::Keep, Verdict::Label)
        },
        on_progress,
    )?;
    Ok(report)
}

/// Writes each document to its split (see [`split`]): `DIR/NAME.jsonl` for each split name,
/// `opts.output` being the directory (created if missing).
pub fn split_files(opts: &CorpusOptions, splits: &split::Splits, parquet: bool, on_progress: &mut dyn FnMut(&Progress)) -> Result<Report> {
    std::fs::create_dir_all(&opts.output).map_err(|e| Error::invalid(format!("cannot create {}: {e}", opts.output.display())))?;
    let names: Vec<&str> = splits.names().collect();
    let ext = if parquet { "parquet" } else { "jsonl" };
    let outputs: Vec<PathBuf> = names.iter().map(|n| opts.output.join(format!("{n}.{ext}"))).collect();
    let mut report = Report::new("split", opts);
    run_step(
        opts,
        &mut report,
        &outputs,
        |t| splits.of(t),
        |k, report: &mut Report| {
            report.add(names[k], 1);
            Verdict::To(k)
        },
        on_progress,
    )?;
    Ok(report)
}

/// Statistics of a corpus (nothing written): counts of documents, bytes, characters, words
/// (as [`clean::words`] counts them) and lines; document lengths in characters at the 50th,
/// 90th and 99th percentile and the largest (within 1%: a histogram of ratio 1.01); and with
/// `langs` the documents per language.
pub fn stats_files(opts: &CorpusOptions, langs: bool, on_progress: &mut dyn FnMut(&Progress)) -> Result<Report> {
    let mut report = Report::new("stats", opts);
    report.output = PathBuf::new();
    let mut hist = BTreeMap::<u32, u64>::new();
    let mut longest = 0u64;
    run_step(
        opts,
        &mut report,
        &[],
        |t| {
            let chars = t.chars().count() as u64;
            (chars, clean::words(t).len() as u64, t.lines().count() as u64, langs.then(|| lang::detect(t).lang))
        },
        |(chars, words, lines, lang), report: &mut Report| {
            report.add("characters", chars);
            report.add("words", words);
            report.add("lines", lines);
            if let Some(lang) = lang {
                report.add(&format!("language: {lang}"), 1);
            }
            *hist.entry(length_bucket(chars)).or_default() += 1;
            longest = longest.max(chars);
            Verdict::Keep
        },
        on_progress,
    )?;
    let n = report.documents_in;
    for (name, q) in [("length p50", 0.5), ("length p90", 0.9), ("length p99", 0.99)] {
        let rank = ((n as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        if let Some((&b, _)) = hist.iter().find(|(_, &c)| {
            seen += c;
            seen >= rank
        }) {
            report.counts.insert(name.into(), bucket_length(b).min(longest));
        }
    }
    if n > 0 {
        report.counts.insert("length max".into(), longest);
    }
    Ok(report)
}

/// The histogram bucket of a length: lengths within a ratio of 1.01 share one.
fn length_bucket(len: u64) -> u32 {
    if len < 100 {
        len as u32
    } else {
        100 + ((len as f64 / 100.0).ln() / 1.01f64.ln()) as u32
    }
}

/// The largest length of a bucket.
fn bucket_length(b: u32) -> u64 {
    if b < 100 {
        u64::from(b)
    } else {
        (100.0 * 1.01f64.powi(b as i32 - 100 + 1)).floor() as u64
    }
}

#[cfg(test)]
mod tests;
