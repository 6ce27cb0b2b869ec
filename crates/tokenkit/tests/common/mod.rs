//! Test support shared by the integration tests: which fixture files `scripts/fetch_fixtures.py`
//! provided (`.fixtures/MANIFEST.json`, as `src/test_fixtures.rs` reads it for the unit tests).
//! A fixture is skipped only where the manifest says this machine cannot have it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `<repo>/.fixtures`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.fixtures")
}

/// The path of fixture `rel` when the fixture step provided it, `None` when the manifest records
/// it as absent. Panics without a manifest, for a fixture it does not know, or for one it lists
/// as present that is missing.
pub fn fixture(rel: &str) -> Option<PathBuf> {
    let manifest_path = fixtures().join("MANIFEST.json");
    let text = std::fs::read_to_string(&manifest_path).unwrap_or_else(|e| {
        panic!("{}: {e}; run scripts/fetch_fixtures.py (scripts/setup.sh does) before the tests", manifest_path.display())
    });
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entry = manifest.get(rel).unwrap_or_else(|| panic!("fixture {rel} is not in {}", manifest_path.display()));
    let path = fixtures().join(rel);
    if entry.get("absent").is_some() {
        eprintln!("fixture {rel}: absent on this machine (see .fixtures/MANIFEST.json), skipped");
        return None;
    }
    assert!(path.exists(), "{}: listed as present in .fixtures/MANIFEST.json but missing", path.display());
    Some(path)
}

/// Every file under `dir`, recursively, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())).flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.is_file() {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}
