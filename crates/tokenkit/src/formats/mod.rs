//! Readers and writers for the tokenizer file formats, and detection of which one a path is.
//!
//! - `tokenizer.json` (HF): [`Tokenizer::from_file`];
//! - BERT `vocab.txt`: [`vocab_txt::from_vocab_txt`], the standard BERT-uncased pipeline;
//! - GPT-2 `vocab.json` + `merges.txt`: [`gpt2_files::from_vocab_merges`], the GPT-2 pipeline;
//! - tiktoken `.tiktoken` rank files: [`tiktoken`], the encoding named by the file name;
//! - Mistral Tekken `tekken.json`: [`tekken::from_tekken_file`], as `mistral-common` reads it;
//! - GGUF `.gguf` (llama.cpp): [`gguf::from_gguf_file`], the tokenizer in the file's metadata.

pub mod gguf;
pub mod gpt2_files;
pub mod pretrained;
pub mod sentencepiece;
pub mod tekken;
pub mod tiktoken;
pub mod vocab_txt;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::tokenizer::Tokenizer;
use crate::{Error, Model, Result};

/// Which format a path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// An HF tokenizer.json.
    TokenizerJson(PathBuf),
    /// A BERT WordPiece vocab.txt (one token per line).
    VocabTxt(PathBuf),
    /// A GPT-2 vocab.json with its merges.txt.
    Gpt2 { vocab: PathBuf, merges: PathBuf },
    /// A tiktoken rank file (`<encoding>.tiktoken`).
    Tiktoken(PathBuf),
    /// A SentencePiece `.model` (protobuf).
    SentencePiece(PathBuf),
    /// A Mistral Tekken `tekken.json`.
    Tekken(PathBuf),
    /// A GGUF file (llama.cpp), whose metadata holds the tokenizer.
    Gguf(PathBuf),
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_owned(), source })
}

/// Works out the format of `path` from its content (and, for directories, the files inside).
pub fn detect(path: &Path) -> Result<Format> {
    if path.is_dir() {
        for name in ["tokenizer.json", "vocab.json", "encoder.json", "vocab.txt"] {
            let p = path.join(name);
            if p.is_file() {
                return detect(&p);
            }
        }
        return Err(Error::invalid(format!("{}: directory holds no tokenizer.json, vocab.json or vocab.txt", path.display())));
    }
    if path.extension().is_some_and(|e| e == "tiktoken") {
        return Ok(Format::Tiktoken(path.to_owned()));
    }
    let head = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        let mut buf = vec![0u8; 4096];
        let n = f.read(&mut buf).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        buf.truncate(n);
        buf
    };
    if head.starts_with(gguf::MAGIC) {
        return Ok(Format::Gguf(path.to_owned()));
    }
    if sentencepiece::looks_like_model_proto(&head) {
        return Ok(Format::SentencePiece(path.to_owned()));
    }
    let text = String::from_utf8_lossy(&head);
    if tiktoken::looks_like_rank_file(&text) {
        return Ok(Format::Tiktoken(path.to_owned()));
    }
    if tekken::looks_like_tekken(&text) {
        return Ok(Format::Tekken(path.to_owned()));
    }
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let json_has = |key: &str| text.contains(&format!("\"{key}\""));
        if json_has("model") || json_has("added_tokens") || json_has("version") {
            return Ok(Format::TokenizerJson(path.to_owned()));
        }
        // A flat token → id object: GPT-2's vocab.json (or encoder.json).
        let dir = path.parent().unwrap_or(Path::new("."));
        for name in ["merges.txt", "vocab.bpe"] {
            let m = dir.join(name);
            if m.is_file() {
                return Ok(Format::Gpt2 { vocab: path.to_owned(), merges: m });
            }
        }
        return Err(Error::invalid(format!(
            "{}: looks like a vocab.json but no merges.txt (or vocab.bpe) was found beside it",
            path.display()
        )));
    }
    if path.extension().is_some_and(|e| e == "txt") || !trimmed.is_empty() {
        return Ok(Format::VocabTxt(path.to_owned()));
    }
    Err(Error::invalid(format!("{}: unrecognised tokenizer format", path.display())))
}

