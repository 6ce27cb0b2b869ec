//! Byte-level BPE (GPT-2, Llama-3, Qwen, DeepSeek, the tiktoken encodings) on raw bytes.
//!
//! A byte-level model writes its tokens in GPT-2's printable chars, one char per byte
//! ([`BYTES_CHAR`]); its pipeline maps every byte of a piece to that char before BPE, which
//! costs a pass and doubles the bytes of non-ASCII text. This encoder reads the tokens back
//! as the raw bytes they stand for and encodes a piece as it is: a [`Backtracker`] whose trie
//! is keyed on raw bytes, whose symbols start as the ids of the bytes' chars.
//!
//! Why it gives what the model gives on the mapped piece: when every byte's char is a token,
//! the merge loop on the mapped piece starts from exactly those ids, one per byte (no unk,
//! no byte fallback), and the mapping is a bijection between raw byte strings and strings of
//! byte chars; so reachable tokens, valid pairs and the backtracker's search are the same on
//! both sides, with lengths counted in raw bytes. `ignore_merges` compares the whole piece
//! with the vocabulary: the trie holds the unreachable tokens too for that.

use std::borrow::Cow;
use std::cell::RefCell;

use super::backtrack::{BacktrackScratch, Backtracker, NONE, SHORT};
use super::chars::CharIds;
use super::word::MergeMap;
use crate::models::vocab::Vocab;
use crate::utils::byte_level::BYTES_CHAR;

/// Scratch buffers larger than this are released after use.
const SCRATCH_KEEP: usize = 1 << 16;

/// The ids of one piece and the backtracker's scratch, reused by every piece on a thread.
#[derive(Default)]
struct Scratch {
    ids: Vec<u32>,
    backtrack: BacktrackScratch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The raw byte each byte char stands for, by code point (byte chars are below U+0144).
fn char_bytes() -> [Option<u8>; 0x144] {
    let mut table = [None; 0x144];
    for (b, &c) in BYTES_CHAR.iter().enumerate() {
        table[c as usize] = Some(b as u8);
    }
    table
}

/// The raw bytes a byte-level token stands for, or `None` when a char of it is no byte char.
fn raw_bytes(token: &str, table: &[Option<u8>; 0x144], mut each: impl FnMut(u8)) -> Option<Vec<u8>> {
    let mut raw = Vec::with_capacity(token.len());
    for c in token.chars() {
        let b = (*table.get(c as usize)?)?;
        each(b);
        raw.push(b);
    }
    Some(raw)
}

/// The raw-byte encoder of a byte-level BPE model (see the module docs).
#[derive(Debug)]
pub struct ByteLevelBpe {
    /// Keyed on raw bytes; with `ignore_merges` its trie also holds the unreachable tokens.
    backtracker: Backtracker,
    /// The id of each byte's char: the initial symbols of a piece.
    byte_ids: [u32; 256],
    /// The merge of each pair of bytes' chars, as an index into `byte_merges` by
    /// `first << 8 | second`: a short piece's initial pairs in two loads each, with none of
    /// the pair filter's hashing and branches (256 KiB; cl100k random printable ASCII:
    /// 128.1M -> 117.1M instructions per MB).
    byte_pairs: Vec<u32>,
    /// The packed merges (rank, new id) the byte pairs have; index 0 is "none" (`u64::MAX`).
    byte_merges: Vec<u64>,
}

impl ByteLevelBpe {
    /// The encoder of a model whose every byte char is a token (`chars`: the single-char
    /// token ids), or `None` when one is missing or the ids are too sparse to index.
    pub(crate) fn new(vocab: &Vocab, merges: &MergeMap, chars: &CharIds, ignore_merges: bool) -> Option<Self> {
        let mut byte_ids = [0u32; 256];
        for (slot, &c) in byte_ids.iter_mut().zip(BYTES_CHAR.iter()) {
            *slot = chars.get(c)?;
        }
        let table = char_bytes();
        let backtracker = Backtracker::build(vocab, merges, ignore_merges, |token, ids| {
            raw_bytes(token, &table, |b| ids.push(byte_ids[usize::from(b)])).map(Cow::Owned)
        })?;
        let mut byte_pairs = vec![0u32; 1 << 16];
        let mut byte_merges = vec![u64::MAX];
        for (i, slot) in byte_pairs.iter_mut().enumerate() {
            let m = backtracker.packed_merge(byte_ids[i >> 8], byte_ids[i & 0xFF]);
            if m != u64::MAX {
                *slot = byte_merges.len() as u32;
                byte_merges.push(m);
            }
        }
        Some(Self { backtracker, byte_ids, byte_pairs, byte_merges })
    }

    /// The packed merge of the chars of bytes `a` then `b` (`u64::MAX`: none).
    #[inline]
    fn byte_merge(&self, a: u8, b: u8) -> u64 {
        let i = self.byte_pairs[usize::from(a) << 8 | usize::from(b)];
        self.byte_merges.get(i as usize).copied().unwrap_or(u64::MAX)
    }

    /// The token `piece` is as a whole, when the model makes it one token without merging:
    /// a reachable token (the merge loop ends there), or with `ignore_merges` any token.
    #[inline]
    pub(crate) fn whole(&self, piece: &[u8]) -> Option<u32> {
        let t = self.backtracker.whole_token(piece);
        (t != NONE).then_some(t)
    }

    /// Calls `emit(id, length in raw bytes)` for each token of `piece` (raw bytes), in order:
    /// the tokens the model gives for the piece mapped to byte chars.
    #[inline]
    pub fn for_each_token(&self, piece: &[u8], mut emit: impl FnMut(u32, u32)) {
        if piece.is_empty() {
            return;
        }
        if let [b] = piece {
            // Every byte is a token, with no merge to take.
            emit(self.byte_ids[usize::from(*b)], 1);
            return;
        }
        if piece.len() <= SHORT {
            if let Some(id) = self.whole(piece) {
                emit(id, piece.len() as u32);
                return;
            }
            let mut ids = [0u32; SHORT];
            for (id, &b) in ids.iter_mut().zip(piece) {
                *id = self.byte_ids[usize::from(b)];
            }
            let mut pairs = [u64::MAX; SHORT - 1];
            for (p, w) in pairs.iter_mut().zip(piece.windows(2)) {
                *p = self.byte_merge(w[0], w[1]);
            }
            let n = self.backtracker.merge_short(&mut ids, pairs, piece.len());
            for &id in &ids[..n] {
                emit(id, self.backtracker.token_len(id));
            }
            return;
        }
        // One trie walk finds the whole-piece token or the search's first step.
        let (whole, start) = self.backtracker.start(piece);
        if whole != NONE {
            emit(whole, piece.len() as u32);
            return;
        }
        SCRATCH.with(|cell| {
            let mut guard = cell.try_borrow_mut();
            let mut local = Scratch::default();
            let Scratch { ids, backtrack } = match guard.as_deref_mut() {
                Ok(s) => s,
                Err(_) => &mut local,
            };
            ids.clear();
            // Every byte is a token, so the search always reaches the end.
            let done = self.backtracker.encode_from(piece, start, ids, backtrack);
            debug_assert!(done);
            for &id in ids.iter() {
                emit(id, self.backtracker.token_len(id));
            }
            if ids.capacity() > SCRATCH_KEEP {
                *ids = Vec::new();
                backtrack.release_positions();
            }
        });
    }
}
