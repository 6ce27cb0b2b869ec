//! SentencePiece's Unigram lattice (`unigram_model.cc`'s `Lattice` and `PopulateNodes`), used
//! where the single best path is not enough: the n best segmentations (A* search from the
//! end, with the exact Viterbi scores as heuristic) and subword-regularisation sampling.
//!
//! It reproduces sentencepiece 0.2's arithmetic and tie order: node scores and path sums are
//! `f32`, nodes ending at a position are listed in insertion order (by start, then shorter
//! first, then the unknown node), and the A* agenda is a binary heap that moves entries exactly
//! as libstdc++'s `std::priority_queue` does, so equal-score hypotheses come out in the same
//! order as sentencepiece's (the order of ties is otherwise arbitrary).

use super::spm::{user_defined_score, SpViterbi};
use crate::normalizers::sentencepiece::utf8_len;

/// "No node / no hypothesis".
const NONE: u32 = u32::MAX;
/// The begin-of-sentence node (ends at 0).
const BOS: u32 = 0;
/// The end-of-sentence node (starts at the end).
const EOS: u32 = 1;
/// sentencepiece's cap on `nbest_size`.
pub const MAX_NBEST: usize = 1024;
/// After this many cuts of the agenda, sentencepiece gives up and returns the best path alone.
const MAX_SHRINKS: usize = 10;
/// When the agenda reaches this many hypotheses it is cut down (sentencepiece's `kMaxAgendaSize`).
const MAX_AGENDA: usize = 10_000;
/// ... to `min(MIN_AGENDA, 10 * nbest)` hypotheses (`kMinAgendaSize`).
const MIN_AGENDA: usize = 512;

/// A segmentation as `(start, end, id)` byte ranges, with its score.
pub type ScoredPath = (Vec<(u32, u32, u32)>, f32);

/// One lattice node: a piece (or the unknown char) over `start..end` bytes.
#[derive(Debug, Clone, Copy)]
struct Node {
    start: u32,
    end: u32,
    id: u32,
    /// The score sentencepiece gives the node.
    score: f32,
    /// Best score of a path from the start through this node (Viterbi).
    backtrace: f32,
}

/// The lattice of one normalized text: every vocabulary match at every char boundary.
#[derive(Debug, Default)]
pub struct Lattice {
    nodes: Vec<Node>,
    /// `ends[pos]`: nodes ending at byte `pos`, in insertion order.
    ends: Vec<Vec<u32>>,
    /// `begins[c]`: the first node starting at char `c` (nodes are inserted by start, so the
    /// nodes starting at char `c` are `begins[c]..begins[c + 1]`); one more entry than chars,
    /// and the last is where the EOS node is visited.
    begins: Vec<u32>,
    len: usize,
}

impl Lattice {
    /// Builds the lattice of the UTF-8 `text` for `model` (`SetSentence` + `PopulateNodes`).
    pub fn new(model: &SpViterbi, text: &[u8]) -> Self {
        let len = text.len();
        let mut nodes = Vec::with_capacity(len * 2 + 2);
        let mut ends: Vec<Vec<u32>> = vec![Vec::new(); len + 1];
        let mut begins = Vec::with_capacity(len + 1);
        let at_end = Node { start: len as u32, end: len as u32, id: NONE, score: 0.0, backtrace: 0.0 };
        nodes.push(Node { start: 0, end: 0, ..at_end });
        nodes.push(at_end);
        ends[0].push(BOS);
        let mut start = 0;
        while start < len {
            begins.push(nodes.len() as u32);
            let mblen = utf8_len(text[start]).min(len - start);
            let mut has_single = false;
            model.trie().common_prefixes(&text[start..], |n, id| {
                let score = if model.is_user_defined(id) {
                    // Counted in chars here, in bytes by the one-best Viterbi.
                    user_defined_score(char_count(&text[start..start + n]))
                } else {
                    model.scores[id as usize]
                };
                ends[start + n].push(nodes.len() as u32);
                nodes.push(Node { start: start as u32, end: (start + n) as u32, id, score, backtrace: 0.0 });
                has_single |= n == mblen;
            });
            if !has_single {
                ends[start + mblen].push(nodes.len() as u32);
                let (id, score) = (model.unk_id, model.unk_score);
                nodes.push(Node { start: start as u32, end: (start + mblen) as u32, id, score, backtrace: 0.0 });
            }
            start += mblen;
        }
        begins.push(nodes.len() as u32);
        let mut lattice = Self { nodes, ends, begins, len };
        lattice.viterbi();
        lattice
    }

