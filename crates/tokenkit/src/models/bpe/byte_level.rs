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

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use super::backtrack::{BacktrackScratch, Backtracker, Start, NONE, SHORT};
use super::chars::CharIds;
use super::repeats::MIN_PIECE;
use super::word::MergeMap;
use crate::base::vocab::Vocab;
use crate::utils::byte_level::BYTES_CHAR;
use crate::utils::table_cache::Table;

/// Scratch buffers larger than this are released after use.
const SCRATCH_KEEP: usize = 1 << 16;

/// Pieces that may be cut are searched whole until this many have come to an encoder: making
/// the [`Crossings`] is a pass over the merges (Llama-3: 9M instructions, what cuts save on
/// some 0.1 MB of random code points), which a load and its first encodes should not pay.
/// Few pieces of real text may be cut (they start with a char the model does not know), so a
/// short text nearly never makes them; a text of rare chars makes them early on, before the
/// larger part of it.
pub(super) const CROSSINGS_AFTER: u32 = 64;

/// Entries of the per-thread cache of short pieces' tokens ([`ShortCache`]); a power of two.
const SHORT_CACHE: usize = 1 << 12;

/// A short piece (its bytes and length packed in `key`), the encoder it was encoded by, and
/// its tokens (the first `n` of `ids`).
#[derive(Debug, Clone, Copy)]
struct ShortPiece {
    key: u64,
    owner: u64,
    ids: [u32; SHORT],
    n: u32,
}

/// A direct-mapped cache of the tokens of pieces of three to [`SHORT`] bytes that are not one
/// token, per thread: the merge loop on such a piece costs about 250 instructions (a merge-table
/// lookup for each new pair), a hit about 20, and text repeats its short pieces (a letter after
/// a combining mark, a consonant and its vowel sign in Indic scripts, symbols). Entries are
/// tagged with the encoder's [`Backtracker::serial`], so a cache filled by another encoder is
/// never read (and never needs clearing). Reached only for the pieces it holds (after the
/// whole-piece lookup fails): taken once per text and passed down instead, it made the token
/// loop of long pieces reload its captures on every token (2-5% on runs of one char class).
#[derive(Debug, Default)]
struct ShortCache(Vec<ShortPiece>);

impl ShortCache {
    /// The tokens of `piece` by `bpe` from this thread's cache, or computed by `merge` and kept
    /// (out of line: the callers' loops stay as they were for the pieces that are one token).
    #[inline(never)]
    fn get(bpe: &ByteLevelBpe, piece: &[u8], merge: impl FnOnce() -> ([u32; SHORT], usize)) -> ([u32; SHORT], usize) {
        // Taken while in use: a call up the stack holding it (not expected) gets a new one.
        let mut cache = SHORT_PIECES.take();
        if cache.0.is_empty() {
            cache.0 = vec![ShortPiece { key: u64::MAX, owner: 0, ids: [NONE; SHORT], n: 0 }; SHORT_CACHE];
        }
        let tokens = cache.tokens(bpe, piece, merge);
        SHORT_PIECES.set(cache);
        tokens
    }

    /// The tokens of `piece` (three to [`SHORT`] bytes) by `bpe`, from the cache or computed
    /// by `merge` and kept.
    #[inline(always)]
    fn tokens(&mut self, bpe: &ByteLevelBpe, piece: &[u8], merge: impl FnOnce() -> ([u32; SHORT], usize)) -> ([u32; SHORT], usize) {
        // The first three and the last three bytes (all of them, at most six) and the length:
        // distinct pieces have distinct keys. Read without a copy call.
        let three = |p: &[u8]| u64::from(p[0]) | u64::from(p[1]) << 8 | u64::from(p[2]) << 16;
        let key = three(piece) | three(&piece[piece.len() - 3..]) << 24 | (piece.len() as u64) << 48;
        let owner = bpe.backtracker.serial();
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SHORT_CACHE.trailing_zeros())) as usize;
        let Some(entry) = self.0.get_mut(slot) else { return merge() };
        if entry.key == key && entry.owner == owner {
            return (entry.ids, entry.n as usize);
        }
        let (ids, n) = merge();
        *entry = ShortPiece { key, owner, ids, n: n as u32 };
        (ids, n)
    }
}

