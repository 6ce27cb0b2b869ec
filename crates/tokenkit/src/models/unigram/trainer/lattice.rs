//! The training lattice: every vocabulary piece found in a word, with forward-backward
//! marginals (expected counts, for the E step) and Viterbi paths (for pruning).
//!
//! Positions are byte offsets of the word. Nodes are kept in the order HF's lattice inserts
//! them (by start, then by length, the unk node of a char last), and sums are accumulated in
//! the order HF accumulates them, so that the floats agree with HF's as far as possible.

use crate::models::unigram::UNK_PENALTY;
use crate::utils::trie::Trie;

/// The id of the unk piece during training.
pub(super) const UNK: u32 = 0;

/// "This trie entry is no longer a piece."
const DROPPED: u32 = u32::MAX;

/// The pieces being trained, with a trie to find them in words.
///
/// Building the trie over hundreds of thousands of seeds costs more than an E step, and each
/// EM round only removes pieces, so the trie is kept across rounds: its entries are the ids
/// of the pieces it was built from ("trie ids"), mapped to the current ids (or `DROPPED`),
/// and it is rebuilt only once fewer than half of its entries are still pieces.
pub(super) struct TrainModel {
    /// Score of each piece (log probability); piece 0 is the unk piece (its score is unused).
    pub scores: Vec<f64>,
    trie: Trie,
    /// Current id of each trie id, or `DROPPED`.
    current: Vec<u32>,
    /// Trie id of each current id.
    trie_id: Vec<u32>,
    unk_score: f64,
    /// The id an unknown char's node counts for: the unk piece, or (sentencepiece's trainer,
    /// whose model leaves its unk id at 0) the first piece.
    unk_node: u32,
}

impl TrainModel {
    /// Builds the model from `(piece, score)` pairs; piece 0 is the unk piece and is not
    /// matched in text (HF puts its `<UNK>` in the trie too, where it could only be matched
    /// by a literal `<UNK>` in the corpus, whose NaN score makes HF fail).
    pub fn new(pieces: &[(String, f64)]) -> Self {
        let trie = Trie::new(pieces.iter().enumerate().skip(1).map(|(i, (p, _))| (p.as_str(), i as u32)));
        let scores: Vec<f64> = pieces.iter().map(|(_, s)| *s).collect();
        let ids: Vec<u32> = (0..pieces.len() as u32).collect();
        Self { unk_score: min_score(&scores) - UNK_PENALTY, scores, trie, current: ids.clone(), trie_id: ids, unk_node: UNK }
    }

    /// This model, with unknown chars counted as piece 1 (the first piece after the unk
    /// piece): sentencepiece 0.2.3's trainer model never sets its unk id, so an unknown char's
    /// node has id 0, its first piece, in the E step, the Viterbi counts and the alternatives
    /// of pruning.
    pub fn with_unk_as_first_piece(mut self) -> Self {
        if self.scores.len() > 1 {
            self.unk_node = 1;
        }
        self
    }

    /// The model of `pieces`, a subset of this model's pieces: `pieces[i]` is this model's
    /// piece `from[i]` (in any order; `from[0]` is the unk piece 0). Reuses the trie while at
    /// least half of its entries are still pieces, else builds a new one.
    pub fn retain(mut self, pieces: &[(String, f64)], from: &[usize]) -> Self {
        debug_assert_eq!(pieces.len(), from.len());
        if pieces.len() * 2 < self.current.len() {
            let model = Self::new(pieces);
            return if self.unk_node != UNK { model.with_unk_as_first_piece() } else { model };
        }
        let trie_id: Vec<u32> = from.iter().map(|&old| self.trie_id[old]).collect();
        self.current.iter_mut().for_each(|c| *c = DROPPED);
        for (id, &t) in trie_id.iter().enumerate() {
            self.current[t as usize] = id as u32;
        }
        let scores: Vec<f64> = pieces.iter().map(|(_, s)| *s).collect();
        let unk_node = if self.unk_node != UNK && pieces.len() > 1 { 1 } else { UNK };
        Self { unk_score: min_score(&scores) - UNK_PENALTY, scores, trie: self.trie, current: self.current, trie_id, unk_node }
    }
}

