//! A direct path for the byte-level BPE family (GPT-2, Llama-3, Qwen, DeepSeek, tiktoken-style
//! files): no normalizer (or an empty sequence, or NFC), a regex split (or DeepSeek's chain of three)
//! then the byte-level mapping, and BPE. It gives exactly what
//! the general pipeline gives (same pieces, same word indices, same byte offsets) without
//! building a `NormalizedString` per piece, nor mapping bytes to chars: the model's
//! [`ByteLevelBpe`] encodes the raw bytes of each piece. With NFC, text already in NFC is
//! taken as is; other text is normalized (with alignments) first, segment by segment as the
//! pipeline does, and the offsets go back through the alignments.

use crate::models::bpe::byte_level::ByteLevelBpe;
use crate::models::bpe::BPE;
use crate::models::ModelWrapper;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::byte_level::{cutter, Cutter};
use crate::tokenizer::normalized::{is_continuation, NormalizedString, OffsetsIn};
use crate::tokenizer::pipeline::Stages;
use crate::tokenizer::{Encoding, OffsetType, PostProcessor, Tokenizer};
use crate::utils::regex::SysRegex;
use crate::Result;
use std::cell::RefCell;

/// How the direct path applies to a tokenizer of the byte-level BPE family.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan<'a> {
    /// How the text is cut into pieces.
    cutter: Cutter<'a>,
    /// The model and its raw-byte encoder.
    bpe: &'a BPE,
    raw: &'a ByteLevelBpe,
    /// The normalizer is NFC (Qwen2 and later).
    nfc: bool,
    /// Some added tokens are matched on the normalized text: with NFC, the path then only
    /// applies to text that NFC leaves as is (the cut by added tokens is done on raw text).
    normalized_added: bool,
}

impl Plan<'_> {
    /// Whether the direct path gives what the general pipeline gives for `text`: always
    /// but with NFC and normalized added tokens; then when `text` is in NFC.
    #[inline]
    fn applies_to(&self, text: &str) -> bool {
        !(self.nfc && self.normalized_added) || is_nfc(text)
    }
}

/// Whether NFC leaves `text` as it is ([`crate::utils::nfc::is_nfc`]: each segment passes the
/// quick check or holds only marks), which then holds for every substring too (a substring's
/// segments are parts of those), so normalizing any segment of it changes nothing.
#[inline]
pub(crate) fn is_nfc(text: &str) -> bool {
    crate::utils::nfc::is_nfc(text)
}

/// The direct path's plan, when the tokenizer is of the byte-level BPE family.
#[inline]
pub(crate) fn plan(stages: &Stages) -> Option<Plan<'_>> {
    let nfc = match &stages.normalizer {
        None => false,
        Some(NormalizerWrapper::Sequence(s)) if s.get_normalizers().is_empty() => false,
        Some(NormalizerWrapper::NFC(_)) => true,
        Some(_) => return None,
    };
    // The raw-byte encoder must apply (otherwise the general pipeline runs), and the token
    // strings must be the vocabulary's (encodings read them from it lazily).
    let ModelWrapper::BPE(bpe) = &stages.model else { return None };
    if !bpe.tokens_are_vocab_strings() {
        return None;
    }
    let raw = bpe.byte_level()?;
    let cutter = cutter(stages.pre_tokenizer.as_ref()?)?;
    Some(Plan { cutter, bpe, raw, nfc, normalized_added: stages.added_vocabulary.has_normalized_tokens() })
}

