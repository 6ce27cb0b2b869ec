//! The BPE trainer (HF `trainers.BpeTrainer`): learns a vocabulary and merges from word counts.
//!
//! The merge loop is HF's, step for step, so that the vocabulary and the merges are the same:
//! a max-heap of pair entries (count, pair, the words where the pair was seen when the entry
//! was made) with lazy re-scoring of stale entries; a popped entry merges the pair in its own
//! words only. Ties on count go to the smaller pair of ids `(left, right)`, HF's rule.
//!
//! What differs from HF, on purpose: counts are `u64`/`i64` (HF counts pairs in `i32`), words
//! live in one flat arena instead of one `Vec` each, the word lists of heap entries live in
//! another (an entry is 40 bytes and owns no allocation: stale entries, which stay in the heap
//! until popped, cost little), and everything HF leaves to hash order is
//! given a fixed order (see [`BpeTrainer::train_words`]), so the output does not depend on the
//! thread count or on hash seeds.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::hash_map::Entry as Slot;
use std::collections::{BinaryHeap, HashSet};

use ahash::AHashMap;
use hashbrown::HashTable;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::base::AddedToken;
use crate::models::bpe::{Merges, BPE};
use crate::models::training::{Progress, Stage, WordCounts};
use crate::{Error, Result};

/// Options of the BPE trainer, with HF's names, defaults and JSON form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BpeTrainer {
    /// A pair seen fewer times than this is never merged (0: no limit).
    pub min_frequency: u64,
    /// Target vocabulary size, special tokens and alphabet included.
    pub vocab_size: usize,
    /// Whether the caller should show progress bars (the library only reports to a [`Progress`]).
    pub show_progress: bool,
    /// Tokens given ids 0, 1, ... in this order (duplicates are skipped).
    pub special_tokens: Vec<AddedToken>,
    /// Keep at most this many chars in the alphabet (the most frequent ones).
    pub limit_alphabet: Option<usize>,
    /// Chars always in the alphabet, seen or not.
    #[serde(with = "char_set")]
    pub initial_alphabet: HashSet<char>,
    /// Prefix of every symbol but a word's first (WordPiece's `##`).
    pub continuing_subword_prefix: Option<String>,
    /// Suffix of a word's last symbol (e.g. `</w>`).
    pub end_of_word_suffix: Option<String>,
    /// Longest token, in chars of the word (prefix and suffix not counted), HF's rule:
    /// a merge is only proposed when its length is below this.
    pub max_token_length: Option<usize>,
}

impl Default for BpeTrainer {
    /// HF's defaults: vocabulary 30,000, no minimum frequency, progress shown.
    fn default() -> Self {
        Self {
            min_frequency: 0,
            vocab_size: 30_000,
            show_progress: true,
            special_tokens: Vec::new(),
            limit_alphabet: None,
            initial_alphabet: HashSet::new(),
            continuing_subword_prefix: None,
            end_of_word_suffix: None,
            max_token_length: None,
        }
    }
}

