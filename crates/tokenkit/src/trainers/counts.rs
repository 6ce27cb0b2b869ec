//! Word counts in bounded memory: counted in a hash map while it fits in its budget, spilled to
//! sorted runs on disk (a [`SortedRuns`] of `(word, count)` records) when it does not, and merged
//! back in word order, equal words summed. The counts are the same whatever the budget: it only
//! decides how many runs there are.
//!
//! What the trainers get is still a [`WordCounts`] in memory (they need every distinct word).
//! [`MemoryLimit`] bounds it too: the words are kept while their training would fit in the
//! limit; past it training stops with an error, or, if the caller allows it, the rarest words
//! are dropped (all words seen fewer than `n` times, `n` the smallest count that fits), an
//! approximation the caller is told about.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::WordCounts;
use crate::utils::byte_size::ByteSize;
use crate::utils::sorted_runs::{Record, Sorted, SortedRuns};
use crate::{Error, Result};

/// The memory of one entry of a [`WordCounts`] map, beyond its word's bytes: the `(String, u64)`
/// bucket (32 bytes) at the table's load between 7/16 and 7/8, its control byte, and the
/// word's allocation rounded up.
const MAP_ENTRY_BYTES: u64 = 64;

/// Peak memory of training per byte of the word map it trains on ([`map_memory`]), the largest
/// measured with `tokenkit train` (peak RSS over the map's memory): byte-level BPE 30k on 100 MB
/// with 1.2M distinct words 3.6 (331 MiB for 91 MiB of map); on 30 MB of whitespace-split words
/// (1.2M distinct, 88 MiB of map) BPE 8k 5.0, WordPiece 8k 5.0, Unigram 8k 5.4. The trainers build
/// their own tables from the words (symbol ids, pair counts and positions, Unigram's lattices).
const TRAINING_PER_MAP_BYTE: u64 = 6;

/// The share of the limit the counting map may fill before it is spilled (draining it into a
/// run holds the records beside the map's table for a moment).
const COUNTING_SHARE: (u64, u64) = (1, 2);

/// The memory `word` takes as a key of a [`WordCounts`] map.
pub fn map_memory(word: &str) -> u64 {
    MAP_ENTRY_BYTES + word.len() as u64
}

/// How much memory counting and training may use, and what to do when the words do not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLimit {
    /// The limit, in bytes.
    pub bytes: u64,
    /// Where the spilled runs go (a temporary directory is made inside it and removed).
    pub spill_dir: PathBuf,
    /// When the distinct words do not fit, drop the rarest instead of failing.
    pub prune: bool,
}

/// What a limit dropped: every word seen fewer than `below` times.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Words seen fewer times than this were dropped (0: nothing was).
    pub below: u64,
    /// Distinct words dropped.
    pub words: u64,
    /// Their occurrences.
    pub occurrences: u64,
}

/// A word and its count, ordered by word (then count): the record of the counts' runs. On disk:
/// the word's length (LEB128), its bytes, the count (LEB128).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WordCount {
    /// The word.
    pub word: String,
    /// How many times it was seen.
    pub count: u64,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The next LEB128 number of `input`; `None` at its end before the first byte.
fn read_varint(input: &mut impl BufRead) -> std::io::Result<Option<u64>> {
    let mut v = 0u64;
    for i in 0..10 {
        let mut byte = [0u8];
        if input.read(&mut byte)? == 0 {
            if i == 0 {
                return Ok(None);
            }
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "a count run ends inside a number"));
        }
        v |= u64::from(byte[0] & 0x7f) << (7 * i);
        if byte[0] < 0x80 {
            return Ok(Some(v));
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "a number of more than 64 bits in a count run"))
}

impl Record for WordCount {
    fn put(&self, out: &mut Vec<u8>) {
        put_varint(out, self.word.len() as u64);
        out.extend_from_slice(self.word.as_bytes());
        put_varint(out, self.count);
    }

    fn read(input: &mut impl BufRead) -> std::io::Result<Option<Self>> {
        let Some(len) = read_varint(input)? else { return Ok(None) };
        let mut word = vec![0u8; usize::try_from(len).map_err(|_| std::io::ErrorKind::InvalidData)?];
        input.read_exact(&mut word)?;
        let word = String::from_utf8(word).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        let count = read_varint(input)?.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        Ok(Some(WordCount { word, count }))
    }

