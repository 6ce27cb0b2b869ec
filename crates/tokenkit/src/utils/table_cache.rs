//! A content-addressed cache of built tables, so that loading a tokenizer a second time (in
//! another process: a CLI call, a worker) reads the tables its first load built instead of
//! building them again (a tiktoken encoding's BPE tables and raw-byte encoder take most of its
//! load time).
//!
//! An entry is named by a [`Key`]: the sha256 of everything the tables are built from (the
//! file's bytes, the pattern, the special tokens...) and of the library's own sources
//! (`TOKENKIT_SOURCE_HASH`, set by the build script), so tables built by other code or from
//! other input are never found. An entry file holds a header (magic, the key, the payload's
//! length and checksum) and the payload; anything that does not check out (truncated, corrupt,
//! written by another version) is ignored and the tables are built again. Entries are written
//! to a temporary name and renamed ([`crate::utils::atomic_file`]); a cache that cannot be
//! written is no error, the load goes on without it.
//!
//! Where: `$TOKENKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/tokenkit/tables` (or
//! `~/.cache/tokenkit/tables`); `TOKENKIT_CACHE=0` turns the cache off.
//!
//! Size: at most `$TOKENKIT_CACHE_MAX_MB` megabytes (default [`DEFAULT_MAX_MB`]). A load that
//! finds an entry marks it used (its modification time); after an entry is written, the least
//! recently used entries past the budget are removed ([`prune`]). Processes never wait on each
//! other: a reader keeps reading an entry removed meanwhile (the open file outlives its name), a
//! removal that loses a race is ignored, and an entry is only ever replaced whole (by rename).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// The environment variable naming the cache directory.
pub const CACHE_DIR_ENV: &str = "TOKENKIT_CACHE_DIR";
/// The environment variable that turns the cache off when `0`, `off` or `false`.
pub const CACHE_ENV: &str = "TOKENKIT_CACHE";

/// The environment variable bounding the cache's size, in megabytes (10^6 bytes).
pub const MAX_MB_ENV: &str = "TOKENKIT_CACHE_MAX_MB";
/// The cache's size bound when [`MAX_MB_ENV`] is not set: room for some thirty tokenizers with
/// a 200k vocabulary.
pub const DEFAULT_MAX_MB: u64 = 1000;

const MAGIC: &[u8; 8] = b"TKTABLE2";
const SUFFIX: &str = ".bin";
/// Temporary files of a writer that died are removed once they are this old.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// The name of a cache entry: a sha256 over the inputs of the tables and the library's sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl Key {
    /// A key over `kind` (what the tables are) and `parts` (every input they are built from).
    pub fn new(kind: &str, parts: &[&[u8]]) -> Self {
        let mut h = Sha256::new();
        // Tables are stored in this target's byte order and layout.
        let target = format!("{}-{}", std::env::consts::ARCH, cfg!(target_endian = "little"));
        for p in [env!("TOKENKIT_SOURCE_HASH").as_bytes(), target.as_bytes(), kind.as_bytes()].into_iter().chain(parts.iter().copied()) {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        Key(h.finalize().into())
    }

    fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The cache directory, `None` when the cache is off or no directory is known.
pub fn dir() -> Option<PathBuf> {
    if std::env::var(CACHE_ENV).is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "0" | "off" | "false" | "no")) {
        return None;
    }
    if let Some(d) = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("tokenkit").join("tables"))
}

fn path_in(dir: &Path, key: &Key) -> PathBuf {
    dir.join(format!("{}.bin", key.hex()))
}

/// A checksum of the payload (not a security boundary: whoever can write the cache directory
/// can replace the library too): XXH3, which runs at the speed of memory (SIMD, chosen at run
/// time), as a several-megabyte entry is checked on every load.
fn checksum(payload: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(payload)
}

/// Stores what `write` gives under `key` unless an entry is there already (it is not read:
/// a bad one is replaced by the next load that rejects it).
pub fn ensure(key: &Key, write: impl FnOnce() -> Option<Vec<u8>>) {
    let Some(dir) = dir() else { return };
    if !path_in(&dir, key).is_file() {
        if let Some(payload) = write() {
            store_in(&dir, key, &payload);
        }
    }
}

