//! The tokenizer in a GGUF file's metadata (llama.cpp's `tokenizer.ggml.*` keys), read without
//! touching the tensors: the header and the key-value section are parsed, the rest of the
//! file is never read.
//!
//! `tokenizer.ggml.model` names the model (`gpt2`: byte-level BPE with merges; `llama`:
//! SentencePiece-style BPE by scores; `bert`: WordPiece) and `tokenizer.ggml.pre` the
//! pre-tokenizer type of a `gpt2` model, which maps to llama.cpp's split regexes
//! ([`pre_tokenizer_regexes`]); a model or type tokenkit does not know is an error naming it.
//! The tokenizer built is the HF pipeline llama.cpp reproduces (llama.cpp's test vectors are
//! HF tokenizers' ids), so it saves as a tokenizer.json HF loads.

use std::io::{BufReader, Read};
use std::path::Path;

use serde_json::json;

use crate::tokenizer::{AddedToken, Tokenizer};
use crate::{Error, Result};

/// The first four bytes of a GGUF file.
pub const MAGIC: &[u8] = b"GGUF";

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Any integer type (u8 .. i64), widened.
    Int(i64),
    /// u64 values above `i64::MAX`.
    UInt(u64),
    /// f32 or f64.
    Float(f64),
    /// A bool.
    Bool(bool),
    /// A UTF-8 string (invalid UTF-8 is replaced).
    Str(String),
    /// An array.
    Array(Vec<Value>),
}

/// Longest string or array the reader accepts (a corrupt length is an error, not an allocation).
const MAX_LEN: u64 = 1 << 28;

/// A little-endian reader of the GGUF metadata section with the byte offset for errors.
struct Reader<R> {
    inner: R,
    offset: u64,
    origin: String,
}

impl<R: Read> Reader<R> {
    fn bytes(&mut self, n: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0; n];
        self.inner.read_exact(&mut buf).map_err(|e| self.error(format!("truncated ({e})")))?;
        self.offset += n as u64;
        Ok(buf)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut buf = [0; N];
        self.inner.read_exact(&mut buf).map_err(|e| self.error(format!("truncated ({e})")))?;
        self.offset += N as u64;
        Ok(buf)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn len(&mut self, what: &str) -> Result<usize> {
        let n = self.u64()?;
        if n > MAX_LEN {
            return Err(self.error(format!("{what} of length {n} is not plausible")));
        }
        Ok(n as usize)
    }

    fn string(&mut self) -> Result<String> {
        let n = self.len("string")?;
        let b = self.bytes(n)?;
        Ok(String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    fn value(&mut self, ty: u32) -> Result<Value> {
        Ok(match ty {
            0 => Value::Int(i64::from(self.array::<1>()?[0])),
            1 => Value::Int(i64::from(self.array::<1>()?[0] as i8)),
            2 => Value::Int(i64::from(u16::from_le_bytes(self.array()?))),
            3 => Value::Int(i64::from(i16::from_le_bytes(self.array()?))),
            4 => Value::Int(i64::from(self.u32()?)),
            5 => Value::Int(i64::from(i32::from_le_bytes(self.array()?))),
            6 => Value::Float(f64::from(f32::from_le_bytes(self.array()?))),
            7 => Value::Bool(self.array::<1>()?[0] != 0),
            8 => Value::Str(self.string()?),
            9 => {
                let item = self.u32()?;
                let n = self.len("array")?;
                let mut items = Vec::with_capacity(n.min(1 << 20));
                for _ in 0..n {
                    items.push(self.value(item)?);
                }
                Value::Array(items)
            }
            10 => {
                let v = self.u64()?;
                i64::try_from(v).map_or(Value::UInt(v), Value::Int)
            }
            11 => Value::Int(i64::from_le_bytes(self.array()?)),
            12 => Value::Float(f64::from_le_bytes(self.array()?)),
            other => return Err(self.error(format!("unknown value type {other}"))),
        })
    }

    /// Reads past `n` bytes.
    fn skip(&mut self, n: u64) -> Result<()> {
        let got =
            std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink()).map_err(|e| self.error(format!("truncated ({e})")))?;
        self.offset += got;
        if got < n {
            return Err(self.error("truncated (unexpected end of file)".into()));
        }
        Ok(())
    }

    /// Reads past a value of type `ty`, with the checks of [`Self::value`].
    fn skip_value(&mut self, ty: u32) -> Result<()> {
        match ty {
            8 => {
                let n = self.len("string")?;
                self.skip(n as u64)
            }
            9 => {
                let item = self.u32()?;
                let n = self.len("array")?;
                match fixed_size(item) {
                    Some(size) => self.skip(n as u64 * size),
                    None => (0..n).try_for_each(|_| self.skip_value(item)),
                }
            }
            _ => match fixed_size(ty) {
                Some(size) => self.skip(size),
                None => Err(self.error(format!("unknown value type {ty}"))),
            },
        }
    }

    fn error(&self, what: String) -> Error {
        Error::invalid(format!("{}: GGUF metadata at byte {}: {what}", self.origin, self.offset))
    }
}

/// The size in bytes of a value of type `ty` when it is a number or a bool.
fn fixed_size(ty: u32) -> Option<u64> {
    match ty {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

/// The key-value metadata of a GGUF file, in file order.
pub fn read_metadata(path: &Path) -> Result<Vec<(String, Value)>> {
    parse_metadata(&metadata_bytes(path)?, &path.display().to_string())
}

/// A reader that keeps a copy of what it reads.
struct Keep<R> {
    inner: R,
    kept: Vec<u8>,
}

impl<R: Read> Read for Keep<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.kept.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// Reads the header; the number of key-value pairs.
fn header<R: Read>(r: &mut Reader<R>) -> Result<u64> {
    if r.array::<4>()? != *MAGIC {
        return Err(r.error("not a GGUF file (no GGUF magic)".into()));
    }
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(r.error(format!("GGUF version {version} is not supported (versions 2 and 3 are)")));
    }
    let _n_tensors = r.u64()?;
    r.u64()
}

/// The bytes of a GGUF file's metadata (the header and the key-value section: all a
/// tokenizer is built from, without the tensors), walked through without building values.
fn metadata_bytes(path: &Path) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let keep = Keep { inner: file, kept: Vec::new() };
    let mut r = Reader { inner: BufReader::with_capacity(1 << 16, keep), offset: 0, origin: path.display().to_string() };
    for _ in 0..header(&mut r)? {
        r.string()?;
        let ty = r.u32()?;
        r.skip_value(ty)?;
    }
    // The buffer read ahead past the metadata: cut it off.
    let mut bytes = r.inner.into_inner().kept;
    bytes.truncate(usize::try_from(r.offset).unwrap_or(usize::MAX));
    Ok(bytes)
}

/// The key-value metadata in `bytes` ([`metadata_bytes`]), in file order.
fn parse_metadata(bytes: &[u8], origin: &str) -> Result<Vec<(String, Value)>> {
    let mut r = Reader { inner: bytes, offset: 0, origin: origin.to_owned() };
    let mut kv = Vec::new();
    for _ in 0..header(&mut r)? {
        let key = r.string()?;
        let ty = r.u32()?;
        let value = r.value(ty)?;
        kv.push((key, value));
    }
    Ok(kv)
}

/// Which tokenizer model a GGUF file holds (`tokenizer.ggml.model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// `gpt2`: byte-level BPE with merges.
    Bpe,
    /// `llama`: SentencePiece-style BPE by piece scores, with byte fallback.
    Spm,
    /// `bert`: WordPiece.
    Wpm,
    /// `gemma4`: BPE with merges over SentencePiece-style text (spaces as `▁`), byte fallback.
    Gemma4,
}

