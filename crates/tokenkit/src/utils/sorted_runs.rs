//! Sorting more records than fit in memory: records are pushed into numbered groups, kept in
//! memory up to a byte budget, and each time the budget is reached (or the caller
//! [`flush`](SortedRuns::flush)es) every group is sorted and written to disk as one sorted
//! run. [`SortedRuns::for_each_sorted`] then gives each group's records in order, merging the
//! runs on disk with what is still in memory.
//!
//! Runs are written in a temporary directory (removed when the value is dropped, whatever
//! happens) inside a directory the caller chooses: the output's own, so that the spill goes
//! where the user has room for the output. The result does not depend on the budget: a budget
//! only decides how many runs there are.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::{Error, Result};

/// A record, ordered as it is to be read back, written to a run as bytes (of a fixed size or
/// not: each type reads back what it wrote).
pub trait Record: Ord + Send + Sync + Sized {
    /// Appends its bytes to `out`.
    fn put(&self, out: &mut Vec<u8>);
    /// The next record of a run's section, `None` at its end (an end inside a record is an
    /// error).
    fn read(input: &mut impl BufRead) -> std::io::Result<Option<Self>>;
    /// The memory it holds while it waits in memory, in bytes (what the budget counts).
    fn memory(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// The next `N` bytes of `input`, `None` if it ends before the first of them.
pub fn read_array<const N: usize>(input: &mut impl BufRead) -> std::io::Result<Option<[u8; N]>> {
    let mut buf = [0u8; N];
    let mut filled = 0;
    while filled < N {
        match input.read(&mut buf[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "a spill run ends inside a record")),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some(buf))
}

/// A 64-bit key and the number of the document it belongs to, ordered by key, then number
/// (12 bytes in memory as on disk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(4))]
pub struct KeyDoc {
    pub key: u64,
    pub doc: u32,
}

impl Record for KeyDoc {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&{ self.key }.to_le_bytes());
        out.extend_from_slice(&{ self.doc }.to_le_bytes());
    }
    fn read(input: &mut impl BufRead) -> std::io::Result<Option<Self>> {
        Ok(read_array::<12>(input)?
            .map(|b| KeyDoc { key: u64::from_le_bytes(b[..8].try_into().unwrap()), doc: u32::from_le_bytes(b[8..].try_into().unwrap()) }))
    }
}

/// A 128-bit hash and the number of the item it belongs to, ordered by hash, then number
/// (24 bytes in memory as on disk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(8))]
pub struct HashSeq {
    pub hash: u128,
    pub seq: u64,
}

impl Record for HashSeq {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&{ self.hash }.to_le_bytes());
        out.extend_from_slice(&{ self.seq }.to_le_bytes());
    }
    fn read(input: &mut impl BufRead) -> std::io::Result<Option<Self>> {
        Ok(read_array::<24>(input)?.map(|b| HashSeq {
            hash: u128::from_le_bytes(b[..16].try_into().unwrap()),
            seq: u64::from_le_bytes(b[16..].try_into().unwrap()),
        }))
    }
}

/// A number alone.
impl Record for u64 {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read(input: &mut impl BufRead) -> std::io::Result<Option<Self>> {
        Ok(read_array::<8>(input)?.map(u64::from_le_bytes))
    }
}

/// One run on disk: each group's sorted records, one section after the other.
#[derive(Debug)]
struct Run {
    path: PathBuf,
    /// The byte offset of each group's section, and the end of the last.
    sections: Vec<u64>,
    /// 0 for a spill of the memory, `k + 1` for a merge of runs of level `k`, [`ADOPTED`] for
    /// a run written elsewhere.
    level: u32,
}

/// The level of an [`adopt`](SortedRuns::adopt)ed run: read, never merged or removed.
const ADOPTED: u32 = u32::MAX;

/// Writes one run: records pushed group by group, each group closed with
/// [`end_group`](Self::end_group).
struct RunWriter {
    out: BufWriter<File>,
    path: PathBuf,
    level: u32,
    sections: Vec<u64>,
    bytes: Vec<u8>,
    offset: u64,
}

impl RunWriter {
    fn create(path: PathBuf, level: u32) -> Result<Self> {
        let file = File::create(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
        Ok(RunWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            path,
            level,
            sections: vec![0],
            bytes: Vec::with_capacity(1 << 16),
            offset: 0,
        })
    }

