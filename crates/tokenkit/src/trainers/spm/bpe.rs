//! sentencepiece's BPE trainer (`bpe_model_trainer.cc`), with the same pieces and scores.
//!
//! The rules that decide the result, as sentencepiece has them: a pair is a candidate only if
//! the merged piece is valid ([`PieceRules`]); the best candidate has the highest count, then
//! the fewest chars, then the smallest UTF-8 string; it is looked for only among the "active"
//! pairs, refreshed every 100 pieces as the most frequent 5% of all symbols (at least 1,000)
//! plus every pair created since; a piece already taken through another pair of halves is
//! skipped; merges apply left to right within a word; the score of the n-th piece is `-n`; the
//! required chars follow the merged pieces by decreasing count. Counts are kept exact
//! incrementally instead of being recounted from stored positions.

use ahash::{AHashMap, AHashSet};

use crate::models::unigram::trainer::piece_rules::{PieceRules, UNK_CHAR};
use crate::Result;

const NONE: u32 = u32::MAX;
/// sentencepiece's `kMinActiveSymbolsSize`, `kTopFrequentRatio` and `kUpdateActiveSymbolsInteval`.
const MIN_ACTIVE: usize = 1000;
const TOP_RATIO: f32 = 0.05;
const UPDATE_EVERY: usize = 100;

struct Sym {
    chars: Vec<char>,
    text: String,
    /// The halves (`NONE` for a char).
    pair: (u32, u32),
    is_unk: bool,
    /// In sentencepiece's symbol cache (not yet taken or skipped).
    in_cache: bool,
    active: bool,
    /// A pair symbol made again after its first object left the cache: sentencepiece's new
    /// object has no positions, so its count is 0.
    recreated: bool,
    /// Number of adjacent occurrences (weighted by word count) of the pair.
    count: i64,
    /// Where the pair occurs or occurred: (word, left index, right index).
    positions: Vec<(u32, u32, u32)>,
}

struct Bpe<'a> {
    rules: PieceRules,
    syms: Vec<Sym>,
    chars: AHashMap<char, u32>,
    /// (left, right) → (first object, current object), or `NONE` objects for an invalid pair.
    pairs: AHashMap<(u32, u32), (u32, u32)>,
    words: Vec<Vec<u32>>,
    freqs: &'a [u64],
    cache_size: usize,
    active: Vec<u32>,
}

