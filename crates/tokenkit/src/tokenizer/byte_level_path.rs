//! A direct path for the byte-level BPE family (GPT-2, Llama-3, Qwen, DeepSeek, tiktoken-style
//! files): no normalizer (or an empty sequence), a regex split (or DeepSeek's chain of three)
//! then the byte-level mapping, and BPE. It gives exactly what
//! the general pipeline gives (same pieces, same word indices, same byte offsets) without
//! building a `NormalizedString` per piece.

use crate::models::ModelWrapper;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::byte_level::{ByteLevel, GPT2_REGEX};
use crate::pre_tokenizers::lexers::{
    deepseek_pieces, isolated_pieces, DEEPSEEK_CJK_PATTERN, DEEPSEEK_DIGITS_PATTERN, DEEPSEEK_MAIN_PATTERN,
};
use crate::pre_tokenizers::{PreTokenizerWrapper, Split};
use crate::tokenizer::normalized::BytesToCharOffsetConverter;
use crate::tokenizer::{Encoding, Model, OffsetType, SplitDelimiterBehavior, Tokenizer};
use crate::utils::byte_level::BYTES_CHAR;
use crate::utils::regex::SysRegex;
use crate::Result;

/// How the direct path cuts the text into pieces.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cutter<'a> {
    /// One `Isolated` regex split: the matches and the gaps between them.
    Regex(&'a SysRegex),
    /// DeepSeek's `Sequence` of three `Isolated` splits (digits, CJK, main regex).
    DeepSeek,
}

impl Cutter<'_> {
    /// Appends the pieces of `text`, as byte ranges in order, to `out`.
    fn pieces(self, text: &str, out: &mut Vec<(usize, usize)>) {
        match self {
            Cutter::Regex(re) => isolated_pieces(text.len(), re.find_iter(text), |s, e| out.push((s, e))),
            Cutter::DeepSeek => deepseek_pieces(text, out),
        }
    }
}

/// The regex of an `Isolated`, non-inverted regex split.
fn isolated_regex(p: &PreTokenizerWrapper) -> Option<&SysRegex> {
    match p {
        PreTokenizerWrapper::Split(s @ Split { behavior: SplitDelimiterBehavior::Isolated, invert: false, .. }) => s.regex(),
        _ => None,
    }
}

/// A ByteLevel that only maps bytes (no regex, no prefix space).
fn maps_only(b: &ByteLevel) -> bool {
    !b.add_prefix_space && !b.use_regex
}

/// How the text is cut, when the tokenizer is of the byte-level BPE family.
pub(crate) fn plan(tok: &Tokenizer) -> Option<Cutter<'_>> {
    let no_normalizer = match &tok.normalizer {
        None => true,
        Some(NormalizerWrapper::Sequence(s)) => s.get_normalizers().is_empty(),
        Some(_) => false,
    };
    if !no_normalizer || !matches!(tok.model, ModelWrapper::BPE(_)) {
        return None;
    }
    match tok.pre_tokenizer.as_ref()? {
        PreTokenizerWrapper::ByteLevel(b) if !b.add_prefix_space && b.use_regex => Some(Cutter::Regex(&GPT2_REGEX)),
        PreTokenizerWrapper::Sequence(seq) => match seq.pretokenizers.as_slice() {
            [split, PreTokenizerWrapper::ByteLevel(b)] if maps_only(b) => isolated_regex(split).map(Cutter::Regex),
            [a, b, c, PreTokenizerWrapper::ByteLevel(bl)] if maps_only(bl) => {
                let patterns = [isolated_regex(a)?, isolated_regex(b)?, isolated_regex(c)?].map(SysRegex::as_str);
                (patterns == [DEEPSEEK_DIGITS_PATTERN, DEEPSEEK_CJK_PATTERN, DEEPSEEK_MAIN_PATTERN]).then_some(Cutter::DeepSeek)
            }
            _ => None,
        },
        _ => None,
    }
}