    fn push<R: Record>(&mut self, r: &R) -> Result<()> {
        let before = self.bytes.len();
        r.put(&mut self.bytes);
        self.offset += (self.bytes.len() - before) as u64;
        if self.bytes.len() >= 1 << 16 {
            self.write_bytes()?;
        }
        Ok(())
    }

    fn write_bytes(&mut self) -> Result<()> {
        self.out.write_all(&self.bytes).map_err(|source| Error::Io { path: self.path.clone(), source })?;
        self.bytes.clear();
        Ok(())
    }

    fn end_group(&mut self) {
        self.sections.push(self.offset);
    }

    fn finish(mut self) -> Result<Run> {
        self.write_bytes()?;
        self.out.flush().map_err(|source| Error::Io { path: self.path.clone(), source })?;
        Ok(Run { path: self.path, sections: self.sections, level: self.level })
    }
}

/// Groups of records sorted with at most about `budget` bytes of them in memory.
#[derive(Debug)]
pub struct SortedRuns<R: Record> {
    groups: Vec<Vec<R>>,
    /// The memory of the records held ([`Record::memory`]).
    in_memory: u64,
    /// The most memory held before a run is written (but at least one record is held).
    budget: u64,
    /// Where the temporary directory is made.
    parent: PathBuf,
    dir: Option<tempfile::TempDir>,
    runs: Vec<Run>,
    /// Runs written so far (merged ones included), which names the next.
    written: usize,
    /// Times the runs on disk were merged into one.
    merges: usize,
}

/// Runs of one level on disk before they are merged into one of the next level.
const MAX_RUNS: usize = 64;

impl<R: Record> SortedRuns<R> {
    /// `groups` empty groups holding up to `budget` bytes of records in memory, spilling into a
    /// temporary directory inside `parent`.
    pub fn new(groups: usize, budget: u64, parent: &Path) -> Self {
        SortedRuns {
            groups: std::iter::repeat_with(Vec::new).take(groups).collect(),
            in_memory: 0,
            budget,
            parent: parent.to_owned(),
            dir: None,
            runs: Vec::new(),
            written: 0,
            merges: 0,
        }
    }

    /// Adds `record` to `group`, writing a run first if the memory budget is full.
    pub fn push(&mut self, group: usize, record: R) -> Result<()> {
        let memory = record.memory() as u64;
        if self.in_memory > 0 && self.in_memory + memory > self.budget {
            self.spill()?;
        }
        self.groups[group].push(record);
        self.in_memory += memory;
        Ok(())
    }

    /// Writes the records in memory as a run now (nothing when there are none): for a caller
    /// that keeps its own buffer and hands it over whole when that is full.
    pub fn flush(&mut self) -> Result<()> {
        if self.in_memory == 0 {
            return Ok(());
        }
        self.spill()
    }

    /// Adds a sorted run written elsewhere: the bytes `start..end` of `path` hold the records of
    /// group 0 (of a single group) in order. It is read when the records are, and left in
    /// place. Records out of order in it come out of order.
    pub fn adopt(&mut self, path: &Path, start: u64, end: u64) {
        assert_eq!(self.groups.len(), 1, "adopted runs are of one group");
        self.runs.push(Run { path: path.to_owned(), sections: vec![start, end], level: ADOPTED });
    }

    /// Runs written to disk so far (each spill of the memory is one, whether or not it has been
    /// merged with others since).
    pub fn runs(&self) -> usize {
        self.written - self.merges
    }

    /// Sorts every group in memory and writes them as the next run; merges [`MAX_RUNS`] runs of
    /// one level into one of the next.
    fn spill(&mut self) -> Result<()> {
        self.groups.par_iter_mut().for_each(|g| g.sort_unstable());
        let mut run = RunWriter::create(self.next_run_path()?, 0)?;
        for group in &mut self.groups {
            for r in group.iter() {
                run.push(r)?;
            }
            run.end_group();
            // Emptied, its room kept for the next run.
            group.clear();
        }
        self.runs.push(run.finish()?);
        self.in_memory = 0;
        // Like a counter in base MAX_RUNS: the last MAX_RUNS runs of one level become one run
        // of the next, so every record is rewritten once per level (log base MAX_RUNS of the
        // number of spills), never once per merge.
        while let Some(tail) = self.runs.len().checked_sub(MAX_RUNS) {
            let level = self.runs[tail].level;
            if level == ADOPTED || self.runs[tail..].iter().any(|r| r.level != level) {
                break;
            }
            self.merge_runs(tail)?;
        }
        Ok(())
    }

