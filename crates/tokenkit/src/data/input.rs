//! Dataset input: which files a job reads (files, directories, globs), how each is opened
//! (plain, `.gz`, `.zst`), and the records each yields (a line of text, a whole text file, a
//! JSON line's field, a Parquet row's column), in input order.
//!
//! Every raw record is counted, good or bad, so that a position in the input is one number
//! (the records read so far) that a resumed job skips to.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{Array, LargeStringArray, RecordBatch, StringArray, StringViewArray};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use crate::trainers::MAX_LINE_BYTES;
use crate::{Error, Result};

/// How the documents of a plain text file are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextDocs {
    /// One document per line, without its line ending (`\n` or `\r\n`); blank lines are no
    /// documents (they are counted as empty).
    Line,
    /// The whole file is one document.
    File,
}

/// What a file holds, by its name (after a `.gz` / `.zst` suffix is taken off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Plain text, cut by [`TextDocs`].
    Text,
    /// JSON lines (`.jsonl`, `.ndjson`, `.json`): the document is a string field of each object.
    Jsonl,
    /// Parquet (`.parquet`): the document is a string column of each row.
    Parquet,
}

/// The kind of `path` by its extension.
pub fn file_kind(path: &Path) -> FileKind {
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(&name);
    if name.ends_with(".jsonl") || name.ends_with(".ndjson") || name.ends_with(".json") {
        FileKind::Jsonl
    } else if name.ends_with(".parquet") {
        FileKind::Parquet
    } else {
        FileKind::Text
    }
}

/// The files of `inputs`, in order: a file as given, a directory's files (recursively, sorted
/// by path, hidden ones left out), a glob's matches (sorted). A path that does not exist or a
/// glob that matches nothing is an error.
pub fn expand_inputs(inputs: &[String]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        let path = Path::new(input);
        if !path.exists() && input.contains(['*', '?', '[']) {
            let paths = glob::glob_with(input, glob::MatchOptions { require_literal_leading_dot: true, ..Default::default() })
                .map_err(|e| Error::invalid(format!("{input}: not a valid glob ({e})")))?;
            let mut matched = Vec::new();
            for p in paths {
                let p = p.map_err(|e| Error::Io { path: e.path().to_owned(), source: std::io::Error::other(e.to_string()) })?;
                if p.is_file() {
                    matched.push(p);
                }
            }
            if matched.is_empty() {
                return Err(Error::invalid(format!("{input}: the glob matches no file")));
            }
            matched.sort();
            files.extend(matched);
        } else if path.is_dir() {
            let mut found = Vec::new();
            let hidden = |e: &walkdir::DirEntry| e.depth() > 0 && e.file_name().to_string_lossy().starts_with('.');
            for entry in walkdir::WalkDir::new(path).sort_by_file_name().into_iter().filter_entry(|e| !hidden(e)) {
                let entry = entry.map_err(|e| Error::Io {
                    path: e.path().map_or_else(|| path.to_owned(), Path::to_owned),
                    source: std::io::Error::other(e.to_string()),
                })?;
                if entry.file_type().is_file() {
                    found.push(entry.into_path());
                }
            }
            if found.is_empty() {
                return Err(Error::invalid(format!("{input}: the directory holds no file")));
            }
            files.extend(found);
        } else {
            std::fs::metadata(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
            files.push(path.to_owned());
        }
    }
    Ok(files)
}

/// One raw record of the input.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A document: its text and the values of the kept columns (`None` where absent).
    Doc { text: String, keep: Vec<Option<String>> },
    /// A blank line or an empty text: no document.
    Empty,
    /// A record that could not be read as a document, with `file:line: reason`.
    Bad(String),
}

/// How records are read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// The JSON field / Parquet column that holds the text.
    pub field: String,
    /// How plain text files are cut into documents.
    pub text_docs: TextDocs,
    /// JSON fields / Parquet columns kept beside the ids (Parquet output).
    pub keep: Vec<String>,
}

/// A file opened for reading, through its decompressor; counts the bytes read from disk.
fn open(path: &Path, read: &Arc<AtomicU64>) -> Result<Box<dyn BufRead + Send>> {
    let file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let counted = Counted { inner: file, count: read.clone() };
    let name = path.to_string_lossy().to_lowercase();
    Ok(if name.ends_with(".gz") {
        Box::new(BufReader::with_capacity(1 << 20, flate2::read::MultiGzDecoder::new(BufReader::new(counted))))
    } else if name.ends_with(".zst") {
        let d = zstd::Decoder::new(counted).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        Box::new(BufReader::with_capacity(1 << 20, d))
    } else {
        Box::new(BufReader::with_capacity(1 << 20, counted))
    })
}

