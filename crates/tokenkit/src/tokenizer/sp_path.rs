//! A direct path for SentencePiece-style tokenizer.json files: spaces become a replacement
//! char (`▁`), one is put in front, and the model (BPE, usually with `byte_fallback`, or
//! Unigram) runs on the whole text or on pieces cut before each `▁`. Three forms are
//! recognized:
//!
//! * a `Sequence` of `Prepend("▁")` and `Replace(" ", "▁")` normalizers, no pre-tokenizer
//!   (Llama 2, Mistral v0.1);
//! * no normalizer and a `Metaspace` pre-tokenizer (Mistral v0.3), any prepend scheme, split
//!   or not;
//! * a chain of SentencePiece normalizers ([`Chain`]: literal `Replace`s, `NFKD`,
//!   `StripAccents`, `Precompiled`...) then `WhitespaceSplit` + `Metaspace` or `Metaspace`
//!   alone (XLNet, ALBERT, T5 converted files).
//!
//! It gives exactly what the general pipeline gives (same pieces, word indices and offsets)
//! without a `NormalizedString` (an alignment pair per byte, rebuilt by each step) or a
//! `Vec<Token>` per piece: in the first two forms original offsets come from one cursor
//! walking the text alongside the tokens, in the third from the alignment of each normalized
//! char that the chain gives.

use crate::base::vocab::ReverseVocab;
use crate::models::bpe::BPE;
use crate::models::unigram::Unigram;
use crate::models::ModelWrapper;
use crate::normalizers::{NormalizerWrapper, ReplacePattern};
use crate::pre_tokenizers::{Metaspace, PreTokenizerWrapper};
use crate::tokenizer::normalized::OffsetsIn;
use crate::tokenizer::pipeline::Stages;
use crate::tokenizer::sp_chain::{Align, Chain, Scratch};
use crate::tokenizer::{Encoding, OffsetType};
use crate::Result;

/// When a segment of text (between added tokens) gets the replacement char in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefix<'a> {
    /// Always (the `Prepend` normalizer), even before a space.
    Always,
    /// As this `Metaspace` does ([`Metaspace::prepends`]).
    Metaspace(&'a Metaspace),
}

/// The model of the direct path.
#[derive(Clone, Copy)]
enum SpModel<'a> {
    Bpe(&'a BPE),
    Unigram(&'a Unigram),
}

impl SpModel<'_> {
    /// The model's id → token table.
    fn reverse_vocab(&self) -> &std::sync::Arc<ReverseVocab> {
        match self {
            SpModel::Bpe(b) => b.reverse_vocab(),
            SpModel::Unigram(u) => u.reverse_vocab(),
        }
    }

    /// The tokens of `piece` in order: `emit(id, start, end, raw)` with byte offsets in
    /// `piece`; `raw` means the token's string is the text itself, not its vocabulary string.
    #[inline]
    fn tokenize(&self, piece: &str, mut emit: impl FnMut(u32, usize, usize, bool)) -> Result<()> {
        match self {
            SpModel::Bpe(b) => {
                let mut pos = 0;
                b.tokenize_with(piece, |id, len| {
                    let end = pos + len as usize;
                    emit(id, pos, end, false);
                    pos = end;
                })
            }
            SpModel::Unigram(u) => u.tokenize_with(piece, emit),
        }
    }
}

/// How the direct path transforms and cuts the text.
#[derive(Clone, Copy)]
enum Form<'a> {
    /// Spaces become the replacement char, a prefix as `prefix` says.
    Spaces { prefix: Prefix<'a> },
    /// The normalizer chain, then (`whitespace_split`) words cut at whitespace, then
    /// this `Metaspace` on each word (or on the whole segment).
    Chain { chain: Chain<'a>, metaspace: &'a Metaspace, whitespace_split: bool },
}

/// How the direct path transforms and cuts the text.
#[derive(Clone, Copy)]
pub(crate) struct Plan<'a> {
    model: SpModel<'a>,
    form: Form<'a>,
    replacement: char,
    /// Cut before each replacement char (`Metaspace` with `split`).
    split: bool,
}

/// The `Prepend(r)` + `Replace(" ", r)` normalizer pair, as its replacement char.
fn prepend_replace(n: &NormalizerWrapper) -> Option<char> {
    let NormalizerWrapper::Sequence(seq) = n else { return None };
    let [NormalizerWrapper::Prepend(p), NormalizerWrapper::Replace(r)] = seq.get_normalizers() else { return None };
    let mut chars = p.prepend.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else { return None };
    let space = matches!(r.pattern(), ReplacePattern::String(s) if s == " ");
    (space && r.content() == p.prepend).then_some(c)
}