    /// The path of a new run, in the temporary directory (made on the first call).
    fn next_run_path(&mut self) -> Result<PathBuf> {
        if self.dir.is_none() {
            let dir = tempfile::Builder::new().prefix(".tokenkit-spill-").tempdir_in(&self.parent).map_err(|e| Error::Io {
                path: self.parent.clone(),
                source: std::io::Error::new(e.kind(), format!("cannot make a spill directory here: {e}")),
            })?;
            self.dir = Some(dir);
        }
        self.written += 1;
        Ok(self.dir.as_ref().unwrap().path().join(format!("run-{}", self.written)))
    }

    /// Merges the runs from `from` on (all of one level) into one run of the next level, so
    /// that the final merge keeps few files open.
    fn merge_runs(&mut self, from: usize) -> Result<()> {
        let level = self.runs[from].level + 1;
        let mut merged = RunWriter::create(self.next_run_path()?, level)?;
        let runs = self.runs.split_off(from);
        let old: Vec<PathBuf> = runs.iter().map(|r| r.path.clone()).collect();
        let sorted: Sorted<R> = Sorted {
            memory: std::iter::repeat_with(Vec::new).take(self.groups.len()).collect::<Vec<_>>().into_iter().enumerate(),
            runs,
            _dir: None,
            group: 0,
            sources: Vec::new(),
            heap: BinaryHeap::new(),
            failed: false,
        };
        // Every group gets its section, empty ones too.
        let mut group = 0;
        for item in sorted {
            let (g, r) = item?;
            while group < g {
                merged.end_group();
                group += 1;
            }
            merged.push(&r)?;
        }
        while group < self.groups.len() {
            merged.end_group();
            group += 1;
        }
        self.runs.push(merged.finish()?);
        for path in old {
            std::fs::remove_file(&path).map_err(|source| Error::Io { path, source })?;
        }
        self.merges += 1;
        Ok(())
    }

    /// Calls `f` with each group's number and its records in order: group 0's smallest record
    /// first, every group after the one before. Stops at the first error of `f`.
    pub fn for_each_sorted(self, mut f: impl FnMut(usize, R) -> Result<()>) -> Result<()> {
        for item in self.into_sorted() {
            let (group, record) = item?;
            f(group, record)?;
        }
        Ok(())
    }

    /// Each group's number and its records in order, as [`for_each_sorted`](Self::for_each_sorted)
    /// gives them; the temporary directory goes when the iterator does.
    pub fn into_sorted(mut self) -> Sorted<R> {
        self.groups.par_iter_mut().for_each(|g| g.sort_unstable());
        Sorted {
            memory: std::mem::take(&mut self.groups).into_iter().enumerate(),
            runs: std::mem::take(&mut self.runs),
            _dir: self.dir.take(),
            group: 0,
            sources: Vec::new(),
            heap: BinaryHeap::new(),
            failed: false,
        }
    }
}

/// The records of [`SortedRuns`] in order: each group's runs on disk and its records in memory
/// merged (a heap of the sources' next records; the memory alone when nothing was spilled).
pub struct Sorted<R: Record> {
    memory: std::iter::Enumerate<std::vec::IntoIter<Vec<R>>>,
    runs: Vec<Run>,
    _dir: Option<tempfile::TempDir>,
    group: usize,
    sources: Vec<Source<R>>,
    heap: BinaryHeap<Reverse<(R, usize)>>,
    /// After an error the iterator ends.
    failed: bool,
}

impl<R: Record> std::fmt::Debug for Sorted<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sorted").field("group", &self.group).field("runs", &self.runs.len()).finish_non_exhaustive()
    }
}