/// Stores what `write` gives under the key `key` makes (only when the cache is on), replacing
/// any entry there (one that holds less: an entry is only ever replaced whole, so a process
/// reading the old one goes on reading it).
pub fn replace(key: impl FnOnce() -> Key, write: impl FnOnce() -> Option<Vec<u8>>) {
    let Some(dir) = dir() else { return };
    if let Some(payload) = write() {
        store_in(&dir, &key(), &payload);
    }
}

/// The payload stored under `key` in `dir`, when there is an entry and it checks out.
fn load_from(dir: &Path, key: &Key) -> Option<Payload> {
    let path = path_in(dir, key);
    let file = std::fs::File::open(&path).ok()?;
    // Entries are only ever replaced whole (by rename) or removed (unlinked): the mapped file
    // is never written to while it is mapped, and outlives its name.
    // SAFETY: the map is read-only and the file is not modified in place (see above).
    // Populated in one call: the checksum reads every page, where faulting them in one at a
    // time costs more than the read.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()?;
    let data: &[u8] = &map;
    let header = HEADER;
    if data.len() < header || &data[..8] != MAGIC || data[8..40] != key.0 {
        return None;
    }
    let len = u64::from_le_bytes(data[40..48].try_into().ok()?) as usize;
    let sum = u64::from_le_bytes(data[48..56].try_into().ok()?);
    if data.len() - header != len || checksum(&data[header..]) != sum {
        return None;
    }
    mark_used(&path);
    Some(Payload { map: Arc::new(map) })
}

/// The bytes of an entry before its payload: magic, key, length, checksum (a multiple of 8,
/// so that the payload of a mapped entry is 8-byte aligned).
const HEADER: usize = MAGIC.len() + 32 + 16;

/// The payload of a cache entry, mapped in place: [`Payload::reader`] gives [`Table`]s that
/// are views of it, so a load does not copy them.
#[derive(Debug, Clone)]
pub struct Payload {
    map: Arc<memmap2::Mmap>,
}

impl Payload {
    /// A reader of the payload whose [`Reader::table`]s are views of it.
    pub fn reader(&self) -> Reader<'_> {
        Reader { data: &self.map[HEADER..], pos: 0, backing: Some(&self.map) }
    }
}

impl std::ops::Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map[HEADER..]
    }
}

