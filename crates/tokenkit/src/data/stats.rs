//! Measuring tokenizers on corpora (`tokenkit stats`): compression (bytes and characters per
//! token), fertility (tokens per whitespace-separated word), unknown-token and byte-fallback
//! rates, token lengths, the share of the vocabulary used, and all of it per corpus and per
//! language label.
//!
//! The corpora are read once, in chunks, with the dataset jobs' reader ([`input::Records`]:
//! text, JSONL, Parquet; plain, gz, zst), and every chunk is encoded by each tokenizer on the
//! rayon pool, as `tokenkit tokenize` would encode it (a tokenizer's `encode` without the
//! post-processor's special tokens unless asked for, tiktoken's `encode_ordinary`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::encoder::DocEncoder;
use super::input::{self, Chunks, ReadOptions, Record, Records};
use super::{Progress, CHUNK_BYTES};
use crate::Result;

/// The histogram counts tokens of 0 to `MAX_LEN - 1` bytes one by one, longer ones together.
pub const MAX_LEN: usize = 16;

/// What was counted over some documents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Documents (records with text; blank lines and empty texts are none).
    pub documents: u64,
    /// UTF-8 bytes of their text.
    pub bytes: u64,
    /// Characters (Unicode scalar values).
    pub chars: u64,
    /// Words: maximal runs of non-whitespace characters (Python's `str.split()`).
    pub words: u64,
    /// Tokens.
    pub tokens: u64,
    /// Tokens that are the model's unknown token.
    pub unknown_tokens: u64,
    /// Byte-fallback tokens (`<0x41>`).
    pub byte_fallback_tokens: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.documents += o.documents;
        self.bytes += o.bytes;
        self.chars += o.chars;
        self.words += o.words;
        self.tokens += o.tokens;
        self.unknown_tokens += o.unknown_tokens;
        self.byte_fallback_tokens += o.byte_fallback_tokens;
    }

    /// The counts with their ratios.
    pub fn summary(&self) -> Summary {
        let per = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        Summary {
            counts: *self,
            bytes_per_token: per(self.bytes, self.tokens),
            chars_per_token: per(self.chars, self.tokens),
            tokens_per_word: per(self.tokens, self.words),
            unknown_rate: per(self.unknown_tokens, self.tokens),
            byte_fallback_rate: per(self.byte_fallback_tokens, self.tokens),
        }
    }
}

/// Counts and their ratios (`None`, JSON `null`, where the divisor is 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    #[serde(flatten)]
    pub counts: Counts,
    /// Bytes per token: the compression ratio (exactly 1 for a byte tokenizer).
    pub bytes_per_token: Option<f64>,
    pub chars_per_token: Option<f64>,
    /// Tokens per word: the fertility.
    pub tokens_per_word: Option<f64>,
    /// Unknown tokens per token.
    pub unknown_rate: Option<f64>,
    /// Byte-fallback tokens per token.
    pub byte_fallback_rate: Option<f64>,
}

/// One tokenizer's measurements.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The tokenizer's name (its file or encoding name).
    pub tokenizer: String,
    /// Over every corpus.
    #[serde(flatten)]
    pub total: Summary,
    /// Ids the tokenizer can give (added tokens included).
    pub vocab_size: usize,
    /// Distinct ids seen.
    pub vocab_used: usize,
    pub vocab_used_share: f64,
    /// Tokens by length in bytes ("0" .. "15", and "16+"): the length of the text the token
    /// decodes to on its own (0 for a control token that decodes to nothing), or of its bytes
    /// for byte-level and byte-fallback tokens.
    pub token_bytes_histogram: serde_json::Map<String, serde_json::Value>,
    /// Records that could not be read as documents (invalid JSON, a missing field), skipped.
    pub skipped_records: u64,
    /// Per corpus argument, in order.
    pub corpora: Vec<CorpusSummary>,
    /// Per language label (the `lang_field` of the records), when asked for.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub languages: BTreeMap<String, Summary>,
}

/// One corpus's measurements.
#[derive(Debug, Clone, Serialize)]
pub struct CorpusSummary {
    pub corpus: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// What to measure on.
#[derive(Debug, Clone)]
pub struct StatsOptions {
    /// How records are read (field, text documents).
    pub read: ReadOptions,
    /// The JSON field / Parquet column with each document's language label.
    pub lang_field: Option<String>,
    /// Text bytes per chunk encoded at a time.
    pub chunk_bytes: usize,
}

impl StatsOptions {
    /// Options reading `field` of JSON/Parquet records, one document per line of text files.
    pub fn new(field: &str) -> Self {
        StatsOptions {
            read: ReadOptions { field: field.to_owned(), text_docs: input::TextDocs::Line, keep: Vec::new() },
            lang_field: None,
            chunk_bytes: CHUNK_BYTES,
        }
    }
}

/// One tokenizer's running tallies.
struct Meter<'e> {
    name: String,
    encoder: &'e DocEncoder,
    /// Per id: 0 until first seen, then the token's length in bytes + 1 (at most 63) in the
    /// low six bits, [`UNK`] and [`BYTE`] flags above.
    info: Vec<u8>,
    used: usize,
    histogram: [u64; MAX_LEN + 1],
    corpora: Vec<Counts>,
    languages: BTreeMap<String, Counts>,
}

