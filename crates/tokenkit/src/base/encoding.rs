//! `Encoding`: the output of the tokenizer for one input (a sequence or a pair).

use std::borrow::Cow;
use std::collections::TryReserveError;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::column::Column;
use super::sequence_ranges::SequenceRanges;
use super::token_strings::TokenStrings;
use crate::base::vocab::ReverseVocab;
use crate::Offsets;

/// Which side to truncate from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TruncationDirection {
    Left,
    #[default]
    Right,
}

/// Which side to pad on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PaddingDirection {
    Left,
    #[default]
    Right,
}

/// The tokens of one input with everything a model needs alongside them.
///
/// `offsets` are in the unit the encode call asked for: bytes of the original input for
/// [`Tokenizer::encode`](crate::Tokenizer::encode), chars for
/// [`Tokenizer::encode_char_offsets`](crate::Tokenizer::encode_char_offsets).
#[derive(Debug, Clone, Default)]
pub struct Encoding {
    pub(crate) ids: Vec<u32>,
    pub(crate) type_ids: Column,
    /// Built on the first read (see [`TokenStrings`]).
    pub(crate) tokens: TokenStrings,
    pub(crate) words: Vec<Option<u32>>,
    pub(crate) offsets: Vec<Offsets>,
    pub(crate) special_tokens_mask: Column,
    pub(crate) attention_mask: Column,
    pub(crate) overflowing: Vec<Encoding>,
    /// Token range of each sequence (0: first, 1: pair), when set by a post-processor.
    pub(crate) sequence_ranges: SequenceRanges,
}