impl Bpe<'_> {
    fn char_sym(&mut self, c: char) -> u32 {
        if let Some(&id) = self.chars.get(&c) {
            return id;
        }
        let id = self.syms.len() as u32;
        self.syms.push(Sym {
            chars: vec![c],
            text: c.to_string(),
            pair: (NONE, NONE),
            is_unk: c == UNK_CHAR,
            in_cache: true,
            active: false,
            recreated: false,
            count: 0,
            positions: Vec::new(),
        });
        self.chars.insert(c, id);
        self.cache_size += 1;
        id
    }

    /// `GetPairSymbol`: the object of the pair, made (or made again) when not in the cache;
    /// `None` for an invalid pair.
    fn pair_sym(&mut self, l: u32, r: u32) -> Option<u32> {
        if self.syms[l as usize].is_unk || self.syms[r as usize].is_unk {
            return None;
        }
        if let Some(&(first, current)) = self.pairs.get(&(l, r)) {
            if current == NONE {
                return None;
            }
            if self.syms[current as usize].in_cache {
                return Some(current);
            }
            let again = self.new_pair_sym(l, r, true);
            self.pairs.insert((l, r), (first, again));
            return Some(again);
        }
        let mut chars = self.syms[l as usize].chars.clone();
        chars.extend_from_slice(&self.syms[r as usize].chars);
        if !self.rules.is_valid(&chars) {
            self.pairs.insert((l, r), (NONE, NONE));
            return None;
        }
        let id = self.new_pair_sym(l, r, false);
        self.pairs.insert((l, r), (id, id));
        Some(id)
    }

    fn new_pair_sym(&mut self, l: u32, r: u32, recreated: bool) -> u32 {
        let mut chars = self.syms[l as usize].chars.clone();
        chars.extend_from_slice(&self.syms[r as usize].chars);
        let text = chars.iter().collect();
        let id = self.syms.len() as u32;
        self.syms.push(Sym {
            chars,
            text,
            pair: (l, r),
            is_unk: false,
            in_cache: true,
            active: false,
            recreated,
            count: 0,
            positions: Vec::new(),
        });
        self.cache_size += 1;
        id
    }

    /// The count sentencepiece computes for object `id`.
    fn freq(&self, id: u32) -> i64 {
        let s = &self.syms[id as usize];
        if s.recreated {
            return 0;
        }
        s.count
    }

    fn activate(&mut self, id: u32) {
        let s = &mut self.syms[id as usize];
        if !s.active {
            s.active = true;
            self.active.push(id);
        }
    }

    fn erase(&mut self, id: u32) {
        let s = &mut self.syms[id as usize];
        s.active = false;
        if s.in_cache {
            s.in_cache = false;
            self.cache_size -= 1;
        }
    }

    /// `AddNewPair`: the adjacency (left at `li`, right at `ri`) of word `w` appears.
    fn add_pair(&mut self, w: u32, li: u32, ri: u32) {
        let (l, r) = (self.words[w as usize][li as usize], self.words[w as usize][ri as usize]);
        if let Some(id) = self.pair_sym(l, r) {
            self.activate(id);
            let first = self.pairs[&(l, r)].0;
            let f = self.freqs[w as usize] as i64;
            let s = &mut self.syms[first as usize];
            s.count += f;
            s.positions.push((w, li, ri));
        }
    }

    /// `ResetFreq`: the adjacency at (`li`, `ri`) of word `w` disappears.
    fn remove_pair(&mut self, w: u32, li: u32, ri: u32) {
        let (l, r) = (self.words[w as usize][li as usize], self.words[w as usize][ri as usize]);
        if self.pair_sym(l, r).is_some() {
            let first = self.pairs[&(l, r)].0;
            self.syms[first as usize].count -= self.freqs[w as usize] as i64;
        }
    }

    fn next(&self, w: u32, i: u32) -> Option<u32> {
        let word = &self.words[w as usize];
        (i as usize + 1..word.len()).find(|&k| word[k] != NONE).map(|k| k as u32)
    }

    fn prev(&self, w: u32, i: u32) -> Option<u32> {
        let word = &self.words[w as usize];
        (0..i as usize).rev().find(|&k| word[k] != NONE).map(|k| k as u32)
    }

    /// `UpdateActiveSymbols`: the most frequent pairs in the cache. Ties at the cut are broken
    /// by the order pieces are chosen in (sentencepiece's depends on its hash map's order).
    fn update_active(&mut self) {
        let mut cands: Vec<u32> =
            (0..self.syms.len() as u32).filter(|&i| self.syms[i as usize].in_cache && self.syms[i as usize].pair.0 != NONE).collect();
        let size = ((self.cache_size as f32 * TOP_RATIO) as usize).max(MIN_ACTIVE).min(cands.len());
        for &id in &self.active {
            self.syms[id as usize].active = false;
        }
        self.active.clear();
        if size < cands.len() && size > 0 {
            cands.select_nth_unstable_by(size - 1, |&a, &b| self.better(a, b));
            cands.truncate(size);
        }
        cands.sort_unstable();
        for id in cands {
            self.activate(id);
        }
    }

    /// sentencepiece's order of preference: higher count, fewer chars, smaller string.
    fn better(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let (sa, sb) = (&self.syms[a as usize], &self.syms[b as usize]);
        self.freq(b).cmp(&self.freq(a)).then(sa.chars.len().cmp(&sb.chars.len())).then_with(|| sa.text.as_bytes().cmp(sb.text.as_bytes()))
    }

    fn best(&mut self) -> Option<u32> {
        let syms = &self.syms;
        self.active.retain(|&id| syms[id as usize].active);
        self.active.iter().copied().min_by(|&a, &b| self.better(a, b).then(a.cmp(&b)))
    }

    fn merge(&mut self, best: u32) {
        let (l, r) = self.syms[best as usize].pair;
        let first = self.pairs[&(l, r)].0;
        let mut positions = std::mem::take(&mut self.syms[first as usize].positions);
        positions.sort_unstable();
        positions.dedup();
        for (w, li, ri) in positions {
            let word = &self.words[w as usize];
            // A position the pair no longer holds (merged away, or its neighbours merged).
            if word[li as usize] != l || word[ri as usize] != r || self.next(w, li) != Some(ri) {
                continue;
            }
            let prev = self.prev(w, li);
            let next = self.next(w, ri);
            if let Some(p) = prev {
                self.remove_pair(w, p, li);
            }
            if let Some(n) = next {
                self.remove_pair(w, ri, n);
            }
            self.syms[first as usize].count -= self.freqs[w as usize] as i64;
            self.words[w as usize][li as usize] = best;
            self.words[w as usize][ri as usize] = NONE;
            if let Some(p) = prev {
                self.add_pair(w, p, li);
            }
            if let Some(n) = next {
                self.add_pair(w, li, n);
            }
        }
    }
}

/// Learns `n_merges` pieces from `words` (a text and its count, in sentencepiece's order) and
/// appends the `required` chars (in their order); returns pieces with scores.
pub fn train(words: &[(String, u64)], required: &[(char, u64)], n_merges: usize, rules: PieceRules) -> Result<Vec<(String, f32)>> {
    let freqs: Vec<u64> = words.iter().map(|(_, n)| *n).collect();
    let mut t = Bpe {
        rules,
        syms: Vec::new(),
        chars: AHashMap::new(),
        pairs: AHashMap::new(),
        words: Vec::with_capacity(words.len()),
        freqs: &freqs,
        cache_size: 0,
        active: Vec::new(),
    };
    for (w, _) in words {
        let ids: Vec<u32> = w.chars().map(|c| t.char_sym(c)).collect();
        t.words.push(ids);
    }
    for w in 0..t.words.len() as u32 {
        for i in 1..t.words[w as usize].len() as u32 {
            t.add_pair(w, i - 1, i);
        }
    }
    let mut pieces: Vec<(String, f32)> = Vec::with_capacity(n_merges + required.len());
    let mut dup: AHashSet<String> = AHashSet::new();
    while pieces.len() < n_merges {
        if pieces.len().is_multiple_of(UPDATE_EVERY) {
            t.update_active();
        }
        let Some(best) = t.best() else { break };
        let text = t.syms[best as usize].text.clone();
        if !dup.insert(text.clone()) {
            t.erase(best);
            continue;
        }
        pieces.push((text, -(pieces.len() as f32)));
        t.merge(best);
        t.erase(best);
    }
    for &(c, _) in required {
        pieces.push((c.to_string(), -(pieces.len() as f32)));
    }
    Ok(pieces)
}