/// Longest piece (bytes) the per-thread cache of searched pieces ([`LongCache`]) keeps.
const LONG_KEY: usize = 24;
/// Most tokens of a piece that [`LongCache`] keeps.
const LONG_IDS: usize = 8;
/// Entries of [`LongCache`]; a power of two.
const LONG_CACHE: usize = 1 << 12;
// [`LongCache::key`] reads pieces of at least four bytes and at most three words.
const _: () = assert!(SHORT >= 3 && LONG_KEY == 24);

/// A piece of more than [`SHORT`] and at most [`LONG_KEY`] bytes (its bytes zero-padded in
/// `key`, and its length), the encoder it was encoded by, and its tokens (the first `n` of `ids`).
#[derive(Debug, Clone, Copy)]
struct LongPiece {
    key: [u64; 3],
    len: u32,
    n: u32,
    owner: u64,
    ids: [u32; LONG_IDS],
}

/// A direct-mapped cache of the tokens of pieces longer than [`SHORT`] bytes, per thread. Such
/// a piece takes a trie walk (about 5 instructions a byte) and, when it is not one token, the
/// backtracker's search (some 300-600 instructions for a word of two or three tokens); text
/// repeats its words (15% of the pieces of English prose and 25% of code are this long, and
/// most were seen before), and a hit costs about 30. Entries are tagged with the encoder's
/// [`Backtracker::serial`], as [`ShortCache`]'s are.
#[derive(Debug, Default)]
struct LongCache(Vec<LongPiece>);

impl LongCache {
    /// The bytes of `piece` (more than [`SHORT`], at most [`LONG_KEY`]) as three little-endian
    /// words, zero-padded: read with overlapping eight-byte loads, no copy call.
    #[inline(always)]
    fn key(piece: &[u8]) -> [u64; 3] {
        let n = piece.len();
        let word = |i: usize| u64::from_le_bytes(piece[i..i + 8].try_into().unwrap_or_default());
        let mut key = [0; 3];
        if n < 8 {
            // Seven bytes: two four-byte loads that share the middle byte.
            let half = |i: usize| u64::from(u32::from_le_bytes(piece[i..i + 4].try_into().unwrap_or_default()));
            key[0] = half(0) | half(n - 4) << ((n - 4) * 8);
            return key;
        }
        for (k, w) in key.iter_mut().enumerate().take(n / 8) {
            *w = word(8 * k);
        }
        if !n.is_multiple_of(8) {
            // The last eight bytes, shifted down to the ones past the whole words.
            key[n / 8] = word(n - 8) >> (8 * (8 - n % 8));
        }
        key
    }

