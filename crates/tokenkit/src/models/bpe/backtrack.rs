//! An exact BPE encoder for long words in time linear in the word's length: a depth-first
//! search, longest token first, over tokenizations whose adjacent tokens are all "valid
//! pairs", with a bit per position that marks dead ends (the idea of the `bpe` crate by
//! GitHub; this is an independent implementation with its own validity test).
//!
//! Why it gives exactly what the merge loop gives ([`super::Word::merge_all`]: lowest rank
//! first, leftmost on ties) on words whose symbols are their chars (no unk, byte fallback or
//! affixes; then a queued pair is stale exactly when its span changed, so no merge table
//! property is needed):
//!
//! * A token is *reachable* when the merge loop on its own chars gives that token; only
//!   reachable tokens can appear in an output. A pair `(a, b)` is *valid* when the merge loop
//!   on the chars of `a` then `b` gives `[a, b]`.
//! * The output of the merge loop is made of reachable tokens, and each two adjacent output
//!   tokens form a valid pair: no merge ever crosses the outer edges of their span, so the
//!   merges inside it are taken in the same order as when the span is merged alone.
//! * Conversely, a tokenization into reachable tokens whose adjacent pairs are all valid *is*
//!   the merge loop's output: until the first merge across a token edge, every token's span
//!   evolves as when merged alone, and the first such merge would, by the same argument, also
//!   be taken (or preceded by another crossing merge) when only the two tokens around that
//!   edge are merged, contradicting the validity of that pair. So the valid tokenization of
//!   any text is unique.
//! * Hence the search, which only extends valid prefixes, reaches every position with the
//!   same prefix tokenization (the unique valid one of the text before it): a position from
//!   which it found no way to the end is dead for good and never tried again. Each position
//!   is entered at most once, so the work is linear (times the number of prefix tokens at a
//!   position and the cost of a validity test).
//! * None of this depends on the order in which the tokens at a position are tried: the
//!   search tries the longest first, except where a cheap look at the next bytes says the
//!   longest is likely wrong ([`Backtracker::first_try`]); the order only changes how many
//!   dead ends it meets.
//!
//! The validity test does not merge strings: it interleaves the two tokens' recorded merge
//! runs (the rank of each merge taken, and the first and last symbol after it) the way the
//! merge loop would, and checks whether the pair across the edge would be taken first.

use std::sync::atomic::{AtomicU64, Ordering};

use super::chars::CharIds;
use super::repeats::{Repeats, MIN_PIECE};
use super::word::MergeMap;
use crate::base::vocab::Vocab;

/// "None" for ids and trie nodes.
pub(crate) const NONE: u32 = u32::MAX;

/// Marks, in the trie, a token that is not reachable (kept for whole-piece lookups only); the
/// other bits index [`Backtracker::unreachable_ids`] (its id may be any `u32`).
const UNREACHABLE_BIT: u32 = 1 << 31;

/// One merge of a token's own merge run: its rank, then the first and last symbol after it.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Step {
    rank: u32,
    first: u32,
    last: u32,
}

// SAFETY: `#[repr(C)]` structs of `u32`s: no padding, any bits are a value.
unsafe impl Pod for Step {}
// SAFETY: as for `Step`.
unsafe impl Pod for TokenInfo {}
// SAFETY: as for `Step`.
unsafe impl Pod for Slot {}

/// What the encoder knows of a token id; `len == 0` for ids that are not reachable.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct TokenInfo {
    /// Length of the token's string, in bytes.
    len: u32,
    /// The longest reachable token that is a proper prefix of this one, or [`NONE`].
    shorter: u32,
    /// Id of the first and of the last char of the token.
    first: u32,
    last: u32,
    /// The token's merge run: `steps[run_start..run_start + run_len]`.
    run_start: u32,
    run_len: u32,
    /// The rank of the first merge of its run that takes in its last symbol (`u32::MAX` for a
    /// single symbol): a symbol after the token that merges with that last symbol at a lower
    /// rank may take it away (see [`Backtracker::first_try`]).
    last_rank: u32,
}

const UNREACHABLE: TokenInfo = TokenInfo { len: 0, shorter: NONE, first: NONE, last: NONE, run_start: 0, run_len: 0, last_rank: u32::MAX };

/// A trie over byte strings as a double array: node `n`'s child by byte `b` is slot
/// `base[n] + b` when that slot's `check` is `n`. A step is two loads from one array with no
/// search (the token strings are bytes: UTF-8 of the model's chars, or raw bytes).
#[derive(Debug, Clone)]
struct Trie {
    /// Slot 0 is the root; free slots have `check == NONE`. Padded so that `base + byte` of
    /// any node is in bounds.
    slots: Table<Slot>,
}

/// One double-array slot: where the node's children start (with [`DEAD_END`] when no
/// reachable token ends at the node or below it), its parent, and the token that ends at the
/// node ([`NONE`] when none does; with [`UNREACHABLE_BIT`] when it is not reachable).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Slot {
    base: u32,
    check: u32,
    token: u32,
}

const FREE: Slot = Slot { base: 0, check: NONE, token: NONE };

/// Marks, in a slot's `base`, a node below which the search finds no token: only unreachable
/// tokens (kept for whole-piece lookups) end there. [`Trie::longest_prefix`] stops before it,
/// so that a text one byte short of a long unreachable token does not walk the token's
/// prefix from every position (quadratic in its length).
const DEAD_END: u32 = 1 << 31;