const UNK: u8 = 1 << 6;
const BYTE: u8 = 1 << 7;

impl<'e> Meter<'e> {
    fn new(name: String, encoder: &'e DocEncoder) -> Self {
        Meter {
            name,
            encoder,
            info: vec![0; encoder.id_space()],
            used: 0,
            histogram: [0; MAX_LEN + 1],
            corpora: Vec::new(),
            languages: BTreeMap::new(),
        }
    }

    /// What the meter keeps of token `id`, worked out on its first sight.
    fn info(&mut self, id: u32) -> u8 {
        let i = id as usize;
        if i >= self.info.len() {
            self.info.resize(i + 1, 0);
        }
        if self.info[i] == 0 {
            let (len, unk, byte) = token_facts(self.encoder, id);
            self.info[i] = (len.min(62) as u8 + 1) | if unk { UNK } else { 0 } | if byte { BYTE } else { 0 };
            self.used += 1;
        }
        self.info[i]
    }

    /// Adds a document of `text` encoded as `ids` to the current corpus (and its label's counts).
    fn add(&mut self, text: &str, ids: &[u32], label: Option<&str>) {
        let mut c = text_counts(text);
        c.tokens = ids.len() as u64;
        for &id in ids {
            let info = self.info(id);
            let len = (info & 63) as usize - 1;
            self.histogram[len.min(MAX_LEN)] += 1;
            c.unknown_tokens += u64::from(info & UNK != 0);
            c.byte_fallback_tokens += u64::from(info & BYTE != 0);
        }
        self.corpora.last_mut().expect("a corpus was started").add(&c);
        if let Some(label) = label {
            self.languages.entry(label.to_owned()).or_default().add(&c);
        }
    }

    fn report(self, corpora: &[String], skipped: u64) -> Report {
        let mut total = Counts::default();
        self.corpora.iter().for_each(|c| total.add(c));
        let vocab_size = self.encoder.id_space();
        let token_bytes_histogram = self
            .histogram
            .iter()
            .enumerate()
            .map(|(i, &n)| (if i == MAX_LEN { format!("{MAX_LEN}+") } else { i.to_string() }, n.into()))
            .collect();
        Report {
            tokenizer: self.name,
            total: total.summary(),
            vocab_size,
            vocab_used: self.used,
            vocab_used_share: if vocab_size > 0 { self.used as f64 / vocab_size as f64 } else { 0.0 },
            token_bytes_histogram,
            skipped_records: skipped,
            corpora: corpora.iter().zip(&self.corpora).map(|(n, c)| CorpusSummary { corpus: n.clone(), summary: c.summary() }).collect(),
            languages: self.languages.into_iter().map(|(l, c)| (l, c.summary())).collect(),
        }
    }
}

/// A token's length in bytes, and whether it is the unknown token, a byte-fallback token.
fn token_facts(encoder: &DocEncoder, id: u32) -> (usize, bool, bool) {
    match encoder {
        DocEncoder::Tiktoken(enc) => (enc.decode_single_token_bytes(id).map_or(0, <[u8]>::len), false, false),
        DocEncoder::Tokenizer { tokenizer, .. } => {
            let model = tokenizer.get_model();
            if model.is_byte_fallback(id) {
                return (1, false, true);
            }
            let unk = model.unk_id() == Some(id);
            let text = tokenizer.decode(&[id], false).unwrap_or_default();
            // A byte-level token of part of a character decodes to U+FFFD: its bytes count.
            let len = match tokenizer.id_to_token(id).and_then(crate::formats::tiktoken::byte_level_bytes) {
                Some(bytes) if text.contains('\u{FFFD}') => bytes.len(),
                _ => text.len(),
            };
            (len, unk, false)
        }
    }
}

/// The counts of one document's text (no tokens yet).
pub fn text_counts(text: &str) -> Counts {
    let continuation = text.bytes().filter(|&b| crate::base::normalized::is_continuation(b)).count();
    Counts {
        documents: 1,
        bytes: text.len() as u64,
        chars: (text.len() - continuation) as u64,
        words: text.split_whitespace().count() as u64,
        ..Counts::default()
    }
}