impl Encoding {
    /// An empty encoding with room for `n` tokens.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            ids: Vec::with_capacity(n),
            type_ids: Column::default(),
            tokens: TokenStrings::default(),
            words: Vec::with_capacity(n),
            offsets: Vec::with_capacity(n),
            special_tokens_mask: Column::default(),
            attention_mask: Column::default(),
            overflowing: Vec::new(),
            sequence_ranges: SequenceRanges::default(),
        }
    }

    /// An encoding of ordinary tokens (non-special, attended, all of type `type_id`) from
    /// their ids, offsets and words. The string of each is its string in `vocab` (the model's
    /// id → token table) but for the `(position, string)` entries of `explicit`, in
    /// increasing position. The per-token masks and type ids start as runs (see [`Column`]),
    /// which take a post-processor's special tokens without a buffer.
    pub(crate) fn from_vocab_tokens(
        ids: Vec<u32>,
        offsets: Vec<Offsets>,
        words: Vec<Option<u32>>,
        type_id: u32,
        vocab: &Arc<ReverseVocab>,
        explicit: Vec<(usize, String)>,
    ) -> Self {
        let n = ids.len();
        Self {
            tokens: TokenStrings::with_vocab(vocab, explicit, &ids),
            type_ids: Column::same(type_id, n),
            special_tokens_mask: Column::same(0, n),
            attention_mask: Column::same(1, n),
            ids,
            offsets,
            words,
            overflowing: Vec::new(),
            sequence_ranges: SequenceRanges::default(),
        }
    }

    /// Builds an encoding from all its fields.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ids: Vec<u32>,
        type_ids: Vec<u32>,
        tokens: Vec<String>,
        words: Vec<Option<u32>>,
        offsets: Vec<Offsets>,
        special_tokens_mask: Vec<u32>,
        attention_mask: Vec<u32>,
        overflowing: Vec<Encoding>,
        sequence_ranges: impl IntoIterator<Item = (usize, Range<usize>)>,
    ) -> Self {
        let tokens = tokens.into();
        let sequence_ranges = sequence_ranges.into_iter().collect();
        let (type_ids, special_tokens_mask, attention_mask) = (type_ids.into(), special_tokens_mask.into(), attention_mask.into());
        Self { ids, type_ids, tokens, words, offsets, special_tokens_mask, attention_mask, overflowing, sequence_ranges }
    }

    /// Appends one ordinary (non-special, attended) token.
    pub fn push_token(&mut self, id: u32, token: String, offsets: Offsets, word: Option<u32>, type_id: u32) {
        self.tokens.push(self.ids.len(), id, Cow::Owned(token));
        self.push_fields(id, offsets, word, type_id);
    }

    /// [`push_token`](Self::push_token) for a token whose string is its string in `vocab`
    /// (the model's id → token table): the string is only looked up if the tokens are read.
    #[inline]
    pub(crate) fn push_vocab_token(&mut self, id: u32, vocab: &Arc<ReverseVocab>, offsets: Offsets, word: Option<u32>, type_id: u32) {
        self.tokens.push_vocab(self.ids.len(), id, vocab);
        self.push_fields(id, offsets, word, type_id);
    }

    /// Appends a special token (added around the sequences, attended, no word).
    pub(crate) fn push_special(&mut self, id: u32, token: &str, type_id: u32) {
        self.tokens.push(self.ids.len(), id, Cow::Borrowed(token));
        self.ids.push(id);
        self.type_ids.push(type_id);
        self.words.push(None);
        self.offsets.push((0, 0));
        self.special_tokens_mask.push(1);
        self.attention_mask.push(1);
    }

    /// Puts a special token (attended, no word) in front of the others, shifting the
    /// sequence ranges.
    pub(crate) fn prepend_special(&mut self, id: u32, token: &str, type_id: u32) {
        self.tokens.prepend(id, Cow::Borrowed(token));
        self.ids.insert(0, id);
        self.type_ids.prepend_same(type_id, 1);
        self.words.insert(0, None);
        self.offsets.insert(0, (0, 0));
        self.special_tokens_mask.prepend_same(1, 1);
        self.attention_mask.prepend_same(1, 1);
        self.sequence_ranges.shift(1);
    }

    /// Appends `seq` as sequence `sequence_id`, every token of type `type_id`: what a template
    /// does with `$A` or `$B`.
    pub(crate) fn append_sequence(&mut self, mut seq: Encoding, sequence_id: usize, type_id: u32) {
        seq.set_as_sequence(sequence_id, type_id);
        self.merge_with(seq, false);
    }

    /// Makes this encoding sequence `sequence_id`, every token of type `type_id`.
    pub(crate) fn set_as_sequence(&mut self, sequence_id: usize, type_id: u32) {
        let n = self.len();
        self.type_ids = Column::same(type_id, n);
        self.set_sequence_id(sequence_id);
    }

    /// Appends every field of an ordinary token but its string.
    #[inline]
    fn push_fields(&mut self, id: u32, offsets: Offsets, word: Option<u32>, type_id: u32) {
        self.ids.push(id);
        self.offsets.push(offsets);
        self.type_ids.push(type_id);
        self.words.push(word);
        self.special_tokens_mask.push(0);
        self.attention_mask.push(1);
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Token ids.
    pub fn get_ids(&self) -> &[u32] {
        &self.ids
    }
    /// Type (segment) ids.
    pub fn get_type_ids(&self) -> &[u32] {
        &self.type_ids
    }
    /// Token strings.
    pub fn get_tokens(&self) -> &[String] {
        self.tokens.get(&self.ids)
    }
    /// Token strings, without building the vector [`get_tokens`](Self::get_tokens) returns.
    pub fn iter_tokens(&self) -> impl Iterator<Item = &str> + '_ {
        self.tokens.iter(&self.ids)
    }
    /// Word index of each token inside its sequence (`None` for special and pad tokens).
    pub fn get_word_ids(&self) -> &[Option<u32>] {
        &self.words
    }
    /// Offsets of each token into its input, in the unit of the encode call.
    pub fn get_offsets(&self) -> &[Offsets] {
        &self.offsets
    }
    /// 1 for special (added by the post-processor, or padding) tokens.
    pub fn get_special_tokens_mask(&self) -> &[u32] {
        &self.special_tokens_mask
    }
    /// 0 for padding, 1 otherwise.
    pub fn get_attention_mask(&self) -> &[u32] {
        &self.attention_mask
    }
    /// The parts cut off by truncation, each a full encoding.
    pub fn get_overflowing(&self) -> &[Encoding] {
        &self.overflowing
    }
    /// Mutable access to the overflowing parts.
    pub fn get_overflowing_mut(&mut self) -> &mut Vec<Encoding> {
        &mut self.overflowing
    }
    /// Takes the overflowing parts out.
    pub fn take_overflowing(&mut self) -> Vec<Encoding> {
        std::mem::take(&mut self.overflowing)
    }
    /// Replaces the type ids.
    pub fn set_type_ids(&mut self, type_ids: Vec<u32>) {
        self.type_ids = type_ids.into();
    }
    /// Replaces the offsets.
    pub fn set_offsets(&mut self, offsets: Vec<Offsets>) {
        self.offsets = offsets;
    }
    /// Mutable access to the offsets.
    pub fn offsets_mut(&mut self) -> &mut Vec<Offsets> {
        &mut self.offsets
    }
    /// Replaces the ids (same length expected); the token strings stay as they were.
    pub fn set_ids(&mut self, ids: Vec<u32>) {
        if matches!(self.tokens, TokenStrings::Vocab { .. }) {
            self.tokens = std::mem::take(&mut self.tokens).into_vec(&self.ids).into();
        }
        self.ids = ids;
    }
    /// Replaces the tokens (same length expected).
    pub fn set_tokens(&mut self, tokens: Vec<String>) {
        self.tokens = tokens.into();
    }
    /// Replaces the word ids.
    pub fn set_word_ids(&mut self, words: Vec<Option<u32>>) {
        self.words = words;
    }
    /// Replaces the special tokens mask.
    pub fn set_special_tokens_mask(&mut self, mask: Vec<u32>) {
        self.special_tokens_mask = mask.into();
    }
    /// Replaces the attention mask.
    pub fn set_attention_mask(&mut self, mask: Vec<u32>) {
        self.attention_mask = mask.into();
    }
    /// Replaces the overflowing parts.
    pub fn set_overflowing(&mut self, overflowing: Vec<Encoding>) {
        self.overflowing = overflowing;
    }
    /// The raw sequence ranges.
    pub fn sequence_ranges(&self) -> &SequenceRanges {
        &self.sequence_ranges
    }
    /// Replaces the sequence ranges.
    pub fn set_sequence_ranges(&mut self, ranges: impl IntoIterator<Item = (usize, Range<usize>)>) {
        self.sequence_ranges = ranges.into_iter().collect();
    }

    /// Number of sequences (1 or 2) in this encoding.
    pub fn n_sequences(&self) -> usize {
        if self.sequence_ranges.is_empty() {
            1
        } else {
            self.sequence_ranges.len()
        }
    }

    /// Marks every token as belonging to sequence `sequence_id`.
    pub fn set_sequence_id(&mut self, sequence_id: usize) {
        self.sequence_ranges.insert(sequence_id, 0..self.len());
    }

    /// Token range of sequence `sequence_id`.
    pub fn sequence_range(&self, sequence_id: usize) -> Range<usize> {
        self.sequence_ranges.get(sequence_id).cloned().unwrap_or(0..self.len())
    }

    /// Sequence index of each token (`None` for special tokens added around sequences).
    pub fn get_sequence_ids(&self) -> Vec<Option<usize>> {
        let mut out = vec![None; self.len()];
        for seq in 0..self.n_sequences() {
            let r = self.sequence_range(seq);
            let end = r.end.min(out.len());
            for slot in out.iter_mut().take(end).skip(r.start) {
                *slot = Some(seq);
            }
        }
        out
    }

    /// The sequence a token belongs to.
    pub fn token_to_sequence(&self, token: usize) -> Option<usize> {
        if token > self.len() {
            None
        } else if self.sequence_ranges.is_empty() {
            Some(0)
        } else {
            // When ranges overlap (an encoding that already had sequence ids was post-processed
            // again), HF answers in hash order, so at random. The last sequence covering the
            // token wins here, as it does in `get_sequence_ids`.
            self.sequence_ranges.iter().filter(|(_, r)| r.contains(&token)).map(|(s, _)| s).max()
        }
    }

    /// Tokens `[start, end)` of word `word` in sequence `sequence_id`.
    pub fn word_to_tokens(&self, word: u32, sequence_id: usize) -> Option<(usize, usize)> {
        let (mut start, mut end) = (None, None);
        let r = self.sequence_range(sequence_id);
        for (i, w) in self.words.get(r.clone())?.iter().enumerate() {
            let i = i + r.start;
            if *w == Some(word) {
                if start.is_none() || Some(i) < start {
                    start = Some(i);
                }
                if end.is_none() || Some(i) >= end {
                    end = Some(i + 1);
                }
            }
        }
        Some((start?, end?))
    }

    /// Offsets covered by word `word` in sequence `sequence_id`.
    pub fn word_to_chars(&self, word: u32, sequence_id: usize) -> Option<Offsets> {
        let (s, e) = self.word_to_tokens(word, sequence_id)?;
        if e == 0 {
            return None;
        }
        Some((self.offsets[s].0, self.offsets[e - 1].1))
    }

    /// `(sequence, offsets)` of a token.
    pub fn token_to_chars(&self, token: usize) -> Option<(usize, Offsets)> {
        Some((self.token_to_sequence(token)?, *self.offsets.get(token)?))
    }

    /// `(sequence, word)` of a token.
    pub fn token_to_word(&self, token: usize) -> Option<(usize, u32)> {
        Some((self.token_to_sequence(token)?, (*self.words.get(token)?)?))
    }

    /// The token containing position `pos` of sequence `sequence_id`.
    pub fn char_to_token(&self, pos: usize, sequence_id: usize) -> Option<usize> {
        let r = self.sequence_range(sequence_id);
        self.offsets.get(r.clone())?.iter().position(|&(s, e)| pos >= s && pos < e).map(|i| i + r.start)
    }

    /// The word containing position `pos` of sequence `sequence_id`.
    pub fn char_to_word(&self, pos: usize, sequence_id: usize) -> Option<u32> {
        Some(self.token_to_word(self.char_to_token(pos, sequence_id)?)?.1)
    }

    /// Tokens `start..stop` of every field but `tokens` (left empty for the caller to fill).
    fn slice_part(&self, start: usize, stop: usize) -> Encoding {
        Encoding {
            ids: self.ids[start..stop].to_vec(),
            type_ids: self.type_ids.slice(start..stop),
            tokens: TokenStrings::default(),
            words: self.words[start..stop].to_vec(),
            offsets: self.offsets[start..stop].to_vec(),
            special_tokens_mask: self.special_tokens_mask.slice(start..stop),
            attention_mask: self.attention_mask.slice(start..stop),
            overflowing: Vec::new(),
            sequence_ranges: SequenceRanges::default(),
        }
    }

    /// Truncates to `max_len` tokens; what is cut goes to `overflowing`, in windows that
    /// overlap by `stride` tokens. An error when `stride >= max_len` (where HF panics).
    pub fn truncate(&mut self, max_len: usize, stride: usize, direction: TruncationDirection) -> crate::Result<()> {
        let len = self.ids.len();
        if max_len >= len {
            return Ok(());
        }
        if max_len == 0 {
            let whole = std::mem::replace(self, Encoding::with_capacity(0));
            self.overflowing.push(whole);
            return Ok(());
        }
        if stride >= max_len {
            return Err(crate::Error::invalid(format!(
                "truncation stride ({stride}) must be strictly less than the length to truncate to ({max_len}; \
                 the max length minus the special tokens, split between the sequences of a pair)"
            )));
        }
        self.sequence_ranges.clear();
        let step = max_len - stride;
        let mut parts = Vec::new();
        match direction {
            TruncationDirection::Right => {
                let mut start = 0;
                loop {
                    let stop = (start + max_len).min(len);
                    parts.push((start, stop));
                    if stop == len {
                        break;
                    }
                    start += step;
                }
            }
            TruncationDirection::Left => {
                // Windows end at len, len - step, ...; stop when one reaches the start.
                let mut stop_m1 = len - 1;
                loop {
                    let stop = stop_m1 + 1;
                    let start = stop.saturating_sub(max_len);
                    parts.push((start, stop));
                    if start == 0 || stop_m1 < step {
                        break;
                    }
                    stop_m1 -= step;
                }
            }
        }
        // Windows overlap only their neighbours: a token string is cloned while the next window
        // still needs it, and moved out by the last window holding it.
        let mut tokens = std::mem::take(&mut self.tokens);
        let mut built = Vec::with_capacity(parts.len());
        for (k, &(start, stop)) in parts.iter().enumerate() {
            let mut part = self.slice_part(start, stop);
            let next = parts.get(k + 1).map_or(0..0, |&(s, e)| s..e);
            part.tokens = tokens.window(start..stop, &next);
            built.push(part);
        }
        let mut built = built.into_iter();
        let Some(mut first) = built.next() else {
            return Ok(());
        };
        first.overflowing = built.collect();
        *self = first;
        Ok(())
    }

    /// Concatenates encodings (`growing_offsets`: shift each one's offsets after the previous).
    pub fn merge<I: IntoIterator<Item = Encoding>>(encodings: I, growing_offsets: bool) -> Self {
        // Merging the first encoding into an empty one gives it back unchanged (its overflowing
        // parts included): start from it instead of cloning every overflowing part.
        let mut encodings = encodings.into_iter();
        let Some(mut out) = encodings.next() else {
            return Encoding::default();
        };
        for e in encodings {
            out.merge_with(e, growing_offsets);
        }
        out
    }

    /// Appends `pair` to `self`; overflowing parts are combined pairwise as HF does.
    pub fn merge_with(&mut self, pair: Encoding, growing_offsets: bool) {
        let mut overflowings = Vec::new();
        for self_o in &self.overflowing {
            let mut n = self_o.clone();
            n.merge_with(pair.clone(), growing_offsets);
            overflowings.push(n);
            for other_o in &pair.overflowing {
                let mut n = self_o.clone();
                n.merge_with(other_o.clone(), growing_offsets);
                overflowings.push(n);
            }
        }
        for other_o in &pair.overflowing {
            let mut n = self.clone();
            n.merge_with(other_o.clone(), growing_offsets);
            overflowings.push(n);
        }
        let base = self.len();
        self.sequence_ranges.extend_shifted(pair.sequence_ranges, base);
        self.tokens.append(base, pair.tokens, &pair.ids);
        self.ids.extend(pair.ids);
        self.type_ids.append(pair.type_ids);
        self.words.extend(pair.words);
        let shift = if growing_offsets { self.offsets.last().map_or(0, |o| o.1) } else { 0 };
        self.offsets.extend(pair.offsets.into_iter().map(|(s, e)| (s + shift, e + shift)));
        self.special_tokens_mask.append(pair.special_tokens_mask);
        self.attention_mask.append(pair.attention_mask);
        self.overflowing = overflowings;
    }

    /// Pads to `target_length` tokens (the overflowing parts too). An error, not an abort, when
    /// the padded encoding does not fit in memory.
    pub fn pad(
        &mut self,
        target_length: usize,
        pad_id: u32,
        pad_type_id: u32,
        pad_token: &str,
        direction: PaddingDirection,
    ) -> crate::Result<()> {
        for o in &mut self.overflowing {
            o.pad(target_length, pad_id, pad_type_id, pad_token, direction)?;
        }
        if self.ids.len() >= target_length {
            return Ok(());
        }
        let n = target_length - self.ids.len();
        // The length comes from settings or input (a tokenizer.json's Fixed(1e9)): make room
        // for all of it fallibly first, so that what follows cannot fail to allocate.
        self.try_reserve_padding(n, pad_id, pad_type_id, pad_token).map_err(|e| {
            crate::Error::invalid(format!("padding to {target_length} tokens: cannot allocate memory for {n} more tokens ({e})"))
        })?;
        self.tokens.pad(self.ids.len(), n, pad_id, pad_token, direction == PaddingDirection::Left);
        match direction {
            PaddingDirection::Left => {
                fn prepend<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
                    v.splice(0..0, std::iter::repeat_n(x, n));
                }
                prepend(&mut self.ids, n, pad_id);
                self.type_ids.prepend_same(pad_type_id, n);
                prepend(&mut self.words, n, None);
                self.attention_mask.prepend_same(0, n);
                self.special_tokens_mask.prepend_same(1, n);
                prepend(&mut self.offsets, n, (0, 0));
                self.sequence_ranges.shift(n);
            }
            PaddingDirection::Right => {
                self.ids.extend(std::iter::repeat_n(pad_id, n));
                self.type_ids.push_same(pad_type_id, n);
                self.words.extend(std::iter::repeat_n(None, n));
                self.attention_mask.push_same(0, n);
                self.special_tokens_mask.push_same(1, n);
                self.offsets.extend(std::iter::repeat_n((0, 0), n));
            }
        }
        Ok(())
    }

    /// Makes room for `n` padding tokens in every field, or fails without aborting.
    fn try_reserve_padding(&mut self, n: usize, pad_id: u32, pad_type_id: u32, pad_token: &str) -> Result<(), TryReserveError> {
        self.offsets.try_reserve(n)?;
        self.words.try_reserve(n)?;
        self.ids.try_reserve(n)?;
        self.tokens.try_reserve_padding(n, pad_id, pad_token)?;
        self.type_ids.try_reserve_same(pad_type_id, n)?;
        self.attention_mask.try_reserve_same(0, n)?;
        self.special_tokens_mask.try_reserve_same(1, n)
    }

    /// Pads many encodings in parallel.
    pub(crate) fn pad_all(
        encodings: &mut [Encoding],
        target: usize,
        pad_id: u32,
        pad_type_id: u32,
        pad_token: &str,
        direction: PaddingDirection,
    ) -> crate::Result<()> {
        encodings.par_iter_mut().try_for_each(|e| e.pad(target, pad_id, pad_type_id, pad_token, direction))
    }
}

