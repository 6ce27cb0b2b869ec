//! Shared helpers for the benchmarks: locating fixtures and corpora, cutting corpora into
//! documents.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("benches/ has a parent").to_owned()
}

/// The fixture directory (`.fixtures/` made by scripts/fetch_fixtures.py).
pub fn fixtures_dir() -> PathBuf {
    std::env::var_os("TOKENKIT_FIXTURES").map(PathBuf::from).unwrap_or_else(|| repo_root().join(".fixtures"))
}

/// The corpora directory (`../shared/corpora`, or `TOKENKIT_CORPORA`).
pub fn corpora_dir() -> PathBuf {
    std::env::var_os("TOKENKIT_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().parent().expect("repo has a parent").join("shared/corpora"))
}

/// Reads at most `max_bytes` of a corpus (cut at a line end) and splits it into documents of
/// about `doc_bytes` each, at line boundaries.
pub fn documents(path: &Path, max_bytes: usize, doc_bytes: usize) -> std::io::Result<Vec<String>> {
    let text = std::fs::read_to_string(path)?;
    let mut end = text.len().min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(nl) = text[..end].rfind('\n') {
        if end < text.len() {
            end = nl + 1;
        }
    }
    let mut docs = Vec::new();
    let mut cur = String::new();
    for line in text[..end].split_inclusive('\n') {
        cur.push_str(line);
        if cur.len() >= doc_bytes {
            docs.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        docs.push(cur);
    }
    Ok(docs)
}

/// Deterministic worst-case inputs of about `n` bytes for byte-level BPE: one letter
/// repeated, random non-space printable ASCII, CJK without spaces (one long piece each, or
/// many pieces that never repeat).
pub fn worst_cases(n: usize) -> Vec<(&'static str, String)> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let letter = "a".repeat(n);
    let printable: String = (0..n).map(|_| char::from(b'!' + (next() % 94) as u8)).collect();
    let mut cjk = String::with_capacity(n + 3);
    while cjk.len() < n {
        cjk.push(char::from_u32(0x4E00 + (next() % 0x5000) as u32).unwrap_or('中'));
    }
    vec![("one-letter", letter), ("random-printable", printable), ("cjk-no-spaces", cjk)]
}
