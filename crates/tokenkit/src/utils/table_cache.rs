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

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::utils::hash_bytes;
use crate::{Error, Result};

/// The environment variable naming the cache directory.
pub const CACHE_DIR_ENV: &str = "TOKENKIT_CACHE_DIR";
/// The environment variable that turns the cache off when `0`, `off` or `false`.
pub const CACHE_ENV: &str = "TOKENKIT_CACHE";

const MAGIC: &[u8; 8] = b"TKTABLE1";

/// The name of a cache entry: a sha256 over the inputs of the tables and the library's sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl Key {
    /// A key over `kind` (what the tables are) and `parts` (every input they are built from).
    pub fn new(kind: &str, parts: &[&[u8]]) -> Self {
        let mut h = Sha256::new();
        for p in [env!("TOKENKIT_SOURCE_HASH").as_bytes(), kind.as_bytes()].into_iter().chain(parts.iter().copied()) {
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
/// can replace the library too).
fn checksum(payload: &[u8]) -> u64 {
    hash_bytes(payload, 0x7461_626c_6573)
}

/// The payload stored under `key` in `dir`, when there is an entry and it checks out.
fn load_from(dir: &Path, key: &Key) -> Option<Vec<u8>> {
    let mut data = std::fs::read(path_in(dir, key)).ok()?;
    let header = MAGIC.len() + 32 + 16;
    if data.len() < header || &data[..8] != MAGIC || data[8..40] != key.0 {
        return None;
    }
    let len = u64::from_le_bytes(data[40..48].try_into().ok()?) as usize;
    let sum = u64::from_le_bytes(data[48..56].try_into().ok()?);
    if data.len() - header != len || checksum(&data[header..]) != sum {
        return None;
    }
    data.drain(..header);
    Some(data)
}

/// The value stored under `key` (`read` from its payload), else the one `build` makes, then
/// stored (`write` gives its payload, `None` for a value the cache does not hold). An entry
/// that `read` rejects is built again and replaced: the cache never changes an answer.
pub fn cached<T>(
    key: &Key,
    read: impl FnOnce(&[u8]) -> Result<T>,
    build: impl FnOnce() -> Result<T>,
    write: impl FnOnce(&T) -> Option<Vec<u8>>,
) -> Result<T> {
    let Some(dir) = dir() else { return build() };
    if let Some(value) = load_from(&dir, key).and_then(|p| read(&p).ok()) {
        return Ok(value);
    }
    let value = build()?;
    if let Some(payload) = write(&value) {
        store_in(&dir, key, &payload);
    }
    Ok(value)
}

/// Stores `payload` under `key` in `dir`; failures (read-only, full disk) are ignored.
fn store_in(dir: &Path, key: &Key, payload: &[u8]) {
    let path = path_in(dir, key);
    if let Some(parent) = path.parent() {
        if std::fs::create_dir_all(parent).is_err() {
            return;
        }
    }
    let mut data = Vec::with_capacity(payload.len() + 56);
    data.extend_from_slice(MAGIC);
    data.extend_from_slice(&key.0);
    data.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    data.extend_from_slice(&checksum(payload).to_le_bytes());
    data.extend_from_slice(payload);
    let _ = crate::utils::atomic_file::write_atomic(&path, &data);
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
}

/// Reads what a [`Writer`] wrote; every read is bounds-checked, a short or malformed payload
/// is an error (then the tables are built again).
#[derive(Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
}

fn corrupt() -> Error {
    Error::invalid("table cache: malformed entry")
}

impl<'a> Reader<'a> {
    /// A reader of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }
    /// `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.data.len() {
            return Err(corrupt());
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        Ok(head)
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
    fn entries_check_their_key_and_checksum() {
        let dir = std::env::temp_dir().join(format!("tokenkit-table-cache-{}", std::process::id()));
        let key = Key::new("test", &[b"input"]);
        assert_eq!(load_from(&dir, &key), None);
        store_in(&dir, &key, b"payload");
        assert_eq!(load_from(&dir, &key).as_deref(), Some(&b"payload"[..]));
        assert_eq!(load_from(&dir, &Key::new("test", &[b"other input"])), None);
        // A corrupt or truncated entry is not read.
        let p = path_in(&dir, &key);
        let mut data = std::fs::read(&p).unwrap();
        *data.last_mut().unwrap() ^= 1;
        std::fs::write(&p, &data).unwrap();
        assert_eq!(load_from(&dir, &key), None);
        std::fs::write(&p, &data[..data.len() - 1]).unwrap();
        assert_eq!(load_from(&dir, &key), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