/// The tokenizer part of a GGUF file's metadata.
#[derive(Debug, Clone, Default)]
pub struct GgufTokenizer {
    origin: String,
    /// `tokenizer.ggml.model`.
    pub model: String,
    /// `tokenizer.ggml.pre` (empty when absent).
    pub pre: String,
    /// The tokens, by id.
    pub tokens: Vec<String>,
    /// The token types (llama.cpp's: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused,
    /// 6 byte), by id; empty when absent.
    pub token_types: Vec<i64>,
    /// Piece scores (SentencePiece models), by id; empty when absent.
    pub scores: Vec<f32>,
    /// Merges `"a b"` (BPE models).
    pub merges: Vec<String>,
    /// `tokenizer.ggml.bos_token_id`, ...: the ids of the named special tokens.
    pub bos: Option<u32>,
    /// End of sequence.
    pub eos: Option<u32>,
    /// Unknown token.
    pub unk: Option<u32>,
    /// Separator (BERT's `[SEP]`).
    pub sep: Option<u32>,
    /// Classifier (BERT's `[CLS]`).
    pub cls: Option<u32>,
    /// Padding.
    pub pad: Option<u32>,
    /// `tokenizer.ggml.add_bos_token` (None: the model's default).
    pub add_bos: Option<bool>,
    /// `tokenizer.ggml.add_eos_token`.
    pub add_eos: Option<bool>,
    /// `tokenizer.ggml.add_space_prefix` (SentencePiece models).
    pub add_space_prefix: Option<bool>,
}

const NORMAL: i64 = 1;
const UNKNOWN: i64 = 2;
const CONTROL: i64 = 3;
const USER_DEFINED: i64 = 4;
const UNUSED: i64 = 5;
const BYTE: i64 = 6;

impl GgufTokenizer {
    /// Reads the tokenizer metadata of the GGUF file at `path`.
    pub fn read(path: &Path) -> Result<Self> {
        let origin = path.display().to_string();
        Self::from_metadata(read_metadata(path)?, origin)
    }