impl PartialEq for Encoding {
    fn eq(&self, o: &Self) -> bool {
        self.ids == o.ids
            && self.type_ids == o.type_ids
            && self.iter_tokens().eq(o.iter_tokens())
            && self.words == o.words
            && self.offsets == o.offsets
            && self.special_tokens_mask == o.special_tokens_mask
            && self.attention_mask == o.attention_mask
            && self.overflowing == o.overflowing
            && self.sequence_ranges == o.sequence_ranges
    }
}

impl FromIterator<Encoding> for Encoding {
    fn from_iter<I: IntoIterator<Item = Encoding>>(iter: I) -> Self {
        Self::merge(iter, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(n: u32) -> Encoding {
        let mut e = Encoding::default();
        for i in 0..n {
            e.push_token(i, format!("t{i}"), (i as usize, i as usize + 1), Some(i), 0);
        }
        e
    }

    #[test]
    fn truncate_right_with_stride_makes_overlapping_windows() {
        let mut e = enc(5);
        e.truncate(4, 2, TruncationDirection::Right).unwrap();
        assert_eq!(e.ids, [0, 1, 2, 3]);
        assert_eq!(e.overflowing.len(), 1);
        assert_eq!(e.overflowing[0].ids, [2, 3, 4]);
    }

    #[test]
    fn truncate_left_keeps_the_end() {
        let mut e = enc(5);
        e.truncate(2, 0, TruncationDirection::Left).unwrap();
        assert_eq!(e.ids, [3, 4]);
        let over: Vec<_> = e.overflowing.iter().map(|o| o.ids.clone()).collect();
        assert_eq!(over, vec![vec![1, 2], vec![0]]);
    }

    /// An encoding of `n` tokens whose strings come from a vocabulary (`v0`, `v1`, ...),
    /// but for token 1, and the same with every string given.
    fn lazy_and_owned(n: u32) -> (Encoding, Encoding, Arc<ReverseVocab>) {
        let map = (0..10).map(|i| (format!("v{i}"), i)).collect();
        let vocab = Arc::new(ReverseVocab::new(&map));
        let (mut lazy, mut owned) = (Encoding::default(), Encoding::default());
        for i in 0..n {
            let o = (i as usize, i as usize + 1);
            if i == 1 {
                lazy.push_token(i, "x".into(), o, Some(i), 0);
                owned.push_token(i, "x".into(), o, Some(i), 0);
            } else {
                lazy.push_vocab_token(i, &vocab, o, Some(i), 0);
                owned.push_token(i, format!("v{i}"), o, Some(i), 0);
            }
        }
        assert!(matches!(lazy.tokens, TokenStrings::Vocab { .. }));
        (lazy, owned, vocab)
    }

    #[test]
    fn lazy_tokens_behave_like_owned_ones() {
        let (lazy, owned, vocab) = lazy_and_owned(6);
        assert_eq!(lazy.get_tokens(), ["v0", "x", "v2", "v3", "v4", "v5"]);
        assert_eq!(lazy, owned);
        let check = |f: &dyn Fn(&mut Encoding)| {
            let (mut a, mut b) = (lazy.clone(), owned.clone());
            f(&mut a);
            f(&mut b);
            assert_eq!(a.get_tokens(), b.get_tokens());
            for (x, y) in a.overflowing.iter().zip(&b.overflowing) {
                assert_eq!(x.get_tokens(), y.get_tokens());
            }
            assert_eq!(a, b);
        };
        check(&|e| e.truncate(3, 1, TruncationDirection::Right).unwrap());
        check(&|e| e.truncate(4, 2, TruncationDirection::Left).unwrap());
        check(&|e| e.pad(9, 7, 0, "[PAD]", PaddingDirection::Left).unwrap());
        check(&|e| e.pad(9, 7, 0, "v7", PaddingDirection::Right).unwrap());
        check(&|e| e.merge_with(enc(2), true));
        check(&|e| {
            let mut first = enc(2);
            first.merge_with(std::mem::take(e), false);
            *e = first;
        });
        check(&|e| e.merge_with(lazy_and_owned(3).0, false));
        check(&|e| {
            let mut other = Encoding::default();
            other.push_vocab_token(3, &vocab, (0, 1), None, 0);
            e.merge_with(other, false);
        });
        check(&|e| e.set_ids(vec![9; 6]));
        let mut e = lazy.clone();
        e.get_tokens();
        e.push_vocab_token(8, &vocab, (6, 7), None, 0);
        assert_eq!(e.get_tokens().last().map(String::as_str), Some("v8"));
    }

    #[test]
    fn pad_left_shifts_sequence_ranges() {
        let mut e = enc(2);
        e.set_sequence_id(0);
        e.pad(4, 9, 0, "[PAD]", PaddingDirection::Left).unwrap();
        assert_eq!(e.ids, [9, 9, 0, 1]);
        assert_eq!(e.get_sequence_ids(), [None, None, Some(0), Some(0)]);
    }
}