/// The `Metaspace` of a `WhitespaceSplit` + `Metaspace` sequence.
fn whitespace_metaspace(p: &PreTokenizerWrapper) -> Option<&Metaspace> {
    let PreTokenizerWrapper::Sequence(s) = p else { return None };
    match s.pretokenizers.as_slice() {
        [PreTokenizerWrapper::WhitespaceSplit(_), PreTokenizerWrapper::Metaspace(m)] => Some(m),
        _ => None,
    }
}

/// The plan, when the tokenizer is of the SentencePiece-style family and its added tokens
/// are all matched on the raw text.
pub(crate) fn plan(stages: &Stages) -> Option<Plan<'_>> {
    let model = match &stages.model {
        ModelWrapper::BPE(bpe) if bpe.tokens_are_vocab_strings() => SpModel::Bpe(bpe),
        ModelWrapper::Unigram(u) => SpModel::Unigram(u),
        _ => return None,
    };
    // With a normalizer, added tokens must all be matched on the raw text.
    let raw_tokens_only = !stages.added_vocabulary.has_normalized_tokens();
    let no_normalizer = match &stages.normalizer {
        None => true,
        Some(NormalizerWrapper::Sequence(s)) => s.get_normalizers().is_empty(),
        Some(_) => false,
    };
    match (&stages.normalizer, &stages.pre_tokenizer) {
        (Some(n), None) if raw_tokens_only => {
            let replacement = prepend_replace(n)?;
            Some(Plan { model, form: Form::Spaces { prefix: Prefix::Always }, replacement, split: false })
        }
        (_, Some(PreTokenizerWrapper::Metaspace(m))) if no_normalizer => {
            Some(Plan { model, form: Form::Spaces { prefix: Prefix::Metaspace(m) }, replacement: m.get_replacement(), split: m.split })
        }
        (n, Some(p)) if raw_tokens_only || no_normalizer => {
            let (m, whitespace_split) = match p {
                PreTokenizerWrapper::Metaspace(m) => (m, false),
                p => (whitespace_metaspace(p)?, true),
            };
            let chain = Chain::new(n.as_ref(), whitespace_split)?;
            Some(Plan {
                model,
                form: Form::Chain { chain, metaspace: m, whitespace_split },
                replacement: m.get_replacement(),
                split: m.split,
            })
        }
        _ => None,
    }
}

/// Maps normalized byte positions of one segment back to the original text, moving forward
/// only: tokens come in order, so the whole segment costs one walk.
struct Cursor<'t> {
    /// The original segment.
    text: &'t str,
    /// Where the segment starts in the input, in bytes.
    base: usize,
    /// Length of the prepended replacement char (0 if none).
    prefix_len: usize,
    /// Length of the replacement char.
    rep_len: usize,
    /// Where the segment's first char ends in the input (the prepended char's end).
    first_end: usize,
    /// The current char: its start in the segment and in the normalized piece.
    orig: usize,
    norm: usize,
}

impl Cursor<'_> {
    /// Advances to the char whose normalized bytes contain `at` (`at >= prefix_len`) and
    /// returns its original byte range.
    #[inline]
    fn char_at(&mut self, at: usize) -> (usize, usize) {
        let bytes = self.text.as_bytes();
        loop {
            let b = bytes[self.orig];
            let (orig_len, norm_len) = match b {
                b' ' => (1, self.rep_len),
                0x00..=0x7F => (1, 1),
                0xC0..=0xDF => (2, 2),
                0xE0..=0xEF => (3, 3),
                _ => (4, 4),
            };
            if at < self.norm + norm_len || self.orig + orig_len >= bytes.len() {
                return (self.base + self.orig, self.base + self.orig + orig_len);
            }
            self.orig += orig_len;
            self.norm += norm_len;
        }
    }

    /// The original byte range of the normalized range `start..end` (not empty).
    #[inline]
    fn original(&mut self, start: usize, end: usize) -> (usize, usize) {
        // The prepended char is aligned with the segment's first char.
        let s = if start < self.prefix_len { self.base } else { self.char_at(start - self.prefix_len).0 };
        let e = if end <= self.prefix_len { self.first_end } else { self.char_at(end - 1 - self.prefix_len).1 };
        (s, e)
    }
}

