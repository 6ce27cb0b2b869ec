//! SentencePiece's Unigram Viterbi (`unigram_model.cc`, 0.2.3's `EncodeOptimized`), with its
//! exact arithmetic: scores and path sums are `f32` (the rounding decides between segmentations
//! that tie on paper, e.g. `- --` against `-- -`), on ties the first candidate found is kept,
//! and path sums are rebased to 0 when they leave `±1e5` (which changes the rounding, and with
//! scores near `±f32::MAX` which segmentation wins).

use std::cell::RefCell;

use super::lattice::{Lattice, ScoredPath, MAX_NBEST};
use crate::utils::trie::{Cursor, Trie};
use crate::normalizers::sentencepiece::{utf8_len, SPACE_SYMBOL};

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
    /// piece `0.1 * (len_bytes - 1)` (a bonus that makes the longest match win).
    pub scores: Vec<f32>,
    /// The id given to a char no single-char piece covers.
    pub unk_id: u32,
    /// `min_score - 10` in `f32`.
    pub unk_score: f32,
    /// `user_defined[id]`: piece `id` is user-defined.
    pub user_defined: Vec<bool>,
    /// Every score is finite (as in any model sentencepiece loads), which the fast loop of
    /// [`Self::fill`] needs.
    finite: bool,
    /// The largest magnitude of a score (NaN ignored).
    max_magnitude: f32,
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

/// The score sentencepiece 0.2.3 gives a user-defined piece of `length` units (bytes in the
/// one-best Viterbi, chars in the lattice): `0.1 * (length - 1)` in `f64`, rounded to `f32`,
/// so that the longest match wins (`GetUserDefinedScore`).
pub(crate) fn user_defined_score(length: usize) -> f32 {
    (0.1 * (length as f64 - 1.0)) as f32
}

/// When the path sum at a start leaves `±RESET`, sentencepiece subtracts it from every path
/// found so far from there on (`kScoreResetThreshold`).
const RESET: f32 = 100_000.0;