    /// Appends the tokens of `piece` (more than [`SHORT`] bytes) to `out`: from this thread's
    /// cache when the piece is short enough to be kept, else by `search`, whose tokens are kept
    /// when there are at most [`LONG_IDS`].
    #[inline]
    fn extend(bpe: &ByteLevelBpe, piece: &[u8], out: &mut Vec<u32>, search: impl FnOnce(&mut Vec<u32>)) {
        if piece.len() > LONG_KEY {
            return search(out);
        }
        let key = Self::key(piece);
        let owner = bpe.backtracker.serial();
        // The encoder is hashed too: two encoders of the same text keep their pieces side by side.
        let hash = (key[0] ^ key[1].rotate_left(21) ^ key[2].rotate_left(42) ^ owner.rotate_left(53) ^ piece.len() as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = (hash >> (64 - LONG_CACHE.trailing_zeros())) as usize;
        let mut cache = LONG_PIECES.take();
        if cache.0.is_empty() {
            cache.0 = vec![LongPiece { key: [0; 3], len: 0, n: 0, owner: 0, ids: [NONE; LONG_IDS] }; LONG_CACHE];
        }
        if let Some(entry) = cache.0.get_mut(slot) {
            if entry.key == key && entry.len as usize == piece.len() && entry.owner == owner {
                // The whole array, then the unused tail dropped (no copy call).
                out.extend_from_slice(&entry.ids);
                out.truncate(out.len() - (LONG_IDS - entry.n as usize));
                #[cfg(test)]
                LONG_HITS.set(LONG_HITS.get() + 1);
            } else {
                let from = out.len();
                search(out);
                let tokens = &out[from..];
                if tokens.len() <= LONG_IDS {
                    let mut ids = [NONE; LONG_IDS];
                    ids[..tokens.len()].copy_from_slice(tokens);
                    *entry = LongPiece { key, len: piece.len() as u32, n: tokens.len() as u32, owner, ids };
                }
            }
        } else {
            search(out);
        }
        LONG_PIECES.set(cache);
    }
}

thread_local! {
    /// See [`ShortCache`]; empty until the thread's first piece that needs it, and while it is taken.
    static SHORT_PIECES: Cell<ShortCache> = const { Cell::new(ShortCache(Vec::new())) };
    /// See [`LongCache`]; empty until the thread's first piece that needs it, and while it is taken.
    static LONG_PIECES: Cell<LongCache> = const { Cell::new(LongCache(Vec::new())) };
    /// The ids of one long piece, reused by every piece on a thread.
    static IDS: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
    /// The backtracker's scratch, reused by every piece on a thread.
    static BACKTRACK: RefCell<BacktrackScratch> = RefCell::new(BacktrackScratch::default());
}

#[cfg(test)]
thread_local! {
    /// The pieces [`ByteLevelBpe::cut_tokens`] cut on this thread, for tests that must cut some.
    pub(super) static CUT_PIECES: Cell<usize> = const { Cell::new(0) };
    /// The pieces [`LongCache`] answered on this thread, for tests that must hit it.
    pub(super) static LONG_HITS: Cell<usize> = const { Cell::new(0) };
}

/// The raw byte each byte char stands for, by code point (byte chars are below U+0144).
fn char_bytes() -> [Option<u8>; 0x144] {
    let mut table = [None; 0x144];
    for (b, &c) in BYTES_CHAR.iter().enumerate() {
        table[c as usize] = Some(b as u8);
    }
    table
}

/// Appends to `raw` the raw bytes a byte-level token stands for, calling `each` on each;
/// `false` when a char of it is no byte char (then part of them may have been appended).
fn raw_bytes(token: &str, table: &[Option<u8>; 0x144], raw: &mut Vec<u8>, mut each: impl FnMut(u8)) -> bool {
    raw.reserve(token.len());
    for c in token.chars() {
        let Some(b) = table.get(c as usize).copied().flatten() else { return false };
        each(b);
        raw.push(b);
    }
    true
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
    /// The token a piece of one or two bytes is, or [`NONE`] when it stays two byte tokens:
    /// a two-byte piece at `first << 8 | second` (the whole-piece token, else the merge of its
    /// bytes), a one-byte piece at `1 << 16 | byte`. The most common pieces of punctuation and
    /// symbol runs in one load (257 KiB).
    pair_tokens: Vec<u32>,
    /// See [`Crossings`]: made once enough pieces may be cut ([`Self::crossings`]), so that no
    /// load and no text with few such pieces pays for them; read in place from a table-cache
    /// entry written after they were made. `None` inside when the byte ids are too large to index (no piece is cut).
    crossings: OnceLock<Option<Crossings>>,
    /// Pieces that asked for the crossings before they were made (up to [`CROSSINGS_AFTER`]).
    asked: AtomicU32,
}

/// The byte pairs `x, y` that some merge crosses: a merge of a symbol whose last byte is `x`
/// with one whose first byte is `y` (one bit per pair, `x << 8 | y`; 8 KiB).
///
/// Why a piece may be cut between two bytes no merge crosses, and each part encoded on its
/// own, with the same tokens: a merge joins two adjacent symbols, so the symbol it makes would
/// span the cut only if the merge joined a symbol ending at the cut (in its byte before the
/// cut) to one starting at it; there is no such merge, so every symbol stays on one side. The
/// merges on one side then only ever involve its own symbols, in the order they take when
/// that side is merged alone (lowest rank first, leftmost on ties, restricted to one side).
/// Only reachable tokens are ever symbols (a symbol's merges are those the loop takes on its
/// span alone), so the merges of unreachable tokens are left out. On random code points a
/// long piece falls into parts of a few bytes (GPT-2: one byte each), which the short-piece
/// tables encode, instead of a search over the whole piece.
#[derive(Debug)]
struct Crossings(Table<u64>);

impl Crossings {
    /// The table's length in words (one bit per byte pair).
    const WORDS: usize = 1 << 16 >> 6;

