//! The files a dataset job writes, each kept under a temporary name beside its final one
//! until the job is complete, so that a killed job leaves no truncated file under a final
//! name and a rerun can continue from the lengths its journal recorded.
//!
//! Layouts (all little-endian):
//! - `bin`: `PREFIX.bin` holds every document's ids followed by the separator, in input
//!   order, as `uint16` when the encoder's ids fit (at most 65536 ids, added tokens
//!   included), else `uint32`: `numpy.memmap(path, dtype=..., mode="r")` reads it.
//! - `megatron`: Megatron-LM's indexed dataset. `PREFIX.bin` as above but with Megatron's
//!   dtype rule (`uint16` below 65500 ids, else `int32`); `PREFIX.idx`: the magic
//!   `MMIDIDX\0\0`, version `1` (u64), the dtype code (u8: 8 = uint16, 4 = int32), the number
//!   of sequences `n` (u64), the number of document indices `n + 1` (u64), then `n` sequence
//!   lengths (i32, in tokens), `n` sequence pointers (i64, byte offsets into the .bin) and the
//!   `n + 1` document indices (i64: 0, 1, ..., n: one sequence per document).
//! - `parquet`: `PREFIX.parquet` with the kept columns (strings) then `input_ids`
//!   (`list<uint32>`), one row per document, zstd-compressed.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, ListArray, RecordBatch, StringArray, UInt32Array};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::{Error, Result};

/// The output format of a dataset job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// A flat token file (nanoGPT's `train.bin`) and a JSON metadata file.
    Bin,
    /// Megatron-LM's indexed dataset (`.bin` + `.idx`).
    Megatron,
    /// Parquet with an `input_ids` column.
    Parquet,
}

impl OutputFormat {
    /// The format named `name` (`bin`, `megatron`, `parquet`).
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "bin" => Ok(OutputFormat::Bin),
            "megatron" => Ok(OutputFormat::Megatron),
            "parquet" => Ok(OutputFormat::Parquet),
            other => Err(Error::invalid(format!("unknown output format {other:?} (expected bin, megatron or parquet)"))),
        }
    }
}

/// The integer type of the ids in a token file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    Uint16,
    Uint32,
    Int32,
}

impl Dtype {
    /// The dtype of `format` for ids below `id_space`.
    pub fn for_ids(format: OutputFormat, id_space: usize) -> Self {
        match format {
            OutputFormat::Bin if id_space <= 1 << 16 => Dtype::Uint16,
            OutputFormat::Bin | OutputFormat::Parquet => Dtype::Uint32,
            // Megatron's DType.optimal_dtype.
            OutputFormat::Megatron if id_space < 65500 => Dtype::Uint16,
            OutputFormat::Megatron => Dtype::Int32,
        }
    }

    /// numpy's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Uint16 => "uint16",
            Dtype::Uint32 => "uint32",
            Dtype::Int32 => "int32",
        }
    }

    fn size(self) -> u64 {
        match self {
            Dtype::Uint16 => 2,
            Dtype::Uint32 | Dtype::Int32 => 4,
        }
    }

    fn megatron_code(self) -> u8 {
        match self {
            Dtype::Uint16 => 8,
            Dtype::Int32 => 4,
            Dtype::Uint32 => unreachable!("Megatron has no uint32"),
        }
    }
}

/// The final paths of one split's files: `PREFIX.EXT` for the training split, `PREFIX.val.EXT`
/// for the validation split.
pub fn split_paths(prefix: &Path, val: bool, format: OutputFormat) -> Vec<PathBuf> {
    let stem = if val { format!("{}.val", prefix.display()) } else { prefix.display().to_string() };
    let exts: &[&str] = match format {
        OutputFormat::Bin => &["bin"],
        OutputFormat::Megatron => &["bin", "idx"],
        OutputFormat::Parquet => &["parquet"],
    };
    exts.iter().map(|e| PathBuf::from(format!("{stem}.{e}"))).collect()
}

/// `dir/.NAME.SUFFIX` beside `path`.
pub fn beside(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{suffix}"))
}

/// How far one split's files are written (kept in the journal).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitState {
    /// Documents written.
    pub documents: u64,
    /// Tokens written (separators included).
    pub tokens: u64,
    /// Bytes of the temporary token file (bin, megatron).
    pub data_len: u64,
    /// Parquet parts written.
    pub parts: u64,
}

