//! The Unigram trainer (HF `trainers.UnigramTrainer`): learns a Unigram language model
//! (SentencePiece's) from word counts.
//!
//! The steps are HF's, which are SentencePiece's applied to words:
//! 1. seeds: every char (scored by its count) and the most frequent repeated substrings of
//!    the words, from a suffix array (scored by occurrences × length; at most
//!    `max_piece_length` chars, none spanning two words), up to `seed_size` pieces;
//! 2. EM rounds: `n_sub_iterations` times, the E step takes the expected count of each piece
//!    over all segmentations of each word (forward-backward over the lattice) and the M step
//!    turns counts into log probabilities with the digamma ("Bayesianified" EM) update,
//!    dropping pieces expected less than half a time; then pruning keeps the pieces whose
//!    removal would cost the most likelihood, shrinking the vocabulary by
//!    `shrinking_factor`, until it is within 110% of `vocab_size`;
//! 3. the final vocabulary: the special tokens (and the unk token) first, then every char of
//!    the corpus and `initial_alphabet`, then the best pieces up to `vocab_size`, sorted by
//!    decreasing score.
//!
//! What differs from HF, on purpose: counts are `u64`; the words are taken in sorted order and
//! the E step sums fixed chunks of words in a fixed order, so that the output does not depend
//! on the thread count or on hash seeds (HF's does, in the last bits of the scores); chars
//! that the model lost are added in char order (HF: hash order). HF has no byte fallback in
//! its trainer; the trained model has `byte_fallback: false`, as HF's.

mod lattice;
pub mod piece_rules;
mod suffix;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashSet};

use ahash::{AHashMap, AHashSet};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use self::lattice::{min_score, Lattice, TrainModel};
use crate::base::AddedToken;
use crate::models::training::{Progress, Stage, WordCounts};
use crate::models::unigram::Unigram;
use crate::{Error, Result};

/// A piece and its score (a log probability).
type Piece = (String, f64);

/// The unk piece used while training (dropped from the final vocabulary).
const TRAIN_UNK: &str = "<UNK>";

/// Options of the Unigram trainer, with HF's names, defaults and JSON form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UnigramTrainer {
    /// Whether the caller should show progress bars.
    pub show_progress: bool,
    /// Target vocabulary size, special tokens included.
    pub vocab_size: u32,
    /// EM iterations between two prunings.
    pub n_sub_iterations: u32,
    /// Fraction of the pieces kept by each pruning.
    pub shrinking_factor: f64,
    /// Tokens placed first in the vocabulary.
    pub special_tokens: Vec<AddedToken>,
    /// Chars always in the vocabulary.
    pub initial_alphabet: HashSet<char>,
    /// The unk token (put at id 0 when not among the special tokens).
    pub unk_token: Option<String>,
    /// Longest piece, in chars.
    pub max_piece_length: usize,
    /// Number of seed pieces taken from the suffix array.
    pub seed_size: usize,
}

/// What SentencePiece's Unigram trainer (sentencepiece 0.2.3, `unigram_model_trainer.cc`)
/// works from beyond the word counts, and where it differs from HF's:
/// - seeds come from the bytes of the whole sentences (before they are cut into words, each
///   occurrence counted), only pieces valid under its piece rules, cut at char boundaries;
/// - every EM round ends with a pruning (HF stops before pruning once small enough), which
///   removes pieces off every best path and those whose best path is split, and weighs a
///   removal by its own alternatives;
/// - after the rounds, pieces that their own Viterbi path never produces are removed;
/// - the final vocabulary takes the best-scoring pieces, and the required chars missing from
///   the model get their penalties in decreasing count order.
pub struct SpmInput<'a> {
    /// The piece rules of the trainer spec.
    pub rules: piece_rules::PieceRules,
    /// The normalized training sentences (meta pieces and rare chars as `▅`).
    pub sentences: &'a [String],
    /// The required chars, most frequent first.
    pub alphabet: &'a [char],
    /// The trainer spec's `vocab_size` (meta pieces included): pruning stops within 110% of
    /// it, and a seed size of 0 scales with it.
    pub vocab_size: u32,
}

impl Default for UnigramTrainer {
    /// HF's defaults: vocabulary 8,000, 2 sub-iterations, shrinking 0.75, pieces of at most
    /// 16 chars, 1,000,000 seeds.
    fn default() -> Self {
        Self {
            show_progress: true,
            vocab_size: 8000,
            n_sub_iterations: 2,
            shrinking_factor: 0.75,
            special_tokens: Vec::new(),
            initial_alphabet: HashSet::new(),
            unk_token: None,
            max_piece_length: 16,
            seed_size: 1_000_000,
        }
    }
}