    /// One pass over the tokens, then one over the merges (Llama-3: about 9M instructions, 24M
    /// with each merge's tokens looked up in the backtracker); `None` when a byte's id is 2^20
    /// or more (a table by id would be too large).
    fn new(backtracker: &Backtracker, byte_ids: &[u32; 256]) -> Option<Self> {
        let max = byte_ids.iter().copied().max().unwrap_or(0) as usize;
        if max >= 1 << 20 {
            return None;
        }
        // The byte each byte's id stands for (`u16::MAX`: no byte).
        let mut byte_of = vec![u16::MAX; max + 1];
        for (b, &id) in byte_ids.iter().enumerate() {
            byte_of[id as usize] = b as u16;
        }
        let byte = |id: u32| byte_of.get(id as usize).copied().filter(|&b| b != u16::MAX).map(u32::from);
        // Each reachable token's last and first byte, `last << 8 | first` (`u32::MAX`: none).
        let edges: Vec<u32> = (0..backtracker.tokens() as u32)
            .map(|t| backtracker.edge_symbols(t).and_then(|(first, last)| Some(byte(last)? << 8 | byte(first)?)).unwrap_or(u32::MAX))
            .collect();
        let edge = |t: u32| edges.get(t as usize).copied().filter(|&e| e != u32::MAX);
        let mut bits = vec![0u64; Self::WORDS];
        for ((a, b), _) in backtracker.merges().iter() {
            let (Some(x), Some(y)) = (edge(a), edge(b)) else { continue };
            let i = (x & 0xFF00 | y & 0xFF) as usize;
            bits[i >> 6] |= 1 << (i & 63);
        }
        Some(Self(bits.into()))
    }

    /// The table's words (`None` for a table of another length, which neither [`Self::new`]
    /// nor [`Self::read`] gives): a fixed size, so that [`Self::crossed`] has no bounds check.
    #[inline(always)]
    fn bits(&self) -> Option<&[u64; Self::WORDS]> {
        self.0[..].try_into().ok()
    }

    /// Whether some merge crosses between bytes `x` and `y`, in [`Self::bits`].
    #[inline(always)]
    fn crossed(bits: &[u64; Self::WORDS], x: u8, y: u8) -> bool {
        let i = usize::from(x) << 8 | usize::from(y);
        bits[i >> 6] >> (i & 63) & 1 == 1
    }

    /// Writes `crossings` for [`crate::utils::table_cache`]: whether they are made, then their
    /// table (empty for `None`).
    fn write(crossings: &OnceLock<Option<Self>>, w: &mut crate::utils::table_cache::Writer) {
        w.bool(crossings.get().is_some());
        if let Some(made) = crossings.get() {
            w.table(made.as_ref().map_or(&[][..], |c| &c.0[..]));
        }
    }

