//! Training input (text files, JSONL files, iterators) and parallel word counting.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use ahash::AHashMap;
use rayon::prelude::*;

use super::{Progress, Stage, WordCounts};
use crate::{Error, Result};

/// Sequences are handed to the workers in batches of about this many bytes (a batch is held
/// in memory while it is counted: small enough not to weigh on small trainings' peak memory,
/// large enough to give every worker many sequences).
const BATCH_BYTES: usize = 1 << 20;

/// The longest line read from a training file, in bytes (256 MiB). A line is one sequence and
/// is held whole in memory, so without a bound a file with no line breaks (`/dev/zero`, a
/// binary file given by mistake) would grow one buffer until the process aborts.
pub const MAX_LINE_BYTES: u64 = 1 << 28;

/// Where the training text comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum TrainInput {
    /// UTF-8 text files; each line, with its line ending, is one sequence (HF's `train`).
    Files(Vec<PathBuf>),
    /// JSON lines files: each non-blank line is a JSON object whose `field` is a string, one
    /// sequence. Lines that are not JSON, not objects, or lack the field as a string are
    /// skipped and counted ([`InputStats::skipped`]), or are an error with `strict`.
    Jsonl {
        /// The files.
        files: Vec<PathBuf>,
        /// The name of the text field.
        field: String,
        /// Whether a bad line is an error instead of a skip.
        strict: bool,
    },
}

impl TrainInput {
    /// The same input (format and options) over other files.
    pub fn with_files(&self, files: Vec<PathBuf>) -> TrainInput {
        match self {
            TrainInput::Files(_) => TrainInput::Files(files),
            TrainInput::Jsonl { field, strict, .. } => TrainInput::Jsonl { files, field: field.clone(), strict: *strict },
        }
    }

    /// The files read.
    pub fn files(&self) -> &[PathBuf] {
        match self {
            TrainInput::Files(f) | TrainInput::Jsonl { files: f, .. } => f,
        }
    }
}

/// What was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputStats {
    /// Sequences counted.
    pub sequences: u64,
    /// Bytes of input read (files) or of sequences given (iterators).
    pub bytes: u64,
    /// JSONL lines skipped because they were invalid or lacked the field.
    pub skipped: u64,
    /// The first few skipped lines, as `file:line: reason`.
    pub skip_examples: Vec<String>,
}

/// How many skip reasons are kept in [`InputStats::skip_examples`].
const MAX_SKIP_EXAMPLES: usize = 5;

impl InputStats {
    /// Adds what `other` read.
    pub fn add(&mut self, other: InputStats) {
        self.sequences += other.sequences;
        self.bytes += other.bytes;
        self.skipped += other.skipped;
        let room = MAX_SKIP_EXAMPLES.saturating_sub(self.skip_examples.len());
        self.skip_examples.extend(other.skip_examples.into_iter().take(room));
    }
}

/// Counts the words of `sequences` with `split` (which calls its callback once per word of a
/// sequence), in parallel batches. Reports [`Stage::CountWords`] progress in bytes.
pub fn count_words<I, S, F>(sequences: I, split: &F, progress: &dyn Progress) -> Result<(WordCounts, u64)>
where
    I: Iterator<Item = Result<S>>,
    S: AsRef<str> + Send + Sync,
    F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
{
    let mut counts = WordCounts::default();
    let n = count_batches(sequences, split, progress, |batch| {
        add_counts(&mut counts, batch);
        Ok(())
    })?;
    Ok((counts, n))
}

/// Adds one batch's counts into `counts` (the smaller map into the larger).
pub fn add_counts(counts: &mut WordCounts, mut batch: WordCounts) {
    if counts.len() < batch.len() {
        std::mem::swap(counts, &mut batch);
    }
    for (w, c) in batch {
        *counts.entry(w).or_insert(0) += c;
    }
}