impl Slot {
    /// Where the node's children start.
    #[inline]
    fn base(self) -> usize {
        (self.base & !DEAD_END) as usize
    }
}

impl Trie {
    /// Builds the trie of `keys` (distinct byte strings, token id), or `None` when it would
    /// need 2^31 slots or more.
    fn new(keys: Vec<(&[u8], u32)>) -> Option<Self> {
        let keys = crate::utils::trie::sorted_keys(keys, |k| k.0);
        let mut slots = vec![FREE; 1];
        let mut too_big = false;
        let end = crate::utils::trie::lay_out(
            &keys,
            |k| k.0,
            |s| {
                too_big |= s.children_end + 256 >= DEAD_END as usize;
                if too_big {
                    return;
                }
                // A node is live when a reachable token ends at it or below it.
                let live = keys[s.keys.clone()].iter().any(|k| k.1 < UNREACHABLE_BIT);
                let token = s.ends.last().map_or(NONE, |k| keys[k].1);
                slots[s.slot] = Slot { base: s.base as u32 | if live { 0 } else { DEAD_END }, check: s.parent, token };
                if slots.len() < s.children_end {
                    slots.resize(s.children_end.max(slots.len() * 2), FREE);
                }
            },
        );
        if too_big || end + 256 >= DEAD_END as usize {
            return None;
        }
        slots.resize(end + 256, FREE);
        slots.shrink_to_fit();
        // What [`Trie::descend`] relies on (and [`Backtracker::read_table`] checks).
        if !slots.iter().all(|s| s.base() + 256 <= slots.len()) {
            return None;
        }
        Some(Self { slots: slots.into() })
    }

    /// The longest reachable token that `text` starts with ([`NONE`] when none) and its
    /// length: down as long as `text` goes and a reachable token lies ahead (at most the
    /// longest token's length, whatever unreachable tokens there are), then back up (by the
    /// parent links) to the deepest reachable token, which is usually at most a byte or two up.
    #[inline]
    fn longest_prefix(&self, text: &[u8]) -> (u32, usize) {
        let (node, depth) = self.descend(0, text, DEAD_END);
        self.up_to_token(node, depth)
    }

    /// [`Trie::longest_prefix`] of `text`, and [`Trie::exact`] of it, in one walk: the exact
    /// lookup goes on down from where the longest prefix stopped.
    #[inline]
    fn walk(&self, text: &[u8]) -> ((u32, usize), u32) {
        let (node, depth) = self.descend(0, text, DEAD_END);
        let (end, end_depth) = self.descend(node, &text[depth..], 0);
        let exact = if depth + end_depth == text.len() { self.slots[end].token } else { NONE };
        (self.up_to_token(node, depth), exact)
    }

    /// The token that is `text` exactly (with [`UNREACHABLE_BIT`] when it is not reachable),
    /// or [`NONE`].
    #[inline]
    fn exact(&self, text: &[u8]) -> u32 {
        let (node, depth) = self.descend(0, text, 0);
        if depth == text.len() {
            self.slots[node].token
        } else {
            NONE
        }
    }

    /// Follows `text` down from `node` as far as the trie has it, without entering a node
    /// whose `base` has a bit of `stop` set; returns the last node and the bytes taken.
    #[inline]
    fn descend(&self, mut node: usize, text: &[u8], stop: u32) -> (usize, usize) {
        let slots = &self.slots[..];
        assert!(node < slots.len());
        let mut depth = 0;
        for &b in text {
            // SAFETY: `node` is a slot (the root, a node found below, or checked above), and
            // every slot's `base() + 255` is one too ([`Trie::new`] pads the array, and
            // [`Backtracker::read_table`] checks it): the hot loop of the search, without
            // its two bounds checks per byte.
            let next = unsafe { slots.get_unchecked(node) }.base() + usize::from(b);
            let s = unsafe { slots.get_unchecked(next) };
            if s.check as usize != node || s.base & stop != 0 {
                break;
            }
            node = next;
            depth += 1;
        }
        (node, depth)
    }

    /// The deepest reachable token at `node` (at `depth`) or above it, and its depth.
    #[inline]
    fn up_to_token(&self, mut node: usize, mut depth: usize) -> (u32, usize) {
        while node != 0 {
            let s = &self.slots[node];
            // Neither NONE nor an unreachable token.
            if s.token < UNREACHABLE_BIT {
                return (s.token, depth);
            }
            node = s.check as usize;
            depth -= 1;
        }
        (NONE, 0)
    }
}

/// The most symbols [`Backtracker::merge_short`] takes. Longer pieces take the search: the
/// merge loop looks up every adjacent pair in the (large) filter and merge table, while the
/// search's pair tests mostly hit its small memo. Callgrind, o200k mixed (5 passes) / cl100k
/// random printable ASCII (1 MB): 8 → 33.2M / 132.5M instructions, 6 → 31.4M / 136.5M,
/// 4 → 31.6M / 152.9M (many short distinct pieces, which miss the memo).
pub const SHORT: usize = 6;

/// The first step of an encoding: the longest reachable token the text starts with
/// ([`NONE`] when none) and its length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start((u32, usize));

/// Source of [`Backtracker::serial`] numbers.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// Entries of the per-thread memo of pair validity (2 MiB); a power of two. 32K entries
/// thrashed on mixed-script text (28% misses). Long runs of CJK without spaces (one piece)
/// meet more distinct pairs than 64K entries hold: o200k on 1 MB of random CJK, a single
/// pass in a fresh process, takes 145M instructions with 64K entries, 122M with 128K, 111M
/// with 256K. The memo is per thread, not shared by the threads of a batch: shared, every
/// store of one thread invalidated cache lines the other was reading, and 2-thread batches
/// on zh/ja scaled 1.6-1.75x instead of 1.85-2x.
const MEMO: usize = 1 << 18;

