//! SentencePiece's Unigram Viterbi (`unigram_model.cc`, the optimized encoder), with its exact
//! arithmetic: scores and path sums are `f32` (the rounding decides between segmentations that
//! tie on paper, e.g. `- --` against `-- -`), and on ties the first candidate found is kept.

use std::cell::RefCell;

use super::trie::Trie;

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
        let mut start = 0;
        while start < size {
            let here = best[start].score;
            let mblen = crate::formats::sentencepiece::normalizer::utf8_len(text[start]).min(size - start);
            let mut has_single = false;
            self.trie.common_prefixes(&text[start..], |len, id| {
                let cand = self.scores[id as usize] + here;
                let target = &mut best[start + len];
                if target.start == NONE || cand > target.score {
                    *target = Node { score: cand, start: start as u32, id };
                }
                has_single |= len == mblen;
            });
            if !has_single {
                let cand = self.unk_score + here;
                let target = &mut best[start + mblen];
                if target.start == NONE || cand > target.score {
                    *target = Node { score: cand, start: start as u32, id: self.unk_id };
                }
            }
            start += mblen;
        }
    }
}

impl SpViterbi {
    /// A segmentation of `text` drawn from the lattice with probability proportional to
    /// `exp(alpha * score)` (sentencepiece's subword regularisation with `nbest_size = -1`:
    /// forward sums, then sampling backward from the end), as `(start, end, id)` in order.
    /// The draw depends only on `rng`, so a seeded generator makes it reproducible (the
    /// sequence of draws differs from sentencepiece's own generator).
    pub fn sample(&self, text: &[u8], alpha: f32, rng: &mut impl rand::Rng, out: &mut Vec<(u32, u32, u32)>) {
        out.clear();
        let size = text.len();
        if size == 0 {
            return;
        }
        // Edges ending at each byte position: (start, id, score).
        let mut incoming: Vec<Vec<(u32, u32, f32)>> = vec![Vec::new(); size + 1];
        let mut start = 0;
        while start < size {
            let mblen = crate::formats::sentencepiece::normalizer::utf8_len(text[start]).min(size - start);
            let mut has_single = false;
            self.trie.common_prefixes(&text[start..], |len, id| {
                incoming[start + len].push((start as u32, id, self.scores[id as usize]));
                has_single |= len == mblen;
            });
            if !has_single {
                incoming[start + mblen].push((start as u32, self.unk_id, self.unk_score));
            }
            start += mblen;
        }
        // alpha[pos]: log of the summed weight of all paths from 0 to pos.
        let mut forward = vec![f64::NEG_INFINITY; size + 1];
        forward[0] = 0.0;
        for pos in 1..=size {
            let mut acc = f64::NEG_INFINITY;
            for &(s, _, score) in &incoming[pos] {
                acc = log_add(acc, forward[s as usize] + (alpha * score) as f64);
            }
            forward[pos] = acc;
        }
        let mut end = size;
        while end > 0 {
            let edges = &incoming[end];
            let weights: Vec<f64> =
                edges.iter().map(|&(s, _, score)| (forward[s as usize] + (alpha * score) as f64 - forward[end]).exp()).collect();
            let total: f64 = weights.iter().sum();
            let mut r = rng.gen::<f64>() * total;
            let mut pick = edges.len() - 1;
            for (i, w) in weights.iter().enumerate() {
                if r < *w {
                    pick = i;
                    break;
                }
                r -= w;
            }
            let (s, id, _) = edges[pick];
            out.push((s, end as u32, id));
            end = s as usize;
        }
        out.reverse();
    }
}

/// `log(exp(a) + exp(b))` without overflow.
fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}