/// The lowest score that is not NaN (`+inf` when there is none).
pub(super) fn min_score(scores: &[f64]) -> f64 {
    scores.iter().copied().filter(|s| !s.is_nan()).fold(f64::INFINITY, f64::min)
}

#[derive(Debug, Clone, Copy)]
struct Node {
    start: u32,
    end: u32,
    id: u32,
    score: f64,
}

/// `log(exp(x) + exp(y))`, with HF's cut-off: when the two differ by more than 50 the
/// larger one is returned.
#[inline]
fn log_sum_exp(x: f64, y: f64) -> f64 {
    let (lo, hi) = if x < y { (x, y) } else { (y, x) };
    if hi > lo + 50.0 {
        hi
    } else {
        hi + ((lo - hi).exp() + 1.0).ln()
    }
}

/// A lattice with reusable buffers (one per worker).
#[derive(Default)]
pub(super) struct Lattice {
    nodes: Vec<Node>,
    /// `(start, first node)` of each char position, in order.
    groups: Vec<(u32, u32)>,
    len: usize,
    fwd: Vec<f64>,
    bwd: Vec<f64>,
    set: Vec<bool>,
    back: Vec<u32>,
}

impl Lattice {
    /// Fills the lattice with the pieces of `model` found in `word`; a char starting no
    /// single-char piece gets an unk node.
    pub fn build(&mut self, model: &TrainModel, word: &str) {
        self.nodes.clear();
        self.groups.clear();
        self.len = word.len();
        let bytes = word.as_bytes();
        for (start, c) in word.char_indices() {
            let char_len = c.len_utf8();
            self.groups.push((start as u32, self.nodes.len() as u32));
            let mut has_single = false;
            let nodes = &mut self.nodes;
            model.trie.common_prefixes(&bytes[start..], |len, trie_id| {
                let id = model.current[trie_id as usize];
                if id == DROPPED {
                    return;
                }
                nodes.push(Node { start: start as u32, end: (start + len) as u32, id, score: model.scores[id as usize] });
                has_single |= len == char_len;
            });
            if !has_single {
                self.nodes.push(Node { start: start as u32, end: (start + char_len) as u32, id: model.unk_node, score: model.unk_score });
            }
        }
    }

    fn reset(&mut self, fill: f64) {
        let n = self.len + 1;
        self.fwd.clear();
        self.fwd.resize(n, fill);
        self.set.clear();
        self.set.resize(n, false);
    }

    /// Adds `freq` × the marginal probability of each node to `expected[id]`; returns the
    /// log-likelihood of the word (log of the sum over all paths).
    pub fn add_marginals(&mut self, freq: f64, expected: &mut [f64]) -> f64 {
        self.reset(0.0);
        self.set[0] = true;
        for node in &self.nodes {
            let v = self.fwd[node.start as usize] + node.score;
            let end = node.end as usize;
            self.fwd[end] = if self.set[end] { log_sum_exp(self.fwd[end], v) } else { v };
            self.set[end] = true;
        }
        self.bwd.clear();
        self.bwd.resize(self.len + 1, 0.0);
        let mut group_end = self.nodes.len();
        for &(start, first) in self.groups.iter().rev() {
            let group = &self.nodes[first as usize..group_end];
            let mut acc = f64::NAN;
            for (k, node) in group.iter().enumerate() {
                let v = node.score + self.bwd[node.end as usize];
                acc = if k == 0 { v } else { log_sum_exp(acc, v) };
            }
            self.bwd[start as usize] = acc;
            group_end = first as usize;
        }
        let z = self.fwd[self.len];
        for node in &self.nodes {
            let total = self.fwd[node.start as usize] + node.score + self.bwd[node.end as usize] - z;
            expected[node.id as usize] += freq * total.exp();
        }
        z
    }