    fn from_metadata(kv: Vec<(String, Value)>, origin: String) -> Result<Self> {
        let mut t = GgufTokenizer { origin, ..Default::default() };
        for (key, value) in kv {
            let Some(name) = key.strip_prefix("tokenizer.ggml.") else { continue };
            let bad = |what: &str| Error::invalid(format!("{}: {key}: expected {what}", t.origin));
            let id = |v: &Value| match v {
                Value::Int(i) => u32::try_from(*i).ok(),
                _ => None,
            };
            match name {
                "model" | "pre" => {
                    let Value::Str(s) = value else { return Err(bad("a string")) };
                    *(if name == "model" { &mut t.model } else { &mut t.pre }) = s;
                }
                "tokens" | "merges" => {
                    let Value::Array(items) = value else { return Err(bad("an array of strings")) };
                    let strings = items
                        .into_iter()
                        .map(|v| match v {
                            Value::Str(s) => Ok(s),
                            _ => Err(bad("an array of strings")),
                        })
                        .collect::<Result<Vec<_>>>()?;
                    *(if name == "tokens" { &mut t.tokens } else { &mut t.merges }) = strings;
                }
                "token_type" => {
                    let Value::Array(items) = value else { return Err(bad("an array of integers")) };
                    t.token_types = items
                        .into_iter()
                        .map(|v| if let Value::Int(i) = v { Ok(i) } else { Err(bad("an array of integers")) })
                        .collect::<Result<_>>()?;
                }
                "scores" => {
                    let Value::Array(items) = value else { return Err(bad("an array of numbers")) };
                    t.scores = items
                        .into_iter()
                        .map(|v| if let Value::Float(f) = v { Ok(f as f32) } else { Err(bad("an array of numbers")) })
                        .collect::<Result<_>>()?;
                }
                "bos_token_id" | "eos_token_id" | "unknown_token_id" | "seperator_token_id" | "padding_token_id" | "cls_token_id" => {
                    let v = Some(id(&value).ok_or_else(|| bad("a token id"))?);
                    match name {
                        "bos_token_id" => t.bos = v,
                        "eos_token_id" => t.eos = v,
                        "unknown_token_id" => t.unk = v,
                        "seperator_token_id" => t.sep = v,
                        "cls_token_id" => t.cls = v,
                        _ => t.pad = v,
                    }
                }
                "add_bos_token" | "add_eos_token" | "add_space_prefix" => {
                    let Value::Bool(b) = value else { return Err(bad("a bool")) };
                    match name {
                        "add_bos_token" => t.add_bos = Some(b),
                        "add_eos_token" => t.add_eos = Some(b),
                        _ => t.add_space_prefix = Some(b),
                    }
                }
                _ => {}
            }
        }
        if t.model.is_empty() {
            return Err(Error::invalid(format!("{}: no tokenizer.ggml.model: the file holds no tokenizer", t.origin)));
        }
        if t.tokens.is_empty() {
            return Err(Error::invalid(format!("{}: no tokenizer.ggml.tokens", t.origin)));
        }
        let n = t.tokens.len();
        for (key, len) in [("token_type", t.token_types.len()), ("scores", t.scores.len())] {
            if len != 0 && len != n {
                return Err(Error::invalid(format!("{}: tokenizer.ggml.{key} has {len} entries for {n} tokens", t.origin)));
            }
        }
        let ids = [("bos", t.bos), ("eos", t.eos), ("unknown", t.unk), ("seperator", t.sep), ("cls", t.cls), ("padding", t.pad)];
        for (key, id) in ids {
            if id.is_some_and(|id| id as usize >= n) {
                return Err(Error::invalid(format!(
                    "{}: tokenizer.ggml.{key}_token_id {} is not below the {n} tokens",
                    t.origin,
                    id.unwrap_or_default()
                )));
            }
        }
        Ok(t)
    }

    /// The model kind, or an error naming an unsupported `tokenizer.ggml.model`.
    pub fn kind(&self) -> Result<ModelKind> {
        match self.model.as_str() {
            "gpt2" => Ok(ModelKind::Bpe),
            "llama" => Ok(ModelKind::Spm),
            "bert" => Ok(ModelKind::Wpm),
            "gemma4" => Ok(ModelKind::Gemma4),
            other => Err(Error::invalid(format!(
                "{}: tokenizer.ggml.model {other:?} is not supported (supported: gpt2, llama, bert, gemma4)",
                self.origin
            ))),
        }
    }

    fn token_type(&self, id: usize) -> i64 {
        self.token_types.get(id).copied().unwrap_or(NORMAL)
    }

    /// What `tokenkit inspect` says about the file besides the pipeline.
    pub fn summary(&self) -> String {
        let id = |v: Option<u32>| v.map_or("none".to_owned(), |i| format!("{i} {:?}", self.tokens[i as usize]));
        format!(
            "gguf:           tokenizer.ggml.model {:?}, pre {:?}, {} tokens, {} merges; bos {}, eos {}, add_bos {:?}, \
             add_eos {:?}\n",
            self.model,
            self.pre,
            self.tokens.len(),
            self.merges.len(),
            id(self.bos),
            id(self.eos),
            self.add_bos,
            self.add_eos
        )
    }

