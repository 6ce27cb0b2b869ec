//! SentencePiece's Unigram Viterbi (`unigram_model.cc`, the optimized encoder), with its exact
//! arithmetic: scores and path sums are `f32` (the rounding decides between segmentations that
//! tie on paper, e.g. `- --` against `-- -`), and on ties the first candidate found is kept.

use std::cell::RefCell;

use super::lattice::{Lattice, ScoredPath, MAX_NBEST};
use super::trie::Trie;
use crate::formats::sentencepiece::normalizer::utf8_len;

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
}

impl SpViterbi {
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
            self.fill(text, best);
            let mut end = text.len();
            while end > 0 {
                let node = best[end];
                out.push((node.start, end as u32, node.id));
                end = node.start as usize;
            }
            out.reverse();
            if best.len() > (1 << 20) {
                *best = Vec::new();
            }
        });
    }

    fn fill(&self, text: &[u8], best: &mut Vec<Node>) {
        let size = text.len();
        best.clear();
        best.resize(size + 1, Node { score: 0.0, start: NONE, id: NONE });
        let best = &mut best[..=size];
        let improve = |best: &mut [Node], end: usize, cand: f32, start: usize, id: u32| {
            let target = &mut best[end];
            if target.start == NONE || cand > target.score {
                *target = Node { score: cand, start: start as u32, id };
            }
        };
        let mut start = 0;
        while start < size {
            let here = best[start].score;
            let char_end = start + utf8_len(text[start]).min(size - start);
            // The first char (pieces are whole chars: none ends inside it), then the
            // longer pieces, shortest first.
            let mut cursor = self.trie.cursor();
            let mut single = None;
            let mut k = start;
            while k < char_end {
                single = self.trie.step(&mut cursor, text[k]);
                if single.is_none() {
                    break;
                }
                k += 1;
            }
            match single {
                Some((id, score)) => {
                    if id != NONE {
                        improve(best, char_end, score + here, start, id);
                    } else {
                        improve(best, char_end, self.unk_score + here, start, self.unk_id);
                    }
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
