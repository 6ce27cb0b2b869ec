//! The WordPiece trainer (HF `trainers.WordPieceTrainer`): BPE training with the `##`
//! continuing-subword prefix, whose vocabulary becomes a WordPiece vocabulary.
//!
//! HF's WordPiece trainer ranks pairs by count, exactly like its BPE trainer (not by the
//! `count(ab) / (count(a)·count(b))` score of the original WordPiece paper); tokenkit does
//! the same so that the vocabularies are identical.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::models::bpe::trainer::BpeTrainer;
use crate::models::training::{Progress, WordCounts};
use crate::models::wordpiece::WordPiece;
use crate::Result;

/// Options of the WordPiece trainer: those of [`BpeTrainer`], with `continuing_subword_prefix`
/// `##` by default. JSON: `{"bpe_trainer": {...}}`, as HF writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WordPieceTrainer {
    /// The BPE options.
    #[serde(rename = "bpe_trainer")]
    pub bpe: BpeTrainer,
}

impl Default for WordPieceTrainer {
    /// HF's defaults: BPE's, with the `##` prefix.
    fn default() -> Self {
        Self { bpe: BpeTrainer { continuing_subword_prefix: Some("##".into()), ..Default::default() } }
    }
}

impl WordPieceTrainer {
    /// Trains and returns the new model: the learned vocabulary, the trainer's prefix (`##`
    /// when unset), and `unk_token` and `max_input_chars_per_word` of `old` (HF keeps them).
    pub fn train_model(&self, old: &WordPiece, counts: Cow<'_, WordCounts>, progress: &dyn Progress) -> Result<WordPiece> {
        let result = self.bpe.train_words(counts, progress)?;
        let prefix = self.bpe.continuing_subword_prefix.clone().unwrap_or_else(|| "##".into());
        Ok(WordPiece::new(result.vocab, old.unk_token().to_owned(), prefix, old.max_input_chars_per_word()))
    }
}