    /// Reads what [`Self::write`] wrote: a view of the entry, no pass over the merges.
    fn read(r: &mut crate::utils::table_cache::Reader<'_>) -> crate::Result<OnceLock<Option<Self>>> {
        if !r.bool()? {
            return Ok(OnceLock::new());
        }
        let bits: Table<u64> = r.table()?;
        match bits.len() {
            0 => Ok(OnceLock::from(None)),
            Self::WORDS => Ok(OnceLock::from(Some(Self(bits)))),
            _ => Err(crate::Error::invalid("table cache: malformed crossings table")),
        }
    }
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
        let backtracker = Backtracker::build(vocab, merges, ignore_merges, |token, ids, key| {
            raw_bytes(token, &table, key, |b| ids.push(byte_ids[usize::from(b)]))
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
        let mut bpe = Self {
            backtracker,
            byte_ids,
            byte_pairs,
            byte_merges,
            pair_tokens: Vec::new(),
            crossings: OnceLock::new(),
            asked: AtomicU32::new(0),
        };
        bpe.pair_tokens = (0..1usize << 16)
            .map(|i| {
                let piece = [(i >> 8) as u8, i as u8];
                bpe.whole(&piece).unwrap_or_else(|| {
                    let m = bpe.byte_merge(piece[0], piece[1]);
                    if m == u64::MAX {
                        NONE
                    } else {
                        m as u32
                    }
                })
            })
            .chain(byte_ids)
            .collect();
        Some(bpe)
    }

    /// The [`Crossings`] for a piece that may be cut: made on the [`CROSSINGS_AFTER`]th call
    /// (`None` before: the piece is searched whole).
    fn crossings(&self) -> Option<&Crossings> {
        match self.crossings.get() {
            Some(made) => made.as_ref(),
            None if self.asked.fetch_add(1, Ordering::Relaxed) < CROSSINGS_AFTER => None,
            None => self.crossings.get_or_init(|| Crossings::new(&self.backtracker, &self.byte_ids)).as_ref(),
        }
    }

    /// The [`Crossings`]' words when they are there without being made (read from the table
    /// cache, or made by an earlier call): `Some(None)` for a model they cannot index.
    #[cfg(test)]
    pub(crate) fn crossings_made(&self) -> Option<Option<&[u64]>> {
        self.crossings.get().map(|c| c.as_ref().map(|c| &c.0[..]))
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

    /// The tokens of a piece of at most two bytes: the first `n` entries of the pair, and `n`.
    /// One byte is its token; two bytes are one token or their two byte tokens. Both by
    /// table, without a branch on which.
    #[inline]
    fn tiny_tokens(&self, piece: &[u8]) -> ([u32; 2], usize) {
        let (Some(&a), Some(&b)) = (piece.first(), piece.last()) else { return ([NONE; 2], 0) };
        let at = if piece.len() == 2 { usize::from(a) << 8 } else { 1 << 16 } | usize::from(b);
        let whole = self.pair_tokens.get(at).copied().unwrap_or(NONE);
        let split = whole == NONE;
        ([if split { self.byte_ids[usize::from(a)] } else { whole }, self.byte_ids[usize::from(b)]], 1 + usize::from(split))
    }

    /// The tokens of a piece of one to [`SHORT`] bytes (none for an empty one): the first
    /// `n` entries of the array, and `n`. A fixed-size array rather than a loop of calls, so
    /// that the caller can copy it whole (the pieces of random punctuation and symbols vary
    /// in length and token count: loops over them mispredicted their exits).
    #[inline]
    pub fn short_tokens(&self, piece: &[u8]) -> ([u32; SHORT], usize) {
        let mut ids = [NONE; SHORT];
        if piece.len() <= 2 {
            let (two, n) = self.tiny_tokens(piece);
            ids[..2].copy_from_slice(&two);
            return (ids, n);
        }
        if let Some(id) = self.whole(piece) {
            ids[0] = id;
            return (ids, 1);
        }
        ShortCache::get(self, piece, || self.merge_piece(piece))
    }

    /// The merge loop on a piece of three to [`SHORT`] bytes ([`Self::short_tokens`] when it
    /// is not one token and not cached).
    #[inline(never)]
    fn merge_piece(&self, piece: &[u8]) -> ([u32; SHORT], usize) {
        let mut ids = [NONE; SHORT];
        // Fixed trip counts (no exit to mispredict): the slots past the piece repeat its last
        // byte, their pairs are "no merge".
        let at = |i: usize| piece[i.min(piece.len() - 1)];
        for (i, id) in ids.iter_mut().enumerate() {
            *id = self.byte_ids[usize::from(at(i))];
        }
        let mut pairs = [u64::MAX; SHORT - 1];
        for (i, p) in pairs.iter_mut().enumerate() {
            let m = self.byte_merge(at(i), at(i + 1));
            *p = if i + 1 < piece.len() { m } else { u64::MAX };
        }
        let n = self.backtracker.merge_short(&mut ids, pairs, piece.len());
        (ids, n)
    }

    /// The merge loop on a part of three or four bytes ([`Self::part_tokens`]), its tokens
    /// appended to `out`. Such parts are mostly one char the model does not know (random code
    /// points), nearly never seen before: the short pieces' cache missed and the loop of
    /// [`Self::merge_piece`] over six slots cost 310 instructions a part (Llama-3), this loop
    /// over the part's own symbols about a third.
    #[inline(always)]
    fn merge_few(&self, part: &[u8], out: &mut Vec<u32>) {
        let mut n = part.len().min(4);
        let (mut ids, mut pairs) = ([NONE; 4], [u64::MAX; 3]);
        for (i, &b) in part.iter().take(n).enumerate() {
            ids[i] = self.byte_ids[usize::from(b)];
            if let Some(&next) = part.get(i + 1).filter(|_| i + 1 < n) {
                pairs[i] = self.byte_merge(b, next);
            }
        }
        // The lowest rank first, the leftmost on ties, until none applies.
        while n > 1 {
            let mut at = 0;
            for i in 1..n - 1 {
                if pairs[i] < pairs[at] {
                    at = i;
                }
            }
            if pairs[at] == u64::MAX {
                break;
            }
            ids[at] = pairs[at] as u32;
            for k in at + 1..n - 1 {
                ids[k] = ids[k + 1];
            }
            for k in at + 1..n - 2 {
                pairs[k] = pairs[k + 1];
            }
            n -= 1;
            if at > 0 {
                pairs[at - 1] = self.backtracker.packed_merge(ids[at - 1], ids[at]);
            }
            if at + 1 < n {
                pairs[at] = self.backtracker.packed_merge(ids[at], ids[at + 1]);
            }
        }
        out.extend_from_slice(&ids[..n]);
    }

    /// Appends the tokens of `piece` (raw bytes) to `out`, in order: [`Self::for_each_token`]
    /// for id-only encoding, a short piece's tokens copied as one array.
    #[inline]
    pub fn extend_tokens(&self, piece: &[u8], out: &mut Vec<u32>) {
        if piece.len() <= SHORT {
            if piece.len() <= 2 {
                // The pieces of runs of one-byte pieces (a space before each digit, symbols
                // between letters): two ids copied, not the short pieces' array of six.
                let (two, n) = self.tiny_tokens(piece);
                out.extend_from_slice(&two);
                out.truncate(out.len() - (2 - n));
                return;
            }
            let (ids, n) = self.short_tokens(piece);
            // The whole array, then the unused tail dropped (a length update for u32).
            out.extend_from_slice(&ids);
            out.truncate(out.len() - (SHORT - n));
            return;
        }
        self.extend_long(piece, out);
    }

    /// Calls `emit(id, length in raw bytes)` for each token of `piece` (raw bytes), in order:
    /// the tokens the model gives for the piece mapped to byte chars.
    #[inline]
    pub fn for_each_token(&self, piece: &[u8], mut emit: impl FnMut(u32, u32)) {
        if piece.len() <= SHORT {
            if piece.len() <= 2 {
                // One token for the whole piece, or one per byte (none for an empty piece).
                match self.tiny_tokens(piece) {
                    (two, 1) => emit(two[0], piece.len() as u32),
                    (two, 2) => {
                        emit(two[0], 1);
                        emit(two[1], 1);
                    }
                    _ => {}
                }
                return;
            }
            let (ids, n) = self.short_tokens(piece);
            if n == 1 {
                // The whole piece, which may be a token the merges do not reach (with
                // `ignore_merges`; the backtracker has no length for those).
                emit(ids[0], piece.len() as u32);
                return;
            }
            for &id in &ids[..n] {
                emit(id, self.backtracker.token_len(id));
            }
            return;
        }
        self.for_each_long(piece, emit);
    }

    /// [`Self::for_each_token`] on a piece longer than [`SHORT`] bytes.
    fn for_each_long(&self, piece: &[u8], mut emit: impl FnMut(u32, u32)) {
        let mut ids = IDS.take();
        ids.clear();
        self.extend_long(piece, &mut ids);
        if let [whole] = ids[..] {
            // The whole piece, which may be a token the merges do not reach (with
            // `ignore_merges`; the backtracker has no length for those).
            emit(whole, piece.len() as u32);
            IDS.set(ids);
            return;
        }
        for &id in &ids {
            emit(id, self.backtracker.token_len(id));
        }
        if ids.capacity() <= SCRATCH_KEEP {
            IDS.set(ids);
        }
    }

    /// [`Self::extend_tokens`] on a piece longer than [`SHORT`] bytes: the search appends to
    /// `out` itself.
    fn extend_long(&self, piece: &[u8], out: &mut Vec<u32>) {
        LongCache::extend(self, piece, out, |out| {
            // One trie walk finds the whole-piece token or the search's first step.
            let (whole, start) = self.backtracker.start(piece);
            if whole != NONE {
                out.push(whole);
            } else {
                self.search(piece, start, out);
            }
        });
    }

    /// The tokens of a piece longer than [`SHORT`] bytes that is not one token, appended to
    /// `out` (`start`: the search's first step on it), with this thread's scratch (or a fresh
    /// one when it is in use): by [`Self::cut_tokens`] when the piece [may be cut](Self::may_cut)
    /// and has a cut, else by the backtracker's search. The test and the cut are inside the
    /// scratch's closure, which is out of line: the callers' token loops make the same call
    /// as they did before there were cuts.
    fn search(&self, piece: &[u8], start: Start, out: &mut Vec<u32>) {
        BACKTRACK.with(|cell| {
            let mut guard = cell.try_borrow_mut();
            // Made only when the thread's scratch is in use (a nested call): it is not small.
            let mut local;
            let backtrack = match guard.as_deref_mut() {
                Ok(s) => s,
                Err(_) => {
                    local = BacktrackScratch::default();
                    &mut local
                }
            };
            if !self.may_cut(piece, start) || !self.cut_tokens(piece, out, backtrack) {
                // Every byte is a token, so the search always reaches the end.
                let done = self.backtracker.encode_from(piece, start, out, backtrack);
                debug_assert!(done);
            }
            if piece.len() > SCRATCH_KEEP {
                backtrack.release_positions();
            }
        });
    }

    /// Whether a piece that is not one token (`start`: the search's first step on it) may be
    /// cut ([`Self::cut_tokens`]): it starts (after a space) with a non-ASCII char that is no
    /// token (the first step ends inside it), and is below [`MIN_PIECE`] bytes. Only what the
    /// piece and its first step already hold: the long pieces of prose (ASCII words, numbers,
    /// punctuation) never scan for cuts (scanned, they cost English prose 2% and runs of ASCII
    /// punctuation 6%, and nearly never have one), nor do pieces of a script the model knows
    /// (CJK and kana for Llama-3 and Qwen: their cuts fall between known chars and Latin
    /// letters, into parts that cost more than the search on the whole piece, +5-8%). Pieces
    /// of chars the model does not know (rare or unassigned code points, combining marks after
    /// them) fall into parts of a byte or two.
    #[inline(always)]
    fn may_cut(&self, piece: &[u8], start: Start) -> bool {
        let at = usize::from(piece.first() == Some(&b' '));
        let lead = piece.get(at).copied().unwrap_or(0);
        // The length of the first char (after the space): 2, 3 or 4 bytes for a lead of 0xC0 and above.
        let first_char = at + 2 + usize::from(lead >= 0xE0) + usize::from(lead >= 0xF0);
        lead >= 0xC0 && piece.len() < MIN_PIECE && Backtracker::start_len(start) < first_char
    }

    /// Cuts `piece` between the bytes no merge crosses ([`Crossings`]) and appends the tokens of
    /// each part, encoded on its own; false, with `out` as it was, when there is no such cut.
    #[inline(never)]
    fn cut_tokens(&self, piece: &[u8], out: &mut Vec<u32>, backtrack: &mut BacktrackScratch) -> bool {
        let Some(bits) = self.crossings().and_then(Crossings::bits) else { return false };
        let mut from = 0;
        for i in 1..piece.len() {
            if !Crossings::crossed(bits, piece[i - 1], piece[i]) {
                self.part_tokens(&piece[from..i], out, backtrack);
                from = i;
            }
        }
        if from == 0 {
            return false;
        }
        self.part_tokens(&piece[from..], out, backtrack);
        #[cfg(test)]
        CUT_PIECES.set(CUT_PIECES.get() + 1);
        true
    }

    /// The tokens of a part of a piece ([`Self::cut_tokens`]), appended to `out`: the merge
    /// loop's on its bytes. Unlike a whole piece, a part is never taken as an unreachable token
    /// (`ignore_merges` looks at whole pieces only). Inlined: a call per part cost 35
    /// instructions (Llama-3, random code points: 200K parts per 400 KB).
    #[inline(always)]
    fn part_tokens(&self, part: &[u8], out: &mut Vec<u32>, backtrack: &mut BacktrackScratch) {
        match *part {
            [] => {}
            [a] => out.push(self.byte_ids[usize::from(a)]),
            [a, b] => {
                let m = self.byte_merge(a, b);
                if m == u64::MAX {
                    out.extend_from_slice(&[self.byte_ids[usize::from(a)], self.byte_ids[usize::from(b)]]);
                } else {
                    out.push(m as u32);
                }
            }
            // The merge loop, which also gives a part that is a reachable token.
            [_, _, _] | [_, _, _, _] => self.merge_few(part, out),
            _ if part.len() <= SHORT => {
                let (ids, n) = ShortCache::get(self, part, || self.merge_piece(part));
                out.extend_from_slice(&ids[..n]);
            }
            // The search from the walk of `start`, with the caller's scratch; its whole-part
            // token is left out (it may be an unreachable one).
            _ => {
                let done = self.backtracker.encode_from(part, self.backtracker.start(part).1, out, backtrack);
                debug_assert!(done);
            }
        }
    }
}

impl ByteLevelBpe {
    /// Writes the encoder's tables, for [`crate::utils::table_cache`].
    pub(crate) fn write_table(&self, w: &mut crate::utils::table_cache::Writer) {
        self.backtracker.write_table(w);
        w.u32s(&self.byte_ids);
        w.u32s(&self.byte_pairs);
        w.u64s(&self.byte_merges);
        w.u32s(&self.pair_tokens);
        // When made (not here: an entry is written by a load, which should not pay for them), a
        // load from the entry reads them in place.
        Crossings::write(&self.crossings, w);
    }

    /// Reads what [`ByteLevelBpe::write_table`] wrote, with the model's `merges`.
    pub(crate) fn read_table(r: &mut crate::utils::table_cache::Reader<'_>, merges: &MergeMap) -> crate::Result<Self> {
        let backtracker = Backtracker::read_table(r, merges)?;
        let byte_ids: [u32; 256] = r.u32s()?.try_into().map_err(|_| crate::Error::invalid("table cache: malformed byte table"))?;
        let (byte_pairs, byte_merges, pair_tokens) = (r.u32s()?, r.u64s()?, r.u32s()?);
        if byte_pairs.len() != 1 << 16 || pair_tokens.len() != (1 << 16) + 256 || byte_merges.is_empty() {
            return Err(crate::Error::invalid("table cache: malformed byte tables"));
        }
        let crossings = Crossings::read(r)?;
        Ok(Self { backtracker, byte_ids, byte_pairs, byte_merges, pair_tokens, crossings, asked: AtomicU32::new(0) })
    }
}

#[cfg(test)]
mod long_key_tests {
    use super::*;

    /// [`LongCache::key`] is the zero-padded bytes, for every length it takes and every
    /// position of every byte (each byte distinct and non-zero, so a misplaced one shows).
    #[test]
    fn key_is_the_padded_bytes() {
        let bytes: Vec<u8> = (1..=LONG_KEY as u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        let mut checked = 0;
        for n in SHORT + 1..=LONG_KEY {
            let mut padded = [0u8; LONG_KEY];
            padded[..n].copy_from_slice(&bytes[..n]);
            let want: Vec<u64> = padded.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
            assert_eq!(LongCache::key(&bytes[..n]).to_vec(), want, "{n} bytes");
            checked += 1;
        }
        assert_eq!(checked, LONG_KEY - SHORT);
    }
}