/// `ψ(x)`, the digamma function, for `x > 0`: the recurrence up to 7, then the asymptotic
/// series (as SentencePiece and HF compute it).
fn digamma(mut x: f64) -> f64 {
    let mut result = 0.0;
    while x < 7.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    x -= 0.5;
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    let inv4 = inv2 * inv2;
    result + x.ln() + inv2 / 24.0 - 7.0 / 960.0 * inv4 + 31.0 / 8064.0 * inv4 * inv2 - 127.0 / 30720.0 * inv4 * inv4
}

/// Number of words in one E-step chunk: fixed by the number of words only, so that the sums
/// are the same on any thread count.
fn chunk_size(words: usize) -> usize {
    words.div_ceil(64).max(256)
}

impl UnigramTrainer {
    /// Trains a Unigram model on word counts (see the module documentation for the steps).
    ///
    /// Errors: `vocab_size` 0, below the special tokens or below the number of distinct chars
    /// (HF's rule), a `shrinking_factor` outside (0, 1), no words.
    pub fn train_model(&self, counts: &WordCounts, progress: &dyn Progress) -> Result<Unigram> {
        self.train(counts, None, progress)
    }

    /// Trains a Unigram model as SentencePiece's trainer does (see [`SpmInput`]) on the word
    /// counts of `spm.sentences`.
    pub fn train_spm(&self, counts: &WordCounts, spm: &SpmInput<'_>, progress: &dyn Progress) -> Result<Unigram> {
        self.train(counts, Some(spm), progress)
    }

    fn train(&self, counts: &WordCounts, spm: Option<&SpmInput<'_>>, progress: &dyn Progress) -> Result<Unigram> {
        if self.vocab_size == 0 {
            return Err(Error::invalid("Unigram training: vocab_size must be at least 1"));
        }
        if !(self.shrinking_factor > 0.0 && self.shrinking_factor < 1.0) {
            return Err(Error::invalid(format!(
                "Unigram training: shrinking_factor must be between 0 and 1 (exclusive), got {}",
                self.shrinking_factor
            )));
        }
        let reserved = self.special_tokens.len() + usize::from(self.needs_unk_added());
        if (self.vocab_size as usize) < reserved {
            return Err(Error::invalid(format!(
                "Unigram training: vocab_size {} is smaller than the {} special tokens{}",
                self.vocab_size,
                self.special_tokens.len(),
                if self.needs_unk_added() { " plus the unk token" } else { "" }
            )));
        }
        let mut words: Vec<(&str, u64)> = counts.iter().filter(|(w, &n)| !w.is_empty() && n > 0).map(|(w, &n)| (w.as_str(), n)).collect();
        if words.is_empty() {
            return Err(Error::invalid("Unigram training: the corpus has no words"));
        }
        words.par_sort_unstable_by(|a, b| a.0.cmp(b.0));

        let required = match spm {
            Some(spm) => spm.alphabet.iter().copied().collect(),
            None => self.required_chars(&words),
        };
        if required.len() > self.vocab_size as usize {
            // HF's check (special tokens not counted); without it pruning would never end.
            return Err(Error::invalid(format!(
                "Unigram training: the vocabulary is not large enough to contain all chars \
                 ({} distinct chars, vocab_size {})",
                required.len(),
                self.vocab_size
            )));
        }
        let mut pieces: Vec<Piece> = vec![(TRAIN_UNK.to_owned(), f64::NAN)];
        match spm {
            Some(spm) => pieces.extend(self.spm_seed_pieces(spm)?),
            None => pieces.extend(self.seed_pieces(&words)?),
        }

        let desired = self.desired_size(spm);
        let expected_rounds = ((desired as f64).ln() - (pieces.len() as f64).ln()) / self.shrinking_factor.ln();
        let expected_updates = (expected_rounds.max(0.0) as u64 + 1) * u64::from(self.n_sub_iterations);
        progress.start(Stage::Unigram, Some(expected_updates));
        let mut model = TrainModel::new(&pieces);
        if spm.is_some() {
            model = model.with_unk_as_first_piece();
        }
        loop {
            for _ in 0..self.n_sub_iterations {
                let expected = e_step(&model, &words)?;

                let from;
                (pieces, from) = m_step(&pieces, &expected);
                if spm.is_some() {
                    // sentencepiece keeps its scores as f32: pieces seen as often score the
                    // same, and the final vocabulary breaks such ties by the piece.
                    pieces.iter_mut().for_each(|(_, v)| *v = *v as f32 as f64);
                }
                model = model.retain(&pieces, &from);
                progress.inc(1);
            }
            // SentencePiece prunes after every round, HF only while the pieces are too many.
            if spm.is_none() && pieces.len() <= desired {
                break;
            }
            let kept = self.prune(&model, &pieces, &words, spm.is_some(), desired);
            // Not shrinking cannot happen while too many pieces remain once all chars fit
            // (checked above): a guard against a hang.
            let stuck = kept.len() >= pieces.len();
            if stuck && spm.is_none() {
                break;
            }
            pieces = kept.iter().map(|&id| pieces[id].clone()).collect();
            model = model.retain(&pieces, &kept);
            if spm.is_some() && (pieces.len() - 1 <= desired || stuck) {
                break;
            }
        }
        if spm.is_some() {
            let kept = unreachable_pruned(&model, &pieces);
            pieces = kept.iter().map(|&id| pieces[id].clone()).collect();
        }
        progress.finish(Stage::Unigram);
        self.finalize(&pieces, required, spm.map(|s| s.alphabet))
    }

