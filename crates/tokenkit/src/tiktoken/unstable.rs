//! tiktoken's encoders for incomplete text: `encode_with_unstable` (the stable tokens of a
//! prefix and every token sequence a continuation could start with), `encode_single_piece`
//! (BPE on bytes without the regex split) and `encode_bytes` (bytes that may end inside a
//! UTF-8 sequence). Same results as tiktoken 0.14; completions are returned sorted, where
//! tiktoken returns them in hash order.

use std::collections::BTreeSet;

use super::{At, Encoding, SpecialTokens};
use crate::formats::tiktoken::byte_level_string;
use crate::Result;

impl Encoding {
    /// tiktoken's `encode_with_unstable`: the tokens of `text` up to its last regex piece
    /// (widened over trailing whitespace tokens), and the distinct token sequences that
    /// encoding `text` plus some continuation could give for the rest, sorted. Special tokens
    /// follow [`Encoding::encode`]'s rules; text ending in an allowed special token has no
    /// unstable part.
    pub fn encode_with_unstable(
        &self,
        text: &str,
        allowed: &SpecialTokens,
        disallowed: &SpecialTokens,
    ) -> Result<(Vec<u32>, Vec<Vec<u32>>)> {
        let text = &*self.normalized(text);
        let allowed_mask = self.resolve(text, allowed, disallowed)?;
        let mut tokens = Vec::with_capacity(text.len() / 4 + 1);
        let mut last_piece = 0;
        self.encode_segments(text, &allowed_mask, |id, at| {
            tokens.push(id);
            last_piece = match at {
                At::Special => 0,
                At::PieceStart => 1,
                At::InPiece => last_piece + 1,
            };
        })?;
        if last_piece == 0 {
            return Ok((tokens, Vec::new()));
        }
        let unstable_len = self.widen_over_whitespace(&tokens, last_piece);
        let unstable = self.decode_bytes(&tokens[tokens.len() - unstable_len..])?;
        tokens.truncate(tokens.len() - unstable_len);
        if unstable.is_empty() {
            return Ok((tokens, Vec::new()));
        }

        let mut completions: BTreeSet<Vec<u32>> = BTreeSet::new();
        // Single tokens that start with the unstable bytes.
        for &id in self.ranks_starting_with(&unstable) {
            completions.insert(vec![id]);
        }
        // A token straddling the end: the unstable bytes cut at `i`, then any token starting
        // with the rest; re-encoded and cut once the unstable bytes are covered.
        let mut possibility = Vec::new();
        for i in 1..unstable.len() {
            let (prefix, suffix) = unstable.split_at(i);
            for &id in self.ranks_starting_with(suffix) {
                possibility.clear();
                possibility.extend_from_slice(prefix);
                possibility.extend_from_slice(self.rank_bytes(id));
                let encoded = match std::str::from_utf8(&possibility) {
                    Ok(s) => self.encode_ordinary(s)?,
                    Err(_) => self.byte_pair_encode(&possibility)?,
                };
                let mut seq = Vec::new();
                let mut covered = 0;
                for t in encoded {
                    seq.push(t);
                    covered += self.rank_bytes(t).len();
                    if covered >= unstable.len() {
                        break;
                    }
                }
                completions.insert(seq);
            }
        }
        // A continuation can split a trailing whitespace char off (`\s+(?!\S)`).
        if unstable.len() > 1 {
            if let Some((c, width)) = last_char(&unstable) {
                if unstable.len() > width && c.is_whitespace() {
                    let cut = unstable.len() - width;
                    let mut seq = self.byte_pair_encode(&unstable[..cut])?;
                    seq.extend(self.byte_pair_encode(&unstable[cut..])?);
                    completions.insert(seq);
                }
            }
        }
        Ok((tokens, completions.into_iter().collect()))
    }

    /// BPE of `bytes` as one piece, without the regex split and without special tokens
    /// (tiktoken's `_encode_single_piece`).
    pub fn encode_single_piece(&self, bytes: &[u8]) -> Result<Vec<u32>> {
        if bytes.is_empty() {
            return Ok(Vec::new());
        }
        self.byte_pair_encode(bytes)
    }

