//! sentencepiece 0.2.3's BPE trainer (`bpe_model_trainer.cc`), with the same pieces and scores.
//!
//! The rules that decide the result, as sentencepiece has them: a pair of adjacent symbols is a
//! candidate only if the merged piece is valid ([`PieceRules`]); the best candidate has the
//! highest count, then the fewest chars, then the smallest UTF-8 string (a priority queue whose
//! entries are checked against the current count when they come out); a piece already taken
//! through another pair of halves is skipped, and so is every later pair that spells it; the
//! occurrences of the best pair are merged in the order they were found (the words in their
//! order, then each new adjacency as merges make it); the score of the n-th piece is `-n`; the
//! required chars follow the merged pieces by decreasing count. Counts are kept exact
//! incrementally. Where sentencepiece leaves a tie to its hash map and heap order (two pairs
//! spelling the same piece with the same count), the pair made first wins.
//!
//! Memory: the words are one array of symbol ids (4 bytes per char, merged-away chars left as
//! holes, as sentencepiece does), and each pair keeps the places it was found as
//! `(word, index)` (8 bytes each), freed when the pair is merged or no longer occurs.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use ahash::{AHashMap, AHashSet};
use rayon::prelude::*;

use crate::models::sentencepiece::bpe::IdHasher;

use crate::models::unigram::trainer::piece_rules::{PieceRules, UNK_CHAR};
use crate::Result;

/// "No halves" for a char; an unknown char in the char table.
const NONE: u32 = u32::MAX;

/// The mark of a hole in a word (a position inside a merged symbol, not its first): the hole at
/// a symbol's last position holds `HOLE | first`, the index in the word of that symbol's first
/// position, so that the symbol before any position is found in one step. Symbol ids are below
/// it.
const HOLE: u32 = 1 << 31;

/// What is known of a pair of adjacent symbols.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PairState {
    /// A candidate: its symbol.
    Symbol(u32),
    /// Not a valid piece (or holding the unknown char).
    Invalid,
    /// Merged already, or spelling a piece that was: never a candidate again.
    Dead,
}

/// A [`PairState`] in 4 bytes (the pair table holds hundreds of thousands).
#[derive(Clone, Copy)]
struct Packed(u32);

impl Packed {
    const INVALID: u32 = u32::MAX;
    const DEAD: u32 = u32::MAX - 1;

    fn pack(state: PairState) -> Self {
        Self(match state {
            PairState::Symbol(id) => id,
            PairState::Invalid => Self::INVALID,
            PairState::Dead => Self::DEAD,
        })
    }

    fn unpack(self) -> PairState {
        match self.0 {
            Self::INVALID => PairState::Invalid,
            Self::DEAD => PairState::Dead,
            id => PairState::Symbol(id),
        }
    }
}

/// A pair of symbol ids as a table key (8 bytes, hashed as one `u64`).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key(u32, u32);

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64((u64::from(self.0) << 32) | u64::from(self.1));
    }
}

struct Sym {
    /// The halves (`NONE` for a char).
    left: u32,
    right: u32,
    /// The piece: `text[start..start + len]`.
    start: u32,
    len: u32,
    chars: u32,
    /// Occurrences, weighted by word count (exact).
    freq: i64,
    is_unk: bool,
    /// Still a candidate (sentencepiece: in its symbol cache and active).
    live: bool,
    /// Its count went down since its last queue entry (`needs_recomputation`).
    stale: bool,
    /// Waiting to be queued after the current merge.
    pending: bool,
}

/// A queue entry: a symbol with its count when queued.
#[derive(Clone, Copy)]
struct Entry {
    freq: i64,
    sym: u32,
    /// The symbol's chars (high 8 bits) and its first 3 bytes (0 where it is shorter; pieces
    /// hold no NUL): ordered as the tie-break of [`Bpe::better`], so that only entries equal
    /// here compare their whole strings.
    rank: u32,
}

