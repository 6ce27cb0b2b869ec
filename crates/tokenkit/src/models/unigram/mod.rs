//! Unigram: the most likely segmentation of a piece under a unigram language model
//! (SentencePiece's), found by Viterbi over the lattice of vocabulary matches.
//!
//! A char that starts no single-char piece also gets an unk edge scored
//! `min_score - 10` (SentencePiece's `kUnkPenalty`); consecutive unk segments are fused into
//! one token whose value is the raw text. With `byte_fallback`, such a segment becomes its
//! UTF-8 bytes as `<0xNN>` tokens (each spanning the whole segment) when all exist.
//!
//! A load builds no trie: pieces are looked up by their text (the pieces of a `.model`'s
//! lazy [`spm::SpViterbi`], the same [`spm::Pieces`]) until the model has encoded as many
//! bytes as the trie costs to build, then the trie is built and walked.

pub mod lattice;
pub mod spm;
pub mod trainer;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use self::spm::{PieceSource, Pieces, SpViterbi};
use super::bpe::byte_token_ids;
use super::cache::{Cache, DEFAULT_CACHE_CAPACITY, MAX_CACHED_LENGTH};
use super::sentencepiece::model::LAZY_UNIGRAM_BYTES_PER_PIECE;
use super::serialization::{deserialize_via_fields, missing, ModelFields, VocabField};
use crate::base::vocab::{ReverseVocab, Vocab, VocabMap};
use crate::base::{Model, Token};
use crate::utils::trie::Trie;
use crate::{Error, Result};

/// Score penalty of an unknown char below the lowest piece score (SentencePiece's `kUnkPenalty`).
pub const UNK_PENALTY: f64 = 10.0;

/// "Not set" for ids and positions.
const NONE: u32 = u32::MAX;

/// One token of a cached result: offsets in bytes; `raw` means the value is the text itself
/// (unk segments), otherwise it is the vocabulary piece of `id`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Segment {
    id: u32,
    start: u32,
    end: u32,
    raw: bool,
}

/// Best path ending at a byte position.
#[derive(Debug, Clone, Copy)]
struct BestNode {
    score: f64,
    start: u32,
    id: u32,
}

thread_local! {
    /// Viterbi table reused between calls on this thread.
    static BEST: RefCell<Vec<BestNode>> = const { RefCell::new(Vec::new()) };
}

/// The Unigram model (HF `models.Unigram`).
pub struct Unigram {
    pieces: Vec<(String, f64)>,
    /// Finds the pieces at each position: by their text (its vocabulary, which is also the
    /// piece → id map) until enough text was encoded, then in its trie.
    viterbi: SpViterbi,
    min_score: f64,
    unk_id: Option<usize>,
    byte_fallback: bool,
    byte_ids: Option<Box<[u32; 256]>>,
    cache: Cache<Box<[Segment]>>,
    /// The id → piece table encodings share (built on first use by the direct path).
    reverse: OnceLock<Arc<ReverseVocab>>,
}

impl Clone for Unigram {
    /// The clone starts with an empty cache.
    fn clone(&self) -> Self {
        Self {
            pieces: self.pieces.clone(),
            viterbi: self.viterbi.clone(),
            min_score: self.min_score,
            unk_id: self.unk_id,
            byte_fallback: self.byte_fallback,
            byte_ids: self.byte_ids.clone(),
            cache: self.cache.fresh(),
            reverse: self.reverse.clone(),
        }
    }
}

impl PartialEq for Unigram {
    fn eq(&self, o: &Self) -> bool {
        self.pieces == o.pieces && self.unk_id == o.unk_id && self.byte_fallback == o.byte_fallback
    }
}

impl std::fmt::Debug for Unigram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unigram")
            .field("vocab_size", &self.pieces.len())
            .field("unk_id", &self.unk_id)
            .field("byte_fallback", &self.byte_fallback)
            .finish()
    }
}

impl Default for Unigram {
    /// A vocabulary of just `<unk>` (score 0) with unk id 0 (HF's default).
    fn default() -> Self {
        Self::new(vec![("<unk>".into(), 0.0)], Some(0), false).unwrap_or_else(|_| unreachable!("the default Unigram is valid"))
    }
}