/// Entries per set of the memo: a pair may sit in any of the [`WAYS`] entries of its set (half
/// a cache line), so pairs whose hashes collide do not evict each other (direct-mapped, a
/// third of the lookups missed on mixed-script text, each miss a full validity test).
const WAYS: usize = 4;

/// One set of the memo, aligned so that it never straddles a cache line.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct MemoSet([u64; WAYS]);

const EMPTY_SET: MemoSet = MemoSet([u64::MAX; WAYS]);

/// The linear-time encoder of a BPE model's long words (see the module docs).
#[derive(Debug, Clone)]
pub struct Backtracker {
    /// Unique per encoder, so a scratch memo filled by another encoder is never read.
    serial: u64,
    trie: Trie,
    /// By id, up to the largest reachable id.
    info: Table<TokenInfo>,
    /// The ids of the unreachable tokens in the trie (by the index under [`UNREACHABLE_BIT`]):
    /// a separate table, so that an id of 2^32 - 1 (a special token) needs no `info` entry.
    unreachable_ids: Vec<u32>,
    steps: Table<Step>,
    merges: MergeMap,
    /// Which pairs may be merges: the validity test asks mostly about pairs that are not, and
    /// this small filter answers those without a miss in the (large) merge table.
    pair_filter: PairFilter,
    /// By two bytes `x << 8 | y`: the rank of the merge of the one-byte symbols `x` and `y`
    /// (`u32::MAX` when there is none, or a byte is not a symbol), for [`Backtracker::first_try`].
    byte_ranks: Table<u32>,
    /// By symbol id below 256: the byte whose one-byte token the symbol is ([`NONE`] when
    /// none), so that `byte_ranks` gives the first pair [`Backtracker::is_valid_pair`] looks up
    /// when both are such symbols (in byte-level models the 256 bytes are ids 0 to 255, and
    /// every token starts and ends with one). All [`NONE`] when a merge of two of them has rank
    /// `u32::MAX`, which `byte_ranks` does not tell from no merge.
    symbol_bytes: [u32; 256],
}

/// A blocked Bloom filter of pairs: two bits in one word per pair, about 8 to 16 bits per
/// pair (about 5% false positives, which only cost the exact lookup).
#[derive(Debug, Clone)]
struct PairFilter {
    words: Table<u64>,
    /// `log2(words.len())`: the word is the hash's top `index_bits` bits.
    index_bits: u32,
}

impl PairFilter {
    fn new(merges: &MergeMap) -> Self {
        let n_words = (merges.len() / 4).max(1).next_power_of_two();
        let index_bits = n_words.trailing_zeros();
        let hash = Self { words: Table::default(), index_bits };
        let mut words = vec![0; n_words];
        for ((a, b), _) in merges.iter() {
            let (w, bits) = hash.slot(a, b);
            words[w] |= bits;
        }
        Self { words: words.into(), index_bits }
    }

    /// The word of pair `(a, b)` and its two bits.
    #[inline]
    fn slot(&self, a: u32, b: u32) -> (usize, u64) {
        let h = ((u64::from(a) << 32) | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The word from the top bits; the bits from the next twelve (the low ones are weak).
        let top = h.rotate_left(self.index_bits);
        let w = (top & ((1 << self.index_bits) - 1)) as usize;
        (w, (1 << (top >> 58)) | (1 << ((top >> 52) & 63)))
    }

    /// Whether `(a, b)` may be a merge (`false`: it is not).
    #[inline]
    fn may_contain(&self, a: u32, b: u32) -> bool {
        let (w, bits) = self.slot(a, b);
        self.words[w] & bits == bits
    }
}

/// Scratch space of one [`Backtracker::encode`] call, reused between calls.
#[derive(Debug, Default)]
pub struct BacktrackScratch {
    /// Bit `p` set: position `p` may still lead to the end (only the words up to the last
    /// position found dead exist; see [`Backtracker::search`]).
    alive: Vec<u64>,
    /// The encoder whose results `memo` holds.
    owner: u64,
    /// Set-associative memo of [`Backtracker::is_valid_pair`]: `(a << 32 | b) << 1 | valid`,
    /// the most recently stored or found first in its set.
    memo: Vec<MemoSet>,
    /// The windows of a long piece's path, for reuse where the piece repeats them.
    repeats: Repeats,
    /// The positions of the search's path whose longest token is tried second (see
    /// [`Backtracker::first_try`]), with that token, in path order.
    deferred: Vec<(usize, u32)>,
}

impl BacktrackScratch {
    /// Releases the per-position buffer a long text grew; keeps the memo (fixed size), so
    /// that the pairs of one long text still answer for the next.
    pub fn release_positions(&mut self) {
        self.alive = Vec::new();
        self.deferred = Vec::new();
        self.repeats.release();
    }
}

impl Backtracker {
    /// Builds the encoder of a BPE model's words made of chars that are tokens (`chars`:
    /// their ids): every token whose own chars merge into it goes into the trie with its
    /// merge run. `None` when the vocabulary's ids are too sparse to index.
    pub fn new(vocab: &Vocab, merges: &MergeMap, chars: &CharIds) -> Option<Self> {
        Self::build(vocab, merges, false, |token, ids, key| {
            if token.chars().try_for_each(|c| chars.get(c).map(|i| ids.push(i))).is_none() {
                return false;
            }
            key.extend_from_slice(token.as_bytes());
            true
        })
    }