/// Encodes one sequence on the direct path. `word_idx` overrides the word index (pre-tokenized
/// input), as in the general pipeline. `None` when the text needs the general pipeline
/// ([`Plan::applies_to`]).
pub(crate) fn encode(
    stages: &Stages,
    plan: Plan<'_>,
    text: &str,
    word_idx: Option<u32>,
    type_id: u32,
    offset_type: OffsetType,
) -> Option<Result<Encoding>> {
    if !plan.applies_to(text) {
        return None;
    }
    thread_local! {
        /// The pieces and the tokens of the text being encoded, kept between calls (most
        /// texts are short): tokens go here first, so the encoding's buffers are each made
        /// once, at their final size, rather than grown token by token.
        static SCRATCH: RefCell<(Pieces, Vec<Token>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    }
    Some(SCRATCH.with_borrow_mut(|(pieces, tokens)| {
        tokens.clear();
        reserve_for_long_text(tokens, text);
        let mut explicit = Vec::new();
        let mut word: u32 = 0;
        // The first error (a regex that gives up on the text) ends the encoding.
        let mut failed = Ok(());
        stages.added_vocabulary.for_each_unnormalized_split(text, |id, (s, e)| {
            if failed.is_err() {
                return;
            }
            if let Some(id) = id {
                explicit.push((tokens.len(), text[s..e].to_owned()));
                tokens.push(Token { id, word, offsets: (s, e) });
                word += 1;
                return;
            }
            let segment = &text[s..e];
            if plan.nfc && !is_nfc(segment) {
                // The pipeline normalizes each segment between added tokens on its own. All the
                // bytes of a normalized char share its alignment, so a token covers the original
                // span from its first byte's char to its last byte's char.
                let mut n = NormalizedString::from(segment);
                n.nfc();
                let align = n.alignments();
                failed = encode_pieces(plan, n.get(), pieces, &mut word, |id, (ts, te), word| {
                    tokens.push(Token { id, word, offsets: (s + align[ts].0, s + align[te - 1].1) });
                });
                return;
            }
            let bytes = segment.as_bytes();
            // A token that cuts a char covers all of it, as the mapped char's offsets do.
            failed = encode_pieces(plan, segment, pieces, &mut word, |id, (ts, te), word| {
                tokens.push(Token { id, word, offsets: (s + char_start(bytes, ts), s + char_end(bytes, te)) });
            });
        });
        failed?;
        // Each field with room for the special tokens the post-processor adds, so that it
        // can add them in place.
        let room = tokens.len() + stages.post_processor.as_ref().map_or(0, |p| p.added_tokens(false));
        let offsets_in = OffsetsIn::new(text, offset_type);
        let offsets = with_room(room, tokens.iter().map(|t| offsets_in.convert(t.offsets)));
        let enc = Encoding::from_vocab_tokens(
            with_room(room, tokens.iter().map(|t| t.id)),
            offsets,
            with_room(room, tokens.iter().map(|t| Some(word_idx.unwrap_or(t.word)))),
            type_id,
            plan.bpe.reverse_vocab(),
            explicit,
        );
        if tokens.len() >= KEEP_BELOW || pieces.len() >= KEEP_BELOW {
            *tokens = Vec::new();
            *pieces = Vec::new();
        }
        Ok(enc)
    }))
}

/// Above this many tokens (or pieces) the scratch buffers of [`encode`] are not kept for the
/// next call.
const KEEP_BELOW: usize = 1 << 16;

/// Reserves room for a token or piece per byte of a text long enough to exceed the kept
/// buffers: grown by doubling, a long text's buffer was copied at each step (400 KB of
/// one-byte tokens: 30 instructions per token). The pages past what the text fills are never
/// touched; when the reservation fails the buffer grows as it goes.
/// `buffer` is empty: a new one is made rather than the kept one grown, which would copy the
/// stale contents of its whole capacity.
#[inline]
fn reserve_for_long_text<T>(buffer: &mut Vec<T>, text: &str) {
    debug_assert!(buffer.is_empty());
    // At most a million entries: beyond that the buffer doubles as it goes, so a huge text
    // does not take address space for a token per byte up front (a process under an
    // address-space limit then fails its next allocation).
    let want = text.len().min(1 << 20);
    if text.len() >= KEEP_BELOW && buffer.capacity() < want {
        let mut fresh = Vec::new();
        if fresh.try_reserve(want).is_ok() {
            *buffer = fresh;
        }
    }
}

/// `items` in a vector with room for `room` of them.
#[inline]
fn with_room<T>(room: usize, items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::with_capacity(room);
    v.extend(items);
    v
}

/// Byte ranges of pieces of a text, in order.
type Pieces = Vec<(usize, usize)>;

/// A token of the direct path, before it goes into the encoding.
#[derive(Clone, Copy)]
struct Token {
    id: u32,
    /// Index of its piece (the word id, unless the caller gives one).
    word: u32,
    /// Byte offsets in the text.
    offsets: (usize, usize),
}

/// Cuts `text` into pieces and encodes each, calling `token(id, byte range in text, word)`
/// for every token in order; `word` counts the pieces.
#[inline]
fn encode_pieces(
    plan: Plan<'_>,
    text: &str,
    pieces: &mut Pieces,
    word: &mut u32,
    mut token: impl FnMut(u32, (usize, usize), u32),
) -> Result<()> {
    let bytes = text.as_bytes();
    // All the pieces first, then all the BPE: two tight loops run faster than one that
    // alternates between them.
    pieces.clear();
    reserve_for_long_text(pieces, text);
    plan.cutter.for_each_piece(text, |s, e| pieces.push((s, e)))?;
    for &(ms, me) in pieces.iter() {
        let mut pos = ms;
        plan.raw.for_each_token(&bytes[ms..me], |id, len| {
            let end = pos + len as usize;
            token(id, (pos, end), *word);
            pos = end;
        });
        *word += 1;
    }
    Ok(())
}

/// The start of the char that byte `i` of `bytes` is in.
#[inline]
fn char_start(bytes: &[u8], mut i: usize) -> usize {
    while i > 0 && i < bytes.len() && is_continuation(bytes[i]) {
        i -= 1;
    }
    i
}

/// The end of the char that byte `end - 1` of `bytes` is in.
#[inline]
fn char_end(bytes: &[u8], mut end: usize) -> usize {
    while end < bytes.len() && is_continuation(bytes[end]) {
        end += 1;
    }
    end
}

/// The BPE model, its raw-byte encoder and the split regex of a tokenizer on the direct
/// path, for id-only encoding, and whether its normalizer is NFC (which the caller applies to
/// the whole text first).
pub(crate) fn ids_plan(tok: &Tokenizer) -> Option<(&BPE, &ByteLevelBpe, &SysRegex, bool)> {
    let Plan { cutter: Cutter::Regex(regex), bpe, raw, nfc, .. } = plan(&tok.pipeline)? else { return None };
    Some((bpe, raw, regex, nfc))
}

/// Encodes `text` as ordinary text (no added-token split) on the direct path, calling
/// `sink(id, starts_piece)` for each id in order (`starts_piece`: the first id of a regex
/// piece): the ids the full pipeline gives for text without added tokens, with no token
/// strings or offsets built.
#[inline]
pub(crate) fn for_each_piece_ids(raw: &ByteLevelBpe, regex: &SysRegex, text: &str, mut sink: impl FnMut(u32, bool)) -> Result<()> {
    let bytes = text.as_bytes();
    regex.try_for_each_match(text, |s, e| {
        let mut first = true;
        raw.for_each_token(&bytes[s..e], |id, _| {
            sink(id, first);
            first = false;
        });
    })
}

/// [`for_each_piece_ids`] appending the ids to `out`: each piece's tokens go in with no call
/// per token (see [`ByteLevelBpe::extend_tokens`]).
#[inline]
pub(crate) fn extend_piece_ids(raw: &ByteLevelBpe, regex: &SysRegex, text: &str, out: &mut Vec<u32>) -> Result<()> {
    let bytes = text.as_bytes();
    regex.try_for_each_match(text, |s, e| raw.extend_tokens(&bytes[s..e], out))
}