/// [`count_words`] handing each batch's counts to `add` (which may keep them in memory or
/// spill them); returns the number of sequences.
pub(crate) fn count_batches<I, S, F>(
    sequences: I,
    split: &F,
    progress: &dyn Progress,
    mut add: impl FnMut(WordCounts) -> Result<()>,
) -> Result<u64>
where
    I: Iterator<Item = Result<S>>,
    S: AsRef<str> + Send + Sync,
    F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
{
    let mut batch: Vec<S> = Vec::new();
    let mut n = 0u64;
    let mut sequences = sequences.peekable();
    while sequences.peek().is_some() {
        batch.clear();
        let mut batch_bytes = 0;
        for s in sequences.by_ref() {
            let s = s?;
            batch_bytes += s.as_ref().len() + 16;
            batch.push(s);
            if batch_bytes >= BATCH_BYTES {
                break;
            }
        }
        n += batch.len() as u64;
        add(count_batch(&batch, split)?)?;
        progress.inc(batch.iter().map(|s| s.as_ref().len() as u64).sum());
    }
    Ok(n)
}

/// Counts one batch: each worker fills its own map, then the maps are added up.
fn count_batch<S, F>(batch: &[S], split: &F) -> Result<WordCounts>
where
    S: AsRef<str> + Sync,
    F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
{
    let chunk = (batch.len() / (rayon::current_num_threads() * 8)).max(1);
    batch
        .par_chunks(chunk)
        .map(|seqs| {
            let mut m: WordCounts = AHashMap::new();
            for s in seqs {
                split(s.as_ref(), &mut |w: &str| match m.get_mut(w) {
                    Some(c) => *c += 1,
                    None => {
                        m.insert(w.to_owned(), 1);
                    }
                })?;
            }
            Ok(m)
        })
        .try_reduce(AHashMap::new, |mut a, b| {
            add_counts(&mut a, b);
            Ok(a)
        })
}

/// The total size of `files` in bytes, for the progress bar.
pub(crate) fn total_size(files: &[PathBuf]) -> Result<u64> {
    files.iter().try_fold(0, |acc, f| {
        let m = std::fs::metadata(f).map_err(|source| Error::Io { path: f.clone(), source })?;
        Ok(acc + m.len())
    })
}

/// Reads the lines of text files, keeping line endings, failing on invalid UTF-8 with the file
/// and line number.
pub(crate) struct LineReader<'a> {
    files: std::slice::Iter<'a, PathBuf>,
    current: Option<(BufReader<File>, &'a Path, u64)>,
    jsonl: Option<(&'a str, bool)>,
    stats: &'a mut InputStats,
    buf: Vec<u8>,
    /// [`MAX_LINE_BYTES`], smaller in tests.
    max_line: u64,
}

impl<'a> LineReader<'a> {
    /// Lines of `input`; skipped JSONL lines are counted into `stats`.
    pub(crate) fn new(input: &'a TrainInput, stats: &'a mut InputStats) -> Self {
        let jsonl = match input {
            TrainInput::Files(_) => None,
            TrainInput::Jsonl { field, strict, .. } => Some((field.as_str(), *strict)),
        };
        Self { files: input.files().iter(), current: None, jsonl, stats, buf: Vec::new(), max_line: MAX_LINE_BYTES }
    }

    fn skip(&mut self, path: &Path, line: u64, reason: String) -> Result<()> {
        let msg = format!("{}:{line}: {reason}", path.display());
        if self.jsonl.is_some_and(|(_, strict)| strict) {
            return Err(Error::invalid(msg));
        }
        self.stats.skipped += 1;
        if self.stats.skip_examples.len() < MAX_SKIP_EXAMPLES {
            self.stats.skip_examples.push(msg);
        }
        Ok(())
    }

    /// The text of one JSONL line, `None` when it is skipped.
    fn jsonl_text(&mut self, path: &Path, line_no: u64, line: &str, field: &str) -> Result<Option<String>> {
        let value: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                self.skip(path, line_no, format!("invalid JSON ({e})"))?;
                return Ok(None);
            }
        };
        match value.get(field) {
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => {
                self.skip(path, line_no, format!("field `{field}` is not a string"))?;
                Ok(None)
            }
            None => {
                self.skip(path, line_no, format!("no field `{field}`"))?;
                Ok(None)
            }
        }
    }
}

