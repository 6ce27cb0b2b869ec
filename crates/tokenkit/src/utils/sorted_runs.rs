//! Sorting more records than fit in memory: records are pushed into numbered groups, kept in
//! memory up to a byte budget, and each time the budget is reached every group is sorted and
//! written to disk as one sorted run. [`SortedRuns::for_each_sorted`] then gives each group's
//! records in order, merging the runs on disk with what is still in memory.
//!
//! Runs are written in a temporary directory (removed when the value is dropped, whatever
//! happens) inside a directory the caller chooses: the output's own, so that the spill goes
//! where the user has room for the output. The result does not depend on the budget: a budget
//! only decides how many runs there are.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::{Error, Result};

/// A fixed-size record, ordered as it is to be read back.
pub trait Record: Copy + Ord + Send + Sync {
    /// Its size on disk.
    const BYTES: usize;
    /// Appends its bytes to `out`.
    fn put(&self, out: &mut Vec<u8>);
    /// The record of `bytes` (exactly [`BYTES`](Self::BYTES) of them).
    fn get(bytes: &[u8]) -> Self;
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
    const BYTES: usize = 12;
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.key.to_le_bytes());
        out.extend_from_slice(&self.doc.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        KeyDoc { key: u64::from_le_bytes(b[..8].try_into().unwrap()), doc: u32::from_le_bytes(b[8..12].try_into().unwrap()) }
    }
}

/// One run on disk: each group's sorted records, one section after the other.
#[derive(Debug)]
struct Run {
    path: PathBuf,
    /// The byte offset of each group's section, and the end of the last.
    sections: Vec<u64>,
}

/// Groups of records sorted with at most about `budget` bytes of them in memory.
#[derive(Debug)]
pub struct SortedRuns<R: Record> {
    groups: Vec<Vec<R>>,
    in_memory: usize,
    /// Records held before a run is written (at least one).
    capacity: usize,
    /// Where the temporary directory is made.
    parent: PathBuf,
    dir: Option<tempfile::TempDir>,
    runs: Vec<Run>,
}

impl<R: Record> SortedRuns<R> {
    /// `groups` empty groups holding up to `budget` bytes of records in memory, spilling into a
    /// temporary directory inside `parent`.
    pub fn new(groups: usize, budget: u64, parent: &Path) -> Self {
        let capacity = (budget / std::mem::size_of::<R>().max(1) as u64).clamp(1, usize::MAX as u64) as usize;
        SortedRuns { groups: vec![Vec::new(); groups], in_memory: 0, capacity, parent: parent.to_owned(), dir: None, runs: Vec::new() }
    }

    /// Adds `record` to `group`, writing a run first if the memory budget is full.
    pub fn push(&mut self, group: usize, record: R) -> Result<()> {
        if self.in_memory >= self.capacity {
            self.spill()?;
        }
        self.groups[group].push(record);
        self.in_memory += 1;
        Ok(())
    }

    /// Runs written to disk so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Sorts every group in memory and writes them as the next run.
    fn spill(&mut self) -> Result<()> {
        self.groups.par_iter_mut().for_each(|g| g.sort_unstable());
        if self.dir.is_none() {
            let dir = tempfile::Builder::new().prefix(".tokenkit-spill-").tempdir_in(&self.parent).map_err(|e| Error::Io {
                path: self.parent.clone(),
                source: std::io::Error::new(e.kind(), format!("cannot make a spill directory here: {e}")),
            })?;
            self.dir = Some(dir);
        }
        let path = self.dir.as_ref().unwrap().path().join(format!("run-{}", self.runs.len()));
        let failed = |e: std::io::Error| Error::Io { path: path.clone(), source: e };
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).map_err(failed)?);
        let mut sections = vec![0];
        let mut bytes = Vec::with_capacity(R::BYTES * 4096);
        let mut offset = 0u64;
        for group in &mut self.groups {
            for chunk in group.chunks(4096) {
                bytes.clear();
                chunk.iter().for_each(|r| r.put(&mut bytes));
                out.write_all(&bytes).map_err(failed)?;
            }
            offset += (group.len() * R::BYTES) as u64;
            sections.push(offset);
            // Emptied, its room kept for the next run.
            group.clear();
        }
        out.flush().map_err(failed)?;
        self.runs.push(Run { path, sections });
        self.in_memory = 0;
        Ok(())
    }

    /// Calls `f` with each group's number and its records in order: group 0's smallest record
    /// first, every group after the one before. Stops at the first error of `f`.
    pub fn for_each_sorted(mut self, mut f: impl FnMut(usize, R) -> Result<()>) -> Result<()> {
        self.groups.par_iter_mut().for_each(|g| g.sort_unstable());
        let groups = std::mem::take(&mut self.groups);
        for (g, memory) in groups.into_iter().enumerate() {
            if self.runs.is_empty() {
                for r in memory {
                    f(g, r)?;
                }
                continue;
            }
            // Each run's section of the group, and the records in memory, merged.
            let mut sources: Vec<Source<R>> = Vec::with_capacity(self.runs.len() + 1);
            for run in &self.runs {
                sources.push(Source::section(run, g)?);
            }
            sources.push(Source::Memory(memory.into_iter()));
            let mut heap = BinaryHeap::with_capacity(sources.len());
            for (k, s) in sources.iter_mut().enumerate() {
                if let Some(r) = s.next()? {
                    heap.push(Reverse((r, k)));
                }
            }
            while let Some(Reverse((r, k))) = heap.pop() {
                f(g, r)?;
                if let Some(next) = sources[k].next()? {
                    heap.push(Reverse((next, k)));
                }
            }
        }
        Ok(())
    }
}

/// Where merged records come from: a run's section of a group, or the group in memory.
enum Source<R> {
    Disk { reader: BufReader<std::io::Take<File>>, buf: Vec<u8>, path: PathBuf },
    Memory(std::vec::IntoIter<R>),
}

impl<R: Record> Source<R> {
    fn section(run: &Run, group: usize) -> Result<Self> {
        let failed = |e: std::io::Error| Error::Io { path: run.path.clone(), source: e };
        let mut file = File::open(&run.path).map_err(failed)?;
        let (start, end) = (run.sections[group], run.sections[group + 1]);
        file.seek(SeekFrom::Start(start)).map_err(failed)?;
        let reader = BufReader::with_capacity(1 << 16, file.take(end - start));
        Ok(Source::Disk { reader, buf: vec![0; R::BYTES], path: run.path.clone() })
    }

    fn next(&mut self) -> Result<Option<R>> {
        match self {
            Source::Memory(records) => Ok(records.next()),
            Source::Disk { reader, buf, path } => {
                // A section holds whole records: the only clean end is before the first byte.
                let mut filled = 0;
                while filled < buf.len() {
                    match reader.read(&mut buf[filled..]) {
                        Ok(0) if filled == 0 => return Ok(None),
                        Ok(0) => {
                            let source = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "a spill run ends inside a record");
                            return Err(Error::Io { path: path.clone(), source });
                        }
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(Error::Io { path: path.clone(), source: e }),
                    }
                }
                Ok(Some(R::get(buf)))
            }
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
