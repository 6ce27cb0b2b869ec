//! GPT-2's original files: `vocab.json` (token → id) and `merges.txt` (one merge per line,
//! optional `#version` header). Loaded into the GPT-2 byte-level BPE pipeline.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::formats::{from_value, read};
use crate::models::BPE;
use crate::tokenizer::Tokenizer;
use crate::utils::atomic_file::AtomicFiles;
use crate::{Error, Result};

/// Reads merges.txt: `#version` lines and blank lines are skipped; every other line must be
/// two tokens separated by one space.
pub fn read_merges(path: &Path) -> Result<Vec<Value>> {
    let text = read(path)?;
    let mut merges = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("#version") || line.is_empty() {
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

/// The GPT-2 pipeline (ByteLevel pre-tokenizer, BPE, ByteLevel post-processor and decoder, as
/// in the Hub's gpt2 tokenizer.json) over `vocab.json` and `merges.txt`.
pub fn from_vocab_merges(vocab_path: &Path, merges_path: &Path) -> Result<Tokenizer> {
    let vocab: Map<String, Value> = serde_json::from_str(&read(vocab_path)?).map_err(|e| Error::Json {
        context: vocab_path.display().to_string(),
        message: format!("expected a JSON object of token → id: {e}"),
    })?;
    let merges = read_merges(merges_path)?;
    let added: Vec<Value> = vocab
        .get("<|endoftext|>")
        .and_then(Value::as_u64)
        .map(|id| {
            json!({"id": id, "content": "<|endoftext|>", "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": true, "special": true})
        })
        .into_iter()
        .collect();
    let doc = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": vocab, "merges": merges}
    });
    from_value(doc, &vocab_path.display().to_string())
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
    let mut by_id: Vec<(&str, u32)> = bpe.vocab().iter().map(|(t, &id)| (t.as_str(), id)).collect();
    by_id.sort_by_key(|&(_, id)| id);
    let vocab: Map<String, Value> = by_id.into_iter().map(|(t, id)| (t.to_owned(), Value::from(id))).collect();
    let mut merges = String::from("#version: 0.2\n");
    for (a, b) in bpe.merges() {
        if a.contains(' ') || b.contains(' ') {
            return Err(Error::invalid(format!(
                "the merge ({a:?}, {b:?}) has a space in a token and cannot be written to merges.txt"
            )));
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