    /// Builds the encoder of texts written as `split` writes tokens: `split(token, symbols,
    /// key)` pushes the token's initial symbols (as the merge loop starts from them) and
    /// appends its bytes in the encoded texts to `key`, or returns `false` for a token no text
    /// can hold. Tokens whose own symbols merge into them go into the trie with their merge
    /// run; with `whole_tokens` (`ignore_merges`) the others too, for
    /// [`Backtracker::whole_token`] only.
    pub(crate) fn build(
        vocab: &Vocab,
        merges: &MergeMap,
        whole_tokens: bool,
        split: impl Fn(&str, &mut Vec<u32>, &mut Vec<u8>) -> bool + Sync,
    ) -> Option<Self> {
        // Reachable ids index a table: leave sparse vocabularies whose huge ids are reachable
        // to the merge loop (unreachable ones, such as far special tokens, cost nothing).
        let max_reachable_id = (vocab.len() * 4).max(1 << 20).min(UNREACHABLE_BIT as usize - 1);
        let mut unreachable: Vec<(&[u8], u32)> = Vec::new();
        let mut unreachable_ids = Vec::new();
        let mut info = Vec::with_capacity(vocab.len());
        let mut steps = Vec::new();
        let mut reachable: Vec<(&[u8], u32)> = Vec::with_capacity(vocab.len());
        // The merge runs of the tokens, recorded in parallel (each token's is its own: most
        // of an uncached load's build), then gathered in id order.
        let chunks = Recorded::all(vocab, merges, &split);
        for chunk in &chunks {
            // A chunk's steps are the runs of its reachable tokens, in order.
            let offset = steps.len();
            steps.extend_from_slice(&chunk.steps);
            for &Recorded { ref key, id, first, last, ref run } in &chunk.records {
                let key = &chunk.keys[key.clone()];
                let Some(run) = run.clone().filter(|r| r.len() <= u32::MAX as usize) else {
                    if whole_tokens {
                        unreachable.push((key, unreachable_ids.len() as u32 | UNREACHABLE_BIT));
                        unreachable_ids.push(id);
                    }
                    continue;
                };
                if id as usize >= info.len() {
                    if id as usize > max_reachable_id {
                        return None;
                    }
                    info.resize(id as usize + 1, UNREACHABLE);
                }
                let run_steps = &chunk.steps[run.clone()];
                info[id as usize] = TokenInfo {
                    len: key.len() as u32,
                    shorter: NONE,
                    first,
                    last,
                    run_start: u32::try_from(offset + run.start).ok()?,
                    run_len: run.len() as u32,
                    last_rank: run_steps.iter().find(|s| s.last != last).map_or(u32::MAX, |s| s.rank),
                };
                reachable.push((key, id));
            }
        }
        let trie = Trie::new(reachable.iter().chain(&unreachable).copied().collect())?;
        for (key, id) in &reachable {
            info[*id as usize].shorter = trie.longest_prefix(&key[..key.len() - 1]).0;
        }
        // The one-byte tokens that are one symbol (all 256 in a byte-level model).
        let symbol = |b: u8| Some(trie.exact(&[b])).filter(|&t| info.get(t as usize).is_some_and(|i| i.len == 1 && i.run_len == 0));
        let symbols: Vec<Option<u32>> = (0..=255).map(symbol).collect();
        let mut byte_ranks = vec![u32::MAX; 1 << 16];
        let mut ambiguous = false;
        for (x, a) in symbols.iter().enumerate() {
            for (y, b) in symbols.iter().enumerate() {
                if let (Some(a), Some(b)) = (a, b) {
                    let merge = merges.get(&(*a, *b));
                    ambiguous |= merge.is_some_and(|&(r, _)| r == u32::MAX);
                    byte_ranks[x << 8 | y] = merge.map_or(u32::MAX, |&(r, _)| r);
                }
            }
        }
        let mut symbol_bytes = [NONE; 256];
        for (byte, id) in symbols.iter().enumerate() {
            match id {
                Some(id) if *id < 256 && !ambiguous => symbol_bytes[*id as usize] = byte as u32,
                _ => {}
            }
        }
        // Grown token by token: held as long as the model.
        steps.shrink_to_fit();
        Some(Self {
            serial: SERIAL.fetch_add(1, Ordering::Relaxed) + 1,
            trie,
            info: info.into(),
            unreachable_ids,
            steps: steps.into(),
            merges: merges.clone(),
            pair_filter: PairFilter::new(merges),
            byte_ranks: byte_ranks.into(),
            symbol_bytes,
        })
    }

    /// The token that is `text` exactly, when it is reachable (then the merge loop on `text`
    /// gives it) or the encoder was built with `whole_tokens`; else [`NONE`].
    #[inline]
    pub(crate) fn whole_token(&self, text: &[u8]) -> u32 {
        self.whole(self.trie.exact(text))
    }

    /// A trie token as a whole-piece token: [`NONE`], a reachable id, or the id of an
    /// unreachable one.
    #[inline]
    fn whole(&self, t: u32) -> u32 {
        if t < UNREACHABLE_BIT || t == NONE {
            t
        } else {
            self.unreachable_ids[(t & !UNREACHABLE_BIT) as usize]
        }
    }