/// Sets the modification time of the entry at `path` to now: the order [`prune`] keeps.
fn mark_used(path: &Path) {
    if let Ok(f) = std::fs::File::options().write(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// The size bound in bytes: [`MAX_MB_ENV`] megabytes, else [`DEFAULT_MAX_MB`].
fn max_bytes() -> u64 {
    let mb = std::env::var(MAX_MB_ENV).ok().and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(DEFAULT_MAX_MB);
    mb.saturating_mul(1_000_000)
}

/// Removes the least recently used entries of `dir` until the others fit in `max_bytes`
/// (never `keep`, the entry just written), and temporary files older than [`STALE_TEMP`].
/// Files that are not the cache's are left alone.
pub fn prune(dir: &Path, max_bytes: u64, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let now = std::time::SystemTime::now();
    let mut found = Vec::new();
    for e in entries.flatten() {
        let (name, Ok(meta)) = (e.file_name(), e.metadata()) else { continue };
        let Some(name) = name.to_str() else { continue };
        let modified = meta.modified().unwrap_or(now);
        let is_entry = |n: &str| n.len() == 64 + SUFFIX.len() && n.ends_with(SUFFIX) && n[..64].bytes().all(|b| b.is_ascii_hexdigit());
        if is_entry(name) {
            found.push((modified, meta.len(), e.path()));
        } else if name.split_once(".tmp").is_some_and(|(entry, _)| is_entry(entry))
            && now.duration_since(modified).is_ok_and(|age| age > STALE_TEMP)
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
    // Newest first; the entry just written counts first whatever its time says.
    found.sort_by(|a, b| (b.2 == keep).cmp(&(a.2 == keep)).then(b.0.cmp(&a.0)));
    let mut total = 0u64;
    for (_, len, path) in found {
        total = total.saturating_add(len);
        if total > max_bytes && path != keep {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The value stored under `key` (`read` from its payload), else the one `build` makes, then
/// stored (`write` gives its payload, `None` for a value the cache does not hold). An entry
/// that `read` rejects is built again and replaced: the cache never changes an answer.
pub fn cached<T>(
    key: &Key,
    read: impl FnOnce(&Payload) -> Result<T>,
    build: impl FnOnce() -> Result<T>,
    write: impl FnOnce(&T) -> Option<Vec<u8>>,
) -> Result<T> {
    Ok(cached_status(key, read, build, write)?.0)
}

/// What a load did with the cache ([`cached_status`]), as `tokenkit inspect` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Status {
    /// The cache is off ([`CACHE_ENV`]) or no directory is known.
    #[default]
    Off,
    /// Read from the entry at `path`.
    Hit(PathBuf),
    /// Built, with no entry at `path` (`rejected`: there was one, and it did not check out);
    /// `stored` when the new entry was written.
    Built { path: PathBuf, rejected: bool, stored: bool },
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Off => write!(f, "off (built in memory; {CACHE_ENV}=0 or no cache directory)"),
            Status::Hit(path) => write!(f, "hit, read from {}", path.display()),
            Status::Built { path, rejected, stored } => write!(
                f,
                "{}, built{} {}",
                if *rejected { "stale entry rejected" } else { "miss" },
                if *stored { ", stored in" } else { "; could not store" },
                path.display()
            ),
        }
    }
}

/// [`cached`], also saying whether the value was read, or built (and stored), and where.
pub fn cached_status<T>(
    key: &Key,
    read: impl FnOnce(&Payload) -> Result<T>,
    build: impl FnOnce() -> Result<T>,
    write: impl FnOnce(&T) -> Option<Vec<u8>>,
) -> Result<(T, Status)> {
    cached_status_keyed(|| key.clone(), read, build, write)
}

/// [`cached_status`] with the key made by `key` only when the cache is on (a key hashes every
/// input: the whole file).
pub fn cached_status_keyed<T>(
    key: impl FnOnce() -> Key,
    read: impl FnOnce(&Payload) -> Result<T>,
    build: impl FnOnce() -> Result<T>,
    write: impl FnOnce(&T) -> Option<Vec<u8>>,
) -> Result<(T, Status)> {
    let Some(dir) = dir() else { return Ok((build()?, Status::Off)) };
    let key = &key();
    if let Some(value) = load_from(&dir, key).and_then(|p| read(&p).ok()) {
        return Ok((value, Status::Hit(path_in(&dir, key))));
    }
    let path = path_in(&dir, key);
    let rejected = path.is_file();
    let value = build()?;
    let stored = write(&value).is_some_and(|payload| store_in(&dir, key, &payload));
    Ok((value, Status::Built { path, rejected, stored }))
}

/// Stores `payload` under `key` in `dir`; failures (read-only, full disk) are ignored (the
/// result says whether it was stored).
fn store_in(dir: &Path, key: &Key, payload: &[u8]) -> bool {
    let path = path_in(dir, key);
    if let Some(parent) = path.parent() {
        if std::fs::create_dir_all(parent).is_err() {
            return false;
        }
    }
    let mut data = Vec::with_capacity(payload.len() + HEADER);
    data.extend_from_slice(MAGIC);
    data.extend_from_slice(&key.0);
    data.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    data.extend_from_slice(&checksum(payload).to_le_bytes());
    data.extend_from_slice(payload);
    let stored = crate::utils::atomic_file::write_atomic(&path, &data).is_ok();
    if stored {
        prune(dir, max_bytes(), &path);
    }
    stored
}

/// Writes tables as little-endian numbers and length-prefixed arrays.
#[derive(Debug, Default)]
pub struct Writer {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Writer {
    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A `bool`.
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }
    /// A length (as `u64`).
    pub fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    /// Bytes, with their length.
    pub fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.buf.extend_from_slice(b);
    }
    /// `u32`s, with their count.
    pub fn u32s(&mut self, v: &[u32]) {
        self.len(v.len());
        self.buf.reserve(v.len() * 4);
        v.iter().for_each(|&x| self.u32(x));
    }
    /// Records of `N` `u32`s, with their count.
    pub fn records<const N: usize>(&mut self, v: impl ExactSizeIterator<Item = [u32; N]>) {
        self.len(v.len());
        self.buf.reserve(v.len() * N * 4);
        v.flatten().for_each(|x| self.u32(x));
    }
    /// `u64`s, with their count.
    pub fn u64s(&mut self, v: &[u64]) {
        self.len(v.len());
        self.buf.reserve(v.len() * 8);
        v.iter().for_each(|&x| self.u64(x));
    }
    /// An array as its bytes in memory (this target's byte order), with its count, 8-byte
    /// aligned in the payload: [`Reader::table`] reads it in place.
    pub fn table<T: Pod>(&mut self, v: &[T]) {
        self.len(v.len());
        self.buf.resize(self.buf.len().next_multiple_of(TABLE_ALIGN), 0);
        // SAFETY: `T: Pod` has no padding, so all its bytes are initialized.
        self.buf.extend_from_slice(unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) });
    }
}