/// A reader that adds the bytes it reads to a shared count (the progress bar's input bytes).
struct Counted<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The records of one open file.
enum Source {
    Lines { reader: Box<dyn BufRead + Send>, line: u64, jsonl: bool },
    WholeFile { reader: Option<Box<dyn BufRead + Send>> },
    Parquet(Box<ParquetSource>),
}

struct ParquetSource {
    reader: ParquetRecordBatchReader,
    batch: Option<RecordBatch>,
    row: usize,
    /// Row number in the file (1-based in messages).
    row_in_file: u64,
    /// Bytes of the file credited per row read (the file is read by row groups).
    bytes_per_row: f64,
    credited: f64,
}

/// The records of a list of files, in order.
pub struct Records {
    files: Vec<PathBuf>,
    next_file: usize,
    current: Option<(PathBuf, Source)>,
    options: ReadOptions,
    /// Input bytes read from disk so far (compressed size for compressed files).
    pub bytes_read: Arc<AtomicU64>,
    buf: Vec<u8>,
    /// After a record read from a line: the span of the text field's value in it (JSONL).
    line: Option<Option<Range<usize>>>,
}

/// The line a record was read from, without its line ending, as [`Records::line`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLine {
    /// The line.
    pub line: String,
    /// Where the JSON value of the text field is in `line` (the JSON string with its quotes);
    /// `None` in a text file or for a JSON line without text.
    pub span: Option<Range<usize>>,
}

impl Records {
    /// Records of `files` read with `options`.
    pub fn new(files: Vec<PathBuf>, options: ReadOptions) -> Self {
        Records { files, next_file: 0, current: None, options, bytes_read: Arc::new(AtomicU64::new(0)), buf: Vec::new(), line: None }
    }

    /// The line of the record [`next_record`](Self::next_record) returned last, when it came
    /// from a line of a text or JSONL file and is a document or empty (a bad line may not be
    /// text); `None` for a Parquet row or a whole file.
    pub fn line(&self) -> Option<RawLine> {
        let span = self.line.clone()?;
        let line = std::str::from_utf8(&self.buf).ok()?;
        (line.len() as u64 <= MAX_LINE_BYTES).then(|| RawLine { line: line.to_owned(), span })
    }

    fn open_next(&mut self) -> Result<bool> {
        let Some(path) = self.files.get(self.next_file).cloned() else { return Ok(false) };
        self.next_file += 1;
        let source = match file_kind(&path) {
            FileKind::Parquet => Source::Parquet(Box::new(self.open_parquet(&path)?)),
            FileKind::Jsonl => Source::Lines { reader: open(&path, &self.bytes_read)?, line: 0, jsonl: true },
            FileKind::Text => match self.options.text_docs {
                TextDocs::Line => Source::Lines { reader: open(&path, &self.bytes_read)?, line: 0, jsonl: false },
                TextDocs::File => Source::WholeFile { reader: Some(open(&path, &self.bytes_read)?) },
            },
        };
        self.current = Some((path, source));
        Ok(true)
    }

    fn open_parquet(&self, path: &Path) -> Result<ParquetSource> {
        let pq = |e: parquet::errors::ParquetError| Error::invalid(format!("{}: {e}", path.display()));
        let file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        let size = file.metadata().map_err(|source| Error::Io { path: path.to_owned(), source })?.len();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(pq)?;
        let rows = builder.metadata().file_metadata().num_rows().max(1) as f64;
        let schema = builder.schema().clone();
        for name in std::iter::once(&self.options.field).chain(&self.options.keep) {
            if schema.column_with_name(name).is_none() {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                return Err(Error::invalid(format!("{}: no column `{name}` (the columns are: {})", path.display(), names.join(", "))));
            }
        }
        for name in &self.options.keep {
            let t = schema.field_with_name(name).expect("checked above").data_type();
            if !keepable(t) {
                return Err(Error::invalid(format!(
                    "{}: column `{name}` is {t}; kept columns are strings, integers, floats or booleans",
                    path.display()
                )));
            }
        }
        let reader = builder.with_batch_size(1024).build().map_err(pq)?;
        Ok(ParquetSource { reader, batch: None, row: 0, row_in_file: 0, bytes_per_row: size as f64 / rows, credited: 0.0 })
    }

