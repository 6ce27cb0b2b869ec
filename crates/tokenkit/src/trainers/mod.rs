//! Training: count the words of a corpus through a tokenizer's normalizer and pre-tokenizer,
//! then learn a model (BPE, WordPiece, WordLevel, Unigram) from the counts.
//!
//! ```no_run
//! use tokenkit::trainers::{BpeTrainer, TrainerWrapper, TrainInput};
//! use tokenkit::{models::BPE, Tokenizer};
//! let mut tok = Tokenizer::new(BPE::default());
//! let trainer = TrainerWrapper::from(BpeTrainer { vocab_size: 8000, ..Default::default() });
//! tok.train_from_files(&trainer, &["corpus.txt"])?;
//! tok.save("tokenizer.json", true)?;
//! # Ok::<(), tokenkit::Error>(())
//! ```
//!
//! Input is streamed: memory grows with the number of distinct words, not with the corpus.
//! Counting runs in parallel (rayon) on batches of sequences; the counts are `u64` and their
//! sum does not depend on the order, so the result is the same on any thread count.
//!
//! The trainer types serialize to HF's JSON (`{"BpeTrainer": {...}}`, as
//! `trainers.BpeTrainer().__getstate__()` writes it).

pub mod counts;
mod input;
#[cfg(feature = "progress")]
mod progress_bars;
pub mod spm;
mod train;

use serde::{Deserialize, Serialize};

pub use crate::models::bpe::trainer::{BpeTrainer, BpeTrainingResult};
pub use crate::models::training::{NoProgress, Progress, Stage, WordCounts};
pub use crate::models::unigram::trainer::UnigramTrainer;
pub use crate::models::wordlevel::trainer::WordLevelTrainer;
pub use crate::models::wordpiece::trainer::WordPieceTrainer;
pub use counts::{MemoryLimit, Pruned};
pub use input::{add_counts, count_words, InputStats, TrainInput, MAX_LINE_BYTES};
#[cfg(feature = "progress")]
pub use progress_bars::ProgressBars;
pub use train::{parts_dir, TrainReport, MAX_PARTS};

/// Every trainer, with HF's externally tagged JSON form (`{"BpeTrainer": {...}}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TrainerWrapper {
    /// BPE (and byte-level BPE, with the ByteLevel alphabet as `initial_alphabet`).
    BpeTrainer(BpeTrainer),
    /// WordPiece: BPE with the `##` prefix, kept as a WordPiece vocabulary.
    WordPieceTrainer(WordPieceTrainer),
    /// WordLevel: the most frequent words.
    WordLevelTrainer(WordLevelTrainer),
    /// Unigram language model.
    UnigramTrainer(UnigramTrainer),
}

macro_rules! impl_from_trainer {
    ($($t:ident),*) => {$(
        impl From<$t> for TrainerWrapper {
            fn from(t: $t) -> Self {
                TrainerWrapper::$t(t)
            }
        }
    )*};
}
impl_from_trainer!(BpeTrainer, WordPieceTrainer, WordLevelTrainer, UnigramTrainer);

impl TrainerWrapper {
    /// The special tokens the trained model starts with.
    pub fn special_tokens(&self) -> &[crate::AddedToken] {
        match self {
            TrainerWrapper::BpeTrainer(t) => &t.special_tokens,
            TrainerWrapper::WordPieceTrainer(t) => &t.bpe.special_tokens,
            TrainerWrapper::WordLevelTrainer(t) => &t.special_tokens,
            TrainerWrapper::UnigramTrainer(t) => &t.special_tokens,
        }
    }

    /// Whether the caller asked for progress bars.
    pub fn show_progress(&self) -> bool {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.show_progress,
            TrainerWrapper::WordPieceTrainer(t) => t.bpe.show_progress,
            TrainerWrapper::WordLevelTrainer(t) => t.show_progress,
            TrainerWrapper::UnigramTrainer(t) => t.show_progress,
        }
    }

    /// The target vocabulary size.
    pub fn vocab_size(&self) -> usize {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.vocab_size,
            TrainerWrapper::WordPieceTrainer(t) => t.bpe.vocab_size,
            TrainerWrapper::WordLevelTrainer(t) => t.vocab_size,
            TrainerWrapper::UnigramTrainer(t) => t.vocab_size as usize,
        }
    }
}

#[cfg(test)]
mod tests;
