//! The WordLevel trainer (HF `trainers.WordLevelTrainer`): the special tokens, then the most
//! frequent words (count descending, then word ascending) up to the vocabulary size.

use serde::{Deserialize, Serialize};

use crate::base::AddedToken;
use crate::models::training::WordCounts;
use crate::models::wordlevel::WordLevel;
use crate::{Error, Result};

/// Options of the WordLevel trainer, with HF's names, defaults and JSON form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WordLevelTrainer {
    /// Words seen fewer times than this are left out.
    pub min_frequency: u64,
    /// Vocabulary size, special tokens included.
    pub vocab_size: usize,
    /// Whether the caller should show progress bars.
    pub show_progress: bool,
    /// Tokens given ids 0, 1, ... in this order.
    pub special_tokens: Vec<AddedToken>,
}

impl Default for WordLevelTrainer {
    /// HF's defaults: vocabulary 30,000, no minimum frequency.
    fn default() -> Self {
        Self { min_frequency: 0, vocab_size: 30_000, show_progress: true, special_tokens: Vec::new() }
    }
}

impl WordLevelTrainer {
    /// The vocabulary, in id order. A word equal to a special token takes the later id, as in
    /// HF (whose vocabulary map keeps the last insertion).
    pub fn train_vocab(&self, counts: &WordCounts) -> Vec<(String, u32)> {
        let mut words: Vec<(&String, u64)> = counts.iter().filter(|(_, &n)| n >= self.min_frequency).map(|(w, &n)| (w, n)).collect();
        words.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        self.special_tokens
            .iter()
            .map(|t| t.content.clone())
            .chain(words.into_iter().map(|(w, _)| w.clone()))
            .take(self.vocab_size)
            .enumerate()
            .map(|(i, w)| (w, i as u32))
            .collect()
    }

    /// Trains and returns the new model, keeping the unk token of `old`.
    pub fn train_model(&self, old: &WordLevel, counts: &WordCounts) -> Result<WordLevel> {
        if self.vocab_size == 0 {
            return Err(Error::invalid("WordLevel training: vocab_size must be at least 1"));
        }
        Ok(WordLevel::new(self.train_vocab(counts), old.unk_token().to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hf_example() {
        // HF's own test: vocab_size 5 keeps the 5 most frequent; min_frequency 15 keeps 4.
        let counts: WordCounts = [("the", 25), ("roses", 22), ("are", 24), ("red", 12), ("voilets", 10), ("blue", 16)]
            .iter()
            .map(|(w, n)| (w.to_string(), *n))
            .collect();
        let t = WordLevelTrainer { vocab_size: 5, ..Default::default() };
        let v: Vec<String> = t.train_vocab(&counts).into_iter().map(|(w, _)| w).collect();
        assert_eq!(v, ["the", "are", "roses", "blue", "red"]);
        let t = WordLevelTrainer { vocab_size: 5, min_frequency: 15, ..Default::default() };
        assert_eq!(t.train_vocab(&counts).len(), 4);
    }
}