    /// Where the encoding of `text` starts, in one trie walk: [`Backtracker::whole_token`] of
    /// it, and the first step for [`Backtracker::encode_from`].
    #[inline]
    pub(crate) fn start(&self, text: &[u8]) -> (u32, Start) {
        let (first, exact) = self.trie.walk(text);
        (self.whole(exact), Start(first))
    }

    #[inline]
    fn run(&self, t: u32) -> &[Step] {
        let i = &self.info[t as usize];
        &self.steps[i.run_start as usize..(i.run_start + i.run_len) as usize]
    }

    /// The rank of the merge of `(a, b)`, or `u64::MAX`.
    #[inline]
    fn rank(&self, a: u32, b: u32) -> u64 {
        if !self.pair_filter.may_contain(a, b) {
            return u64::MAX;
        }
        self.merges.get(&(a, b)).map_or(u64::MAX, |&(r, _)| u64::from(r))
    }

    /// Whether the merge loop on the chars of `a` then `b` gives `[a, b]`: the two merge runs
    /// are interleaved as the loop takes them (lowest rank first; on a tie the left token's
    /// merge, then the pair across the edge, then the right token's merge), and the pair
    /// across the edge must never be the one taken.
    pub fn is_valid_pair(&self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.run(a), self.run(b));
        let (mut i, mut j) = (0, 0);
        let (mut x, mut y) = (self.info[a as usize].last, self.info[b as usize].first);
        let mut cross = match (self.symbol_bytes.get(x as usize), self.symbol_bytes.get(y as usize)) {
            (Some(&bx), Some(&by)) if (bx | by) < 256 => {
                let r = self.byte_ranks[(bx << 8 | by) as usize];
                if r == u32::MAX {
                    u64::MAX
                } else {
                    u64::from(r)
                }
            }
            _ => self.rank(x, y),
        };
        loop {
            let next_a = ra.get(i).map_or(u64::MAX, |s| u64::from(s.rank));
            let next_b = rb.get(j).map_or(u64::MAX, |s| u64::from(s.rank));
            // `cross < u64::MAX` also catches the final `(a, b)` merge when both runs are done.
            if cross < next_a && cross <= next_b {
                return false;
            }
            if next_a == u64::MAX && next_b == u64::MAX {
                return true;
            }
            if next_a <= next_b {
                let nx = ra[i].last;
                i += 1;
                if nx != x {
                    x = nx;
                    cross = self.rank(x, y);
                }
            } else {
                let ny = rb[j].first;
                j += 1;
                if ny != y {
                    y = ny;
                    cross = self.rank(x, y);
                }
            }
        }
    }

    /// The first and the last symbol of token `t` when it is reachable (only reachable tokens
    /// are ever symbols of the merge loop on a text: the merges that made one are those the
    /// loop takes on its span alone), else `None`.
    #[inline]
    pub(crate) fn edge_symbols(&self, t: u32) -> Option<(u32, u32)> {
        self.info.get(t as usize).filter(|i| i.len > 0).map(|i| (i.first, i.last))
    }

    /// The model's merges.
    pub(crate) fn merges(&self) -> &MergeMap {
        &self.merges
    }

    /// The number of token ids the backtracker knows (those of [`Self::edge_symbols`]).
    pub(crate) fn tokens(&self) -> usize {
        self.info.len()
    }

    /// The length of the first step `start` (the longest reachable token the text starts
    /// with; 0 when none).
    #[inline(always)]
    pub(crate) fn start_len(start: Start) -> usize {
        start.0 .1
    }

    /// A number no other encoder of this process has, for caches of its results.
    #[inline]
    pub(crate) fn serial(&self) -> u64 {
        self.serial
    }

    /// Byte length of token `t` in the model's strings (0 when `t` is not reachable).
    #[inline]
    pub fn token_len(&self, t: u32) -> u32 {
        self.info.get(t as usize).map_or(0, |i| i.len)
    }

    /// Encodes a short word whose initial symbols are `ids[..n]` (`n` at most [`SHORT`]) by
    /// the merge loop itself, leaving its tokens at the start of `ids`; returns their number.
    /// `pairs[i]` is the [`Backtracker::packed_merge`] of `ids[i]` and `ids[i + 1]` (`u64::MAX`
    /// past the word). For a few symbols this is cheaper than the search (no scratch, no
    /// validity tests).
    ///
    /// The same loop as [`merge_loop`], over all [`SHORT`] slots whatever `n`: the scans and
    /// shifts then have fixed trip counts and compile to selects, where loops of `n - 1` steps
    /// mispredicted their exit on most words of text whose pieces vary in length (random
    /// printable ASCII: 2.7M mispredicted branches per MB, half of them in the merge loop).
    #[inline]
    pub fn merge_short(&self, ids: &mut [u32; SHORT], mut pairs: [u64; SHORT - 1], n: usize) -> usize {
        let mut n = n.min(SHORT);
        loop {
            let (mut at, mut best) = (0, pairs[0]);
            for (i, &p) in pairs.iter().enumerate().skip(1) {
                if p < best {
                    (at, best) = (i, p);
                }
            }
            if best == u64::MAX {
                return n;
            }
            ids[at] = best as u32;
            for k in 1..SHORT - 1 {
                if k > at {
                    ids[k] = ids[k + 1];
                    pairs[k - 1] = pairs[k];
                }
            }
            pairs[SHORT - 2] = u64::MAX;
            n -= 1;
            if at > 0 {
                pairs[at - 1] = self.packed_merge(ids[at - 1], ids[at]);
            }
            if at + 1 < n {
                pairs[at] = self.packed_merge(ids[at], ids[at + 1]);
            }
        }
    }