    fn memory(&self) -> usize {
        std::mem::size_of::<Self>() + self.word.capacity()
    }
}

/// Word counts gathered under a memory budget ([`add`](Self::add) each batch's counts, then
/// [`finish`](Self::finish)).
#[derive(Debug)]
pub struct BoundedCounts {
    counts: WordCounts,
    /// The map's memory by [`map_memory`].
    memory: u64,
    budget: u64,
    dir: PathBuf,
    runs: Option<SortedRuns<WordCount>>,
}

impl BoundedCounts {
    /// Counts holding at most `limit`'s counting share in memory, spilling into `limit.spill_dir`.
    pub fn new(limit: &MemoryLimit) -> Self {
        let budget = limit.bytes / COUNTING_SHARE.1 * COUNTING_SHARE.0;
        BoundedCounts { counts: WordCounts::default(), memory: 0, budget, dir: limit.spill_dir.clone(), runs: None }
    }

    /// Adds one batch's counts, spilling the map to a run when it passes the budget.
    pub fn add(&mut self, batch: WordCounts) -> Result<()> {
        if self.counts.is_empty() && self.runs.is_none() {
            self.memory = batch.keys().map(|w| map_memory(w)).sum();
            self.counts = batch;
        } else {
            for (word, count) in batch {
                match self.counts.get_mut(&word) {
                    Some(c) => *c += count,
                    None => {
                        self.memory += map_memory(&word);
                        self.counts.insert(word, count);
                    }
                }
            }
        }
        if self.memory > self.budget {
            let runs = self.runs.get_or_insert_with(|| SortedRuns::new(1, u64::MAX, &self.dir));
            for (word, count) in self.counts.drain() {
                runs.push(0, WordCount { word, count })?;
            }
            runs.flush()?;
            self.memory = 0;
        }
        Ok(())
    }

    /// Runs written to disk so far.
    pub fn runs(&self) -> usize {
        self.runs.as_ref().map_or(0, SortedRuns::runs)
    }

    /// The counts, in memory when nothing was spilled, else merged from the runs.
    pub fn finish(self) -> Result<Counted> {
        match self.runs {
            None => Ok(Counted::Memory(self.counts)),
            Some(mut runs) => {
                for (word, count) in self.counts {
                    runs.push(0, WordCount { word, count })?;
                }
                Ok(Counted::Merged(MergedCounts { sorted: runs.into_sorted(), next: None }))
            }
        }
    }
}

/// Counts after [`BoundedCounts::finish`].
#[derive(Debug)]
pub enum Counted {
    /// Nothing was spilled.
    Memory(WordCounts),
    /// Read back from the runs, in word order.
    Merged(MergedCounts),
}

impl Counted {
    /// The counts as the trainers take them, within `limit` (see [`MemoryLimit::prune`]).
    pub fn into_word_counts(self, limit: &MemoryLimit) -> Result<(WordCounts, Pruned)> {
        let budget = limit.bytes / TRAINING_PER_MAP_BYTE;
        let mut pruned = Pruned::default();
        match self {
            Counted::Memory(mut counts) => {
                // Memory of the words by the bit length of their counts: the words seen at least
                // 2^k times are those of bit length k + 1 or more.
                let mut by_bits = [0u64; 65];
                for (w, &c) in &counts {
                    by_bits[(64 - c.leading_zeros()) as usize] += map_memory(w);
                }
                let total: u64 = by_bits.iter().sum();
                if total <= budget {
                    return Ok((counts, pruned));
                }
                if !limit.prune {
                    return Err(too_many(limit, counts.len(), total, true));
                }
                let k = (1..64).find(|&k| by_bits[k + 1..].iter().sum::<u64>() <= budget).unwrap_or(64);
                pruned.below = 1u64.checked_shl(k as u32).unwrap_or(u64::MAX);
                counts.retain(|_, c| {
                    let keep = *c >= pruned.below;
                    if !keep {
                        pruned.words += 1;
                        pruned.occurrences += *c;
                    }
                    keep
                });
                Ok((counts, pruned))
            }
            Counted::Merged(merged) => {
                // The same threshold, found as the words stream in: raised (doubled) each time
                // the words kept pass the budget, which the whole set at the threshold before
                // must then pass too.
                let mut kept = WordCounts::default();
                let mut memory = 0u64;
                for item in merged {
                    let (word, count) = item?;
                    if count < pruned.below {
                        pruned.words += 1;
                        pruned.occurrences += count;
                        continue;
                    }
                    memory += map_memory(&word);
                    kept.insert(word, count);
                    while memory > budget {
                        if !limit.prune {
                            return Err(too_many(limit, kept.len(), memory, false));
                        }
                        pruned.below = pruned.below.saturating_mul(2).max(2);
                        kept.retain(|w, c| {
                            let keep = *c >= pruned.below;
                            if !keep {
                                pruned.words += 1;
                                pruned.occurrences += *c;
                                memory -= map_memory(w);
                            }
                            keep
                        });
                    }
                }
                Ok((kept, pruned))
            }
        }
    }
}