/// Encodes one sequence on the direct path. `word_idx` overrides the word index
/// (pre-tokenized input), as in the general pipeline. `None` when the text needs the general
/// pipeline (see [`Chain::normalize`]).
pub(crate) fn encode(
    stages: &Stages,
    plan: Plan<'_>,
    text: &str,
    word_idx: Option<u32>,
    type_id: u32,
    offset_type: OffsetType,
) -> Option<Result<Encoding>> {
    let mut out = Out {
        offsets_in: OffsetsIn::new(text, offset_type),
        enc: Encoding::with_capacity(text.len() / 3),
        vocab: plan.model.reverse_vocab(),
        word: 0,
        word_idx,
        type_id,
    };
    let mut buf = String::new();
    let mut aligns: Vec<Align> = Vec::new();
    let mut pieces: Vec<usize> = Vec::new();
    let mut scratch = Scratch::default();
    for (id, (s, e)) in stages.added_vocabulary.split_unnormalized(text) {
        if let Some(id) = id {
            let word = out.word();
            out.enc.push_token(id, text[s..e].to_owned(), out.offsets_in.convert((s, e)), word, type_id);
            out.word += 1;
            continue;
        }
        let done = match plan.form {
            Form::Spaces { prefix } => spaces_segment(plan, prefix, text, (s, e), &mut buf, &mut out),
            Form::Chain { chain, metaspace, whitespace_split } => {
                let ctx = ChainSegment { plan, chain, metaspace, whitespace_split, base: s };
                match ctx.normalize(&text[s..e], &mut scratch, &mut buf, &mut aligns, &mut pieces) {
                    true => ctx.tokenize(&buf, &aligns, &pieces, &mut out),
                    false => return None,
                }
            }
        };
        if let Err(e) = done {
            return Some(Err(e));
        }
    }
    Some(Ok(out.enc))
}

/// The encoding being filled and what each token needs.
struct Out<'v, 't> {
    offsets_in: OffsetsIn<'t>,
    enc: Encoding,
    vocab: &'v std::sync::Arc<ReverseVocab>,
    /// The current word (piece) index.
    word: u32,
    word_idx: Option<u32>,
    type_id: u32,
}

impl Out<'_, '_> {
    fn word(&self) -> Option<u32> {
        Some(self.word_idx.unwrap_or(self.word))
    }

    /// Pushes a model token of `piece` (its string is `piece[start..end]` if `raw`).
    #[inline]
    fn push(&mut self, id: u32, piece: &str, (start, end): (usize, usize), raw: bool, offsets: (usize, usize)) {
        let (word, offsets) = (self.word(), self.offsets_in.convert(offsets));
        if raw {
            self.enc.push_token(id, piece[start..end].to_owned(), offsets, word, self.type_id);
        } else {
            self.enc.push_vocab_token(id, self.vocab, offsets, word, self.type_id);
        }
    }
}

/// One segment `text[s..e]` in the `Spaces` form.
fn spaces_segment(
    plan: Plan<'_>,
    prefix: Prefix<'_>,
    text: &str,
    (s, e): (usize, usize),
    buf: &mut String,
    out: &mut Out<'_, '_>,
) -> Result<()> {
    let mut rep = [0u8; 4];
    let rep: &str = plan.replacement.encode_utf8(&mut rep);
    let segment = &text[s..e];
    let prefixed = match prefix {
        Prefix::Always => true,
        Prefix::Metaspace(m) => m.prepends(segment.chars().next(), s == 0),
    };
    buf.clear();
    if prefixed {
        buf.push_str(rep);
    }
    // Spaces are frequent (code indentation): a byte loop beats a search per space.
    let mut last = 0;
    for (i, &b) in segment.as_bytes().iter().enumerate() {
        if b == b' ' {
            buf.push_str(&segment[last..i]);
            buf.push_str(rep);
            last = i + 1;
        }
    }
    buf.push_str(&segment[last..]);
    let prefix_len = if prefixed { rep.len() } else { 0 };
    let first_end = s + segment.chars().next().map_or(0, char::len_utf8);
    let mut cursor = Cursor { text: segment, base: s, prefix_len, rep_len: rep.len(), first_end, orig: 0, norm: 0 };
    let mut tokenize = |piece_start: usize, piece: &str, out: &mut Out<'_, '_>| {
        // The cursor only moves forward; byte-fallback tokens share their char's range.
        let mut last = ((usize::MAX, 0), (0, 0));
        let r = plan.model.tokenize(piece, |id, ts, te, raw| {
            if last.0 != (ts, te) {
                last = ((ts, te), cursor.original(piece_start + ts, piece_start + te));
            }
            out.push(id, piece, (ts, te), raw, last.1);
        });
        out.word += 1;
        r
    };
    if plan.split {
        // Cut before each replacement char (`MergedWithNext`), as `Metaspace` splits.
        let mut start = 0;
        for (i, _) in buf.match_indices(plan.replacement) {
            if i > start {
                tokenize(start, &buf[start..i], out)?;
                start = i;
            }
        }
        if start < buf.len() {
            tokenize(start, &buf[start..], out)?;
        }
    } else {
        tokenize(0, buf, out)?;
    }
    Ok(())
}