    /// The tokenizer: the HF pipeline of the model and pre-tokenizer type.
    pub fn to_tokenizer(&self) -> Result<Tokenizer> {
        let mut tok = match self.kind()? {
            ModelKind::Bpe => self.bpe_tokenizer()?,
            ModelKind::Spm => self.spm_tokenizer()?,
            ModelKind::Wpm => self.wpm_tokenizer()?,
            ModelKind::Gemma4 => self.gemma4_tokenizer()?,
        };
        // Control and user-defined tokens are added tokens (control ones special), as in the
        // HF tokenizers llama.cpp converts from.
        let added: Vec<AddedToken> = (0..self.tokens.len())
            .filter(|&i| matches!(self.token_type(i), CONTROL | USER_DEFINED))
            .map(|i| AddedToken::from(self.tokens[i].clone(), self.token_type(i) == CONTROL))
            .collect();
        if !added.is_empty() {
            tok.add_tokens(&added)?;
        }
        Ok(tok)
    }

    fn bpe_tokenizer(&self) -> Result<Tokenizer> {
        let PreType { regexes, ignore_merges, no_bos } = pre_type(&self.pre).ok_or_else(|| {
            Error::invalid(format!(
                "{}: tokenizer.ggml.pre {:?} is not supported (supported: {})",
                self.origin,
                self.pre,
                SUPPORTED_PRE.join(", ")
            ))
        })?;
        if self.merges.is_empty() {
            return Err(Error::invalid(format!(
                "{}: a \"gpt2\" tokenizer (pre-tokenizer {:?}) needs tokenizer.ggml.merges",
                self.origin, self.pre
            )));
        }
        let vocab: serde_json::Map<String, serde_json::Value> =
            self.tokens.iter().enumerate().map(|(i, t)| (t.clone(), json!(i))).collect();
        let mut steps: Vec<serde_json::Value> =
            regexes.iter().map(|r| json!({"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": false})).collect();
        steps.push(json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}));
        let bos = self.add_bos.unwrap_or(ignore_merges).then_some(self.bos).flatten().filter(|_| !no_bos);
        let eos = self.add_eos.unwrap_or(false).then_some(self.eos).flatten();
        let doc = json!({
            "version": "1.0",
            "added_tokens": [],
            "normalizer": null,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": steps},
            "post_processor": self.template(bos, eos),
            "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
            "model": {
                "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                "ignore_merges": ignore_merges, "vocab": vocab, "merges": self.merges
            }
        });
        super::from_value(doc, &self.origin)
    }

    /// A `llama` model: the pieces, scores and types make a SentencePiece BPE `ModelProto`
    /// (llama.cpp's types are SentencePiece's), converted to HF's layout as transformers does.
    fn spm_tokenizer(&self) -> Result<Tokenizer> {
        use super::sentencepiece::proto::{ModelProto, NormalizerSpec, Piece, TrainerSpec};
        use prost::Message as _;
        if self.scores.is_empty() {
            return Err(Error::invalid(format!("{}: a \"llama\" tokenizer needs tokenizer.ggml.scores", self.origin)));
        }
        // llama.cpp's unknown token of a SentencePiece vocabulary is id 0 unless the file says.
        let unk = self.unk.unwrap_or(0);
        let pieces: Vec<Piece> = (0..self.tokens.len())
            .map(|i| Piece {
                piece: Some(self.tokens[i].clone()),
                score: Some(self.scores[i]),
                // SentencePiece has exactly one unknown piece, the unknown token; llama.cpp may
                // mark it control (phi-3) and padding pieces unknown (phi-3's `[PAD32011]`...),
                // which are unused.
                r#type: Some(match self.token_type(i) {
                    _ if i as u32 == unk => UNKNOWN,
                    UNKNOWN => UNUSED,
                    t => t,
                } as i32),
            })
            .collect();
        let id = |v: Option<u32>| v.map_or(-1, |i| i as i32);
        let proto = ModelProto {
            pieces,
            trainer_spec: Some(TrainerSpec {
                model_type: Some(2),
                byte_fallback: Some((0..self.tokens.len()).any(|i| self.token_type(i) == BYTE)),
                unk_id: Some(unk as i32),
                bos_id: Some(id(self.bos)),
                eos_id: Some(id(self.eos)),
                pad_id: Some(id(self.pad)),
                ..Default::default()
            }),
            normalizer_spec: Some(NormalizerSpec {
                name: Some("identity".into()),
                add_dummy_prefix: Some(self.add_space_prefix.unwrap_or(true)),
                remove_extra_whitespaces: Some(false),
                escape_whitespaces: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let model = super::sentencepiece::SentencePiece::from_bytes(proto.encode_to_vec(), &self.origin)?;
        let mut doc = super::sentencepiece::convert::to_tokenizer_json(&model)?;
        let bos = self.add_bos.unwrap_or(true).then_some(self.bos).flatten();
        let eos = self.add_eos.unwrap_or(false).then_some(self.eos).flatten();
        doc["post_processor"] = self.template(bos, eos);
        super::from_value(doc, &self.origin)
    }

    /// A `gemma4` model: spaces become `▁`, the text is split into runs of newlines and runs of
    /// anything else (llama.cpp's split), and BPE with the merges and byte fallback runs on each.
    fn gemma4_tokenizer(&self) -> Result<Tokenizer> {
        let vocab: serde_json::Map<String, serde_json::Value> =
            self.tokens.iter().enumerate().map(|(i, t)| (t.clone(), json!(i))).collect();
        let unk = self.unk.map(|i| self.tokens[i as usize].clone());
        let bos = self.add_bos.unwrap_or(true).then_some(self.bos).flatten();
        let eos = self.add_eos.unwrap_or(false).then_some(self.eos).flatten();
        let doc = json!({
            "version": "1.0",
            "added_tokens": [],
            "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"},
            "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "[^\n]+|[\n]+"}, "behavior": "Isolated", "invert": false},
            "post_processor": self.template(bos, eos),
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"}
            ]},
            "model": {
                "type": "BPE", "dropout": null, "unk_token": unk, "continuing_subword_prefix": null,
                "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": true,
                "ignore_merges": false, "vocab": vocab, "merges": self.merges
            }
        });
        super::from_value(doc, &self.origin)
    }

    /// A `bert` model: llama.cpp keeps BERT's vocabulary with `▁` before word-start tokens and
    /// no `##` on the others; the vocabulary is turned back and loaded in the BERT-uncased
    /// pipeline (BertNormalizer lowercasing, BertPreTokenizer, WordPiece, `[CLS] $A [SEP]`).
    fn wpm_tokenizer(&self) -> Result<Tokenizer> {
        let vocab: serde_json::Map<String, serde_json::Value> = self
            .tokens
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let hf = match t.strip_prefix('\u{2581}') {
                    _ if self.token_type(i) == CONTROL => t.clone(),
                    Some(word) => word.to_owned(),
                    None => format!("##{t}"),
                };
                (hf, json!(i))
            })
            .collect();
        let name = |id: Option<u32>, what: &str| {
            id.map(|i| self.tokens[i as usize].clone())
                .ok_or_else(|| Error::invalid(format!("{}: a \"bert\" tokenizer needs tokenizer.ggml.{what}_token_id", self.origin)))
        };
        let (unk, cls, sep) = (name(self.unk, "unknown")?, name(self.cls, "cls")?, name(self.sep, "seperator")?);
        let special = |t: &str, type_id: u32| json!({"SpecialToken": {"id": t, "type_id": type_id}});
        let seq = |s: &str, type_id: u32| json!({"Sequence": {"id": s, "type_id": type_id}});
        let doc = json!({
            "version": "1.0",
            "added_tokens": [],
            "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                           "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [special(&cls, 0), seq("A", 0), special(&sep, 0)],
                "pair": [special(&cls, 0), seq("A", 0), special(&sep, 0), seq("B", 1), special(&sep, 1)],
                "special_tokens": {
                    &cls: {"id": &cls, "ids": [self.cls], "tokens": [&cls]},
                    &sep: {"id": &sep, "ids": [self.sep], "tokens": [&sep]}
                }
            },
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
            "model": {"type": "WordPiece", "unk_token": unk, "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": vocab}
        });
        super::from_value(doc, &self.origin)
    }

    /// A TemplateProcessing that adds `bos` before and `eos` after each sequence, or none.
    fn template(&self, bos: Option<u32>, eos: Option<u32>) -> serde_json::Value {
        if bos.is_none() && eos.is_none() {
            return serde_json::Value::Null;
        }
        let special =
            |id: Option<u32>, type_id: u32| id.map(|i| json!({"SpecialToken": {"id": self.tokens[i as usize], "type_id": type_id}}));
        let seq = |name: &str, type_id: u32| json!({"Sequence": {"id": name, "type_id": type_id}});
        let one = |name: &str, type_id: u32| -> Vec<serde_json::Value> {
            special(bos, type_id).into_iter().chain([seq(name, type_id)]).chain(special(eos, type_id)).collect()
        };
        let mut pair = one("A", 0);
        pair.extend(one("B", 1));
        let specials: serde_json::Map<String, serde_json::Value> = [bos, eos]
            .into_iter()
            .flatten()
            .map(|i| {
                let t = &self.tokens[i as usize];
                (t.clone(), json!({"id": t, "ids": [i], "tokens": [t]}))
            })
            .collect();
        json!({"type": "TemplateProcessing", "single": one("A", 0), "pair": pair, "special_tokens": specials})
    }
}