/// Builds a tokenizer from a tokenizer.json document built in memory.
pub(crate) fn from_value(value: serde_json::Value, context: &str) -> Result<Tokenizer> {
    serde_json::from_value(value).map_err(|e| Error::Json { context: context.to_owned(), message: e.to_string() })
}

/// Strings longer than this are shown by their length in [`inspect`] (a charsmap, a
/// SentencePiece model_proto), not whole.
const INSPECT_MAX_STRING: usize = 400;

/// `v` with long strings replaced by their length and, when `collections`, arrays and objects
/// by their number of entries (a model's vocabulary and merges).
fn summarised(v: &serde_json::Value, collections: bool) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) if s.len() > INSPECT_MAX_STRING => Value::String(format!("<{} bytes>", s.len())),
        Value::Array(a) if collections => Value::String(format!("<{} entries>", a.len())),
        Value::Object(o) if collections => Value::String(format!("<{} entries>", o.len())),
        Value::Array(a) => Value::Array(a.iter().map(|x| summarised(x, false)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), summarised(x, false))).collect()),
        other => other.clone(),
    }
}

/// The first `max` items joined by spaces, then how many more there are; `none` when empty.
pub(crate) fn list(items: &[String], max: usize) -> String {
    if items.is_empty() {
        return "none".into();
    }
    let more = if items.len() > max { format!(" … (+{})", items.len() - max) } else { String::new() };
    format!("{}{more}", items[..items.len().min(max)].join(" "))
}

/// A human-readable summary of the pipeline and the vocabulary: each component as compact
/// JSON (long strings such as a charsmap by their size), the model's type and parameters with
/// its vocabulary and merges by their size, the encode plan ([`Tokenizer::plan_name`]),
/// padding and truncation when set, the vocabulary size and the added and special tokens.
pub fn inspect(tok: &Tokenizer) -> String {
    let mut s = String::new();
    let json = |v: &dyn erased::Ser| summarised(&v.to_value(), false).to_string();
    let _ = writeln!(s, "normalizer:     {}", tok.get_normalizer().map_or("none".into(), |n| json(n)));
    let _ = writeln!(s, "pre_tokenizer:  {}", tok.get_pre_tokenizer().map_or("none".into(), |n| json(n)));
    let model = serde_json::to_value(tok.get_model()).unwrap_or_default();
    let mut model_summary = serde_json::Map::new();
    if let serde_json::Value::Object(m) = &model {
        for (k, v) in m {
            model_summary.insert(k.clone(), summarised(v, true));
        }
    }
    let _ = writeln!(s, "model:          {}", serde_json::Value::Object(model_summary));
    let _ = writeln!(s, "post_processor: {}", tok.get_post_processor().map_or("none".into(), |n| json(n)));
    let _ = writeln!(s, "decoder:        {}", tok.get_decoder().map_or("none".into(), |n| json(n)));
    let _ = writeln!(s, "encode plan:    {}", tok.plan_name());
    if let Some(t) = tok.get_truncation() {
        let _ = writeln!(s, "truncation:     {}", json(t));
    }
    if let Some(p) = tok.get_padding() {
        let _ = writeln!(s, "padding:        {}", json(p));
    }
    let model_size = tok.get_model().get_vocab_size();
    let added = tok.get_added_vocabulary().sorted_with_ids();
    let n_special = added.iter().filter(|t| t.token.special).count();
    let _ = writeln!(
        s,
        "vocabulary:     {} tokens in the model, {} with added tokens ({} added, {} special)",
        model_size,
        tok.get_vocab_size(true),
        added.len(),
        n_special
    );
    let show = |special: bool| -> Vec<String> {
        added.iter().filter(|t| t.token.special == special).map(|t| format!("{}={:?}", t.id, t.token.content)).collect()
    };
    let _ = writeln!(s, "special tokens: {}", list(&show(true), 24));
    if n_special < added.len() {
        let _ = writeln!(s, "added tokens:   {} (not special)", list(&show(false), 24));
    }
    s
}

mod erased {
    /// Serialize to a JSON value through a trait object.
    pub trait Ser {
        fn to_value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn to_value(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or_else(|e| serde_json::Value::String(format!("<unserializable: {e}>")))
        }
    }
}