    /// Fills each node's `backtrace` (best path score from the start through it), taking
    /// the first best predecessor in `ends` order as sentencepiece does.
    fn viterbi(&mut self) {
        for c in 0..self.begins.len() {
            let (pos, range) = match self.begins.get(c + 1) {
                Some(&next) => (self.nodes[self.begins[c] as usize].start as usize, self.begins[c]..next),
                None => (self.len, EOS..EOS + 1),
            };
            for r in range {
                let rscore = self.nodes[r as usize].score;
                let mut best: Option<f32> = None;
                for &l in &self.ends[pos] {
                    let s = self.nodes[l as usize].backtrace + rscore;
                    if best.is_none_or(|b| s > b) {
                        best = Some(s);
                    }
                }
                self.nodes[r as usize].backtrace = best.unwrap_or(0.0);
            }
        }
    }

    /// The best path (the lattice's Viterbi) and its score.
    fn best_path(&self) -> ScoredPath {
        let mut path = Vec::new();
        let mut pos = self.len;
        let mut node = EOS;
        while node != BOS {
            // The predecessor: the first node in `ends[pos]` reaching the best score, as the
            // forward pass chose it.
            let rscore = self.nodes[node as usize].score;
            let mut best: Option<(f32, u32)> = None;
            for &l in &self.ends[pos] {
                let s = self.nodes[l as usize].backtrace + rscore;
                if best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, l));
                }
            }
            node = best.map_or(BOS, |(_, l)| l);
            if node != BOS {
                let nd = self.nodes[node as usize];
                path.push((nd.start, nd.end, nd.id));
                pos = nd.start as usize;
            }
        }
        path.reverse();
        (path, self.nodes[EOS as usize].backtrace)
    }

    /// The `n` best segmentations (`n` in `2..=MAX_NBEST`), best first, each as
    /// `(start, end, id)` byte ranges with its score (the sum of its node scores, summed from
    /// the end in `f32`, as sentencepiece reports it).
    pub fn nbest(&self, n: usize) -> Vec<ScoredPath> {
        let mut hyps = vec![Hyp { node: EOS, next: NONE, fx: self.nodes[EOS as usize].backtrace, gx: 0.0 }];
        let mut agenda = Agenda::default();
        agenda.push(&hyps, 0);
        let mut results = Vec::new();
        let mut shrinks = 0;
        while let Some(top) = agenda.pop(&hyps) {
            let Hyp { node, gx, fx, .. } = hyps[top as usize];
            if node == BOS {
                let mut path = Vec::new();
                let mut h = hyps[top as usize].next;
                while hyps[h as usize].next != NONE {
                    let nd = self.nodes[hyps[h as usize].node as usize];
                    path.push((nd.start, nd.end, nd.id));
                    h = hyps[h as usize].next;
                }
                results.push((path, fx));
                if results.len() == n {
                    break;
                }
                continue;
            }
            let pos = self.nodes[node as usize].start as usize;
            for &l in &self.ends[pos] {
                let ln = &self.nodes[l as usize];
                hyps.push(Hyp { node: l, next: top, fx: ln.backtrace + gx, gx: ln.score + gx });
                agenda.push(&hyps, hyps.len() as u32 - 1);
            }
            if agenda.heap.len() >= MAX_AGENDA {
                if shrinks == MAX_SHRINKS {
                    return vec![self.best_path()];
                }
                shrinks += 1;
                let keep = MIN_AGENDA.min(n * 10);
                let mut smaller = Agenda::default();
                for _ in 0..keep {
                    match agenda.pop(&hyps) {
                        Some(h) => smaller.push(&hyps, h),
                        None => break,
                    }
                }
                agenda = smaller;
            }
        }
        results
    }
}

