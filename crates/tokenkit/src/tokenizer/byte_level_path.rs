//! A direct path for the byte-level BPE family (GPT-2, Llama-3, Qwen, tiktoken-style files):
//! no normalizer, a regex split then the byte-level mapping, and BPE. It gives exactly what
//! the general pipeline gives (same pieces, same word indices, same byte offsets) without
//! building a `NormalizedString` per piece.

use crate::models::ModelWrapper;
use crate::pre_tokenizers::byte_level::GPT2_REGEX;
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::tokenizer::normalized::BytesToCharOffsetConverter;
use crate::tokenizer::{Encoding, Model, OffsetType, SplitDelimiterBehavior, Tokenizer};
use crate::utils::byte_level::BYTES_CHAR;
use crate::utils::regex::SysRegex;
use crate::Result;

/// The regex that cuts the text, when the tokenizer is of the byte-level BPE family.
pub(crate) fn plan(tok: &Tokenizer) -> Option<&SysRegex> {
    if tok.normalizer.is_some() || !matches!(tok.model, ModelWrapper::BPE(_)) {
        return None;
    }
    match tok.pre_tokenizer.as_ref()? {
        PreTokenizerWrapper::ByteLevel(b) if !b.add_prefix_space && b.use_regex => Some(&GPT2_REGEX),
        PreTokenizerWrapper::Sequence(seq) => match seq.pretokenizers.as_slice() {
            [PreTokenizerWrapper::Split(split), PreTokenizerWrapper::ByteLevel(b)]
                if split.behavior == SplitDelimiterBehavior::Isolated
                    && !split.invert
                    && !b.add_prefix_space
                    && !b.use_regex =>
            {
                split.regex()
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
    regex: &SysRegex,
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
    let mut enc = Encoding::with_capacity(text.len() / 3);
    let mut word: u32 = 0;
    // `origin[k]`: the original byte range of the char that mapped byte `k` of `buf` comes from.
    let mut buf = String::new();
    let mut origin: Vec<(usize, usize)> = Vec::new();
    for (id, (s, e)) in tok.added_vocabulary.split_unnormalized(text) {
        if let Some(id) = id {
            enc.push_token(id, text[s..e].to_owned(), convert((s, e)), Some(word_idx.unwrap_or(word)), type_id);
            word += 1;
            continue;
        }
        for (ms, me) in regex.find_iter(&text[s..e]) {
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
            for t in tok.model.tokenize(&buf)? {
                let (ts, te) = t.offsets;
                let offsets = if ts < te && te <= origin.len() {
                    (origin[ts].0, origin[te - 1].1)
                } else {
                    let at = origin.get(ts).map_or(pe, |o| o.0);
                    (at, at)
                };
                enc.push_token(t.id, t.value, convert(offsets), Some(word_idx.unwrap_or(word)), type_id);
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
    let regex = plan(tok)?;
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