/// The pages [`Table::release_pages`] rounds to (on a system with larger pages the range is
/// widened to whole pages by `madvise`, which drops the neighbours' pages too: they are read
/// again from the file when used, the same bytes).
#[cfg(unix)]
fn page_size() -> usize {
    4096
}

/// The alignment of a [`Writer::table`] in the payload (and of the payload in a mapped entry).
const TABLE_ALIGN: usize = 8;

/// Plain data that a [`Table`] stores as its bytes.
///
/// # Safety
/// The type has no padding bytes, every bit pattern is a value of it, and its alignment is at
/// most 8: integers and `#[repr(C)]` structs of them.
pub unsafe trait Pod: Copy + Send + Sync + 'static {}
// SAFETY: integers.
unsafe impl Pod for u8 {}
// SAFETY: integers.
unsafe impl Pod for u32 {}
// SAFETY: integers.
unsafe impl Pod for u64 {}
// SAFETY: any bits are an `f32` (NaNs included), no padding.
unsafe impl Pod for f32 {}

/// What keeps a [`Table`]'s elements alive.
#[derive(Clone)]
enum Owner<T> {
    /// Built in memory (shared by the clones).
    Vec(Arc<Vec<T>>),
    /// In a mapped cache entry.
    Map(#[allow(dead_code, reason = "keeps the map alive")] Arc<memmap2::Mmap>),
}

/// A read-only array of plain data: built in memory, or a view of a mapped cache entry (a
/// load from the cache copies nothing, and pages of a table that are never read are never
/// read from disk). Clones share the elements; [`Table::make_mut`] copies them when shared.
pub struct Table<T: Pod> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
    owner: Owner<T>,
}

// SAFETY: the elements are immutable while shared (`make_mut` copies them first) and `T: Pod`
// is `Send + Sync`; the owner is an `Arc` of a `Vec<T>` or of a read-only map.
unsafe impl<T: Pod> Send for Table<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Pod> Sync for Table<T> {}

impl<T: Pod> Table<T> {
    /// The elements, mutable: copied first when the table is shared, mapped or a part of one
    /// ([`Self::slice`]).
    pub fn make_mut(&mut self) -> &mut [T] {
        let whole = matches!(&self.owner, Owner::Vec(v) if v.as_ptr() == self.ptr.as_ptr().cast_const() && v.len() == self.len);
        if !whole {
            self.owner = Owner::Vec(Arc::new(self.to_vec()));
        }
        match &mut self.owner {
            Owner::Vec(v) => {
                let v = Arc::make_mut(v);
                self.ptr = std::ptr::NonNull::new(v.as_mut_ptr()).unwrap_or(std::ptr::NonNull::dangling());
                self.len = v.len();
                v.as_mut_slice()
            }
            Owner::Map(_) => unreachable!("a mapped table was copied above"),
        }
    }