impl Lattice {
    /// A segmentation drawn with probability proportional to `exp(alpha * score)` over all
    /// paths (sentencepiece's `Lattice::Sample`: forward sums, then sampling backward from the
    /// end), as `(start, end, id)` byte ranges in order. Sums are `f64`; the draws come from
    /// `rng`, so a seeded generator makes the result reproducible.
    pub fn sample(&self, alpha: f32, rng: &mut impl rand::Rng, out: &mut Vec<(u32, u32, u32)>) {
        out.clear();
        if self.len == 0 {
            return;
        }
        let theta = alpha as f64;
        // forward[node]: log of the summed weight of the paths from the start to the node,
        // the node itself excluded.
        let mut forward = vec![0.0f64; self.nodes.len()];
        for c in 0..self.begins.len() {
            let (pos, range) = match self.begins.get(c + 1) {
                Some(&next) => (self.nodes[self.begins[c] as usize].start as usize, self.begins[c]..next),
                None => (self.len, EOS..EOS + 1),
            };
            let mut acc = f64::NEG_INFINITY;
            for &l in &self.ends[pos] {
                acc = log_add(acc, theta * self.nodes[l as usize].score as f64 + forward[l as usize]);
            }
            for r in range {
                forward[r as usize] = acc;
            }
        }
        let mut weights = Vec::new();
        let mut node = EOS;
        loop {
            let ends = &self.ends[self.nodes[node as usize].start as usize];
            let z = forward[node as usize];
            weights.clear();
            weights.extend(ends.iter().map(|&l| (forward[l as usize] + theta * self.nodes[l as usize].score as f64 - z).exp()));
            node = ends[pick_weighted(&weights, rng)];
            if node == BOS {
                break;
            }
            let nd = &self.nodes[node as usize];
            out.push((nd.start, nd.end, nd.id));
        }
        out.reverse();
    }
}

/// An index drawn with probability proportional to `weights` (not all zero).
pub(crate) fn pick_weighted(weights: &[f64], rng: &mut impl rand::Rng) -> usize {
    let mut r = rng.gen::<f64>() * weights.iter().sum::<f64>();
    for (i, w) in weights.iter().enumerate() {
        if r < *w {
            return i;
        }
        r -= w;
    }
    weights.len().saturating_sub(1)
}

/// `log(exp(a) + exp(b))` without overflow.
fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// A partial path from the end back to `node`.
#[derive(Debug, Clone, Copy)]
struct Hyp {
    node: u32,
    /// The hypothesis this one extends (towards the end), `NONE` for EOS.
    next: u32,
    /// Priority: `gx` plus the best score from the start to `node`.
    fx: f32,
    /// Sum of the node scores from the end up to, not including, `node`.
    gx: f32,
}

/// A max-heap of hypotheses by `fx` that moves entries exactly as libstdc++'s
/// `std::push_heap` / `std::pop_heap` do (which decides the order of ties).
#[derive(Default)]
struct Agenda {
    heap: Vec<u32>,
}

impl Agenda {
    fn less(hyps: &[Hyp], a: u32, b: u32) -> bool {
        hyps[a as usize].fx < hyps[b as usize].fx
    }

    /// Sifts `value` up from `hole` (libstdc++ `__push_heap`).
    fn sift_up(&mut self, hyps: &[Hyp], mut hole: usize, top: usize, value: u32) {
        while hole > top {
            let parent = (hole - 1) / 2;
            if !Self::less(hyps, self.heap[parent], value) {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = value;
    }

    fn push(&mut self, hyps: &[Hyp], h: u32) {
        self.heap.push(h);
        let hole = self.heap.len() - 1;
        self.sift_up(hyps, hole, 0, h);
    }

    /// Removes the top (libstdc++ `pop_heap`: `__adjust_heap` then `__push_heap`).
    fn pop(&mut self, hyps: &[Hyp]) -> Option<u32> {
        let last = self.heap.len().checked_sub(1)?;
        let top = self.heap[0];
        if last > 0 {
            let value = self.heap[last];
            self.heap[last] = top;
            let len = last;
            let mut hole = 0;
            let mut child = 0;
            while child < (len.saturating_sub(1)) / 2 {
                child = 2 * (child + 1);
                if Self::less(hyps, self.heap[child], self.heap[child - 1]) {
                    child -= 1;
                }
                self.heap[hole] = self.heap[child];
                hole = child;
            }
            if len % 2 == 0 && len >= 2 && child == (len - 2) / 2 {
                child = 2 * (child + 1);
                self.heap[hole] = self.heap[child - 1];
                hole = child - 1;
            }
            self.sift_up(hyps, hole, 0, value);
        }
        self.heap.pop();
        Some(top)
    }
}

/// Number of UTF-8 chars in `bytes` (sentencepiece's `OneCharLen` steps).
fn char_count(bytes: &[u8]) -> usize {
    let mut i = 0;
    let mut n = 0;
    while i < bytes.len() {
        i += utf8_len(bytes[i]);
        n += 1;
    }
    n
}