    /// The best path (Viterbi), as piece ids in order, into `out`; with `skip_whole`, the node
    /// spanning the whole word is left out (the second-best segmentation of a piece).
    /// Returns the path's score, or `None` when there is no path.
    pub fn viterbi(&mut self, skip_whole: bool, out: &mut Vec<u32>) -> Option<f64> {
        self.reset(f64::NEG_INFINITY);
        self.set[0] = true;
        self.fwd[0] = 0.0;
        self.back.clear();
        self.back.resize(self.len + 1, u32::MAX);
        for (k, node) in self.nodes.iter().enumerate() {
            let (start, end) = (node.start as usize, node.end as usize);
            if !self.set[start] || (skip_whole && start == 0 && end == self.len) {
                continue;
            }
            let v = self.fwd[start] + node.score;
            // Strictly better only: on ties the node starting first wins, as in HF.
            if !self.set[end] || v > self.fwd[end] {
                self.fwd[end] = v;
                self.set[end] = true;
                self.back[end] = k as u32;
            }
        }
        out.clear();
        if !self.set[self.len] {
            return None;
        }
        let mut pos = self.len;
        while pos > 0 {
            let node = self.nodes[self.back[pos] as usize];
            out.push(node.id);
            pos = node.start as usize;
        }
        out.reverse();
        Some(self.fwd[self.len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(pieces: &[(&str, f64)]) -> TrainModel {
        let mut v = vec![("<UNK>".to_string(), f64::NAN)];
        v.extend(pieces.iter().map(|&(p, s)| (p.to_string(), s)));
        TrainModel::new(&v)
    }

    #[test]
    fn marginals_sum_to_expected_token_counts() {
        // "ab" is either "ab" (p = e^-1) or "a"+"b" (p = e^-2 · e^-2).
        let m = model(&[("a", -2.0), ("b", -2.0), ("ab", -1.0)]);
        let mut l = Lattice::default();
        l.build(&m, "ab");
        let mut e = vec![0.0; 4];
        let z = l.add_marginals(2.0, &mut e);
        let (p1, p2) = ((-1.0f64).exp(), (-4.0f64).exp());
        assert!((z - (p1 + p2).ln()).abs() < 1e-12);
        assert!((e[3] - 2.0 * p1 / (p1 + p2)).abs() < 1e-12);
        assert!((e[1] - 2.0 * p2 / (p1 + p2)).abs() < 1e-12);
        assert_eq!(e[0], 0.0);
    }

    #[test]
    fn unknown_chars_get_unk_nodes() {
        let m = model(&[("a", -1.0)]);
        let mut l = Lattice::default();
        l.build(&m, "aé");
        let mut path = vec![];
        let s = l.viterbi(false, &mut path).unwrap();
        assert_eq!(path, vec![1, UNK]);
        assert!((s - (-1.0 + -1.0 - UNK_PENALTY)).abs() < 1e-12);
    }

    #[test]
    fn viterbi_and_second_best() {
        let m = model(&[("a", -2.0), ("b", -2.5), ("ab", -1.0), ("abc", -1.5), ("c", -3.0), ("bc", -2.0)]);
        let mut l = Lattice::default();
        l.build(&m, "abc");
        let mut path = vec![];
        assert_eq!(l.viterbi(false, &mut path), Some(-1.5));
        assert_eq!(path, vec![4]);
        // Without "abc": "ab"+"c" = -4.0, "a"+"bc" = -4.0 (tie: "a"+"bc" ends... both end at 3;
        // the node starting first, "bc" at 1, beats "c" at 2).
        assert_eq!(l.viterbi(true, &mut path), Some(-4.0));
        assert_eq!(path, vec![1, 6]);
    }
}