struct Bpe<'a> {
    rules: PieceRules,
    syms: Vec<Sym>,
    /// The places each pair was found: `(word, index of its left symbol)`.
    positions: Vec<Vec<(u32, u32)>>,
    text: Vec<u8>,
    chars: AHashMap<char, u32>,
    pairs: HashMap<Key, Packed, BuildHasherDefault<IdHasher>>,
    /// The words' symbols, one after another, each at its first char's position and followed
    /// by holes (see [`HOLE`]) up to its last: a symbol spans as many positions as it has chars.
    seq: Vec<u32>,
    /// Word `w` is `seq[starts[w]..starts[w + 1]]`.
    starts: Vec<u32>,
    freqs: &'a [u64],
    /// A max-heap of entries, by [`Self::better`].
    heap: Vec<Entry>,
    pending: Vec<u32>,
    /// Scratch for checking a piece.
    scratch: Vec<char>,
}

impl Bpe<'_> {
    fn text(&self, s: u32) -> &[u8] {
        let (start, len) = self.span(s);
        &self.text[start..start + len]
    }

    /// Where the piece of `s` is in `text`: (start, length).
    fn span(&self, s: u32) -> (usize, usize) {
        let s = &self.syms[s as usize];
        (s.start as usize, s.len as usize)
    }

    fn char_sym(&mut self, c: char) -> u32 {
        if let Some(&id) = self.chars.get(&c) {
            return id;
        }
        let id = self.syms.len() as u32;
        let start = self.text.len() as u32;
        let mut buf = [0u8; 4];
        self.text.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        self.syms.push(Sym {
            left: NONE,
            right: NONE,
            start,
            len: c.len_utf8() as u32,
            chars: 1,
            freq: 0,
            is_unk: c == UNK_CHAR,
            live: true,
            stale: false,
            pending: false,
        });
        self.positions.push(Vec::new());
        self.chars.insert(c, id);
        id
    }

    /// `GetPairSymbol`: what the pair `l r` is, made on first sight.
    fn pair(&mut self, l: u32, r: u32) -> PairState {
        if self.syms[l as usize].is_unk || self.syms[r as usize].is_unk {
            return PairState::Invalid;
        }
        if let Some(&state) = self.pairs.get(&Key(l, r)) {
            return state.unpack();
        }
        let (l_span, r_span) = (self.span(l), self.span(r));
        let chars = self.syms[l as usize].chars + self.syms[r as usize].chars;
        // (Symbol ids stay below `HOLE`: 2^31 pairs would take over 100 GB before that.)
        let valid = chars as usize <= self.rules.max_len && self.syms.len() < HOLE as usize && {
            self.scratch.clear();
            for (start, len) in [l_span, r_span] {
                let part = std::str::from_utf8(&self.text[start..start + len]).expect("pieces are made of whole chars");
                self.scratch.extend(part.chars());
            }
            self.rules.is_valid(&self.scratch)
        };
        let state = if valid {
            let id = self.syms.len() as u32;
            let start = self.text.len() as u32;
            self.text.extend_from_within(l_span.0..l_span.0 + l_span.1);
            self.text.extend_from_within(r_span.0..r_span.0 + r_span.1);
            self.syms.push(Sym {
                left: l,
                right: r,
                start,
                len: (l_span.1 + r_span.1) as u32,
                chars,
                freq: 0,
                is_unk: false,
                live: true,
                stale: true,
                pending: false,
            });
            self.positions.push(Vec::new());
            PairState::Symbol(id)
        } else {
            PairState::Invalid
        };
        self.pairs.insert(Key(l, r), Packed::pack(state));
        state
    }

    /// The position of the symbol after the one at `i` (a symbol's first position) in word `w`.
    fn next(&self, w: u32, i: u32) -> Option<u32> {
        let (start, end) = (self.starts[w as usize], self.starts[w as usize + 1]);
        let k = i + self.syms[self.seq[(start + i) as usize] as usize].chars;
        (start + k < end).then_some(k)
    }

    /// The position of the symbol before the one at `i` (a symbol's first position) in word `w`.
    fn prev(&self, w: u32, i: u32) -> Option<u32> {
        let before = self.seq[(self.starts[w as usize] + i.checked_sub(1)?) as usize];
        Some(if before & HOLE != 0 { before & !HOLE } else { i - 1 })
    }

    fn at(&self, w: u32, i: u32) -> u32 {
        self.seq[(self.starts[w as usize] + i) as usize]
    }

    /// `AddNewPair`: symbols `li` and `ri` of word `w` became adjacent.
    fn add_pair(&mut self, w: u32, li: u32, ri: u32) {
        if let PairState::Symbol(id) = self.pair(self.at(w, li), self.at(w, ri)) {
            let s = &mut self.syms[id as usize];
            s.freq += self.freqs[w as usize] as i64;
            if !s.pending {
                s.pending = true;
                self.pending.push(id);
            }
            let places = &mut self.positions[id as usize];
            if places.len() == places.capacity() {
                // Grow by half, not double: these lists hold most of the memory.
                places.reserve_exact((places.len() / 2).max(2));
            }
            places.push((w, li));
        }
    }

    /// `ResetFreq`: symbols `li` and `ri` of word `w` are no longer adjacent.
    fn remove_pair(&mut self, w: u32, li: u32, ri: u32, best: u32) {
        if let PairState::Symbol(id) = self.pair(self.at(w, li), self.at(w, ri)) {
            if id != best {
                let s = &mut self.syms[id as usize];
                s.freq -= self.freqs[w as usize] as i64;
                s.stale = true;
            }
        }
    }

    /// `ComputeFreq`: the count is exact already; a pair that no longer occurs forgets where
    /// it was.
    fn settle(&mut self, id: u32) {
        let s = &mut self.syms[id as usize];
        if s.stale {
            s.stale = false;
            if s.freq == 0 {
                self.positions[id as usize] = Vec::new();
            }
        }
    }

    /// The symbol is merged or spells a merged piece: never a candidate again.
    fn kill(&mut self, id: u32) {
        let s = &mut self.syms[id as usize];
        s.live = false;
        let k = Key(s.left, s.right);
        self.positions[id as usize] = Vec::new();
        self.pairs.insert(k, Packed::pack(PairState::Dead));
    }

    /// The queue entry of `sym` with its current count.
    fn entry(&self, sym: u32) -> Entry {
        let text = self.text(sym);
        let byte = |i: usize| u32::from(text.get(i).copied().unwrap_or(0));
        // Pieces of 255 chars or more (`max_sentencepiece_length` goes up to 512) all rank
        // alike and are told apart by `better`.
        let chars = self.syms[sym as usize].chars;
        let rank = if chars >= 255 { 255 << 24 } else { chars << 24 | byte(0) << 16 | byte(1) << 8 | byte(2) };
        Entry { freq: self.syms[sym as usize].freq, sym, rank }
    }

    /// sentencepiece's order of preference: higher count, fewer chars, smaller string; then
    /// the symbol made first.
    fn better(&self, a: Entry, b: Entry) -> Ordering {
        a.freq
            .cmp(&b.freq)
            .then(b.rank.cmp(&a.rank))
            .then_with(|| {
                let (sa, sb) = (&self.syms[a.sym as usize], &self.syms[b.sym as usize]);
                sb.chars.cmp(&sa.chars).then_with(|| self.text(b.sym).cmp(self.text(a.sym)))
            })
            .then(b.sym.cmp(&a.sym))
    }

    fn push(&mut self, e: Entry) {
        self.heap.push(e);
        let mut i = self.heap.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.better(self.heap[i], self.heap[parent]) != Ordering::Greater {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        let top = *self.heap.first()?;
        let last = self.heap.pop().expect("not empty");
        if !self.heap.is_empty() {
            self.heap[0] = last;
            let n = self.heap.len();
            let mut i = 0;
            loop {
                let (l, r) = (2 * i + 1, 2 * i + 2);
                let mut m = i;
                if l < n && self.better(self.heap[l], self.heap[m]) == Ordering::Greater {
                    m = l;
                }
                if r < n && self.better(self.heap[r], self.heap[m]) == Ordering::Greater {
                    m = r;
                }
                if m == i {
                    break;
                }
                self.heap.swap(i, m);
                i = m;
            }
        }
        Some(top)
    }

    /// Queues the symbols whose count went up (`pending_queue_`).
    fn queue_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for &id in &pending {
            self.syms[id as usize].pending = false;
            if self.syms[id as usize].live {
                self.settle(id);
                self.push(self.entry(id));
            }
        }
        self.pending = pending;
        self.pending.clear();
    }

    /// The best candidate, taken off the queue.
    fn best(&mut self) -> Option<u32> {
        while let Some(e) = self.pop() {
            let s = &self.syms[e.sym as usize];
            if !s.live {
                continue;
            }
            if s.stale {
                self.settle(e.sym);
                self.push(self.entry(e.sym));
                continue;
            }
            if e.freq == s.freq {
                return Some(e.sym);
            }
        }
        None
    }

    /// `AcceptSymbol`: merges the occurrences of `best`, in the order they were found.
    fn merge(&mut self, best: u32) {
        let (l, r) = (self.syms[best as usize].left, self.syms[best as usize].right);
        let positions = std::mem::take(&mut self.positions[best as usize]);
        for &(w, li) in &positions {
            // An occurrence the pair no longer holds (merged away, or its neighbours merged).
            if self.at(w, li) != l {
                continue;
            }
            let Some(ri) = self.next(w, li) else { continue };
            if self.at(w, ri) != r {
                continue;
            }
            let prev = self.prev(w, li);
            let next = self.next(w, ri);
            if let Some(p) = prev {
                self.remove_pair(w, p, li, best);
            }
            if let Some(n) = next {
                self.remove_pair(w, ri, n, best);
            }
            let start = self.starts[w as usize];
            let last = ri + self.syms[r as usize].chars - 1;
            self.seq[(start + li) as usize] = best;
            self.seq[(start + ri) as usize] = HOLE | li;
            self.seq[(start + last) as usize] = HOLE | li;
            if let Some(p) = prev {
                self.add_pair(w, p, li);
            }
            if let Some(n) = next {
                self.add_pair(w, li, n);
            }
        }
        self.kill(best);
    }
}

