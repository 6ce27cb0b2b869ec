//! A direct path for SentencePiece-style BPE tokenizer.json files (Llama 2, Mistral):
//! spaces become a replacement char (`▁`), one is put in front, and the BPE model (usually
//! with `byte_fallback`) runs on the whole text or on pieces cut before each `▁`. Two forms
//! are recognized:
//!
//! * a `Sequence` of `Prepend("▁")` and `Replace(" ", "▁")` normalizers, no pre-tokenizer
//!   (Llama 2, Mistral v0.1);
//! * no normalizer and a `Metaspace` pre-tokenizer (Mistral v0.3), any prepend scheme, split
//!   or not.
//!
//! It gives exactly what the general pipeline gives (same pieces, word indices and offsets)
//! without a `NormalizedString` (an alignment pair per byte) or a `Vec<Token>` per piece:
//! original offsets come from one cursor walking the text alongside the tokens.

use crate::models::bpe::BPE;
use crate::models::ModelWrapper;
use crate::normalizers::{NormalizerWrapper, ReplacePattern};
use crate::pre_tokenizers::{Metaspace, PreTokenizerWrapper, PrependScheme};
use crate::tokenizer::normalized::OffsetsIn;
use crate::tokenizer::{Encoding, OffsetType, Tokenizer};
use crate::Result;

/// When a segment of text (between added tokens) gets the replacement char in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefix {
    /// Always (the `Prepend` normalizer), even before a space.
    Always,
    /// As `Metaspace` does with this scheme, and only when the text does not start with a
    /// space (which already becomes the replacement char).
    Metaspace(PrependScheme),
}

/// How the direct path transforms and cuts the text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan<'a> {
    bpe: &'a BPE,
    replacement: char,
    prefix: Prefix,
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

/// The plan, when the tokenizer is of the SentencePiece-style BPE family and its added tokens
/// are all matched on the raw text.
pub(crate) fn plan(tok: &Tokenizer) -> Option<Plan<'_>> {
    let ModelWrapper::BPE(bpe) = &tok.model else { return None };
    if !bpe.tokens_are_vocab_strings() {
        return None;
    }
    let no_normalizer = match &tok.normalizer {
        None => true,
        Some(NormalizerWrapper::Sequence(s)) => s.get_normalizers().is_empty(),
        Some(_) => false,
    };
    match (&tok.normalizer, &tok.pre_tokenizer) {
        (Some(n), None) if !tok.added_vocabulary.has_normalized_tokens() => {
            let replacement = prepend_replace(n)?;
            Some(Plan { bpe, replacement, prefix: Prefix::Always, split: false })
        }
        (_, Some(PreTokenizerWrapper::Metaspace(m))) if no_normalizer => Some(metaspace_plan(bpe, m)),
        _ => None,
    }
}