/// The error for `words` distinct words (all of them, or the first read) whose map takes
/// `memory`, past `limit`.
fn too_many(limit: &MemoryLimit, words: usize, memory: u64, all: bool) -> Error {
    Error::invalid(format!(
        "the distinct words do not fit in the memory limit {}: training on {} {words} of them would take about {}; \
         raise --memory-limit, or let the rarest words be dropped (--prune-words)",
        ByteSize(limit.bytes),
        if all { "the" } else { "the first" },
        ByteSize((memory * TRAINING_PER_MAP_BYTE).div_ceil(1 << 20) << 20),
    ))
}

impl Counted {
    /// The counts in word order, each word once (sorted here when they are in memory).
    pub fn into_sorted(self) -> Box<dyn Iterator<Item = Result<(String, u64)>>> {
        match self {
            Counted::Memory(counts) => {
                let mut words: Vec<(String, u64)> = counts.into_iter().collect();
                words.sort_unstable();
                Box::new(words.into_iter().map(Ok))
            }
            Counted::Merged(merged) => Box::new(merged),
        }
    }
}

/// The spilled counts in word order, each word once with its counts summed.
pub struct MergedCounts {
    sorted: Sorted<WordCount>,
    /// The record read past the last word given.
    next: Option<WordCount>,
}

impl std::fmt::Debug for MergedCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergedCounts").field("sorted", &self.sorted).finish_non_exhaustive()
    }
}

impl Iterator for MergedCounts {
    type Item = Result<(String, u64)>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut first = match self.next.take() {
            Some(r) => r,
            None => match self.sorted.next()? {
                Ok((_, r)) => r,
                Err(e) => return Some(Err(e)),
            },
        };
        loop {
            match self.sorted.next() {
                None => break,
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok((_, r))) if r.word == first.word => first.count += r.count,
                Some(Ok((_, r))) if r.word < first.word => {
                    return Some(Err(Error::invalid(format!(
                        "word counts out of order ({:?} after {:?}): a count file that was not written by tokenkit count?",
                        r.word, first.word
                    ))))
                }
                Some(Ok((_, r))) => {
                    self.next = Some(r);
                    break;
                }
            }
        }
        Some(Ok((first.word, first.count)))
    }
}

/// The first and last 8 bytes of a count file.
const COUNT_FILE_MAGIC: &[u8; 8] = b"TKCOUNT1";

/// What a count file holds beside the counts: how its words were cut, from what, and totals.
///
/// A count file (`tokenkit count`) is `TKCOUNT1`, the words in byte order, each once, as
/// [`WordCount`] records (LEB128 length, UTF-8 bytes, LEB128 count), this information as JSON,
/// the JSON's length (u64, little-endian) and `TKCOUNT1` again. Count files of the same
/// normalizer and pre-tokenizer merge by adding the counts of equal words, in any grouping.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CountInfo {
    /// `tokenkit word counts`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// The normalizer the words went through (tokenizer.json's form; `null` for none).
    pub normalizer: serde_json::Value,
    /// The pre-tokenizer that cut them (`null` for none).
    pub pre_tokenizer: serde_json::Value,
    /// The inputs counted.
    pub inputs: Vec<InputPrint>,
    /// Sequences counted.
    pub sequences: u64,
    /// Distinct words.
    pub words: u64,
    /// Words counted (the sum of the counts).
    pub occurrences: u64,
}