/// The `tokenizer.ggml.pre` types [`pre_tokenizer_regexes`] knows (llama.cpp's names, aliases
/// included).
pub const SUPPORTED_PRE: &[&str] = &[
    "default",
    "llama3",
    "llama-v3",
    "llama-bpe",
    "falcon3",
    "falcon-h1",
    "pixtral",
    "midm-2.0",
    "lfm2",
    "jina-v5-nano",
    "dbrx",
    "smaug-bpe",
    "chatglm-bpe",
    "glm4",
    "deepseek-llm",
    "deepseek-coder",
    "deepseek-v3",
    "hunyuan-dense",
    "falcon",
    "mpt",
    "starcoder",
    "refact",
    "command-r",
    "smollm",
    "codeshell",
    "exaone",
    "minerva-7b",
    "gpt-2",
    "phi-2",
    "jina-es",
    "jina-de",
    "gigachat",
    "jina-v1-en",
    "jina-v2-es",
    "jina-v2-de",
    "jina-v2-code",
    "roberta-bpe",
    "a.x-4.0",
    "mellum",
    "modern-bert",
    "exaone4",
    "olmo",
    "jais",
    "trillion",
    "granite-docling",
    "qwen2",
    "deepseek-r1-qwen",
    "kormo",
    "f2llmv2",
    "megrez",
    "stablelm2",
    "hunyuan",
    "grok-2",
    "qwen35",
    "poro-chat",
    "bloom",
    "gpt3-finnish",
    "viking",
    "tekken",
    "chameleon",
    "gpt-4o",
    "llama4",
    "kanana2",
    "talkie",
    "minimax-m2",
    "kimi-k2",
    "bailingmoe",
    "bailingmoe2",
    "llada-moe",
    "seed-coder",
];