    /// How many pieces the EM rounds stop at: 110% of the vocabulary size (sentencepiece's
    /// counts its meta pieces).
    fn desired_size(&self, spm: Option<&SpmInput<'_>>) -> usize {
        match spm {
            Some(spm) => (f64::from(spm.vocab_size) * 1.1) as usize,
            None => self.vocab_size as usize * 11 / 10,
        }
    }

    /// Whether the unk token is set and is not among the special tokens (it then gets id 0).
    fn needs_unk_added(&self) -> bool {
        self.unk_token.as_ref().is_some_and(|u| !self.special_tokens.iter().any(|t| &t.content == u))
    }

    /// Every char of the words and of `initial_alphabet`, in char order.
    fn required_chars(&self, words: &[(&str, u64)]) -> BTreeSet<char> {
        let mut seen: AHashSet<char> = self.initial_alphabet.iter().copied().collect();
        for (w, _) in words {
            seen.extend(w.chars());
        }
        seen.into_iter().collect()
    }

    /// The seed pieces with their log probabilities (HF's): the chars by decreasing count, then
    /// the repeated substrings of the distinct words by decreasing occurrences × length (ties:
    /// the larger string first).
    fn seed_pieces(&self, words: &[(&str, u64)]) -> Result<Vec<Piece>> {
        let total: usize = words.iter().map(|(w, _)| w.len() + 1).sum();
        let mut text: Vec<u32> = Vec::with_capacity(total);
        let mut char_counts: AHashMap<char, u64> = AHashMap::new();
        for &(w, n) in words {
            for c in w.chars() {
                text.push(c as u32);
                if c != '\0' {
                    *char_counts.entry(c).or_insert(0) += n;
                }
            }
            text.push(0);
        }
        let mut chars: Vec<(u64, char)> = char_counts.into_iter().map(|(c, n)| (n, c)).collect();
        chars.sort_unstable_by(|a, b| b.cmp(a));

        let mut substrings: Vec<(u64, u32, u32)> = Vec::new();
        suffix::for_each_repeat(&text, char::MAX as usize + 1, |r| {
            let (start, len) = (r.offset as usize, r.len as usize);
            if len <= 1 || len > self.max_piece_length || text[start..start + len].contains(&0) {
                return;
            }
            substrings.push((u64::from(r.freq) * len as u64, r.offset, r.len));
        })?;
        let slice = |&(_, off, len): &(u64, u32, u32)| &text[off as usize..(off + len) as usize];
        substrings.par_sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| slice(b).cmp(slice(a))));

        let mut seeds: Vec<Piece> = chars.into_iter().map(|(n, c)| (c.to_string(), n as f64)).collect();
        // HF adds a substring before it checks the size.
        for s in substrings.iter().take(self.seed_size.saturating_sub(seeds.len()).max(1)) {
            seeds.push((slice(s).iter().filter_map(|&c| char::from_u32(c)).collect(), s.0 as f64));
        }
        Ok(to_log_prob(seeds))
    }

    /// SentencePiece's seed pieces (`MakeSeedSentencePiecesFromCorpus`): the chars of the
    /// sentences by decreasing count, then, from a suffix array over the bytes of all the
    /// sentences (each followed by a NUL), every repeated byte string that starts and ends at
    /// char boundaries (trailing NULs cut off, none inside), 2 to `max_piece_length` chars
    /// long and a valid piece, scored by its occurrences × its length in chars (a string found
    /// at several nodes adds their occurrences); the best `seed_size` by decreasing score,
    /// then decreasing byte length, then byte order.
    fn spm_seed_pieces(&self, spm: &SpmInput<'_>) -> Result<Vec<Piece>> {
        use piece_rules::{BOUNDARY, UNK_CHAR};
        let total: usize = spm.sentences.iter().map(|s| s.len() + 1).sum();
        let mut text: Vec<u8> = Vec::with_capacity(total);
        let mut char_counts: AHashMap<char, u64> = AHashMap::new();
        for s in spm.sentences {
            for c in s.chars() {
                if c != UNK_CHAR && c != BOUNDARY {
                    *char_counts.entry(c).or_insert(0) += 1;
                }
            }
            text.extend_from_slice(s.as_bytes());
            text.push(0);
        }
        let mut chars: Vec<(u64, char)> = char_counts.into_iter().map(|(c, n)| (n, c)).collect();
        chars.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));

        let continuation = |b: u8| b & 0xC0 == 0x80;
        let mut occurrences: AHashMap<String, u64> = AHashMap::new();
        let mut piece_chars: Vec<char> = Vec::new();
        suffix::for_each_repeat(&text, 256, |r| {
            let (start, depth) = (r.offset as usize, r.len as usize);
            if depth <= 1 || continuation(text[start]) || text.get(start + depth).is_some_and(|&b| continuation(b)) {
                return;
            }
            let mut bytes = &text[start..start + depth];
            while let [rest @ .., 0] = bytes {
                bytes = rest;
            }
            // More bytes than `max_len` chars can take: too long (is_valid would say so).
            if bytes.len() > 4 * spm.rules.max_len || bytes.contains(&0) {
                return;
            }
            let Ok(piece) = std::str::from_utf8(bytes) else { return };
            piece_chars.clear();
            piece_chars.extend(piece.chars());
            if piece_chars.len() <= 1 || !spm.rules.is_valid(&piece_chars) {
                return;
            }
            match occurrences.get_mut(piece) {
                Some(n) => *n += u64::from(r.freq),
                None => {
                    occurrences.insert(piece.to_owned(), u64::from(r.freq));
                }
            }
        })?;
        // Scores as sentencepiece computes them, in f32.
        let mut substrings: Vec<(f32, String)> = occurrences.into_iter().map(|(p, n)| (n as f32 * p.chars().count() as f32, p)).collect();
        substrings.par_sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.len().cmp(&a.1.len())).then_with(|| a.1.cmp(&b.1)));
        let mut seeds: Vec<Piece> = chars.into_iter().map(|(n, c)| (c.to_string(), n as f32 as f64)).collect();
        // sentencepiece's seed size counts the substrings only; 0 scales it with the vocabulary.
        let seed_size = if self.seed_size == 0 { 100_000.max(8 * spm.vocab_size as usize) } else { self.seed_size };
        seeds.extend(substrings.into_iter().take(seed_size).map(|(score, p)| (p, f64::from(score))));
        Ok(to_log_prob(seeds))
    }

    /// Keeps the pieces whose removal would lose the most likelihood (SentencePiece's
    /// approximation: a removed piece is replaced by its second-best segmentation), down to
    /// `shrinking_factor` of the pieces but not below 110% of `vocab_size`. Returns the ids
    /// of the kept pieces, in their new order.
    ///
    /// With `spm` (sentencepiece 0.2.3's rules, where HF's differ): a piece is removed when it
    /// is on no best path *or* its own best path is split (HF: only when both), and a removal
    /// is weighed by its number of alternatives and the Viterbi token count (HF: the number of
    /// pieces and the word count).
    fn prune(&self, model: &TrainModel, pieces: &[Piece], words: &[(&str, u64)], spm: bool, desired: usize) -> Vec<usize> {
        // How each piece would be segmented without itself.
        let alternatives: Vec<(bool, Vec<u32>)> = pieces
            .par_iter()
            .enumerate()
            .map_init(Lattice::default, |lattice, (id, (piece, _))| {
                if id == 0 {
                    return (false, Vec::new());
                }
                lattice.build(model, piece);
                let mut best = Vec::new();
                lattice.viterbi(false, &mut best);
                if best.len() >= 2 {
                    return (false, Vec::new());
                }
                let mut alt = Vec::new();
                lattice.viterbi(true, &mut alt);
                (true, alt)
            })
            .collect();

        // Viterbi counts of each piece over the corpus (integer sums: any order gives the same).
        let n = pieces.len();
        let freq: Vec<u64> = words
            .par_chunks(chunk_size(words.len()))
            .map_init(
                || (Lattice::default(), Vec::new()),
                |(lattice, path), chunk| {
                    let mut freq = vec![0u64; n];
                    for &(w, count) in chunk {
                        lattice.build(model, w);
                        lattice.viterbi(false, path);
                        for &id in path.iter() {
                            freq[id as usize] += count;
                        }
                    }
                    freq
                },
            )
            .reduce(
                || vec![0u64; n],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let freq: Vec<f64> = freq.into_iter().map(|f| f as f64).collect();
        let vsum: f64 = words.iter().map(|&(_, c)| c as f64).sum();
        let sum: f64 = freq.iter().sum();
        let log_sum = sum.ln();

        let mut kept: Vec<usize> = vec![0];
        let mut candidates: Vec<(usize, f64)> = Vec::new();
        for (id, (always_keep, alt)) in alternatives.iter().enumerate().skip(1) {
            let f = freq[id];
            let removable = if spm { f == 0.0 || !always_keep } else { f == 0.0 && !always_keep };
            if removable {
                // Never on a best path (or split on its own best path): safe to remove.
                continue;
            }
            if alt.is_empty() {
                kept.push(id);
                continue;
            }
            if f == 0.0 {
                continue;
            }
            let logprob = f.ln() - log_sum;
            // HF scales by the number of pieces here, SentencePiece by the number of
            // alternatives; HF normalizes by the word count, SentencePiece by the token count.
            let (scale, total) = if spm { (alt.len() - 1, sum) } else { (pieces.len() - 1, vsum) };
            let log_sum_alt = (sum + f * scale as f64).ln();
            let logprob_alt: f64 = alt.iter().map(|&a| (freq[a as usize] + f).ln() - log_sum_alt).sum();
            let loss = f / total * (logprob - logprob_alt);
            candidates.push((id, loss));
        }
        // (sentencepiece's pieces do not include the unk piece, which is kept here.)
        let real = pieces.len() - usize::from(spm);
        let target = desired.max((real as f64 * self.shrinking_factor) as usize) + usize::from(spm);
        // Stable: equal losses keep the piece order.
        candidates.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal));
        for (id, _) in candidates {
            if kept.len() == target {
                break;
            }
            kept.push(id);
        }
        kept
    }

    /// The final model: special tokens (and the unk token) first, then the required chars
    /// and the best pieces by decreasing score.
    ///
    /// With SentencePiece's `alphabet` (most frequent first), the missing chars get their
    /// penalties in that order, the pieces are taken best first and ties sort by the piece
    /// (HF: char order, the model's order, and a stable sort).
    fn finalize(&self, pieces: &[Piece], required: BTreeSet<char>, alphabet: Option<&[char]>) -> Result<Unigram> {
        let scores: Vec<f64> = pieces.iter().map(|(_, s)| *s).collect();
        let min = min_score(&scores);
        let existing: AHashMap<&str, f64> = pieces.iter().map(|(p, s)| (p.as_str(), *s)).collect();
        let mut inserted: AHashSet<String> = AHashSet::new();
        inserted.insert(TRAIN_UNK.to_owned());
        let mut out: Vec<Piece> = Vec::with_capacity(self.vocab_size as usize);
        let mut penalty = 0.0;
        let required: Vec<char> = match alphabet {
            Some(order) => {
                let mut rest = required;
                let mut v: Vec<char> = order.iter().copied().filter(|c| rest.remove(c)).collect();
                v.extend(rest);
                v
            }
            None => required.into_iter().collect(),
        };
        let sorted: Vec<Piece>;
        let pieces = if alphabet.is_some() {
            let mut v = pieces.to_vec();
            // (The unk piece's score is NaN: a total order, and it is skipped below.)
            v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            sorted = v;
            &sorted[..]
        } else {
            pieces
        };
        for c in required {
            let c = c.to_string();
            let score = match existing.get(c.as_str()) {
                Some(&s) => s,
                None => {
                    let s = min + penalty;
                    penalty += 0.0001;
                    s
                }
            };
            inserted.insert(c.clone());
            out.push((c, score));
        }
        let add_unk = self.needs_unk_added();
        let budget = self.vocab_size as usize - self.special_tokens.len() - usize::from(add_unk);
        for (piece, score) in pieces {
            if inserted.contains(piece) {
                continue;
            }
            inserted.insert(piece.clone());
            out.push((piece.clone(), if score.is_nan() { 0.0 } else { *score }));
            // HF's test: with more required chars than the budget, every piece is kept.
            if out.len() == budget {
                break;
            }
        }
        if alphabet.is_some() {
            out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        } else {
            out.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal));
        }

        let mut vocab: Vec<Piece> = Vec::with_capacity(out.len() + self.special_tokens.len() + 1);
        let unk_id = match &self.unk_token {
            Some(unk) if add_unk => {
                vocab.push((unk.clone(), 0.0));
                Some(0)
            }
            Some(unk) => self.special_tokens.iter().position(|t| &t.content == unk),
            None => None,
        };
        vocab.extend(self.special_tokens.iter().map(|t| (t.content.clone(), 0.0)));
        vocab.extend(out);
        Unigram::new(vocab, unk_id, false)
    }
}