fn metaspace_plan<'a>(bpe: &'a BPE, m: &Metaspace) -> Plan<'a> {
    Plan { bpe, replacement: m.get_replacement(), prefix: Prefix::Metaspace(m.prepend_scheme), split: m.split }
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
/// (pre-tokenized input), as in the general pipeline.
pub(crate) fn encode(
    tok: &Tokenizer,
    plan: Plan<'_>,
    text: &str,
    word_idx: Option<u32>,
    type_id: u32,
    offset_type: OffsetType,
) -> Result<Encoding> {
    let offsets_in = OffsetsIn::new(text, offset_type);
    let convert = |o| offsets_in.convert(o);
    let mut enc = Encoding::with_capacity(text.len() / 3);
    let mut word: u32 = 0;
    let mut buf = String::new();
    let vocab = plan.bpe.reverse_vocab();
    let mut rep = [0u8; 4];
    let rep: &str = plan.replacement.encode_utf8(&mut rep);
    for (id, (s, e)) in tok.added_vocabulary.split_unnormalized(text) {
        if let Some(id) = id {
            enc.push_token(id, text[s..e].to_owned(), convert((s, e)), Some(word_idx.unwrap_or(word)), type_id);
            word += 1;
            continue;
        }
        let segment = &text[s..e];
        let prefixed = match plan.prefix {
            Prefix::Always => true,
            Prefix::Metaspace(scheme) => {
                let wanted = match scheme {
                    PrependScheme::Always => true,
                    PrependScheme::First => s == 0,
                    PrependScheme::Never => false,
                };
                wanted && !segment.starts_with(' ') && !segment.starts_with(plan.replacement)
            }
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
        let mut tokenize = |piece_start: usize, piece: &str, word: u32| {
            let mut pos = piece_start;
            plan.bpe.tokenize_with(piece, |id, len| {
                let (ts, te) = (pos, pos + len as usize);
                pos = te;
                let offsets = convert(cursor.original(ts, te));
                enc.push_vocab_token(id, vocab, offsets, Some(word_idx.unwrap_or(word)), type_id);
            })
        };
        if plan.split {
            // Cut before each replacement char (`MergedWithNext`), as `Metaspace` splits.
            let mut start = 0;
            for (i, _) in buf.match_indices(plan.replacement) {
                if i > start {
                    tokenize(start, &buf[start..i], word)?;
                    word += 1;
                    start = i;
                }
            }
            if start < buf.len() {
                tokenize(start, &buf[start..], word)?;
                word += 1;
            }
        } else {
            tokenize(0, &buf, word)?;
            word += 1;
        }
    }
    Ok(enc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Model;

    /// The general pipeline (added tokens, normalizer, pre-tokenizer, model per split).
    fn general(tok: &Tokenizer, text: &str, offset_type: OffsetType) -> Encoding {
        let normalized = tok.added_vocabulary.extract_and_normalize(tok.normalizer.as_ref(), text).unwrap();
        let mut pre = tok.do_pre_tokenize(normalized).unwrap();
        pre.tokenize(|n| tok.model.tokenize(n.get())).unwrap();
        pre.into_encoding(None, 0, offset_type).unwrap()
    }

    const TEXTS: &[&str] = &[
        "",
        " ",
        "Hello world",
        "  two  spaces ",
        "<s>Hi</s> there<s>",
        " <s> x",
        "▁literal▁ marks ▁",
        "日本語のテキスト、です。 emoji 😀🎉 and ążę",
        "\n\ttabs\n\nnewlines ",
        "code: fn main() { let x = 42; }",
        "[INST] hi [/INST]",
    ];

    #[test]
    fn same_as_general_pipeline() {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let fixtures = repo.join(".fixtures");
        let mut checked = 0;
        for file in ["hub/llama2.json", "hub/mistral03.json", "registry/mistral01/tokenizer.json"] {
            let Ok(json) = std::fs::read_to_string(fixtures.join(file)) else { continue };
            let mut variants = vec![json.clone()];
            if file.contains("mistral03") {
                for (scheme, split) in [("always", true), ("never", true), ("first", true), ("always", false), ("never", false)] {
                    let from = "\"prepend_scheme\": \"first\",\n    \"split\": false";
                    let to = format!("\"prepend_scheme\": \"{scheme}\",\n    \"split\": {split}");
                    assert!(json.contains(from), "fixture form changed");
                    variants.push(json.replace(from, &to));
                }
            }
            for v in variants {
                let tok = Tokenizer::from_json(&v).unwrap();
                assert!(plan(&tok).is_some(), "{file}");
                for text in TEXTS {
                    for offset_type in [OffsetType::Byte, OffsetType::Char] {
                        let fast = tok.encode_single_sequence((*text).into(), 0, offset_type).unwrap();
                        assert_eq!(fast, general(&tok, text, offset_type), "{file} {text:?}");
                        checked += 1;
                    }
                }
            }
        }
        eprintln!("sp_path checked {checked}");
        assert!(checked == 0 || checked >= TEXTS.len() * 2 * 7, "{checked}");
    }
}