const LLAMA3_REGEX: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// DeepSeek's runs of CJK ideographs, U+0800..U+4E00 and Hangul.
const CJK_HANGUL_REGEX: &str = "[\u{4E00}-\u{9FA5}\u{800}-\u{4E00}\u{AC00}-\u{D7FF}]+";
const GPT2_NO_TRAILING_REGEX: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";
const QWEN2_REGEX: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// BLOOM's and Poro's split: runs of anything but whitespace and a few punctuation marks (the
/// `(`, `|` and `)` in the class are literal, as in the tokenizer.json it comes from).
const BLOOM_REGEX: &str = " ?[^(\\s|.,!?\u{2026}\u{3002}\u{FF0C}\u{3001}\u{0964}\u{06D4}\u{060C})]+";
/// Kimi-K2's pattern (`tokenization_kimi.py`'s `pat_str`): o200k's, with Han runs apart and
/// out of the letter classes (Oniguruma's class intersection `&&`).
const KIMI_K2_REGEX: &str = concat!(
    r"[\p{Han}]+",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

/// What a `gpt2` model's `tokenizer.ggml.pre` type means (llama.cpp's `llama-vocab.cpp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreType {
    /// The split regexes, applied in turn, each to the pieces of the one before (HF's Sequence
    /// of Isolated splits).
    pub regexes: Vec<&'static str>,
    /// Whether a piece that is a token is that token (llama.cpp's `ignore_merges`); also makes
    /// BOS the default when the file does not say.
    pub ignore_merges: bool,
    /// Whether llama.cpp drops the BOS token of the type (`special_bos_id = NULL`: GLM-4).
    pub no_bos: bool,
}

/// The [`PreType`] of a `gpt2` model's `tokenizer.ggml.pre`; `None` for a type tokenkit does not
/// know. The regexes are those of the tokenizer.json each type comes from (llama.cpp's test
/// vectors are HF tokenizers' ids), where llama.cpp rewrites them for its own regex engine.
pub fn pre_type(pre: &str) -> Option<PreType> {
    let regexes = pre_tokenizer_regexes(pre)?;
    let ignore_merges = matches!(
        pre,
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral" | "midm-2.0" | "lfm2" | "jina-v5-nano" | "tekken"
    );
    Some(PreType { regexes, ignore_merges, no_bos: matches!(pre, "glm4" | "chatglm-bpe") })
}