    /// The next record, `None` at the end of the input. Errors are failures to read a file
    /// (missing, unreadable, not Parquet); a record that is not a document is [`Record::Bad`].
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            if self.current.is_none() && !self.open_next()? {
                return Ok(None);
            }
            let (path, source) = self.current.as_mut().expect("a file is open");
            self.line = None;
            let record = match source {
                Source::Lines { reader, line, jsonl } => {
                    self.buf.clear();
                    let n = reader
                        .by_ref()
                        .take(MAX_LINE_BYTES + 1)
                        .read_until(b'\n', &mut self.buf)
                        .map_err(|source| Error::Io { path: path.clone(), source })?;
                    if n == 0 {
                        None
                    } else {
                        *line += 1;
                        let at = Location { path, line: *line };
                        let (record, span) = line_record(&mut self.buf, at, *jsonl, &self.options);
                        self.line = Some(span);
                        Some(record)
                    }
                }
                Source::WholeFile { reader } => match reader.take() {
                    None => None,
                    Some(mut r) => {
                        self.buf.clear();
                        r.read_to_end(&mut self.buf).map_err(|source| Error::Io { path: path.clone(), source })?;
                        Some(match std::str::from_utf8(&self.buf) {
                            Ok("") => Record::Empty,
                            Ok(t) => Record::Doc { text: t.to_owned(), keep: Vec::new() },
                            Err(e) => Record::Bad(format!("{}: invalid UTF-8 ({e})", path.display())),
                        })
                    }
                },
                Source::Parquet(p) => parquet_record(p, path, &self.options, &self.bytes_read)?,
            };
            match record {
                Some(r) => return Ok(Some(r)),
                None => self.current = None,
            }
        }
    }
}

/// Records in a chunk at most (blank lines weigh nothing).
pub const CHUNK_RECORDS: usize = 1 << 16;

/// Cuts a stream of items (each with its text bytes) into chunks that end after `chunk_bytes`
/// text bytes or [`CHUNK_RECORDS`] items, so that the cuts depend on the input only, after
/// skipping the first `skip` items (those a resumed job has).
pub struct Chunks<F> {
    next: F,
    skip: u64,
    chunk_bytes: usize,
}

impl<T, F: FnMut() -> Result<Option<(T, usize)>>> Chunks<F> {
    /// The chunks of the items `next` gives (`None` at their end).
    pub fn new(next: F, skip: u64, chunk_bytes: usize) -> Self {
        Chunks { next, skip, chunk_bytes: chunk_bytes.max(1) }
    }

    /// The next chunk; `None` at the end of the items.
    pub fn next_chunk(&mut self) -> Result<Option<Vec<T>>> {
        let mut chunk = Vec::new();
        let mut bytes = 0;
        while let Some((item, len)) = (self.next)()? {
            if self.skip > 0 {
                self.skip -= 1;
                continue;
            }
            bytes += len;
            chunk.push(item);
            if bytes >= self.chunk_bytes || chunk.len() >= CHUNK_RECORDS {
                break;
            }
        }
        Ok((!chunk.is_empty()).then_some(chunk))
    }

    /// The reader's side of a job on its own thread: sends the chunks to `tx`; stops after an
    /// error (sent) or when the receiver is gone.
    pub fn send(mut self, tx: &std::sync::mpsc::SyncSender<Result<Vec<T>>>) {
        loop {
            let (next, end) = match self.next_chunk() {
                Ok(Some(chunk)) => (Ok(chunk), false),
                Ok(None) => return,
                Err(e) => (Err(e), true),
            };
            if tx.send(next).is_err() || end {
                return;
            }
        }
    }
}

/// The text bytes of a record (0 for a record that is no document).
pub fn text_len(r: &Record) -> usize {
    match r {
        Record::Doc { text, .. } => text.len(),
        _ => 0,
    }
}

/// Where a line is, for the reason a record is bad; written out only then.
#[derive(Clone, Copy)]
struct Location<'a> {
    path: &'a Path,
    line: u64,
}