    /// The elements `range` of this table, shared with it (no copy); empty when `range` is not
    /// within it.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
        match self.get(range) {
            Some(part) => Self {
                ptr: std::ptr::NonNull::new(part.as_ptr().cast_mut()).unwrap_or(std::ptr::NonNull::dangling()),
                len: part.len(),
                owner: self.owner.clone(),
            },
            None => Self::default(),
        }
    }

    /// Whether the elements are a view of a mapped cache entry.
    pub fn is_mapped(&self) -> bool {
        matches!(self.owner, Owner::Map(_))
    }

    /// For a view of a mapped cache entry: lets the process's resident memory drop the pages
    /// that lie wholly within the elements (their neighbours' are kept), for elements read
    /// rarely after a load. The elements stay the same: the map is of a file that is never
    /// written in place, so a page read again comes back from the file (the page cache).
    pub fn release_pages(&self) {
        #[cfg(unix)]
        if let Owner::Map(map) = &self.owner {
            let page = page_size();
            let start = self.ptr.as_ptr() as usize - map.as_ptr() as usize;
            let end = start + std::mem::size_of_val(&**self);
            let (first, last) = (start.next_multiple_of(page), end - end % page);
            if last > first {
                // SAFETY: `MADV_DONTNEED` on a read-only map of a file that is not modified in
                // place (see `load_from`) only drops pages, which later reads fault in again
                // with the same bytes; the range is within the map.
                let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, first, last - first) };
            }
        }
    }
}

impl<T: Pod> From<Vec<T>> for Table<T> {
    fn from(mut v: Vec<T>) -> Self {
        let ptr = std::ptr::NonNull::new(v.as_mut_ptr()).unwrap_or(std::ptr::NonNull::dangling());
        Self { ptr, len: v.len(), owner: Owner::Vec(Arc::new(v)) }
    }
}