impl SpViterbi {
    /// The Viterbi over `trie`, with the scores of each id (see the fields).
    pub fn new(trie: Trie, scores: Vec<f32>, unk_id: u32, unk_score: f32, user_defined: Vec<bool>) -> Self {
        let finite = trie.scores().chain([unk_score]).all(f32::is_finite);
        let max_magnitude = trie.scores().chain([unk_score]).map(f32::abs).fold(0.0, f32::max);
        let walk = |bytes: &[u8]| {
            let mut cursor = trie.cursor();
            trie.walk(&mut cursor, bytes.iter().copied()).map(|found| (cursor, found))
        };
        let space = walk(SPACE_SYMBOL.as_bytes());
        let ascii = Box::new(std::array::from_fn(|b| walk(&[b as u8])));
        Self { trie, scores, unk_id, unk_score, user_defined, finite, max_magnitude, space, ascii }
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
            if !(self.finite && self.fill::<true>(text, best)) {
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
    /// when its score is higher (the first found wins ties).
    ///
    /// Paths not found yet score `-inf`, which any candidate but NaN beats: with finite scores,
    /// a candidate is finite unless the sum it extends is NaN (sums beyond `±RESET` are rebased
    /// first), and a sum becomes NaN only in a rebase, as `inf - inf` once sums overflowed
    /// near `±f32::MAX`. So the `FAST` loop compares scores alone and gives up (returns
    /// `false`) when a rebase makes a NaN; the general loop follows sentencepiece through NaNs.
    fn fill<const FAST: bool>(&self, text: &[u8], best: &mut Vec<Node>) -> bool {
        let size = text.len();
        best.clear();
        best.resize(size + 1, Node { score: f32::NEG_INFINITY, start: NONE, id: NONE });
        let best = &mut best[..=size];
        best[0].score = 0.0;
        let improve = |best: &mut [Node], end: usize, cand: f32, start: usize, id: u32| {
            let target = &mut best[end];
            if cand > target.score || (!FAST && target.start == NONE) {
                *target = Node { score: cand, start: start as u32, id };
            }
        };
        let root = self.trie.cursor();
        // A piece or unknown char reaches at most this many bytes beyond its start.
        let reach = self.trie.longest().max(4);
        let mut start = 0;
        // sentencepiece checks the sum at every start; from the last one checked, it cannot
        // leave `±RESET` before `until`.
        let mut until = 0;
        while start < size {
            if start >= until {
                let window = start..size.min(start + reach) + 1;
                if best[start].score.abs() > RESET && !rebase::<FAST>(&mut best[window.clone()]) {
                    return false;
                }
                until = start + self.steps_within_reset(&best[window]);
            }
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
        true
    }
}

impl SpViterbi {
    /// How many bytes from a start (at least 1) no path sum can leave `±RESET` in, given the
    /// paths found so far up to `window`'s end (`window[0]` the start's own): a sum is a path
    /// sum before the start, whose magnitude is at most `w`, plus at most one score per char
    /// since, each at most `max_magnitude`, so after `k` chars it is at most
    /// `(w + k * max_magnitude) * (1 + 2^-24)^k` with the rounding. (NaN sums never leave.)
    fn steps_within_reset(&self, window: &[Node]) -> usize {
        const MAX_STEPS: usize = 4096;
        // (1 + 2^-24)^MAX_STEPS < 1.001.
        const ROUNDING: f64 = 1.001;
        let w = window[1..].iter().filter(|n| n.start != NONE).fold(window[0].score.abs(), |w, n| w.max(n.score.abs()));
        let steps = (RESET as f64 / ROUNDING - w as f64) / self.max_magnitude as f64;
        // `as` saturates: negative and NaN (0 / 0) give 0, infinity `usize::MAX`.
        1 + (steps as usize).min(MAX_STEPS)
    }
}

/// sentencepiece's rebase at a start whose path sum left `±RESET`: subtracts that sum
/// (`nodes[0]`'s score) from the paths found beyond it, and the sum becomes 0. Paths not found
/// yet are changed too, which only the fast loop looks at: `false` when one becomes NaN there.
#[cold]
#[inline(never)]
fn rebase<const FAST: bool>(nodes: &mut [Node]) -> bool {
    let offset = std::mem::replace(&mut nodes[0].score, 0.0);
    for node in &mut nodes[1..] {
        node.score -= offset;
        if FAST && node.score.is_nan() {
            return false;
        }
    }
    true
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

    /// The segmentation `fill::<FAST>` gives, `None` when the fast loop gave up.
    fn path<const FAST: bool>(v: &SpViterbi, text: &[u8]) -> Option<Vec<(u32, u32)>> {
        let mut best = Vec::new();
        if !v.fill::<FAST>(text, &mut best) {
            return None;
        }
        let mut out = Vec::new();
        let mut end = text.len();
        while end > 0 {
            out.push((best[end].start, best[end].id));
            end = best[end].start as usize;
        }
        Some(out)
    }

    /// The fast loop gives the general loop's segmentation whenever it does not give up, with
    /// ordinary scores (half-integers, so that sums tie) and extreme ones (sums that overflow,
    /// rebases that make NaNs).
    #[test]
    fn fast_loop_same_as_sentencepiece_loop() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        // Chars of 1, 2 and 3 bytes; `x` is in no piece, `中` only in longer ones.
        let chars = ["a", "b", "é", "▁", "中", "x"];
        let extreme = [f32::MAX, -f32::MAX, 3e38, -1e38, -1e30, 1e30, 2e5, -2e5, 1e-45, 0.0, -0.5];
        let (mut compared, mut gave_up) = (0, 0);
        for round in 0..200 {
            let mut pieces: Vec<String> = ["a", "b", "é", "▁"].iter().filter(|_| rng.gen_bool(0.8)).map(|c| c.to_string()).collect();
            for _ in 0..30 {
                let n = rng.gen_range(2..5);
                pieces.push((0..n).map(|_| chars[rng.gen_range(0..5)]).collect());
            }
            pieces.sort();
            pieces.dedup();
            let scores: Vec<f32> = pieces
                .iter()
                .map(|_| match round % 2 {
                    0 => -(rng.gen_range(1..20) as f32) / 2.0,
                    _ => extreme[rng.gen_range(0..extreme.len())],
                })
                .collect();
            let trie = Trie::with_scores(pieces.iter().zip(&scores).enumerate().map(|(id, (p, &s))| (p.as_str(), id as u32, s)));
            let n = pieces.len();
            let min = scores.iter().copied().fold(f32::MAX, f32::min);
            let v = SpViterbi::new(trie, scores, n as u32, min - 10.0, vec![false; n]);
            assert!(v.finite);
            for _ in 0..20 {
                let text: String = (0..rng.gen_range(1..40)).map(|_| chars[rng.gen_range(0..6)]).collect();
                let general = path::<false>(&v, text.as_bytes()).expect("the general loop always finishes");
                match path::<true>(&v, text.as_bytes()) {
                    Some(fast) => {
                        assert_eq!(fast, general, "{text:?}");
                        compared += 1;
                    }
                    None => gave_up += 1,
                }
            }
        }
        assert!(compared > 3000 && gave_up > 0, "{compared} compared, {gave_up} given up");
        let inf = SpViterbi::new(Trie::with_scores([("a", 0, f32::INFINITY)]), vec![f32::INFINITY], 1, -10.0, vec![false]);
        assert!(!inf.finite);
    }
}
