//! The Unigram trainer (HF `trainers.UnigramTrainer`): options and JSON form.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::models::unigram::Unigram;
use crate::tokenizer::AddedToken;
use crate::trainers::{Progress, WordCounts};
use crate::{Error, Result};

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

impl UnigramTrainer {
    /// Trains a Unigram model on word counts.
    ///
    /// Not implemented yet: returns an error after checking the options.
    pub fn train_model(&self, _counts: &WordCounts, _progress: &dyn Progress) -> Result<Unigram> {
        if self.vocab_size == 0 {
            return Err(Error::invalid("Unigram training: vocab_size must be at least 1"));
        }
        if !(self.shrinking_factor > 0.0 && self.shrinking_factor < 1.0) {
            return Err(Error::invalid(format!(
                "Unigram training: shrinking_factor must be between 0 and 1 (exclusive), got {}",
                self.shrinking_factor
            )));
        }
        Err(Error::invalid("Unigram training is not implemented yet in tokenkit"))
    }
}