/// llama.cpp's split regexes for a `gpt2` model's pre-tokenizer type (`llama-vocab.cpp`),
/// applied in turn, each to the pieces of the one before (HF's Sequence of Isolated splits);
/// `None` for a type tokenkit does not know.
pub fn pre_tokenizer_regexes(pre: &str) -> Option<Vec<&'static str>> {
    Some(match pre {
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral" | "midm-2.0" | "lfm2" | "jina-v5-nano" | "dbrx"
        | "smaug-bpe" | "chatglm-bpe" | "glm4" => vec![LLAMA3_REGEX],
        // Non-ASCII chars written as escapes: some are canonical singletons (U+1FD3, U+2126,
        // U+212A) that an editor's normalization would silently change.
        "deepseek-llm" => vec![
            "[\r\n]",
            concat!(
                "\\s?[A-Za-z\u{B5}\u{C0}-\u{D6}\u{D8}-\u{F6}\u{F8}-\u{1BA}\u{1BC}-\u{1BF}\u{1C4}-\u{293}",
                "\u{295}-\u{2AF}\u{370}-\u{373}\u{376}\u{377}\u{37B}-\u{37D}\u{37F}\u{386}\u{388}-\u{38A}",
                "\u{38C}\u{38E}-\u{3A1}\u{3A3}-\u{3F5}\u{3F7}-\u{481}\u{48A}-\u{52F}\u{531}-\u{556}",
                "\u{10A0}-\u{10C5}\u{13A0}-\u{13F5}\u{13F8}-\u{13FD}\u{1C90}-\u{1CBA}\u{1CBD}-\u{1CBF}",
                "\u{1D00}-\u{1D2B}\u{1D6B}-\u{1D77}\u{1D79}-\u{1D9A}\u{1E00}-\u{1F15}\u{1F18}-\u{1F1D}",
                "\u{1F20}-\u{1F45}\u{1F48}-\u{1F4D}\u{1F50}-\u{1F57}\u{1F59}\u{1F5B}\u{1F5D}\u{1F5F}-\u{1F7D}",
                "\u{1F80}-\u{1FB4}\u{1FB6}-\u{1FBC}\u{1FBE}\u{1FC2}-\u{1FC4}\u{1FC6}-\u{1FCC}\u{1FD0}-\u{1FD3}",
                "\u{1FD6}-\u{1FDB}\u{1FE0}-\u{1FEC}\u{1FF2}-\u{1FF4}\u{1FF6}-\u{1FFC}\u{2102}\u{2107}",
                "\u{210A}-\u{2113}\u{2115}\u{2119}-\u{211D}\u{2124}\u{2126}\u{2128}\u{212A}-\u{212D}",
                "\u{212F}-\u{2134}\u{2139}\u{213C}-\u{213F}\u{2145}-\u{2149}\u{214E}\u{2183}\u{2184}",
                "\u{2C00}-\u{2C7B}\u{2C7E}-\u{2CE4}\u{2CEB}-\u{2CEE}\u{2CF2}\u{2CF3}\u{A640}-\u{A66D}",
                "\u{A680}-\u{A69B}\u{A722}-\u{A76F}\u{A771}-\u{A787}\u{A78B}-\u{A78E}\u{AB70}-\u{ABBF}",
                "\u{FB00}-\u{FB06}\u{FB13}-\u{FB17}\u{FF21}-\u{FF3A}\u{FF41}-\u{FF5A}\u{10400}-\u{1044F}",
                "\u{104B0}-\u{104D3}\u{104D8}-\u{104FB}\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}\u{118A0}-\u{118DF}",
                "\u{1E900}-\u{1E943}]+",
            ),
            "\\s?[!-/:-~\u{FF01}-\u{FF0F}\u{FF1A}-\u{FF5E}\u{2018}-\u{201F}\u{3000}-\u{3002}]+",
            "\\s+$",
            CJK_HANGUL_REGEX,
            "\\p{N}+",
        ],
        // DeepSeek-V3's three splits (digits by three, CJK and kana runs, then the rest).
        "deepseek-v3" | "hunyuan-dense" => vec![
            r"\p{N}{1,3}",
            "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+",
            r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##,
        ],
        "deepseek-coder" => vec!["[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", CJK_HANGUL_REGEX, "\\p{N}"],
        "falcon" => vec![r"[\p{P}\$\+<=>\^~\|`]+", GPT2_NO_TRAILING_REGEX, "[0-9][0-9][0-9]"],
        "starcoder" | "refact" | "command-r" | "smollm" | "codeshell" | "exaone" | "minerva-7b" => {
            vec![r"\p{N}", GPT2_NO_TRAILING_REGEX]
        }
        "gpt-2" | "phi-2" | "jina-es" | "jina-de" | "gigachat" | "jina-v1-en" | "jina-v2-es" | "jina-v2-de" | "jina-v2-code"
        | "roberta-bpe" | "a.x-4.0" | "mellum" | "modern-bert" | "exaone4" | "mpt" | "olmo" | "jais" | "trillion" | "granite-docling" => {
            vec![GPT2_NO_TRAILING_REGEX]
        }
        // llama.cpp's default, also for a file without tokenizer.ggml.pre.
        "default" | "" => vec![r"[\p{P}\$\+<=>\^~\|]+", GPT2_NO_TRAILING_REGEX, r"\p{N}+", "[0-9][0-9][0-9]"],
        "qwen2" | "deepseek-r1-qwen" | "kormo" | "f2llmv2" | "megrez" | "stablelm2" | "hunyuan" | "grok-2" => {
            vec![QWEN2_REGEX]
        }
        "qwen35" => vec![
            r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        ],
        "poro-chat" | "bloom" | "gpt3-finnish" => vec![BLOOM_REGEX],
        "viking" => vec![BLOOM_REGEX, r"\p{N}"],
        "tekken" => vec![
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        ],
        // Chameleon: sentinel and image tokens, tabs/newlines and space pairs, single digits,
        // single punctuation marks, then GPT-2's split.
        "chameleon" => vec![
            "<sentinel:[0-9]+>",
            "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
            "([\\t\\n]|    |  )",
            r"\p{N}",
            r"[\p{P}!-/:-@\[-`{-~]",
            GPT2_NO_TRAILING_REGEX,
        ],
        // GPT-4o's o200k pattern (also Llama 4's and MiniMax-M2's).
        "gpt-4o" | "llama4" | "kanana2" | "talkie" | "minimax-m2" => vec![crate::pre_tokenizers::lexers::O200K_PATTERN],
        "kimi-k2" => vec![KIMI_K2_REGEX],
        // Ling/Bailing: the tokenizer.json pattern, possessive quantifiers included (Oniguruma
        // reads them; llama.cpp's engine approximates them greedily).
        "bailingmoe" | "bailingmoe2" | "llada-moe" => {
            vec![r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"]
        }
        "seed-coder" => {
            vec![r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"]
        }
        _ => return None,
    })
}

/// The cache kind of a GGUF file's metadata.
const GGUF_KIND: &str = "gguf metadata";

/// Reads the tokenizer of a GGUF file (see the module documentation). The built tokenizer is
/// kept in the [`table_cache`](crate::utils::table_cache) under the sha256 of the file's
/// metadata bytes (header and key-value section, never the tensor data), so a further load of
/// the same tokenizer reads its built tables.
pub fn from_gguf_file(path: &Path) -> Result<Tokenizer> {
    let bytes = metadata_bytes(path)?;
    let origin = path.display().to_string();
    Tokenizer::cached(GGUF_KIND, &bytes, || GgufTokenizer::from_metadata(parse_metadata(&bytes, &origin)?, origin.clone())?.to_tokenizer())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GGUF v3 file with `kv` (key, type, value bytes) and no tensors.
    fn gguf(kv: &[(&str, u32, Vec<u8>)]) -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend((kv.len() as u64).to_le_bytes());
        for (k, ty, v) in kv {
            b.extend(string(k));
            b.extend(ty.to_le_bytes());
            b.extend(v);
        }
        b
    }

    fn string(s: &str) -> Vec<u8> {
        let mut b = (s.len() as u64).to_le_bytes().to_vec();
        b.extend(s.as_bytes());
        b
    }

    fn strings(items: &[&str]) -> Vec<u8> {
        let mut b = 8u32.to_le_bytes().to_vec();
        b.extend((items.len() as u64).to_le_bytes());
        items.iter().for_each(|s| b.extend(string(s)));
        b
    }

    fn read(bytes: &[u8]) -> Result<GgufTokenizer> {
        let dir = std::env::temp_dir().join(format!("tokenkit-gguf-test-{}-{}", std::process::id(), bytes.len()));
        std::fs::write(&dir, bytes).unwrap();
        let r = GgufTokenizer::read(&dir);
        let _ = std::fs::remove_file(&dir);
        r
    }

    fn gpt2_file(pre: &str) -> Vec<u8> {
        gguf(&[
            ("general.name", 8, string("t")),
            ("tokenizer.ggml.model", 8, string("gpt2")),
            ("tokenizer.ggml.pre", 8, string(pre)),
            ("tokenizer.ggml.tokens", 9, strings(&["a", "b", "ab", "Ġ"])),
            ("tokenizer.ggml.merges", 9, strings(&["a b"])),
        ])
    }

    /// The cache key covers exactly the header and the key-value section: the walk that finds
    /// its end stops there whatever follows (tensor data), and parses as the reader does.
    #[test]
    fn metadata_bytes_stop_at_the_end_of_the_key_value_section() {
        let meta = gpt2_file("gpt-2");
        let mut file = meta.clone();
        file.extend(std::iter::repeat_n(0xA5u8, 200_000));
        let path = std::env::temp_dir().join(format!("tokenkit-gguf-meta-{}", std::process::id()));
        std::fs::write(&path, &file).unwrap();
        let got = metadata_bytes(&path);
        let _ = std::fs::remove_file(&path);
        assert_eq!(got.unwrap(), meta);
        assert_eq!(parse_metadata(&meta, "t").unwrap()[0], ("general.name".to_string(), Value::Str("t".into())));
        for cut in [0, 3, 10, 24, meta.len() / 2, meta.len() - 1] {
            std::fs::write(&path, &meta[..cut]).unwrap();
            let err = metadata_bytes(&path).unwrap_err().to_string();
            let _ = std::fs::remove_file(&path);
            assert!(err.contains("truncated") || err.contains("no GGUF magic"), "{cut}: {err}");
        }
    }

    #[test]
    fn reads_a_byte_level_bpe() {
        let tok = read(&gpt2_file("gpt-2")).unwrap().to_tokenizer().unwrap();
        assert_eq!(tok.encode("ab a", false).unwrap().get_ids(), &[2, 3, 0]);
    }

    #[test]
    fn unsupported_types_and_broken_files_are_clear_errors() {
        let err = |b: &[u8]| read(b).and_then(|t| t.to_tokenizer()).unwrap_err().to_string();
        assert!(err(&gpt2_file("no-such-pre")).contains("tokenizer.ggml.pre \"no-such-pre\" is not supported"));
        let file = gpt2_file("gpt-2");
        for cut in [4, 10, 30, file.len() - 3] {
            assert!(err(&file[..cut]).contains("truncated"), "{cut}: {}", err(&file[..cut]));
        }
        assert!(err(b"GGUF\x01\0\0\0").contains("GGUF version 1"));
        assert!(err(&gguf(&[("general.name", 8, string("t"))])).contains("no tokenizer.ggml.model"));
        assert!(err(&gguf(&[("tokenizer.ggml.model", 8, string("rwkv")), ("tokenizer.ggml.tokens", 9, strings(&["a"]))]))
            .contains("tokenizer.ggml.model \"rwkv\" is not supported"));
        // A corrupt length is refused before it is allocated.
        let mut huge = gpt2_file("gpt-2");
        huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(err(&huge).contains("not plausible"));
        assert!(err(&gguf(&[("tokenizer.ggml.model", 99, Vec::new())])).contains("unknown value type 99"));
    }
}
