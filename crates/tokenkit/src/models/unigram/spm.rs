//! SentencePiece's Unigram Viterbi (`unigram_model.cc`, the optimized encoder), with its exact
//! arithmetic: scores and path sums are `f32` (the rounding decides between segmentations that
//! tie on paper, e.g. `- --` against `-- -`), and on ties the first candidate found is kept.

use std::cell::RefCell;

use super::lattice::{Lattice, ScoredPath, MAX_NBEST};
use super::trie::{Cursor, Trie};
use crate::formats::sentencepiece::normalizer::{utf8_len, SPACE_SYMBOL};

/// "Not set".
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    score: f32,
    start: u32,
    id: u32,
}

thread_local! {
    static BEST: RefCell<Vec<Node>> = const { RefCell::new(Vec::new()) };
}

/// What the Viterbi needs to know about a SentencePiece vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct SpViterbi {
    /// The normal, user-defined pieces (not unused ones: they never take part).
    pub trie: Trie,
    /// The score of each id as SentencePiece adds it: the piece score, or for a user-defined
    /// piece `len_bytes * max_score - 0.1` (a bonus that makes it always win).
    pub scores: Vec<f32>,
    /// The id given to a char no single-char piece covers.
    pub unk_id: u32,
    /// `min_score - 10` in `f32`.
    pub unk_score: f32,
    /// `user_defined[id]`: piece `id` is user-defined.
    pub user_defined: Vec<bool>,
    /// Every score is finite and at most [`BOUND`] in magnitude, so that every path sum is
    /// finite (see [`Self::fill`]).
    bounded: bool,
    /// The trie walked along `▁` (the start of most words, three bytes): the cursor after it
    /// and the id (`NONE` for none) and score of the piece `▁`; `None` when no piece starts
    /// with it.
    space: Walked,
    /// The same for each ASCII char (most chars of most texts): `ascii[b]` is the trie
    /// walked along byte `b`.
    ascii: Box<[Walked; 128]>,
}

/// The trie walked along a char from the root: the cursor after it and what
/// [`Trie::step`] found at its last byte; `None` when no piece starts with the char.
type Walked = Option<(Cursor, (u32, f32))>;

/// The largest score magnitude for which path sums stay finite whatever the length: a sum
/// stops growing once the scores added are below half its ulp, at `2^25 * BOUND` (< `f32::MAX`).
const BOUND: f32 = (1u128 << 100) as f32;

impl SpViterbi {
    /// The Viterbi over `trie`, with the scores of each id (see the fields).
    pub fn new(trie: Trie, scores: Vec<f32>, unk_id: u32, unk_score: f32, user_defined: Vec<bool>) -> Self {
        let bounded = trie.scores().chain([unk_score]).all(|s| s.abs() <= BOUND);
        let walk = |bytes: &[u8]| {
            let mut cursor = trie.cursor();
            trie.walk(&mut cursor, bytes.iter().copied()).map(|found| (cursor, found))
        };
        let space = walk(SPACE_SYMBOL.as_bytes());
        let ascii = Box::new(std::array::from_fn(|b| walk(&[b as u8])));
        Self { trie, scores, unk_id, unk_score, user_defined, bounded, space, ascii }
    }

    /// The best segmentation of the UTF-8 `text`, as `(start, end, id)` byte ranges in order,
    /// appended to `out` (cleared first). Unknown chars come out one per segment.
    pub fn encode(&self, text: &[u8], out: &mut Vec<(u32, u32, u32)>) {
        out.clear();
        if text.is_empty() {
            return;
        }
        BEST.with(|cell| {
            let mut guard = cell.try_borrow_mut();
            let mut local = Vec::new();
            let best = match guard.as_deref_mut() {
                Ok(b) => b,
                Err(_) => &mut local,
            };
            if self.bounded {
                self.fill::<true>(text, best);
            } else {
                self.fill::<false>(text, best);
            }
            let path: &[Node] = best;
            let mut end = text.len();
            while let Some(node) = path.get(end).filter(|_| end > 0) {
                out.push((node.start, end as u32, node.id));
                end = node.start as usize;
            }
            out.reverse();
            if best.len() > (1 << 20) {
                *best = Vec::new();
            }
        });
    }