/// The distinct pairs of adjacent chars of a run of words (no unk char in them), in the order
/// first seen, with their number of occurrences and their count weighted by the word counts.
type ChunkPairs = Vec<(Key, u32, i64)>;

/// Writes the symbols of `words` (their chars numbered by `table`, by code point; all known)
/// to `seq` (exactly as long) and returns their pairs.
fn chunk_pairs(words: &[(String, u64)], seq: &mut [u32], table: &[u32], unk: u32) -> ChunkPairs {
    let mut keys = ChunkPairs::new();
    let mut index: HashMap<Key, u32, BuildHasherDefault<IdHasher>> = HashMap::default();
    let mut start = 0;
    for (w, n) in words {
        let mut end = start;
        for c in w.chars() {
            seq[end] = table[c as usize];
            end += 1;
        }
        for pair in seq[start..end].windows(2) {
            let (l, r) = (pair[0], pair[1]);
            if l == unk || r == unk {
                continue;
            }
            let k = *index.entry(Key(l, r)).or_insert_with(|| {
                keys.push((Key(l, r), 0, 0));
                (keys.len() - 1) as u32
            });
            let entry = &mut keys[k as usize];
            entry.1 += 1;
            entry.2 += *n as i64;
        }
        start = end;
    }
    keys
}

