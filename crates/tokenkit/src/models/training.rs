//! What the model trainers share with training's front end (`crate::trainers`): word counts
//! and progress reporting.

/// Word → number of occurrences in the corpus.
pub type WordCounts = ahash::AHashMap<String, u64>;

/// A stage of training, for progress reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Reading and pre-tokenizing the input; units are bytes of input (total known for files).
    CountWords,
    /// Splitting each distinct word into symbols; units are words.
    TokenizeWords,
    /// Counting adjacent symbol pairs; units are words.
    CountPairs,
    /// The merge loop; units are new tokens.
    Merge,
    /// Unigram EM and pruning; units are EM rounds.
    Unigram,
}

impl Stage {
    /// A short label for progress bars.
    pub fn label(self) -> &'static str {
        match self {
            Stage::CountWords => "Count words",
            Stage::TokenizeWords => "Tokenize words",
            Stage::CountPairs => "Count pairs",
            Stage::Merge => "Compute merges",
            Stage::Unigram => "EM rounds",
        }
    }
}

/// Receives progress while training (the CLI draws indicatif bars with it). All methods
/// default to doing nothing; they are called from the training thread and from rayon workers.
pub trait Progress: Sync {
    /// A stage starts; `total` is its length in the stage's unit when known.
    fn start(&self, _stage: Stage, _total: Option<u64>) {}
    /// `n` more units of the current stage are done.
    fn inc(&self, _n: u64) {}
    /// The stage is over.
    fn finish(&self, _stage: Stage) {}
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}