impl std::fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// The record of one line (`buf`, with its line ending) of a text or JSONL file, and the byte
/// range, in the line without its ending, of the JSON value of the text field (JSONL documents).
fn line_record(buf: &mut Vec<u8>, at: Location, jsonl: bool, options: &ReadOptions) -> (Record, Option<Range<usize>>) {
    if buf.len() as u64 > MAX_LINE_BYTES {
        return (Record::Bad(format!("{at}: a line longer than {MAX_LINE_BYTES} bytes")), None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    let line = match std::str::from_utf8(buf) {
        Ok(l) => l,
        Err(e) => return (Record::Bad(format!("{at}: invalid UTF-8 ({e})")), None),
    };
    if line.trim().is_empty() {
        return (Record::Empty, None);
    }
    if !jsonl {
        return (Record::Doc { text: line.to_owned(), keep: Vec::new() }, None);
    }
    match json_fields(line, options) {
        Ok((record, span)) => (record, span),
        Err(why) => (Record::Bad(format!("{at}: {why}")), None),
    }
}

/// A JSON object's key, borrowed from the line when it has no escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(v.to_owned().into()))
            }
        }
        d.deserialize_str(V)
    }
}

/// The raw JSON values of the text field and of the kept fields of one JSON object (the last
/// one of a repeated key, as a parsed object has), the other values checked and skipped.
struct Pick<'o>(&'o ReadOptions);

impl<'de> serde::de::Visitor<'de> for Pick<'_> {
    type Value = Vec<Option<&'de serde_json::value::RawValue>>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut values = vec![None; 1 + self.0.keep.len()];
        while let Some(Key(k)) = map.next_key::<Key>()? {
            let slot = if *k == *self.0.field { Some(0) } else { self.0.keep.iter().position(|f| *f == *k).map(|p| p + 1) };
            match slot {
                Some(s) => values[s] = Some(map.next_value()?),
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(values)
    }
}

/// The record of one JSON line: its text field (unescaped) and kept fields, and the byte range
/// of the text field's JSON value in `line`; `Err` with the reason for a bad line.
fn json_fields(line: &str, options: &ReadOptions) -> std::result::Result<(Record, Option<Range<usize>>), String> {
    use serde::Deserializer as _;
    let mut de = serde_json::Deserializer::from_str(line);
    let values = match de.deserialize_map(Pick(options)).and_then(|v| de.end().map(|()| v)) {
        Ok(v) => v,
        // Valid JSON that is no object, or invalid JSON (the syntax error of a full parse).
        Err(_) => {
            return Err(match serde_json::from_str::<serde::de::IgnoredAny>(line) {
                Ok(_) => "not a JSON object".to_owned(),
                Err(e) => format!("invalid JSON ({e})"),
            })
        }
    };
    let keep = (options.keep.iter().zip(&values[1..]))
        .map(|(name, v)| {
            // The text field kept as a column too: the key went to the text's slot.
            let v = if *name == options.field { &values[0] } else { v };
            let v = v.map(|r| serde_json::from_str::<serde_json::Value>(r.get()).expect("checked by the parse"));
            match v {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(s)) => Some(s),
                Some(other) => Some(other.to_string()),
            }
        })
        .collect();
    let Some(raw) = values[0] else { return Err(format!("no field `{}`", options.field)) };
    let raw = raw.get();
    let text: String = match raw.as_bytes() {
        // A JSON string without escapes is its bytes between the quotes (checked by the parse).
        [b'"', inner @ .., b'"'] if memchr::memchr(b'\\', inner).is_none() => raw[1..raw.len() - 1].to_owned(),
        [b'"', ..] => serde_json::from_str(raw).expect("checked by the parse"),
        _ => return Err(format!("field `{}` is not a string", options.field)),
    };
    if text.is_empty() {
        return Ok((Record::Empty, None));
    }
    let start = raw.as_ptr() as usize - line.as_ptr() as usize;
    Ok((Record::Doc { text, keep }, Some(start..start + raw.len())))
}

/// The string at `row` of a string column of any arrow string type; `Err` for another type.
fn string_at(column: &dyn Array, row: usize) -> std::result::Result<Option<&str>, String> {
    if column.is_null(row) {
        return Ok(None);
    }
    let any = column.as_any();
    if let Some(a) = any.downcast_ref::<StringArray>() {
        Ok(Some(a.value(row)))
    } else if let Some(a) = any.downcast_ref::<LargeStringArray>() {
        Ok(Some(a.value(row)))
    } else if let Some(a) = any.downcast_ref::<StringViewArray>() {
        Ok(Some(a.value(row)))
    } else {
        Err(format!("{}", column.data_type()))
    }
}