/// Learns `n_merges` pieces from `words` (a text and its count, in sentencepiece's order) and
/// appends the `required` chars (in their order); returns pieces with scores.
/// The words are dropped once they are turned into symbols.
///
/// The table of adjacent pairs is built in parallel (runs of words on the current rayon pool),
/// then numbered and placed in the order a single pass over the words would find them, so the
/// result does not depend on the thread count.
pub fn train(words: Vec<(String, u64)>, required: &[(char, u64)], n_merges: usize, rules: PieceRules) -> Result<Vec<(String, f32)>> {
    let freqs: Vec<u64> = words.iter().map(|(_, n)| *n).collect();
    let mut t = Bpe {
        rules,
        syms: Vec::new(),
        positions: Vec::new(),
        text: Vec::new(),
        chars: AHashMap::new(),
        pairs: HashMap::default(),
        seq: Vec::new(),
        starts: Vec::with_capacity(words.len() + 1),
        freqs: &freqs,
        heap: Vec::new(),
        pending: Vec::new(),
        scratch: Vec::new(),
    };
    for &(c, _) in required {
        t.char_sym(c);
    }
    let unk = t.char_sym(UNK_CHAR);
    // Chars beyond the required ones get their numbers in the order first seen, as one pass
    // over the words would give them.
    let per_chunk = words.len().div_ceil(rayon::current_num_threads() * 8).max(256);
    let known: Vec<char> = t.chars.keys().copied().collect();
    let unseen: Vec<Vec<char>> = words
        .par_chunks(per_chunk)
        .map(|chunk| {
            let mut seen: AHashSet<char> = known.iter().copied().collect();
            let mut new = Vec::new();
            for c in chunk.iter().flat_map(|(w, _)| w.chars()) {
                if seen.insert(c) {
                    new.push(c);
                }
            }
            new
        })
        .collect();
    for c in unseen.into_iter().flatten() {
        t.char_sym(c);
    }
    let max_char = t.chars.keys().map(|&c| c as usize).max().unwrap_or(0);
    let mut table = vec![NONE; max_char + 1];
    for (&c, &id) in &t.chars {
        table[c as usize] = id;
    }
    // The words' symbols, written in place by runs of words.
    let lens: Vec<u32> = words.par_iter().map(|(w, _)| w.chars().count() as u32).collect();
    t.starts.push(0);
    for &len in &lens {
        let end = t.starts.last().copied().unwrap_or(0) + len;
        t.starts.push(end);
    }
    t.seq = vec![0; t.starts.last().copied().unwrap_or(0) as usize];
    let mut slices: Vec<&mut [u32]> = Vec::new();
    let mut rest: &mut [u32] = &mut t.seq;
    for run in lens.chunks(per_chunk) {
        let (head, tail) = rest.split_at_mut(run.iter().map(|&n| n as usize).sum());
        slices.push(head);
        rest = tail;
    }
    let chunks: Vec<ChunkPairs> =
        words.par_chunks(per_chunk).zip(slices.into_par_iter()).map(|(run, seq)| chunk_pairs(run, seq, &table, unk)).collect();
    drop((words, table, lens));

    // The pairs numbered in the order first seen.
    let mut occurrences: Vec<u32> = Vec::new();
    for chunk in &chunks {
        for &(Key(l, r), occ, freq) in chunk {
            let PairState::Symbol(id) = t.pair(l, r) else { continue };
            let s = &mut t.syms[id as usize];
            s.freq += freq;
            if !s.pending {
                s.pending = true;
                t.pending.push(id);
            }
            if occurrences.len() <= id as usize {
                occurrences.resize(id as usize + 1, 0);
            }
            occurrences[id as usize] += occ;
        }
    }
    drop(chunks);
    // Each pair's places, in word order, in lists of their exact size.
    for (id, &n) in occurrences.iter().enumerate() {
        if n > 0 {
            t.positions[id] = Vec::with_capacity(n as usize);
        }
    }
    drop(occurrences);
    for (w, span) in t.starts.windows(2).enumerate() {
        let word = &t.seq[span[0] as usize..span[1] as usize];
        for (i, pair) in word.windows(2).enumerate() {
            if let Some(PairState::Symbol(id)) = t.pairs.get(&Key(pair[0], pair[1])).map(|p| p.unpack()) {
                t.positions[id as usize].push((w as u32, i as u32));
            }
        }
    }
    t.queue_pending();

    let mut pieces: Vec<(String, f32)> = Vec::with_capacity(n_merges + required.len());
    let mut dup: AHashSet<Vec<u8>> = AHashSet::new();
    while pieces.len() < n_merges {
        let Some(best) = t.best() else { break };
        let text = t.text(best).to_vec();
        if !dup.insert(text.clone()) {
            t.kill(best);
            continue;
        }
        pieces.push((String::from_utf8(text).expect("pieces are made of whole chars"), -(pieces.len() as f32)));
        t.merge(best);
        t.queue_pending();
    }
    for &(c, _) in required {
        pieces.push((c.to_string(), -(pieces.len() as f32)));
    }
    Ok(pieces)
}