/// An input of a count file: its path as given, size and modification time.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InputPrint {
    /// The path, as given.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its modification time, in seconds since 1970 (when the file system gives one).
    pub modified: Option<u64>,
}

impl InputPrint {
    /// The fingerprint of `path` now.
    pub fn of(path: &Path) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        let modified = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_secs());
        Ok(InputPrint { path: path.display().to_string(), bytes: meta.len(), modified })
    }
}

impl CountInfo {
    /// The information of counts of `inputs` cut by `normalizer` and `pre_tokenizer`; the totals
    /// are filled in when the file is written.
    pub fn new(normalizer: serde_json::Value, pre_tokenizer: serde_json::Value, inputs: Vec<InputPrint>, sequences: u64) -> Self {
        CountInfo {
            format: "tokenkit word counts".into(),
            version: 1,
            normalizer,
            pre_tokenizer,
            inputs,
            sequences,
            words: 0,
            occurrences: 0,
        }
    }
}

/// Writes a count file (atomically: `path` appears only complete) of `words`, which must come
/// in byte order, each once; returns `info` with its totals.
pub fn write_count_file(path: &Path, info: CountInfo, words: impl Iterator<Item = Result<(String, u64)>>) -> Result<CountInfo> {
    let mut out = crate::utils::atomic_file::AtomicWriter::create(path)?;
    let info = write_counts(&mut |b| out.write(b), info, words)?;
    out.finish()?;
    Ok(info)
}

/// A count file's bytes (as [`write_count_file`] writes them), and `info` with its totals.
pub fn count_file_bytes(info: CountInfo, words: impl Iterator<Item = Result<(String, u64)>>) -> Result<(Vec<u8>, CountInfo)> {
    let mut bytes = Vec::new();
    let info = write_counts(
        &mut |b| {
            bytes.extend_from_slice(b);
            Ok(())
        },
        info,
        words,
    )?;
    Ok((bytes, info))
}

/// Hands a count file's bytes to `out` in pieces.
fn write_counts(
    out: &mut dyn FnMut(&[u8]) -> Result<()>,
    mut info: CountInfo,
    words: impl Iterator<Item = Result<(String, u64)>>,
) -> Result<CountInfo> {
    out(COUNT_FILE_MAGIC)?;
    let (mut words_n, mut occurrences) = (0u64, 0u64);
    let mut buf = Vec::with_capacity(1 << 16);
    let mut last: Option<String> = None;
    for item in words {
        let (word, count) = item?;
        if last.as_ref().is_some_and(|l| *l >= word) {
            return Err(Error::invalid("count file: words not in byte order (a bug)"));
        }
        let record = WordCount { word, count };
        record.put(&mut buf);
        if buf.len() >= 1 << 16 {
            out(&buf)?;
            buf.clear();
        }
        words_n += 1;
        occurrences += record.count;
        last = Some(record.word);
    }
    out(&buf)?;
    info.words = words_n;
    info.occurrences = occurrences;
    let json = serde_json::to_vec(&info).map_err(|e| Error::invalid(format!("count file information: {e}")))?;
    out(&json)?;
    out(&(json.len() as u64).to_le_bytes())?;
    out(COUNT_FILE_MAGIC)?;
    Ok(info)
}

/// Checks a count file's first 8 and last 16 bytes (of `len`); returns the length of its
/// information block. `name` names the file in errors.
fn check_frame(name: &str, len: u64, head: &[u8], tail: &[u8]) -> Result<u64> {
    let bad = |why: &str| Error::invalid(format!("{name}: not a tokenkit count file ({why})"));
    if len < 24 || head != COUNT_FILE_MAGIC {
        return Err(bad("it does not start with TKCOUNT1"));
    }
    if &tail[8..] != COUNT_FILE_MAGIC {
        return Err(bad("it does not end with TKCOUNT1: cut short?"));
    }
    let json_len = u64::from_le_bytes(tail[..8].try_into().expect("16 bytes"));
    if json_len > len - 24 {
        return Err(bad("its information block is longer than the file"));
    }
    Ok(json_len)
}

