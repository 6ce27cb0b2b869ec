//! GPT-2's original files: `vocab.json` (token → id) and `merges.txt` (one merge per line,
//! optional `#version` header). Loaded into the GPT-2 byte-level BPE pipeline.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::formats::{from_value, read};
use crate::models::BPE;
use crate::tokenizer::Tokenizer;
use crate::utils::atomic_file::AtomicFiles;
use crate::{Error, Result};

/// Reads merges.txt as HF does: `#version` lines are skipped; every other line, blank ones
/// included, must be two tokens separated by one space (the error gives the line number).
pub fn read_merges(path: &Path) -> Result<Vec<Value>> {
    let text = read(path)?;
    let mut merges = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("#version") {
            continue;
        }
        let mut parts = line.split(' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), None) => merges.push(json!([a, b])),
            _ => {
                return Err(Error::invalid(format!(
                    "{}:{}: a merge must be two tokens separated by one space, got {:?}",
                    path.display(),
                    i + 1,
                    line
                )))
            }
        }
    }
    Ok(merges)
}

/// Reads vocab.json as HF's `BPE::read_file` does: entries whose value is not a number are
/// skipped; an id must be a non-negative integer. An id of 2^32 or more is an error (HF
/// wraps it modulo 2^32 onto another token's id; a README known deviation).
fn read_vocab(path: &Path) -> Result<Map<String, Value>> {
    let vocab: Map<String, Value> = serde_json::from_str(&read(path)?)
        .map_err(|e| Error::Json {
            context: path.display().to_string(), message: format!("expected a JSON object of token → id: {e}")
        })?;
    let mut out = Map::with_capacity(vocab.len());
    for (token, id) in vocab {
        let Value::Number(n) = &id else { continue };
        match n.as_u64() {
            Some(i) if i <= u64::from(u32::MAX) => {
                out.insert(token, id);
            }
            _ => return Err(Error::invalid(format!("{}: token {token:?}: id {n} is not an integer in 0..2^32", path.display()))),
        }
    }
    Ok(out)
}

/// The GPT-2 pipeline (ByteLevel pre-tokenizer, BPE, ByteLevel post-processor and decoder, as
/// in the Hub's gpt2 tokenizer.json) over `vocab.json` and `merges.txt`. `<|endoftext|>` is a
/// special token, added after the vocabulary when vocab.json lacks it (as transformers'
/// GPT-2 tokenizer and HF's `ByteLevelBPETokenizer` + `add_special_tokens` do).
pub fn from_vocab_merges(vocab_path: &Path, merges_path: &Path) -> Result<Tokenizer> {
    let vocab = read_vocab(vocab_path)?;
    let merges = read_merges(merges_path)?;
    let doc = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": vocab, "merges": merges}
    });
    let mut tok = from_value(doc, &vocab_path.display().to_string())?;
    let mut eot = crate::AddedToken::from("<|endoftext|>", true);
    eot.normalized = true;
    tok.add_special_tokens(&[eot])?;
    Ok(tok)
}

/// Writes a BPE model's `vocab.json` (token → id in id order, compact, as HF's `model.save`)
/// and `merges.txt` (`#version: 0.2` then one `a b` merge per line) into `dir`, with file names
/// prefixed by `prefix-` when given; both or neither (see [`crate::utils::atomic_file`]).
/// Returns the two paths.
pub fn write_vocab_merges(bpe: &BPE, dir: &Path, prefix: Option<&str>) -> Result<(PathBuf, PathBuf)> {
    let mut files = AtomicFiles::new();
    let paths = vocab_merges_files(bpe, dir, prefix, &mut files)?;
    files.commit()?;
    Ok(paths)
}

/// Adds the `vocab.json` and `merges.txt` of [`write_vocab_merges`] to a set of files written
/// together. Returns the two paths.
pub fn vocab_merges_files(bpe: &BPE, dir: &Path, prefix: Option<&str>, files: &mut AtomicFiles) -> Result<(PathBuf, PathBuf)> {
    let name = |file: &str| dir.join(prefix.map_or_else(|| file.to_owned(), |p| format!("{p}-{file}")));
    let vocab: Map<String, Value> = bpe.vocab().iter().map(|(t, id)| (t.to_owned(), Value::from(id))).collect();
    let mut merges = String::from("#version: 0.2\n");
    for (a, b) in bpe.merges() {
        if a.contains(' ') || b.contains(' ') {
            return Err(Error::invalid(format!("the merge ({a:?}, {b:?}) has a space in a token and cannot be written to merges.txt")));
        }
        merges.push_str(a);
        merges.push(' ');
        merges.push_str(b);
        merges.push('\n');
    }
    let (vocab_path, merges_path) = (name("vocab.json"), name("merges.txt"));
    let vocab_text = serde_json::to_string(&vocab).map_err(|e| Error::invalid(format!("vocab.json: {e}")))?;
    files.write(&vocab_path, vocab_text.as_bytes())?;
    files.write(&merges_path, merges.as_bytes())?;
    Ok((vocab_path, merges_path))
}
