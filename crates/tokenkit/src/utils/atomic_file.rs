//! Writing files so that a crash, a full disk or a killed process never leaves a partial file
//! under the final name, nor replaces a good file with a partial one.
//!
//! Every file tokenkit writes goes through here: the data goes to a temporary file in the same
//! directory (so that the rename stays on one file system and is atomic), is flushed to disk
//! (`fsync`), and only then is renamed over the final name. A set of files written together
//! (a tokenizer directory) is renamed only once every file of the set is complete.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Error, Result};

/// Writes `data` to `path` atomically: readers see the old file or the complete new one, never
/// a part. A symlink at `path` is followed (its target is replaced); an existing file's
/// permissions are kept. A path that is not a regular file (`/dev/stdout`, a named pipe) is
/// written to directly: there is nothing to replace.
pub fn write_atomic(path: impl AsRef<Path>, data: &[u8]) -> Result<()> {
    let mut files = AtomicFiles::new();
    files.write(path, data)?;
    files.commit()
}

/// Files written as one set: [`write`](Self::write) puts each in a temporary file beside its
/// final name, [`commit`](Self::commit) renames them all. Dropped without `commit` (an error
/// while writing a later file, a panic), it removes its temporary files and leaves every final
/// name as it was.
#[derive(Debug, Default)]
pub struct AtomicFiles {
    /// `(temporary, final)` paths, in the order written.
    pending: Vec<(PathBuf, PathBuf)>,
}

impl AtomicFiles {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes `data` to a temporary file beside `path` and flushes it to disk; `path` itself is
    /// not touched until [`commit`](Self::commit).
    pub fn write(&mut self, path: impl AsRef<Path>, data: &[u8]) -> Result<()> {
        let path = resolve_symlink(path.as_ref());
        if is_special_file(&path) {
            let io = |source| Error::Io { path: path.clone(), source };
            return OpenOptions::new().write(true).truncate(true).open(&path).map_err(io)?.write_all(data).map_err(io);
        }
        let (temp, mut file) = create_temp(&path)?;
        // Registered before writing, so that a failed write is cleaned up by `drop`.
        self.pending.push((temp.clone(), path.clone()));
        let io = |source| Error::Io { path: path.clone(), source };
        file.write_all(data).map_err(io)?;
        if let Ok(meta) = std::fs::metadata(&path) {
            file.set_permissions(meta.permissions()).map_err(io)?;
        }
        // Data on disk before the rename makes it visible: otherwise a power cut right after
        // the rename can leave an empty file under the final name.
        file.sync_all().map_err(io)
    }

    /// Renames every file written to its final name, then flushes the directories so that the
    /// renames themselves survive a power cut.
    pub fn commit(mut self) -> Result<()> {
        // A rename that fails halfway would leave a mix of new and old files: rule out the one
        // failure that can be seen beforehand (a directory where a file goes) for every file.
        if let Some((_, path)) = self.pending.iter().find(|(_, p)| p.is_dir()) {
            let source = std::io::Error::other("is a directory; expected a file name");
            return Err(Error::Io { path: path.clone(), source });
        }
        let pending = std::mem::take(&mut self.pending);
        for (k, (temp, path)) in pending.iter().enumerate() {
            if let Err(source) = std::fs::rename(temp, path) {
                for (t, _) in &pending[k..] {
                    let _ = std::fs::remove_file(t);
                }
                return Err(Error::Io { path: path.clone(), source });
            }
        }
        let mut dirs: Vec<&Path> = pending.iter().map(|(_, p)| parent_dir(p)).collect();
        dirs.dedup();
        for dir in dirs {
            sync_dir(dir);
        }
        Ok(())
    }
}

impl Drop for AtomicFiles {
    fn drop(&mut self) {
        for (temp, _) in &self.pending {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// One file written as a stream: the bytes go to a temporary file beside `path`, which gets
/// its final name only at [`finish`](Self::finish) (synced first). Dropped unfinished (an error,
/// a panic), it removes the temporary file and leaves `path` as it was.
#[derive(Debug)]
pub struct AtomicWriter {
    file: Option<std::io::BufWriter<File>>,
    temp: PathBuf,
    path: PathBuf,
    /// Bytes written so far.
    pub written: u64,
}

impl AtomicWriter {
    /// A writer for `path` (a symlink's target; a device or pipe is written to directly).
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = resolve_symlink(path.as_ref());
        if path.is_dir() {
            return Err(Error::Io { path, source: std::io::Error::other("is a directory; expected a file name") });
        }
        let (temp, file) = if is_special_file(&path) {
            let f = OpenOptions::new().write(true).truncate(true).open(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
            (path.clone(), f)
        } else {
            create_temp(&path)?
        };
        Ok(AtomicWriter { file: Some(std::io::BufWriter::with_capacity(1 << 20, file)), temp, path, written: 0 })
    }

    /// Appends `data`.
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        let file = self.file.as_mut().expect("open until finished");
        file.write_all(data).map_err(|source| Error::Io { path: self.path.clone(), source })?;
        self.written += data.len() as u64;
        Ok(())
    }

    /// Flushes and syncs the file and gives it its final name.
    pub fn finish(mut self) -> Result<()> {
        let io = |source| Error::Io { path: self.path.clone(), source };
        let file = self.file.take().expect("open until finished");
        let file = file.into_inner().map_err(|e| io(e.into_error()))?;
        if self.temp == self.path {
            return Ok(());
        }
        if let Ok(meta) = std::fs::metadata(&self.path) {
            file.set_permissions(meta.permissions()).map_err(io)?;
        }
        file.sync_all().map_err(io)?;
        drop(file);
        std::fs::rename(&self.temp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&self.temp);
            io(e)
        })?;
        sync_dir(parent_dir(&self.path));
        Ok(())
    }
}