impl Unigram {
    /// Builds the model from `(piece, score)` pairs (the id is the position), the id of the
    /// unk piece and whether unknown chars fall back to `<0xNN>` byte pieces.
    pub fn new(pieces: Vec<(String, f64)>, unk_id: Option<usize>, byte_fallback: bool) -> Result<Self> {
        if let Some(unk) = unk_id {
            if pieces.is_empty() {
                return Err(Error::invalid("Unigram: the vocabulary is empty but unk_id is set"));
            }
            if unk >= pieces.len() {
                return Err(Error::invalid(format!("Unigram: unk_id {unk} is out of the vocabulary (size {})", pieces.len())));
            }
        }
        if u32::try_from(pieces.len()).is_err() {
            return Err(Error::invalid("Unigram: more than 2^32 pieces"));
        }
        let min_score = pieces.iter().map(|(_, score)| *score).fold(f64::INFINITY, f64::min);
        // A piece listed twice has its last id (as in HF's map).
        let vocab = Vocab::from_distinct_tokens(pieces.iter().map(|(p, _)| p.as_str())).unwrap_or_else(|_| {
            let mut map = VocabMap::with_capacity_and_hasher(pieces.len(), Default::default());
            map.extend(pieces.iter().enumerate().map(|(id, (p, _))| (p.clone(), id as u32)));
            Vocab::new(map)
        });
        let byte_ids = byte_fallback.then(|| byte_token_ids(|t| vocab.id(t))).flatten();
        // Every piece takes part; the scores the Viterbi here adds are the `f64` ones.
        let n = pieces.len();
        let scores = pieces.iter().map(|&(_, score)| score as f32).collect();
        let (unk, unk_score) = (unk_id.map_or(NONE, |u| u as u32), (min_score - UNK_PENALTY) as f32);
        let viterbi = SpViterbi::lazy(vocab, vec![0; n].into(), |_| true, scores, unk, unk_score, Vec::new());
        Ok(Self {
            pieces,
            viterbi,
            min_score,
            unk_id,
            byte_fallback,
            byte_ids,
            cache: Cache::new(DEFAULT_CACHE_CAPACITY),
            reverse: OnceLock::new(),
        })
    }

    /// The `(piece, score)` pairs in id order.
    pub fn pieces(&self) -> &[(String, f64)] {
        &self.pieces
    }
    /// The id of the unk piece.
    pub fn unk_id(&self) -> Option<usize> {
        self.unk_id
    }
    /// Whether unknown chars fall back to byte pieces.
    pub fn byte_fallback(&self) -> bool {
        self.byte_fallback
    }
    /// The lowest piece score.
    pub fn min_score(&self) -> f64 {
        self.min_score
    }

    /// Forgets the cached pieces.
    pub fn clear_cache(&self) {
        self.cache.clear();
    }

    fn missing_unk() -> Error {
        Error::MissingToken("Unigram: encountered an unknown char but the model has no unk_id".into())
    }

    /// The piece → id map.
    fn vocab(&self) -> &Vocab {
        self.viterbi.vocab().unwrap_or_else(|| unreachable!("the Viterbi of a Unigram is lazy"))
    }

    /// Whether the trie is built (pieces are looked up by their text until then).
    pub fn trie_built(&self) -> bool {
        self.viterbi.trie_built()
    }

    /// The trie of the pieces, built now if it is not.
    pub fn trie(&self) -> &Trie {
        self.viterbi.trie()
    }

    /// Viterbi best path over `s`, as `(start, end, id)` segments in reverse order, with
    /// consecutive unk segments already fused. Counts `s` towards building the trie.
    fn best_path(&self, s: &str, out: &mut Vec<(u32, u32, u32)>) -> Result<()> {
        if self.viterbi.trie_due(s.len(), LAZY_UNIGRAM_BYTES_PER_PIECE * self.pieces.len()) {
            self.viterbi.build_trie();
        }
        match self.viterbi.piece_source() {
            PieceSource::Trie(built) => self.best_path_with(built, s, out),
            PieceSource::Lookup(lookup) => self.best_path_with(&lookup, s, out),
        }
    }

    /// [`Self::best_path`] with the pieces found by `pieces`.
    fn best_path_with(&self, pieces: &impl Pieces, s: &str, out: &mut Vec<(u32, u32, u32)>) -> Result<()> {
        let unk_score = self.min_score - UNK_PENALTY;
        let unk_id = self.unk_id.map(|u| u as u32);
        BEST.with(|best| {
            let mut guard = best.try_borrow_mut();
            let mut local = Vec::new();
            let best = match guard.as_deref_mut() {
                Ok(b) => b,
                Err(_) => &mut local,
            };
            best.clear();
            best.resize(s.len() + 1, BestNode { score: 0.0, start: NONE, id: 0 });
            let bytes = s.as_bytes();
            let mut start = 0;
            while start < bytes.len() {
                let (from, here) = (start as u32, best[start].score);
                let mut unknown = false;
                start = pieces.at(bytes, start, |end, found| {
                    // A char that no single-char piece covers gets an unk edge.
                    let (cand, id) = match found {
                        Some((id, _)) => (self.pieces[id as usize].1 + here, id),
                        None => (unk_score + here, unk_id.unwrap_or(NONE)),
                    };
                    unknown |= found.is_none();
                    let target = &mut best[end];
                    // Strictly better only: on ties the earliest start wins.
                    if target.start == NONE || cand > target.score {
                        *target = BestNode { score: cand, start: from, id };
                    }
                });
                if unknown && unk_id.is_none() {
                    return Err(Self::missing_unk());
                }
            }
            // Walk back from the end, fusing runs of unk.
            out.clear();
            let mut end = s.len();
            while end > 0 {
                let node = best[end];
                let start = node.start as usize;
                match out.last_mut() {
                    Some(last) if Some(node.id) == unk_id && Some(last.2) == unk_id && last.0 as usize == end => {
                        last.0 = start as u32;
                    }
                    _ => out.push((start as u32, end as u32, node.id)),
                }
                end = start;
            }
            if best.len() > (1 << 20) {
                *best = Vec::new();
            }
            Ok(())
        })
    }