    /// The [`packed`] merge of `(a, b)`.
    #[inline]
    pub fn packed_merge(&self, a: u32, b: u32) -> u64 {
        if !self.pair_filter.may_contain(a, b) {
            return u64::MAX;
        }
        packed(self.merges.get(&(a, b)))
    }

    /// Encodes `text` (a word written as the encoder was built: UTF-8 of the model's chars,
    /// or raw bytes), appending its token ids to `out`; returns false, with `out` as it was,
    /// when some char of `text` is not a token.
    pub fn encode(&self, text: &[u8], out: &mut Vec<u32>, scratch: &mut BacktrackScratch) -> bool {
        self.encode_from(text, Start(self.trie.longest_prefix(text)), out, scratch)
    }

    /// [`Backtracker::encode`] from the first step [`Backtracker::start`] gave for `text`.
    pub(crate) fn encode_from(&self, text: &[u8], start: Start, out: &mut Vec<u32>, scratch: &mut BacktrackScratch) -> bool {
        if scratch.owner != self.serial {
            scratch.owner = self.serial;
            scratch.memo.clear();
            scratch.memo.resize(MEMO / WAYS, EMPTY_SET);
        }
        let memo = &mut scratch.memo;
        // A memo entry is `(a << 32 | b) << 1 | valid` (ids are below 2^31).
        let mut valid = |a: u32, b: u32| {
            let key = ((u64::from(a) << 32) | u64::from(b)) << 1;
            let at = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - (MEMO / WAYS).trailing_zeros())) as usize;
            let set = &mut memo[at & (MEMO / WAYS - 1)].0;
            if set[0] | 1 == key | 1 {
                return set[0] & 1 == 1;
            }
            if let Some(k) = set[1..].iter().position(|&e| e | 1 == key | 1) {
                // A hit moves to the front: the pairs asked again and again (a script's
                // in-char splits) are then found in one compare, with a predictable branch
                // (and a hit at the front stores nothing).
                set.swap(0, k + 1);
                return set[0] & 1 == 1;
            }
            let v = self.is_valid_pair(a, b);
            *set = [key | u64::from(v), set[0], set[1], set[2]];
            v
        };
        let BacktrackScratch { alive, repeats, deferred, .. } = scratch;
        if text.len() >= MIN_PIECE {
            repeats.start(out.len(), text.len());
            self.search::<true>(text, start, out, &mut valid, alive, repeats, deferred)
        } else {
            self.search::<false>(text, start, out, &mut valid, alive, repeats, deferred)
        }
    }

    /// The first candidate to try at `pos`, whose longest token is `t` (of `len` bytes):
    /// `t`, or, when the byte after `t` merges with `t`'s last byte at a lower rank than the
    /// merge that takes that byte into `t`, and is not taken first by the byte after it (then
    /// `t` is often not the valid token: on random digits, two times in three), the next
    /// shorter token, with `t` deferred to right after
    /// it (recorded in `deferred`). A wrong longest token costs a dead end: a push, a trie
    /// walk and the pair tests of every token after it. Any order of the candidates gives
    /// the same tokens (see the module docs); this one only saves work.
    ///
    /// `deferred` holds no position from `pos` on: the search comes back to a position only
    /// once every candidate after it failed, and the last candidate at a position with a
    /// deferred token comes after that token (see [`Backtracker::next_try`]).
    #[inline(always)]
    fn first_try(&self, text: &[u8], pos: usize, (t, len): (u32, usize), deferred: &mut Vec<(usize, u32)>) -> (u32, usize) {
        // `len == 0` when there is no token (`t == NONE`).
        let end = pos + len;
        if len < 2 || end >= text.len() {
            return (t, len);
        }
        let rank = self.byte_rank(text, end - 1);
        if rank == u32::MAX {
            return (t, len);
        }
        let info = &self.info[t as usize];
        if rank >= info.last_rank || info.shorter == NONE {
            return (t, len);
        }
        // Unless the byte after the token merges first with the one after it (and that one is
        // not taken first by the next).
        if end + 1 < text.len() {
            let right = self.byte_rank(text, end);
            if right < rank && (end + 2 >= text.len() || self.byte_rank(text, end + 1) >= right) {
                return (t, len);
            }
        }
        deferred.push((pos, t));
        (info.shorter, self.token_len(info.shorter) as usize)
    }

    /// The `byte_ranks` entry of bytes `at` and `at + 1` of `text`.
    #[inline(always)]
    fn byte_rank(&self, text: &[u8], at: usize) -> u32 {
        self.byte_ranks[(usize::from(text[at]) << 8 | usize::from(text[at + 1])) & 0xffff]
    }

    /// The candidate after `t` at `pos`: the next shorter token, except around a token
    /// [`Backtracker::first_try`] deferred (tried right after the next shorter one, then on
    /// from that one).
    #[inline(always)]
    fn next_try(&self, pos: usize, t: u32, deferred: &mut Vec<(usize, u32)>) -> (u32, usize) {
        let next = match deferred.last() {
            Some(&(p, longest)) if p == pos && t == longest => {
                deferred.pop();
                self.info[self.info[t as usize].shorter as usize].shorter
            }
            Some(&(p, longest)) if p == pos && t == self.info[longest as usize].shorter => longest,
            _ => self.info[t as usize].shorter,
        };
        (next, self.token_len(next) as usize)
    }

    /// The search of [`Backtracker::encode_from`], with `valid` the (memoised) pair test;
    /// with `REPEATS`, reusing the windows of its path where the text repeats them (see
    /// [`Repeats`]).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn search<const REPEATS: bool>(
        &self,
        text: &[u8],
        start: Start,
        out: &mut Vec<u32>,
        valid: &mut impl FnMut(u32, u32) -> bool,
        alive: &mut Vec<u64>,
        repeats: &mut Repeats,
        deferred: &mut Vec<(usize, u32)>,
    ) -> bool {
        let n = text.len();
        let base = out.len();
        // Positions from `dead_end` on are all alive, and only the bits below it are read:
        // the words are added (all alive) as positions are marked dead, so a search that
        // meets no dead end (most of them) neither fills nor reads the bits.
        alive.clear();
        let mut dead_end = 0;
        let is_alive = |alive: &[u64], p: usize, dead_end: usize| p >= dead_end || alive[p / 64] >> (p % 64) & 1 == 1;
        // At most a token per byte: the pushes below never reallocate.
        out.reserve(n);
        let mut pos = 0;
        deferred.clear();
        // Made once at its largest, not grown: each growth copied it (r50k on 400 KB of random
        // digits defers a token at 27% of the positions: 2.2 MB copied). Pages past what the
        // search fills are never touched; a piece past a million bytes grows it as it goes.
        deferred.reserve(n.min(1 << 20));
        let (mut t, mut len) = self.first_try(text, 0, start.0, deferred);
        while pos < n {
            // The longest token at `pos` that leads on and fits the token before it.
            while t != NONE {
                if is_alive(alive, pos + len, dead_end) && (out.len() == base || valid(out[out.len() - 1], t)) {
                    break;
                }
                (t, len) = self.next_try(pos, t, deferred);
            }
            if t != NONE {
                out.push(t);
                pos += len;
                if REPEATS {
                    repeats.pushed(text, pos, out);
                    while let Some(end) =
                        repeats.reuse(text, pos, out, |last, first, end| is_alive(alive, end, dead_end) && valid(last, first))
                    {
                        pos = end;
                    }
                }
                (t, len) = self.first_try(text, pos, self.trie.longest_prefix(&text[pos..]), deferred);
                continue;
            }
            // No way on from `pos`: it is dead; try the next shorter token before it.
            if pos / 64 >= alive.len() {
                alive.resize(pos / 64 + 1, u64::MAX);
            }
            alive[pos / 64] &= !(1 << (pos % 64));
            dead_end = dead_end.max(pos + 1);
            if out.len() == base {
                return false;
            }
            let Some(last) = out.pop() else { return false };
            pos -= self.token_len(last) as usize;
            if REPEATS && repeats.popped(pos, out.len()) {
                // A reused token: the longer ones at `pos` were never tried.
                (t, len) = self.first_try(text, pos, self.trie.longest_prefix(&text[pos..]), deferred);
            } else {
                (t, len) = self.next_try(pos, last, deferred);
            }
        }
        true
    }
}