/// For writers that take a `Write` (the Parquet writer); the same bytes as [`AtomicWriter::write`].
impl std::io::Write for AtomicWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.as_mut().expect("open until finished").write_all(buf)?;
        self.written += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().expect("open until finished").flush()
    }
}

impl Drop for AtomicWriter {
    fn drop(&mut self) {
        if self.file.is_some() && self.temp != self.path {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Checks, before any long work, that a file can be written at `path`: its directory exists
/// and is writable (tested by creating and removing a temporary file there), and `path` is not a
/// directory. The error names the path and what is wrong.
pub fn check_writable(path: impl AsRef<Path>) -> Result<()> {
    let path = resolve_symlink(path.as_ref());
    let dir = parent_dir(&path);
    let problem = |what: String| Error::Io { path: path.clone(), source: std::io::Error::other(what) };
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => return Err(problem(format!("{} is not a directory", dir.display()))),
        Ok(_) => {}
        Err(e) => return Err(problem(format!("cannot use the directory {}: {e}", dir.display()))),
    }
    if path.is_dir() {
        return Err(problem("is a directory; expected a file name".into()));
    }
    if is_special_file(&path) {
        return OpenOptions::new().write(true).open(&path).map(drop).map_err(|source| Error::Io { path, source });
    }
    let (temp, file) = create_temp(&path)?;
    drop(file);
    let _ = std::fs::remove_file(temp);
    Ok(())
}

/// The directory `path` is in (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Whether `path` exists and is neither a regular file nor a directory (a device, a pipe):
/// written in place, since a rename would replace the device's entry itself.
/// Whether a writer for `path` writes it directly (a device or pipe), so that what is written
/// cannot be taken back.
pub fn writes_in_place(path: &Path) -> bool {
    is_special_file(&resolve_symlink(path))
}

fn is_special_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// `path`, or the file a symlink at `path` points to: the rename must replace the target, not
/// the link.
fn resolve_symlink(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()),
        _ => path.to_owned(),
    }
}

/// Creates a new, empty temporary file beside `path`: a hidden name made unique by the process
/// id and a counter, created exclusively so that nothing existing is overwritten.
fn create_temp(path: &Path) -> Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| Error::Io { path: path.to_owned(), source: std::io::Error::other("expected a file name, not a directory") })?;
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".tmp{}.{n}", std::process::id()));
        let temp = parent_dir(path).join(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(f) => return Ok((temp, f)),
            // Left by an earlier process with the same id that was killed: take the next name.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(Error::Io { path: path.to_owned(), source }),
        }
    }
}

/// Flushes a directory's entries (the renames) to disk. Best effort: some file systems and
/// platforms cannot open or sync a directory, and the data itself is already on disk.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tokenkit-atomic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let d = temp_dir("replace");
        let p = d.join("a.json");
        write_atomic(&p, b"old").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(names(&d), ["a.json"]);
    }

    #[test]
    fn a_set_dropped_before_commit_changes_nothing() {
        let d = temp_dir("drop");
        write_atomic(d.join("a"), b"old a").unwrap();
        let mut set = AtomicFiles::new();
        set.write(d.join("a"), b"new a").unwrap();
        set.write(d.join("b"), b"new b").unwrap();
        drop(set);
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"old a");
        assert_eq!(names(&d), ["a"]);
        let mut set = AtomicFiles::new();
        set.write(d.join("a"), b"new a").unwrap();
        set.write(d.join("b"), b"new b").unwrap();
        set.commit().unwrap();
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"new a");
        assert_eq!(names(&d), ["a", "b"]);
        // A directory where the last file goes: nothing is renamed, no temporary is left.
        std::fs::create_dir(d.join("c")).unwrap();
        let mut set = AtomicFiles::new();
        set.write(d.join("a"), b"newer a").unwrap();
        set.write(d.join("c"), b"c").unwrap();
        let e = set.commit().unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"new a");
        assert_eq!(names(&d), ["a", "b", "c"]);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions_and_follows_symlinks() {
        use std::os::unix::fs::PermissionsExt;
        let d = temp_dir("perm");
        let target = d.join("target.json");
        write_atomic(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink(&target, d.join("link.json")).unwrap();
        write_atomic(d.join("link.json"), b"new").unwrap();
        assert!(std::fs::symlink_metadata(d.join("link.json")).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        write_atomic("/dev/null", b"discarded").unwrap();
        check_writable("/dev/null").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }

    #[test]
    fn check_writable_names_what_is_wrong() {
        let d = temp_dir("check");
        check_writable(d.join("out.json")).unwrap();
        assert_eq!(names(&d), Vec::<String>::new());
        let e = check_writable(d.join("missing/out.json")).unwrap_err().to_string();
        assert!(e.contains("missing") && e.contains("cannot use the directory"), "{e}");
        let e = check_writable(&d).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = write_atomic(d.join("missing/out.json"), b"x").unwrap_err().to_string();
        assert!(e.contains("out.json"), "{e}");
    }
}