/// Measures each of `tokenizers` (name, encoder) on `corpora` (each a file, directory or glob,
/// as `tokenkit tokenize` takes them), reading every corpus once. `on_progress` hears, after
/// each chunk, the input bytes read of the total, the documents read and the tokens counted by
/// all the tokenizers together.
pub fn measure(
    tokenizers: &[(String, DocEncoder)],
    corpora: &[String],
    options: &StatsOptions,
    on_progress: impl FnMut(&Progress),
) -> Result<Vec<Report>> {
    let mut meters: Vec<Meter> = tokenizers.iter().map(|(n, e)| Meter::new(n.clone(), e)).collect();
    let mut read = options.read.clone();
    read.keep = options.lang_field.iter().cloned().collect();
    let mut corpus_started = usize::MAX;
    let skipped = for_each_chunk(
        corpora,
        &read,
        options.chunk_bytes,
        |corpus, docs| {
            if corpus != corpus_started {
                corpus_started = corpus;
                meters.iter_mut().for_each(|m| m.corpora.push(Counts::default()));
            }
            let texts: Vec<&str> = docs.iter().map(|d| d.0).collect();
            let mut tokens = 0;
            for m in &mut meters {
                let ids = m.encoder.encode_documents(&texts, None)?;
                for ((text, label), ids) in docs.iter().zip(&ids) {
                    m.add(text, ids, *label);
                    tokens += ids.len() as u64;
                }
            }
            Ok(tokens)
        },
        on_progress,
    )?;
    Ok(meters.into_iter().map(|m| m.report(corpora, skipped)).collect())
}

/// Reads `corpora` (each a file, directory or glob, as `tokenkit tokenize` takes them) in
/// order, in chunks of about `chunk_bytes` bytes of text, and calls `each(corpus index,
/// documents)` on every chunk, each document as its text and the first kept column of `read`
/// (the language label), which returns the tokens it counted; a corpus without documents gets
/// one call with none. `on_progress` hears, after each chunk, the input bytes read (compressed
/// files: compressed bytes) of the total, and the documents and tokens so far. Returns the
/// records that could not be read as documents (invalid JSON, a missing field), which are
/// skipped.
pub fn for_each_chunk(
    corpora: &[String],
    read: &ReadOptions,
    chunk_bytes: usize,
    mut each: impl FnMut(usize, &[(&str, Option<&str>)]) -> Result<u64>,
    mut on_progress: impl FnMut(&Progress),
) -> Result<u64> {
    let inputs = corpora.iter().map(|c| input::expand_inputs(std::slice::from_ref(c))).collect::<Result<Vec<_>>>()?;
    let total_bytes = inputs.iter().flatten().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let mut progress = Progress { read_bytes: 0, total_bytes, documents: 0, tokens: 0 };
    let mut skipped = 0u64;
    let mut done_bytes = 0u64;
    for (k, files) in inputs.into_iter().enumerate() {
        let mut records = Records::new(files, read.clone());
        let bytes_read = records.bytes_read.clone();
        let mut chunks = Chunks::new(
            || {
                Ok(records.next_record()?.map(|r| {
                    let len = input::text_len(&r);
                    (r, len)
                }))
            },
            0,
            chunk_bytes,
        );
        let mut called = false;
        while let Some(chunk) = chunks.next_chunk()? {
            let mut docs: Vec<(&str, Option<&str>)> = Vec::with_capacity(chunk.len());
            for r in &chunk {
                match r {
                    Record::Doc { text, keep } => docs.push((text, keep.first().and_then(|k| k.as_deref()))),
                    Record::Empty => {}
                    Record::Bad(_) => skipped += 1,
                }
            }
            progress.tokens += each(k, &docs)?;
            progress.documents += docs.len() as u64;
            progress.read_bytes = done_bytes + bytes_read.load(std::sync::atomic::Ordering::Relaxed);
            called = true;
            on_progress(&progress);
        }
        if !called {
            each(k, &[])?;
        }
        done_bytes += bytes_read.load(std::sync::atomic::Ordering::Relaxed);
    }
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_counts_by_hand() {
        let c = text_counts("héllo  wörld\n日本語");
        assert_eq!((c.bytes, c.chars, c.words), (24, 16, 3));
        assert_eq!(text_counts("").words, 0);
        assert_eq!(text_counts(" \t\u{3000}x\u{a0}y ").words, 2);
    }

    #[test]
    fn ratios_are_none_without_divisor() {
        let s = Counts::default().summary();
        assert_eq!((s.bytes_per_token, s.tokens_per_word), (None, None));
        let s = Counts { bytes: 51, tokens: 8, words: 4, ..Counts::default() }.summary();
        assert_eq!((s.bytes_per_token, s.tokens_per_word), (Some(51.0 / 8.0), Some(2.0)));
    }
}