/// One segment in the `Chain` form.
struct ChainSegment<'p> {
    plan: Plan<'p>,
    chain: Chain<'p>,
    metaspace: &'p Metaspace,
    whitespace_split: bool,
    /// Where the segment starts in the input.
    base: usize,
}

impl ChainSegment<'_> {
    /// Normalizes and pre-tokenizes `segment` into `buf` (the pieces one after the other,
    /// each starting at an offset of `pieces`), with the original range of each byte of
    /// `buf` in `aligns`. `false` when the segment needs the general pipeline.
    fn normalize(&self, segment: &str, scratch: &mut Scratch, buf: &mut String, aligns: &mut Vec<Align>, pieces: &mut Vec<usize>) -> bool {
        buf.clear();
        aligns.clear();
        pieces.clear();
        let rep = self.plan.replacement;
        let mut push = |buf: &mut String, c: char, a: Align| {
            buf.push(c);
            aligns.extend_from_slice(&[a; 4][..c.len_utf8()]);
        };
        let mut in_word = false;
        self.chain.normalize(segment, scratch, |c, a| {
            if self.whitespace_split && c.is_whitespace() {
                in_word = false;
                return;
            }
            // None are left after a whitespace split.
            let c = self.metaspace.replace(c);
            if !in_word {
                // A word starts: `Metaspace` on it (its original start is its first char's).
                in_word = true;
                pieces.push(buf.len());
                let first = if self.whitespace_split { self.base + a.0 as usize == 0 } else { self.base == 0 };
                if self.metaspace.prepends(Some(c), first) {
                    push(buf, rep, a);
                }
            } else if self.plan.split && c == rep {
                pieces.push(buf.len());
            }
            push(buf, c, a);
        })
    }

    /// Runs the model on each piece of `buf`.
    fn tokenize(&self, buf: &str, aligns: &[Align], pieces: &[usize], out: &mut Out<'_, '_>) -> Result<()> {
        for (k, &ps) in pieces.iter().enumerate() {
            let pe = pieces.get(k + 1).copied().unwrap_or(buf.len());
            let piece = &buf[ps..pe];
            let r = self.plan.model.tokenize(piece, |id, ts, te, raw| {
                let offsets = (self.base + aligns[ps + ts].0 as usize, self.base + aligns[ps + te - 1].1 as usize);
                out.push(id, piece, (ts, te), raw, offsets);
            });
            out.word += 1;
            r?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::PreTokenizerWrapper;
    use crate::tokenizer::Tokenizer;

    /// A Unigram model with byte fallback (no fixture has one): the plan and the general path
    /// agree (the fixtures are compared in `plan_tests`).
    #[test]
    fn unigram_byte_fallback_same_as_general_pipeline() {
        let mut pieces: Vec<(String, f64)> = vec![("<unk>".into(), 0.0)];
        pieces.extend((0..=255u8).map(|b| (format!("<0x{b:02X}>"), -20.0)));
        for (p, score) in [("▁", -1.0), ("▁a", -2.0), ("b", -3.0), ("▁ab", -2.5), ("a", -4.0)] {
            pieces.push((p.into(), score));
        }
        let mut checked = 0;
        for fallback in [true, false] {
            let model = crate::models::unigram::Unigram::new(pieces.clone(), Some(0), fallback).unwrap();
            let mut tok = Tokenizer::new(model);
            tok.with_pre_tokenizer(Some(PreTokenizerWrapper::Metaspace(Metaspace::default())));
            assert_eq!(tok.plan_name(), "sentencepiece");
            let mut general = tok.clone();
            general.force_general_path(true);
            for text in ["ab ab", "a日本b é a", "日 ab😀b", " x"] {
                assert_eq!(tok.encode(text, false).unwrap(), general.encode(text, false).unwrap(), "{text:?}");
                assert_eq!(tok.encode_char_offsets(text, false).unwrap(), general.encode_char_offsets(text, false).unwrap(), "{text:?}");
                checked += 2;
            }
        }
        assert_eq!(checked, 16);
    }
}