/// Encodes one sequence on the direct path. `word_idx` overrides the word index (pre-tokenized
/// input), as in the general pipeline.
pub(crate) fn encode(
    tok: &Tokenizer,
    cutter: Cutter<'_>,
    text: &str,
    word_idx: Option<u32>,
    type_id: u32,
    offset_type: OffsetType,
) -> Result<Encoding> {
    let converter = match offset_type {
        OffsetType::Char => Some(BytesToCharOffsetConverter::new(text)),
        OffsetType::Byte => None,
    };
    let convert = |o: (usize, usize)| match &converter {
        Some(c) => c.convert(o).unwrap_or(o),
        None => o,
    };
    let bytes = text.as_bytes();
    // Token strings are left to the vocabulary when they are its strings.
    let bpe = match &tok.model {
        ModelWrapper::BPE(bpe) => Some(bpe).filter(|b| b.tokens_are_vocab_strings()),
        _ => None,
    };
    let mut enc = Encoding::with_capacity(text.len() / 3);
    let mut word: u32 = 0;
    // `origin[k]`: the original byte range of the char that mapped byte `k` of `buf` comes from.
    let mut buf = String::new();
    let mut origin: Vec<(usize, usize)> = Vec::new();
    let mut pieces = Vec::new();
    for (id, (s, e)) in tok.added_vocabulary.split_unnormalized(text) {
        if let Some(id) = id {
            enc.push_token(id, text[s..e].to_owned(), convert((s, e)), Some(word_idx.unwrap_or(word)), type_id);
            word += 1;
            continue;
        }
        pieces.clear();
        cutter.pieces(&text[s..e], &mut pieces);
        for &(ms, me) in &pieces {
            let (ps, pe) = (s + ms, s + me);
            buf.clear();
            origin.clear();
            let mut i = ps;
            while i < pe {
                let len = utf8_len(bytes[i]);
                for b in &bytes[i..i + len] {
                    let c = BYTES_CHAR[*b as usize];
                    buf.push(c);
                    origin.extend(std::iter::repeat_n((i, i + len), c.len_utf8()));
                }
                i += len;
            }
            let original = |(ts, te): (usize, usize)| {
                let offsets = if ts < te && te <= origin.len() {
                    (origin[ts].0, origin[te - 1].1)
                } else {
                    let at = origin.get(ts).map_or(pe, |o| o.0);
                    (at, at)
                };
                convert(offsets)
            };
            let w = Some(word_idx.unwrap_or(word));
            match bpe {
                Some(bpe) => {
                    let mut pos = 0;
                    bpe.tokenize_with(&buf, |id, len| {
                        let start = pos;
                        pos += len as usize;
                        enc.push_vocab_token(id, bpe.reverse_vocab(), original((start, pos)), w, type_id);
                    })?;
                }
                None => {
                    for t in tok.model.tokenize(&buf)? {
                        enc.push_token(t.id, t.value, original(t.offsets), w, type_id);
                    }
                }
            }
            word += 1;
        }
    }
    Ok(enc)
}

#[inline]
fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// The BPE model and the split regex of a tokenizer on the direct path, for id-only encoding.
pub(crate) fn ids_plan(tok: &Tokenizer) -> Option<(&crate::models::bpe::BPE, &SysRegex)> {
    let Cutter::Regex(regex) = plan(tok)? else { return None };
    match &tok.model {
        ModelWrapper::BPE(bpe) => Some((bpe, regex)),
        _ => None,
    }
}

/// Encodes `text` as ordinary text (no added-token split) on the direct path, calling `sink`
/// with the ids of each piece in order: the ids the full pipeline gives for text without
/// added tokens, with no token strings or offsets built.
pub(crate) fn for_each_piece_ids(
    bpe: &crate::models::bpe::BPE,
    regex: &SysRegex,
    text: &str,
    mut sink: impl FnMut(&[u32]),
) -> Result<()> {
    BUFFERS.with(|cell| {
        let mut guard = cell.try_borrow_mut();
        let mut local = (String::new(), Vec::new());
        let (buf, ids) = match guard.as_deref_mut() {
            Ok(b) => b,
            Err(_) => &mut local,
        };
        let bytes = text.as_bytes();
        for (s, e) in regex.find_iter(text) {
            buf.clear();
            buf.extend(bytes[s..e].iter().map(|&b| BYTES_CHAR[b as usize]));
            ids.clear();
            bpe.tokenize_ids(buf, ids)?;
            sink(ids);
        }
        if buf.capacity() > 1 << 16 {
            *buf = String::new();
            *ids = Vec::new();
        }
        Ok(())
    })
}

thread_local! {
    /// The byte-level piece and its ids, reused across calls on this thread.
    static BUFFERS: std::cell::RefCell<(String, Vec<u32>)> = const { std::cell::RefCell::new((String::new(), Vec::new())) };
}