/// A kept column's value as text: strings as they are, numbers and booleans as their
/// decimal / `true`/`false` text (other types are refused when the file is opened).
fn kept_value(column: &dyn Array, row: usize) -> Option<String> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    use arrow_schema::DataType as T;
    if column.is_null(row) {
        return None;
    }
    Some(match column.data_type() {
        T::Boolean => column.as_boolean().value(row).to_string(),
        T::Int8 => column.as_primitive::<Int8Type>().value(row).to_string(),
        T::Int16 => column.as_primitive::<Int16Type>().value(row).to_string(),
        T::Int32 => column.as_primitive::<Int32Type>().value(row).to_string(),
        T::Int64 => column.as_primitive::<Int64Type>().value(row).to_string(),
        T::UInt8 => column.as_primitive::<UInt8Type>().value(row).to_string(),
        T::UInt16 => column.as_primitive::<UInt16Type>().value(row).to_string(),
        T::UInt32 => column.as_primitive::<UInt32Type>().value(row).to_string(),
        T::UInt64 => column.as_primitive::<UInt64Type>().value(row).to_string(),
        T::Float32 => column.as_primitive::<Float32Type>().value(row).to_string(),
        T::Float64 => column.as_primitive::<Float64Type>().value(row).to_string(),
        _ => string_at(column, row).ok()??.to_owned(),
    })
}

/// Whether [`kept_value`] can read a column of type `t`.
fn keepable(t: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType as T;
    matches!(
        t,
        T::Boolean
            | T::Int8
            | T::Int16
            | T::Int32
            | T::Int64
            | T::UInt8
            | T::UInt16
            | T::UInt32
            | T::UInt64
            | T::Float32
            | T::Float64
            | T::Utf8
            | T::LargeUtf8
            | T::Utf8View
    )
}