/// Parses a count file's information block.
fn parse_info(name: &str, json: &[u8]) -> Result<CountInfo> {
    let bad = |why: &str| Error::invalid(format!("{name}: not a tokenkit count file ({why})"));
    let info: CountInfo = serde_json::from_slice(json).map_err(|e| bad(&format!("its information block: {e}")))?;
    if info.format != "tokenkit word counts" || info.version != 1 {
        return Err(bad(&format!("format {:?} version {}", info.format, info.version)));
    }
    Ok(info)
}

/// Reads a count file's information and where its records are (`8..end`).
pub fn read_count_info(path: &Path) -> Result<(CountInfo, u64)> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |source| Error::Io { path: path.to_owned(), source };
    let name = path.display().to_string();
    let mut f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    let (mut head, mut tail) = ([0u8; 8], [0u8; 16]);
    if len >= 24 {
        f.read_exact(&mut head).map_err(io)?;
        f.seek(SeekFrom::End(-16)).map_err(io)?;
        f.read_exact(&mut tail).map_err(io)?;
    }
    let json_len = check_frame(&name, len, &head, &tail)?;
    let end = len - 16 - json_len;
    f.seek(SeekFrom::Start(end)).map_err(io)?;
    let mut json = vec![0u8; json_len as usize];
    f.read_exact(&mut json).map_err(io)?;
    Ok((parse_info(&name, &json)?, end))
}

/// The information and counts of a count file's bytes ([`count_file_bytes`]); a word given
/// twice or out of order is an error.
pub fn read_count_bytes(bytes: &[u8]) -> Result<(CountInfo, WordCounts)> {
    const NAME: &str = "count bytes";
    let len = bytes.len() as u64;
    let (head, tail) = if len >= 24 { (&bytes[..8], &bytes[bytes.len() - 16..]) } else { (&[][..], &[0u8; 16][..]) };
    let json_len = check_frame(NAME, len, head, tail)?;
    let end = bytes.len() - 16 - json_len as usize;
    let info = parse_info(NAME, &bytes[end..bytes.len() - 16])?;
    let mut records = &bytes[8..end];
    let mut counts = WordCounts::default();
    let mut last: Option<String> = None;
    while let Some(r) = WordCount::read(&mut records).map_err(|e| Error::invalid(format!("{NAME}: {e}")))? {
        if last.as_ref().is_some_and(|l| *l >= r.word) {
            return Err(Error::invalid(format!("{NAME}: word counts out of order ({:?} after {:?})", r.word, last.unwrap_or_default())));
        }
        counts.insert(r.word.clone(), r.count);
        last = Some(r.word);
    }
    Ok((info, counts))
}

impl CountInfo {
    /// Whether words counted as `other` were cut as these were (same normalizer and
    /// pre-tokenizer): only then do their counts add up.
    pub fn same_cutting(&self, other: &CountInfo) -> bool {
        (&self.normalizer, &self.pre_tokenizer) == (&other.normalizer, &other.pre_tokenizer)
    }

    /// Adds `other`'s inputs and totals to these (`words` becomes an upper bound of the distinct
    /// words of both).
    pub fn add(&mut self, other: CountInfo) {
        self.inputs.extend(other.inputs);
        self.sequences += other.sequences;
        self.words += other.words;
        self.occurrences += other.occurrences;
    }
}