impl Iterator for LineReader<'_> {
    type Item = Result<String>;

    fn next(&mut self) -> Option<Result<String>> {
        loop {
            if self.current.is_none() {
                let path = self.files.next()?;
                match File::open(path) {
                    Ok(f) => self.current = Some((BufReader::with_capacity(1 << 20, f), path.as_path(), 0)),
                    Err(source) => return Some(Err(Error::Io { path: path.clone(), source })),
                }
            }
            let (reader, path, line_no) = self.current.as_mut()?;
            let path: &Path = path;
            self.buf.clear();
            match reader.by_ref().take(self.max_line + 1).read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.current = None;
                    continue;
                }
                Ok(_) => {}
                Err(source) => return Some(Err(Error::Io { path: path.to_owned(), source })),
            }
            *line_no += 1;
            let line_no = *line_no;
            if self.buf.len() as u64 > self.max_line {
                return Some(Err(Error::invalid(format!(
                    "{}:{line_no}: a line longer than {} bytes; training reads one sequence per line, so long \
                     texts must be split into lines",
                    path.display(),
                    self.max_line
                ))));
            }
            self.stats.bytes += self.buf.len() as u64;
            let line = match std::str::from_utf8(&self.buf) {
                Ok(l) => l,
                Err(e) => return Some(Err(Error::invalid(format!("{}:{line_no}: invalid UTF-8 ({e})", path.display())))),
            };
            let text = match self.jsonl {
                None => line.to_owned(),
                Some((field, _)) => {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let line = line.to_owned();
                    match self.jsonl_text(path, line_no, &line, field) {
                        Ok(Some(t)) => t,
                        Ok(None) => continue,
                        Err(e) => return Some(Err(e)),
                    }
                }
            };
            self.stats.sequences += 1;
            return Some(Ok(text));
        }
    }
}

/// Progress stage wrapper so [`count_words`] callers start and finish the stage.
pub(crate) fn with_stage<T>(progress: &dyn Progress, stage: Stage, total: Option<u64>, f: impl FnOnce() -> T) -> T {
    progress.start(stage, total);
    let r = f();
    progress.finish(stage);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_bound_is_an_error_naming_the_file_and_line() {
        let path = std::env::temp_dir().join(format!("tokenkit-long-line-{}.txt", std::process::id()));
        std::fs::write(&path, "short\nexactly 16 bytes\n0123456789abcdefX\n").unwrap();
        let input = TrainInput::Files(vec![path.clone()]);
        let mut stats = InputStats::default();
        let mut reader = LineReader::new(&input, &mut stats);
        reader.max_line = 17;
        assert_eq!(reader.next().unwrap().unwrap(), "short\n");
        assert_eq!(reader.next().unwrap().unwrap(), "exactly 16 bytes\n");
        let e = reader.next().unwrap().unwrap_err().to_string();
        assert!(e.contains(&format!("{}:3: a line longer than 17 bytes", path.display())), "{e}");
        std::fs::remove_file(&path).unwrap();
    }

    /// A file that never ends a line: an error after `MAX_LINE_BYTES`, not an abort.
    #[cfg(target_os = "linux")]
    #[test]
    fn dev_zero_is_an_error() {
        let input = TrainInput::Files(vec!["/dev/zero".into()]);
        let mut stats = InputStats::default();
        let mut reader = LineReader::new(&input, &mut stats);
        reader.max_line = 1 << 20;
        let e = reader.next().unwrap().unwrap_err().to_string();
        assert!(e.contains("/dev/zero:1: a line longer than 1048576 bytes"), "{e}");
    }
}