fn parquet_record(p: &mut ParquetSource, path: &Path, options: &ReadOptions, read: &AtomicU64) -> Result<Option<Record>> {
    loop {
        if let Some(batch) = &p.batch {
            if p.row < batch.num_rows() {
                let row = p.row;
                p.row += 1;
                p.row_in_file += 1;
                p.credited += p.bytes_per_row;
                if p.credited >= 1.0 {
                    read.fetch_add(p.credited as u64, Ordering::Relaxed);
                    p.credited -= p.credited.floor();
                }
                let text_col = batch.column_by_name(&options.field).expect("checked when opened");
                let text = match string_at(text_col.as_ref(), row) {
                    Ok(Some("")) => return Ok(Some(Record::Empty)),
                    Ok(Some(t)) => t.to_owned(),
                    Ok(None) => {
                        return Ok(Some(Record::Bad(format!(
                            "{} row {}: column `{}` is null",
                            path.display(),
                            p.row_in_file,
                            options.field
                        ))))
                    }
                    Err(ty) => {
                        return Err(Error::invalid(format!("{}: column `{}` is {ty}, not a string column", path.display(), options.field)))
                    }
                };
                let keep =
                    options.keep.iter().map(|k| kept_value(batch.column_by_name(k).expect("checked when opened").as_ref(), row)).collect();
                return Ok(Some(Record::Doc { text, keep }));
            }
        }
        match p.reader.next() {
            None => return Ok(None),
            Some(Ok(batch)) => {
                p.batch = Some(batch);
                p.row = 0;
            }
            Some(Err(e)) => return Err(Error::invalid(format!("{}: {e}", path.display()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tokenkit-data-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn all(files: Vec<PathBuf>, options: ReadOptions) -> Vec<Record> {
        let mut r = Records::new(files, options);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            out.push(rec);
        }
        out
    }

    fn opts(text_docs: TextDocs, keep: &[&str]) -> ReadOptions {
        ReadOptions { field: "text".into(), text_docs, keep: keep.iter().map(|s| s.to_string()).collect() }
    }

    fn doc(t: &str) -> Record {
        Record::Doc { text: t.into(), keep: vec![] }
    }

    #[test]
    fn text_lines_files_and_compression_read_the_same() {
        let d = temp_dir("text");
        let text = "first line\r\n\nsecond\nthird without end";
        std::fs::write(d.join("a.txt"), text).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
        std::fs::write(d.join("b.txt.gz"), gz.finish().unwrap()).unwrap();
        std::fs::write(d.join("c.txt.zst"), zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
        let lines = vec![doc("first line"), Record::Empty, doc("second"), doc("third without end")];
        for name in ["a.txt", "b.txt.gz", "c.txt.zst"] {
            assert_eq!(all(vec![d.join(name)], opts(TextDocs::Line, &[])), lines, "{name}");
            assert_eq!(all(vec![d.join(name)], opts(TextDocs::File, &[])), vec![doc(text)], "{name}");
        }
        // A directory: its files sorted, hidden ones left out; a glob likewise.
        std::fs::write(d.join(".hidden.txt"), "x").unwrap();
        let names = |v: Vec<PathBuf>| v.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect::<Vec<_>>();
        assert_eq!(names(expand_inputs(&[d.display().to_string()]).unwrap()), ["a.txt", "b.txt.gz", "c.txt.zst"]);
        assert_eq!(names(expand_inputs(&[format!("{}/*.t*t*", d.display())]).unwrap()), ["a.txt", "b.txt.gz", "c.txt.zst"]);
        let e = expand_inputs(&[format!("{}/*.nothing", d.display())]).unwrap_err().to_string();
        assert!(e.contains("matches no file"), "{e}");
        let e = expand_inputs(&[d.join("missing.txt").display().to_string()]).unwrap_err().to_string();
        assert!(e.contains("missing.txt"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn json_fields_are_what_the_parsed_object_holds() {
        // The oracle: the whole line parsed into a `serde_json::Value`.
        let options =
            ReadOptions { field: "text".into(), text_docs: TextDocs::Line, keep: vec!["id".into(), "text".into(), "meta".into()] };
        let lines = [
            r#"{"text": "a", "id": 7}"#,
            r#"{"id": 1, "text": "first", "text": "last", "id": {"deep": [1, 2, {"x": null}]}}"#,
            r#"{"te\u0078t": "escaped key", "m\u0065ta": "m", "other": [[[]]], "id": null}"#,
            r#"{"text": "tab\t\"quoted\" \ud83d\ude00 \\", "meta": 1.5e3, "more": {"text": "nested, not the field"}}"#,
            r#"{"text": "ünïcödé 文字", "meta": true}"#,
        ];
        let as_kept = |v: Option<&serde_json::Value>| match v {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        for line in lines {
            let (record, span) = json_fields(line, &options).unwrap();
            let serde_json::Value::Object(obj) = serde_json::from_str::<serde_json::Value>(line).unwrap() else { panic!() };
            let text = obj["text"].as_str().unwrap().to_owned();
            let keep = options.keep.iter().map(|k| as_kept(obj.get(k))).collect();
            assert_eq!(record, Record::Doc { text: text.clone(), keep }, "{line}");
            let span = span.unwrap();
            assert_eq!(serde_json::from_str::<String>(&line[span]).unwrap(), text, "{line}");
        }
        for (line, want) in [
            (r#"{"text": 3}"#, "field `text` is not a string"),
            ("{}", "no field `text`"),
            ("[1]", "not a JSON object"),
            ("\"s\"", "not a JSON object"),
            ("{\"text\": }", "invalid JSON"),
            ("{} x", "invalid JSON"),
        ] {
            let e = json_fields(line, &options).err().unwrap_or_else(|| panic!("{line}"));
            assert!(e.starts_with(want), "{line}: {e}");
        }
    }

    #[test]
    fn jsonl_bad_lines_are_records_that_name_the_line() {
        let d = temp_dir("jsonl");
        let p = d.join("x.jsonl");
        std::fs::write(&p, b"{\"text\": \"a\", \"id\": 7}\nnot json\n{\"text\": 3}\n{\"other\": \"b\"}\n\n{\"text\": \"\"}\n[1]\n{\"text\": \"\xff\"}\n{\"text\": \"c\", \"id\": \"s\"}\n").unwrap();
        let got = all(vec![p.clone()], opts(TextDocs::Line, &["id"]));
        let bad = |k: usize| match &got[k] {
            Record::Bad(m) => m.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(got[0], Record::Doc { text: "a".into(), keep: vec![Some("7".into())] });
        assert!(bad(1).contains("x.jsonl:2: invalid JSON"), "{}", bad(1));
        assert!(bad(2).contains(":3: field `text` is not a string"), "{}", bad(2));
        assert!(bad(3).contains(":4: no field `text`"), "{}", bad(3));
        assert_eq!(got[4], Record::Empty);
        assert_eq!(got[5], Record::Empty);
        assert!(bad(6).contains(":7: not a JSON object"), "{}", bad(6));
        assert!(bad(7).contains(":8: invalid UTF-8"), "{}", bad(7));
        assert_eq!(got[8], Record::Doc { text: "c".into(), keep: vec![Some("s".into())] });
        assert_eq!(got.len(), 9);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