    /// The tokens of `s` in compact form.
    fn segments(&self, s: &str) -> Result<Vec<Segment>> {
        let mut path = Vec::new();
        self.best_path(s, &mut path)?;
        let unk_id = self.unk_id.map(|u| u as u32);
        let mut out = Vec::with_capacity(path.len());
        for &(start, end, id) in path.iter().rev() {
            if Some(id) != unk_id {
                out.push(Segment { id, start, end, raw: false });
                continue;
            }
            // An unk run: its text may still be a piece; else bytes; else the unk id.
            let text = &s[start as usize..end as usize];
            if let Some(id) = self.vocab().id(text) {
                out.push(Segment { id, start, end, raw: true });
                continue;
            }
            if let Some(bytes) = &self.byte_ids {
                if text.bytes().all(|b| bytes[b as usize] != NONE) {
                    out.extend(text.bytes().map(|b| Segment { id: bytes[b as usize], start, end, raw: false }));
                    continue;
                }
            }
            out.push(Segment { id, start, end, raw: true });
        }
        Ok(out)
    }

    fn to_tokens(&self, s: &str, segments: &[Segment]) -> Vec<Token> {
        segments
            .iter()
            .map(|seg| {
                let (start, end) = (seg.start as usize, seg.end as usize);
                let value = if seg.raw { &s[start..end] } else { self.pieces[seg.id as usize].0.as_str() };
                Token::new(seg.id, value.to_owned(), (start, end))
            })
            .collect()
    }

    /// Runs `f` on the segments of `sequence` (from the cache when there).
    fn with_segments(&self, sequence: &str, f: impl FnOnce(&[Segment])) -> Result<()> {
        if sequence.is_empty() {
            return Ok(());
        }
        if u32::try_from(sequence.len()).is_err() {
            return Err(Error::invalid("Unigram: a piece longer than 4 GiB cannot be tokenized"));
        }
        let cacheable = sequence.len() < MAX_CACHED_LENGTH;
        let mut f = Some(f);
        if cacheable {
            if let Some(()) = self.cache.with(sequence, |segs| f.take().map_or((), |f| f(segs))) {
                return Ok(());
            }
        }
        let segments = self.segments(sequence)?;
        if let Some(f) = f {
            f(&segments);
        }
        if cacheable {
            self.cache.insert(sequence, segments.into_boxed_slice());
        }
        Ok(())
    }

    /// The tokens of `sequence` without building them: `emit(id, start, end, raw)` per token,
    /// in order, with byte offsets into `sequence`; `raw` means the token's string is
    /// `sequence[start..end]` (an unknown segment), otherwise the piece of `id`.
    pub(crate) fn tokenize_with(&self, sequence: &str, mut emit: impl FnMut(u32, usize, usize, bool)) -> Result<()> {
        self.with_segments(sequence, |segs| {
            for seg in segs {
                emit(seg.id, seg.start as usize, seg.end as usize, seg.raw);
            }
        })
    }

    /// The id → piece table, which encodings share to build their token strings lazily.
    pub(crate) fn reverse_vocab(&self) -> &Arc<ReverseVocab> {
        self.reverse.get_or_init(|| Arc::new(ReverseVocab::from_tokens(self.pieces.iter().map(|(p, _)| p.as_str()))))
    }

    /// Builds the model from the fields of a tokenizer.json model object.
    pub(crate) fn from_fields(mut f: ModelFields) -> Result<Self> {
        f.expect_type("Unigram")?;
        let pieces = match f.vocab.take() {
            Some(VocabField::Scores(p)) => p,
            Some(VocabField::Map(_)) => {
                return Err(Error::invalid("Unigram model: `vocab` must be a list [[piece, score], ...], not an object"))
            }
            None => return Err(missing("Unigram", "vocab")),
        };
        Self::new(pieces, f.unk_id.flatten(), f.byte_fallback.flatten().unwrap_or(false))
    }
}

impl Model for Unigram {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        let mut tokens = Vec::new();
        self.with_segments(sequence, |segs| tokens = self.to_tokens(sequence, segs))?;
        Ok(tokens)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab().id(token)
    }

    fn id_to_token(&self, id: u32) -> Option<&str> {
        self.pieces.get(id as usize).map(|(p, _)| p.as_str())
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        self.vocab().to_std_map()
    }

    fn get_vocab_size(&self) -> usize {
        self.pieces.len()
    }
}

impl Serialize for Unigram {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_struct("Unigram", 4)?;
        m.serialize_field("type", "Unigram")?;
        m.serialize_field("unk_id", &self.unk_id)?;
        m.serialize_field("vocab", &self.pieces)?;
        m.serialize_field("byte_fallback", &self.byte_fallback)?;
        m.end()
    }
}

deserialize_via_fields!(Unigram);

#[cfg(test)]
mod tests;