/// The counts of several count files, merged in word order (equal words summed) as they are
/// read (nothing is written). All must have the same normalizer and pre-tokenizer; returns their information merged (inputs listed in order, totals added;
/// `words` the sum of the files', an upper bound of the merged distinct words).
pub fn merge_count_files(paths: &[PathBuf]) -> Result<(CountInfo, Counted)> {
    let mut runs = SortedRuns::<WordCount>::new(1, u64::MAX, Path::new("."));
    let mut merged: Option<CountInfo> = None;
    for path in paths {
        let (info, end) = read_count_info(path)?;
        runs.adopt(path, COUNT_FILE_MAGIC.len() as u64, end);
        match &mut merged {
            None => merged = Some(info),
            Some(m) => {
                if !m.same_cutting(&info) {
                    return Err(Error::invalid(format!(
                        "{}: counted with another normalizer or pre-tokenizer than {} (count files merge only when the \
                         words were cut the same way)",
                        path.display(),
                        paths[0].display()
                    )));
                }
                m.add(info);
            }
        }
    }
    let info = merged.ok_or_else(|| Error::invalid("no count files given"))?;
    Ok((info, Counted::Merged(MergedCounts { sorted: runs.into_sorted(), next: None })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize, seed: u64) -> Vec<WordCounts> {
        // Batches of Zipf-ish words: many repeated across batches, many seen once.
        let mut x = seed;
        (0..20)
            .map(|_| {
                let mut m = WordCounts::default();
                for _ in 0..n {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let k = (x >> 33) % ((x >> 20) % 5000 + 1);
                    *m.entry(format!("w{k}é")).or_insert(0) += 1;
                }
                m
            })
            .collect()
    }

    fn unlimited(dir: &Path) -> MemoryLimit {
        MemoryLimit { bytes: u64::MAX / 8, spill_dir: dir.to_owned(), prune: false }
    }

    /// Spilled (a budget forcing a run per batch, or every few batches) and in-memory counting
    /// give the same counts, and the runs' directory is removed.
    #[test]
    fn spilled_counts_equal_in_memory_counts() {
        let tmp = tempfile::tempdir().unwrap();
        let batches = words(3000, 5);
        let mut want = WordCounts::default();
        for b in &batches {
            for (w, c) in b {
                *want.entry(w.clone()).or_insert(0) += c;
            }
        }
        let map_bytes: u64 = want.keys().map(|w| map_memory(w)).sum();
        for (limit, spilled) in [(2 * 4096, true), (map_bytes, true), (u64::MAX / 8, false)] {
            let mut counts = BoundedCounts::new(&MemoryLimit { bytes: limit, ..unlimited(tmp.path()) });
            for b in batches.clone() {
                counts.add(b).unwrap();
            }
            assert_eq!(counts.runs() > 0, spilled, "limit {limit}");
            if limit == 2 * 4096 {
                assert_eq!(counts.runs(), 20);
            }
            let finished = counts.finish().unwrap();
            if let Counted::Merged(merged) = finished {
                let list: Vec<(String, u64)> = merged.map(|r| r.unwrap()).collect();
                let mut sorted: Vec<(String, u64)> = want.clone().into_iter().collect();
                sorted.sort();
                assert_eq!(list, sorted, "limit {limit}: in word order, each word once");
            } else {
                let (got, pruned) = finished.into_word_counts(&unlimited(tmp.path())).unwrap();
                assert_eq!(got, want);
                assert_eq!(pruned, Pruned::default());
            }
        }
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    /// Past the limit: an error naming the flag, or with `prune` exactly the words seen at least
    /// `below` times, the smallest power of two that fits.
    #[test]
    fn words_past_the_limit_are_an_error_or_the_rarest_are_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let mut want = WordCounts::default();
        for b in words(3000, 9) {
            for (w, c) in b {
                *want.entry(w).or_insert(0) += c;
            }
        }
        let bytes = want.keys().map(|w| map_memory(w)).sum::<u64>() * TRAINING_PER_MAP_BYTE / 2;
        let limit = MemoryLimit { bytes, spill_dir: tmp.path().to_owned(), prune: false };
        let err = Counted::Memory(want.clone()).into_word_counts(&limit).unwrap_err().to_string();
        assert!(err.contains("do not fit in the memory limit") && err.contains("--prune-words"), "{err}");
        let limit = MemoryLimit { prune: true, ..limit };
        let mut counts = BoundedCounts::new(&MemoryLimit { bytes: 4096, ..limit.clone() });
        counts.add(want.clone()).unwrap();
        for counted in [Counted::Memory(want.clone()), counts.finish().unwrap()] {
            let (got, pruned) = counted.into_word_counts(&limit).unwrap();
            assert!(pruned.below >= 2 && pruned.below.is_power_of_two(), "{pruned:?}");
            let expect: WordCounts = want.iter().filter(|(_, &c)| c >= pruned.below).map(|(w, &c)| (w.clone(), c)).collect();
            assert_eq!(got, expect);
            assert_eq!(pruned.words as usize, want.len() - expect.len());
            assert_eq!(pruned.occurrences, want.values().sum::<u64>() - expect.values().sum::<u64>());
            let smaller = pruned.below / 2;
            let fits_smaller =
                want.iter().filter(|(_, &c)| c >= smaller).map(|(w, _)| map_memory(w)).sum::<u64>() <= bytes / TRAINING_PER_MAP_BYTE;
            assert!(smaller < 2 || !fits_smaller, "{pruned:?}: a smaller threshold fits");
        }
    }

    /// Count files merge by adding counts (each word once, in order); a file cut with another
    /// pre-tokenizer, a file out of order and a cut-short file are errors.
    #[test]
    fn count_files_merge_and_bad_ones_are_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let info = |pre: &str| CountInfo::new(serde_json::Value::Null, serde_json::json!({"type": pre}), Vec::new(), 1);
        let words = |list: &[(&str, u64)]| list.iter().map(|&(w, c)| Ok((w.to_owned(), c))).collect::<Vec<_>>().into_iter();
        let (a, b, c) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("c"));
        let written = write_count_file(&a, info("X"), words(&[("a", 2), ("bé", 1), ("c", 5)])).unwrap();
        assert_eq!((written.words, written.occurrences), (3, 8));
        write_count_file(&b, info("X"), words(&[("", 1), ("bé", 3), ("d", 1)])).unwrap();
        let (merged, counted) = merge_count_files(&[a.clone(), b.clone()]).unwrap();
        assert_eq!((merged.sequences, merged.occurrences), (2, 13));
        let got: Vec<(String, u64)> = counted.into_sorted().map(|r| r.unwrap()).collect();
        let want: Vec<(String, u64)> = [("", 1), ("a", 2), ("bé", 4), ("c", 5), ("d", 1)].map(|(w, c)| (w.to_owned(), c)).to_vec();
        assert_eq!(got, want);

        write_count_file(&c, info("Y"), words(&[("a", 1)])).unwrap();
        let err = merge_count_files(&[a.clone(), c.clone()]).unwrap_err().to_string();
        assert!(err.contains("another normalizer or pre-tokenizer"), "{err}");
        assert!(write_count_file(&c, info("X"), words(&[("b", 1), ("a", 1)])).is_err());

        // Records out of order, written by hand.
        let mut bytes = std::fs::read(&a).unwrap();
        let mut body = Vec::new();
        WordCount { word: "z".into(), count: 1 }.put(&mut body);
        WordCount { word: "a".into(), count: 1 }.put(&mut body);
        let tail = bytes.split_off(read_count_info(&a).unwrap().1 as usize);
        let unsorted = [COUNT_FILE_MAGIC.as_slice(), &body, &tail].concat();
        std::fs::write(&c, unsorted).unwrap();
        let (_, counted) = merge_count_files(std::slice::from_ref(&c)).unwrap();
        let err = counted.into_sorted().find_map(|r| r.err()).unwrap().to_string();
        assert!(err.contains("out of order"), "{err}");

        std::fs::write(&c, &std::fs::read(&a).unwrap()[..30]).unwrap();
        let err = merge_count_files(&[c]).unwrap_err().to_string();
        assert!(err.contains("cut short"), "{err}");
    }

    #[test]
    fn a_truncated_run_is_an_error() {
        let mut bytes = Vec::new();
        WordCount { word: "héllo".into(), count: 300 }.put(&mut bytes);
        let r = WordCount::read(&mut &bytes[..]).unwrap().unwrap();
        assert_eq!((r.word.as_str(), r.count), ("héllo", 300));
        assert!(WordCount::read(&mut &bytes[..0]).unwrap().is_none());
        for cut in 1..bytes.len() {
            assert!(WordCount::read(&mut &bytes[..cut]).is_err(), "cut at {cut}");
        }
    }
}