/// A token as [`Backtracker::build`] records it: its bytes in the encoded texts (a range of
/// its chunk's keys), its id, its first and last initial symbol, and its merge run (a range of
/// its chunk's steps; `None` when its own symbols do not merge into it: it is not reachable).
struct Recorded {
    key: std::ops::Range<usize>,
    id: u32,
    first: u32,
    last: u32,
    run: Option<std::ops::Range<usize>>,
}

/// The tokens of a part of a vocabulary as [`Recorded::all`] records them: the runs of its
/// reachable tokens and the bytes of all its tokens, each in one buffer (a buffer per token
/// cost an allocation and a free each).
struct RecordedChunk {
    steps: Vec<Step>,
    keys: Vec<u8>,
    records: Vec<Recorded>,
}

/// Tokens per chunk of [`Recorded::all`]: enough that a chunk's bookkeeping costs nothing next
/// to its merge runs, few enough that two threads share a 100k vocabulary evenly.
const RECORD_CHUNK: usize = 4096;

impl Recorded {
    /// Every token of `vocab` that `split` writes (see [`Backtracker::build`]), in id order, by
    /// chunks of [`RECORD_CHUNK`] tokens recorded in parallel.
    fn all(vocab: &Vocab, merges: &MergeMap, split: &(impl Fn(&str, &mut Vec<u32>, &mut Vec<u8>) -> bool + Sync)) -> Vec<RecordedChunk> {
        use rayon::prelude::*;
        let record = |range: std::ops::Range<usize>| {
            let mut chunk = RecordedChunk { steps: Vec::new(), keys: Vec::new(), records: Vec::with_capacity(range.len()) };
            let (mut ids, mut pairs) = (Vec::new(), Vec::new());
            for (token, id) in vocab.iter_range(range) {
                ids.clear();
                let key_start = chunk.keys.len();
                if token.is_empty()
                    || id == NONE
                    || !split(token, &mut ids, &mut chunk.keys)
                    || chunk.keys.len() == key_start
                    || ids.is_empty()
                {
                    chunk.keys.truncate(key_start);
                    continue;
                }
                let (first, last) = (ids[0], ids[ids.len() - 1]);
                let run_start = chunk.steps.len();
                record_run(&mut ids, merges, &mut chunk.steps, &mut pairs);
                let run = (ids.as_slice() == [id]).then_some(run_start..chunk.steps.len());
                if run.is_none() {
                    chunk.steps.truncate(run_start);
                }
                chunk.records.push(Recorded { key: key_start..chunk.keys.len(), id, first, last, run });
            }
            chunk
        };
        let n = vocab.len();
        if n <= RECORD_CHUNK {
            return vec![record(0..n)];
        }
        (0..n.div_ceil(RECORD_CHUNK)).into_par_iter().map(|c| record(c * RECORD_CHUNK..n.min((c + 1) * RECORD_CHUNK))).collect()
    }
}