    /// `best[end]`: the best path to byte `end` of `text`, by its last piece. As in
    /// sentencepiece, a candidate replaces the path found so far when there is none yet or
    /// when its score is higher (the first found wins ties). Paths not found yet score
    /// `-inf`: with `BOUNDED` scores, every candidate is finite and the comparison of scores
    /// alone decides.
    fn fill<const BOUNDED: bool>(&self, text: &[u8], best: &mut Vec<Node>) {
        let size = text.len();
        best.clear();
        best.resize(size + 1, Node { score: f32::NEG_INFINITY, start: NONE, id: NONE });
        let best = &mut best[..=size];
        best[0].score = 0.0;
        let improve = |best: &mut [Node], end: usize, cand: f32, start: usize, id: u32| {
            let target = &mut best[end];
            if cand > target.score || (!BOUNDED && target.start == NONE) {
                *target = Node { score: cand, start: start as u32, id };
            }
        };
        let root = self.trie.cursor();
        let mut start = 0;
        while start < size {
            let here = best[start].score;
            // The first char (pieces are whole chars: none ends inside it), then the
            // longer pieces, shortest first.
            let mut cursor = root;
            let lead = text[start];
            // The walk along the most common chars is known.
            let known = |walked: Walked, cursor: &mut Cursor| {
                walked.map(|(after, found)| {
                    *cursor = after;
                    found
                })
            };
            let (char_end, single) = if let Some(&walked) = self.ascii.get(lead as usize) {
                (start + 1, known(walked, &mut cursor))
            } else if lead == SPACE_SYMBOL.as_bytes()[0] && text[start..].starts_with(SPACE_SYMBOL.as_bytes()) {
                (start + SPACE_SYMBOL.len(), known(self.space, &mut cursor))
            } else {
                let len = utf8_len(lead);
                let single = self.trie.walk(&mut cursor, text[start..].iter().take(len).copied());
                (start + len.min(size - start), single)
            };
            match single {
                Some((id, score)) => {
                    if id != NONE {
                        improve(best, char_end, score + here, start, id);
                    } else {
                        improve(best, char_end, self.unk_score + here, start, self.unk_id);
                    }
                    let mut k = char_end;
                    while let Some(&b) = text.get(k) {
                        let Some((id, score)) = self.trie.step(&mut cursor, b) else { break };
                        k += 1;
                        if id != NONE {
                            improve(best, k, score + here, start, id);
                        }
                    }
                }
                None => improve(best, char_end, self.unk_score + here, start, self.unk_id),
            }
            start = char_end;
        }
    }
}

impl SpViterbi {
    /// Whether `id` is a user-defined piece.
    pub(crate) fn is_user_defined(&self, id: u32) -> bool {
        self.user_defined.get(id as usize).copied().unwrap_or(false)
    }

    /// A segmentation of `text` drawn from the lattice with probability proportional to
    /// `exp(alpha * score)` (sentencepiece's subword regularisation with `nbest_size = -1`),
    /// as `(start, end, id)` in order. The draw depends only on `rng`, so a seeded generator
    /// makes it reproducible (the sequence of draws differs from sentencepiece's own generator).
    pub fn sample(&self, text: &[u8], alpha: f32, rng: &mut impl rand::Rng, out: &mut Vec<(u32, u32, u32)>) {
        Lattice::new(self, text).sample(alpha, rng, out)
    }

    /// The `n` best segmentations of `text`, best first, with their scores (sentencepiece's
    /// `NBestEncode`): `n` is clamped to `1..=1024`; for `n == 1` (or an empty text) the single
    /// Viterbi result with score 0, as sentencepiece returns it.
    pub fn nbest(&self, text: &[u8], n: usize) -> Vec<ScoredPath> {
        let n = n.clamp(1, MAX_NBEST);
        if n == 1 || text.is_empty() {
            let mut out = Vec::new();
            self.encode(text, &mut out);
            return vec![(out, 0.0)];
        }
        Lattice::new(self, text).nbest(n)
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng as _, SeedableRng as _};

    use super::*;

    /// The segmentation `fill::<BOUNDED>` gives.
    fn path<const BOUNDED: bool>(v: &SpViterbi, text: &[u8]) -> Vec<(u32, u32)> {
        let mut best = Vec::new();
        v.fill::<BOUNDED>(text, &mut best);
        let mut out = Vec::new();
        let mut end = text.len();
        while end > 0 {
            out.push((best[end].start, best[end].id));
            end = best[end].start as usize;
        }
        out
    }

    #[test]
    fn bounded_loop_same_as_sentencepiece_loop() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        // Chars of 1, 2 and 3 bytes; `x` is in no piece, `中` only in longer ones.
        let chars = ["a", "b", "é", "▁", "中", "x"];
        for _ in 0..50 {
            let mut pieces: Vec<String> = ["a", "b", "é", "▁"].iter().filter(|_| rng.gen_bool(0.8)).map(|c| c.to_string()).collect();
            for _ in 0..30 {
                let n = rng.gen_range(2..5);
                pieces.push((0..n).map(|_| chars[rng.gen_range(0..5)]).collect());
            }
            pieces.sort();
            pieces.dedup();
            // Half-integer scores, so that sums tie.
            let scores: Vec<f32> = pieces.iter().map(|_| -(rng.gen_range(1..20) as f32) / 2.0).collect();
            let trie = Trie::with_scores(pieces.iter().zip(&scores).enumerate().map(|(id, (p, &s))| (p.as_str(), id as u32, s)));
            let n = pieces.len();
            let v = SpViterbi::new(trie, scores, n as u32, -20.0, vec![false; n]);
            assert!(v.bounded);
            for _ in 0..20 {
                let text: String = (0..rng.gen_range(1..30)).map(|_| chars[rng.gen_range(0..6)]).collect();
                assert_eq!(path::<true>(&v, text.as_bytes()), path::<false>(&v, text.as_bytes()), "{text:?}");
            }
        }
        let huge = SpViterbi::new(Trie::with_scores([("a", 0, -1e38)]), vec![-1e38], 1, f32::MIN, vec![false]);
        assert!(!huge.bounded);
    }
}