/// The files of one split being written.
pub struct SplitWriter {
    format: OutputFormat,
    dtype: Dtype,
    finals: Vec<PathBuf>,
    data: Option<BufWriter<File>>,
    /// The sha256 of what `data` holds so far (a resumed split hashes its kept prefix first).
    data_hash: sha2::Sha256,
    /// One document's bytes, reused.
    scratch: Vec<u8>,
    /// Megatron: the length of each document, u32, in a temporary file.
    sizes: Option<BufWriter<File>>,
    parts_dir: PathBuf,
    keep: Vec<String>,
    /// The documents of the current chunk (Parquet), written as one part by `sync`.
    pending: Vec<(Vec<u32>, Vec<Option<String>>)>,
    pub state: SplitState,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_owned(), source }
}

fn pq(path: &Path) -> impl Fn(parquet::errors::ParquetError) -> Error + '_ {
    move |e| Error::invalid(format!("{}: {e}", path.display()))
}

/// Opens `path` for appending from `len` (cut back to it; fresh when `len` is 0 and `fresh`).
fn open_at(path: &Path, len: u64, fresh: bool) -> Result<BufWriter<File>> {
    let mut f = OpenOptions::new().read(true).write(true).create(true).truncate(fresh).open(path).map_err(io(path))?;
    let have = f.metadata().map_err(io(path))?.len();
    if have < len {
        return Err(Error::invalid(format!(
            "{}: shorter ({have} bytes) than the journal says ({len}): delete the journal to start over",
            path.display()
        )));
    }
    f.set_len(len).map_err(io(path))?;
    f.seek(SeekFrom::Start(len)).map_err(io(path))?;
    Ok(BufWriter::with_capacity(1 << 20, f))
}