/// The merge loop (lowest rank first, leftmost on ties) on `ids`, recording each merge's rank
/// and the first and last symbol after it. For token strings only.
/// `pairs` is scratch space reused between calls.
fn record_run(ids: &mut Vec<u32>, merges: &MergeMap, steps: &mut Vec<Step>, pairs: &mut Vec<u64>) {
    pairs.clear();
    pairs.resize(ids.len(), 0);
    let n = merge_loop(
        ids,
        pairs,
        |a, b| packed(merges.get(&(a, b))),
        |rank, ids| {
            steps.push(Step { rank, first: ids[0], last: ids[ids.len() - 1] });
        },
    );
    ids.truncate(n);
}

/// A pair's merge as `rank << 32 | new id` (`u64::MAX`: no merge), so that the smallest value
/// is the lowest rank and the first smallest the leftmost.
#[inline]
fn packed(merge: Option<&(u32, u32)>) -> u64 {
    merge.map_or(u64::MAX, |&(rank, id)| (u64::from(rank) << 32) | u64::from(id))
}

/// The merge loop on `ids` in place, scanning the pairs (`O(n)` per merge): the lowest rank
/// first, the leftmost on ties, until none applies. `merge(a, b)` is the [`packed`] merge of a
/// pair; `pairs` is scratch of at least `ids.len()` entries; `step(rank, symbols)` is called
/// after each merge. Returns the number of symbols left at the start of `ids`.
///
/// On words whose symbols are their chars (or bytes) this is exactly what the queue of
/// [`super::Word::merge_all`] does: a queued pair is stale only when its span changed, and
/// then it makes another token.
#[inline]
fn merge_loop(ids: &mut [u32], pairs: &mut [u64], merge: impl Fn(u32, u32) -> u64, mut step: impl FnMut(u32, &[u32])) -> usize {
    let mut n = ids.len();
    if n < 2 {
        return n;
    }
    for i in 0..n - 1 {
        pairs[i] = merge(ids[i], ids[i + 1]);
    }
    loop {
        let (mut at, mut best) = (0, u64::MAX);
        for (i, &p) in pairs[..n - 1].iter().enumerate() {
            if p < best {
                (at, best) = (i, p);
            }
        }
        if best == u64::MAX {
            return n;
        }
        ids[at] = best as u32;
        // Shifts by hand: the words are short, a `memmove` call would cost more.
        for k in at + 1..n - 1 {
            ids[k] = ids[k + 1];
            pairs[k - 1] = pairs[k];
        }
        n -= 1;
        if at > 0 {
            pairs[at - 1] = merge(ids[at - 1], ids[at]);
        }
        if at + 1 < n {
            pairs[at] = merge(ids[at], ids[at + 1]);
        }
        step((best >> 32) as u32, &ids[..n]);
    }
}

use crate::utils::table_cache::{Pod, Reader, Table, Writer};

impl Backtracker {
    /// Writes the encoder's tables (not its merges, which the model holds), for
    /// [`crate::utils::table_cache`].
    pub(crate) fn write_table(&self, w: &mut Writer) {
        w.table(&self.trie.slots);
        w.table(&self.info);
        w.u32s(&self.unreachable_ids);
        w.table(&self.steps);
        w.table(&self.pair_filter.words);
        w.u32(self.pair_filter.index_bits);
        w.table(&self.byte_ranks);
        w.u32s(&self.symbol_bytes);
    }

    /// Reads what [`Backtracker::write_table`] wrote, with `merges` (the model's).
    pub(crate) fn read_table(r: &mut Reader<'_>, merges: &MergeMap) -> crate::Result<Self> {
        let bad = || crate::Error::invalid("table cache: malformed backtracker");
        let slots: Table<Slot> = r.table()?;
        let info: Table<TokenInfo> = r.table()?;
        let unreachable_ids = r.u32s()?;
        let steps: Table<Step> = r.table()?;
        let words: Table<u64> = r.table()?;
        let index_bits = r.u32()?;
        let byte_ranks: Table<u32> = r.table()?;
        let symbol_bytes: [u32; 256] = r.u32s()?.try_into().map_err(|_| bad())?;
        // What the encoder indexes without checking must be in bounds: every base + byte in
        // the trie (padded by 256 past the last base), every run in the steps.
        let slots_ok = !slots.is_empty() && slots.iter().all(|s| s.base() + 256 <= slots.len());
        let runs_ok = info.iter().all(|t| (t.run_start as usize).checked_add(t.run_len as usize).is_some_and(|e| e <= steps.len()));
        if !slots_ok
            || !runs_ok
            || words.len() != 1usize.checked_shl(index_bits).unwrap_or(0)
            || byte_ranks.len() != 1 << 16
            || symbol_bytes.iter().any(|&b| b >= 256 && b != NONE)
        {
            return Err(bad());
        }
        Ok(Self {
            serial: SERIAL.fetch_add(1, Ordering::Relaxed) + 1,
            trie: Trie { slots },
            info,
            unreachable_ids,
            steps,
            merges: merges.clone(),
            pair_filter: PairFilter { words, index_bits },
            byte_ranks,
            symbol_bytes,
        })
    }
}