/// Counts to log probabilities: `ln(v) - ln(Σ v)`.
fn to_log_prob(mut pieces: Vec<Piece>) -> Vec<Piece> {
    let log_sum = pieces.iter().map(|(_, v)| v).sum::<f64>().ln();
    for (_, v) in &mut pieces {
        *v = v.ln() - log_sum;
    }
    pieces
}

/// SentencePiece's `PruneUnreachableSentencePieces`: the ids of the pieces (the unk piece
/// included) whose own string is not segmented better without them; a piece beaten by its
/// own segmentation could never be produced.
fn unreachable_pruned(model: &TrainModel, pieces: &[Piece]) -> Vec<usize> {
    pieces
        .par_iter()
        .enumerate()
        .map_init(
            || (Lattice::default(), Vec::new()),
            |(lattice, path), (id, (piece, score))| {
                if id == 0 {
                    return Some(0);
                }
                lattice.build(model, piece);
                match lattice.viterbi(true, path) {
                    Some(alt) if alt > *score => None,
                    _ => Some(id),
                }
            },
        )
        .flatten()
        .collect()
}

/// Expected count of each piece over all segmentations of all words. The words are cut into
/// fixed chunks summed in order, so the floats do not depend on the thread count.
fn e_step(model: &TrainModel, words: &[(&str, u64)]) -> Result<Vec<f64>> {
    let n = model.scores.len();
    let mut expected = vec![0.0; n];
    let chunks: Vec<&[(&str, u64)]> = words.chunks(chunk_size(words.len())).collect();
    let wave = rayon::current_num_threads().max(1);
    for group in chunks.chunks(wave) {
        let partial: Vec<Result<Vec<f64>>> = group
            .par_iter()
            .map(|chunk| {
                let mut lattice = Lattice::default();
                let mut e = vec![0.0; n];
                for &(w, count) in chunk.iter() {
                    lattice.build(model, w);
                    let z = lattice.add_marginals(count as f64, &mut e);
                    if z.is_nan() {
                        return Err(Error::invalid(format!("Unigram training: the likelihood of the word {w:?} is NaN")));
                    }
                }
                Ok(e)
            })
            .collect();
        for p in partial {
            expected.iter_mut().zip(p?).for_each(|(x, y)| *x += y);
        }
    }
    Ok(expected)
}

/// New log probabilities from expected counts (the digamma update of SentencePiece's
/// Bayesian EM); pieces expected less than half a time are dropped, the unk piece kept.
/// Returns the new pieces and the old id of each.
fn m_step(pieces: &[Piece], expected: &[f64]) -> (Vec<Piece>, Vec<usize>) {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let mut from: Vec<usize> = Vec::with_capacity(pieces.len());
    let mut sum = 0.0;
    for (i, ((piece, _), &f)) in pieces.iter().zip(expected).enumerate() {
        if i == 0 {
            out.push((piece.clone(), f64::NAN));
            from.push(0);
            continue;
        }
        if f < 0.5 {
            continue;
        }
        out.push((piece.clone(), f));
        from.push(i);
        sum += f;
    }
    let log_sum = digamma(sum);
    for (i, (_, v)) in out.iter_mut().enumerate() {
        if i > 0 {
            *v = digamma(*v) - log_sum;
        }
    }
    (out, from)
}