impl<T: Pod> std::ops::Deref for Table<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` and `len` are the owner's elements (a `Vec`'s buffer, or an aligned
        // range of the map checked against its length), alive as long as `owner`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Pod> Clone for Table<T> {
    fn clone(&self) -> Self {
        Self { ptr: self.ptr, len: self.len, owner: self.owner.clone() }
    }
}

impl<T: Pod> Default for Table<T> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Pod + PartialEq> PartialEq for Table<T> {
    fn eq(&self, o: &Self) -> bool {
        **self == **o
    }
}

/// Reads what a [`Writer`] wrote; every read is bounds-checked, a short or malformed payload
/// is an error (then the tables are built again).
#[derive(Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
    /// Bytes read so far (where [`Writer::table`]'s padding goes).
    pos: usize,
    /// The map `data` is part of, when it is one: tables are then views of it.
    backing: Option<&'a Arc<memmap2::Mmap>>,
}

fn corrupt() -> Error {
    Error::invalid("table cache: malformed entry")
}

impl<'a> Reader<'a> {
    /// A reader of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0, backing: None }
    }
    /// `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.data.len() {
            return Err(corrupt());
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        self.pos += n;
        Ok(head)
    }
    /// An array written by [`Writer::table`]: a view of the entry when it is mapped, else a copy.
    pub fn table<T: Pod>(&mut self) -> Result<Table<T>> {
        let size = std::mem::size_of::<T>();
        let n = self.len(size)?;
        self.take(self.pos.next_multiple_of(TABLE_ALIGN) - self.pos)?;
        let bytes = self.take(n * size)?;
        if let Some(map) = self.backing {
            if let Some(ptr) = std::ptr::NonNull::new(bytes.as_ptr().cast_mut().cast::<T>()).filter(|p| p.as_ptr().is_aligned()) {
                return Ok(Table { ptr, len: n, owner: Owner::Map(Arc::clone(map)) });
            }
        }
        let mut v: Vec<T> = Vec::with_capacity(n);
        // SAFETY: `bytes` holds `n` values of `T: Pod` (any bits are a value), `v` room for them.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), n * size);
            v.set_len(n);
        }
        Ok(v.into())
    }
    /// A `u32`.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().map_err(|_| corrupt())?))
    }
    /// A `u64`.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| corrupt())?))
    }
    /// A `bool`.
    pub fn bool(&mut self) -> Result<bool> {
        match self.take(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(corrupt()),
        }
    }
    /// A length, at most what is left to read divided by `unit` bytes per item.
    pub fn len(&mut self, unit: usize) -> Result<usize> {
        let n = usize::try_from(self.u64()?).map_err(|_| corrupt())?;
        if n.checked_mul(unit.max(1)).is_none_or(|b| b > self.data.len()) {
            return Err(corrupt());
        }
        Ok(n)
    }
    /// Bytes written by [`Writer::bytes`].
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.len(1)?;
        self.take(n)
    }
    /// `u32`s written by [`Writer::u32s`].
    pub fn u32s(&mut self) -> Result<Vec<u32>> {
        let n = self.len(4)?;
        Ok(self.take(n * 4)?.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
    /// Records written by [`Writer::records`].
    pub fn records<const N: usize>(&mut self) -> Result<Vec<[u32; N]>> {
        let n = self.len(4 * N)?;
        let bytes = self.take(n * 4 * N)?;
        Ok(bytes
            .chunks_exact(4 * N)
            .map(|c| std::array::from_fn(|i| u32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]])))
            .collect())
    }
    /// `u64`s written by [`Writer::u64s`].
    pub fn u64s(&mut self) -> Result<Vec<u64>> {
        let n = self.len(8)?;
        Ok(self.take(n * 8)?.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect())
    }
    /// Whether everything was read.
    pub fn finish(self) -> Result<()> {
        if self.data.is_empty() {
            Ok(())
        } else {
            Err(corrupt())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_malformed_payloads() {
        let mut w = Writer::default();
        w.u32(7);
        w.bool(true);
        w.bytes(b"abc");
        w.u32s(&[1, 2, 3]);
        w.u64s(&[u64::MAX]);
        w.records([[1, 2], [3, 4]].into_iter());
        let mut r = Reader::new(&w.buf);
        assert_eq!((r.u32().unwrap(), r.bool().unwrap(), r.bytes().unwrap()), (7, true, &b"abc"[..]));
        assert_eq!((r.u32s().unwrap(), r.u64s().unwrap()), (vec![1, 2, 3], vec![u64::MAX]));
        assert_eq!(r.records::<2>().unwrap(), vec![[1, 2], [3, 4]]);
        r.finish().unwrap();
        // Every truncation is an error, never a panic or a huge allocation.
        for cut in 0..w.buf.len() {
            let mut r = Reader::new(&w.buf[..cut]);
            let all = (|| {
                r.u32()?;
                r.bool()?;
                r.bytes()?;
                r.u32s()?;
                r.u64s()?;
                r.records::<2>()
            })();
            assert!(all.is_err(), "{cut}");
        }
        let mut huge = Writer::default();
        huge.u64(u64::MAX);
        assert!(Reader::new(&huge.buf).u32s().is_err());
    }

    #[test]
    fn prune_keeps_the_most_recently_used_entries_within_the_budget() {
        let dir = std::env::temp_dir().join(format!("tokenkit-table-cache-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let keys: Vec<Key> = (0..4u8).map(|i| Key::new("test", &[&[i]])).collect();
        let t0 = std::time::SystemTime::now() - std::time::Duration::from_secs(10_000);
        for (i, key) in keys.iter().enumerate() {
            store_in(&dir, key, &[0u8; 1000]);
            let f = std::fs::File::options().write(true).open(path_in(&dir, key)).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(i as u64 * 100)).unwrap();
        }
        // Entry 0 is read (marked used): it is now the most recent.
        assert!(load_from(&dir, &keys[0]).is_some());
        let other = dir.join("not-an-entry.txt");
        std::fs::write(&other, [0u8; 5000]).unwrap();
        let stale_temp = dir.join(format!("{}.tmp1.0", path_in(&dir, &keys[3]).file_name().unwrap().to_str().unwrap()));
        std::fs::write(&stale_temp, b"half").unwrap();
        std::fs::File::options().write(true).open(&stale_temp).unwrap().set_modified(t0).unwrap();
        // Room for two entries (1056 bytes each), the one just written (3) kept.
        prune(&dir, 2200, &path_in(&dir, &keys[3]));
        let present: Vec<bool> = keys.iter().map(|k| path_in(&dir, k).is_file()).collect();
        assert_eq!(present, [true, false, false, true]);
        assert!(other.is_file() && !stale_temp.exists());
        // A budget of nothing still keeps the entry just written.
        prune(&dir, 0, &path_in(&dir, &keys[3]));
        assert_eq!(keys.iter().map(|k| path_in(&dir, k).is_file()).collect::<Vec<_>>(), [false, false, false, true]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn tables_are_views_of_a_mapped_entry_and_copies_otherwise() {
        let dir = std::env::temp_dir().join(format!("tokenkit-table-cache-tables-{}", std::process::id()));
        let key = Key::new("test", &[b"tables"]);
        let mut w = Writer::default();
        w.bool(true); // an odd offset before the table: padded to 8
        w.table(&[1u64, u64::MAX]);
        w.table(&[7u32, 8, 9]);
        w.table::<u8>(&[]);
        store_in(&dir, &key, &w.buf);
        let payload = load_from(&dir, &key).expect("the entry just stored");
        let read = |mut r: Reader<'_>| -> Result<(Table<u64>, Table<u32>, Table<u8>)> {
            assert!(r.bool()?);
            let t = (r.table()?, r.table()?, r.table()?);
            r.finish()?;
            Ok(t)
        };
        let (a, b, c) = read(payload.reader()).unwrap();
        assert!(a.is_mapped() && b.is_mapped() && c.is_mapped());
        assert_eq!((&a[..], &b[..], c.len()), (&[1, u64::MAX][..], &[7, 8, 9][..], 0));
        // The same payload read from memory: copies with the same values.
        let (a2, b2, _) = read(Reader::new(&payload)).unwrap();
        assert!(!a2.is_mapped() && a2 == a && b2 == b);
        // A part of a table is a view of it, copied when written to (of a table built in memory too).
        let part = b.slice(1..3);
        assert!(part.is_mapped() && part[..] == [8, 9] && b.slice(2..9).is_empty());
        let mut built: Table<u32> = vec![1, 2, 3].into();
        let mut part = built.slice(1..2);
        part.make_mut()[0] = 20;
        built.make_mut()[0] = 10;
        assert_eq!((&part[..], &built[..]), (&[20][..], &[10, 2, 3][..]));
        // A mapped table written to is copied first; its clones keep the old values.
        drop(payload);
        let mut m = b.clone();
        m.make_mut()[0] = 70;
        assert_eq!((&m[..], &b[..]), (&[70, 8, 9][..], &[7, 8, 9][..]));
        assert!(!m.is_mapped() && b.is_mapped());
        // A view outlives the entry's name (removed, as `prune` does).
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(&a[..], &[1, u64::MAX]);
        // Every cut of the payload is an error.
        for cut in 0..w.buf.len() {
            assert!(read(Reader::new(&w.buf[..cut])).is_err(), "{cut}");
        }
    }

    #[test]
    fn entries_check_their_key_and_checksum() {
        let dir = std::env::temp_dir().join(format!("tokenkit-table-cache-{}", std::process::id()));
        let key = Key::new("test", &[b"input"]);
        assert!(load_from(&dir, &key).is_none());
        store_in(&dir, &key, b"payload");
        assert_eq!(load_from(&dir, &key).as_deref(), Some(&b"payload"[..]));
        assert!(load_from(&dir, &Key::new("test", &[b"other input"])).is_none());
        // A corrupt or truncated entry is not read.
        let p = path_in(&dir, &key);
        let mut data = std::fs::read(&p).unwrap();
        *data.last_mut().unwrap() ^= 1;
        std::fs::write(&p, &data).unwrap();
        assert!(load_from(&dir, &key).is_none());
        std::fs::write(&p, &data[..data.len() - 1]).unwrap();
        assert!(load_from(&dir, &key).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