    /// Ordinary encoding of bytes that need not be valid UTF-8 (tiktoken's `_encode_bytes`):
    /// the valid prefix is encoded as text; its last piece (widened over trailing whitespace
    /// tokens) and the invalid rest are encoded together as one BPE piece.
    pub fn encode_bytes(&self, bytes: &[u8]) -> Result<Vec<u32>> {
        let valid = match std::str::from_utf8(bytes) {
            Ok(text) => return self.encode_ordinary(text),
            Err(e) => e.valid_up_to(),
        };
        let text = std::str::from_utf8(&bytes[..valid]).expect("valid up to here");
        let mut tokens = Vec::with_capacity(bytes.len() / 4 + 1);
        let mut last_piece = 0;
        self.encode_segments(text, &[], |id, at| {
            tokens.push(id);
            last_piece = if at == At::PieceStart { 1 } else { last_piece + 1 };
        })?;
        let mut rest = Vec::new();
        if last_piece > 0 {
            let n = self.widen_over_whitespace(&tokens, last_piece);
            rest = self.decode_bytes(&tokens[tokens.len() - n..])?;
            tokens.truncate(tokens.len() - n);
        }
        rest.extend_from_slice(&bytes[valid..]);
        tokens.extend(self.byte_pair_encode(&rest)?);
        Ok(tokens)
    }

    /// How many tokens at the end of `tokens` are unstable: the `last_piece` tokens of the
    /// last regex piece, plus the whitespace-only tokens before them when that piece starts
    /// with one (cl100k's `\s*[\r\n]+` can re-split there).
    fn widen_over_whitespace(&self, tokens: &[u32], last_piece: usize) -> usize {
        let all_space = |id: u32| {
            !self.is_special_token(id) && self.token_bytes(id).is_some_and(|b| b.iter().all(|c| matches!(c, b' ' | b'\n' | b'\t')))
        };
        let mut n = last_piece;
        if n > 0 && all_space(tokens[tokens.len() - n]) {
            while n < tokens.len() && all_space(tokens[tokens.len() - n - 1]) {
                n += 1;
            }
        }
        n
    }

    /// BPE of raw bytes as one piece (no regex split).
    fn byte_pair_encode(&self, bytes: &[u8]) -> Result<Vec<u32>> {
        let (bpe, _, _) = self.plan()?;
        let word = byte_level_string(bytes);
        let mut out = Vec::with_capacity(bytes.len() / 2 + 1);
        bpe.tokenize_ids(&word, &mut out)?;
        // A model whose ids are the ranks holds the special tokens too, and a whole word found
        // there is taken as is; tiktoken's ranks do not have them, so merge such a word instead.
        if let [id] = out[..] {
            if self.rank_of.is_none() && self.is_special_token(id) && !self.is_rank(id) {
                out = bpe.merge_loop_ids(&word)?;
            }
        }
        self.to_ranks(&mut out)?;
        Ok(out)
    }

    /// The bytes of rank (non-special) token `id`; empty for an id without one.
    fn rank_bytes(&self, id: u32) -> &[u8] {
        self.token_bytes(id).unwrap_or_default()
    }

    /// The rank ids whose bytes start with `prefix`, in byte order.
    fn ranks_starting_with(&self, prefix: &[u8]) -> &[u32] {
        let sorted = self.sorted_ranks.get_or_init(|| {
            let mut ids = self.rank_ids.clone();
            ids.sort_unstable_by(|&a, &b| self.rank_bytes(a).cmp(self.rank_bytes(b)));
            ids
        });
        let from = sorted.partition_point(|&id| self.rank_bytes(id) < prefix);
        let len = sorted[from..].partition_point(|&id| self.rank_bytes(id).starts_with(prefix));
        &sorted[from..from + len]
    }
}

/// The last char of `bytes` and its width in bytes, when `bytes` ends in a complete UTF-8
/// sequence.
fn last_char(bytes: &[u8]) -> Option<(char, usize)> {
    (1..=bytes.len().min(4)).find_map(|w| {
        let s = std::str::from_utf8(&bytes[bytes.len() - w..]).ok()?;
        let mut chars = s.chars();
        let c = chars.next()?;
        chars.next().is_none().then_some((c, w))
    })
}