impl SplitWriter {
    /// The writer of one split; `resume` continues from a journal's state (the temporary
    /// files are cut back to its lengths), else the temporary files start empty.
    pub fn open(
        prefix: &Path,
        val: bool,
        format: OutputFormat,
        dtype: Dtype,
        keep: &[String],
        resume: Option<&SplitState>,
    ) -> Result<Self> {
        let finals = split_paths(prefix, val, format);
        let state = resume.cloned().unwrap_or_default();
        let fresh = resume.is_none();
        let mut w = SplitWriter {
            format,
            dtype,
            parts_dir: beside(&finals[0], "parts"),
            finals,
            data: None,
            data_hash: sha2::Sha256::new(),
            scratch: Vec::new(),
            sizes: None,
            keep: keep.to_vec(),
            pending: Vec::new(),
            state,
        };
        match format {
            OutputFormat::Bin | OutputFormat::Megatron => {
                let path = beside(&w.finals[0], "partial");
                w.data = Some(open_at(&path, w.state.data_len, fresh)?);
                w.data_hash = sha256_prefix(&path, w.state.data_len)?;
                if format == OutputFormat::Megatron {
                    w.sizes = Some(open_at(&w.sizes_path(), w.state.documents * 4, fresh)?);
                }
            }
            OutputFormat::Parquet => {
                if fresh {
                    let _ = std::fs::remove_dir_all(&w.parts_dir);
                }
                std::fs::create_dir_all(&w.parts_dir).map_err(io(&w.parts_dir))?;
                // Parts past the journal's count were written by a killed run after its last
                // journal entry: they are written again.
                for entry in std::fs::read_dir(&w.parts_dir).map_err(io(&w.parts_dir))? {
                    let p = entry.map_err(io(&w.parts_dir))?.path();
                    let n: Option<u64> = p.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse().ok());
                    if n.is_none_or(|n| n >= w.state.parts) {
                        std::fs::remove_file(&p).map_err(io(&p))?;
                    }
                }
            }
        }
        Ok(w)
    }

    fn sizes_path(&self) -> PathBuf {
        beside(&self.finals[0], "sizes")
    }

    fn part_path(&self, n: u64) -> PathBuf {
        self.parts_dir.join(format!("{n:08}.parquet"))
    }

    /// Appends one document: its ids, then the separator.
    pub fn push(&mut self, ids: Vec<u32>, separator: Option<u32>, keep: Vec<Option<String>>) -> Result<()> {
        let n = ids.len() as u64 + u64::from(separator.is_some());
        self.state.documents += 1;
        self.state.tokens += n;
        match self.format {
            OutputFormat::Parquet => {
                let mut ids = ids;
                ids.extend(separator);
                self.pending.push((ids, keep));
            }
            _ => {
                let path = &self.finals[0];
                let data = self.data.as_mut().expect("a token file");
                let buf = &mut self.scratch;
                buf.clear();
                match self.dtype {
                    Dtype::Uint16 => buf.extend(ids.iter().copied().chain(separator).flat_map(|id| (id as u16).to_le_bytes())),
                    Dtype::Uint32 | Dtype::Int32 => buf.extend(ids.iter().copied().chain(separator).flat_map(u32::to_le_bytes)),
                }
                data.write_all(buf).map_err(io(path))?;
                self.data_hash.update(&buf[..]);
                self.state.data_len += buf.len() as u64;
                if let Some(sizes) = &mut self.sizes {
                    let n = u32::try_from(n).ok().filter(|&n| n <= i32::MAX as u32).ok_or_else(|| {
                        Error::invalid(format!("a document of {n} tokens: Megatron's index holds at most 2^31 - 1 per document"))
                    })?;
                    sizes.write_all(&n.to_le_bytes()).map_err(io(path))?;
                }
            }
        }
        Ok(())
    }

    /// Hands what was pushed to the operating system (buffers flushed; a Parquet part written),
    /// so that the journal can record [`SplitWriter::state`]. No `fsync` here: a killed process
    /// loses nothing the system has, and syncing every chunk costs seconds on a busy disk. A
    /// power cut can leave files shorter than the journal says; [`SplitWriter::can_resume`]
    /// sees it and the job starts over. Complete files are synced before they are renamed.
    pub fn sync(&mut self) -> Result<()> {
        for (w, path) in [(&mut self.data, &self.finals[0]), (&mut self.sizes, &self.finals[0])] {
            if let Some(w) = w {
                w.flush().map_err(io(path))?;
            }
        }
        if self.format == OutputFormat::Parquet && !self.pending.is_empty() {
            let path = self.part_path(self.state.parts);
            let pending = std::mem::take(&mut self.pending);
            let batch = self.batch(pending)?;
            let file = File::create(&path).map_err(io(&path))?;
            let mut w = ArrowWriter::try_new(file, batch.schema(), Some(parquet_props())).map_err(pq(&path))?;
            w.write(&batch).map_err(pq(&path))?;
            w.close().map_err(pq(&path))?;
            self.state.parts += 1;
        }
        Ok(())
    }

    /// Whether the temporary files of a split are at least as long as `state` says (they
    /// are, unless the machine stopped before the system wrote them out).
    pub fn can_resume(prefix: &Path, val: bool, format: OutputFormat, state: &SplitState) -> bool {
        let finals = split_paths(prefix, val, format);
        let len = |p: PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
        match format {
            OutputFormat::Bin => len(beside(&finals[0], "partial")) >= state.data_len,
            OutputFormat::Megatron => {
                len(beside(&finals[0], "partial")) >= state.data_len && len(beside(&finals[0], "sizes")) >= state.documents * 4
            }
            OutputFormat::Parquet => (0..state.parts).all(|n| beside(&finals[0], "parts").join(format!("{n:08}.parquet")).is_file()),
        }
    }

    fn schema(&self) -> Arc<Schema> {
        let mut fields: Vec<Field> = self.keep.iter().map(|k| Field::new(k, DataType::Utf8, true)).collect();
        fields.push(Field::new("input_ids", DataType::List(Arc::new(Field::new_list_field(DataType::UInt32, true))), false));
        Arc::new(Schema::new(fields))
    }

    fn batch(&self, docs: Vec<(Vec<u32>, Vec<Option<String>>)>) -> Result<RecordBatch> {
        let mut columns: Vec<ArrayRef> = (0..self.keep.len())
            .map(|k| Arc::new(docs.iter().map(|(_, keep)| keep[k].as_deref()).collect::<StringArray>()) as ArrayRef)
            .collect();
        let mut offsets = Vec::with_capacity(docs.len() + 1);
        offsets.push(0i32);
        let mut values = Vec::with_capacity(docs.iter().map(|(ids, _)| ids.len()).sum());
        for (ids, _) in &docs {
            values.extend_from_slice(ids);
            let end = i32::try_from(values.len()).map_err(|_| Error::invalid("more than 2^31 tokens in one chunk of Parquet output"))?;
            offsets.push(end);
        }
        let item = Arc::new(Field::new_list_field(DataType::UInt32, true));
        let list = ListArray::try_new(item, OffsetBuffer::new(ScalarBuffer::from(offsets)), Arc::new(UInt32Array::from(values)), None)
            .map_err(|e| Error::invalid(e.to_string()))?;
        columns.push(Arc::new(list));
        RecordBatch::try_new(self.schema(), columns).map_err(|e| Error::invalid(e.to_string()))
    }

    /// Completes the split's temporary files (Megatron's index from the lengths, the Parquet
    /// file from its parts) and returns `(temporary, final)` pairs to rename and the sha256
    /// of the token file (or Parquet file).
    pub fn finish(mut self) -> Result<(Vec<(PathBuf, PathBuf)>, String)> {
        self.sync()?;
        let main = beside(&self.finals[0], "partial");
        let mut renames = vec![(main.clone(), self.finals[0].clone())];
        match self.format {
            OutputFormat::Bin => {}
            OutputFormat::Megatron => {
                drop(self.sizes.take());
                let idx = beside(&self.finals[1], "partial");
                self.write_megatron_index(&idx)?;
                renames.push((idx, self.finals[1].clone()));
            }
            OutputFormat::Parquet => self.merge_parts(&main)?,
        }
        let sha256 = match self.data.take() {
            Some(data) => {
                let f = data.into_inner().map_err(|e| Error::Io { path: main.clone(), source: e.into_error() })?;
                f.sync_all().map_err(io(&main))?;
                hex(&self.data_hash.finalize())
            }
            None => sha256_file(&main)?,
        };
        Ok((renames, sha256))
    }

    fn write_megatron_index(&self, idx: &Path) -> Result<()> {
        let sizes_path = self.sizes_path();
        let n = self.state.documents;
        let mut w = BufWriter::with_capacity(1 << 20, File::create(idx).map_err(io(idx))?);
        let mut put = |b: &[u8]| w.write_all(b).map_err(io(idx));
        put(b"MMIDIDX\x00\x00")?;
        put(&1u64.to_le_bytes())?;
        put(&[self.dtype.megatron_code()])?;
        put(&n.to_le_bytes())?;
        put(&(n + 1).to_le_bytes())?;
        // Lengths (i32), then pointers (i64), each streamed from the lengths file.
        for pass in 0..2 {
            let mut r = BufReader::with_capacity(1 << 20, File::open(&sizes_path).map_err(io(&sizes_path))?);
            let mut pointer = 0i64;
            let mut b = [0u8; 4];
            for _ in 0..n {
                r.read_exact(&mut b).map_err(io(&sizes_path))?;
                let len = u32::from_le_bytes(b);
                if pass == 0 {
                    put(&(len as i32).to_le_bytes())?;
                } else {
                    put(&pointer.to_le_bytes())?;
                    pointer += i64::from(len) * self.dtype.size() as i64;
                }
            }
        }
        for k in 0..=n as i64 {
            put(&k.to_le_bytes())?;
        }
        let f = w.into_inner().map_err(|e| Error::Io { path: idx.to_owned(), source: e.into_error() })?;
        f.sync_all().map_err(io(idx))
    }

    fn merge_parts(&self, out: &Path) -> Result<()> {
        let file = File::create(out).map_err(io(out))?;
        let mut w = ArrowWriter::try_new(file, self.schema(), Some(parquet_props())).map_err(pq(out))?;
        for n in 0..self.state.parts {
            let part = self.part_path(n);
            let f = File::open(&part).map_err(io(&part))?;
            let reader = ParquetRecordBatchReaderBuilder::try_new(f).map_err(pq(&part))?.build().map_err(pq(&part))?;
            for batch in reader {
                let batch = batch.map_err(|e| Error::invalid(format!("{}: {e}", part.display())))?;
                w.write(&batch).map_err(pq(out))?;
                // Row groups of about 64 MiB: memory stays bounded whatever the row count.
                if w.in_progress_size() > 64 << 20 {
                    w.flush().map_err(pq(out))?;
                }
            }
        }
        let f = w.into_inner().map_err(pq(out))?;
        f.sync_all().map_err(io(out))
    }

    /// Removes the split's helper files (lengths, parts) once the outputs are in place.
    pub fn cleanup(prefix: &Path, val: bool, format: OutputFormat) {
        let finals = split_paths(prefix, val, format);
        let _ = std::fs::remove_file(beside(&finals[0], "sizes"));
        let _ = std::fs::remove_dir_all(beside(&finals[0], "parts"));
    }
}

pub(crate) fn parquet_props() -> WriterProperties {
    WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::default())).build()
}

/// The sha256 of a file, in hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    Ok(hex(&sha256_prefix(path, u64::MAX)?.finalize()))
}

/// The hasher that has read the first `len` bytes of `path` (fewer if the file is shorter).
fn sha256_prefix(path: &Path, len: u64) -> Result<sha2::Sha256> {
    let mut h = sha2::Sha256::new();
    if len == 0 {
        return Ok(h);
    }
    let mut f = File::open(path).map_err(io(path))?.take(len);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h)
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