impl<R: Record> Sorted<R> {
    fn next_record(&mut self) -> Result<Option<(usize, R)>> {
        loop {
            if let [only] = self.sources.as_mut_slice() {
                if let Some(r) = only.next()? {
                    return Ok(Some((self.group, r)));
                }
            } else if let Some(Reverse((r, k))) = self.heap.pop() {
                if let Some(next) = self.sources[k].next()? {
                    self.heap.push(Reverse((next, k)));
                }
                return Ok(Some((self.group, r)));
            }
            let Some((group, memory)) = self.memory.next() else { return Ok(None) };
            self.group = group;
            self.sources.clear();
            for run in &self.runs {
                self.sources.push(Source::section(run, group)?);
            }
            self.sources.push(Source::Memory(memory.into_iter()));
            if self.sources.len() > 1 {
                for (k, s) in self.sources.iter_mut().enumerate() {
                    if let Some(r) = s.next()? {
                        self.heap.push(Reverse((r, k)));
                    }
                }
            }
        }
    }
}

impl<R: Record> Iterator for Sorted<R> {
    type Item = Result<(usize, R)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_record().transpose();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

/// Where merged records come from: a run's section of a group, or the group in memory.
enum Source<R> {
    Disk { reader: BufReader<std::io::Take<File>>, path: PathBuf },
    Memory(std::vec::IntoIter<R>),
}

impl<R: Record> Source<R> {
    fn section(run: &Run, group: usize) -> Result<Self> {
        let failed = |e: std::io::Error| Error::Io { path: run.path.clone(), source: e };
        let mut file = File::open(&run.path).map_err(failed)?;
        let (start, end) = (run.sections[group], run.sections[group + 1]);
        file.seek(SeekFrom::Start(start)).map_err(failed)?;
        let reader = BufReader::with_capacity(1 << 16, file.take(end - start));
        Ok(Source::Disk { reader, path: run.path.clone() })
    }

    fn next(&mut self) -> Result<Option<R>> {
        match self {
            Source::Memory(records) => Ok(records.next()),
            Source::Disk { reader, path } => R::read(reader).map_err(|source| Error::Io { path: path.clone(), source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same sorted groups whatever the budget (one record per run, a few runs, all in
    /// memory), and equal to sorting each group in memory.
    #[test]
    fn every_budget_gives_each_group_sorted() {
        let mut x = 7u64;
        let records: Vec<(usize, KeyDoc)> = (0..5000u32)
            .map(|doc| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 60) as usize % 3, KeyDoc { key: (x >> 20) % 500, doc })
            })
            .collect();
        let mut want = vec![Vec::new(); 3];
        for &(g, r) in &records {
            want[g].push(r);
        }
        want.iter_mut().for_each(|g| g.sort());
        let tmp = tempfile::tempdir().unwrap();
        for (budget, runs) in [(16, 4999), (12_000, 4), (1 << 30, 0)] {
            let mut sorted = SortedRuns::new(3, budget, tmp.path());
            for &(g, r) in &records {
                sorted.push(g, r).unwrap();
            }
            assert_eq!(sorted.runs(), runs, "budget {budget}");
            // Merged as they come, a level at a time: few files on disk for the final merge to
            // open (4,999 spills: 78 runs of level 1 made one of level 2, then 14 of level 1
            // and 7 of level 0 left), each record rewritten at most twice.
            let levels: Vec<u32> = sorted.runs.iter().map(|r| r.level).collect();
            if budget == 16 {
                assert_eq!(levels, [[2].as_slice(), &[1; 14], &[0; 7]].concat());
            }
            assert!(levels.len() < 2 * MAX_RUNS, "budget {budget}: {} files", levels.len());
            let mut got = vec![Vec::new(); 3];
            sorted
                .for_each_sorted(|g, r| {
                    got[g].push(r);
                    Ok(())
                })
                .unwrap();
            assert_eq!(got, want, "budget {budget}");
        }
        // Each value's spill directory is gone once it is consumed.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_spill_directory_that_cannot_be_made_is_an_error() {
        let mut sorted = SortedRuns::new(1, 16, Path::new("/nonexistent/dir"));
        sorted.push(0, KeyDoc { key: 1, doc: 0 }).unwrap();
        let err = sorted.push(0, KeyDoc { key: 2, doc: 1 }).unwrap_err().to_string();
        assert!(err.starts_with("/nonexistent/dir: cannot make a spill directory here"), "{err}");
    }
}