/// `initial_alphabet` as a JSON list of one-char strings, sorted (HF writes a list of chars).
mod char_set {
    use super::HashSet;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(set: &HashSet<char>, s: S) -> Result<S::Ok, S::Error> {
        let mut v: Vec<char> = set.iter().copied().collect();
        v.sort_unstable();
        s.collect_seq(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<HashSet<char>, D::Error> {
        Ok(Vec::<char>::deserialize(d)?.into_iter().collect())
    }
}

/// What BPE training produces: the vocabulary (token → id) and the merges in rank order.
#[derive(Debug, Clone, PartialEq)]
pub struct BpeTrainingResult {
    /// Token → id; ids are dense from 0.
    pub vocab: Vec<(String, u32)>,
    /// Merges as token pairs, first merged first.
    pub merges: Merges,
}

/// A pair of symbol ids packed as `left << 32 | right`: the integer order is the order of
/// `(left, right)`, which is HF's tie-break.
type PackedPair = u64;

#[inline]
fn pack(a: u32, b: u32) -> PackedPair {
    (u64::from(a) << 32) | u64::from(b)
}

#[inline]
fn unpack(p: PackedPair) -> (u32, u32) {
    ((p >> 32) as u32, p as u32)
}

/// One heap entry: a pair, its count when pushed, and the words it was seen in then.
#[derive(Debug)]
struct Entry {
    count: u64,
    pair: PackedPair,
    /// Push order: among entries equal on count and pair, the earlier one pops first.
    seq: u64,
    /// The entry's word indices (sorted and unique) in the [`WordLists`] arena.
    words: ListRef,
}

/// A list in [`WordLists`]: `start..start + len`.
#[derive(Debug, Clone, Copy)]
struct ListRef {
    start: usize,
    len: u32,
}

/// The word lists of all heap entries, back to back. The list of a merged entry is dead;
/// when the dead lists make up a fifth of the arena, [`WordLists::compact`] moves the live
/// ones down over them, so the arena stays near the size of the lists in the heap.
#[derive(Default)]
struct WordLists {
    arena: Vec<u32>,
    /// Elements of the arena in lists of heap entries.
    live: usize,
}

impl WordLists {
    fn push(&mut self, words: impl IntoIterator<Item = u32>) -> ListRef {
        let start = self.arena.len();
        self.arena.extend(words);
        let len = self.arena.len() - start;
        self.live += len;
        ListRef { start, len: len as u32 }
    }

    fn get(&self, r: ListRef) -> &[u32] {
        &self.arena[r.start..r.start + r.len as usize]
    }

    /// Marks `r` dead (its entry was merged and left the heap).
    fn release(&mut self, r: ListRef) {
        self.live -= r.len as usize;
    }

    /// Moves the lists of `queue`'s entries down over the dead ones, in arena order, when the
    /// dead ones are a fifth of the arena. The heap is rebuilt from the same entries: its
    /// order is that of [`Entry`]'s `Ord`, a total order, so the pops are unchanged.
    fn compact(&mut self, queue: &mut BinaryHeap<Entry>) {
        // Unit tests compact at once, so that their expected merges (HF's) check it.
        const MIN_DEAD: usize = if cfg!(test) { 1 } else { 1 << 20 };
        let dead = self.arena.len() - self.live;
        if dead < MIN_DEAD || dead * 5 < self.arena.len() {
            return;
        }
        let mut entries = std::mem::take(queue).into_vec();
        entries.sort_unstable_by_key(|e| e.words.start);
        let mut end = 0;
        for e in &mut entries {
            let len = e.words.len as usize;
            self.arena.copy_within(e.words.start..e.words.start + len, end);
            e.words.start = end;
            end += len;
        }
        self.arena.truncate(end);
        *queue = BinaryHeap::from(entries);
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Larger count first, then the smaller pair, then the earlier push.
    fn cmp(&self, o: &Self) -> Ordering {
        self.count.cmp(&o.count).then_with(|| o.pair.cmp(&self.pair)).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// Every word as symbol ids in one arena: word `i` is `symbols[start[i]..start[i] + len[i]]`
/// (words only shrink while merging).
struct Words {
    symbols: Vec<u32>,
    start: Vec<usize>,
    len: Vec<u32>,
    counts: Vec<u64>,
}

impl Words {
    fn word(&self, i: usize) -> &[u32] {
        &self.symbols[self.start[i]..self.start[i] + self.len[i] as usize]
    }
}

/// The vocabulary under construction. Each token is stored once: the lookup table holds ids
/// and hashes the tokens they point to.
#[derive(Default)]
struct VocabBuilder {
    ids: HashTable<u32>,
    hasher: ahash::RandomState,
    tokens: Vec<String>,
    /// Length of each token in chars of the original word (prefix and suffix not counted).
    lens: Vec<usize>,
}

impl VocabBuilder {
    /// The id of `token`, if it is in the vocabulary.
    fn get(&self, token: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(token);
        self.ids.find(hash, |&id| self.tokens[id as usize] == token).copied()
    }

    /// The id of `token`, adding it with length `len` when new.
    fn get_or_add(&mut self, token: &str, len: usize) -> u32 {
        let hash = self.hasher.hash_one(token);
        if let Some(&id) = self.ids.find(hash, |&id| self.tokens[id as usize] == token) {
            return id;
        }
        let id = self.tokens.len() as u32;
        let (tokens, hasher) = (&self.tokens, &self.hasher);
        self.ids.insert_unique(hash, id, |&i| hasher.hash_one(tokens[i as usize].as_str()));
        self.tokens.push(token.to_owned());
        self.lens.push(len);
        id
    }
}

impl BpeTrainer {
    /// A trainer with HF's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The alphabet: every char of the words weighted by count, the initial alphabet forced
    /// in, the least frequent dropped beyond `limit_alphabet` (on equal counts the smaller
    /// char goes first; HF leaves that to hash order), sorted by code point.
    fn alphabet(&self, words: &[(&str, u64)]) -> Vec<char> {
        let mut counts: AHashMap<char, u64> = words
            .par_iter()
            .fold(AHashMap::new, |mut m, (w, n)| {
                for c in w.chars() {
                    *m.entry(c).or_insert(0) += n;
                }
                m
            })
            .reduce(AHashMap::new, |mut a, b| {
                for (c, n) in b {
                    *a.entry(c).or_insert(0) += n;
                }
                a
            });
        for &c in &self.initial_alphabet {
            counts.insert(c, u64::MAX);
        }
        let mut kept: Vec<(char, u64)> = counts.into_iter().collect();
        if let Some(limit) = self.limit_alphabet {
            if kept.len() > limit {
                let to_remove = kept.len() - limit;
                kept.sort_unstable_by_key(|&(c, n)| (n, c));
                kept.drain(..to_remove);
            }
        }
        let mut chars: Vec<char> = kept.into_iter().map(|(c, _)| c).collect();
        chars.sort_unstable();
        chars
    }

    /// Trains on word counts (any order: words are sorted first) and returns the vocabulary
    /// and merges. Counts given by value are freed as soon as the words are split into
    /// symbols, before the pair tables are built (the peak memory of a large training).
    ///
    /// The ids are HF's: special tokens first, in the given order; then the alphabet by code
    /// point; then, when there is a prefix or suffix, the affixed chars in order of first
    /// appearance over the words sorted by their UTF-8 bytes (HF: hash order, which changes
    /// from run to run); then one id per new merged token. Ties between pairs of equal count
    /// go to the smaller `(left id, right id)`.
    pub fn train_words(&self, word_counts: Cow<'_, WordCounts>, progress: &dyn Progress) -> Result<BpeTrainingResult> {
        let (mut vocab, mut words) = self.split_words(&word_counts, progress);
        drop(word_counts);

        progress.start(Stage::CountPairs, Some(words.counts.len() as u64));
        let (mut pair_counts, mut queue, mut lists) = count_pairs(&words);
        progress.finish(Stage::CountPairs);

        progress.start(Stage::Merge, Some(self.vocab_size.saturating_sub(vocab.tokens.len()) as u64));
        let max_len = self.max_token_length.unwrap_or(usize::MAX);
        let prefix = self.continuing_subword_prefix.as_deref();
        let mut merges: Vec<(PackedPair, u32)> = Vec::new();
        let mut seq = queue.len() as u64;
        let mut new_pairs: Vec<(PackedPair, u32)> = Vec::new();
        while vocab.tokens.len() < self.vocab_size {
            let Some(mut top) = queue.pop() else { break };
            let current = pair_counts.get(&top.pair).copied().unwrap_or(0).max(0) as u64;
            if top.count != current {
                top.count = current;
                top.seq = seq;
                seq += 1;
                queue.push(top);
                continue;
            }
            if top.count < 1 || self.min_frequency > top.count {
                break;
            }
            let (a, b) = unpack(top.pair);
            let left = &vocab.tokens[a as usize];
            let right = &vocab.tokens[b as usize];
            let right = match prefix {
                Some(p) if right.starts_with(p) => &right[p.len()..],
                _ => right.as_str(),
            };
            let new_token = format!("{left}{right}");
            let new_len = vocab.lens[a as usize].saturating_add(vocab.lens[b as usize]);
            let before = vocab.tokens.len();
            let new_id = vocab.get_or_add(&new_token, new_len);
            merges.push((top.pair, new_id));
            if vocab.tokens.len() > before {
                progress.inc(1);
            }

            new_pairs.clear();
            for &w in lists.get(top.words) {
                merge_word(&mut words, w, a, b, new_id, &vocab.lens, max_len, &mut pair_counts, &mut new_pairs);
            }
            lists.release(top.words);
            new_pairs.sort_unstable();
            new_pairs.dedup();
            for group in new_pairs.chunk_by(|x, y| x.0 == y.0) {
                let pair = group[0].0;
                let count = pair_counts.get(&pair).copied().unwrap_or(0);
                if count > 0 {
                    let words = lists.push(group.iter().map(|g| g.1));
                    queue.push(Entry { count: count as u64, pair, seq, words });
                    seq += 1;
                }
            }
            lists.compact(&mut queue);
        }
        progress.finish(Stage::Merge);

        // The merge state is freed before the result's strings are made (the peak memory of
        // small trainings is here).
        drop((queue, lists, pair_counts, words, new_pairs));
        let VocabBuilder { tokens, .. } = vocab;

        // A pair merged twice (HF does it when a token is made again by another pair) keeps
        // its last rank, as HF's merge map does.
        let mut last_rank: AHashMap<PackedPair, usize> = AHashMap::with_capacity(merges.len());
        for (rank, (pair, _)) in merges.iter().enumerate() {
            last_rank.insert(*pair, rank);
        }
        let merges = merges
            .iter()
            .enumerate()
            .filter(|(rank, (pair, _))| last_rank[pair] == *rank)
            .map(|(_, (pair, _))| {
                let (a, b) = unpack(*pair);
                (tokens[a as usize].clone(), tokens[b as usize].clone())
            })
            .collect();
        drop(last_rank);
        let vocab = tokens.into_iter().enumerate().map(|(i, t)| (t, i as u32)).collect();
        Ok(BpeTrainingResult { vocab, merges })
    }

    /// The first vocabulary (special tokens, then the alphabet) and every word as symbol ids.
    fn split_words(&self, word_counts: &WordCounts, progress: &dyn Progress) -> (VocabBuilder, Words) {
        let mut sorted: Vec<(&str, u64)> = word_counts.iter().map(|(w, &n)| (w.as_str(), n)).collect();
        sorted.par_sort_unstable_by(|a, b| a.0.cmp(b.0));

        let mut vocab = VocabBuilder::default();
        for t in &self.special_tokens {
            vocab.get_or_add(&t.content, t.content.chars().count());
        }
        for c in self.alphabet(&sorted) {
            let mut buf = [0u8; 4];
            vocab.get_or_add(c.encode_utf8(&mut buf), 1);
        }

        progress.start(Stage::TokenizeWords, Some(sorted.len() as u64));
        let words = self.tokenize_words(&sorted, &mut vocab);
        progress.finish(Stage::TokenizeWords);
        (vocab, words)
    }

    /// Splits every word into symbol ids: chars outside the vocabulary are dropped (HF's
    /// rule, for chars cut by `limit_alphabet`), the prefix goes on all but the word's first
    /// char and the suffix on its last.
    fn tokenize_words(&self, sorted: &[(&str, u64)], vocab: &mut VocabBuilder) -> Words {
        let total: usize = sorted.iter().map(|(w, _)| w.len()).sum();
        let mut words =
            Words { symbols: Vec::with_capacity(total), start: Vec::with_capacity(sorted.len()), len: Vec::new(), counts: Vec::new() };
        words.len.reserve(sorted.len());
        words.counts.reserve(sorted.len());
        let prefix = self.continuing_subword_prefix.as_deref();
        let suffix = self.end_of_word_suffix.as_deref();
        let mut buf = String::new();
        for &(w, n) in sorted {
            let start = words.symbols.len();
            let mut chars = w.chars().peekable();
            let mut first = true;
            while let Some(c) = chars.next() {
                let last = chars.peek().is_none();
                buf.clear();
                buf.push(c);
                if let Some(id) = vocab.get(&buf) {
                    let affixed = (!first && prefix.is_some()) || (last && suffix.is_some());
                    let id = if affixed {
                        buf.clear();
                        if let (false, Some(p)) = (first, prefix) {
                            buf.push_str(p);
                        }
                        buf.push(c);
                        if let (true, Some(s)) = (last, suffix) {
                            buf.push_str(s);
                        }
                        vocab.get_or_add(&buf, 1)
                    } else {
                        id
                    };
                    words.symbols.push(id);
                }
                first = false;
            }
            words.start.push(start);
            words.len.push((words.symbols.len() - start) as u32);
            words.counts.push(n);
        }
        words
    }
}

/// Counts every adjacent pair (weighted by word count) and makes the first heap entries, one
/// per pair in pair order, each with the words the pair is in.
///
/// Two passes over the words instead of one sorted list of all pair occurrences (16 bytes
/// each, the peak memory of a large training): the first counts each pair and the words it is
/// in; the second writes each word's index straight into its pairs' lists.
fn count_pairs(words: &Words) -> (AHashMap<PackedPair, i64>, BinaryHeap<Entry>, WordLists) {
    /// Per pair: its count, the number of words it is in, then the next free place of its list.
    type Tally = AHashMap<PackedPair, (u64, usize)>;
    let n = words.counts.len();
    let mut tally: Tally = (0..n)
        .into_par_iter()
        .fold(
            || (Tally::new(), Vec::new()),
            |(mut tally, mut buf), i| {
                let count = words.counts[i];
                for (pair, times) in distinct_pairs(words.word(i), &mut buf) {
                    let t = tally.entry(pair).or_insert((0, 0));
                    t.0 += count * times as u64;
                    t.1 += 1;
                }
                (tally, buf)
            },
        )
        .map(|(tally, _)| tally)
        .reduce(Tally::new, |mut a, mut b| {
            if a.len() < b.len() {
                std::mem::swap(&mut a, &mut b);
            }
            for (pair, (count, in_words)) in b {
                let t = a.entry(pair).or_insert((0, 0));
                t.0 += count;
                t.1 += in_words;
            }
            a
        });
    let mut pairs: Vec<PackedPair> = tally.keys().copied().collect();
    pairs.par_sort_unstable();
    let mut pair_counts = AHashMap::with_capacity(pairs.len());
    let mut entries = Vec::with_capacity(pairs.len());
    let mut start = 0;
    for &pair in &pairs {
        let t = tally.get_mut(&pair).expect("a counted pair");
        let (count, len) = *t;
        pair_counts.insert(pair, count as i64);
        entries.push(Entry { count, pair, seq: entries.len() as u64, words: ListRef { start, len: len as u32 } });
        t.1 = start;
        start += len;
    }
    drop(pairs);
    // Room for the lists that merges add before the first compaction.
    let mut arena = Vec::with_capacity(start + start / 2);
    arena.resize(start, 0);
    let mut buf = Vec::new();
    for i in 0..n {
        for (pair, _) in distinct_pairs(words.word(i), &mut buf) {
            let next = &mut tally.get_mut(&pair).expect("a counted pair").1;
            arena[*next] = i as u32;
            *next += 1;
        }
    }
    (pair_counts, BinaryHeap::from(entries), WordLists { arena, live: start })
}

/// The distinct adjacent pairs of `word` with the number of times each occurs, in pair order
/// (`buf` is scratch space).
fn distinct_pairs<'b>(word: &[u32], buf: &'b mut Vec<PackedPair>) -> impl Iterator<Item = (PackedPair, usize)> + 'b {
    buf.clear();
    buf.extend(word.windows(2).map(|p| pack(p[0], p[1])));
    buf.sort_unstable();
    buf.chunk_by(|x, y| x == y).map(|g| (g[0], g.len()))
}

/// Merges `(a, b)` into `new` throughout word `w`, left to right (HF's scan), updating the
/// pair counts and recording the pairs that gained an occurrence. A new pair is only counted
/// when its merged length would be below `max_len` (HF's rule).
#[allow(clippy::too_many_arguments)]
fn merge_word(
    words: &mut Words,
    w: u32,
    a: u32,
    b: u32,
    new: u32,
    lens: &[usize],
    max_len: usize,
    pair_counts: &mut AHashMap<PackedPair, i64>,
    new_pairs: &mut Vec<(PackedPair, u32)>,
) {
    let wi = w as usize;
    let count = words.counts[wi] as i64;
    let start = words.start[wi];
    let n = words.len[wi] as usize;
    let sym = &mut words.symbols[start..start + n];
    let mut change = |pair: PackedPair, delta: i64| {
        // A pair whose count falls to zero leaves the map (absent is zero), which keeps it
        // the size of the pairs that still occur.
        match pair_counts.entry(pair) {
            Slot::Occupied(mut o) => {
                *o.get_mut() += delta * count;
                if *o.get() == 0 {
                    o.remove();
                }
            }
            Slot::Vacant(v) => {
                v.insert(delta * count);
            }
        }
        if delta > 0 {
            new_pairs.push((pair, w));
        }
    };
    let new_len = lens[new as usize];
    let (mut r, mut wr) = (0, 0);
    while r < n {
        if sym[r] == a && r + 1 < n && sym[r + 1] == b {
            if wr > 0 {
                let prev = sym[wr - 1];
                change(pack(prev, a), -1);
                if lens[prev as usize].saturating_add(new_len) < max_len {
                    change(pack(prev, new), 1);
                }
            }
            if r + 2 < n {
                let next = sym[r + 2];
                change(pack(b, next), -1);
                if lens[next as usize].saturating_add(new_len) < max_len {
                    change(pack(new, next), 1);
                }
            }
            sym[wr] = new;
            r += 2;
        } else {
            sym[wr] = sym[r];
            r += 1;
        }
        wr += 1;
    }
    words.len[wi] = wr as u32;
}

/// Applies a training result to a BPE model: new vocabulary and merges, prefix and suffix from
/// the trainer, every other option (unk, dropout, fuse_unk, byte_fallback, ignore_merges) kept,
/// as HF's `Tokenizer.train` does.
pub fn rebuild_bpe(old: &BPE, trainer: &BpeTrainer, result: BpeTrainingResult) -> Result<BPE> {
    BPE::builder()
        .vocab_and_merges(result.vocab, result.merges)
        .dropout(old.dropout())
        .unk_token(old.unk_token().map(str::to_owned))
        .continuing_subword_prefix(trainer.continuing_subword_prefix.clone())
        .end_of_word_suffix(trainer.end_of_word_suffix.clone())
        .fuse_unk(old.fuse_unk())
        .byte_fallback(old.byte_fallback())
        .ignore_merges(old.ignore_merges())
        .build()
        .map_err(|e| Error::invalid(format!("BPE training produced an invalid model: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::training::NoProgress;

    fn counts(words: &[(&str, u64)]) -> WordCounts {
        words.iter().map(|(w, n)| (w.to_string(), *n)).collect()
    }

    #[test]
    fn hf_readme_example() {
        // HF 0.23.3: BpeTrainer(min_frequency=2) on these counts gives re, are, is.
        let wc = counts(&[
            ("roses", 1),
            ("are", 2),
            ("red", 1),
            ("voilets", 1),
            ("blue", 1),
            ("BERT", 1),
            ("is", 2),
            ("big", 1),
            ("and", 1),
            ("so", 1),
            ("GPT-2", 1),
        ]);
        let t = BpeTrainer { min_frequency: 2, ..Default::default() };
        let r = t.train_words(Cow::Borrowed(&wc), &NoProgress).unwrap();
        let tokens: Vec<&str> = r.vocab.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(tokens.len(), 25);
        assert_eq!(&tokens[..3], &["-", "2", "B"]);
        assert_eq!(&tokens[22..], &["re", "are", "is"]);
        let m: Vec<(&str, &str)> = r.merges.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(m, vec![("r", "e"), ("a", "re"), ("i", "s")]);
    }

    #[test]
    fn suffix_and_specials() {
        // HF 0.23.3, `train_from_iterator(['hello world hello there', 'a b c a b'])` with a
        // Whitespace pre-tokenizer, vocab_size=30, end_of_word_suffix='</w>', specials
        // [UNK], <s>, [UNK]: merges below (the ids of the `x</w>` tokens are in hash order in HF).
        let wc = counts(&[("hello", 2), ("world", 1), ("there", 1), ("a", 2), ("b", 2), ("c", 1)]);
        let t = BpeTrainer {
            vocab_size: 30,
            special_tokens: vec![AddedToken::from("[UNK]", true), AddedToken::from("<s>", true), AddedToken::from("[UNK]", true)],
            end_of_word_suffix: Some("</w>".into()),
            ..Default::default()
        };
        let r = t.train_words(Cow::Borrowed(&wc), &NoProgress).unwrap();
        assert_eq!(r.vocab.len(), 30);
        assert_eq!(r.vocab[0].0, "[UNK]");
        assert_eq!(r.vocab[1].0, "<s>");
        let m: Vec<String> = r.merges.iter().map(|(a, b)| format!("{a} {b}")).collect();
        assert_eq!(m, ["h e", "l l", "he ll", "hell o</w>", "l d</w>", "o r", "r e</w>", "t he", "w or", "the re</w>", "wor ld</w>"]);
    }

    #[test]
    fn max_token_length_two() {
        let wc = counts(&[("sin", 2), ("Sin", 2), ("so", 2), ("短字符", 2), ("长字符", 2)]);
        let t = BpeTrainer { max_token_length: Some(2), ..Default::default() };
        let r = t.train_words(Cow::Borrowed(&wc), &NoProgress).unwrap();
        assert!(r.vocab.iter().all(|(t, _)| t.chars().count() <= 2), "{:?}", r.vocab);
    }

    #[test]
    fn repeated_symbols() {
        let wc = counts(&[("aaaa", 3), ("aaa", 1)]);
        let t = BpeTrainer { vocab_size: 10, ..Default::default() };
        let r = t.train_words(Cow::Borrowed(&wc), &NoProgress).unwrap();
        let m: Vec<String> = r.merges.iter().map(|(a, b)| format!("{a} {b}")).collect();
        assert_eq!(m, ["a a", "aa aa", "aa a"]);
    }
}
